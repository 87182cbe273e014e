// pmu.c: mode 2's counters (see pmu.h for the slot mapping).

#include "pmu.h"

#include <string.h>

#include "platform/platform.h"

static const uint32_t slot_hardware[HTP_PMU_SLOTS] = {
    HTP_PMU_INSTRUCTIONS, HTP_PMU_CYCLES,        HTP_PMU_CACHE_REFS,       HTP_PMU_CACHE_MISSES,
    HTP_PMU_BRANCHES,     HTP_PMU_BRANCH_MISSES, HTP_PMU_STALLED_FRONTEND, HTP_PMU_STALLED_BACKEND,
};

static const uint32_t slot_software[HTP_PMU_SLOTS] = {
    HTP_PMU_TASK_CLOCK_NS,
    HTP_PMU_CONTEXT_SWITCHES,
    HTP_PMU_CPU_MIGRATIONS,
    HTP_PMU_PAGE_FAULTS,
    HTP_PMU_MINOR_FAULTS,
    HTP_PMU_MAJOR_FAULTS,
    HTP_PMU_OFF,
    HTP_PMU_OFF,
};

// Helpers' counters: entry w is touched by pool worker w's thread only.
static struct htp_pmu_thread helpers[HTP_MAX_NTHREADS];

uint32_t htp_pmu_pack(const uint32_t counter[HTP_PMU_SLOTS]) {
    uint32_t p = 0;
    for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
        p |= (counter[k] & 0xfu) << (4 * k);
    }
    return p;
}

uint32_t htp_pmu_unpack(uint32_t packed, uint32_t slot) {
    return slot < HTP_PMU_SLOTS ? (packed >> (4 * slot)) & 0xfu : HTP_PMU_OFF;
}

// Open counters on this thread, then close them: which slots open.
static int probe(const uint32_t counter[HTP_PMU_SLOTS], const uint32_t * events, uint32_t * mask) {
    struct htp_plat_pmu * p      = NULL;
    int                   reason = htp_plat_pmu_open(counter, events, HTP_PMU_SLOTS, &p, mask);
    htp_plat_pmu_close(p);
    return reason;
}

void htp_pmu_choose(uint32_t mode, const uint32_t * events, uint32_t n_events, struct htp_pmu_info * info) {
    memset(info, 0, sizeof(*info));
    info->mode = mode;
    if (mode != 2) {
        return;
    }
    uint32_t hw[HTP_PMU_SLOTS], sw[HTP_PMU_SLOTS];
    for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
        int on = n_events != HTP_PMU_SLOTS || events[k] != 0;
        hw[k]  = on ? slot_hardware[k] : HTP_PMU_OFF;
        sw[k]  = on ? slot_software[k] : HTP_PMU_OFF;
    }
    const uint32_t * ev   = n_events == HTP_PMU_SLOTS ? events : NULL;
    uint32_t         mask = 0;
    info->reason          = (uint32_t)probe(hw, ev, &mask);
    const uint32_t * used = hw;
    if (mask == 0) {
        probe(sw, ev, &mask);
        used = sw;
    }
    if (mask == 0) {
        info->mode = 1;  // nothing counts here: per-op times only
        return;
    }
    info->mask = mask;
    for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
        info->counter[k] = mask >> k & 1u ? used[k] : HTP_PMU_OFF;
    }
}

struct htp_pmu_thread * htp_pmu_helper(uint32_t worker) {
    return worker > 0 && worker < HTP_MAX_NTHREADS ? &helpers[worker] : NULL;
}

uint32_t htp_pmu_sample(struct htp_pmu_thread * t, uint32_t packed, uint64_t * v) {
    memset(v, 0, sizeof(uint64_t) * HTP_PMU_SLOTS);
    if (packed == 0) {
        return 0;
    }
    if (!t->tried || t->packed != packed) {
        htp_plat_pmu_close(t->pmu);
        uint32_t counter[HTP_PMU_SLOTS];
        for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
            counter[k] = htp_pmu_unpack(packed, k);
        }
        t->pmu    = NULL;
        t->mask   = 0;
        t->packed = packed;
        t->tried  = 1;
        htp_plat_pmu_open(counter, NULL, HTP_PMU_SLOTS, &t->pmu, &t->mask);
    }
    if (t->pmu == NULL || htp_plat_pmu_read(t->pmu, v) != 0) {
        return 0;
    }
    return t->mask;
}

void htp_pmu_thread_close(struct htp_pmu_thread * t) {
    htp_plat_pmu_close(t->pmu);
    memset(t, 0, sizeof(*t));
}
