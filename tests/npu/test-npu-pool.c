// test-npu-pool: the worker pool (src/npu/pool.c): every slice of every job
// runs exactly once, with nth from 1 to n_threads, across many back-to-back
// jobs and after the workers have gone to sleep; prints the dispatch cost.
// Then the work share the matmul jobs claim their items from
// (src/npu/ops/work-share.h): every item claimed exactly once, and a slow
// worker's tail taken by the others from the back of its range. And the
// doorbell (htp_pool_park): parked helpers wake when it rings, sleep again
// when no job follows, and no longer wake on it once it is forgotten; and
// jobs after htp_pool_prewake.

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu/ops/work-share.h"
#include "npu/platform/platform.h"
#include "npu/pool.h"
#include "test-check.h"

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

// --- work share ---

#define SHARE_MAX_ITEMS 1000

struct share_job {
    struct htp_share share;
    _Atomic uint32_t hits[SHARE_MAX_ITEMS];
    _Atomic int32_t  owner[SHARE_MAX_ITEMS];  // worker that claimed the item
    _Atomic uint32_t bad_chunk;               // a claim not inside [0, n) or longer than chunk
    int64_t          n, chunk;
    uint32_t         slow_ith;  // this worker sleeps after its first claim (>= nth: none)
};

static void share_fn(void * arg, uint32_t ith, uint32_t nth) {
    struct share_job * j = arg;
    (void)nth;
    int64_t i0, i1;
    int     first = 1;
    while (htp_share_claim(&j->share, ith, &i0, &i1)) {
        if (i0 < 0 || i1 > j->n || i0 >= i1 || i1 - i0 > j->chunk) {
            atomic_fetch_add(&j->bad_chunk, 1);
            continue;
        }
        for (int64_t i = i0; i < i1; i++) {
            atomic_fetch_add(&j->hits[i], 1);
            atomic_store(&j->owner[i], (int32_t)ith);
        }
        if (first && ith == j->slow_ith) {
            usleep(20000);
        }
        first = 0;
    }
}

static void share_job_init(struct share_job * j, int64_t n, int64_t chunk, uint32_t nth, uint32_t slow_ith) {
    memset(j, 0, sizeof(*j));
    j->n        = n;
    j->chunk    = chunk;
    j->slow_ith = slow_ith;
    htp_share_init(&j->share, n, chunk, nth);
}

static void share_check_once(const struct share_job * j, const char * what) {
    int wrong = atomic_load(&j->bad_chunk) != 0;
    for (int64_t i = 0; i < j->n; i++) {
        wrong += atomic_load(&j->hits[i]) != 1;
    }
    CHECK(wrong == 0, "%s (n %lld chunk %lld): items not claimed exactly once", what, (long long)j->n,
          (long long)j->chunk);
}

static void test_work_share(struct htp_pool * pool) {
    static struct share_job j;
    const int64_t           ns[]    = {0, 1, 5, 63, 64, 1000};
    const int64_t           chunk[] = {1, 3, 4, 7, 2000};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        for (size_t b = 0; b < sizeof chunk / sizeof chunk[0]; b++) {
            for (uint32_t nth = 1; nth <= N_THREADS; nth++) {
                share_job_init(&j, ns[a], chunk[b], nth, N_THREADS);
                htp_pool_run(pool, nth, share_fn, &j);
                share_check_once(&j, "pooled");
                // Workers run one after the other (the NPU core without a
                // pool): the first takes every chunk.
                share_job_init(&j, ns[a], chunk[b], nth, N_THREADS);
                for (uint32_t i = 0; i < nth; i++) {
                    share_fn(&j, i, nth);
                }
                share_check_once(&j, "sequential");
                int64_t stray = -1;  // the first item worker 0 did not take
                for (int64_t i = 0; i < j.n && stray < 0; i++) {
                    stray = atomic_load(&j.owner[i]) != 0 ? i : -1;
                }
                CHECK(stray < 0, "sequential: item %lld went to worker %d, not 0", (long long)stray,
                      atomic_load(&j.owner[stray]));
            }
        }
    }
    // Claim order, one claim at a time: each worker goes through its own
    // range from the front, then through the others' from the back.
    share_job_init(&j, 8, 1, 2, N_THREADS);
    const struct {
        uint32_t ith;
        int64_t  item;  // -1: nothing left
    } order[] = {{0, 0}, {1, 4}, {1, 5}, {1, 6}, {1, 7}, {1, 3}, {0, 1}, {1, 2}, {0, -1}, {1, -1}};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        int64_t i0 = -1, i1 = -1;
        int64_t got = htp_share_claim(&j.share, order[k].ith, &i0, &i1) ? i0 : -1;
        CHECK(got == order[k].item && (got < 0 || i1 == got + 1),
              "claim %zu (worker %u): got [%lld, %lld), want item %lld", k, order[k].ith, (long long)i0, (long long)i1,
              (long long)order[k].item);
    }
    // Worker 0 stalls after its first chunk: worker 1 takes the rest.
    share_job_init(&j, 64, 1, 2, 0);
    htp_pool_run(pool, 2, share_fn, &j);
    share_check_once(&j, "slow worker");
    int64_t n_by_0 = 0;
    for (int64_t i = 0; i < 64; i++) {
        n_by_0 += atomic_load(&j.owner[i]) == 0;
    }
    printf("  work share: a stalled worker 0 claimed %lld of its 32 items, worker 1 the rest\n", (long long)n_by_0);
}

// --- doorbell ---

// Until the pool's sleeper count is want, or about two seconds pass (a
// liveness bound, not a speed check). Returns the count last seen.
static uint32_t await_sleepers(struct htp_pool * pool, uint32_t want) {
    uint32_t n = 0;
    for (int i = 0; i < 2000 && (n = atomic_load(&pool->sleepers)) != want; i++) {
        usleep(1000);
    }
    return n;
}

static void test_doorbell(struct htp_pool * pool) {
    static _Atomic uint32_t bell;  // the request ring's head in htp-npu
    const uint32_t          helpers = pool->n_threads - 1;
    // Where the platform cannot wait on two words, parked helpers wait on
    // generation alone and the session wakes them (htp_pool_prewake).
    _Atomic uint32_t probe = 1;
    if (htp_plat_wait_either(&probe, 0, &bell, atomic_load(&bell)) != 0) {
        printf("  doorbell: this platform waits on one word at a time; not tested\n");
        return;
    }
    // As a batch ends: helpers spinning after its last job see the park (here
    // they spin until they do: one whose spin ran out first would sleep on
    // generation alone, and the test thread is slow to get a core).
    const uint32_t idle_spin = atomic_load(&pool->idle_spin_us);
    atomic_store(&pool->idle_spin_us, 2000000);
    struct job j;
    memset(&j, 0, sizeof(j));
    j.want_nth = pool->n_threads;
    htp_pool_run(pool, pool->n_threads, job_fn, &j);
    htp_pool_park(pool, &bell, atomic_load(&bell));
    uint32_t n = await_sleepers(pool, helpers);
    atomic_store(&pool->idle_spin_us, idle_spin);
    CHECK(n == helpers, "doorbell: %u of %u parked helpers asleep", n, helpers);
    // Ring: the helpers wake and spin (bell_spin_us) with no job to take.
    const uint32_t wakes0 = atomic_load(&pool->bell_wakes);
    atomic_fetch_add(&bell, 1);
    htp_plat_wake(&bell, UINT32_MAX, 1);
    uint32_t woke = 0;
    for (int i = 0; i < 2000 && (woke = atomic_load(&pool->bell_wakes) - wakes0) < helpers; i++) {
        usleep(1000);
    }
    CHECK(woke == helpers, "doorbell: the ring woke %u of %u parked helpers", woke, helpers);
    // No job came: they sleep again, on generation alone for the same value
    // (the word stays changed; a helper looping on it would never sleep).
    n = await_sleepers(pool, helpers);
    CHECK(n == helpers, "doorbell: %u of %u helpers asleep again after a ring with no job", n, helpers);
    htp_pool_run(pool, pool->n_threads, job_fn, &j);
    CHECK(atomic_load(&j.hits[pool->n_threads - 1]) == 2, "doorbell: a job after the ring ran its last slice %u times",
          atomic_load(&j.hits[pool->n_threads - 1]));
    // Forgotten: helpers asleep on it may still wake once; after that a ring
    // no longer wakes them.
    atomic_store(&pool->idle_spin_us, 2000000);
    htp_pool_run(pool, pool->n_threads, job_fn, &j);
    htp_pool_park(pool, &bell, atomic_load(&bell));
    n = await_sleepers(pool, helpers);
    htp_pool_forget_doorbell(pool, &bell);
    atomic_store(&pool->idle_spin_us, idle_spin);
    atomic_fetch_add(&bell, 1);
    htp_plat_wake(&bell, UINT32_MAX, 1);
    usleep(20000);
    n = await_sleepers(pool, helpers);
    CHECK(n == helpers, "doorbell: %u of %u helpers asleep after forget", n, helpers);
    const uint32_t wakes1 = atomic_load(&pool->bell_wakes);
    atomic_fetch_add(&bell, 1);
    htp_plat_wake(&bell, UINT32_MAX, 1);
    usleep(20000);
    CHECK(atomic_load(&pool->bell_wakes) == wakes1, "doorbell: a forgotten doorbell woke %u helpers",
          atomic_load(&pool->bell_wakes) - wakes1);
    printf("  doorbell: parked helpers woke on a ring, slept again without a job, ignored it once forgotten\n");
}

// Slice 0 (the caller's) waits, up to two seconds, until a helper has run
// slice 1: a helper the pool failed to wake never comes.
struct wait_job {
    _Atomic uint32_t slice1_done;  // cleared before each run
    _Atomic uint32_t hits[2];
    _Atomic uint32_t stranded;  // runs whose slice 1 no helper took in time
};

static void wait_job_fn(void * arg, uint32_t ith, uint32_t nth) {
    struct wait_job * j = arg;
    (void)nth;
    if (ith == 1) {
        atomic_store(&j->slice1_done, 1);
    } else {
        const double t0 = now_s();
        while (!atomic_load(&j->slice1_done) && now_s() - t0 < 2.0) {
        }
        atomic_fetch_add(&j->stranded, !atomic_load(&j->slice1_done));
    }
    atomic_fetch_add(&j->hits[ith], 1);
}

// Batches as the session runs them: park at the end, a pause in which the
// helpers fall asleep (or not), htp_pool_prewake (a generation with no
// slices), then two-slice jobs whose second slice a helper must take: the
// wakes of prewake and of the jobs (wake_sleepers_after_bump) leave none
// asleep.
static void test_prewake(struct htp_pool * pool) {
    static struct wait_job j;
    memset(&j, 0, sizeof(j));
    const int runs = 300;
    for (int r = 0; r < runs && atomic_load(&j.stranded) == 0; r++) {
        htp_pool_park(pool, NULL, 0);
        usleep(r % 3 == 0 ? 0 : r % 3 == 1 ? 20 : 200);
        if (r % 2 == 0) {
            htp_pool_prewake(pool);
        }
        for (int k = 0; k < 3; k++) {
            atomic_store(&j.slice1_done, 0);
            htp_pool_run(pool, 2, wait_job_fn, &j);
        }
    }
    CHECK(atomic_load(&j.stranded) == 0, "prewake: a job's slice 1 waited 2 s for a helper that never came");
    CHECK(
        atomic_load(&j.stranded) != 0 || (atomic_load(&j.hits[0]) == 3u * runs && atomic_load(&j.hits[1]) == 3u * runs),
        "prewake: slices ran %u and %u times, want %d", atomic_load(&j.hits[0]), atomic_load(&j.hits[1]), 3 * runs);
}

int main(void) {
    printf("test-npu-pool: each slice runs once per job; dispatch cost\n");
    struct htp_pool pool;
    CHECK_OR_RETURN(1, htp_pool_init(&pool, N_THREADS) == 0, "pool of %d threads", N_THREADS);
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
                CHECK(atomic_load(&j.hits[i]) == want, "round %d nth %u: slice %u ran %u times, want %u", round, nth, i,
                      atomic_load(&j.hits[i]), want);
            }
            CHECK(!atomic_load(&j.bad_nth), "nth %u: job saw a wrong nth/ith", nth);
        }
        usleep(20000);  // let the workers fall asleep: the next jobs take the futex path
    }
    test_work_share(&pool);
    test_prewake(&pool);
    test_doorbell(&pool);
    htp_pool_free(&pool);
    // Dispatch cost with one worker per core (as htp-npu defaults to).
    long     cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt   = cpus < 1 ? 1 : cpus > N_THREADS ? N_THREADS : (uint32_t)cpus;
    CHECK_OR_RETURN(1, htp_pool_init(&pool, nt) == 0, "pool of %u threads", nt);
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
    CHECK(atomic_load(&j.hits[nt - 1]) == (uint32_t)n, "dispatch: slice %u ran %u times, want %d", nt - 1,
          atomic_load(&j.hits[nt - 1]), n);
    htp_pool_free(&pool);
    return test_exit_code("test-npu-pool");
}
