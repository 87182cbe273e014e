// control-ops.c: ops with no ggml counterpart: NOP, FENCE (signal / wait),
// CPY_FENCE (copy, then signal) and MDEV_GROUP.
//
// A fence is a struct htp_fence_slot in some session's pinned buffer, possibly
// shared with other sessions and other NPU processes (the memfd is mapped into
// each). The signaller stores status (relaxed), then seq (release), then wakes
// every futex waiter on seq; a waiter loads seq (acquire) and then status. The
// futex is process-shared (no FUTEX_PRIVATE_FLAG) because the other side may
// be another process, the host included.
//
// Control ops run on the batch's thread only (no worker split).

#include <limits.h>

#include "op-families.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define FENCE_SPIN_US 50      // busy-wait before sleeping on the futex
#define FENCE_SLICE_US 10000  // futex sleeps in slices, re-checking cancel and deadline

static _Atomic uint64_t                      fence_timeout_ms = 30000;
static _Thread_local const _Atomic uint32_t *cancel_flag;

void htp_ops_set_fence_timeout_ms(uint64_t ms) {
    // Relaxed: a configuration value, set once at start before any batch runs.
    atomic_store_explicit(&fence_timeout_ms, ms, memory_order_relaxed);
}

void htp_ops_set_cancel_flag(const _Atomic uint32_t *flag) {
    cancel_flag = flag;
}

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void fence_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t us) {
#if defined(__linux__)
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &ts, NULL, 0);
#else
    (void)addr;
    (void)val;
    (void)us;
#endif
}

static void fence_futex_wake_all(_Atomic uint32_t *addr) {
#if defined(__linux__)
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#else
    (void)addr;
#endif
}

// The words of a fence slot, as atomics (the slot lives in shared memory).
static _Atomic uint32_t *slot_seq(const struct htp_tensor_view *v) {
    return (_Atomic uint32_t *)(void *)(v->data + offsetof(struct htp_fence_slot, seq));
}

static _Atomic uint32_t *slot_status(const struct htp_tensor_view *v) {
    return (_Atomic uint32_t *)(void *)(v->data + offsetof(struct htp_fence_slot, status));
}

int htp_op_fence_operand_check(const struct htp_tensor_view *v, int64_t min_slots) {
    if (v == NULL || !(v->flags & HTP_TENSOR_FENCE) || v->type != HTP_TYPE_I8 || v->ne[0] != HTP_FENCE_SLOT_SIZE ||
        v->nb[0] != 1 || v->ne[2] != 1 || v->ne[3] != 1 || v->ne[1] < min_slots ||
        (v->ne[1] > 1 && v->nb[1] != HTP_FENCE_SLOT_SIZE) || ((uintptr_t)v->data % 4) != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return HTP_STATUS_OK;
}

static void fence_signal(const struct htp_tensor_view *v, uint32_t seq, uint32_t status) {
    // Relaxed: published by the release store of seq below.
    atomic_store_explicit(slot_status(v), status, memory_order_relaxed);
    // Release: makes status (and everything this batch wrote before, e.g. a
    // CPY_FENCE's copy) visible to whoever acquires this seq.
    atomic_store_explicit(slot_seq(v), seq, memory_order_release);
    fence_futex_wake_all(slot_seq(v));
}

static int fence_wait(const struct htp_tensor_view *v, uint32_t want) {
    _Atomic uint32_t *seq     = slot_seq(v);
    uint64_t          start   = now_us();
    uint64_t          timeout = atomic_load_explicit(&fence_timeout_ms, memory_order_relaxed) * 1000u;
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
        uint64_t waited = now_us() - start;
        if (waited >= timeout) {
            return HTP_STATUS_INTERNAL_ERR;
        }
        // Relaxed: a stop request only needs to be seen eventually (next slice).
        if (cancel_flag != NULL && atomic_load_explicit(cancel_flag, memory_order_relaxed)) {
            return HTP_STATUS_INTERNAL_ERR;
        }
        if (waited < FENCE_SPIN_US) {
            for (int i = 0; i < 64; i++) {
                cpu_relax();
            }
            continue;
        }
        uint64_t slice = timeout - waited < FENCE_SLICE_US ? timeout - waited : FENCE_SLICE_US;
        fence_futex_wait(seq, cur, slice);
    }
}

// --- NOP ---

int htp_op_nop_check(const struct htp_op_ctx *ctx) {
    (void)ctx;
    return HTP_STATUS_OK;
}

int htp_op_nop_run(struct htp_op_ctx *ctx) {
    (void)ctx;
    return HTP_STATUS_OK;
}

// --- FENCE: src[0] = fence slot; params[0] = seq; params[1] = 1 signal, 0 wait ---

int htp_op_fence_check(const struct htp_op_ctx *ctx) {
    const int32_t *p = ctx->desc->params;
    if (p[1] != 0 && p[1] != 1) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return htp_op_fence_operand_check(ctx->src[0], 1);
}

int htp_op_fence_run(struct htp_op_ctx *ctx) {
    const int32_t *p   = ctx->desc->params;
    uint32_t       seq = (uint32_t)p[0];
    if (p[1] == 1) {
        fence_signal(ctx->src[0], seq, HTP_STATUS_OK);
        return HTP_STATUS_OK;
    }
    return fence_wait(ctx->src[0], seq);
}

// --- CPY_FENCE: dst[0] = src[0] (as CPY), then signal fence src[1] with params[0] ---

// The CPY family sees src[0] and dst[0] only; hand it a context without the fence.
static void cpy_ctx_of(const struct htp_op_ctx *ctx, struct htp_op_ctx *c) {
    *c = *ctx;
    for (int i = 1; i < HTP_OP_MAX_INPUTS; i++) {
        c->src[i] = NULL;
    }
}

int htp_op_cpy_fence_check(const struct htp_op_ctx *ctx) {
    int rc = htp_op_fence_operand_check(ctx->src[1], 1);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    struct htp_op_ctx c;
    cpy_ctx_of(ctx, &c);
    return htp_op_cpy_check(&c);
}

int htp_op_cpy_fence_run(struct htp_op_ctx *ctx) {
    struct htp_op_ctx c;
    cpy_ctx_of(ctx, &c);
    int rc = htp_op_cpy_run(&c);
    // Signal even on failure, carrying the status, so a waiter fails at once
    // instead of timing out.
    fence_signal(ctx->src[1], (uint32_t)ctx->desc->params[0], (uint32_t)rc);
    return rc;
}

// --- MDEV_GROUP: params[0] = member index, src[0] = the group's fence slots ---
// Only validated for now: the group barrier is not implemented yet, so the op
// does nothing.

int htp_op_mdev_group_check(const struct htp_op_ctx *ctx) {
    const struct htp_tensor_view *f  = ctx->src[0];
    int                           rc = htp_op_fence_operand_check(f, 1);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    if (ctx->desc->params[0] < 0 || (int64_t)ctx->desc->params[0] >= f->ne[1]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return HTP_STATUS_OK;
}

int htp_op_mdev_group_run(struct htp_op_ctx *ctx) {
    (void)ctx;
    return HTP_STATUS_OK;
}
