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

// CPY to F32: what the rows job reads.
struct iq_rows {
    const struct htp_tensor_view *src, *dst;
    htp_iq_decode_fn              decode;
    const struct htp_codebooks *  cb;
};

// GET_ROWS of IQ rows: the K-quant GET_ROWS job, which takes either family.
int htp_iq_get_rows_run(struct htp_op_ctx * ctx) {
    return htp_kq_get_rows_run(ctx);
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
    struct iq_rows a = {ctx->op.src[0], ctx->op.dst[0], htp_iq_decoder(ctx->op.src[0]->type), ctx->codebooks};
    if (!a.decode || !a.cb) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_view_nelements(a.src) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, iq_cpy_job, &a);
    return HTP_STATUS_OK;
}
