// allreduce-ops.c: ALLREDUCE, the sum of one tensor over 2 to 4 ranks (NPUs)
// in place, for ggml's tensor split (the host's comm context, comm.c).
//
// Every rank runs one ALLREDUCE op in its own batch; the ops meet through
// fence slots, one per rank (operand layout in htp-proto.h):
//
//   1. entry: a rank signals its slot with seq_entry (release: its tensor,
//      written by earlier ops of its batch, is complete) and waits until every
//      slot reaches seq_entry (acquire: every rank's tensor is complete);
//   2. reduce: each element is summed over the ranks in rank order, in F32,
//      and the sum is stored into every rank's tensor. Which rank sums what:
//      reduce-scatter (mode 1): rank r the r-th of n equal slices; root
//      (mode 0): rank 0 everything, the others nothing. Either way each
//      element is written by one rank only, so no rank reads an element that
//      another has already overwritten, and all ranks end bitwise equal;
//   3. exit: signal seq_exit with the rank's status and wait for every slot
//      to reach it: once it leaves, the sums in its tensor are all written.
//
// A failure (a wait that times out, a peer's error found in its slot) is
// signalled at exit with that status so the peers fail at once as well.

#include "fp16.h"
#include "kernel-util.h"
#include "op-families.h"

#define AR_ALIGN 64  // elements: slices start on cache-line multiples for both types

struct ar_args {
    uint8_t * data[HTP_ALLREDUCE_MAX_RANKS];  // each rank's tensor
    uint32_t  n_ranks;
    uint32_t  type;    // HTP_TYPE_F32 or HTP_TYPE_F16
    int64_t   lo, hi;  // this rank's elements
};

static void ar_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct ar_args * a = arg;
    int64_t                i0, i1;
    htp_split(a->hi - a->lo, ith, nth, &i0, &i1);
    i0 += a->lo;
    i1 += a->lo;
    float acc[HTP_CHUNK];
    for (int64_t c = i0; c < i1; c += HTP_CHUNK) {
        const int64_t n = htp_min64(HTP_CHUNK, i1 - c);
        if (a->type == HTP_TYPE_F32) {
            const float * s0 = (const float *)(const void *)a->data[0] + c;
            for (int64_t i = 0; i < n; i++) {
                acc[i] = s0[i];
            }
            for (uint32_t r = 1; r < a->n_ranks; r++) {
                const float * s = (const float *)(const void *)a->data[r] + c;
                for (int64_t i = 0; i < n; i++) {
                    acc[i] += s[i];
                }
            }
            for (uint32_t r = 0; r < a->n_ranks; r++) {
                memcpy((float *)(void *)a->data[r] + c, acc, (size_t)n * sizeof(float));
            }
        } else {
            float tmp[HTP_CHUNK];
            htp_fp16_to_fp32_row((const uint16_t *)(const void *)a->data[0] + c, acc, n);
            for (uint32_t r = 1; r < a->n_ranks; r++) {
                htp_fp16_to_fp32_row((const uint16_t *)(const void *)a->data[r] + c, tmp, n);
                for (int64_t i = 0; i < n; i++) {
                    acc[i] += tmp[i];
                }
            }
            uint16_t h[HTP_CHUNK];
            htp_fp32_to_fp16_row(acc, h, n);
            for (uint32_t r = 0; r < a->n_ranks; r++) {
                memcpy((uint16_t *)(void *)a->data[r] + c, h, (size_t)n * sizeof(uint16_t));
            }
        }
    }
}

// Wait until every rank's slot (but ours) reaches seq.
static int wait_all(const struct htp_op_ctx * ctx, uint32_t n_ranks, uint32_t rank, uint32_t seq) {
    for (uint32_t r = 0; r < n_ranks; r++) {
        if (r == rank) {
            continue;
        }
        int rc = htp_op_fence_wait(ctx->op.src[n_ranks + r], seq, ctx->cancel);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
    }
    return HTP_STATUS_OK;
}

int htp_op_allreduce_run(struct htp_op_ctx * ctx) {
    const int32_t *                p         = ctx->op.desc->params;
    const uint32_t                 seq_entry = (uint32_t)p[0];
    const uint32_t                 seq_exit  = (uint32_t)p[1];
    const uint32_t                 rank      = (uint32_t)p[2];
    const uint32_t                 n_ranks   = (uint32_t)p[3];
    const struct htp_tensor_view * own_slot  = ctx->op.src[n_ranks + rank];

    htp_op_fence_signal(own_slot, seq_entry, HTP_STATUS_OK);
    int rc = wait_all(ctx, n_ranks, rank, seq_entry);
    if (rc == HTP_STATUS_OK) {
        struct ar_args a = {.n_ranks = n_ranks, .type = ctx->op.src[0]->type};
        for (uint32_t r = 0; r < n_ranks; r++) {
            a.data[r] = ctx->op.src[r]->data;
        }
        const int64_t total = htp_view_nelements(ctx->op.src[0]);
        if (p[4] == 1) {
            // Equal slices rounded up to AR_ALIGN elements; the last ones may be short or empty.
            int64_t per = (total + n_ranks - 1) / n_ranks;
            per         = (per + AR_ALIGN - 1) / AR_ALIGN * AR_ALIGN;
            a.lo        = htp_min64(total, per * rank);
            a.hi        = htp_min64(total, a.lo + per);
        } else {
            a.lo = 0;
            a.hi = rank == 0 ? total : 0;
        }
        if (a.hi > a.lo) {
            if (ctx->run != NULL && a.hi - a.lo >= 4 * HTP_CHUNK) {
                ctx->run(ctx->pool, ar_job, &a);
            } else {
                ar_job(&a, 0, 1);
            }
        }
    }
    // Release at exit publishes our sums (the pool's join ordered the workers' stores before it).
    htp_op_fence_signal(own_slot, seq_exit, (uint32_t)rc);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    return wait_all(ctx, n_ranks, rank, seq_exit);
}
