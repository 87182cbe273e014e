// rows-ops.c: GET_ROWS (gather rows by index) and SET_ROWS (scatter rows by
// index). Indices come from shared memory, so every one is checked against the
// row count as it is read; an index out of range stops that row, and the op
// answers HTP_STATUS_INVAL_PARAMS (rows with good indices may have been
// written, as when a DSP kernel stops mid-op).
//
//   GET_ROWS  src0 [ne0, n, ne2, ne3] F32/F16/BF16 (or I32, into I32); src1 I32 [m, ne2, ne3]
//             dst [ne0, m, ne2, ne3]:  dst[:, i, j, k] = src0[:, src1[i, j, k], j, k]
//   SET_ROWS  src0 values [ne0, m, ne2, ne3] F32/F16/BF16; src1 I64 or I32 [m, b2 | ne2, b3 | ne3]
//             dst [ne0, n, ne2, ne3] (the tensor ggml_set_rows writes into, also src2):
//             dst[:, src1[i, j % b2, k % b3], j, k] = src0[:, i, j, k]

#include <stdatomic.h>

#include "contract/iq-tiles.h"
#include "contract/type-traits.h"
#include "kernels.h"
#include "kernel-util.h"
#include "kquant-dot.h"
#include "matmul.h"
#include "quant.h"
#include "vec.h"

struct rows_args {
    const struct htp_tensor_view * src;  // rows read from
    const struct htp_tensor_view * idx;
    const struct htp_tensor_view * dst;  // rows written to
    // Set by any worker that meets a bad index. Relaxed: nothing else is
    // published through it, and ctx->run returning orders it before the read.
    atomic_int bad_index;
};

// Quantized rows (quant.h): GET_ROWS may read Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL and MXFP4 rows, plain or tiled, and Q2_K, Q3_K, IQ4_XS plain rows (x is then unused: row (i1, i2, i3) is found
// in the tiles); SET_ROWS may write the KV-cache quant types (plain rows).
static void rows_copy_q(const struct htp_tensor_view * src, const struct htp_tensor_view * dst, uint8_t * y,
                        const uint8_t * x, int64_t n, int64_t i1, int64_t i2, int64_t i3) {
    float buf[HTP_CHUNK];
    for (int64_t c = 0; c < n; c += HTP_CHUNK) {  // HTP_CHUNK is a multiple of 32
        const int64_t k = htp_min64(HTP_CHUNK, n - c);
        if (src->flags & HTP_TENSOR_TILED) {
            htp_quant_dequant_tiled_row(src, i1, i2, i3, c, k, buf);
        } else if (htp_quant_can_dequant_row(src->type)) {  // HTP_CHUNK: whole blocks of 32 or 256
            htp_quant_dequant_row(src->type, x + c / htp_type_traits(src->type)->blck_size * src->nb[0], buf, k);
        } else {
            htp_row_load_f32(buf, x + c * src->nb[0], src->nb[0], src->type, k);
        }
        if (htp_quant_can_quantize(dst->type)) {
            htp_quant_quantize_row(dst->type, buf, y + c / 32 * dst->nb[0], k);
        } else {
            htp_row_store_f32(y + c * dst->nb[0], dst->nb[0], dst->type, buf, k);
        }
    }
}

// Rows of this type are blocks of 32 that quant.h reads or writes.
static int rows_type_q(uint32_t type) {
    return htp_quant_can_dequant_row(type) || htp_quant_can_quantize(type);
}

// One row of n elements from (x, type/stride of src) to (y, type/stride of dst).
static void rows_copy(const struct htp_tensor_view * src, const struct htp_tensor_view * dst, uint8_t * y,
                      const uint8_t * x, int64_t n) {
    if (src->type == HTP_TYPE_I32) {  // I32 rows (GET_ROWS of I32 keeps the type): a copy
        if (src->nb[0] == 4 && dst->nb[0] == 4) {
            memmove(y, x, (size_t)n * 4);  // the two views may overlap
            return;
        }
        for (int64_t i = 0; i < n; i++) {
            memmove(y + i * dst->nb[0], x + i * src->nb[0], 4);
        }
        return;
    }
    if (src->type == dst->type && htp_view_rows_packed(src) && htp_view_rows_packed(dst)) {
        memmove(y, x, (size_t)(n * src->nb[0]));  // the two views may overlap
        return;
    }
    float buf[HTP_CHUNK];
    for (int64_t c = 0; c < n; c += HTP_CHUNK) {
        const int64_t k = htp_min64(HTP_CHUNK, n - c);
        htp_row_load_f32(buf, x + c * src->nb[0], src->nb[0], src->type, k);
        htp_row_store_f32(y + c * dst->nb[0], dst->nb[0], dst->type, buf, k);
    }
}

static int64_t rows_read_index(const struct htp_tensor_view * idx, int64_t i0, int64_t i1, int64_t i2) {
    const uint8_t * p = idx->data + i0 * idx->nb[0] + i1 * idx->nb[1] + i2 * idx->nb[2];
    if (idx->type == HTP_TYPE_I64) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

// ---------------------------------------------------------------------------
// GET_ROWS
// ---------------------------------------------------------------------------

static void get_rows_job(void * arg, uint32_t ith, uint32_t nth) {
    struct rows_args *            a   = arg;
    const struct htp_tensor_view *src = a->src, *idx = a->idx, *dst = a->dst;

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;  // dst row (i1, i2, i3) <- src row (idx[i1, i2, i3], i2, i3)
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        const int64_t r = rows_read_index(idx, i1, i2, i3);
        if (r < 0 || r >= src->ne[1]) {
            atomic_store_explicit(&a->bad_index, 1, memory_order_relaxed);
            continue;
        }
        if (rows_type_q(src->type)) {
            rows_copy_q(src, dst, htp_view_row(dst, i1, i2, i3), htp_view_row(src, r, i2, i3), dst->ne[0], r, i2, i3);
        } else {
            rows_copy(src, dst, htp_view_row(dst, i1, i2, i3), htp_view_row(src, r, i2, i3), dst->ne[0]);
        }
    }
}

int htp_op_get_rows_run(struct htp_op_ctx * ctx) {
    if (htp_kq_type_ok(ctx->op.src[0]->type)) {
        return htp_kq_get_rows_run(ctx);
    }
    if (htp_iq_type_ok(ctx->op.src[0]->type)) {
        return htp_iq_get_rows_run(ctx);
    }
    struct rows_args a = {ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0], 0};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, get_rows_job, &a);
    return atomic_load_explicit(&a.bad_index, memory_order_relaxed) ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// SET_ROWS
// ---------------------------------------------------------------------------

static void set_rows_job(void * arg, uint32_t ith, uint32_t nth) {
    struct rows_args *            a   = arg;
    const struct htp_tensor_view *src = a->src, *idx = a->idx, *dst = a->dst;

    int64_t r0, r1;
    htp_split(htp_view_nrows(src), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;  // src row (i1, i2, i3) -> dst row (idx[i1, i2 % b2, i3 % b3], i2, i3)
        htp_row_index(src->ne, ir, &i1, &i2, &i3);
        const int64_t r = rows_read_index(idx, i1, i2 % idx->ne[1], i3 % idx->ne[2]);
        if (r < 0 || r >= dst->ne[1]) {
            atomic_store_explicit(&a->bad_index, 1, memory_order_relaxed);
            continue;
        }
        if (rows_type_q(dst->type)) {
            rows_copy_q(src, dst, htp_view_row(dst, r, i2, i3), htp_view_row(src, i1, i2, i3), src->ne[0], i1, i2, i3);
        } else {
            rows_copy(src, dst, htp_view_row(dst, r, i2, i3), htp_view_row(src, i1, i2, i3), src->ne[0]);
        }
    }
}

int htp_op_set_rows_run(struct htp_op_ctx * ctx) {
    struct rows_args a = {ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0], 0};
    if (htp_view_nelements(a.src) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, set_rows_job, &a);
    return atomic_load_explicit(&a.bad_index, memory_order_relaxed) ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}
