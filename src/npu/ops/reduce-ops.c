// reduce-ops.c: reductions and scans along rows (dim 0).
//
//   SUM_ROWS  src0 [ne0, ne1, ne2, ne3] -> dst [1, ne1, ne2, ne3]:  dst[0, i1, i2, i3] = sum_i0 src0[i0, i1, i2, i3]
//   CUMSUM    src0 [ne0, ne1, ne2, ne3] -> dst same shape:         dst[i0, ...] = sum_{j <= i0} src0[j, ...]
//
// Any strides, F32/F16/BF16 in and out, accumulated in fp32. Rows are split
// across workers; a sum uses vector accumulators, a scan runs along its row
// one chunk at a time carrying the running total (dst may alias src0: each
// chunk is read before it is written).

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct reduce_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * dst;
};

// ---------------------------------------------------------------------------
// SUM_ROWS
// ---------------------------------------------------------------------------

static void sum_rows_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct reduce_args *    a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    const int64_t                 ne0 = src0->ne[0];
    const int fast = src0->type == HTP_TYPE_F32 && htp_view_rows_packed(src0) && ((uintptr_t)src0->data & 3) == 0 &&
                     src0->nb[1] % 4 == 0 && src0->nb[2] % 4 == 0 && src0->nb[3] % 4 == 0;

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        const uint8_t * x   = htp_view_row(src0, i1, i2, i3);
        float           sum = 0.0f;
        if (fast) {
            sum = htp_vec_sum_f32(ne0, (const float *)(const void *)x);
        } else {
            float buf[HTP_CHUNK];
            for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
                const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
                htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
                sum += htp_vec_sum_f32(n, buf);
            }
        }
        htp_row_store_f32(htp_view_row(dst, i1, i2, i3), dst->nb[0], dst->type, &sum, 1);
    }
}

int htp_op_sum_rows_run(struct htp_op_ctx * ctx) {
    struct reduce_args a = {ctx->op.src[0], ctx->op.dst[0]};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, sum_rows_job, &a);
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// CUMSUM
// ---------------------------------------------------------------------------

// y[i] = carry + x[0] + ... + x[i] for one chunk; returns the new carry.
static float cumsum_chunk(int64_t n, float * y, const float * x, float carry) {
    for (int64_t i = 0; i < n; i++) {
        carry += x[i];
        y[i] = carry;
    }
    return carry;
}

static void cumsum_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct reduce_args *    a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    const int64_t                 ne0  = src0->ne[0];
    const int                     fast = htp_view_is_f32_packed(src0) && htp_view_is_f32_packed(dst);

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        const uint8_t * x = htp_view_row(src0, i1, i2, i3);
        uint8_t *       y = htp_view_row(dst, i1, i2, i3);
        if (fast) {
            cumsum_chunk(ne0, (float *)(void *)y, (const float *)(const void *)x, 0.0f);
            continue;
        }
        float buf[HTP_CHUNK];
        float carry = 0.0f;
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
            carry = cumsum_chunk(n, buf, buf, carry);
            htp_row_store_f32(y + c * dst->nb[0], dst->nb[0], dst->type, buf, n);
        }
    }
}

int htp_op_cumsum_run(struct htp_op_ctx * ctx) {
    struct reduce_args a = {ctx->op.src[0], ctx->op.dst[0]};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, cumsum_job, &a);
    return HTP_STATUS_OK;
}
