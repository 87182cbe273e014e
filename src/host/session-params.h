// session-params.h: what a session is opened with (struct
// htp_session_params) and its defaults. The backend fills it from the
// configuration (device.c); tests and tools set fields of their own.

#ifndef HTP_SESSION_PARAMS_H
#define HTP_SESSION_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#define HTP_SESSION_MAX_MEMBERS 16  // sessions in one multi-NPU group, the leader included

struct htp_session_params {
    uint32_t phys_idx;       // physical NPU (one htp-npu process per index)
    uint32_t virt_idx;       // virtual session on it (HTP<p>:<v>)
    char     name[32];       // "HTP0", "HTP0:1", ...
    uint32_t n_threads;      // NPU workers for this session (0 = all the NPU has)
    uint64_t vtcm_size;      // scratch bytes (0 = the NPU's default)
    uint64_t vmem_size;      // VA window bytes (0 = the NPU's default, GGML_HEXAGON_VMEM)
    uint32_t batch_ops;      // ops per batch (GGML_HEXAGON_OPBATCH; default HTP_OP_DEFAULT_OPS)
    uint32_t queue_depth;    // batches in flight (GGML_HEXAGON_OPQUEUE; default HTP_QUEUE_DEPTH, power of two)
    uint32_t poll;           // 1: both sides poll their rings instead of sleeping (GGML_HEXAGON_OPPOLL)
    uint32_t profile;        // 0 off, 1 basic, 2 pmu, 3 trace (GGML_HEXAGON_PROFILE)
    uint32_t n_traces;       // trace events per thread per batch when profile == 3 (GGML_HEXAGON_OPTRACE)
    uint32_t n_pmu_events;   // 0, or HTP_PMU_SLOTS: pmu_events holds mode 2's event numbers
    uint32_t pmu_events[8];  // GGML_HEXAGON_PROFILE's PMU event numbers (the NPU's pmu.h maps them)
    uint32_t n_fences;       // fence slots in the pinned buffer (default 512)
    uint32_t options;        // HTP_SESSION_* bits: engines not to use, FA's KV split off (0 = none; config.h)
    bool     measure_vmem;   // measure the usable VA window at open by mapping until failure (GGML_HEXAGON_VMEM=0)
    bool     dma64;          // map buffers of weight operands extended, outside the window (GGML_HEXAGON_DMA64)
    bool     mmap_stacking;  // map all pending buffers at flush, largest first (default; GGML_HTP_MMAP_STACKING=0
                             // maps each batch's buffers in the order the batch met them: the naive order, for
                             // measurements)
};

// Defaults for session phys:virt ("HTP<phys>" or "HTP<phys>:<virt>"); the
// one setting read from the environment here is GGML_HTP_MMAP_STACKING.
void htp_session_params_default(struct htp_session_params * p, uint32_t phys_idx, uint32_t virt_idx);

#endif  // HTP_SESSION_PARAMS_H
