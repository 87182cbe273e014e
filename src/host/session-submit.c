// session-submit.c: a session's batches (see session-submit.h).
//
// Enqueue registers each operand's buffer with the session (and with every
// member of its group) and adds the op to the current batch, pushing it first
// when it is full. A push maps what the session and its group have pending,
// then copies the batch into the next op-queue slot of each member and of the
// leader; responses are collected oldest first, and a member's error becomes
// the leader's.

#include "session-submit.h"

#include <stdio.h>
#include <string.h>

#include "buffer.h"
#include "log.h"
#include "npu-proc.h"
#include "opqueue.h"
#include "profile.h"
#include "session-error.h"
#include "session-fence.h"
#include "wait.h"
#include "session-impl.h"
#include "status.h"
#include "trace.h"

uint32_t htp_session_in_flight(const struct htp_session * sess) {
    return htp_opqueue_in_flight(&sess->queue);
}

uint64_t htp_session_slot_size(const struct htp_session * sess) {
    return sess->slot_size;
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
            return htp_session_record_error(sess, rc, "bad response from the NPU");
        }
        if (rc == 0) {
            sess->have_rsp    = true;
            sess->last_rsp    = rsp;
            sess->n_last_prof = 0;
            if (sess->last_prof && p.prof && !sess->prof_broken) {
                uint32_t n = p.n_prof < sess->params.batch_ops ? p.n_prof : sess->params.batch_ops;
                memcpy(sess->last_prof, p.prof, sizeof *p.prof * n);
                char why[128];
                if (htp_profile_check(&rsp, sess->last_prof, n, p.ops, sess->n_threads, &sess->pmu, why, sizeof why) !=
                    0) {
                    // The NPU wrote nonsense into its profile: say so once, use none of it.
                    HTP_LOG_ERROR("ggml-htp: %s: batch %llu: bad profile read-back (%s); profiles off\n",
                                  sess->params.name, (unsigned long long)rsp.seq, why);
                    sess->prof_broken = true;
                } else {
                    sess->n_last_prof = n;
                    htp_profile_log_ops(sess->params.name, &rsp, sess->last_prof, n, &sess->pmu);
                    if (p.trace) {
                        htp_profile_log_trace(sess->params.name, &rsp, &p);
                    }
                    htp_trace_batch(sess->params.name, (int)htp_npu_pid(sess->npu), &rsp, &p);
                }
            }
            if (htp_trace_on()) {
                htp_trace_counter("queue", htp_wait_now_us(), (double)htp_opqueue_in_flight(&sess->queue));
            }
            if (rsp.status != HTP_STATUS_OK && record_status) {
                htp_session_record_error(sess, (int)rsp.status, "batch %llu failed at op %u of %u",
                                         (unsigned long long)rsp.seq, rsp.n_done, rsp.n_ops);
            }
            return 0;
        }
        const uint64_t t0 = htp_wait_now_us();
        const int      rw = htp_opqueue_wait(&sess->queue, HTP_SESSION_WAIT_SLICE_US);
        const uint64_t t1 = htp_wait_now_us();
        sess->wait_usecs += t1 - t0;
        htp_trace_span("flush_wait", t0, t1);
        if (rw != 0 && !htp_npu_alive(sess->npu)) {
            return htp_session_npu_died(sess);
        }
    }
}

// A member's first error becomes the group's (the leader's).
static void adopt_member_error(struct htp_session * sess, const struct htp_session * m) {
    if (m->last_error && !sess->last_error) {
        htp_session_record_error(sess, m->last_error, "group member %s failed: %s", m->params.name, m->error);
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

// A buffer that could not be mapped fails the session. Out of memory, the
// error says what the window held (into which session, for a group member).
static int map_failed(struct htp_session * sess, int rc, int fd, uint64_t size, const struct htp_map_target * into) {
    if (rc == HTP_STATUS_NPU_DEAD) {
        return htp_session_npu_died(sess);
    }
    const struct htp_map_target * t           = into ? into : &sess->target;
    const double                  MiB         = 1024.0 * 1024.0;
    uint32_t                      n_held      = 0;
    const uint64_t                held        = htp_buffer_window_bytes(t, &n_held);
    char                          window[160] = "";
    if (rc == HTP_STATUS_NO_MEMORY) {
        snprintf(window, sizeof window, " (the VA window of %.1f MiB holds %.1f MiB in %u buffer(s))",
                 (double)sess->max_vmem / MiB, (double)held / MiB, n_held);
    }
    return htp_session_record_error(sess, rc, "mapping buffer fd %d (%.1f MiB) into %s%s", fd, (double)size / MiB,
                                    t->name, window);
}

static int push_leader(struct htp_session * sess, uint64_t name);

int htp_session_flush_batch(struct htp_session * sess, uint32_t min_ops) {
    if (sess->last_error) {
        return htp_session_refuse(sess, "flush");
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
                return map_failed(sess, rc, b->bufs[i].fd, b->bufs[i].size, NULL);
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
            return map_failed(sess, rc, f.fd, f.size, f.target);
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
            mr = htp_opqueue_push(&m->queue, b->bufs, b->n_bufs, b->tensors, b->n_tensors, b->ops, b->n_ops, 0);
            if (mr != 0) {
                htp_session_record_error(m, mr == HTP_OPQUEUE_BUSY ? HTP_STATUS_HOST_ERR : mr,
                                         "pushing batch of %u ops", b->n_ops);
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

    // A fresh batch gets a name unless it is a group's (see htp_session_replay).
    const uint64_t name  = sess->n_members ? 0 : ++sess->names_given;
    const uint64_t epoch = htp_buffer_epoch();
    int            rc    = push_leader(sess, name);
    if (rc == 0 && name) {
        sess->batch_name  = name;
        sess->batch_epoch = epoch;
    }
    htp_opbatch_reset(b);
    return rc;
}

// Push sess's batch (as built or restored) into its own queue, under name
// (htp_opqueue_push; 0: none). Returns 0 or the session's error.
static int push_leader(struct htp_session * sess, uint64_t name) {
    struct htp_opbatch * b  = &sess->batch;
    int                  rc = make_room(sess);
    if (rc == 0) {
        const uint64_t t0 = htp_wait_now_us();
        rc = htp_opqueue_push(&sess->queue, b->bufs, b->n_bufs, b->tensors, b->n_tensors, b->ops, b->n_ops, name);
        if (htp_trace_on()) {
            const uint64_t t1 = htp_wait_now_us();
            htp_trace_span("push", t0, t1);
            htp_trace_counter("queue", t1, (double)htp_opqueue_in_flight(&sess->queue));
            const double MiB = 1024.0 * 1024.0;
            htp_trace_counter("vmem", t1, (double)htp_buffer_window_bytes(&sess->target, NULL) / MiB);
            htp_trace_counter("vmem_batch", t1, (double)b->vmem / MiB);
            htp_trace_counter("vmem_window", t1, (double)sess->max_vmem / MiB);
        }
        if (rc != 0) {
            rc = htp_session_record_error(sess, rc == HTP_OPQUEUE_BUSY ? HTP_STATUS_HOST_ERR : rc,
                                          "pushing batch of %u ops", b->n_ops);
        } else if (htp_log_verbose > 1) {
            HTP_LOG_DEBUG("ggml-htp: %s push batch #%llu: n-bufs %u n-tensors %u n-ops %u vmem %llu\n",
                          sess->params.name, (unsigned long long)sess->queue.req_seq, b->n_bufs, b->n_tensors, b->n_ops,
                          (unsigned long long)b->vmem);
        }
    }
    return rc;
}

uint32_t htp_session_queued_ops(const struct htp_session * sess) {
    return sess->batch.n_ops;
}

uint64_t htp_session_pushes(const struct htp_session * sess) {
    return sess->queue.req_seq;
}

uint64_t htp_session_last_batch(const struct htp_session * sess) {
    return sess->batch_name;
}

int htp_session_replay(struct htp_session * sess, uint64_t name) {
    if (sess->last_error) {
        return htp_session_refuse(sess, "replay");
    }
    // The tables are still name's (a fresh batch or an enqueue clears
    // batch_name), and every buffer they name is still mapped as they say.
    if (name == 0 || sess->batch_name != name || sess->batch_epoch != htp_buffer_epoch() ||
        !htp_opbatch_restore(&sess->batch)) {
        return HTP_SESSION_STALE;
    }
    int rc = push_leader(sess, name);
    htp_opbatch_reset(&sess->batch);
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
        return htp_session_refuse(sess, "enqueue");
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
    sess->batch_name = 0;  // the tables change: nothing to replay
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

uint64_t htp_session_wait_usecs(const struct htp_session * sess) {
    uint64_t us = sess->wait_usecs;
    for (uint32_t i = 0; i < sess->n_members; i++) {
        us += htp_session_wait_usecs(sess->members[i]);
    }
    return us;
}
