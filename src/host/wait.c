// wait.c: clock, spin hint and process-shared futex for the host library.

#include "wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

uint64_t htp_wait_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void htp_wait_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

void htp_wait_futex(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us) {
    struct timespec ts = {(time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, timeout_us < 0 ? NULL : &ts, NULL, 0);
}

void htp_wait_wake(_Atomic uint32_t * word, uint32_t n) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, n > INT_MAX ? INT_MAX : (int)n, NULL, NULL, 0);
}

// All sleepers: on a request ring's head, the NPU's session thread and its
// parked pool helpers (the NPU's pool.h, htp_pool_park's doorbell).
static void ring_wake(_Atomic uint32_t * word) {
    htp_wait_wake(word, UINT32_MAX);
}

const struct htp_ring_sys htp_wait_ring_sys = {htp_wait_now_us, htp_wait_futex, ring_wake, htp_wait_relax};
