// lock.h: the NPU's mutex and condition variable, built on the platform's
// wait/wake of a 32-bit word (platform.h), so the core needs no pthreads and
// builds unchanged for Hexagon, where QuRT offers the same futex primitive.
//
// htp_lock: the classic three-state futex mutex (0 free, 1 held, 2 held with
// waiters): an uncontended acquire and release are one atomic each; only a
// release that saw waiters pays for a wake-up.
//
// htp_cond: a sequence word. A waiter reads it while holding the lock, drops
// the lock and sleeps while the word still has that value; a broadcast bumps
// the word and wakes everyone. A broadcast that comes after the waiter read
// the word changes it, so the sleep returns at once: no wake-up is lost.
// Waiters re-check their condition after every return (spurious ones too).

#ifndef HTP_NPU_LOCK_H
#define HTP_NPU_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

struct htp_lock {
    _Atomic uint32_t state;  // 0 free, 1 held, 2 held and someone may sleep on it
};

struct htp_cond {
    _Atomic uint32_t seq;  // bumped by every broadcast
};

#define HTP_LOCK_INIT \
    { 0 }
#define HTP_COND_INIT \
    { 0 }

void htp_lock_init(struct htp_lock * l);
void htp_lock_acquire(struct htp_lock * l);
void htp_lock_release(struct htp_lock * l);

void htp_cond_init(struct htp_cond * c);

// Release l, sleep until a broadcast or timeout_us (< 0: no limit), take l again.
void htp_cond_wait(struct htp_cond * c, struct htp_lock * l, int64_t timeout_us);

// Wake every waiter of c.
void htp_cond_broadcast(struct htp_cond * c);

#endif  // HTP_NPU_LOCK_H
