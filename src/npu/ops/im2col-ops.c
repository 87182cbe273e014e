// im2col-ops.c: IM2COL, the patch gather that turns a convolution into a
// matrix multiplication (vision encoders, audio front ends).
//
//   src0 kernel: only its shape is used: [KW, KH, IC, OC] (2D) or [KW, IC, OC] (1D)
//   src1 image   [IW, IH, IC, N] (2D) or [IW, IC, N] (1D)      F32, or F16 when dst is F16
//   dst          [IC * KH * KW, OW, OH, N] (2D) or [IC * KW, OW, N] (1D)   F32/F16, packed rows
//   params: [0] s0 [1] s1 [2] p0 [3] p1 [4] d0 [5] d1 (stride, padding, dilation
//           along W and H), [6] is_2D
//
//   dst[(ic * KH + kh) * KW + kw, ow, oh, n] = image[ow*s0 + kw*d0 - p0, oh*s1 + kh*d1 - p1, ic, n]
//   (0 where that lies in the padding). Workers split the output rows.

#include "contract/ops/im2col-check.h"
#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

// Bytes of image row (ih, ic, n).
static const uint8_t * im2col_src_row(const struct htp_im2col_params * a, int64_t ih, int64_t ic, int64_t n) {
    const struct htp_tensor_view * s = a->src;
    return a->is_2d ? s->data + ih * s->nb[1] + ic * s->nb[2] + n * s->nb[3] : s->data + ic * s->nb[1] + n * s->nb[2];
}

static void im2col_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct htp_im2col_params * a   = arg;
    const struct htp_tensor_view *   dst = a->dst, *src = a->src;
    const int64_t                    kk = a->KH * a->KW;
    int64_t                          r0, r1;
    htp_split(a->N * a->OH * a->OW, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t ow = r % a->OW, oh = (r / a->OW) % a->OH, n = r / (a->OW * a->OH);
        uint8_t *     y = a->is_2d ? dst->data + ow * dst->nb[1] + oh * dst->nb[2] + n * dst->nb[3]
                                   : dst->data + ow * dst->nb[1] + n * dst->nb[2];
        for (int64_t ic = 0; ic < a->IC; ic++) {
            for (int64_t kh = 0; kh < a->KH; kh++) {
                const int64_t   ih  = oh * a->s1 + kh * a->d1 - a->p1;
                const int       row = a->is_2d ? (ih >= 0 && ih < a->IH) : 1;
                const uint8_t * xr  = row ? im2col_src_row(a, a->is_2d ? ih : 0, ic, n) : NULL;
                for (int64_t kw = 0; kw < a->KW; kw++) {
                    const int64_t iw = ow * a->s0 + kw * a->d0 - a->p0;
                    const int64_t o  = ic * kk + kh * a->KW + kw;
                    const int     in = xr && iw >= 0 && iw < a->IW;
                    if (dst->type == HTP_TYPE_F32) {
                        float f = 0.0f;
                        if (in) {
                            memcpy(&f, xr + iw * 4, 4);
                        }
                        memcpy(y + o * 4, &f, 4);
                    } else {
                        uint16_t h = 0;
                        if (in && src->type == HTP_TYPE_F16) {
                            memcpy(&h, xr + iw * 2, 2);
                        } else if (in) {
                            float f;
                            memcpy(&f, xr + iw * 4, 4);
                            h = htp_fp32_to_fp16(f);
                        }
                        memcpy(y + o * 2, &h, 2);
                    }
                }
            }
        }
    }
}

int htp_op_im2col_run(struct htp_op_ctx * ctx) {
    struct htp_im2col_params a;
    const int                st = htp_im2col_read(&ctx->op, &a);
    if (st != HTP_STATUS_OK) {
        return st;
    }
    if (htp_view_nelements(a.dst) > 0) {
        ctx->run(ctx->pool, im2col_job, &a);
    }
    return HTP_STATUS_OK;
}
