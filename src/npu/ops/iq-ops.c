// iq-ops.c: GET_ROWS and CPY (into F32) of the IQ codebook types
// (contract/iq-tiles.h's list), bit-exact with ggml's to_float: each block
// decoded (iq-decode.h), then weight e = (d * sc[e / 16]) * q[e].
//
//   GET_ROWS  src0 [K, n, ne2, ne3] IQ, plain rows or tiled (iq-tiles.h);
//             src1 I32 [m, ne2, ne3]; dst [K, m, ne2, ne3] F32/F16/BF16
//   CPY       src plain rows of whole blocks, any row strides; dst F32 of
//             the same shape, any strides (cpy-check.c)
//
// Both refuse (HTP_STATUS_NO_SUPPORT) when the host sent no codebooks.

#include <stdatomic.h>
#include <string.h>

#include "contract/iq-tiles.h"
#include "iq-dot.h"
#include "kernel-util.h"
#include "matmul.h"
#include "vec.h"

struct iq_rows {
    const struct htp_tensor_view *src, *idx, *dst;
    htp_iq_decode_fn              decode;
    const struct htp_codebooks *  cb;
    atomic_int                    bad_index;  // relaxed: read after ctx->run returns
};

static void iq_get_rows_job(void * arg, uint32_t ith, uint32_t nth) {
    struct iq_rows *               a   = arg;
    const struct htp_tensor_view * src = a->src, *idx = a->idx, *dst = a->dst;
    const struct htp_tile_format * f      = htp_tile_format(src->type);
    const int64_t                  nsb    = src->ne[0] / HTP_IQ_TILE_QK;
    const int                      tiled  = (src->flags & HTP_TENSOR_TILED) != 0;
    const size_t                   gbytes = htp_tiled_group_bytes(f, src->ne[0]);
    float                          buf[HTP_IQ_TILE_QK];

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        int32_t r;
        memcpy(&r, idx->data + i1 * idx->nb[0] + i2 * idx->nb[1] + i3 * idx->nb[2], sizeof r);
        if (r < 0 || r >= src->ne[1]) {
            atomic_store_explicit(&a->bad_index, 1, memory_order_relaxed);
            continue;
        }
        const uint8_t * m = src->data + i2 * src->nb[2] + i3 * src->nb[3];
        uint8_t *       y = htp_view_row(dst, i1, i2, i3);
        for (int64_t b = 0; b < nsb; b++) {
            const uint8_t * blk;
            if (tiled) {  // row r % 16 of tile b of its group: the block itself
                blk = htp_tiled_q(f, m + (size_t)(r / HTP_TILE_ROWS) * gbytes, b) +
                      (size_t)(r % HTP_TILE_ROWS) * f->blck_bytes;
            } else {
                blk = m + r * src->nb[1] + b * src->nb[0];
            }
            htp_iq_dequant_block(a->decode, a->cb, blk, buf);
            htp_row_store_f32(y + b * HTP_IQ_TILE_QK * dst->nb[0], dst->nb[0], dst->type, buf, HTP_IQ_TILE_QK);
        }
    }
}

int htp_iq_get_rows_run(struct htp_op_ctx * ctx) {
    struct iq_rows a = {
        ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0], htp_iq_decoder(ctx->op.src[0]->type), ctx->codebooks, 0};
    if (!a.decode || !a.cb) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, iq_get_rows_job, &a);
    return atomic_load_explicit(&a.bad_index, memory_order_relaxed) ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}

static void iq_cpy_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct iq_rows * a = arg;
    float                  buf[HTP_IQ_TILE_QK];
    int64_t                r0, r1;
    htp_split(htp_view_nrows(a->src), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(a->src->ne, ir, &i1, &i2, &i3);
        const uint8_t * x = htp_view_row(a->src, i1, i2, i3);
        uint8_t *       y = htp_view_row(a->dst, i1, i2, i3);
        for (int64_t b = 0; b < a->src->ne[0] / HTP_IQ_TILE_QK; b++) {
            htp_iq_dequant_block(a->decode, a->cb, x + b * a->src->nb[0], buf);
            htp_row_store_f32(y + b * HTP_IQ_TILE_QK * a->dst->nb[0], a->dst->nb[0], a->dst->type, buf, HTP_IQ_TILE_QK);
        }
    }
}

int htp_iq_cpy_run(struct htp_op_ctx * ctx) {
    struct iq_rows a = {ctx->op.src[0], NULL, ctx->op.dst[0], htp_iq_decoder(ctx->op.src[0]->type), ctx->codebooks, 0};
    if (!a.decode || !a.cb) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_view_nelements(a.src) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, iq_cpy_job, &a);
    return HTP_STATUS_OK;
}
