// profile.h: what the NPU's profiler wrote back for a batch
// (GGML_HEXAGON_PROFILE): checking it, and its debug log: per-op times and
// cycles (mode 1), with PMU counter deltas (mode 2), then per-thread trace
// events (mode 3). Their wording is a format: tools parse the
// "profile-batch" lines (tools/bench-model.c), and a "profile-op" line is
//
//   ggml-htp: <session> profile-op #<i> <OP>: usec <u> cycles <c> threads <t> status <s>[ unit HVX|HMX[ kv-split]][ pmu
//   <name>=<n> ...]
//
// with the unit for the ops that have a choice (htp-proto.h's enum htp_unit;
// kv-split: FLASH_ATTN_EXT cut its KV sequence) and one <name>=<n> per
// counting slot (htp_profile_counter_name).

#ifndef HTP_PROFILE_H
#define HTP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "opqueue.h"
#include "proto/htp-proto.h"

// perf-style name of an enum htp_pmu_counter ("instructions", "task-clock-ns", ...; "?" if unknown).
const char * htp_profile_counter_name(uint32_t counter);

// Check a batch's read-back before anyone uses it: the counts against what
// was pushed, each run op's echo of its opcode (ops = the pushed
// descriptors, or NULL), its status, its worker count (<= n_threads), PMU
// slots only within pmu->mask, and ops that did not run left zero. 0 when
// sound; otherwise -1 with the first problem in why.
int htp_profile_check(const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof, uint32_t n,
                      const struct htp_op_desc * ops, uint32_t n_threads, const struct htp_pmu_info * pmu, char * why,
                      size_t why_size);

// One op's "profile-op" line (no newline) into buf; pmu may be NULL (no counters).
void htp_profile_format_op(char * buf, size_t size, const char * name, uint32_t i, const struct htp_prof_desc * pd,
                           const struct htp_pmu_info * pmu);

// The batch's totals and its first n per-op descriptors, under session name.
void htp_profile_log_ops(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof,
                         uint32_t n, const struct htp_pmu_info * pmu);

// The trace events of each thread in p, as many as the NPU says it wrote and
// never more than the room we reserved.
void htp_profile_log_trace(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_opqueue_prof * p);

// The NPU's answer to HTP_CTL_PROFILER for mode `asked`: check it (0, or -1
// when it is malformed) and, the first time in this process that it counts
// less than asked, say so in one line (the fallback: software events, or
// mode 1).
int htp_profile_pmu_answer(const char * name, uint32_t asked, const struct htp_pmu_info * pmu);

#endif  // HTP_PROFILE_H
