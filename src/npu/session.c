// session.c: sessions of the software NPU: map table over the VA window,
// scratch area, and the queue reader that executes batches from the request
// ring in the host's device-wide submission order. See session.h for the
// locking.

#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "contract/codebooks.h"
#include "proto/htp-ring.h"
#include "batch.h"
#include "npu-util.h"
#include "ops/iq-rows.h"
#include "platform/platform.h"
#include "vmem.h"

#define QUEUE_WAIT_US     100000  // bounded ring waits: re-check the stop flag this often
#define QUEUE_SPIN_US     50      // futex mode: spin this long before sleeping
#define QUEUE_SPIN_MAX_US 1000    // ... or, in a steady stream of batches, up to this (queue_spin_us)
#define VTCM_MAX          (1ull << 31)
#define VMEM_MAX          (1ull << 40)

_Atomic uint32_t htp_npu_device_running_session;

// The rings' waits are process-shared: the host is the other side.
static void ring_wait(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us) {
    htp_plat_wait(word, expected, timeout_us, 1);
}

static void ring_wake(_Atomic uint32_t * word) {
    htp_plat_wake(word, 1, 1);
}

const struct htp_ring_sys htp_npu_ring_sys = {htp_plat_now_us, ring_wait, ring_wake, htp_plat_relax};

struct htp_map {
    struct htp_map_entry e;
};

struct htp_npu_session {
    struct htp_npu_device * dev;
    uint32_t                id;
    uint32_t                virt_idx;
    uint32_t                n_threads;
    uint32_t                options;  // HTP_SESSION_* bits in force

    struct htp_lock  lock;  // map table and window
    struct htp_lock  busy;  // held while a batch runs, and by an unmap (one reader per session)
    struct htp_vmem  vmem;
    struct htp_map * maps;
    uint32_t         n_maps;
    uint32_t         cap_maps;
    _Atomic uint64_t maps_moved;  // bumped (under lock) by every map and unmap: batch.h's shortcut

    uint8_t * vtcm;
    size_t    vtcm_size;

    _Atomic uint32_t prof_mode;   // relaxed: a setting read at each batch start (the mode in force)
    _Atomic uint32_t pmu_packed;  // relaxed, likewise: mode 2's slots (htp_pmu_pack)

    // Queue (valid while running).
    int                      running;
    struct htp_plat_thread * reader;
    _Atomic uint32_t         stop;
    struct htp_queue_desc    q;
    uint8_t *                pinned;
    struct htp_ring *        req_ring;
    struct htp_ring *        rsp_ring;
    struct htp_batch         batch;
    struct htp_codebooks     codebooks;      // the host's, copied and checked at queue start ...
    struct htp_iq_codes      iq_codes;       // ... as codes for the row kernels (ops/iq-rows.h)
    int                      has_codebooks;  // ... if it sent any

    // Device scheduling, guarded by dev->exec_mutex.
    struct htp_npu_session * next_queue;   // link in dev->queues while the reader runs
    int                      taken;        // the reader holds a request waiting for its turn ...
    uint64_t                 taken_order;  // ... with this submission number
};

// ---------------------------------------------------------------------------
// Device
// ---------------------------------------------------------------------------

int htp_npu_device_init(struct htp_npu_device * dev, const struct htp_hw_info * hw) {
    memset(dev, 0, sizeof(*dev));
    dev->hw = *hw;
    int rc  = htp_pool_init(&dev->pool, hw->n_threads);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    htp_lock_init(&dev->exec_mutex);
    htp_cond_init(&dev->exec_cv);
    return HTP_STATUS_OK;
}

void htp_npu_device_free(struct htp_npu_device * dev) {
    htp_pool_free(&dev->pool);
}

// Submission number of the request session o runs next: the one its reader
// has taken, else the oldest in its ring. Returns 0 when it has none (or its
// ring is corrupt, which its own reader reports). Caller holds exec_mutex,
// which serialises this peek with o's pops.
static int next_order(const struct htp_npu_session * o, uint64_t * order) {
    if (o->taken) {
        *order = o->taken_order;
        return 1;
    }
    struct htp_opbatch_req req;
    if (htp_ring_peek(o->req_ring, o->q.depth, sizeof(req), &req) != HTP_RING_OK) {
        return 0;
    }
    *order = req.order;
    return 1;
}

// Whether s's taken request may run now: nothing runs, and no other session
// has a request with a smaller (order, session id). Caller holds exec_mutex.
static int is_my_turn(const struct htp_npu_session * s) {
    if (s->dev->exec_busy) {
        return 0;
    }
    for (const struct htp_npu_session * o = s->dev->queues; o != NULL; o = o->next_queue) {
        uint64_t order;
        if (o != s && next_order(o, &order) && (order < s->taken_order || (order == s->taken_order && o->id < s->id))) {
            return 0;
        }
    }
    return 1;
}

// Take the oldest request of s's ring and wait for its turn; on HTP_RING_OK
// the device is ours (exec_busy) until exec_leave. HTP_RING_EMPTY when the
// ring had nothing after all or the queue is stopping (the request is dropped:
// nobody will read its answer), HTP_RING_CORRUPT for impossible indices.
static int exec_enter(struct htp_npu_session * s, struct htp_opbatch_req * req) {
    struct htp_npu_device * dev = s->dev;
    htp_lock_acquire(&dev->exec_mutex);
    int rc = htp_ring_pop(s->req_ring, s->q.depth, sizeof(*req), req, &htp_npu_ring_sys);
    if (rc == HTP_RING_OK) {
        s->taken       = 1;
        s->taken_order = req->order;
        int mine;
        // Timed: the stop flag is not announced through exec_cv.
        while (!(mine = is_my_turn(s)) && !atomic_load_explicit(&s->stop, memory_order_relaxed)) {
            htp_cond_wait(&dev->exec_cv, &dev->exec_mutex, QUEUE_WAIT_US);
        }
        s->taken = 0;
        if (mine) {
            dev->exec_busy = 1;
        } else {
            rc = HTP_RING_EMPTY;
            htp_cond_broadcast(&dev->exec_cv);  // others may have waited for what we dropped
        }
    }
    htp_lock_release(&dev->exec_mutex);
    return rc;
}

static void exec_leave(struct htp_npu_device * dev) {
    htp_lock_acquire(&dev->exec_mutex);
    dev->exec_busy = 0;
    htp_cond_broadcast(&dev->exec_cv);
    htp_lock_release(&dev->exec_mutex);
}

static void queues_add(struct htp_npu_session * s) {
    htp_lock_acquire(&s->dev->exec_mutex);
    s->next_queue  = s->dev->queues;
    s->dev->queues = s;
    htp_lock_release(&s->dev->exec_mutex);
}

// After this nobody peeks s's ring, so its pinned buffer may go.
static void queues_remove(struct htp_npu_session * s) {
    htp_lock_acquire(&s->dev->exec_mutex);
    for (struct htp_npu_session ** p = &s->dev->queues; *p != NULL; p = &(*p)->next_queue) {
        if (*p == s) {
            *p = s->next_queue;
            break;
        }
    }
    s->next_queue = NULL;
    htp_cond_broadcast(&s->dev->exec_cv);  // a reader may have waited for s's requests
    htp_lock_release(&s->dev->exec_mutex);
}

// ---------------------------------------------------------------------------
// Open / close
// ---------------------------------------------------------------------------

int htp_npu_session_open(struct htp_npu_device * dev, const struct htp_npu_session_params * p,
                         struct htp_npu_session ** out) {
    uint64_t vtcm_size = p->vtcm_size ? p->vtcm_size : dev->hw.vtcm_size;
    uint64_t vmem_size = p->vmem_size ? p->vmem_size : dev->hw.vmem_size;
    if (p->id == 0 || vtcm_size > VTCM_MAX || vmem_size > VMEM_MAX || (p->options & ~HTP_SESSION_OPTIONS_ALL)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    struct htp_npu_session * s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return HTP_STATUS_NO_MEMORY;
    }
    s->dev       = dev;
    s->id        = p->id;
    s->virt_idx  = p->virt_idx;
    s->n_threads = p->n_threads == 0 || p->n_threads > dev->hw.n_threads ? dev->hw.n_threads : p->n_threads;
    // Without a matrix unit every op runs on the vector units.
    s->options = p->options | (dev->hw.n_hmx == 0 ? HTP_SESSION_MM_NO_HMX | HTP_SESSION_FA_NO_HMX : 0);
    htp_lock_init(&s->lock);
    htp_lock_init(&s->busy);
    atomic_init(&s->prof_mode, 0);
    atomic_init(&s->pmu_packed, 0);
    atomic_init(&s->stop, 0);

    int rc = htp_vmem_init(&s->vmem, vmem_size);
    if (rc != HTP_STATUS_OK) {
        goto fail;
    }
    s->vtcm_size = (size_t)vtcm_size;
    s->vtcm      = htp_plat_scratch_alloc(s->vtcm_size);
    if (s->vtcm == NULL) {
        rc = HTP_STATUS_NO_MEMORY;
        goto fail;
    }
    *out = s;
    return HTP_STATUS_OK;

fail:
    htp_vmem_free(&s->vmem);
    free(s);
    return rc;
}

void htp_npu_session_close(struct htp_npu_session * s) {
    htp_npu_session_queue_stop(s);
    for (uint32_t i = 0; i < s->n_maps; i++) {
        struct htp_map_entry * e = &s->maps[i].e;
        htp_vmem_unmap(&s->vmem, e->addr, e->size, e->flags);
    }
    free(s->maps);
    htp_vmem_free(&s->vmem);
    htp_plat_scratch_free(s->vtcm, s->vtcm_size);
    free(s);
}

uint32_t htp_npu_session_id(const struct htp_npu_session * s) {
    return s->id;
}

// ---------------------------------------------------------------------------
// Map table
// ---------------------------------------------------------------------------

// Index of key in the table, or -1. Caller holds s->lock.
static int64_t find_map(const struct htp_npu_session * s, int32_t key) {
    for (uint32_t i = 0; i < s->n_maps; i++) {
        if (s->maps[i].e.fd == key) {
            return i;
        }
    }
    return -1;
}

static int lookup_map(void * arg, int32_t fd, struct htp_map_entry * out) {
    struct htp_npu_session * s = arg;
    htp_lock_acquire(&s->lock);
    int64_t i = find_map(s, fd);
    if (i >= 0) {
        *out = s->maps[i].e;
    }
    htp_lock_release(&s->lock);
    return i >= 0 ? HTP_STATUS_OK : HTP_STATUS_INVAL_PARAMS;
}

int htp_npu_session_map(struct htp_npu_session * s, int32_t key, int fd, uint64_t size, uint32_t flags,
                        struct htp_vmem_info * info) {
    int rc = HTP_STATUS_OK;
    htp_lock_acquire(&s->lock);
    if ((flags & ~(uint32_t)(HTP_BUF_EXTENDED | HTP_BUF_PINNED | HTP_BUF_EAGER)) != 0 || find_map(s, key) >= 0) {
        rc = HTP_STATUS_INVAL_PARAMS;  // unknown flag, or the key is already mapped
        goto done;
    }
    if (s->n_maps == s->cap_maps) {
        uint32_t         cap = s->cap_maps ? s->cap_maps * 2 : 16;
        struct htp_map * m   = realloc(s->maps, cap * sizeof(*m));
        if (m == NULL) {
            rc = HTP_STATUS_NO_MEMORY;
            goto done;
        }
        s->maps     = m;
        s->cap_maps = cap;
    }
    uint8_t * addr = NULL;
    rc             = htp_vmem_map(&s->vmem, fd, size, flags, &addr);
    if (rc == HTP_STATUS_OK) {
        s->maps[s->n_maps++].e = (struct htp_map_entry){.fd = key, .flags = flags, .size = size, .addr = addr};
        // Relaxed: the reader reads it under the busy lock (batch.c says why that is enough).
        atomic_fetch_add_explicit(&s->maps_moved, 1, memory_order_relaxed);
    }
done:
    htp_vmem_get_info(&s->vmem, info);
    htp_lock_release(&s->lock);
    return rc;
}

int htp_npu_session_unmap(struct htp_npu_session * s, int32_t key, struct htp_vmem_info * info) {
    int rc = HTP_STATUS_OK;
    // Wait for a running batch to finish: it may use this buffer.
    htp_lock_acquire(&s->busy);
    htp_lock_acquire(&s->lock);
    int64_t i = find_map(s, key);
    if (i < 0 || (s->running && key == s->q.fd)) {
        rc = HTP_STATUS_INVAL_PARAMS;
        goto done;
    }
    struct htp_map_entry e = s->maps[i].e;
    rc                     = htp_vmem_unmap(&s->vmem, e.addr, e.size, e.flags);
    if (rc == HTP_STATUS_OK) {
        s->maps[i] = s->maps[--s->n_maps];
        // Relaxed: we hold busy, so no batch is being checked or run now.
        atomic_fetch_add_explicit(&s->maps_moved, 1, memory_order_relaxed);
    }
done:
    htp_vmem_get_info(&s->vmem, info);
    htp_lock_release(&s->lock);
    htp_lock_release(&s->busy);
    return rc;
}

void htp_npu_session_vmem_info(struct htp_npu_session * s, struct htp_vmem_info * info) {
    htp_lock_acquire(&s->lock);
    htp_vmem_get_info(&s->vmem, info);
    htp_lock_release(&s->lock);
}

int htp_npu_session_set_profiler(struct htp_npu_session * s, uint32_t mode, const uint32_t * events, uint32_t n_events,
                                 struct htp_pmu_info * info) {
    memset(info, 0, sizeof(*info));
    if (mode > 3 || (n_events != 0 && n_events != HTP_PMU_SLOTS)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    htp_pmu_choose(mode, events, n_events, info);
    atomic_store_explicit(&s->pmu_packed, htp_pmu_pack(info->counter), memory_order_relaxed);
    atomic_store_explicit(&s->prof_mode, info->mode, memory_order_relaxed);
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// Queue
// ---------------------------------------------------------------------------

// [off, off + len) lies in [0, limit), without overflow.
static int range_ok(uint64_t off, uint64_t len, uint64_t limit) {
    return off <= limit && len <= limit - off;
}

static int overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) {
    return a < b + blen && b < a + alen;
}

int htp_queue_desc_check(const struct htp_queue_desc * q, uint64_t pinned_size) {
    if (pinned_size < HTP_PAGE_SIZE) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    uint64_t usable = pinned_size - HTP_PAGE_SIZE;  // the guard page is not usable
    uint32_t d      = q->depth;
    if (d == 0 || d > HTP_QUEUE_MAX_DEPTH || (d & (d - 1)) != 0 || q->poll > 1) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Rings hold atomics and cache-line separated indices: 64-byte aligned.
    // Slots hold 8-byte fields: 8-byte aligned, and a slot must at least hold
    // an empty batch's buffer table entry.
    if (q->req_ring_off % 64 != 0 || q->rsp_ring_off % 64 != 0 || q->slots_off % 8 != 0 || q->slot_size % 8 != 0 ||
        q->slot_size < sizeof(struct htp_buf_desc)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    uint64_t req_len = htp_ring_sizeof(d, sizeof(struct htp_opbatch_req));
    uint64_t rsp_len = htp_ring_sizeof(d, sizeof(struct htp_opbatch_rsp));
    uint64_t slots_len;
    if (__builtin_mul_overflow(q->slot_size, (uint64_t)d, &slots_len)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!range_ok(q->req_ring_off, req_len, usable) || !range_ok(q->rsp_ring_off, rsp_len, usable) ||
        !range_ok(q->slots_off, slots_len, usable)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (overlap(q->req_ring_off, req_len, q->rsp_ring_off, rsp_len) ||
        overlap(q->req_ring_off, req_len, q->slots_off, slots_len) ||
        overlap(q->rsp_ring_off, rsp_len, q->slots_off, slots_len)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (q->codebooks_off != 0) {
        const uint64_t cb_len = sizeof(struct htp_codebooks);
        if (q->codebooks_off % 8 != 0 || !range_ok(q->codebooks_off, cb_len, usable) ||
            overlap(q->codebooks_off, cb_len, q->req_ring_off, req_len) ||
            overlap(q->codebooks_off, cb_len, q->rsp_ring_off, rsp_len) ||
            overlap(q->codebooks_off, cb_len, q->slots_off, slots_len)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    return HTP_STATUS_OK;
}

// Push a response, waiting (bounded, stop-aware) while the host has not
// consumed earlier ones. Returns 0 when pushed, -1 when the queue must stop.
static int push_rsp(struct htp_npu_session * s, const struct htp_opbatch_rsp * rsp) {
    uint32_t d = s->q.depth;
    for (;;) {
        // Relaxed: our own index. Acquire: the host is done with older entries.
        uint32_t head = atomic_load_explicit(&s->rsp_ring->head, memory_order_relaxed);
        uint32_t tail = atomic_load_explicit(&s->rsp_ring->tail, memory_order_acquire);
        if (head - tail > d) {
            htp_npu_log("session %u: response ring indices corrupt (head %u tail %u); stopping its queue", s->id, head,
                        tail);
            return -1;
        }
        if (htp_ring_push(s->rsp_ring, d, sizeof(*rsp), rsp, &htp_npu_ring_sys) == HTP_RING_OK) {
            return 0;
        }
        // Relaxed: the stop flag only needs to be seen eventually.
        if (atomic_load_explicit(&s->stop, memory_order_relaxed)) {
            return -1;
        }
        htp_ring_wait_nonfull(s->rsp_ring, d, QUEUE_WAIT_US, QUEUE_SPIN_US, (int)s->q.poll, &htp_npu_ring_sys);
    }
}

// How long the reader spins for the next request before it sleeps. A
// decode sends one batch a token, and the host's work between tokens (the
// sampler, the next graph) is tens to hundreds of microseconds: longer than
// QUEUE_SPIN_US, so the reader slept through every gap and each token paid a
// futex wake-up (50-150 us on this project's VMs; the tiny preset decoded at
// 0.44x ggml-cpu). So the reader learns the gap, a moving average of the
// time from its response to the next request, and spins twice that when it
// is short enough to be worth a core (<= QUEUE_SPIN_MAX_US / 2); a sparse
// stream (a long gap counts as one of QUEUE_SPIN_MAX_US) keeps QUEUE_SPIN_US.
struct queue_gap {
    uint64_t last_rsp_us;  // when the last response was pushed; 0 before the first
    uint32_t avg_us;       // moving average of the gaps (weight 1/4 per new gap)
};

static void queue_gap_request(struct queue_gap * g) {
    if (g->last_rsp_us == 0) {
        return;
    }
    uint64_t gap = htp_plat_now_us() - g->last_rsp_us;
    gap          = gap < QUEUE_SPIN_MAX_US ? gap : QUEUE_SPIN_MAX_US;
    g->avg_us    = (uint32_t)((3 * (uint64_t)g->avg_us + gap) / 4);
}

static int64_t queue_spin_us(const struct queue_gap * g) {
    const int64_t want = 2 * (int64_t)g->avg_us;
    return want > QUEUE_SPIN_US && want <= QUEUE_SPIN_MAX_US ? want : QUEUE_SPIN_US;
}

static void queue_reader(void * arg) {
    struct htp_npu_session * s = arg;
    // This thread's counters (mode 2): it is the pool's worker 0 while its batches run.
    struct htp_pmu_thread caller_pmu = {0};

    struct htp_batch_env env = {
        .lookup     = lookup_map,
        .lookup_arg = s,
        .slots      = s->pinned + s->q.slots_off,
        .depth      = s->q.depth,
        .slot_size  = s->q.slot_size,
        .n_threads  = s->n_threads,
        .vtcm       = s->vtcm,
        .vtcm_size  = s->vtcm_size,
        .options    = s->options,
        .codebooks  = s->has_codebooks ? &s->codebooks : NULL,
        .iq_codes   = s->has_codebooks ? &s->iq_codes : NULL,
        .pool       = &s->dev->pool,
        .cancel     = &s->stop,
        .pmu_caller = &caller_pmu,
        .maps_moved = &s->maps_moved,
    };

    struct queue_gap gap = {0, QUEUE_SPIN_MAX_US};
    if (s->dev->pool.pinned) {
        htp_plat_thread_pin(0);  // the pool's worker 0 when it runs a batch (pool.h)
    }
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        int rc =
            htp_ring_wait_nonempty(s->req_ring, QUEUE_WAIT_US, queue_spin_us(&gap), (int)s->q.poll, &htp_npu_ring_sys);
        if (rc != HTP_RING_OK) {
            continue;
        }
        queue_gap_request(&gap);
        struct htp_opbatch_req req;
        struct htp_opbatch_rsp rsp;
        env.prof_mode  = atomic_load_explicit(&s->prof_mode, memory_order_relaxed);
        env.pmu_packed = atomic_load_explicit(&s->pmu_packed, memory_order_relaxed);
        rc             = exec_enter(s, &req);
        if (rc == HTP_RING_EMPTY) {
            continue;
        }
        if (rc == HTP_RING_CORRUPT) {
            htp_npu_log("session %u: request ring indices corrupt; stopping its queue", s->id);
            memset(&rsp, 0, sizeof(rsp));
            rsp.status = HTP_STATUS_INVAL_PARAMS;
            push_rsp(s, &rsp);
            break;
        }

        htp_pool_prewake(&s->dev->pool);  // the helpers' wake-up overlaps validation
        htp_lock_acquire(&s->busy);
        // Relaxed: read by the fault handler on this or a worker thread of
        // this process; it only names the session in a message.
        atomic_store_explicit(&htp_npu_device_running_session, s->id, memory_order_relaxed);
        htp_batch_process(&s->batch, &env, &req, &rsp);
        atomic_store_explicit(&htp_npu_device_running_session, 0, memory_order_relaxed);
        htp_lock_release(&s->busy);
        // Relaxed: the head the reader has seen (a newer one only rings at once).
        htp_pool_park(&s->dev->pool, &s->req_ring->head,
                      atomic_load_explicit(&s->req_ring->head, memory_order_relaxed));
        exec_leave(s->dev);

        if (rsp.status != HTP_STATUS_OK) {
            HTP_NPU_VERBOSE("session %u: batch %llu: status %u after %u of %u ops", s->id, (unsigned long long)rsp.seq,
                            rsp.status, rsp.n_done, rsp.n_ops);
        }
        if (push_rsp(s, &rsp) != 0) {
            break;
        }
        gap.last_rsp_us = htp_plat_now_us();
    }
    htp_pool_forget_doorbell(&s->dev->pool, &s->req_ring->head);  // before the ring's memory goes
    htp_pmu_thread_close(&caller_pmu);
    queues_remove(s);
}

int htp_npu_session_queue_start(struct htp_npu_session * s, const struct htp_queue_desc * q) {
    if (s->running) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    struct htp_map_entry e;
    if (lookup_map(s, q->fd, &e) != HTP_STATUS_OK || !(e.flags & HTP_BUF_PINNED) ||
        htp_queue_desc_check(q, e.size) != HTP_STATUS_OK) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    s->has_codebooks = 0;
    if (q->codebooks_off != 0) {
        // A private copy: the host could rewrite shared memory under a kernel.
        memcpy(&s->codebooks, e.addr + q->codebooks_off, sizeof(s->codebooks));
        if (!htp_codebooks_ok(&s->codebooks)) {
            htp_npu_log("session %u: the IQ codebooks the host sent are malformed; queue not started", s->id);
            return HTP_STATUS_INVAL_PARAMS;
        }
        htp_iq_codes_build(&s->codebooks, &s->iq_codes);
        s->has_codebooks = 1;
    }
    int rc = htp_batch_init(&s->batch);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    s->q        = *q;
    s->pinned   = e.addr;
    s->req_ring = (struct htp_ring *)(void *)(e.addr + q->req_ring_off);
    s->rsp_ring = (struct htp_ring *)(void *)(e.addr + q->rsp_ring_off);
    atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
    // The fields above are published to the reader by its start, and to
    // readers of other sessions by exec_mutex.
    queues_add(s);
    if (htp_plat_thread_start(queue_reader, s, &s->reader) != 0) {
        queues_remove(s);
        htp_batch_free(&s->batch);
        return HTP_STATUS_NO_MEMORY;
    }
    htp_lock_acquire(&s->lock);
    s->running = 1;  // under the lock: unmap reads it
    htp_lock_release(&s->lock);
    return HTP_STATUS_OK;
}

int htp_npu_session_queue_stop(struct htp_npu_session * s) {
    if (!s->running) {
        return HTP_STATUS_OK;
    }
    // Relaxed: the reader polls it at least every QUEUE_WAIT_US, and fence
    // waits every few ms; the join below is the synchronisation.
    atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
    // Wake a reader sleeping on either ring's futex.
    htp_npu_ring_sys.wake(&s->req_ring->head);
    htp_npu_ring_sys.wake(&s->rsp_ring->tail);
    htp_lock_acquire(&s->dev->exec_mutex);  // and one waiting for its turn
    htp_cond_broadcast(&s->dev->exec_cv);
    htp_lock_release(&s->dev->exec_mutex);
    htp_plat_thread_join(s->reader);
    htp_lock_acquire(&s->lock);
    s->running = 0;
    htp_lock_release(&s->lock);
    htp_batch_free(&s->batch);
    return HTP_STATUS_OK;
}
