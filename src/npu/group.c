// group.c: multi-NPU group execution of one batch.
//
// Groups. A ggml device backed by n physical NPUs sends the same batch to each
// member's session, headed by MDEV_GROUP naming the member (params[0]) and a
// run of n fence slots, one per member, in the leading session's pinned
// buffer. The NPUs then split the batch's work between them:
//
//   - ops whose dst rows are independent (elementwise, norms, unary, GLU, CPY
//     of equal shapes, MUL_MAT along its src1 columns) are cut along dst's
//     outermost dimension larger than one: member m computes rows
//     [m*R/n, (m+1)*R/n) through sliced views; sources with the same extent in
//     that dimension are sliced alike, sources of extent 1 (broadcast) are not;
//   - every other op runs on member 0 alone (fences and copies included);
//   - after each op the members meet at a barrier: member m signals its slot
//     with base + k (k-th barrier of the batch, base = the slot's value at the
//     batch start, equal for all members since each batch has as many
//     barriers on each) and waits until every slot reaches it. The release /
//     acquire pair of the fence words publishes each member's rows to the
//     others before the next op reads them.
//
// A failing member signals its slot far ahead (base + n_ops) with its status,
// so the others leave their next barrier at once with that error instead of
// timing out: an error of any member fails the batch on every member.

#include "group.h"

#include <string.h>

#include "contract/ops/op-checks.h"
#include "ops/op-families.h"

// The words of a fence slot, as atomics (the slot lives in shared memory).
static _Atomic uint32_t * slot_seq(const struct htp_tensor_view * v) {
    return (_Atomic uint32_t *)(void *)(v->data + offsetof(struct htp_fence_slot, seq));
}

// Slot i of a run of fence slots, as a one-slot view.
static struct htp_tensor_view slot_view(const struct htp_tensor_view * run, int64_t i) {
    struct htp_tensor_view v = *run;
    v.data += i * HTP_FENCE_SLOT_SIZE;
    v.ne[1]  = 1;
    v.extent = HTP_FENCE_SLOT_SIZE;
    return v;
}

int htp_group_begin(struct htp_group * g, const struct htp_op_ctx * ctx, uint32_t n_ops) {
    int rc = htp_op_mdev_group_check(&ctx->op);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    g->slots  = *ctx->op.src[0];
    g->member = (uint32_t)ctx->op.desc->params[0];
    g->count  = (uint32_t)g->slots.ne[1];
    g->n_ops  = n_ops;
    g->k      = 0;
    g->cancel = ctx->cancel;
    // Only this member writes its slot: a relaxed load sees its own last store.
    struct htp_tensor_view own = slot_view(&g->slots, g->member);
    g->base                    = atomic_load_explicit(slot_seq(&own), memory_order_relaxed);
    return HTP_STATUS_OK;
}

// Signal barrier k + 1 with status, then wait for every member to reach it.
static int group_barrier(struct htp_group * g, uint32_t status) {
    uint32_t               seq = g->base + ++g->k;
    struct htp_tensor_view own = slot_view(&g->slots, g->member);
    htp_op_fence_signal(&own, seq, status);
    for (uint32_t i = 0; i < g->count; i++) {
        if (i == g->member) {
            continue;
        }
        struct htp_tensor_view v  = slot_view(&g->slots, i);
        int                    rc = htp_op_fence_wait(&v, seq, g->cancel);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
    }
    return (int)status;
}

void htp_group_fail(struct htp_group * g, int status) {
    // Past every barrier this batch can hold, so no member waits on us again.
    struct htp_tensor_view own = slot_view(&g->slots, g->member);
    htp_op_fence_signal(&own, g->base + g->n_ops + 1, (uint32_t)(status ? status : HTP_STATUS_INTERNAL_ERR));
}

// Row split. Which ops, and which of their operands are cut along the split
// dimension: all sources of the same extent there (generic), or only src[1]
// (MUL_MAT: src0 holds the weights, every member needs all of it).
enum split_kind { SPLIT_NONE, SPLIT_ROWS, SPLIT_MUL_MAT };

static enum split_kind split_kind_of(const struct htp_op_ctx * ctx) {
    switch (ctx->op.desc->opcode) {
        case HTP_OP_ADD:
        case HTP_OP_SUB:
        case HTP_OP_MUL:
        case HTP_OP_DIV:
        case HTP_OP_SCALE:
        case HTP_OP_CLAMP:
        case HTP_OP_SQR:
        case HTP_OP_SQRT:
        case HTP_OP_UNARY:
        case HTP_OP_GLU:
        case HTP_OP_RMS_NORM:
        case HTP_OP_NORM:
        case HTP_OP_L2_NORM:
        case HTP_OP_CPY:
            return SPLIT_ROWS;
        case HTP_OP_MUL_MAT:
            return SPLIT_MUL_MAT;
        default:
            return SPLIT_NONE;
    }
}

static void slice_view(struct htp_tensor_view * v, int d, int64_t lo, int64_t hi) {
    const uint64_t skip = (uint64_t)(lo * v->nb[d]);
    v->data += skip;
    v->ne[d]  = hi - lo;
    v->extent = v->extent > skip ? v->extent - skip : 0;  // still an upper bound
}

// Cut ctx's operands to member g->member's rows into views[] (and point ctx
// at them). Returns 1 if the op is split (*empty = this member has no rows),
// 0 if it cannot be split.
static int group_slice(const struct htp_group * g, struct htp_op_ctx * ctx, struct htp_tensor_view * views,
                       int * empty) {
    enum split_kind                kind = split_kind_of(ctx);
    const struct htp_tensor_view * dst  = ctx->op.dst[0];
    if (kind == SPLIT_NONE || dst == NULL || ctx->op.dst[1] != NULL) {
        return 0;
    }
    int d = 3;
    while (d > 0 && dst->ne[d] <= 1) {
        d--;
    }
    if (d == 0) {
        return 0;  // one row: nothing to share
    }
    if (kind == SPLIT_MUL_MAT && d != 1) {
        return 0;  // batched matmuls broadcast src0 over dims 2, 3: keep it simple
    }
    const int64_t                  rows = dst->ne[d];
    const int64_t                  lo   = rows * g->member / g->count;
    const int64_t                  hi   = rows * (g->member + 1) / g->count;
    const struct htp_tensor_view * src[HTP_OP_MAX_INPUTS];
    int                            n = 0;
    // Decide every operand before touching ctx: an op found unsplittable
    // halfway runs whole, on member 0.
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        const struct htp_tensor_view * s = ctx->op.src[i];
        src[i]                           = s;
        if (s == NULL) {
            continue;
        }
        int cut;
        if (kind == SPLIT_MUL_MAT) {
            cut = i == 1;
            if (cut && s->ne[1] != dst->ne[1]) {
                return 0;
            }
        } else if (s->ne[d] == dst->ne[d]) {
            // Same rows as dst. CPY maps rows by shape: only equal shapes keep the mapping.
            cut = 1;
            if (ctx->op.desc->opcode == HTP_OP_CPY) {
                for (int k = 0; k < HTP_OP_MAX_DIMS; k++) {
                    if (s->ne[k] != dst->ne[k]) {
                        return 0;
                    }
                }
            }
        } else if (s->ne[d] == 1) {
            cut = 0;  // broadcast
        } else {
            return 0;  // repeated along d: the kernel's row mapping is not a slice
        }
        views[n] = *s;
        if (cut) {
            slice_view(&views[n], d, lo, hi);
        }
        src[i] = &views[n++];
    }
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        ctx->op.src[i] = src[i];
    }
    views[n] = *dst;
    slice_view(&views[n], d, lo, hi);
    ctx->op.dst[0] = &views[n];
    *empty         = hi == lo;
    return 1;
}

int htp_group_run_op(struct htp_group * g, struct htp_op_ctx * ctx) {
    struct htp_tensor_view views[HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS];
    int                    empty = 0;
    int                    rc    = HTP_STATUS_OK;
    if (group_slice(g, ctx, views, &empty)) {
        if (!empty) {
            rc = htp_kernel_run(ctx);
        }
    } else if (g->member == 0) {
        rc = htp_kernel_run(ctx);
    }
    if (rc != HTP_STATUS_OK) {
        htp_group_fail(g, rc);
        return rc;
    }
    return group_barrier(g, HTP_STATUS_OK);
}
