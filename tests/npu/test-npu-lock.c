// test-npu-lock: the NPU's futex mutex and condition variable (src/npu/lock.c)
// and the platform's threads and waits under them: four threads add to a
// plain counter under the lock (any lost update shows in the total); a
// waiter is released by a broadcast, and a wait with nobody to broadcast
// returns after its timeout.

#include <stdio.h>

#include "npu/lock.h"
#include "npu/platform/platform.h"
#include "test-check.h"

#define N_THREADS 4
#define N_ADDS    200000

static struct htp_lock lock = HTP_LOCK_INIT;
static uint64_t        counter;  // guarded by lock, deliberately not atomic

static void adder(void * arg) {
    (void)arg;
    for (int i = 0; i < N_ADDS; i++) {
        htp_lock_acquire(&lock);
        counter++;
        htp_lock_release(&lock);
    }
}

static struct htp_cond cond = HTP_COND_INIT;
static int             ready;  // guarded by lock
static int             woke;   // guarded by lock

static void waiter(void * arg) {
    (void)arg;
    htp_lock_acquire(&lock);
    while (!ready) {
        htp_cond_wait(&cond, &lock, -1);
    }
    woke = 1;
    htp_lock_release(&lock);
}

int main(void) {
    struct htp_plat_thread * t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        CHECK(htp_plat_thread_start(adder, NULL, &t[i]) == 0, "start adder %d", i);
    }
    for (int i = 0; i < N_THREADS; i++) {
        htp_plat_thread_join(t[i]);
    }
    CHECK(counter == (uint64_t)N_THREADS * N_ADDS, "counter %llu, want %llu", (unsigned long long)counter,
          (unsigned long long)N_THREADS * N_ADDS);

    struct htp_plat_thread * w;
    CHECK(htp_plat_thread_start(waiter, NULL, &w) == 0, "start waiter");
    htp_plat_wait(&(_Atomic uint32_t){0}, 0, 20000, 0);  // let it go to sleep (a timed sleep of 20 ms)
    htp_lock_acquire(&lock);
    ready = 1;
    htp_cond_broadcast(&cond);
    htp_lock_release(&lock);
    htp_plat_thread_join(w);
    CHECK(woke == 1, "waiter not released by the broadcast");

    const uint64_t t0 = htp_plat_now_us();
    htp_lock_acquire(&lock);
    htp_cond_wait(&cond, &lock, 30000);
    htp_lock_release(&lock);
    const uint64_t dt = htp_plat_now_us() - t0;
    CHECK(dt >= 25000, "timed wait returned after %llu us, want about 30000", (unsigned long long)dt);

    return test_exit_code("test-npu-lock");
}
