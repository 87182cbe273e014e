// lock.c: futex mutex and condition variable over the platform seam; see
// lock.h for the protocol.

#include "lock.h"

#include "platform/platform.h"

#define LOCK_SPIN 100  // tries before sleeping: critical sections here are short

void htp_lock_init(struct htp_lock * l) {
    atomic_init(&l->state, 0);
}

void htp_lock_acquire(struct htp_lock * l) {
    for (int i = 0; i < LOCK_SPIN; i++) {
        uint32_t free_state = 0;
        // Acquire: what the previous holder wrote before its release is visible.
        if (atomic_compare_exchange_weak_explicit(&l->state, &free_state, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
            return;
        }
        htp_plat_relax();
    }
    // Mark the lock contended; whoever releases it next wakes a sleeper.
    while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire) != 0) {
        htp_plat_wait(&l->state, 2, -1, 0);
    }
}

void htp_lock_release(struct htp_lock * l) {
    // Release: publishes the critical section to the next acquirer.
    if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2) {
        htp_plat_wake(&l->state, 1, 0);
    }
}

void htp_cond_init(struct htp_cond * c) {
    atomic_init(&c->seq, 0);
}

void htp_cond_wait(struct htp_cond * c, struct htp_lock * l, int64_t timeout_us) {
    // Relaxed: the lock orders this read after the waiter's check of its
    // condition; a broadcast made after it changes seq and ends the sleep.
    const uint32_t seen = atomic_load_explicit(&c->seq, memory_order_relaxed);
    htp_lock_release(l);
    htp_plat_wait(&c->seq, seen, timeout_us, 0);
    htp_lock_acquire(l);
}

void htp_cond_broadcast(struct htp_cond * c) {
    // Relaxed: the waiters re-check their condition under the lock, which
    // carries the ordering; seq only has to change.
    atomic_fetch_add_explicit(&c->seq, 1, memory_order_relaxed);
    htp_plat_wake(&c->seq, UINT32_MAX, 0);
}
