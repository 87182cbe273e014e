// comm.c: the tensor-split communication context (see comm.h).
//
// Ordering. Each rank's ops go into its own stream's batch, after whatever
// the meta backend already queued there (the graph that produced the
// tensor), and before what it queues next (the graph that reads the sum).
// The ranks meet on the NPUs through their fence slots, never on the host:
// allreduce returns at once. Each stream gets the others as peers, so
// pushing one stream's batch pushes the others' first (device.c): an NPU
// never waits at an entry fence for a batch still held on the host.
//
// Sequence numbers. The slots belong to this context alone, so a counter of
// its own numbers them: call k uses 2k-1 (entry) and 2k (exit), skipping 0.

#include "comm.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "device.h"
#include "ggml-buffer.h"
#include "ggml-htp.h"
#include "graph.h"
#include "log.h"
#include "session-error.h"
#include "session-fence.h"
#include "session-submit.h"

struct htp_comm {
    uint32_t                n;
    struct htp_device *     devs[HTP_COMM_MAX_RANKS];
    struct htp_session *    sess[HTP_COMM_MAX_RANKS];
    struct htp_fence_slot * slots[HTP_COMM_MAX_RANKS];  // rank r's, in rank r's pinned buffer
    uint32_t                seq;                        // last sequence number used
};

void * htp_comm_init(ggml_backend_t * backends, size_t n) {
    if (n < 2 || n > HTP_COMM_MAX_RANKS) {
        return NULL;
    }
    struct htp_comm * c = calloc(1, sizeof *c);
    if (!c) {
        return NULL;
    }
    c->n = (uint32_t)n;
    for (uint32_t r = 0; r < c->n; r++) {
        if (!ggml_backend_is_htp(backends[r])) {
            goto fail;
        }
        struct htp_device * d = (struct htp_device *)backends[r]->context;
        // Group devices already spread their work over several NPUs; a rank
        // must be one NPU, and no two ranks may share one: sessions of one
        // NPU run one after the other, so the first would wait for the
        // second forever at the entry fence.
        if (d->cfg.n_members != 1) {
            goto fail;
        }
        for (uint32_t q = 0; q < r; q++) {
            if (c->devs[q]->cfg.phys[0] == d->cfg.phys[0]) {
                goto fail;
            }
        }
        c->devs[r] = d;
        c->sess[r] = htp_device_session(d);
        if (!c->sess[r]) {
            goto fail;
        }
    }
    for (uint32_t r = 0; r < c->n; r++) {
        c->slots[r] = htp_session_fence_alloc(c->sess[r], 1);
        if (!c->slots[r]) {
            goto fail;
        }
    }
    HTP_VERBOSE("ggml-htp: comm context over %u NPUs (ar_select %d, ar_scatter %d)\n", c->n,
                htp_backend_config->ar_select, htp_backend_config->ar_scatter);
    return c;
fail:
    HTP_VERBOSE("ggml-htp: no comm context for these %zu backends: the meta backend reduces\n", n);
    htp_comm_free(c);
    return NULL;
}

void htp_comm_free(void * ctx) {
    struct htp_comm * c = ctx;
    if (!c) {
        return;
    }
    for (uint32_t r = 0; r < c->n; r++) {
        if (c->slots[r]) {
            htp_session_fence_free(c->sess[r], c->slots[r], 1);
        }
    }
    free(c);
}

static uint32_t next_seq(struct htp_comm * c) {
    if (++c->seq == 0) {
        c->seq = 1;
    }
    return c->seq;
}

static bool qualifies(struct ggml_tensor ** t, uint32_t n) {
    if (t[0]->type != GGML_TYPE_F32 && t[0]->type != GGML_TYPE_F16) {
        return false;
    }
    for (uint32_t r = 0; r < n; r++) {
        if (!t[r] || !t[r]->buffer || !htp_ggml_buffer_is_htp(t[r]->buffer) || !t[r]->data ||
            t[r]->type != t[0]->type || !ggml_is_contiguous(t[r]) || ggml_nelements(t[r]) != ggml_nelements(t[0])) {
            return false;
        }
    }
    return true;
}

// Elements [lo, hi) of a packed tensor as a flat operand.
static void flat_slice(const struct htp_op_tensor * t, int64_t lo, int64_t hi, struct htp_op_tensor * out) {
    const int64_t esize = t->nb[0];
    *out                = *t;
    out->key            = NULL;  // a new shape: dedup by (buffer, offset, shape)
    out->offset         = t->offset + (uint64_t)(lo * esize);
    out->ne[0]          = hi - lo;
    out->ne[1] = out->ne[2] = out->ne[3] = 1;
    out->nb[1] = out->nb[2] = out->nb[3] = out->ne[0] * esize;
    out->size                            = (uint64_t)(out->ne[0] * esize);
}

static int enqueue_fence(struct htp_session * sess, const struct htp_op_tensor * slot, uint32_t seq, bool signal) {
    struct htp_opnode op = {0};
    op.opcode            = HTP_OP_FENCE;
    op.src[0]            = slot;
    op.params[0]         = (int32_t)seq;
    op.params[1]         = signal ? 1 : 0;
    return htp_session_enqueue(sess, &op);
}

// Unfused: rank r's share of a reduce-scatter out of FENCE, ADD and CPY.
static int enqueue_unfused(struct htp_comm * c, uint32_t r, const struct htp_op_tensor * data,
                           const struct htp_op_tensor * slots, uint32_t entry, uint32_t exit) {
    struct htp_session * s     = c->sess[r];
    const int64_t        total = data[0].ne[0] * data[0].ne[1] * data[0].ne[2] * data[0].ne[3];
    const int64_t        per   = (total + c->n - 1) / c->n;
    const int64_t        lo    = per * r < total ? per * r : total;
    const int64_t        hi    = lo + per < total ? lo + per : total;
    int                  rc    = enqueue_fence(s, &slots[r], entry, true);
    for (uint32_t q = 0; rc == 0 && q < c->n; q++) {
        if (q != r) {
            rc = enqueue_fence(s, &slots[q], entry, false);
        }
    }
    if (hi > lo) {
        struct htp_op_tensor own;
        flat_slice(&data[r], lo, hi, &own);
        // Sum in rank order (own slice accumulates), as the fused kernel does.
        struct htp_op_tensor acc;
        for (uint32_t q = 0; rc == 0 && q < c->n; q++) {
            if (q == r) {
                continue;
            }
            struct htp_op_tensor other;
            flat_slice(&data[q], lo, hi, &other);
            acc                  = own;
            struct htp_opnode op = {0};
            op.opcode            = HTP_OP_ADD;
            op.src[0]            = &acc;
            op.src[1]            = &other;
            op.dst[0]            = &own;
            rc                   = htp_session_enqueue(s, &op);
        }
        for (uint32_t q = 0; rc == 0 && q < c->n; q++) {
            if (q == r) {
                continue;
            }
            struct htp_op_tensor other;
            flat_slice(&data[q], lo, hi, &other);
            struct htp_opnode op = {0};
            op.opcode            = HTP_OP_CPY;
            op.src[0]            = &own;
            op.dst[0]            = &other;
            rc                   = htp_session_enqueue(s, &op);
        }
    }
    if (rc == 0) {
        rc = enqueue_fence(s, &slots[r], exit, true);
    }
    for (uint32_t q = 0; rc == 0 && q < c->n; q++) {
        if (q != r) {
            rc = enqueue_fence(s, &slots[q], exit, false);
        }
    }
    return rc;
}

// Fused: one ALLREDUCE op (operand layout in htp-proto.h).
static int enqueue_fused(struct htp_comm * c, uint32_t r, const struct htp_op_tensor * data,
                         const struct htp_op_tensor * slots, uint32_t entry, uint32_t exit, bool scatter) {
    struct htp_opnode op = {0};
    op.opcode            = HTP_OP_ALLREDUCE;
    for (uint32_t q = 0; q < c->n; q++) {
        op.src[q]        = &data[q];
        op.src[c->n + q] = &slots[q];
    }
    op.dst[0]    = &data[r];
    op.params[0] = (int32_t)entry;
    op.params[1] = (int32_t)exit;
    op.params[2] = (int32_t)r;
    op.params[3] = (int32_t)c->n;
    op.params[4] = scatter ? 1 : 0;
    return htp_session_enqueue(c->sess[r], &op);
}

bool htp_comm_allreduce_tensor(void * ctx, struct ggml_tensor ** tensors) {
    struct htp_comm * c      = ctx;
    const int         select = htp_backend_config->ar_select;
    if (!c || select == 0 || !qualifies(tensors, c->n)) {
        return false;
    }
    struct htp_op_tensor data[HTP_COMM_MAX_RANKS], slots[HTP_COMM_MAX_RANKS];
    for (uint32_t r = 0; r < c->n; r++) {
        if (!htp_tensor_describe(tensors[r], &data[r])) {
            return false;
        }
        htp_session_fence_tensor(c->sess[r], c->slots[r], 1, &slots[r]);
        if (htp_session_last_error(c->sess[r]) != 0) {
            return false;
        }
    }
    const uint32_t entry = next_seq(c);
    const uint32_t exit  = next_seq(c);
    for (uint32_t r = 0; r < c->n; r++) {
        int rc = select == 1 ? enqueue_unfused(c, r, data, slots, entry, exit)
                             : enqueue_fused(c, r, data, slots, entry, exit, htp_backend_config->ar_scatter != 0);
        if (rc != 0) {
            // Some ranks may hold their part already, and their NPUs would
            // wait for the others until the fence timeout. Fail every rank's
            // session instead: none of those batches is pushed, and the
            // streams' next calls report the failure.
            HTP_LOG_ERROR("ggml-htp: allreduce on %s failed: %s\n", c->devs[r]->cfg.name,
                          htp_session_error(c->sess[r]));
            for (uint32_t q = 0; q < c->n; q++) {
                htp_session_record_error(c->sess[q], rc, "allreduce: rank %u could not take its part", r);
            }
            return false;
        }
        for (uint32_t q = 0; q < c->n; q++) {
            if (q != r) {
                htp_device_add_peer(c->devs[r], c->devs[q]);
            }
        }
    }
    return true;
}

ggml_backend_buffer_type_t htp_comm_split_buffer_type(int main_device, const float * tensor_split) {
    (void)tensor_split;
    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    ggml_backend_dev_t dev = main_device >= 0 ? reg->iface.get_device(reg, (size_t)main_device) : NULL;
    if (!dev) {
        dev = reg->iface.get_device(reg, 0);
    }
    return dev ? ggml_backend_dev_buffer_type(dev) : NULL;
}
