// norm-ops.c: normalisations over rows (dim 0).
//
//   RMS_NORM  y = x / sqrt(mean(x^2) + eps)
//   NORM      y = (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)
//   L2_NORM   y = x / max(sqrt(sum(x^2)), eps)
//
//   src0 [ne0, ne1, ne2, ne3] -> dst same shape (may alias src0: ggml has
//   in-place forms); params[0] = eps (float, >= 0)
//
// Any strides, F32/F16/BF16 in and out. Packed F32 rows are normalised
// through dst in place; other layouts take chunked passes over the row
// (statistics first, then the scaled row) so no row-sized scratch is needed.
// Each pass reads a chunk before it writes it, so dst aliasing src0 is safe.
//
//   RMS_NORM_MUL (fused, proto/htp-proto.h)  y = RMS_NORM(x) * w
//
//   src1 w is tiled over x (ggml's broadcast): the normalised row, kept in
//   F32, is multiplied by w's row (i1 % ne11, i2 % ne12, i3 % ne13), element
//   i0 % ne10, before it is stored: one pass where RMS_NORM and MUL took two
//   and a row-sized intermediate.

#include <math.h>

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

enum norm_kind { NORM_RMS, NORM_MEAN, NORM_L2 };

struct norm_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * dst;
    const struct htp_tensor_view * mul;  // RMS_NORM_MUL's w, else NULL
    enum norm_kind                 kind;
    float                          eps;
};

static int norm_kind_of(uint32_t opcode, enum norm_kind * kind) {
    switch (opcode) {
        case HTP_OP_RMS_NORM:
        case HTP_OP_RMS_NORM_MUL:
            *kind = NORM_RMS;
            return 1;
        case HTP_OP_NORM:
            *kind = NORM_MEAN;
            return 1;
        case HTP_OP_L2_NORM:
            *kind = NORM_L2;
            return 1;
        default:
            return 0;
    }
}

// sum (x[i] - m)^2.
static float norm_sumsq_centered(int64_t n, const float * x, float m) {
    const htp_vr vm = htp_vr_splat(m);
    htp_vr       s0 = htp_vr_splat(0.0f), s1 = s0;
    int64_t      i = 0;
    for (; i + 2 * HTP_VR_N <= n; i += 2 * HTP_VR_N) {
        const htp_vr a = htp_vr_load(x + i) - vm, b = htp_vr_load(x + i + HTP_VR_N) - vm;
        s0 = htp_vr_fma(a, a, s0);
        s1 = htp_vr_fma(b, b, s1);
    }
    for (; i < n; i += HTP_VR_N) {
        const int64_t k = n - i < HTP_VR_N ? n - i : HTP_VR_N;
        // Padding lanes load 0 and subtract m: mask them back to 0.
        htp_vr a = htp_vr_load_n(x + i, k) - vm;
        for (int64_t j = k; j < HTP_VR_N; j++) {
            a[j] = 0.0f;
        }
        s0 = htp_vr_fma(a, a, s0);
    }
    return htp_vr_hsum(s0 + s1);
}

// The row's (shift, scale): y = (x - shift) * scale, from the row's sum and
// sum of squares about the mean (NORM) or about zero (RMS, L2).
static void norm_coeffs(const struct norm_args * a, int64_t ne0, float sum, float sumsq, float * shift, float * scale) {
    *shift = a->kind == NORM_MEAN ? sum / (float)ne0 : 0.0f;
    *scale = a->kind == NORM_L2 ? 1.0f / fmaxf(sqrtf(sumsq), a->eps) : 1.0f / sqrtf(sumsq / (float)ne0 + a->eps);
}

// buf[0, n) *= w's elements c .. c + n of a row repeating every w->ne[0]
// (wbuf: n floats of room).
static void norm_mul_chunk(const struct htp_tensor_view * w, const uint8_t * wrow, int64_t c, int64_t n, float * buf,
                           float * wbuf) {
    const int64_t wn0 = w->ne[0];
    for (int64_t i = 0; i < n;) {
        const int64_t k = (c + i) % wn0, len = htp_min64(n - i, wn0 - k);
        htp_row_load_f32(wbuf + i, wrow + k * w->nb[0], w->nb[0], w->type, len);
        i += len;
    }
    htp_vec_binop_f32(HTP_VEC_MUL, n, buf, buf, wbuf);
}

static void norm_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct norm_args *      a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst, *w = a->mul;
    const int64_t                 ne0  = src0->ne[0];
    const int                     mean = a->kind == NORM_MEAN;
    // In place through dst when all is packed F32 (w's rows as long as x's).
    const int fast = htp_view_is_f32_packed(src0) && htp_view_is_f32_packed(dst) &&
                     (!w || (htp_view_is_f32_packed(w) && w->ne[0] == ne0));

    int64_t r0, r1;
    htp_split(htp_view_nrows(src0), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(src0->ne, ir, &i1, &i2, &i3);
        const uint8_t * x    = htp_view_row(src0, i1, i2, i3);
        uint8_t *       y    = htp_view_row(dst, i1, i2, i3);
        const uint8_t * wrow = w ? htp_view_row(w, i1 % w->ne[1], i2 % w->ne[2], i3 % w->ne[3]) : NULL;
        float           shift, scale;
        if (fast) {
            const float * xf  = (const float *)(const void *)x;
            float *       yf  = (float *)(void *)y;
            const float   sum = mean ? htp_vec_sum_f32(ne0, xf) : 0.0f;
            const float   ssq = norm_sumsq_centered(ne0, xf, mean ? sum / (float)ne0 : 0.0f);
            norm_coeffs(a, ne0, sum, ssq, &shift, &scale);
            // (x - shift) * scale = x * scale + (-shift * scale) would round
            // twice differently; subtract first, as ggml does.
            if (mean) {
                htp_vec_scale_bias_f32(ne0, yf, xf, 1.0f, -shift);
                xf = yf;
            }
            htp_vec_scale_bias_f32(ne0, yf, xf, scale, 0.0f);
            if (w) {
                htp_vec_binop_f32(HTP_VEC_MUL, ne0, yf, yf, (const float *)(const void *)wrow);
            }
            continue;
        }
        float buf[HTP_CHUNK], wbuf[HTP_CHUNK];
        float sum = 0.0f, ssq = 0.0f;
        if (mean) {
            for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
                const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
                htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
                sum += htp_vec_sum_f32(n, buf);
            }
        }
        const float m = mean ? sum / (float)ne0 : 0.0f;
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
            ssq += norm_sumsq_centered(n, buf, m);
        }
        norm_coeffs(a, ne0, sum, ssq, &shift, &scale);
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
            if (mean) {
                htp_vec_scale_bias_f32(n, buf, buf, 1.0f, -shift);
            }
            htp_vec_scale_bias_f32(n, buf, buf, scale, 0.0f);
            if (w) {
                norm_mul_chunk(w, wrow, c, n, buf, wbuf);
            }
            htp_row_store_f32(y + c * dst->nb[0], dst->nb[0], dst->type, buf, n);
        }
    }
}

int htp_op_norm_run(struct htp_op_ctx * ctx) {
    struct norm_args a = {ctx->op.src[0], ctx->op.dst[0], NULL, NORM_RMS, htp_param_f32(ctx->op.desc, 0)};
    if (ctx->op.desc->opcode == HTP_OP_RMS_NORM_MUL) {
        a.mul = ctx->op.src[1];
    }
    if (!norm_kind_of(ctx->op.desc->opcode, &a.kind)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, norm_job, &a);
    return HTP_STATUS_OK;
}
