// session.c: sessions on an NPU: open / close, batching, flushing, responses,
// buffers and fences (see session.h).
//
// The pinned buffer. One memfd per session, mapped into the session with
// HTP_BUF_PINNED (and into other sessions as an ordinary clone when they wait
// on or signal its fences). Offsets in bytes; the request ring holds struct
// htp_opbatch_req (40 bytes), the response ring struct htp_opbatch_rsp (48):
//
//   0                  request ring   HTP_RING_HDR_SIZE + depth * 40, rounded up to 64
//   rsp_off            response ring  HTP_RING_HDR_SIZE + depth * 48, rounded up to 64
//   slots_off          op-queue slots depth * slot_size; slots_off is 4096-aligned,
//                                     slot_size = htp_slot_size(batch_ops, n_threads,
//                                     n_traces) rounded up to 64
//   fences_off         fence slots    n_fences * HTP_FENCE_SLOT_SIZE (64-aligned)
//   fences_off + ...   (up to the 4 KiB rounding, then the guard page)
//
// The NPU learns these offsets from HTP_CTL_QUEUE_START (struct
// htp_queue_desc). The rings carry the seq of each batch; slot k is used by
// batches k + 1, k + 1 + depth, ... and is rewritten only after its answer is
// popped. Changing this layout needs no protocol change (it travels in the
// queue descriptor), but the NPU must validate every offset it is given.

#include "session.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "opqueue.h"
#include "profile.h"
#include "status.h"
#include "wait.h"

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

#define HTP_SESSION_WAIT_SLICE_US 20000  // response waits are cut into slices this long to check the NPU

struct htp_session {
    struct htp_session_params params;
    struct htp_npu *          npu;
    uint32_t                  id;
    bool                      opened;         // SESSION_OPEN succeeded
    bool                      queue_started;  // QUEUE_START succeeded
    uint32_t                  n_threads;
    uint32_t                  n_traces;
    uint64_t                  vmem_size;
    uint64_t                  max_vmem;

    struct htp_map_target target;  // what buffers know of this session (set at SESSION_OPEN)

    struct htp_buffer * pinned;
    uint64_t            rsp_off, slots_off, slot_size, fences_off;

    struct htp_opqueue    queue;
    struct htp_opbatch    batch;
    struct htp_fence_pool fences;
    uint32_t              fence_seq;

    int  last_error;
    char error[192];

    bool                   have_rsp;
    struct htp_opbatch_rsp last_rsp;
    struct htp_prof_desc * last_prof;  // [batch_ops]
    uint32_t               n_last_prof;

    // Multi-NPU group (htp_session_group_init): a leader owns the other
    // members' sessions; every batch goes to all of them, headed by
    // MDEV_GROUP, whose fence slots (one per member, the leader's first) are
    // group_slots in the leader's pinned buffer.
    struct htp_session *    members[HTP_SESSION_MAX_MEMBERS - 1];
    uint32_t                n_members;  // other members (0: not a group)
    struct htp_fence_slot * group_slots;
};

// GGML_HTP_MMAP_STACKING: 1 (default) or 0, read once. Only measurements turn
// stacking off (htp-bench vmem shows what it buys).
static bool env_mmap_stacking(void) {
    static _Atomic int cached = -1;  // -1 unread, else 0 / 1
    // Relaxed: every thread computes the same value from the same environment.
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        const char * e = getenv("GGML_HTP_MMAP_STACKING");
        v              = 1;
        if (e && strcmp(e, "0") == 0) {
            v = 0;
        } else if (e && e[0] && strcmp(e, "1") != 0) {
            HTP_LOG_WARN("ggml-htp: GGML_HTP_MMAP_STACKING='%s' is not 0 or 1, using 1\n", e);
        }
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v != 0;
}

void htp_session_params_default(struct htp_session_params * p, uint32_t phys_idx, uint32_t virt_idx) {
    memset(p, 0, sizeof *p);
    p->phys_idx = phys_idx;
    p->virt_idx = virt_idx;
    if (virt_idx) {
        snprintf(p->name, sizeof p->name, "HTP%u:%u", phys_idx, virt_idx);
    } else {
        snprintf(p->name, sizeof p->name, "HTP%u", phys_idx);
    }
    p->batch_ops     = HTP_OP_DEFAULT_OPS;
    p->queue_depth   = HTP_QUEUE_DEPTH;
    p->n_traces      = 0;
    p->n_fences      = 512;
    p->mmap_stacking = env_mmap_stacking();
}

// --- errors ---

// Record the first error of the session (later ones are only logged) and
// return the recorded status.
static int record_error(struct htp_session * sess, int status, const char * fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int record_error(struct htp_session * sess, int status, const char * fmt, ...) {
    char    what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (sess->last_error == 0) {
        sess->last_error = status;
        snprintf(sess->error, sizeof sess->error, "%s: %s (%s)", sess->params.name, what, htp_status_str(status));
        HTP_LOG_ERROR("ggml-htp: %s\n", sess->error);
    } else {
        HTP_VERBOSE("ggml-htp: %s: %s (%s), after an earlier error\n", sess->params.name, what, htp_status_str(status));
    }
    return sess->last_error;
}

static int npu_died(struct htp_session * sess) {
    return record_error(sess, HTP_STATUS_NPU_DEAD, "NPU %u (pid %d) died: %s", sess->params.phys_idx,
                        (int)htp_npu_pid(sess->npu), htp_npu_death(sess->npu));
}

// A call after the first error: fail with it, saying so once per call site.
static int failed_before(const struct htp_session * sess, const char * call) {
    HTP_VERBOSE("ggml-htp: %s refused: %s\n", call, sess->error);
    return sess->last_error;
}

int htp_session_last_error(const struct htp_session * sess) {
    return sess->last_error;
}

const char * htp_session_error(const struct htp_session * sess) {
    return sess->error;
}

// One control request on this session; status of the answer or of the transport.
static int ctl(struct htp_session * sess, struct htp_ctl_req * req, struct htp_ctl_rsp * rsp) {
    req->session = sess->id;
    int rc       = htp_npu_call(sess->npu, req, -1, rsp);
    if (rc == HTP_STATUS_NPU_DEAD || rc == HTP_STATUS_PROTOCOL) {
        npu_died(sess);
        return rc;
    }
    return rc ? rc : (int)rsp->status;
}

// --- open / close ---

static int check_params(const struct htp_session_params * p) {
    if (p->batch_ops == 0 || p->batch_ops > HTP_OP_MAX_OPS) {
        HTP_LOG_ERROR("ggml-htp: %s: batch of %u ops out of range 1..%d\n", p->name, p->batch_ops, HTP_OP_MAX_OPS);
        return HTP_STATUS_HOST_ERR;
    }
    if (p->queue_depth == 0 || p->queue_depth > HTP_QUEUE_MAX_DEPTH || (p->queue_depth & (p->queue_depth - 1))) {
        HTP_LOG_ERROR("ggml-htp: %s: queue depth %u is not a power of two in 1..%d\n", p->name, p->queue_depth,
                      HTP_QUEUE_MAX_DEPTH);
        return HTP_STATUS_HOST_ERR;
    }
    if (p->profile > 3 || p->n_traces > HTP_MAX_TRACES || p->n_fences == 0 || p->n_fences > 65536) {
        HTP_LOG_ERROR("ggml-htp: %s: bad profile %u / traces %u / fences %u\n", p->name, p->profile, p->n_traces,
                      p->n_fences);
        return HTP_STATUS_HOST_ERR;
    }
    return 0;
}

int htp_session_open(const struct htp_session_params * params, struct htp_session ** out) {
    int rc = check_params(params);
    if (rc != 0) {
        return rc;
    }
    struct htp_session * sess = calloc(1, sizeof *sess);
    if (!sess) {
        return HTP_STATUS_HOST_ERR;
    }
    sess->params                                    = *params;
    sess->params.name[sizeof sess->params.name - 1] = 0;
    sess->fence_seq                                 = 0;

    rc = htp_npu_get(params->phys_idx, &sess->npu);
    if (rc != 0) {
        goto fail;
    }
    const struct htp_hw_info * hw = htp_npu_hw_info(sess->npu);

    struct htp_ctl_req req = {.type = HTP_CTL_SESSION_OPEN};
    struct htp_ctl_rsp rsp;
    req.u.open.virt_idx  = params->virt_idx;
    req.u.open.n_threads = params->n_threads;
    req.u.open.vtcm_size = params->vtcm_size;
    req.u.open.vmem_size = params->vmem_size;
    rc                   = ctl(sess, &req, &rsp);
    if (rc != 0) {
        HTP_LOG_ERROR("ggml-htp: %s: session open failed: %s\n", params->name, htp_status_str(rc));
        goto fail;
    }
    sess->id     = rsp.u.open.session;
    sess->opened = true;
    sess->target = (struct htp_map_target){.npu = sess->npu, .session_id = sess->id, .phys_idx = params->phys_idx};
    snprintf(sess->target.name, sizeof sess->target.name, "%s", sess->params.name);

    // Workers and trace room decide the slot size ("use n_threads for queue sizing").
    uint32_t hw_threads = hw->n_threads ? hw->n_threads : 1;
    if (hw_threads > HTP_MAX_NTHREADS) {
        hw_threads = HTP_MAX_NTHREADS;
    }
    sess->n_threads = params->n_threads && params->n_threads < hw_threads ? params->n_threads : hw_threads;
    sess->n_traces  = params->profile == 3 ? params->n_traces : 0;

    // The pinned buffer: rings, slots, fences (layout at the top of this file).
    const uint32_t depth = params->queue_depth;
    sess->rsp_off        = ALIGN_UP(htp_opqueue_ring_size(depth, HTP_OPQUEUE_REQ_SIZE), 64);
    sess->slots_off      = ALIGN_UP(sess->rsp_off + htp_opqueue_ring_size(depth, HTP_OPQUEUE_RSP_SIZE), HTP_PAGE_SIZE);
    sess->slot_size      = ALIGN_UP(htp_slot_size(params->batch_ops, sess->n_threads, sess->n_traces), 64);
    sess->fences_off     = ALIGN_UP(sess->slots_off + (uint64_t)depth * sess->slot_size, HTP_FENCE_SLOT_SIZE);
    uint64_t total       = sess->fences_off + (uint64_t)params->n_fences * HTP_FENCE_SLOT_SIZE;

    rc = htp_buffer_alloc(&sess->target, total, HTP_BUFFER_PINNED, &sess->pinned);
    if (rc != 0) {
        goto fail;
    }
    uint8_t * base = htp_buffer_base(sess->pinned);
    rc = htp_opqueue_init(&sess->queue, sess->npu, base, base + sess->rsp_off, base + sess->slots_off, sess->slot_size,
                          depth, sess->n_threads, sess->n_traces, (int)params->poll);
    if (rc != 0) {
        goto fail;
    }
    rc = htp_fence_pool_init(&sess->fences, base + sess->fences_off, params->n_fences);
    if (rc != 0) {
        goto fail;
    }
    rc = htp_buffer_map(sess->pinned, &sess->target);
    if (rc != 0) {
        goto fail;
    }

    req                      = (struct htp_ctl_req){.type = HTP_CTL_QUEUE_START};
    req.u.queue.fd           = htp_buffer_fd(sess->pinned);
    req.u.queue.depth        = depth;
    req.u.queue.req_ring_off = 0;
    req.u.queue.rsp_ring_off = sess->rsp_off;
    req.u.queue.slots_off    = sess->slots_off;
    req.u.queue.slot_size    = sess->slot_size;
    req.u.queue.poll         = params->poll ? 1 : 0;
    rc                       = ctl(sess, &req, &rsp);
    if (rc != 0) {
        HTP_LOG_ERROR("ggml-htp: %s: queue start failed: %s\n", params->name, htp_status_str(rc));
        goto fail;
    }
    sess->queue_started = true;

    if (params->profile) {
        req                 = (struct htp_ctl_req){.type = HTP_CTL_PROFILER};
        req.u.profiler.mode = params->profile;
        rc                  = ctl(sess, &req, &rsp);
        if (rc != 0) {
            HTP_LOG_ERROR("ggml-htp: %s: profiler mode %u failed: %s\n", params->name, params->profile,
                          htp_status_str(rc));
            goto fail;
        }
        sess->last_prof = calloc(params->batch_ops, sizeof *sess->last_prof);
        if (!sess->last_prof) {
            rc = HTP_STATUS_HOST_ERR;
            goto fail;
        }
    }

    // The pinned buffer takes its share of the VA window; batches get the rest.
    sess->vmem_size = params->vmem_size ? params->vmem_size : hw->vmem_size ? hw->vmem_size : HTP_VMEM_DEFAULT;
    uint64_t pinned = htp_buffer_size(sess->pinned);
    sess->max_vmem  = sess->vmem_size > pinned ? sess->vmem_size - pinned : sess->vmem_size;
    if (params->measure_vmem) {
        // Measured with the pinned buffer already mapped: the answer is what
        // batches can use, nothing to subtract.
        uint64_t measured = 0;
        rc                = htp_session_measure_vmem(sess, &measured);
        if (rc != 0) {
            goto fail;
        }
        HTP_LOG_INFO("ggml-htp: %s measured max vmem %llu\n", params->name, (unsigned long long)measured);
        sess->max_vmem = measured;
    }
    rc = htp_opbatch_init(&sess->batch, &sess->target, params->batch_ops, sess->max_vmem);
    if (rc != 0) {
        goto fail;
    }

    HTP_VERBOSE(
        "ggml-htp: %s session %u on NPU %u (pid %d): threads %u batch %u depth %u slot %llu pinned %llu "
        "vmem %llu poll %u profile %u\n",
        params->name, sess->id, params->phys_idx, (int)htp_npu_pid(sess->npu), sess->n_threads, params->batch_ops,
        depth, (unsigned long long)sess->slot_size, (unsigned long long)pinned, (unsigned long long)sess->max_vmem,
        params->poll, params->profile);
    *out = sess;
    return 0;
fail:
    // Report the failure as it happened, not the close path's follow-ups.
    htp_session_close(sess);
    return rc;
}

void htp_session_close(struct htp_session * sess) {
    if (!sess) {
        return;
    }
    // Members first: their batches use the leader's pinned buffer.
    for (uint32_t i = 0; i < sess->n_members; i++) {
        htp_session_close(sess->members[i]);
    }
    sess->n_members = 0;
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    if (sess->queue_started) {
        req = (struct htp_ctl_req){.type = HTP_CTL_QUEUE_STOP};
        ctl(sess, &req, &rsp);
        sess->queue_started = false;
    }
    if (sess->npu) {
        // Unmap everything from this session (the pinned buffer included: the
        // queue is stopped), then free the pinned buffer, which unmaps it from
        // the sessions that cloned it for its fences.
        htp_buffer_forget_target(&sess->target, true);
    }
    htp_buffer_unref(sess->pinned);
    sess->pinned = NULL;
    if (sess->opened) {
        req = (struct htp_ctl_req){.type = HTP_CTL_SESSION_CLOSE};
        ctl(sess, &req, &rsp);
        sess->opened = false;
    }
    htp_npu_put(sess->npu);
    htp_opbatch_free(&sess->batch);
    htp_fence_pool_free(&sess->fences);
    free(sess->last_prof);
    free(sess);
}

// --- accessors ---

const char * htp_session_name(const struct htp_session * sess) {
    return sess->params.name;
}

const struct htp_hw_info * htp_session_hw_info(const struct htp_session * sess) {
    return htp_npu_hw_info(sess->npu);
}

uint32_t htp_session_phys_idx(const struct htp_session * sess) {
    return sess->params.phys_idx;
}

uint32_t htp_session_virt_idx(const struct htp_session * sess) {
    return sess->params.virt_idx;
}

uint32_t htp_session_id(const struct htp_session * sess) {
    return sess->id;
}

uint32_t htp_session_n_threads(const struct htp_session * sess) {
    return sess->n_threads;
}

uint64_t htp_session_max_vmem(const struct htp_session * sess) {
    return sess->max_vmem;
}

struct htp_npu * htp_session_npu(const struct htp_session * sess) {
    return sess->npu;
}

struct htp_buffer * htp_session_pinned(const struct htp_session * sess) {
    return sess->pinned;
}

const struct htp_map_target * htp_session_map_target(const struct htp_session * sess) {
    return &sess->target;
}

uint64_t htp_session_slot_size(const struct htp_session * sess) {
    return sess->slot_size;
}

uint32_t htp_session_in_flight(const struct htp_session * sess) {
    return htp_opqueue_in_flight(&sess->queue);
}

// --- responses ---

// Pop the oldest answer, waiting for it in slices and checking the NPU
// between them. With record_status, a failed batch becomes the session's
// error; the fault-injection path passes false.
static int collect_one(struct htp_session * sess, bool record_status) {
    for (;;) {
        struct htp_opbatch_rsp  rsp;
        struct htp_opqueue_prof p;
        int                     rc = htp_opqueue_pop(&sess->queue, &rsp, &p);
        if (rc == HTP_STATUS_PROTOCOL) {
            return record_error(sess, rc, "bad response from the NPU");
        }
        if (rc == 0) {
            sess->have_rsp    = true;
            sess->last_rsp    = rsp;
            sess->n_last_prof = 0;
            if (sess->last_prof && p.prof) {
                uint32_t n = p.n_prof < sess->params.batch_ops ? p.n_prof : sess->params.batch_ops;
                memcpy(sess->last_prof, p.prof, sizeof *p.prof * n);
                sess->n_last_prof = n;
                htp_profile_log_ops(sess->params.name, &rsp, sess->last_prof, n);
            }
            if (p.trace) {
                htp_profile_log_trace(sess->params.name, &rsp, &p);
            }
            if (rsp.status != HTP_STATUS_OK && record_status) {
                record_error(sess, (int)rsp.status, "batch %llu failed at op %u of %u", (unsigned long long)rsp.seq,
                             rsp.n_done, rsp.n_ops);
            }
            return 0;
        }
        if (htp_opqueue_wait(&sess->queue, HTP_SESSION_WAIT_SLICE_US) != 0 && !htp_npu_alive(sess->npu)) {
            return npu_died(sess);
        }
    }
}

// A member's first error becomes the group's (the leader's).
static void adopt_member_error(struct htp_session * sess, const struct htp_session * m) {
    if (m->last_error && !sess->last_error) {
        record_error(sess, m->last_error, "group member %s failed: %s", m->params.name, m->error);
    }
}

int htp_session_flush_pending(struct htp_session * sess, bool all) {
    for (uint32_t i = 0; i < sess->n_members; i++) {
        htp_session_flush_pending(sess->members[i], all);
        adopt_member_error(sess, sess->members[i]);
    }
    while (htp_opqueue_in_flight(&sess->queue) > 0) {
        // A dead NPU answers nothing: stop at once instead of waiting out a slice per batch.
        if (sess->last_error == HTP_STATUS_NPU_DEAD || sess->last_error == HTP_STATUS_PROTOCOL) {
            break;
        }
        collect_one(sess, true);
        if (!all) {
            break;
        }
    }
    return sess->last_error;
}

int htp_session_last_profile(const struct htp_session * sess, struct htp_opbatch_rsp * rsp,
                             const struct htp_prof_desc ** prof, uint32_t * n_prof) {
    if (!sess->have_rsp) {
        return HTP_STATUS_HOST_ERR;
    }
    if (rsp) {
        *rsp = sess->last_rsp;
    }
    if (prof) {
        *prof = sess->n_last_prof ? sess->last_prof : NULL;
    }
    if (n_prof) {
        *n_prof = sess->n_last_prof;
    }
    return 0;
}

// --- batching ---

// Wait until fewer than depth batches are in flight (back-pressure).
static int make_room(struct htp_session * sess) {
    while (htp_opqueue_in_flight(&sess->queue) >= sess->queue.depth) {
        int rc = collect_one(sess, true);
        if (rc == HTP_STATUS_NPU_DEAD || rc == HTP_STATUS_PROTOCOL) {
            return rc;
        }
    }
    return 0;
}

int htp_session_flush_batch(struct htp_session * sess, uint32_t min_ops) {
    if (sess->last_error) {
        return failed_before(sess, "flush");
    }
    struct htp_opbatch * b = &sess->batch;
    if (b->n_ops < min_ops) {
        return 0;
    }
    if (!sess->params.mmap_stacking) {
        // Naive order (measurements only): this batch's buffers as it met them.
        for (uint32_t i = 0; i < b->n_bufs; i++) {
            int rc = htp_buffer_map(b->buf_ptrs[i], &sess->target);
            for (uint32_t k = 0; rc == 0 && k < sess->n_members; k++) {
                rc = htp_buffer_map(b->buf_ptrs[i], &sess->members[k]->target);
            }
            if (rc != 0) {
                htp_opbatch_reset(b);
                return rc == HTP_STATUS_NPU_DEAD ? npu_died(sess)
                                                 : record_error(sess, rc, "mapping buffer fd %d of %zu bytes",
                                                                b->bufs[i].fd, (size_t)b->bufs[i].size);
            }
        }
    }
    htp_opbatch_sort_buffers(b);

    if (sess->params.mmap_stacking) {
        // mmap stacking: everything registered and unmapped in the session
        // and its group goes in now, largest first, across sessions.
        const struct htp_map_target * group[HTP_SESSION_MAX_MEMBERS] = {&sess->target};  // + the group's members
        for (uint32_t k = 0; k < sess->n_members; k++) {
            group[k + 1] = &sess->members[k]->target;
        }
        struct htp_buffer_map_failure f  = {0};
        int                           rc = htp_buffer_map_pending(group, 1 + sess->n_members, &f);
        if (rc != 0) {
            htp_opbatch_reset(b);
            if (rc == HTP_STATUS_NPU_DEAD) {
                return npu_died(sess);
            }
            return record_error(sess, rc, "mapping buffer fd %d of %zu bytes%s%s", f.fd, f.size,
                                f.target && f.target != &sess->target ? " into " : "",
                                f.target && f.target != &sess->target ? f.target->name : "");
        }
    }

    // A group's members get the same batch first, each told its index (the
    // reference's flush_batch); the descriptors name buffers by fd, which is
    // the same key in every session of this process.
    for (uint32_t k = 0; k < sess->n_members; k++) {
        struct htp_session * m = sess->members[k];
        b->ops[0].params[0]    = (int32_t)(k + 1);
        int mr                 = m->last_error ? m->last_error : make_room(m);
        if (mr == 0) {
            mr = htp_opqueue_push(&m->queue, b->bufs, b->n_bufs, b->tensors, b->n_tensors, b->ops, b->n_ops);
            if (mr != 0) {
                record_error(m, mr == HTP_OPQUEUE_BUSY ? HTP_STATUS_HOST_ERR : mr, "pushing batch of %u ops", b->n_ops);
            }
        }
        adopt_member_error(sess, m);
        if (sess->last_error) {
            htp_opbatch_reset(b);
            return sess->last_error;
        }
    }
    if (sess->n_members) {
        b->ops[0].params[0] = 0;
    }

    int rc = make_room(sess);
    if (rc == 0) {
        rc = htp_opqueue_push(&sess->queue, b->bufs, b->n_bufs, b->tensors, b->n_tensors, b->ops, b->n_ops);
        if (rc != 0) {
            rc = record_error(sess, rc == HTP_OPQUEUE_BUSY ? HTP_STATUS_HOST_ERR : rc, "pushing batch of %u ops",
                              b->n_ops);
        } else if (htp_log_verbose > 1) {
            HTP_LOG_DEBUG("ggml-htp: %s push batch #%llu: n-bufs %u n-tensors %u n-ops %u vmem %llu\n",
                          sess->params.name, (unsigned long long)sess->queue.req_seq, b->n_bufs, b->n_tensors, b->n_ops,
                          (unsigned long long)b->vmem);
        }
    }
    htp_opbatch_reset(b);
    return rc;
}

int htp_session_flush_async(struct htp_session * sess) {
    return htp_session_flush_batch(sess, 1);
}

int htp_session_flush_sync(struct htp_session * sess) {
    int rc = htp_session_flush_async(sess);
    int rp = htp_session_flush_pending(sess, true);
    return rc ? rc : rp;
}

// Register an operand's buffer unless this batch already holds it (then it is registered).
static int use_operand(struct htp_session * sess, const struct htp_op_tensor * t) {
    if (!t) {
        return 0;
    }
    if (!t->buf) {
        HTP_LOG_ERROR("ggml-htp: %s: operand without a buffer\n", sess->params.name);
        return HTP_STATUS_HOST_ERR;
    }
    if (sess->params.dma64 && (t->flags & HTP_TENSOR_WEIGHT) && !(htp_buffer_flags(t->buf) & HTP_BUFFER_EXTENDED)) {
        // DMA64: weights are mapped outside the VA window. The buffer's usage
        // is only known once it is used; one already mapped somewhere stays
        // where it is (set_extended refuses, which is fine).
        htp_buffer_set_extended(t->buf, true);
    }
    for (uint32_t i = 0; i < sess->batch.n_bufs; i++) {
        if (sess->batch.buf_ptrs[i] == t->buf) {
            return 0;
        }
    }
    int rc = htp_buffer_use(t->buf, &sess->target);
    for (uint32_t k = 0; rc == 0 && k < sess->n_members; k++) {
        rc = htp_buffer_use(t->buf, &sess->members[k]->target);
    }
    return rc;
}

// Head an empty batch of a group with MDEV_GROUP (member index 0 here;
// flush_batch sets each member's).
static int add_group_op(struct htp_session * sess) {
    struct htp_op_tensor slots;
    htp_session_fence_tensor(sess, sess->group_slots, sess->n_members + 1, &slots);
    struct htp_opnode op = {0};
    op.opcode            = HTP_OP_MDEV_GROUP;
    op.src[0]            = &slots;
    return htp_opbatch_add(&sess->batch, &op);
}

int htp_session_enqueue(struct htp_session * sess, const struct htp_opnode * op) {
    if (sess->last_error) {
        return failed_before(sess, "enqueue");
    }
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        int rc = use_operand(sess, op->src[i]);
        if (rc) {
            return rc;
        }
    }
    for (int i = 0; i < HTP_OP_MAX_OUTPUTS; i++) {
        int rc = use_operand(sess, op->dst[i]);
        if (rc) {
            return rc;
        }
    }
    struct htp_opbatch * b = &sess->batch;
    if (htp_opbatch_full(b) || !htp_opbatch_fits(b, op)) {
        int rc = htp_session_flush_async(sess);
        if (rc) {
            return rc;
        }
        if (!htp_opbatch_fits(b, op)) {
            HTP_LOG_ERROR("ggml-htp: %s: op %s does not fit an empty batch (buffers / tensors / vmem %llu)\n",
                          sess->params.name, htp_opqueue_op_name(op->opcode), (unsigned long long)b->max_vmem);
            return HTP_STATUS_NO_MEMORY;
        }
    }
    if (sess->n_members && htp_opbatch_empty(b)) {
        int rc = add_group_op(sess);
        if (rc == 0 && !htp_opbatch_fits(b, op)) {
            rc = HTP_STATUS_NO_MEMORY;
        }
        if (rc) {
            htp_opbatch_reset(b);
            return rc;
        }
    }
    return htp_opbatch_add(b, op);
}

int htp_session_group_init(struct htp_session * sess, struct htp_session * const * members, uint32_t n) {
    if (sess->n_members || n == 0 || n + 1 > HTP_SESSION_MAX_MEMBERS || !htp_opbatch_empty(&sess->batch)) {
        return HTP_STATUS_HOST_ERR;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (members[i]->n_members || htp_opbatch_empty(&members[i]->batch) == false ||
            members[i]->params.batch_ops < sess->params.batch_ops) {
            return HTP_STATUS_HOST_ERR;
        }
        for (uint32_t j = 0; j <= i; j++) {
            uint32_t other = j == i ? sess->params.phys_idx : members[j]->params.phys_idx;
            if (members[i]->params.phys_idx == other) {
                HTP_LOG_ERROR("ggml-htp: %s: group members must be on distinct NPUs (%u twice)\n", sess->params.name,
                              other);
                return HTP_STATUS_HOST_ERR;
            }
        }
    }
    sess->group_slots = htp_session_fence_alloc(sess, n + 1);
    if (!sess->group_slots) {
        return HTP_STATUS_HOST_ERR;
    }
    for (uint32_t i = 0; i < n; i++) {
        // The members signal and wait on the leader's slots: they map its pinned buffer.
        int rc = htp_buffer_use(sess->pinned, &members[i]->target);
        if (rc) {
            htp_session_fence_free(sess, sess->group_slots, n + 1);
            sess->group_slots = NULL;
            return rc;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        sess->members[i] = members[i];
    }
    sess->n_members = n;
    return 0;
}

uint32_t htp_session_group_size(const struct htp_session * sess) {
    return sess->n_members + 1;
}

int htp_session_push_raw(struct htp_session * sess, const void * bytes, uint64_t n, uint32_t n_bufs, uint32_t n_tensors,
                         uint32_t n_ops, struct htp_opbatch_rsp * rsp) {
    int rc = htp_session_flush_sync(sess);
    if (rc) {
        return rc;
    }
    struct htp_opqueue_counts c = {n_bufs, n_tensors, n_ops, sess->n_traces};
    rc                          = htp_opqueue_push_raw(&sess->queue, bytes, n, &c);
    if (rc) {
        return rc == HTP_OPQUEUE_BUSY ? HTP_STATUS_HOST_ERR : rc;
    }
    rc = collect_one(sess, false);
    if (rc == 0 && rsp) {
        *rsp = sess->last_rsp;
    }
    return rc;
}

// --- buffers ---

int htp_session_use_buffer(struct htp_session * sess, struct htp_buffer * buf) {
    return htp_buffer_use(buf, &sess->target);
}

int htp_session_map_buffer(struct htp_session * sess, struct htp_buffer * buf) {
    int rc = htp_buffer_map(buf, &sess->target);
    return rc == HTP_STATUS_NPU_DEAD ? npu_died(sess) : rc;
}

int htp_session_unmap_buffer(struct htp_session * sess, struct htp_buffer * buf) {
    int rc = htp_buffer_unmap(buf, &sess->target);
    return rc == HTP_STATUS_NPU_DEAD ? npu_died(sess) : rc;
}

int htp_session_measure_vmem(struct htp_session * sess, uint64_t * bytes) {
    const uint64_t      MiB  = 1024 * 1024;
    const uint64_t      big  = 1024 * MiB;
    const uint64_t      step = 256 * MiB;
    struct htp_buffer * bufs[64];
    uint32_t            n = 0, n_big = 0;
    uint64_t            total = 0;
    int                 rc    = 0;
    // Three 1 GiB buffers, then 256 MiB ones (the reference's probe). Unlike
    // the reference, a window too small for 1 GiB is still measured in steps.
    // Sizes include the guard page, so the window's own rounding is measured too.
    while (n < sizeof bufs / sizeof bufs[0]) {
        uint64_t size = n_big < 3 ? big : step;
        rc            = htp_buffer_alloc(&sess->target, (size_t)(size - HTP_PAGE_SIZE), 0, &bufs[n]);
        if (rc != 0) {
            break;  // the host ran out first: measure what was mapped
        }
        rc = htp_buffer_try_map(bufs[n], &sess->target);
        if (rc != 0) {
            htp_buffer_unref(bufs[n]);
            if (size == big && rc != HTP_STATUS_NPU_DEAD && rc != HTP_STATUS_PROTOCOL) {
                n_big = 3;  // no room for another 1 GiB: go on in steps
                continue;
            }
            break;
        }
        n++;
        n_big += size == big;
        total += size;
    }
    for (uint32_t i = 0; i < n; i++) {
        htp_buffer_unref(bufs[i]);  // unmaps it
    }
    if (rc == HTP_STATUS_NPU_DEAD || rc == HTP_STATUS_PROTOCOL) {
        return npu_died(sess);
    }
    if (total == 0) {
        HTP_LOG_ERROR("ggml-htp: %s: not even %llu MiB of VA window could be mapped\n", sess->params.name,
                      (unsigned long long)(step / MiB));
        return HTP_STATUS_NO_MEMORY;
    }
    *bytes = total > step ? total - step : total;
    return 0;
}

int htp_session_vmem_info(struct htp_session * sess, struct htp_vmem_info * info) {
    struct htp_ctl_req req = {.type = HTP_CTL_VMEM_INFO};
    struct htp_ctl_rsp rsp;
    int                rc = ctl(sess, &req, &rsp);
    if (rc == 0) {
        *info = rsp.u.vmem;
    }
    return rc;
}

// --- fences ---

struct htp_fence_slot * htp_session_fence_alloc(struct htp_session * sess, uint32_t n) {
    return htp_fence_alloc(&sess->fences, n);
}

void htp_session_fence_free(struct htp_session * sess, struct htp_fence_slot * slot, uint32_t n) {
    htp_fence_release(&sess->fences, slot, n);
}

void htp_session_fence_tensor(const struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t n,
                              struct htp_op_tensor * out) {
    memset(out, 0, sizeof *out);
    out->key    = NULL;  // dedup by (buffer, offset, shape)
    out->buf    = sess->pinned;
    out->offset = (uint64_t)((const uint8_t *)slot - htp_buffer_base(sess->pinned));
    out->type   = HTP_TYPE_I8;
    out->flags  = HTP_TENSOR_FENCE;
    out->ne[0]  = HTP_FENCE_SLOT_SIZE;
    out->ne[1]  = n;
    out->ne[2]  = 1;
    out->ne[3]  = 1;
    out->nb[0]  = 1;
    out->nb[1]  = HTP_FENCE_SLOT_SIZE;
    out->nb[2]  = (int64_t)HTP_FENCE_SLOT_SIZE * n;
    out->nb[3]  = out->nb[2];
    out->size   = (uint64_t)HTP_FENCE_SLOT_SIZE * n;
}

uint32_t htp_session_next_fence_seq(struct htp_session * sess) {
    if (++sess->fence_seq == 0) {
        sess->fence_seq = 1;
    }
    return sess->fence_seq;
}

int htp_session_fence_wait(struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t seq,
                           int64_t timeout_us, uint32_t * status) {
    _Atomic uint32_t * word  = (_Atomic uint32_t *)&slot->seq;
    const uint64_t     start = htp_wait_now_us();
    for (;;) {
        // Acquire (in htp_fence_reached): the status and data the signaller published.
        if (htp_fence_reached(slot, seq)) {
            if (status) {
                *status = htp_fence_status(slot);
            }
            return 0;
        }
        int64_t waited = (int64_t)(htp_wait_now_us() - start);
        if (waited >= timeout_us) {
            return HTP_STATUS_TIMEOUT;
        }
        if (waited < 50) {
            htp_wait_relax();  // a fence about to be signalled: spin briefly
            continue;
        }
        if (!htp_npu_alive(sess->npu)) {
            return npu_died(sess);
        }
        // Sleep on seq (signallers wake all waiters), in slices to check the NPU.
        // Relaxed: only the value to sleep on; the acquire load above decides.
        uint32_t cur = atomic_load_explicit(word, memory_order_relaxed);
        int64_t  slice =
            timeout_us - waited < HTP_SESSION_WAIT_SLICE_US ? timeout_us - waited : HTP_SESSION_WAIT_SLICE_US;
        if ((int32_t)(cur - seq) < 0) {
            htp_wait_futex(word, cur, slice);
        }
    }
}
