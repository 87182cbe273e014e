// softmax-ops.c: SOFT_MAX over rows, with ggml's optional mask, ALiBi slopes
// and attention sinks:
//
//   w   = x * scale + slope(head) * mask[i0, i1, i2 % nm2, i3 % nm3]
//   dst = e^(w - m) / (sum_i0 e^(w - m) + e^(sink[i2] - m)),  m = max(max_i0 w, sink[i2])
//
//   src0 [ne0, ne1, ne2 = heads, ne3]         F32/F16/BF16, any strides
//   src1 mask [ne0, >= ne1, nm2 | ne2, nm3 | ne3]  optional, F32/F16, any strides
//   src2 sinks [>= ne2]                       optional, F32
//   dst  src0's shape; params[0] = scale, params[1] = max_bias (ALiBi; 0 = off)
//
// Packed F32 rows go through dst in place (w, then e^(w - m), then the
// normalisation). Other layouts take three chunked passes over the row.

#include <math.h>

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct softmax_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * mask;   // NULL: none
    const struct htp_tensor_view * sinks;  // NULL: none
    const struct htp_tensor_view * dst;
    float                          scale;
    float                          max_bias;
    float                          m0, m1;  // ALiBi slope bases
    uint32_t                       n_head_log2;
};

// ALiBi slope of head h (1 when max_bias is 0).
static float softmax_slope(const struct softmax_args * a, uint32_t h) {
    if (a->max_bias <= 0.0f) {
        return 1.0f;
    }
    return h < a->n_head_log2 ? powf(a->m0, (float)(h + 1)) : powf(a->m1, (float)(2 * (h - a->n_head_log2) + 1));
}

// w[0, n) = x * scale + slope * mask for one chunk of a row (mr NULL: no mask).
static void softmax_prep_chunk(const struct softmax_args * a, float * w, const uint8_t * xr, const uint8_t * mr,
                               float slope, int64_t c, int64_t n) {
    const struct htp_tensor_view *src0 = a->src0, *mask = a->mask;
    htp_row_load_f32(w, xr + c * src0->nb[0], src0->nb[0], src0->type, n);
    if (mr) {
        float m[HTP_CHUNK];
        htp_row_load_f32(m, mr + c * mask->nb[0], mask->nb[0], mask->type, n);
        htp_vec_scale_bias_f32(n, m, m, slope, 0.0f);
        htp_vec_scale_bias_f32(n, w, w, a->scale, 0.0f);
        htp_vec_binop_f32(HTP_VEC_ADD, n, w, w, m);
    } else {
        htp_vec_scale_bias_f32(n, w, w, a->scale, 0.0f);
    }
}

static void softmax_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct softmax_args *   a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *mask = a->mask, *dst = a->dst;
    const int64_t                 ne0  = src0->ne[0];
    const int                     fast = htp_view_is_f32_packed(src0) && htp_view_is_f32_packed(dst);

    int64_t r0, r1;
    htp_split(htp_view_nrows(src0), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(src0->ne, ir, &i1, &i2, &i3);
        const uint8_t * xr    = htp_view_row(src0, i1, i2, i3);
        uint8_t *       yr    = htp_view_row(dst, i1, i2, i3);
        const uint8_t * mr    = mask ? htp_view_row(mask, i1, i2 % mask->ne[2], i3 % mask->ne[3]) : NULL;
        const float     slope = softmax_slope(a, (uint32_t)i2);

        float sink = -INFINITY;
        if (a->sinks) {
            memcpy(&sink, a->sinks->data + i2 * a->sinks->nb[0], sizeof sink);
        }

        float w[HTP_CHUNK];
        if (fast) {
            float * y = (float *)(void *)yr;
            // pass 1: w into dst, its max
            float m = sink;
            for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
                const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
                softmax_prep_chunk(a, y + c, xr, mr, slope, c, n);
                const float cm = htp_vec_max_f32(n, y + c);
                m              = cm > m ? cm : m;
            }
            // pass 2: exponentials in place; pass 3: normalise
            float sum = htp_vec_exp_sub_sum_f32(ne0, y, y, m);
            if (a->sinks) {
                sum += htp_exp_f32(sink - m);
            }
            htp_vec_scale_bias_f32(ne0, y, y, 1.0f / sum, 0.0f);
            continue;
        }
        float m = sink;
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            softmax_prep_chunk(a, w, xr, mr, slope, c, n);
            const float cm = htp_vec_max_f32(n, w);
            m              = cm > m ? cm : m;
        }
        float sum = a->sinks ? htp_exp_f32(sink - m) : 0.0f;
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            softmax_prep_chunk(a, w, xr, mr, slope, c, n);
            sum += htp_vec_exp_sub_sum_f32(n, w, w, m);
        }
        const float inv = 1.0f / sum;
        for (int64_t c = 0; c < ne0; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, ne0 - c);
            softmax_prep_chunk(a, w, xr, mr, slope, c, n);
            htp_vec_exp_sub_sum_f32(n, w, w, m);
            htp_vec_scale_bias_f32(n, w, w, inv, 0.0f);
            htp_row_store_f32(yr + c * dst->nb[0], dst->nb[0], dst->type, w, n);
        }
    }
}

int htp_op_softmax_run(struct htp_op_ctx * ctx) {
    struct softmax_args a = {0};
    a.src0                = ctx->op.src[0];
    a.mask                = ctx->op.src[1];
    a.sinks               = ctx->op.src[2];
    a.dst                 = ctx->op.dst[0];
    a.scale               = htp_param_f32(ctx->op.desc, 0);
    a.max_bias            = htp_param_f32(ctx->op.desc, 1);
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    // ALiBi: heads are src0's dim 2; slopes from the largest power of two <= heads.
    const uint32_t n_head = (uint32_t)a.src0->ne[2];
    a.n_head_log2         = 1;
    while (a.n_head_log2 * 2 <= n_head) {
        a.n_head_log2 *= 2;
    }
    a.m0 = powf(2.0f, -(a.max_bias) / (float)a.n_head_log2);
    a.m1 = powf(2.0f, -(a.max_bias / 2.0f) / (float)a.n_head_log2);
    ctx->run(ctx->pool, softmax_job, &a);
    return HTP_STATUS_OK;
}
