// config.h: the host library's configuration, read once from the GGML_HEXAGON_*
// environment variables (DESIGN.md §7).
//
// The variables keep the names, grammar and defaults of ggml-hexagon so that
// scripts written for it work unchanged. Nothing here can fail hard: a value
// that cannot be read is reported with a warning naming the variable, the bad
// value and the value used instead, and the option keeps a usable value
// (config-env.h). The device list has a grammar of its own: config-devices.h.

#ifndef HTP_CONFIG_H
#define HTP_CONFIG_H

#include <regex.h>
#include <stdint.h>
#include <stdio.h>

#include "config-devices.h"

#define HTP_CONFIG_PATH_MAX 4096  // GGML_HEXAGON_NPU bytes, NUL included
#define HTP_CONFIG_N_PMU    8     // PMU events of profiling mode 2

// Arch assumed until the NPU reports its own at hello (the software NPU says 79).
#define HTP_CONFIG_ARCH_DEFAULT 79
#define HTP_CONFIG_ARCH_MIN     73
#define HTP_CONFIG_ARCH_MAX     85

// DCVS / HMX power profile requested at session start (GGML_HEXAGON_POWER_MODE).
enum htp_power_mode {
    HTP_POWER_MODE_LOW_POWER_SAVER = 0,
    HTP_POWER_MODE_POWER_SAVER,
    HTP_POWER_MODE_HIGH_POWER_SAVER,
    HTP_POWER_MODE_LOW_BALANCED,
    HTP_POWER_MODE_BALANCED,
    HTP_POWER_MODE_HIGH_PERFORMANCE,
    HTP_POWER_MODE_SUSTAINED_HIGH_PERFORMANCE,
    HTP_POWER_MODE_BURST,
};

struct htp_config {
    // devices
    struct htp_device_config devices[HTP_CONFIG_MAX_DEVICES];
    int                      n_devices;  // 0 when a device list named no valid device

    // hardware
    int      arch;            // Hexagon version (73..85); derived defaults below follow it
    int      arch_auto;       // 1: not set by the user, htp_config_set_arch() may replace it
    uint32_t nhvx;            // NPU worker threads, 0 = all (at most HTP_MAX_NTHREADS)
    int      nhmx;            // 0: HVX only; otherwise use HMX
    uint64_t vtcm_size;       // scratch bytes per session, 0 = the NPU's own size
    uint64_t vmem;            // VA window bytes per session, 0 = measure; default from arch
    int      vmem_set;        // 1: vmem given by the user (arch no longer changes it)
    int      dma64;           // extended (outside-window) weight mappings; only when arch > 79
    int      dma64_disabled;  // 1: GGML_HEXAGON_DMA64=0 (arch no longer enables it)
    int      power_mode;      // enum htp_power_mode

    // buffers
    uint64_t mbuf_dyn;     // max dynamic (compute) buffer bytes
    uint64_t mbuf_static;  // max static (weight / KV) buffer bytes, 0 = unlimited
    uint64_t mbuf_total;   // total buffer space reported to ggml, 0 = unconstrained
    int      hostbuf;      // offer the host buffer type

    // queue and batches
    uint32_t opbatch;    // max ops per batch, 1..HTP_OP_MAX_OPS
    uint32_t opqueue;    // max batches in flight per session, 1..HTP_QUEUE_MAX_DEPTH
    int      oppoll;     // poll for batch completions instead of sleeping
    int      opfusion;   // fuse ops
    int      rt_repack;  // runtime weight repack: 0 off, 1 quantized only, 2 always

    // op filter: ops whose description matches (whole string, case-insensitive) are not claimed
    int     has_opfilter;
    regex_t opfilter;
    char    opfilter_src[256];  // the pattern, for htp_config_print (truncated if longer)

    // kernel selection
    // (HMX and HVX as the software NPU has them: htp-proto.h's enum htp_unit.)
    int mm_select;   // MUL_MAT, MUL_MAT_ID: 2 HMX -> HVX -> CPU, 1 HVX -> CPU, 0 CPU (not claimed)
    int fa_select;   // FLASH_ATTN_EXT: 2 HMX -> HVX -> CPU, 1 HVX -> CPU, 0 CPU (not claimed)
    int fa_split;    // 1 FLASH_ATTN_EXT with fewer work items than workers also splits its KV sequence
    int gdn_select;  // 2 HMX -> HVX, 1 HVX, 0 CPU
    int ar_select;   // 2 fused ALLREDUCE+ADD, 1 unfused ALLREDUCE, 0 CPY+FENCE
    int ar_scatter;  // 1 reduce-scatter the fused ALLREDUCE+ADD, 0 full reduction

    // diagnostics
    int      verbose;       // 0 quiet, 1 verbose, 2 per descriptor (also sets htp_log_verbose)
    int      profile;       // 0 off, 1 basic, 2 PMU, 3 trace
    uint32_t n_pmu_events;  // 0 or HTP_CONFIG_N_PMU
    uint32_t pmu_events[HTP_CONFIG_N_PMU];
    uint32_t optrace;  // trace events per thread per batch, at most HTP_MAX_TRACES
    int      etm;      // embedded trace macrocell: accepted; no NPU of ours has one (htp-info says so)

    // ours
    char npu_path[HTP_CONFIG_PATH_MAX];    // GGML_HEXAGON_NPU, "" = htp-npu next to the library
    char npu_exec[HTP_CONFIG_PATH_MAX];    // GGML_HEXAGON_NPU_EXEC: launcher the NPU runs under, "" = none
    char trace_path[HTP_CONFIG_PATH_MAX];  // GGML_HTP_TRACE: Chrome/Perfetto trace-event file, "" = none (trace.h)
};

// The configuration of this process's backend, read-only once loaded: the
// registry loads it on its first use, before any device exists.
extern const struct htp_config * htp_backend_config;

// Load htp_backend_config from the environment (htp_config_load); the
// registry calls it once. Returns as htp_config_load.
int htp_config_load_backend(void);

// Fill *cfg from the environment. Always leaves a usable configuration in *cfg
// and sets htp_log_verbose. Returns 0 when every variable was well formed,
// otherwise the number of problems warned about. Pair with htp_config_free().
int htp_config_load(struct htp_config * cfg);

// Release what htp_config_load() allocated (the compiled op filter). *cfg may be
// loaded again afterwards.
void htp_config_free(struct htp_config * cfg);

// The NPU reported its arch at hello: when the user did not set one, take it
// (capped to 73..85 with a warning, as ggml-hexagon does with the detected
// version) and re-derive the defaults that follow it (vmem, dma64).
void htp_config_set_arch(struct htp_config * cfg, int arch);

// 1 when ops described as op_desc (ggml_op_desc()) must not be claimed.
int htp_config_op_filtered(const struct htp_config * cfg, const char * op_desc);

const char * htp_config_power_mode_name(int mode);

// The session options (HTP_SESSION_* bits, htp-proto.h) the configuration
// asks for: HMX off for an op family when GGML_HEXAGON_NHMX=0 or its select
// level is below 2, and FLASH_ATTN_EXT's KV split off with FA_SPLIT=0.
uint32_t htp_config_session_options(const struct htp_config * cfg);

// Print the configuration in force, one option per line, each with its
// effective value after defaults and clamping (htp-info); then the variables
// other modules read themselves (GGML_HEXAGON_FENCE_TIMEOUT_MS,
// GGML_HEXAGON_STREAM_PREFETCH and GGML_HTP_SCALAR on the NPU,
// GGML_HTP_MMAP_STACKING, GGML_HTP_FAULT), as those modules will take them.
void htp_config_print(const struct htp_config * cfg, FILE * f);

#endif  // HTP_CONFIG_H
