// futex.h: futex wait and wake for the Hexagon runtime, and the small mutex
// built on them. The one idea: a futex is just a 32-bit word the kernel can
// sleep on; "private" (FUTEX_PRIVATE_FLAG) keys the word by this process's
// address space and is cheaper, "shared" keys it by the underlying page, so a
// waiter and a waker in two processes that map the same memory meet. Waits
// use futex_time64 with a relative timeout, so there is no 2038 limit and no
// clock to read first.

#ifndef HTP_RT_FUTEX_H
#define HTP_RT_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>

#include "syscall.h"

#define HTP_FUTEX_WAIT    0
#define HTP_FUTEX_WAKE    1
#define HTP_FUTEX_PRIVATE 128

// struct __kernel_timespec: 64-bit seconds and nanoseconds on every target.
struct htp_rt_timespec64 {
    int64_t sec;
    int64_t nsec;
};

// Sleep while *word == expected, at most timeout_ns (< 0: no limit). Returns
// 0 when woken (or spuriously), or -errno (-ETIMEDOUT, -EAGAIN when *word had
// already changed, -EINTR).
static inline long htp_rt_futex_wait(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_ns, int shared) {
    struct htp_rt_timespec64   ts;
    struct htp_rt_timespec64 * tp = 0;
    if (timeout_ns >= 0) {
        ts.sec  = timeout_ns / 1000000000;
        ts.nsec = timeout_ns % 1000000000;
        tp      = &ts;
    }
    int op = HTP_FUTEX_WAIT | (shared ? 0 : HTP_FUTEX_PRIVATE);
    return htp_sys_call4(HTP_NR_FUTEX_TIME64, (long)word, op, (long)expected, (long)tp);
}

// Wake up to n waiters on word; returns how many were woken.
static inline long htp_rt_futex_wake(_Atomic uint32_t * word, uint32_t n, int shared) {
    int op = HTP_FUTEX_WAKE | (shared ? 0 : HTP_FUTEX_PRIVATE);
    // The kernel takes the count as an int: "all" is INT_MAX, not UINT32_MAX.
    long count = n > 0x7fffffffu ? 0x7fffffffL : (long)n;
    return htp_sys_call3(HTP_NR_FUTEX_TIME64, (long)word, op, count);
}

// A mutex of one word: 0 free, 1 held, 2 held with (maybe) sleepers. Unlock
// makes a system call only when someone may be asleep.
struct htp_rt_mutex {
    _Atomic uint32_t state;
};

static inline void htp_rt_mutex_lock(struct htp_rt_mutex * m) {
    uint32_t c = 0;
    if (atomic_compare_exchange_strong_explicit(&m->state, &c, 1, memory_order_acquire, memory_order_relaxed)) {
        return;
    }
    // Contended: mark the word "sleepers" and sleep until we take it as 2.
    // Taking it as 2 (not 1) is what keeps a later unlock waking the others.
    if (c != 2) {
        c = atomic_exchange_explicit(&m->state, 2, memory_order_acquire);
    }
    while (c != 0) {
        htp_rt_futex_wait(&m->state, 2, -1, 0);
        c = atomic_exchange_explicit(&m->state, 2, memory_order_acquire);
    }
}

static inline void htp_rt_mutex_unlock(struct htp_rt_mutex * m) {
    if (atomic_exchange_explicit(&m->state, 0, memory_order_release) == 2) {
        htp_rt_futex_wake(&m->state, 1, 0);
    }
}

#endif  // HTP_RT_FUTEX_H
