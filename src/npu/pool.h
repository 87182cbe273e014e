// pool.h: the NPU's worker pool. n workers (the caller counts as worker 0);
// htp_pool_run() hands one job to all of them and returns when all of its
// slices are done. It runs once per op, so a dispatch costs a
// generation-counter bump and, for workers that have gone to sleep, one futex
// wake. Slices are claimed, not assigned: the caller runs the slices of
// workers that have not come for them by the time it has done its own.
//
// Waits spin for a time before sleeping: a futex wake-up costs 50-150 us on
// this project's virtual machines (htp-bench model's trace showed the first
// ops of every token waiting on chains of them), while ops of a batch follow
// each other within microseconds. htp_pool_prewake() lets the session start
// the helpers' spin when a batch arrives, before it validates the batch.
//
// When the pool has a thread for every processor (this project's 2-core
// machines), each thread is pinned to its own: worker i to processor i, and
// the session threads that call htp_pool_run to processor 0. Unpinned, the
// kernel's wake-up placement put a helper woken by the caller on the caller's
// processor, and its migration-cost rule kept it there: the two threads of
// a decode matmul shared one core (2048 x 2048 Q4_0 read at 21 GB/s, pinned
// at 35, htp-bench matmul --cache cold). With more processors than threads
// the scheduler places them.
//
// One pool per process, shared by all sessions; htp_pool_run() must not be
// called concurrently (the session layer runs one batch at a time).

#ifndef HTP_POOL_H
#define HTP_POOL_H

#include <stdatomic.h>
#include <stdint.h>

#include "ops/kernel-iface.h"

struct htp_plat_thread;

struct htp_pool {
    uint32_t                  n_threads;  // workers including the caller
    struct htp_plat_thread ** threads;    // n_threads - 1 helper threads

    // Published by htp_pool_run before the generation bump (release).
    htp_job_fn job;
    void *     arg;
    uint32_t   nth;  // workers that take part in this job (the rest skip it)

    _Atomic uint32_t generation;  // bumped once per job; workers futex-wait on it
    _Atomic uint64_t unclaimed;   // (generation << 32) | bit i set while slice i (>= 1) is unclaimed
    _Atomic uint32_t running;     // helpers between seeing a job and finishing their claimed slices
    _Atomic uint32_t caller_sleeping;
    _Atomic uint32_t stop;
    _Atomic uint32_t sleepers;   // helpers inside (or about to enter) futex_wait on generation
    _Atomic uint32_t wake_sent;  // a wake has gone to them since the last announced its sleep
    _Atomic uint32_t parked;     // set by htp_pool_park: idle helpers sleep at once
    // The doorbell (htp_pool_park): a process-shared word that parked
    // helpers sleep on as well as generation, while it holds doorbell_seen;
    // or NULL.
    _Atomic(_Atomic uint32_t *) doorbell;
    _Atomic uint32_t            doorbell_seen;
    _Atomic uint32_t            bell_wakes;    // waits the doorbell ended (test-npu-pool reads it)
    int                         pinned;        // each thread on its own processor (see above)
    _Atomic uint32_t            idle_spin_us;  // a helper with no job spins this long before sleeping (tests turn it)
    uint32_t                    join_spin_us;  // the caller waiting for helpers spins this long before sleeping
    uint32_t                    bell_spin_us;  // a helper the doorbell woke spins this long for the batch's first job

    // slice_worker[i]: the worker running slice i of the current job (0: the
    // caller). Written by that thread before it calls the job, so the job may
    // read its own entry (htp_pool_slice_worker); others read it after
    // htp_pool_run returns. Profiles use it to charge a slice to the thread
    // that ran it.
    uint32_t slice_worker[32];
};

// Start n_threads - 1 helper threads (n_threads >= 1). Returns HTP_STATUS_OK or
// HTP_STATUS_NO_MEMORY.
int htp_pool_init(struct htp_pool * pool, uint32_t n_threads);

// Stop and join the helpers.
void htp_pool_free(struct htp_pool * pool);

// Wake sleeping helpers so that they spin, ready for the jobs of a batch
// about to run. Cheap when none sleeps. (A generation with no slices: the
// jobs that follow see the wake as sent, and send none while it lands.)
void htp_pool_prewake(struct htp_pool * pool);

// The batch is over: idle helpers stop spinning and sleep now, leaving the
// cores to the host's work between batches (a spinning helper there held one
// of this machine's two cores while the host built the next token). The next
// htp_pool_prewake or htp_pool_run ends it.
//
// doorbell (or NULL), seen: a process-shared word that changes from seen, and
// whose sleepers are all woken, when the next batch arrives: the request
// ring's head, which the host bumps and wakes when it pushes. Parked helpers
// sleep on it too (where the platform can wait on two words), so the host's
// one wake starts them along with the session thread; otherwise the session
// thread, once woken, wakes them itself (htp_pool_prewake), a second wake-up
// in series before the batch's first op (18-27 us of the session thread's
// own time on this project's 2-core VMs). The pool only hands the word to
// the kernel's wait, never reads it: a session that ends forgets its word
// before its memory goes, and a stale word costs at most an early wake.
void htp_pool_park(struct htp_pool * pool, _Atomic uint32_t * doorbell, uint32_t seen);

// The word's owner is going: helpers stop waiting on it (if it is the doorbell).
void htp_pool_forget_doorbell(struct htp_pool * pool, _Atomic uint32_t * doorbell);

// Run job(arg, ith, nth) once for each ith = 0 .. nth-1 (nth clamped to
// [1, n_threads]): slice 0 on the calling thread, each other slice on the
// thread that claims it first, the caller included. So slices must not wait
// for each other. Returns when all have returned.
void htp_pool_run(struct htp_pool * pool, uint32_t nth, htp_job_fn job, void * arg);

// From inside a job: the worker running slice ith (0: the calling thread).
static inline uint32_t htp_pool_slice_worker(const struct htp_pool * pool, uint32_t ith) {
    return pool != NULL && ith < 32 ? pool->slice_worker[ith] : 0;
}

#endif  // HTP_POOL_H
