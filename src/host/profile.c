// profile.c: checking and logging a batch's profile read-back (see profile.h).

#include "profile.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "status.h"

static const char * const counter_names[HTP_PMU_COUNTER_COUNT] = {
    [HTP_PMU_OFF]              = "off",
    [HTP_PMU_INSTRUCTIONS]     = "instructions",
    [HTP_PMU_CYCLES]           = "cycles",
    [HTP_PMU_CACHE_REFS]       = "cache-references",
    [HTP_PMU_CACHE_MISSES]     = "cache-misses",
    [HTP_PMU_BRANCHES]         = "branches",
    [HTP_PMU_BRANCH_MISSES]    = "branch-misses",
    [HTP_PMU_STALLED_FRONTEND] = "stalled-cycles-frontend",
    [HTP_PMU_STALLED_BACKEND]  = "stalled-cycles-backend",
    [HTP_PMU_TASK_CLOCK_NS]    = "task-clock-ns",
    [HTP_PMU_CONTEXT_SWITCHES] = "context-switches",
    [HTP_PMU_CPU_MIGRATIONS]   = "cpu-migrations",
    [HTP_PMU_PAGE_FAULTS]      = "page-faults",
    [HTP_PMU_MINOR_FAULTS]     = "minor-faults",
    [HTP_PMU_MAJOR_FAULTS]     = "major-faults",
    [HTP_PMU_HEXAGON_EVENT]    = "hexagon-event",
};

const char * htp_profile_counter_name(uint32_t counter) {
    return counter < HTP_PMU_COUNTER_COUNT && counter_names[counter] ? counter_names[counter] : "?";
}

static int fail(char * why, size_t size, const char * fmt, unsigned a, unsigned b) {
    snprintf(why, size, fmt, a, b);
    return -1;
}

int htp_profile_check(const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof, uint32_t n,
                      const struct htp_op_desc * ops, uint32_t n_threads, const struct htp_pmu_info * pmu, char * why,
                      size_t why_size) {
    if (rsp->n_done > rsp->n_ops || rsp->n_ops != n) {
        return fail(why, why_size, "batch says %u of %u ops ran, pushed a different count", rsp->n_done, rsp->n_ops);
    }
    const uint32_t                    mask = pmu && pmu->mode == 2 ? pmu->mask : 0;
    static const struct htp_prof_desc zero;
    for (uint32_t i = 0; i < n; i++) {
        const struct htp_prof_desc * d = &prof[i];
        // The failing op (index n_done) has its descriptor too, unless the
        // batch failed validation (then nothing ran and all stay zero).
        const int is_zero = memcmp(d, &zero, sizeof zero) == 0;
        if (i >= rsp->n_done && (i > rsp->n_done || rsp->status == HTP_STATUS_OK || is_zero)) {
            if (!is_zero) {
                return fail(why, why_size, "op %u did not run (%u ran) but has a profile", i, rsp->n_done);
            }
            continue;
        }
        if (ops && d->opcode != ops[i].opcode) {
            return fail(why, why_size, "op %u echoes opcode %u, pushed another", i, d->opcode);
        }
        if (d->status > HTP_STATUS_VERSION) {
            return fail(why, why_size, "op %u has status %u", i, d->status);
        }
        if (d->n_threads == 0 || d->n_threads > n_threads) {
            return fail(why, why_size, "op %u ran on %u workers, more than the session has (%u)", i, d->n_threads);
        }
        if ((d->engine & HTP_ENGINE_UNIT_MASK) > HTP_UNIT_HMX ||
            (d->engine & ~(HTP_ENGINE_UNIT_MASK | HTP_ENGINE_KV_SPLIT)) != 0 || d->pad != 0) {
            return fail(why, why_size, "op %u has engine word %#x or a non-zero pad", i, d->engine);
        }
        if ((d->pmu_mask & ~mask) != 0) {
            return fail(why, why_size, "op %u has PMU slots %#x outside those announced", i, d->pmu_mask);
        }
        for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
            if (!(d->pmu_mask >> k & 1u) && d->pmu[k] != 0) {
                return fail(why, why_size, "op %u has a count in unused PMU slot %u", i, k);
            }
        }
    }
    return 0;
}

void htp_profile_format_op(char * buf, size_t size, const char * name, uint32_t i, const struct htp_prof_desc * pd,
                           const struct htp_pmu_info * pmu) {
    int len = snprintf(buf, size, "ggml-htp: %s profile-op #%u %s: usec %llu cycles %llu threads %u status %s", name, i,
                       htp_opqueue_op_name(pd->opcode), (unsigned long long)pd->usecs, (unsigned long long)pd->cycles,
                       pd->n_threads, htp_status_str((int)pd->status));
    const uint32_t unit = pd->engine & HTP_ENGINE_UNIT_MASK;
    if (unit != HTP_UNIT_NONE && len >= 0 && (size_t)len < size) {
        len += snprintf(buf + len, size - (size_t)len, " unit %s%s", unit == HTP_UNIT_HMX ? "HMX" : "HVX",
                        pd->engine & HTP_ENGINE_KV_SPLIT ? " kv-split" : "");
    }
    if (pmu && pd->pmu_mask) {
        const char * sep = " pmu ";
        for (uint32_t k = 0; k < HTP_PMU_SLOTS && len >= 0 && (size_t)len < size; k++) {
            if (pd->pmu_mask >> k & 1u) {
                len += snprintf(buf + len, size - (size_t)len, "%s%s=%llu", sep,
                                htp_profile_counter_name(pmu->counter[k]), (unsigned long long)pd->pmu[k]);
                sep = " ";
            }
        }
    }
}

void htp_profile_log_ops(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof,
                         uint32_t n, const struct htp_pmu_info * pmu) {
    HTP_LOG_DEBUG("ggml-htp: %s profile-batch #%llu: n-ops %u done %u status %s usec %llu cycles %llu\n", name,
                  (unsigned long long)rsp->seq, rsp->n_ops, rsp->n_done, htp_status_str((int)rsp->status),
                  (unsigned long long)rsp->usecs, (unsigned long long)rsp->cycles);
    for (uint32_t i = 0; i < n; i++) {
        char line[512];
        htp_profile_format_op(line, sizeof line, name, i, &prof[i], pmu);
        HTP_LOG_DEBUG("%s\n", line);
    }
}

void htp_profile_log_trace(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_opqueue_prof * p) {
    static const char * evt[] = {"?", "op-begin", "op-end", "fence"};
    // The NPU says how many events each thread wrote; never read past what we reserved.
    uint32_t n = rsp->n_traces < p->n_traces ? rsp->n_traces : p->n_traces;
    for (uint32_t t = 0; t < p->n_threads; t++) {
        for (uint32_t i = 0; i < n; i++) {
            const struct htp_trace_desc * e = &p->trace[(uint64_t)t * p->n_traces + i];
            if (e->event == 0) {
                break;  // fewer events on this thread (the area starts zeroed)
            }
            HTP_LOG_DEBUG("ggml-htp: %s trace-evt #%llu thread %u: %s op %u at %llu us\n", name,
                          (unsigned long long)rsp->seq, t, e->event < 4 ? evt[e->event] : "?", e->op,
                          (unsigned long long)e->usecs);
        }
    }
}

int htp_profile_pmu_answer(const char * name, uint32_t asked, const struct htp_pmu_info * pmu) {
    if (pmu->mode > 3 || (pmu->mode != asked && !(asked == 2 && pmu->mode == 1)) || (pmu->mask >> HTP_PMU_SLOTS) != 0 ||
        pmu->reason > HTP_PMU_REASON_UNAVAILABLE) {
        HTP_LOG_ERROR("ggml-htp: %s: malformed profiler answer (mode %u for %u, mask %#x, reason %u)\n", name,
                      pmu->mode, asked, pmu->mask, pmu->reason);
        return -1;
    }
    for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
        const int on = pmu->mask >> k & 1u;
        if (pmu->counter[k] >= HTP_PMU_COUNTER_COUNT || on != (pmu->counter[k] != HTP_PMU_OFF)) {
            HTP_LOG_ERROR("ggml-htp: %s: malformed profiler answer (slot %u counts %u)\n", name, k, pmu->counter[k]);
            return -1;
        }
    }
    if (asked != 2 || pmu->reason == HTP_PMU_REASON_OK) {
        return 0;
    }
    static atomic_int said;
    if (atomic_exchange(&said, 1)) {
        return 0;
    }
    static const char * const why[]     = {"", "this machine has no hardware PMU for them",
                                           "perf_event_paranoid refuses them", "the NPU's platform has no counters"};
    char                      what[256] = "";
    int                       len       = 0;
    for (uint32_t k = 0; k < HTP_PMU_SLOTS && (size_t)len < sizeof what; k++) {
        if (pmu->mask >> k & 1u) {
            len += snprintf(what + len, sizeof what - (size_t)len, "%s%s", len ? ", " : "",
                            htp_profile_counter_name(pmu->counter[k]));
        }
    }
    const int hardware = pmu->mask && pmu->counter[__builtin_ctz(pmu->mask)] < HTP_PMU_TASK_CLOCK_NS;
    if (pmu->mode == 1) {
        HTP_LOG_WARN("ggml-htp: %s: PMU counters not available (%s), nor software events: profiling mode 2 runs as 1\n",
                     name, why[pmu->reason]);
    } else if (!hardware) {
        HTP_LOG_WARN("ggml-htp: %s: PMU counters not available (%s): mode 2 counts software events: %s\n", name,
                     why[pmu->reason], what);
    } else {
        HTP_LOG_WARN("ggml-htp: %s: some PMU counters not available (%s): mode 2 counts %s\n", name, why[pmu->reason],
                     what);
    }
    return 0;
}
