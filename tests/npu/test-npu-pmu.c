// test-npu-pmu: mode 2's counters on the NPU side (src/npu/pmu.c) on this
// machine: htp_pmu_choose names hardware events where perf has them, the
// software events where it has none (this project's VMs), mode 1 where
// neither opens, and agrees with what htp_plat_pmu_open gives; event number
// 0 turns a slot off; pack/unpack round-trip; a thread's counters open
// lazily, reopen when the configuration changes, and count work done
// between two samples (task-clock or instructions grow); other modes count
// nothing.

#include <string.h>

#include "platform/platform.h"
#include "pmu.h"

#include "test-check.h"

static volatile uint64_t sink;

static void busy(void) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < 20000000; i++) {
        x = x * 6364136223846793005ull + i;
    }
    sink = x;
}

int main(void) {
    struct htp_pmu_info info;
    htp_pmu_choose(1, NULL, 0, &info);
    CHECK(info.mode == 1 && info.mask == 0, "mode 1: mode %u mask %#x", info.mode, info.mask);
    htp_pmu_choose(3, NULL, 0, &info);
    CHECK(info.mode == 3 && info.mask == 0, "mode 3: mode %u mask %#x", info.mode, info.mask);

    htp_pmu_choose(2, NULL, 0, &info);
    printf("mode 2 here: mode %u mask %#x reason %u counters", info.mode, info.mask, info.reason);
    for (int k = 0; k < HTP_PMU_SLOTS; k++) {
        printf(" %u", info.counter[k]);
    }
    printf("\n");
    CHECK(info.mode == 1 || info.mode == 2, "mode %u", info.mode);
    CHECK(info.mode == 2 || info.mask == 0, "mode 1 with slots %#x", info.mask);
    int hardware = info.mask && info.counter[__builtin_ctz(info.mask)] < HTP_PMU_TASK_CLOCK_NS;
    CHECK(hardware || info.mode == 1 || info.reason != HTP_PMU_REASON_OK, "software events without a reason");
    for (int k = 0; k < HTP_PMU_SLOTS; k++) {
        CHECK((info.mask >> k & 1u) == (info.counter[k] != HTP_PMU_OFF), "slot %d: mask and counter disagree", k);
    }
    // What was chosen opens here.
    struct htp_plat_pmu * p    = NULL;
    uint32_t              mask = 0;
    if (info.mask) {
        htp_plat_pmu_open(info.counter, NULL, HTP_PMU_SLOTS, &p, &mask);
        CHECK(mask == info.mask && p != NULL, "chosen %#x, opened %#x", info.mask, mask);
        htp_plat_pmu_close(p);
    }

    // Event number 0 turns slots off.
    uint32_t            events[HTP_PMU_SLOTS] = {0x3, 0, 0x100, 0, 0, 0, 0, 0};
    struct htp_pmu_info some;
    htp_pmu_choose(2, events, HTP_PMU_SLOTS, &some);
    CHECK((some.mask & ~0x5u) == 0, "slots %#x beyond those with events", some.mask);
    CHECK(some.mode == info.mode, "mode %u with fewer slots, %u with all", some.mode, info.mode);

    // Pack / unpack.
    uint32_t packed = htp_pmu_pack(info.counter);
    for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
        CHECK(htp_pmu_unpack(packed, k) == info.counter[k], "slot %u", k);
    }
    CHECK(htp_pmu_unpack(packed, HTP_PMU_SLOTS) == HTP_PMU_OFF, "slot out of range");

    // A thread's counters count work.
    struct htp_pmu_thread t = {0};
    uint64_t              v0[HTP_PMU_SLOTS], v1[HTP_PMU_SLOTS];
    CHECK(htp_pmu_sample(&t, 0, v0) == 0, "nothing configured, yet counts");
    if (info.mode == 2) {
        uint32_t m0 = htp_pmu_sample(&t, packed, v0);
        busy();
        uint32_t m1 = htp_pmu_sample(&t, packed, v1);
        CHECK(m0 == info.mask && m1 == info.mask, "sampled %#x / %#x of %#x", m0, m1, info.mask);
        int grew = 0;
        for (int k = 0; k < HTP_PMU_SLOTS; k++) {
            if ((m1 >> k & 1u) && (info.counter[k] == HTP_PMU_TASK_CLOCK_NS ||
                                   info.counter[k] == HTP_PMU_INSTRUCTIONS || info.counter[k] == HTP_PMU_CYCLES)) {
                grew |= v1[k] > v0[k];
                printf("slot %d counter %u: %llu over the busy loop\n", k, info.counter[k],
                       (unsigned long long)(v1[k] - v0[k]));
            }
        }
        CHECK(grew, "no time / instruction counter grew over a busy loop");
        // A new configuration reopens.
        uint32_t only0[HTP_PMU_SLOTS] = {info.counter[__builtin_ctz(info.mask)]};
        uint32_t m2                   = htp_pmu_sample(&t, htp_pmu_pack(only0), v1);
        CHECK(m2 == 1u, "reopened with slot 0 only: %#x", m2);
    }
    htp_pmu_thread_close(&t);
    CHECK(t.pmu == NULL, "closed");
    return test_exit_code("test-npu-pmu");
}
