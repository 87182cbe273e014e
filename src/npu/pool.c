// pool.c: worker pool with a generation counter. A job is published by
// storing job/arg/nth, then the word of unclaimed slices (tagged with the
// job's generation), then bumping `generation`. Idle workers spin for
// idle_spin_us (the next op usually follows within microseconds), or not at
// all once htp_pool_park said the batch is over, then sleep on the
// generation word with a futex (parked, also on the doorbell, a word the
// host's next request changes: see htp_pool_park). A worker that sees a new
// generation enters `running`, claims slices (its own first, then any left)
// and runs them, then leaves `running`. The caller runs slice 0, then claims
// and runs whatever slices no worker has claimed yet, and waits for `running`
// to reach zero (spinning join_spin_us, then on a futex). So a worker still
// waking from its futex (50-150 us on this project's VMs) does not hold the
// op up: the caller does its share, and the worker finds nothing to claim.

#include "pool.h"

#include <stdlib.h>

#include "platform/platform.h"

// A spin budget: pause instructions, the clock read every 64 of them.
struct spin {
    uint64_t start;
    uint32_t n;
};

static void spin_start(struct spin * sp) {
    sp->start = htp_plat_now_us();
    sp->n     = 0;
}

// One pause; 0 once budget_us has passed since spin_start.
static int spin_once(struct spin * sp, uint32_t budget_us) {
    htp_plat_relax();
    if (++sp->n % 64 != 0) {
        return 1;
    }
    return htp_plat_now_us() - sp->start < budget_us;
}

// Private waits: the pool never leaves this process.
static void futex_wait(_Atomic uint32_t * addr, uint32_t val) {
    htp_plat_wait(addr, val, -1, 0);
}

static void futex_wake_all(_Atomic uint32_t * addr) {
    htp_plat_wake(addr, UINT32_MAX, 0);
}

// Claim a slice of job gen: `prefer` if it is unclaimed, else the lowest
// unclaimed one. 0 when the job has none left (slice 0 is never in the word:
// the caller runs it) or gen is no longer the current job. Sequentially
// consistent: see htp_pool_run's wait for why, and it also acquires the
// job/arg/nth published before the word.
static uint32_t pool_claim(struct htp_pool * pool, uint32_t gen, uint32_t prefer) {
    uint64_t v = atomic_load(&pool->unclaimed);
    for (;;) {
        const uint32_t mask = (uint32_t)v;
        if ((uint32_t)(v >> 32) != gen || mask == 0) {
            return 0;
        }
        const uint32_t i = prefer < 32 && (mask >> prefer & 1u) ? prefer : (uint32_t)__builtin_ctz(mask);
        if (atomic_compare_exchange_weak(&pool->unclaimed, &v, v & ~((uint64_t)1 << i))) {
            return i;
        }
    }
}

struct worker_arg {
    struct htp_pool * pool;
    uint32_t          ith;
    uint32_t          seen;  // generation when the thread was created
};

static void worker_main(void * p) {
    struct worker_arg * wa   = p;
    struct htp_pool *   pool = wa->pool;
    uint32_t            ith  = wa->ith;
    // Not a load of generation here: a job may already have been published
    // before this thread got to run, and it must not be skipped.
    uint32_t seen = wa->seen;
    free(wa);
    if (pool->pinned) {
        htp_plat_thread_pin(ith);  // a hint: unpinned, the pool still runs
    }

    // The doorbell and value of this thread's last wait that ended on it
    // (htp_pool_park): ringing again for the same ones means the batch it
    // announced is already here or never comes, so a helper whose spin ran
    // out waits on generation alone rather than loop on a changed word.
    const _Atomic uint32_t * rung_bell = NULL;
    uint32_t                 rung_seen = 0;
    for (;;) {
        uint32_t    gen;
        struct spin sp;
        int         rung = 0;  // woken by the doorbell: spin for the batch, parked or not
        spin_start(&sp);
        // Acquire: pairs with the release bump in htp_pool_run and makes
        // job/arg/nth (and stop) written before it visible.
        while ((gen = atomic_load_explicit(&pool->generation, memory_order_acquire)) == seen) {
            const uint32_t budget =
                rung ? pool->bell_spin_us : atomic_load_explicit(&pool->idle_spin_us, memory_order_relaxed);
            const int parked = atomic_load_explicit(&pool->parked, memory_order_relaxed);
            if (!spin_once(&sp, budget) || (!rung && parked)) {
                // Acquire: the value stored before it (a mismatched pair
                // only ends a wait early, or leaves it to generation's wake).
                _Atomic uint32_t * bell = parked ? atomic_load_explicit(&pool->doorbell, memory_order_acquire) : NULL;
                const uint32_t     bell_seen = atomic_load_explicit(&pool->doorbell_seen, memory_order_relaxed);
                if (bell == rung_bell && bell_seen == rung_seen) {
                    bell = NULL;
                }
                // Announce the sleep, then re-check (Dekker with htp_pool_run's
                // bump followed by its read of sleepers): one side sees the other.
                // Both seq_cst (no standalone fence: ThreadSanitizer models these).
                atomic_store_explicit(&pool->wake_sent, 0, memory_order_seq_cst);
                atomic_fetch_add_explicit(&pool->sleepers, 1, memory_order_seq_cst);
                rung = 0;
                if (atomic_load_explicit(&pool->generation, memory_order_seq_cst) == seen) {
                    if (bell && htp_plat_wait_either(&pool->generation, seen, bell, bell_seen) == 0) {
                        rung      = 1;  // (or a job: then the loop ends)
                        rung_bell = bell;
                        rung_seen = bell_seen;
                        atomic_fetch_add_explicit(&pool->bell_wakes, 1, memory_order_relaxed);
                    } else {
                        futex_wait(&pool->generation, seen);
                    }
                }
                atomic_fetch_sub_explicit(&pool->sleepers, 1, memory_order_relaxed);
                spin_start(&sp);  // woken (a job, htp_pool_prewake, the doorbell): spin again
            }
        }
        seen = gen;
        if (atomic_load_explicit(&pool->stop, memory_order_relaxed)) {
            break;
        }
        // Enter running before claiming, so that the caller, once it has seen
        // every slice claimed, also sees this worker running.
        atomic_fetch_add(&pool->running, 1);
        uint32_t i;
        while ((i = pool_claim(pool, gen, ith)) != 0) {
            // Claimed: the caller waits for us before it publishes another job.
            pool->slice_worker[i] = ith;
            pool->job(pool->arg, i, pool->nth);
        }
        // Our slices' writes happen-before the caller's load of running == 0.
        if (atomic_fetch_sub(&pool->running, 1) == 1) {
            // Dekker with the caller's store of caller_sleeping and re-read of running.
            if (atomic_load(&pool->caller_sleeping)) {
                futex_wake_all(&pool->running);
            }
        }
    }
}

int htp_pool_init(struct htp_pool * pool, uint32_t n_threads) {
    if (n_threads == 0) {
        n_threads = 1;
    }
    pool->n_threads = n_threads;
    pool->job       = NULL;
    pool->arg       = NULL;
    pool->nth       = 0;
    // Covers the gaps between the ops of a batch (and a helper's wake-up
    // latency) without keeping idle cores busy for long between batches.
    atomic_init(&pool->idle_spin_us, 50);
    pool->join_spin_us = 1000;
    // From the host's wake to the session thread's first job: its own
    // wake-up, reading and checking the batch (tens of us here, more after
    // a long idle).
    pool->bell_spin_us = 500;
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->unclaimed, 0);
    atomic_init(&pool->running, 0);
    atomic_init(&pool->caller_sleeping, 0);
    atomic_init(&pool->stop, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->wake_sent, 0);
    atomic_init(&pool->parked, 0);
    atomic_init(&pool->doorbell, NULL);
    atomic_init(&pool->doorbell_seen, 0);
    atomic_init(&pool->bell_wakes, 0);
    pool->threads = NULL;
    for (uint32_t i = 0; i < 32; i++) {
        pool->slice_worker[i] = 0;
    }
    pool->pinned = n_threads > 1 && n_threads >= htp_plat_cpu_count();
    if (n_threads == 1) {
        return HTP_STATUS_OK;
    }
    pool->threads = calloc(n_threads - 1, sizeof(*pool->threads));
    if (pool->threads == NULL) {
        return HTP_STATUS_NO_MEMORY;
    }
    for (uint32_t i = 1; i < n_threads; i++) {
        struct worker_arg * wa = malloc(sizeof(*wa));
        if (wa != NULL) {
            wa->pool = pool;
            wa->ith  = i;
            wa->seen = 0;  // no job runs before init returns
        }
        if (wa == NULL || htp_plat_thread_start(worker_main, wa, &pool->threads[i - 1]) != 0) {
            free(wa);
            pool->n_threads = i;  // free() joins the ones started
            htp_pool_free(pool);
            return HTP_STATUS_NO_MEMORY;
        }
    }
    return HTP_STATUS_OK;
}

void htp_pool_free(struct htp_pool * pool) {
    if (pool->threads != NULL) {
        atomic_store_explicit(&pool->stop, 1, memory_order_relaxed);
        // Release: publishes stop with the new generation.
        atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
        futex_wake_all(&pool->generation);
        for (uint32_t i = 1; i < pool->n_threads; i++) {
            htp_plat_thread_join(pool->threads[i - 1]);
        }
        free(pool->threads);
        pool->threads = NULL;
    }
}

void htp_pool_park(struct htp_pool * pool, _Atomic uint32_t * doorbell, uint32_t seen) {
    atomic_store_explicit(&pool->doorbell_seen, seen, memory_order_relaxed);
    atomic_store_explicit(&pool->doorbell, doorbell, memory_order_release);
    atomic_store_explicit(&pool->parked, 1, memory_order_relaxed);
}

// After a job's generation bump: wake the helpers asleep on generation, if
// any, unless a wake has gone to them since the last one announced its
// sleep. A woken helper counts as a sleeper until it runs (tens of us on
// this project's VMs), and each op of the batch in the meantime paid a futex
// syscall that found nobody to wake: 4.5 a token of the tiny preset's
// decode. A helper clears wake_sent before it raises sleepers (both
// seq_cst), so a wake skipped here had been sent after its clear, after a
// bump: either it woke the helper, or the helper had not slept yet and its
// futex_wait finds generation moved.
static void wake_sleepers_after_bump(struct htp_pool * pool) {
    if (atomic_load_explicit(&pool->sleepers, memory_order_seq_cst) != 0 &&
        !atomic_exchange_explicit(&pool->wake_sent, 1, memory_order_seq_cst)) {
        futex_wake_all(&pool->generation);
    }
}

void htp_pool_forget_doorbell(struct htp_pool * pool, _Atomic uint32_t * doorbell) {
    atomic_compare_exchange_strong(&pool->doorbell, &doorbell, NULL);
}

void htp_pool_prewake(struct htp_pool * pool) {
    if (pool->threads == NULL) {
        return;
    }
    atomic_store_explicit(&pool->parked, 0, memory_order_relaxed);
    // A helper that raises sleepers after this read has not slept yet: its
    // spin runs out first, and the batch's first job wakes it.
    if (atomic_load_explicit(&pool->sleepers, memory_order_seq_cst) != 0) {
        // A generation with no slices (unclaimed still names the last job's):
        // woken helpers find nothing to claim and spin. Bumped, so that the
        // wake counts as wake_sleepers_after_bump's and the batch's jobs
        // send no more while the helpers get going.
        atomic_fetch_add_explicit(&pool->generation, 1, memory_order_seq_cst);
        wake_sleepers_after_bump(pool);
    }
}

void htp_pool_run(struct htp_pool * pool, uint32_t nth, htp_job_fn job, void * arg) {
    if (nth == 0) {
        nth = 1;
    }
    if (nth > pool->n_threads) {
        nth = pool->n_threads;
    }
    if (pool->n_threads == 1 || nth == 1) {
        pool->slice_worker[0] = 0;
        job(arg, 0, nth);
        return;
    }
    atomic_store_explicit(&pool->parked, 0, memory_order_relaxed);
    pool->job          = job;
    pool->arg          = arg;
    pool->nth          = nth;
    const uint32_t gen = atomic_load_explicit(&pool->generation, memory_order_relaxed) + 1;  // only we bump it
    // Slices 1 .. nth-1 (nth <= HTP_MAX_NTHREADS < 32), tagged with the job's
    // generation so that a worker late for an earlier job cannot claim them.
    const uint32_t mask = ((1u << nth) - 1) & ~1u;
    atomic_store(&pool->unclaimed, (uint64_t)gen << 32 | mask);
    // Publishes job, arg and nth to the workers' acquire load (release), and
    // is ordered before the read of sleepers (seq_cst both; see worker_main):
    // only pay for the wake syscall when a worker sleeps.
    atomic_store_explicit(&pool->generation, gen, memory_order_seq_cst);
    wake_sleepers_after_bump(pool);

    pool->slice_worker[0] = 0;
    job(arg, 0, nth);
    uint32_t i;
    while ((i = pool_claim(pool, gen, 0)) != 0) {
        pool->slice_worker[i] = 0;
        job(arg, i, nth);  // no worker has come for it yet
    }

    // Every slice is claimed now. A worker enters running before its claim
    // and leaves after its slices, and all of these are sequentially
    // consistent: so running == 0 here means every claimed slice is done.
    struct spin sp;
    uint32_t    left;
    spin_start(&sp);
    while ((left = atomic_load(&pool->running)) != 0) {
        if (spin_once(&sp, pool->join_spin_us)) {
            continue;
        }
        atomic_store(&pool->caller_sleeping, 1);  // Dekker with the last worker's decrement
        if (atomic_load(&pool->running) == left) {
            futex_wait(&pool->running, left);
        }
        atomic_store(&pool->caller_sleeping, 0);
    }
}
