// norm-ops.c: RMS_NORM over rows: y = x / sqrt(mean(x^2) + eps).
//
//   src0 [ne0, ne1, ne2, ne3] -> dst same shape; params[0] = eps (float, >= 0)
//
// Any strides, F32/F16/BF16 in and out. Packed F32 rows are normalised in
// place; other layouts take two chunked passes over the row (sum of squares,
// then scale) so no row-sized scratch is needed.

#include <math.h>

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct rms_norm_args {
    const struct htp_tensor_view *src0;
    const struct htp_tensor_view *dst;
    float                         eps;
};

int htp_op_rms_norm_check(const struct htp_op_ctx *ctx) {
    const struct htp_tensor_view *src0 = ctx->src[0], *dst = ctx->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const float eps = htp_param_f32(ctx->desc, 0);
    if (!(eps >= 0.0f)) {  // also refuses NaN
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

static void rms_norm_job(void *arg, uint32_t ith, uint32_t nth) {
    const struct rms_norm_args   *a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    const int64_t                 ne0  = src0->ne[0];
    const int                     fast = htp_view_is_f32_packed(src0) && htp_view_is_f32_packed(dst);

    int64_t r0, r1;
    htp_split(htp_view_nrows(src0), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(src0->ne, ir, &i1, &i2, &i3);
        const uint8_t *x = htp_view_row(src0, i1, i2, i3);
        uint8_t       *y = htp_view_row(dst, i1, i2, i3);
        if (fast) {
            const float sum   = htp_vec_sumsq_f32(ne0, (const float *)(const void *)x);
            const float scale = 1.0f / sqrtf(sum / (float)ne0 + a->eps);
            htp_vec_scale_bias_f32(ne0, (float *)(void *)y, (const float *)(const void *)x, scale, 0.0f);
            continue;
        }
        float buf[HTP_CHUNK];
        float sum = 0.0f;
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
            sum += htp_vec_sumsq_f32(n, buf);
        }
        const float scale = 1.0f / sqrtf(sum / (float)ne0 + a->eps);
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            htp_row_load_f32(buf, x + c * src0->nb[0], src0->nb[0], src0->type, n);
            htp_vec_scale_bias_f32(n, buf, buf, scale, 0.0f);
            htp_row_store_f32(y + c * dst->nb[0], dst->nb[0], dst->type, buf, n);
        }
    }
}

int htp_op_rms_norm_run(struct htp_op_ctx *ctx) {
    struct rms_norm_args a = {ctx->src[0], ctx->dst[0], htp_param_f32(ctx->desc, 0)};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, rms_norm_job, &a);
    return HTP_STATUS_OK;
}
