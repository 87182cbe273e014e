// config.c: read the GGML_HEXAGON_* environment into struct htp_config.
//
// Every option has ggml-hexagon's name, grammar and default, and where the
// reference derives one option from another (vmem and dma64 from the arch,
// the trace depth from the batch size) so do we. The variables with a grammar
// of their own (arch, power mode, buffer sizes, profile, op filter) are read
// here; plain numbers, yes/no and sizes by config-env.c, the device list by
// config-devices.c.

#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-env.h"
#include "log.h"
#include "proto/htp-proto.h"

#define MiB (1024ull * 1024ull)

// Defaults (ggml-hexagon's).
#define DEF_OPBATCH     HTP_OP_DEFAULT_OPS
#define DEF_OPQUEUE     HTP_QUEUE_DEPTH
#define DEF_MBUF_DYN    (512ull * MiB)
#define DEF_MBUF_STATIC (1024ull * MiB)
#define DEF_VMEM_OLD    (3000ull * MiB)  // arch < v75: smaller IOVA space
#define DEF_SELECT      2
#define DEF_POWER_MODE  HTP_POWER_MODE_BURST

// The reference sizes a thread's trace buffer for 256 events per op of a full
// batch plus slack; our NPU takes at most HTP_MAX_TRACES, so this is capped.
#define TRACE_EVENTS_PER_OP 256u
#define TRACE_SLACK         131072u

static const uint32_t default_pmu_events[HTP_CONFIG_N_PMU] = {0x3, 0x111, 0x100, 0x105, 0x240, 0x256, 0x7D, 0x8C};

static const struct {
    const char * name;
    int          mode;
} power_modes[] = {
    {"low_power_saver", HTP_POWER_MODE_LOW_POWER_SAVER},
    {"power_saver", HTP_POWER_MODE_POWER_SAVER},
    {"high_power_saver", HTP_POWER_MODE_HIGH_POWER_SAVER},
    {"low_balanced", HTP_POWER_MODE_LOW_BALANCED},
    {"balanced", HTP_POWER_MODE_BALANCED},
    {"high_performance", HTP_POWER_MODE_HIGH_PERFORMANCE},
    {"sustained_high_performance", HTP_POWER_MODE_SUSTAINED_HIGH_PERFORMANCE},
    {"burst", HTP_POWER_MODE_BURST},
    {"default", DEF_POWER_MODE},
};

// ---------------------------------------------------------------------------
// Options with their own grammar
// ---------------------------------------------------------------------------

const char * htp_config_power_mode_name(int mode) {
    for (size_t i = 0; i < sizeof power_modes / sizeof power_modes[0]; i++) {
        if (power_modes[i].mode == mode) {
            return power_modes[i].name;
        }
    }
    return "unknown";
}

static int load_power_mode(struct htp_config * cfg) {
    const char * s  = getenv("GGML_HEXAGON_POWER_MODE");
    cfg->power_mode = DEF_POWER_MODE;
    if (!s) {
        return 0;
    }
    for (size_t i = 0; i < sizeof power_modes / sizeof power_modes[0]; i++) {
        if (strcasecmp(s, power_modes[i].name) == 0) {
            cfg->power_mode = power_modes[i].mode;
            return 0;
        }
    }
    htp_config_env_warn("GGML_HEXAGON_POWER_MODE", s, strlen(s), "is not a known power mode", "'%s'",
                        htp_config_power_mode_name(DEF_POWER_MODE));
    return 1;
}

// GGML_HEXAGON_ARCH: "v79", "79". Unset or unreadable: assume the default
// until the NPU says (arch_auto).
static int load_arch(struct htp_config * cfg) {
    const char * s = getenv("GGML_HEXAGON_ARCH");
    cfg->arch      = HTP_CONFIG_ARCH_DEFAULT;
    cfg->arch_auto = 1;
    if (!s || s[0] == '\0') {
        return 0;
    }
    const char * num    = (s[0] == 'v' || s[0] == 'V') ? s + 1 : s;
    long long    v      = 0;
    int          erange = 0;
    if (num[0] == '\0' || isspace((unsigned char)num[0]) || htp_config_parse_long(num, 0, &v, &erange) != 0 || v < 0) {
        htp_config_env_warn("GGML_HEXAGON_ARCH", s, strlen(s), "is not an arch version",
                            "the NPU's own (assumed v%d until it reports)", HTP_CONFIG_ARCH_DEFAULT);
        return 1;
    }
    cfg->arch_auto = 0;
    if (erange || v > HTP_CONFIG_ARCH_MAX) {
        htp_config_env_warn("GGML_HEXAGON_ARCH", s, strlen(s), "is over the supported range", "v%d",
                            HTP_CONFIG_ARCH_MAX);
        cfg->arch = HTP_CONFIG_ARCH_MAX;
        return 1;
    }
    if (v < HTP_CONFIG_ARCH_MIN) {
        htp_config_env_warn("GGML_HEXAGON_ARCH", s, strlen(s), "is under the supported range", "v%d",
                            HTP_CONFIG_ARCH_MIN);
        cfg->arch = HTP_CONFIG_ARCH_MIN;
        return 1;
    }
    cfg->arch = (int)v;
    return 0;
}

// Defaults that follow the arch: a v75+ NPU has the larger IOVA space, and
// weights are mapped extended (DMA64) past v79 unless GGML_HEXAGON_DMA64=0.
static void derive_from_arch(struct htp_config * cfg) {
    if (!cfg->vmem_set) {
        cfg->vmem = cfg->arch >= 75 ? HTP_VMEM_DEFAULT : DEF_VMEM_OLD;
    }
    cfg->dma64 = cfg->arch > 79 && !cfg->dma64_disabled;
}

void htp_config_set_arch(struct htp_config * cfg, int arch) {
    if (!cfg->arch_auto) {
        return;
    }
    if (arch < HTP_CONFIG_ARCH_MIN) {
        HTP_LOG_WARN("ggml-htp: Hexagon arch v%d is under supported range, capping at v%d\n", arch,
                     HTP_CONFIG_ARCH_MIN);
        arch = HTP_CONFIG_ARCH_MIN;
    } else if (arch > HTP_CONFIG_ARCH_MAX) {
        HTP_LOG_WARN("ggml-htp: Hexagon arch v%d is over supported range, capping at v%d\n", arch, HTP_CONFIG_ARCH_MAX);
        arch = HTP_CONFIG_ARCH_MAX;
    }
    cfg->arch = arch;
    derive_from_arch(cfg);
}

// GGML_HEXAGON_MBUF: "dyn[,static[,total]]", each a size; an empty field keeps
// its default.
static int load_mbuf(struct htp_config * cfg) {
    const char * s   = getenv("GGML_HEXAGON_MBUF");
    cfg->mbuf_dyn    = DEF_MBUF_DYN;
    cfg->mbuf_static = DEF_MBUF_STATIC;
    cfg->mbuf_total  = 0;
    if (!s) {
        return 0;
    }

    static const char * const field[3] = {"dynamic", "static", "total"};
    uint64_t * const          dst[3]   = {&cfg->mbuf_dyn, &cfg->mbuf_static, &cfg->mbuf_total};
    int                       problems = 0;
    const char *              p        = s;
    for (int idx = 0; *p != '\0'; idx++) {
        const char *           comma = strchr(p, ',');
        size_t                 n     = comma ? (size_t)(comma - p) : strlen(p);
        struct htp_config_span tok   = htp_config_span_trim((struct htp_config_span){p, n});
        if (idx >= 3) {
            htp_config_env_warn("GGML_HEXAGON_MBUF", s, strlen(s), "has more than 3 fields", "the first 3");
            problems++;
            break;
        }
        if (tok.n > 0) {
            uint64_t v = 0;
            char     used[48];
            htp_config_format_size(used, sizeof used, *dst[idx]);
            if (htp_config_parse_size_n(tok.p, tok.n, &v) != 0) {
                char why[96];
                snprintf(why, sizeof why, "has a bad %s size '%.*s'", field[idx], (int)(tok.n > 32 ? 32 : tok.n),
                         tok.p);
                htp_config_env_warn("GGML_HEXAGON_MBUF", s, strlen(s), why, "%s", used);
                problems++;
            } else if (idx == 0 && v == 0) {
                htp_config_env_warn("GGML_HEXAGON_MBUF", s, strlen(s), "has a zero dynamic size", "%s", used);
                problems++;
            } else {
                *dst[idx] = v;
            }
        }
        if (!comma) {
            break;
        }
        p = comma + 1;
    }
    return problems;
}

// GGML_HEXAGON_PROFILE: "<mode>" (0 off, 1 basic, 2 PMU, 3 trace), or eight
// comma-separated PMU event numbers (mode 2 with those events).
static int load_profile(struct htp_config * cfg) {
    const char * s    = getenv("GGML_HEXAGON_PROFILE");
    cfg->profile      = 0;
    cfg->n_pmu_events = HTP_CONFIG_N_PMU;
    memcpy(cfg->pmu_events, default_pmu_events, sizeof cfg->pmu_events);
    if (!s || s[0] == '\0') {
        return 0;
    }

    uint32_t     v[HTP_CONFIG_N_PMU + 1];
    int          n  = 0;
    int          ok = 1;
    const char * p  = s;
    for (;;) {
        const char * comma = strchr(p, ',');
        size_t       len   = comma ? (size_t)(comma - p) : strlen(p);
        char         tok[32];
        long long    x      = 0;
        int          erange = 0;
        if (len >= sizeof tok || n > HTP_CONFIG_N_PMU) {
            ok = 0;
            break;
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (htp_config_parse_long(tok, 0, &x, &erange) != 0 || erange || x < 0 || x > (long long)UINT32_MAX) {
            ok = 0;
            break;
        }
        v[n++] = (uint32_t)x;
        if (!comma) {
            break;
        }
        p = comma + 1;
    }

    if (ok && n == 1 && v[0] <= 3) {
        cfg->profile = (int)v[0];
        if (cfg->profile == 1) {
            cfg->n_pmu_events = 0;
        }
        return 0;
    }
    if (ok && n == HTP_CONFIG_N_PMU) {
        cfg->profile = 2;
        memcpy(cfg->pmu_events, v, sizeof cfg->pmu_events);
        return 0;
    }
    htp_config_env_warn("GGML_HEXAGON_PROFILE", s, strlen(s), "is neither a mode 0-3 nor 8 PMU event numbers",
                        "0 (profiling off)");
    cfg->n_pmu_events = 0;
    return 1;
}

// How many nodes glibc's regcomp may build for an extended regex, at most
// (saturating at cap). regcomp copies a repeated group once per repetition
// (x+ becomes x x*, x{3,5} five copies of x), so nested repetitions grow
// geometrically: "((a+)+)+..." or "(a{99}){99}{99}" takes gigabytes before
// regcomp returns. Each repetition is counted as doubling (or multiplying
// by its bound plus one) what it repeats; what is malformed is counted as
// literal and left for regcomp to reject. A repetition of a repetition
// ("a++", "(x|)+*") adds nothing a filter needs and is refused outright: with
// empty alternatives, one of 48 characters kept regcomp's epsilon-closure
// pass busy past the fuzzer's timeout while its node count was in bounds.
#define OPFILTER_MAX_NODES 4096
#define OPFILTER_MAX_DEPTH 32

static size_t sat_add(size_t a, size_t b, size_t cap) {
    return a >= cap || b >= cap - a ? cap : a + b;
}

static size_t sat_mul(size_t a, size_t b, size_t cap) {
    return b != 0 && a > cap / b ? cap : a * b;
}

// The end of a bracket expression that starts at s[i] == '[' (the index of
// its ']'), or 0 if it does not close.
static size_t bracket_end(const char * s, size_t i) {
    size_t j = i + 1;
    if (s[j] == '^') {
        j++;
    }
    if (s[j] == ']') {
        j++;  // a leading ']' is a member
    }
    for (; s[j] != '\0'; j++) {
        if (s[j] == ']') {
            return j;
        }
        if (s[j] == '[' && (s[j + 1] == ':' || s[j + 1] == '.' || s[j + 1] == '=')) {
            const char   kind = s[j + 1];
            const char * end  = s + j + 2;
            while (*end != '\0' && !(end[0] == kind && end[1] == ']')) {
                end++;
            }
            if (*end == '\0') {
                return 0;
            }
            j = (size_t)(end + 1 - s);
        }
    }
    return 0;
}

// A bound "{m}", "{m,}" or "{m,n}" at s[i] == '{': how many copies of its
// operand it makes (n, or m + 1 when open), its length in *len; 0 if s[i]
// does not start a bound.
static size_t bound_copies(const char * s, size_t i, size_t * len) {
    size_t j = i + 1, m = 0, n = 0;
    int    has_m = 0, has_comma = 0, has_n = 0;
    for (; s[j] >= '0' && s[j] <= '9'; j++, has_m = 1) {
        m = m < 100000 ? m * 10 + (size_t)(s[j] - '0') : m;
    }
    if (s[j] == ',') {
        has_comma = 1;
        for (j++; s[j] >= '0' && s[j] <= '9'; j++, has_n = 1) {
            n = n < 100000 ? n * 10 + (size_t)(s[j] - '0') : n;
        }
    }
    if (s[j] != '}' || (!has_m && !has_n)) {
        return 0;
    }
    *len = j + 1 - i;
    return has_n ? (n > m ? n : m) : has_comma ? m + 1 : m;
}

// An open group while its regex is read: the largest finished alternative,
// the current one, and the size of its last operand (what a repetition
// applies to).
struct opfilter_group {
    size_t alt_max, branch, last;
};

// The group's size so far: its largest alternative.
static size_t opfilter_group_size(const struct opfilter_group * g) {
    return g->branch > g->alt_max ? g->branch : g->alt_max;
}

static size_t opfilter_nodes(const char * s, size_t cap) {
    struct opfilter_group group[OPFILTER_MAX_DEPTH + 1] = {{0, 0, 0}};

    int depth    = 0;
    int repeated = 0;  // the last thing read was a repetition
    for (size_t i = 0; s[i] != '\0'; i++) {
        const int after_repetition = repeated;
        repeated                   = 0;
        size_t operand             = 1;  // the size of an operand this character ends, if any
        size_t copies              = 0;  // or the copies a repetition makes of the last operand
        size_t len                 = 0;
        switch (s[i]) {
            case '\\':
                if (s[i + 1] != '\0') {
                    i++;
                }
                break;
            case '[': {
                const size_t end = bracket_end(s, i);
                i                = end ? end : i;
                break;
            }
            case '(':
                if (depth == OPFILTER_MAX_DEPTH) {
                    return cap;
                }
                depth++;
                group[depth].alt_max = group[depth].branch = group[depth].last = 0;
                continue;
            case ')':
                if (depth > 0) {
                    operand = sat_add(opfilter_group_size(&group[depth]), 1, cap);
                    depth--;
                }
                break;
            case '|':
                group[depth].alt_max = opfilter_group_size(&group[depth]);
                group[depth].branch = group[depth].last = 0;
                continue;
            case '*':
            case '+':
            case '?':
                copies = 2;
                break;
            case '{':
                copies = bound_copies(s, i, &len);
                if (copies != 0) {
                    copies = sat_add(copies, 1, cap);
                    i += len - 1;
                }
                break;
            default:
                break;
        }
        if (copies != 0 && after_repetition) {
            return cap;
        }
        repeated = copies != 0;
        if (copies != 0) {
            // The last operand becomes `copies` copies of itself.
            const size_t grown  = sat_mul(group[depth].last, copies, cap);
            group[depth].branch = sat_add(group[depth].branch, grown - group[depth].last, cap);
            group[depth].last   = grown;
        } else {
            group[depth].branch = sat_add(group[depth].branch, operand, cap);
            group[depth].last   = operand;
        }
        if (group[depth].branch >= cap) {
            return cap;
        }
    }
    const size_t total = opfilter_group_size(&group[0]);
    return total < cap ? total : cap;
}

// GGML_HEXAGON_OPFILTER: ops whose description the regex matches as a whole
// (as std::regex_match, case-insensitive) are not claimed.
static int load_opfilter(struct htp_config * cfg) {
    const char * s       = getenv("GGML_HEXAGON_OPFILTER");
    cfg->has_opfilter    = 0;
    cfg->opfilter_src[0] = '\0';
    if (!s || s[0] == '\0') {
        return 0;
    }

    size_t len = strlen(s);
    if (opfilter_nodes(s, OPFILTER_MAX_NODES) >= OPFILTER_MAX_NODES) {
        char why[128];
        snprintf(why, sizeof why,
                 "repeats a repetition, or repeats or nests so much that it would compile to more than %d regex nodes",
                 OPFILTER_MAX_NODES);
        htp_config_env_warn("GGML_HEXAGON_OPFILTER", s, len, why, "no filter");
        return 1;
    }
    char * pat = malloc(len + 5);
    if (!pat) {
        htp_config_env_warn("GGML_HEXAGON_OPFILTER", s, len, "cannot be stored (out of memory)", "no filter");
        return 1;
    }
    // Anchored so that a match means the whole description, like regex_match.
    snprintf(pat, len + 5, "^(%s)$", s);
    int rc = regcomp(&cfg->opfilter, pat, REG_EXTENDED | REG_NOSUB | REG_ICASE);
    free(pat);
    if (rc != 0) {
        char err[128];
        regerror(rc, &cfg->opfilter, err, sizeof err);
        char why[160];
        snprintf(why, sizeof why, "is not a valid extended regex (%s)", err);
        htp_config_env_warn("GGML_HEXAGON_OPFILTER", s, len, why, "no filter");
        return 1;
    }
    cfg->has_opfilter = 1;
    snprintf(cfg->opfilter_src, sizeof cfg->opfilter_src, "%s", s);
    return 0;
}

int htp_config_op_filtered(const struct htp_config * cfg, const char * op_desc) {
    if (!cfg->has_opfilter || !op_desc) {
        return 0;
    }
    return regexec(&cfg->opfilter, op_desc, 0, NULL, 0) == 0;
}

// A launcher command line the NPU program runs under (npu-proc.c splits it
// into words), e.g. "qemu-hexagon -cpu v67" for the NPU built for Hexagon.
static int load_npu_exec(struct htp_config * cfg) {
    const char * s   = getenv("GGML_HEXAGON_NPU_EXEC");
    cfg->npu_exec[0] = '\0';
    if (!s || s[0] == '\0') {
        return 0;
    }
    size_t len = strnlen(s, HTP_CONFIG_PATH_MAX);
    if (len >= HTP_CONFIG_PATH_MAX) {
        htp_config_env_warn("GGML_HEXAGON_NPU_EXEC", s, len, "is longer than a command line", "no launcher");
        return 1;
    }
    memcpy(cfg->npu_exec, s, len + 1);
    return 0;
}

static int load_npu_path(struct htp_config * cfg) {
    const char * s   = getenv("GGML_HEXAGON_NPU");
    cfg->npu_path[0] = '\0';
    if (!s || s[0] == '\0') {
        return 0;
    }
    size_t len = strnlen(s, HTP_CONFIG_PATH_MAX);
    if (len >= HTP_CONFIG_PATH_MAX) {
        htp_config_env_warn("GGML_HEXAGON_NPU", s, len, "is longer than a path", "htp-npu next to the library");
        return 1;
    }
    memcpy(cfg->npu_path, s, len + 1);
    return 0;
}

// GGML_HTP_TRACE: where to write the trace-event file (ours; trace.h).
static int load_trace_path(struct htp_config * cfg) {
    const char * s     = getenv("GGML_HTP_TRACE");
    cfg->trace_path[0] = '\0';
    if (!s || s[0] == '\0') {
        return 0;
    }
    size_t len = strnlen(s, HTP_CONFIG_PATH_MAX);
    if (len >= HTP_CONFIG_PATH_MAX) {
        htp_config_env_warn("GGML_HTP_TRACE", s, len, "is longer than a path", "no trace");
        return 1;
    }
    memcpy(cfg->trace_path, s, len + 1);
    return 0;
}

// ---------------------------------------------------------------------------
// Load, free, print
// ---------------------------------------------------------------------------

static struct htp_config  backend_config;
const struct htp_config * htp_backend_config = &backend_config;

int htp_config_load_backend(void) {
    return htp_config_load(&backend_config);
}

int htp_config_load(struct htp_config * cfg) {
    int p = 0;
    memset(cfg, 0, sizeof *cfg);

    // Verbosity first so the rest can log with it.
    p += htp_config_env_int("GGML_HEXAGON_VERBOSE", 10, 0, 9, 0, HTP_CONFIG_RANGE_CLAMP, &cfg->verbose);
    htp_log_verbose = cfg->verbose;

    // The arch first: vmem and dma64 defaults follow it.
    p += load_arch(cfg);
    int dma64_allowed = 1;
    p += htp_config_env_bool("GGML_HEXAGON_DMA64", 1, &dma64_allowed);
    cfg->dma64_disabled = !dma64_allowed;
    derive_from_arch(cfg);
    p += htp_config_env_size("GGML_HEXAGON_VMEM", cfg->vmem, 0, &cfg->vmem, &cfg->vmem_set);

    p += htp_config_env_u32("GGML_HEXAGON_NHVX", 0, 0, HTP_MAX_NTHREADS, 0, HTP_CONFIG_RANGE_CLAMP, &cfg->nhvx);
    p += htp_config_env_bool("GGML_HEXAGON_NHMX", 1, &cfg->nhmx);
    p += htp_config_env_size("GGML_HEXAGON_VTCM_SIZE", 0, 0, &cfg->vtcm_size, NULL);
    p += load_power_mode(cfg);

    p += load_mbuf(cfg);
    p += htp_config_env_bool("GGML_HEXAGON_HOSTBUF", 0, &cfg->hostbuf);

    p += htp_config_env_u32("GGML_HEXAGON_OPBATCH", 0, 1, HTP_OP_MAX_OPS, DEF_OPBATCH, HTP_CONFIG_RANGE_CLAMP,
                            &cfg->opbatch);
    p += htp_config_env_u32("GGML_HEXAGON_OPQUEUE", 0, 1, HTP_QUEUE_MAX_DEPTH, DEF_OPQUEUE, HTP_CONFIG_RANGE_CLAMP,
                            &cfg->opqueue);
    p += htp_config_env_bool("GGML_HEXAGON_OPPOLL", 0, &cfg->oppoll);
    p += htp_config_env_bool("GGML_HEXAGON_OPFUSION", 1, &cfg->opfusion);
    p += htp_config_env_int("GGML_HEXAGON_RT_REPACK", 10, 0, 2, 1, HTP_CONFIG_RANGE_DEFAULT, &cfg->rt_repack);
    p += load_opfilter(cfg);

    p += htp_config_env_int("GGML_HEXAGON_MM_SELECT", 10, 0, 2, DEF_SELECT, HTP_CONFIG_RANGE_DEFAULT, &cfg->mm_select);
    p += htp_config_env_int("GGML_HEXAGON_FA_SELECT", 10, 0, 2, DEF_SELECT, HTP_CONFIG_RANGE_DEFAULT, &cfg->fa_select);
    p += htp_config_env_bool("GGML_HEXAGON_FA_SPLIT", 1, &cfg->fa_split);
    p +=
        htp_config_env_int("GGML_HEXAGON_GDN_SELECT", 10, 0, 2, DEF_SELECT, HTP_CONFIG_RANGE_DEFAULT, &cfg->gdn_select);
    p += htp_config_env_int("GGML_HEXAGON_AR_SELECT", 10, 0, 2, DEF_SELECT, HTP_CONFIG_RANGE_DEFAULT, &cfg->ar_select);
    p += htp_config_env_bool("GGML_HEXAGON_AR_SCATTER", 1, &cfg->ar_scatter);

    p += load_profile(cfg);
    // Trace depth follows the batch size unless given.
    uint64_t trace_def = (uint64_t)cfg->opbatch * TRACE_EVENTS_PER_OP + TRACE_SLACK;
    if (trace_def > HTP_MAX_TRACES) {
        trace_def = HTP_MAX_TRACES;
    }
    p += htp_config_env_u32("GGML_HEXAGON_OPTRACE", 0, 0, HTP_MAX_TRACES, (uint32_t)trace_def, HTP_CONFIG_RANGE_CLAMP,
                            &cfg->optrace);
    p += htp_config_env_bool("GGML_HEXAGON_ETM", 0, &cfg->etm);

    p += load_npu_path(cfg);
    p += load_trace_path(cfg);
    p += load_npu_exec(cfg);
    p += htp_config_load_devices(cfg->devices, &cfg->n_devices);
    return p;
}

void htp_config_free(struct htp_config * cfg) {
    if (cfg->has_opfilter) {
        regfree(&cfg->opfilter);
        cfg->has_opfilter = 0;
    }
}

uint32_t htp_config_session_options(const struct htp_config * cfg) {
    uint32_t o = 0;
    if (!cfg->nhmx || cfg->mm_select < 2) {
        o |= HTP_SESSION_MM_NO_HMX;
    }
    if (!cfg->nhmx || cfg->fa_select < 2) {
        o |= HTP_SESSION_FA_NO_HMX;
    }
    if (!cfg->fa_split) {
        o |= HTP_SESSION_FA_NO_SPLIT;
    }
    return o;
}

// The engines a select level leaves an op family, HMX only when nhmx allows.
static const char * select_name(int v, int has_cpu, int nhmx) {
    if (v >= 2 && !nhmx) {
        return has_cpu ? "HVX -> CPU: nhmx 0" : "HVX: nhmx 0";
    }
    switch (v) {
        case 2:
            return has_cpu ? "HMX -> HVX -> CPU" : "HMX -> HVX";
        case 1:
            return has_cpu ? "HVX -> CPU" : "HVX";
        default:
            return "CPU";
    }
}

// Variables other modules read on their own, shown as they take them (quietly
// here: their readers warn about bad values).

// A number the NPU reads with htp_npu_env_u64: name's value if it is one in
// [min, max] (strtoull's forms, no sign), else def.
static long long npu_env_number(const char * name, long long min, long long max, long long def) {
    const char * s      = getenv(name);
    long long    v      = 0;
    int          erange = 0;
    if (!s || s[0] == '\0' || s[0] == '-' || htp_config_parse_long(s, 0, &v, &erange) != 0 || erange || v < min ||
        v > max) {
        return def;
    }
    return v;
}

// GGML_HEXAGON_FENCE_TIMEOUT_MS (the NPU's server.c): 1 .. 24 h, else 30000.
static unsigned long long fence_timeout_ms(void) {
    return (unsigned long long)npu_env_number("GGML_HEXAGON_FENCE_TIMEOUT_MS", 1, 24ll * 3600 * 1000, 30000);
}

// GGML_HEXAGON_STREAM_PREFETCH (the NPU's server.c): 0 or 1, else the NPU's
// default for its CPU (-1 here).
static int stream_prefetch(void) {
    return (int)npu_env_number("GGML_HEXAGON_STREAM_PREFETCH", 0, 1, -1);
}

// GGML_HTP_MMAP_STACKING (session-params.c): "0" turns it off.
static int mmap_stacking(void) {
    const char * s = getenv("GGML_HTP_MMAP_STACKING");
    return !(s && strcmp(s, "0") == 0);
}

// GGML_HTP_SCALAR (the NPU's kernels): "1" selects the portable C paths.
static int scalar_kernels(void) {
    const char * s = getenv("GGML_HTP_SCALAR");
    return s && strcmp(s, "1") == 0;
}

void htp_config_print(const struct htp_config * cfg, FILE * f) {
    char a[48], b[48], c[48];

    fprintf(f, "devices (%d):\n", cfg->n_devices);
    for (int i = 0; i < cfg->n_devices; i++) {
        const struct htp_device_config * d = &cfg->devices[i];
        fprintf(f, "  %-12s phys %u virt %u", d->name, d->phys[0], d->virt);
        if (d->n_members > 1) {
            fprintf(f, "  group:");
            for (uint32_t m = 0; m < d->n_members; m++) {
                char name[HTP_CONFIG_NAME_MAX + 16];
                htp_config_member_name(d, m, name, sizeof name);
                fprintf(f, " %s(phys %u)", name, d->phys[m]);
            }
        }
        fputc('\n', f);
    }

    fprintf(f, "arch          v%d%s\n", cfg->arch, cfg->arch_auto ? " (until the NPU reports its own)" : "");
    fprintf(f, "nhvx          %u%s\n", cfg->nhvx, cfg->nhvx == 0 ? " (all)" : "");
    fprintf(f, "nhmx          %d (%s)\n", cfg->nhmx, cfg->nhmx ? "HMX where the select levels allow it" : "HVX only");
    htp_config_format_size(a, sizeof a, cfg->vtcm_size);
    fprintf(f, "vtcm_size     %s\n", cfg->vtcm_size ? a : "auto");
    htp_config_format_size(a, sizeof a, cfg->vmem);
    fprintf(f, "vmem          %s%s\n", cfg->vmem ? a : "measure", cfg->vmem_set ? "" : " (from arch)");
    fprintf(f, "dma64         %d\n", cfg->dma64);
    fprintf(f, "power_mode    %s\n", htp_config_power_mode_name(cfg->power_mode));
    htp_config_format_size(a, sizeof a, cfg->mbuf_dyn);
    htp_config_format_size(b, sizeof b, cfg->mbuf_static);
    htp_config_format_size(c, sizeof c, cfg->mbuf_total);
    fprintf(f, "mbuf          dynamic %s, static %s, total %s\n", a, cfg->mbuf_static ? b : "unlimited",
            cfg->mbuf_total ? c : "unconstrained");
    fprintf(f, "hostbuf       %d\n", cfg->hostbuf);
    fprintf(f, "opbatch       %u\n", cfg->opbatch);
    fprintf(f, "opqueue       %u\n", cfg->opqueue);
    fprintf(f, "oppoll        %d\n", cfg->oppoll);
    fprintf(f, "opfusion      %d\n", cfg->opfusion);
    fprintf(f, "rt_repack     %d\n", cfg->rt_repack);
    fprintf(f, "opfilter      %s\n", cfg->has_opfilter ? cfg->opfilter_src : "(none)");
    fprintf(f, "mm_select     %d (%s)\n", cfg->mm_select, select_name(cfg->mm_select, 1, cfg->nhmx));
    fprintf(f, "fa_select     %d (%s)\n", cfg->fa_select, select_name(cfg->fa_select, 1, cfg->nhmx));
    fprintf(f, "fa_split      %d (%s)\n", cfg->fa_split,
            cfg->fa_split ? "KV sequence split when work items are fewer than workers" : "never split");
    fprintf(f, "session opts  %#x (HTP_SESSION_* bits sent to the NPU)\n", htp_config_session_options(cfg));
    fprintf(f, "gdn_select    %d (parsed only: GATED_DELTA_NET has one kernel, on HVX)\n", cfg->gdn_select);
    fprintf(f, "ar_select     %d (%s)\n", cfg->ar_select,
            cfg->ar_select >= 2   ? "fused ALLREDUCE+ADD"
            : cfg->ar_select == 1 ? "unfused ALLREDUCE"
                                  : "CPY+FENCE fallback");
    fprintf(f, "ar_scatter    %d\n", cfg->ar_scatter);
    fprintf(f, "verbose       %d\n", cfg->verbose);
    fprintf(f, "profile       %d", cfg->profile);
    if (cfg->profile >= 2 && cfg->n_pmu_events) {
        fprintf(f, " pmu-evt");
        for (uint32_t i = 0; i < cfg->n_pmu_events; i++) {
            fprintf(f, "%s%#x", i ? "," : " ", cfg->pmu_events[i]);
        }
    }
    fputc('\n', f);
    fprintf(f, "optrace       %u\n", cfg->optrace);
    fprintf(f, "etm           %d (%s)\n", cfg->etm,
            cfg->etm ? "requested; the software NPU has no ETM, nothing is traced" : "off");
    fprintf(f, "trace         %s\n", cfg->trace_path[0] ? cfg->trace_path : "(none)");
    fprintf(f, "npu           %s\n", cfg->npu_path[0] ? cfg->npu_path : "(htp-npu next to libggml-htp.so)");
    fprintf(f, "npu exec      %s\n", cfg->npu_exec[0] ? cfg->npu_exec : "(none: the NPU program runs directly)");
    fprintf(f, "fence timeout %llu ms (GGML_HEXAGON_FENCE_TIMEOUT_MS, read by the NPU)\n", fence_timeout_ms());
    const int pf = stream_prefetch();
    fprintf(f, "prefetch      %s (GGML_HEXAGON_STREAM_PREFETCH, read by the NPU: software prefetch in x86 matmuls)\n",
            pf < 0 ? "default (off on AMD family 25, else on)"
            : pf   ? "1"
                   : "0");
    fprintf(f, "mmap stacking %d (GGML_HTP_MMAP_STACKING)\n", mmap_stacking());
    fprintf(f, "scalar        %d (GGML_HTP_SCALAR, read by the NPU: 1 = portable C kernels)\n", scalar_kernels());
    const char * fault = getenv("GGML_HTP_FAULT");
    fprintf(f, "fault         %.200s (GGML_HTP_FAULT)\n", fault && fault[0] ? fault : "(none)");
}
