// fuzz-config: the GGML_HEXAGON_* environment as both sides read it.
//
// Feeds: records (variable, value) for any of the variables the host
// (src/host/config.c, config-env.c, config-devices.c) or the NPU
// (src/npu/npu-util.c, server.c's hardware info and start-up) reads, values of
// any bytes (a NUL ends one) and length, up to several KiB so the length
// limits are crossed. Each input starts from an environment with none of them
// set; then the host loads, prints (to /dev/null), applies an arch as a hello
// would, asks the op filter, and frees its configuration; the device grammar
// and the size and number readers (and GGML_HTP_FAULT's plan parser) also get
// the values directly; and the NPU reads its variables and builds its
// hardware info.
//
// Must never: read past a value's NUL (every value is an exact-size heap
// block: ASan sees the byte after it), write past an output buffer, hit
// undefined behaviour, leak (htp_config_free must release what load took), or
// leave an option out of its documented range.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-devices.h"
#include "config-env.h"
#include "config.h"
#include "contract/fault-plan.h"
#include "npu/npu-util.h"
#include "npu/server.h"
#include "proto/htp-proto.h"

static const char * const vars[] = {
    "GGML_HEXAGON_DEVICES",    "GGML_HEXAGON_NDEV",      "GGML_HEXAGON_ARCH",
    "GGML_HEXAGON_VERBOSE",    "GGML_HEXAGON_DMA64",     "GGML_HEXAGON_VMEM",
    "GGML_HEXAGON_NHVX",       "GGML_HEXAGON_NHMX",      "GGML_HEXAGON_VTCM_SIZE",
    "GGML_HEXAGON_POWER_MODE", "GGML_HEXAGON_MBUF",      "GGML_HEXAGON_HOSTBUF",
    "GGML_HEXAGON_OPBATCH",    "GGML_HEXAGON_OPQUEUE",   "GGML_HEXAGON_OPPOLL",
    "GGML_HEXAGON_OPFUSION",   "GGML_HEXAGON_RT_REPACK", "GGML_HEXAGON_OPFILTER",
    "GGML_HEXAGON_MM_SELECT",  "GGML_HEXAGON_FA_SELECT", "GGML_HEXAGON_FA_SPLIT",
    "GGML_HEXAGON_GDN_SELECT", "GGML_HEXAGON_AR_SELECT", "GGML_HEXAGON_AR_SCATTER",
    "GGML_HEXAGON_PROFILE",    "GGML_HEXAGON_OPTRACE",   "GGML_HEXAGON_ETM",
    "GGML_HEXAGON_NPU",        "GGML_HEXAGON_NPU_EXEC",  "GGML_HEXAGON_FENCE_TIMEOUT_MS",
};
#define N_VARS      (sizeof vars / sizeof vars[0])
#define OPFILTER    17
#define FILTER_MAX  48  // a regex longer than this can take glibc's matcher exponential time: not what we test
#define MAX_RECORDS 48

// "NAME=value" strings in the environment (putenv: ours to free once unset;
// setenv would keep every value it ever saw, and the fuzzer sets millions).
static char * env_str[N_VARS];

static void clear_env(void) {
    for (size_t i = 0; i < N_VARS; i++) {
        unsetenv(vars[i]);
        free(env_str[i]);
        env_str[i] = NULL;
    }
}

static FILE * devnull;

// The device grammar and the scalar readers on a value directly (an exact-size copy).
static void parse_directly(const char * v, uint8_t sel) {
    struct htp_device_config devs[HTP_CONFIG_MAX_DEVICES];
    int                      n   = 0;
    const int                max = 1 + sel % HTP_CONFIG_MAX_DEVICES;
    if (htp_config_parse_devices(v, devs, max, &n) >= 0) {
        if (n < 0 || n > max) {
            abort();
        }
        for (int i = 0; i < n; i++) {
            if (devs[i].n_members == 0 || devs[i].n_members > HTP_CONFIG_MAX_PHYS ||
                devs[i].virt >= HTP_CONFIG_MAX_VIRT ||
                strnlen(devs[i].name, HTP_CONFIG_NAME_MAX) == HTP_CONFIG_NAME_MAX) {
                abort();
            }
            for (uint32_t m = 0; m < devs[i].n_members; m++) {
                char name[12];  // short on purpose: names are cut, never overflow
                htp_config_member_name(&devs[i], m, name, sizeof name);
                if (devs[i].phys[m] >= HTP_CONFIG_MAX_PHYS) {
                    abort();
                }
            }
        }
    }
    uint64_t  sz;
    long long ll;
    int       erange;
    (void)htp_config_parse_size(v, &sz);
    (void)htp_config_parse_size_n(v, sel % 16, &sz);
    (void)htp_config_parse_long(v, sel & 0x10 ? 16 : 0, &ll, &erange);
    char buf[24];
    htp_config_format_size(buf, 1 + sel % sizeof buf, (uint64_t)ll);

    // GGML_HTP_FAULT's grammar: a refused value plans nothing; an accepted
    // one plans only known sites, each call number from 1.
    struct htp_fault_plan plan;
    char                  why[160];
    if (htp_fault_plan_parse(&plan, v, why, 1 + sel % sizeof why) != 0) {  // a short why is cut

        for (int s = 0; s < HTP_FAULT_N_SITES; s++) {
            if (plan.nth[s] != 0 || plan.from[s]) {
                abort();
            }
        }
    } else {
        for (int s = 0; s < HTP_FAULT_N_SITES; s++) {
            if (plan.from[s] && plan.nth[s] == 0) {
                abort();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (devnull == NULL) {
        devnull = fopen("/dev/null", "w");
    }
    clear_env();

    // Records: [variable][length][bytes], a length of 255 meaning
    // [count] and those bytes repeated to count * 64 bytes.
    size_t  i    = 0;
    uint8_t last = 0;
    for (int rec = 0; rec < MAX_RECORDS && i + 2 <= size; rec++) {
        const size_t v   = data[i] % N_VARS;
        size_t       len = data[i + 1];
        last             = data[i];
        i += 2;
        size_t reps = 0;
        if (len == 255 && i < size) {
            reps = 1 + (size_t)data[i++] * 64;
            len  = size - i < 8 ? size - i : 8;
        }
        len        = len < size - i ? len : size - i;
        size_t out = reps ? reps : len;
        if (v == OPFILTER && out > FILTER_MAX) {
            out = FILTER_MAX;
        }
        const size_t name = strlen(vars[v]);
        char *       s    = malloc(name + 1 + out + 1);
        memcpy(s, vars[v], name);
        s[name] = '=';
        for (size_t k = 0; k < out; k++) {
            s[name + 1 + k] = len ? (char)data[i + k % len] : 'x';
        }
        s[name + 1 + out] = '\0';
        i += len;
        unsetenv(vars[v]);
        free(env_str[v]);
        env_str[v] = s;
        putenv(s);
        parse_directly(s + name + 1, last);
    }

    // The host.
    struct htp_config cfg;
    htp_config_load(&cfg);
    if (cfg.n_devices < 0 || cfg.n_devices > HTP_CONFIG_MAX_DEVICES || cfg.opbatch < 1 ||
        cfg.opbatch > HTP_OP_MAX_OPS || cfg.opqueue < 1 || cfg.opqueue > HTP_QUEUE_MAX_DEPTH ||
        cfg.nhvx > HTP_MAX_NTHREADS || cfg.optrace > HTP_MAX_TRACES || cfg.profile < 0 || cfg.profile > 3 ||
        cfg.arch < HTP_CONFIG_ARCH_MIN || cfg.arch > HTP_CONFIG_ARCH_MAX || cfg.mbuf_dyn == 0) {
        abort();
    }
    htp_config_print(&cfg, devnull);
    (void)htp_config_op_filtered(&cfg, "MUL_MAT(q4_0,f32)");
    htp_config_set_arch(&cfg, (int)(int8_t)last * 3);
    htp_config_print(&cfg, devnull);
    htp_config_free(&cfg);

    // The NPU.
    (void)htp_npu_env_u64("GGML_HEXAGON_FENCE_TIMEOUT_MS", 30000, 1, 24ull * 3600 * 1000);
    (void)htp_npu_env_size("GGML_HEXAGON_MBUF", 1, 1ull << 40);
    struct htp_hw_info hw;
    htp_server_hw_info(&hw);
    if (hw.n_threads == 0 || hw.n_threads > HTP_MAX_NTHREADS || hw.vtcm_size == 0 || hw.vmem_size == 0 ||
        hw.arch < 68 || hw.arch > 85 || hw.name[sizeof hw.name - 1] != '\0') {
        abort();
    }
    return 0;
}
