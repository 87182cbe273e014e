// test-ring-sys.h: how test programs that drive a session's rings directly
// sleep and wake on them: the process-shared Linux futex, as the host does.

#ifndef HTP_TEST_RING_SYS_H
#define HTP_TEST_RING_SYS_H

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proto/htp-ring.h"

static inline uint64_t test_ring_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline void test_ring_wait(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us) {
    struct timespec ts = {(time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

static inline void test_ring_wake(_Atomic uint32_t * word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static inline void test_ring_wake_all(_Atomic uint32_t * word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static inline void test_ring_relax(void) {}

static const struct htp_ring_sys test_ring_sys = {test_ring_now_us, test_ring_wait, test_ring_wake, test_ring_relax};

#endif  // HTP_TEST_RING_SYS_H
