// pmu.h: the counters of profiling mode 2 on the NPU's threads.
//
// GGML_HEXAGON_PROFILE takes eight PMU event numbers (ggml-hexagon's
// default: 0x3, 0x111, 0x100, 0x105, 0x240, 0x256, 0x7D, 0x8C). On a cDSP
// each number programs one Hexagon PMU counter. A Hexagon event number means
// nothing to another CPU's PMU, so on Linux the eight slots keep their
// positions and count the perf events below; a slot whose number is 0 is
// off. The per-op counts come back in struct htp_prof_desc.pmu[slot].
//
//   slot  reference default           Linux hardware event    software fallback
//   0     0x3   COMMITTED_PKT_ANY     instructions            task-clock (ns)
//   1     0x111                       cycles                  context-switches
//   2     0x100 HVX_ACTIVE            cache-references        cpu-migrations
//   3     0x105 HVX_VTCM_OUTSTANDING  cache-misses            page-faults
//   4     0x240                       branch-instructions     minor-faults
//   5     0x256                       branch-misses           major-faults
//   6     0x7D                        stalled-cycles-frontend (off)
//   7     0x8C                        stalled-cycles-backend  (off)
//
// (Names are those of the public Hexagon PMU tables where we know them.)
// Hardware slots the machine lacks stay off (many x86 PMUs have no
// stalled-cycles events). When no hardware slot opens (a VM without a PMU:
// ENOENT / EOPNOTSUPP; or perf_event_paranoid refuses: EACCES / EPERM) the
// slots count the software events instead; when those fail too, mode 2 runs
// as mode 1. htp_pmu_choose decides this once per HTP_CTL_PROFILER, by
// opening the counters on the calling thread, and says so in struct
// htp_pmu_info.
//
// Counters belong to threads: each worker of the pool and each session's
// queue thread (the pool's worker 0 while its batch runs) opens its own, on
// its first op with the configuration, and keeps them across batches (a
// struct htp_pmu_thread touched by that thread only).

#ifndef HTP_NPU_PMU_H
#define HTP_NPU_PMU_H

#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_plat_pmu;

// The counters of slots 0..7 packed 4 bits each (enum htp_pmu_counter < 16):
// one word a session can publish atomically. 0: nothing counts.
uint32_t htp_pmu_pack(const uint32_t counter[HTP_PMU_SLOTS]);
uint32_t htp_pmu_unpack(uint32_t packed, uint32_t slot);

// What mode 2 counts given the user's events (n_events 0 or HTP_PMU_SLOTS; 0:
// all slots on). For another mode, info says that mode and no slots.
void htp_pmu_choose(uint32_t mode, const uint32_t * events, uint32_t n_events, struct htp_pmu_info * info);

struct htp_pmu_thread {
    struct htp_plat_pmu * pmu;     // NULL: not open (or nothing opened)
    uint32_t              packed;  // configuration pmu was opened with
    uint32_t              mask;    // slots that opened
    int                   tried;   // packed was tried (a failed open is not retried per op)
};

// Counters of pool helper `worker` (1 .. HTP_MAX_NTHREADS-1), process-wide;
// only that worker's thread may use them.
struct htp_pmu_thread * htp_pmu_helper(uint32_t worker);

// On the thread that owns t: make it count `packed` (opening or reopening as
// needed) and read the current values into v[HTP_PMU_SLOTS]. Returns the mask
// of slots read (0: nothing counts).
uint32_t htp_pmu_sample(struct htp_pmu_thread * t, uint32_t packed, uint64_t * v);

// Close t's counters (on its thread, when it ends).
void htp_pmu_thread_close(struct htp_pmu_thread * t);

#endif  // HTP_NPU_PMU_H
