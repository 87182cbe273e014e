// profile.h: the debug log of what the NPU's profiler wrote back for a batch
// (GGML_HEXAGON_PROFILE): per-op times and cycles, then per-thread trace
// events. Their wording is a format: tools parse the "profile-batch" lines
// (tools/bench-model.c).

#ifndef HTP_PROFILE_H
#define HTP_PROFILE_H

#include <stdint.h>

#include "opqueue.h"
#include "proto/htp-proto.h"

// The batch's totals and its first n per-op descriptors, under session name.
void htp_profile_log_ops(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof,
                         uint32_t n);

// The trace events of each thread in p, as many as the NPU says it wrote and
// never more than the room we reserved.
void htp_profile_log_trace(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_opqueue_prof * p);

#endif  // HTP_PROFILE_H
