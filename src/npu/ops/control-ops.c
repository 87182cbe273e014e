// control-ops.c: ops with no ggml counterpart: NOP, FENCE (signal / wait),
// CPY_FENCE (copy, then signal) and MDEV_GROUP, with the multi-NPU group
// execution MDEV_GROUP starts (see "Groups" below).
//
// A fence is a struct htp_fence_slot in some session's pinned buffer, possibly
// shared with other sessions and other NPU processes (the memfd is mapped into
// each). The signaller stores status (relaxed), then seq (release), then wakes
// every futex waiter on seq; a waiter loads seq (acquire) and then status. The
// wait and wake are the platform's process-shared ones because the other side
// may be another process, the host included.
//
// Control ops run on the batch's thread only (no worker split).

#include "op-families.h"
#include "platform/platform.h"

#define FENCE_SPIN_US  50     // busy-wait before sleeping on the futex
#define FENCE_SLICE_US 10000  // futex sleeps in slices, re-checking cancel and deadline

static _Atomic uint64_t fence_timeout_ms = 30000;

void htp_ops_set_fence_timeout_ms(uint64_t ms) {
    // Relaxed: a configuration value, set once at start before any batch runs.
    atomic_store_explicit(&fence_timeout_ms, ms, memory_order_relaxed);
}

// The words of a fence slot, as atomics (the slot lives in shared memory).
static _Atomic uint32_t * slot_seq(const struct htp_tensor_view * v) {
    return (_Atomic uint32_t *)(void *)(v->data + offsetof(struct htp_fence_slot, seq));
}

static _Atomic uint32_t * slot_status(const struct htp_tensor_view * v) {
    return (_Atomic uint32_t *)(void *)(v->data + offsetof(struct htp_fence_slot, status));
}

void htp_op_fence_signal(const struct htp_tensor_view * v, uint32_t seq, uint32_t status) {
    // Relaxed: published by the release store of seq below.
    atomic_store_explicit(slot_status(v), status, memory_order_relaxed);
    // Release: makes status (and everything this batch wrote before, e.g. a
    // CPY_FENCE's copy) visible to whoever acquires this seq.
    atomic_store_explicit(slot_seq(v), seq, memory_order_release);
    // Process-shared: the waiters may be other NPU processes or the host.
    htp_plat_wake(slot_seq(v), UINT32_MAX, 1);
}

int htp_op_fence_wait(const struct htp_tensor_view * v, uint32_t want, const _Atomic uint32_t * cancel) {
    _Atomic uint32_t * seq     = slot_seq(v);
    uint64_t           start   = htp_plat_now_us();
    uint64_t           timeout = atomic_load_explicit(&fence_timeout_ms, memory_order_relaxed) * 1000u;
    for (;;) {
        // Acquire: pairs with the signaller's release; status and the data it
        // guards are visible once the seq we want is.
        uint32_t cur = atomic_load_explicit(seq, memory_order_acquire);
        if ((int32_t)(cur - want) >= 0) {
            uint32_t st = atomic_load_explicit(slot_status(v), memory_order_relaxed);
            if (st == HTP_STATUS_OK) {
                return HTP_STATUS_OK;
            }
            // Anything else in shared memory that is not a status code is a failure too.
            return st <= HTP_STATUS_VERSION ? (int)st : HTP_STATUS_INTERNAL_ERR;
        }
        uint64_t waited = htp_plat_now_us() - start;
        if (waited >= timeout) {
            return HTP_STATUS_INTERNAL_ERR;
        }
        // Relaxed: a stop request only needs to be seen eventually (next slice).
        if (cancel != NULL && atomic_load_explicit(cancel, memory_order_relaxed)) {
            return HTP_STATUS_INTERNAL_ERR;
        }
        if (waited < FENCE_SPIN_US) {
            for (int i = 0; i < 64; i++) {
                htp_plat_relax();
            }
            continue;
        }
        uint64_t slice = timeout - waited < FENCE_SLICE_US ? timeout - waited : FENCE_SLICE_US;
        htp_plat_wait(seq, cur, (int64_t)slice, 1);
    }
}

// --- NOP ---

int htp_op_nop_run(struct htp_op_ctx * ctx) {
    (void)ctx;
    return HTP_STATUS_OK;
}

// --- FENCE: src[0] = fence slot; params[0] = seq; params[1] = 1 signal, 0 wait ---

int htp_op_fence_run(struct htp_op_ctx * ctx) {
    const int32_t * p   = ctx->op.desc->params;
    uint32_t        seq = (uint32_t)p[0];
    if (p[1] == 1) {
        htp_op_fence_signal(ctx->op.src[0], seq, HTP_STATUS_OK);
        return HTP_STATUS_OK;
    }
    return htp_op_fence_wait(ctx->op.src[0], seq, ctx->cancel);
}

// --- CPY_FENCE: dst[0] = src[0] (as CPY), then signal fence src[1] with params[0] ---

// The CPY family sees src[0] and dst[0] only; hand it a context without the fence.
static void cpy_ctx_of(const struct htp_op_ctx * ctx, struct htp_op_ctx * c) {
    *c = *ctx;
    for (int i = 1; i < HTP_OP_MAX_INPUTS; i++) {
        c->op.src[i] = NULL;
    }
}

int htp_op_cpy_fence_run(struct htp_op_ctx * ctx) {
    struct htp_op_ctx c;
    cpy_ctx_of(ctx, &c);
    int rc = htp_op_cpy_run(&c);
    // Signal even on failure, carrying the status, so a waiter fails at once
    // instead of timing out.
    htp_op_fence_signal(ctx->op.src[1], (uint32_t)ctx->op.desc->params[0], (uint32_t)rc);
    return rc;
}

// --- MDEV_GROUP: heads a group's batch (group.c runs the group) ---

// Outside a group execution (htp_group_*), MDEV_GROUP does nothing.
int htp_op_mdev_group_run(struct htp_op_ctx * ctx) {
    (void)ctx;
    return HTP_STATUS_OK;
}
