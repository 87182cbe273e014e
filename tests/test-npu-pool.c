// test-npu-pool: the worker pool (src/npu/pool.c): every slice of every job
// runs exactly once, with nth from 1 to n_threads, across many back-to-back
// jobs and after the workers have gone to sleep; prints the dispatch cost.

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu/pool.h"

#define N_THREADS 4

struct job {
    _Atomic uint32_t hits[N_THREADS];
    _Atomic uint32_t bad_nth;
    uint32_t         want_nth;
};

static void job_fn(void * arg, uint32_t ith, uint32_t nth) {
    struct job * j = arg;
    if (nth != j->want_nth || ith >= nth) {
        atomic_fetch_add_explicit(&j->bad_nth, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&j->hits[ith], 1, memory_order_relaxed);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
    printf("test-npu-pool: each slice runs once per job; dispatch cost\n");
    struct htp_pool pool;
    if (htp_pool_init(&pool, N_THREADS) != 0) {
        return 1;
    }
    int fails = 0;
    for (int round = 0; round < 3; round++) {
        for (uint32_t nth = 1; nth <= N_THREADS; nth++) {
            struct job j;
            memset(&j, 0, sizeof(j));
            j.want_nth = nth;
            int runs   = 2000;
            for (int r = 0; r < runs; r++) {
                htp_pool_run(&pool, nth, job_fn, &j);
            }
            for (uint32_t i = 0; i < N_THREADS; i++) {
                uint32_t want = i < nth ? (uint32_t)runs : 0;
                if (atomic_load(&j.hits[i]) != want) {
                    fprintf(stderr, "FAIL round %d nth %u: slice %u ran %u times, want %u\n", round, nth, i,
                            atomic_load(&j.hits[i]), want);
                    fails++;
                }
            }
            if (atomic_load(&j.bad_nth)) {
                fprintf(stderr, "FAIL nth %u: job saw a wrong nth/ith\n", nth);
                fails++;
            }
        }
        usleep(20000);  // let the workers fall asleep: the next jobs take the futex path
    }
    htp_pool_free(&pool);
    // Dispatch cost with one worker per core (as htp-npu defaults to).
    long     cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt   = cpus < 1 ? 1 : cpus > N_THREADS ? N_THREADS : (uint32_t)cpus;
    if (htp_pool_init(&pool, nt) != 0) {
        return 1;
    }
    struct job j;
    memset(&j, 0, sizeof(j));
    j.want_nth = nt;
    double t0  = now_s();
    int    n   = 20000;
    for (int r = 0; r < n; r++) {
        htp_pool_run(&pool, nt, job_fn, &j);
    }
    double us = (now_s() - t0) * 1e6 / n;
    printf("  %d empty jobs on %u threads: %.2f us per dispatch\n", n, nt, us);
    fails += atomic_load(&j.hits[nt - 1]) != (uint32_t)n;
    htp_pool_free(&pool);
    printf("test-npu-pool: %s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
