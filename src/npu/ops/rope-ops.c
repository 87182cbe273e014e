// rope-ops.c: ROPE, rotary position embedding, modes normal (0), neox (2),
// multi-section mrope (8) and its interleaved form imrope (40), and vision
// (24), with ggml's YaRN frequency correction and optional per-pair frequency
// factors.
//
//   src0 [ne0 = head dim, ne1 = heads, ne2 = tokens, ne3]  F32/F16/BF16, any strides
//   src1 positions [>= ne2] I32; multi-section modes: 4 per token, pos[i2 + ne2 * s]
//        for s = 0..3 (time, height, width, extra)
//   src2 freq factors [>= pairs]  F32, optional
//   dst  src0's shape
//   params (ggml_rope_ext / ggml_rope_multi op_params): [1] n_dims, [2] mode,
//          [4] n_ctx_orig, [5] freq_base, [6] freq_scale, [7] ext_factor,
//          [8] attn_factor, [9] beta_fast, [10] beta_slow (floats bit-cast),
//          [11..14] sections (multi-section modes)
//
// Pair k of a row at position p turns by theta_k, where
// theta_k = p * freq_base^(-2k/n_dims) / ff[k] blended by YaRN between the
// interpolated (* freq_scale) and extrapolated angle. Normal mode pairs
// elements (2k, 2k+1) for k < n_dims/2; neox, mrope and imrope pair
// (k, k + n_dims/2); vision (n_dims = ne0/2) pairs (k, k + n_dims) for
// k < n_dims. Multi-section modes take p from one of the four position
// streams by the pair's section (k mod the sections' sum): mrope in runs of
// sections[0], [1], [2], [3] pairs, imrope interleaved t, h, w; vision also
// restarts the exponent at each section. Elements past the rotated ones are
// copied. The angles depend only on the token (i2), so each worker keeps its
// current token's cos/sin table in its slice of the scratch area (2 floats
// per pair) and rebuilds it when the token changes.

#include <math.h>

#include "contract/op-params.h"
#include "contract/ops/rope-check.h"
#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct rope_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * pos;
    const struct htp_tensor_view * ff;  // NULL: no frequency factors
    const struct htp_tensor_view * dst;
    int32_t                        n_dims;
    int32_t                        mode;
    int32_t                        n_pairs;  // rotated pairs per row
    int32_t                        sections[4];
    float                          freq_scale, ext_factor, attn_factor;
    float                          theta_scale;
    float                          corr_lo, corr_hi;  // YaRN correction range, in pairs
    uint8_t *                      scratch;           // n_dims floats per worker
};

// Where YaRN's blend starts and ends, in pairs: the pair whose wavelength
// turns n_rot times over the original context, for n_rot = beta_fast / beta_slow.
static float rope_corr_dim(int32_t n_dims, int32_t n_ctx_orig, float n_rot, float base) {
    return (float)n_dims * logf((float)n_ctx_orig / (n_rot * 2.0f * (float)M_PI)) / (2.0f * logf(base));
}

// Section of pair k in a multi-section mode: which position stream (0 t,
// 1 h, 2 w, 3 e) its angle starts from.
static int rope_section(const struct rope_args * a, int32_t sector) {
    const int32_t * sec = a->sections;
    if (a->mode == HTP_ROPE_MODE_IMROPE) {
        if (sector % 3 == 1 && sector < 3 * sec[1]) {
            return 1;
        }
        if (sector % 3 == 2 && sector < 3 * sec[2]) {
            return 2;
        }
        if (sector % 3 == 0 && sector < 3 * sec[0]) {
            return 0;
        }
        return 3;
    }
    if (sector < sec[0]) {
        return 0;
    }
    if (sector < sec[0] + sec[1]) {
        return 1;
    }
    if (sector < sec[0] + sec[1] + sec[2]) {
        return 2;
    }
    return 3;
}

// cos/sin of every pair's angle: c[k], s[k] for k < n_pairs. p holds the
// token's positions (p[0] only, or the four streams of a multi-section mode).
static void rope_table(const struct rope_args * a, const float * p, float * c, float * s) {
    const int32_t half   = a->n_pairs;
    float         mscale = a->attn_factor;
    if (a->ext_factor != 0.0f) {
        mscale *= 1.0f + 0.1f * logf(1.0f / a->freq_scale);
    }
    const int       multi = htp_rope_is_multi(a->mode);
    const int32_t * sec   = a->sections;
    // The sections are checked (each >= 0, their sum in 1 .. ne0) only in the
    // multi-section modes; the others leave them as they came.
    const int32_t sdims = multi ? sec[0] + sec[1] + sec[2] + sec[3] : 0;
    // p * theta_scale^k per stream, accumulated as ggml does (vision restarts
    // each stream at the start of its section).
    float th[4] = {p[0], multi ? p[1] : 0.0f, multi ? p[2] : 0.0f, multi ? p[3] : 0.0f};
    for (int32_t k = 0; k < half; k++) {
        float theta = th[0];
        if (multi) {
            const int32_t sector = k % sdims;
            if (a->mode == HTP_ROPE_MODE_VISION) {
                if (sector == 0) {
                    th[0] = p[0];
                } else if (sector == sec[0]) {
                    th[1] = p[1];
                } else if (sector == sec[0] + sec[1]) {
                    th[2] = p[2];
                } else if (sector == sec[0] + sec[1] + sec[2]) {
                    th[3] = p[3];
                }
            }
            theta = th[rope_section(a, sector)];
        }
        float ffk = 1.0f;
        if (a->ff) {
            memcpy(&ffk, a->ff->data + k * a->ff->nb[0], sizeof ffk);
        }
        const float extrap = theta / ffk;
        const float interp = a->freq_scale * extrap;
        float       t      = interp;
        if (a->ext_factor != 0.0f) {
            const float span = a->corr_hi - a->corr_lo > 0.001f ? a->corr_hi - a->corr_lo : 0.001f;
            float       y    = ((float)k - a->corr_lo) / span;
            y                = y < 0.0f ? 0.0f : y;
            y                = y > 1.0f ? 1.0f : y;
            const float mix  = (1.0f - y) * a->ext_factor;
            t                = interp * (1.0f - mix) + extrap * mix;
        }
        c[k] = cosf(t) * mscale;
        s[k] = sinf(t) * mscale;
        for (int i = 0; i < 4; i++) {
            th[i] *= a->theta_scale;
        }
    }
}

static void rope_row(const struct rope_args * a, uint8_t * yr, const uint8_t * xr, const float * c, const float * s) {
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    const int64_t                 nbx = src0->nb[0], nby = dst->nb[0], ne0 = src0->ne[0];
    const int32_t                 n_dims = a->n_dims, half = a->n_pairs;
    float                         u[HTP_CHUNK], v[HTP_CHUNK];

    if (a->mode != HTP_ROPE_MODE_NORMAL) {  // pairs (k, k + half)
        for (int64_t k0 = 0; k0 < half; k0 += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, half - k0);
            htp_row_load_f32(u, xr + k0 * nbx, nbx, src0->type, n);
            htp_row_load_f32(v, xr + (k0 + half) * nbx, nbx, src0->type, n);
            for (int64_t j = 0; j < n; j++) {
                const float x0 = u[j], x1 = v[j], cj = c[k0 + j], sj = s[k0 + j];
                u[j] = x0 * cj - x1 * sj;
                v[j] = x0 * sj + x1 * cj;
            }
            htp_row_store_f32(yr + k0 * nby, nby, dst->type, u, n);
            htp_row_store_f32(yr + (k0 + half) * nby, nby, dst->type, v, n);
        }
    } else {
        for (int64_t i0 = 0; i0 < n_dims; i0 += HTP_CHUNK) {  // HTP_CHUNK is even: chunks hold whole pairs
            const int64_t n = htp_min64(HTP_CHUNK, n_dims - i0);
            htp_row_load_f32(u, xr + i0 * nbx, nbx, src0->type, n);
            for (int64_t j = 0; j < n; j += 2) {
                const int64_t k  = (i0 + j) / 2;
                const float   x0 = u[j], x1 = u[j + 1];
                u[j]     = x0 * c[k] - x1 * s[k];
                u[j + 1] = x0 * s[k] + x1 * c[k];
            }
            htp_row_store_f32(yr + i0 * nby, nby, dst->type, u, n);
        }
    }
    // Dimensions past the rotated ones pass through.
    for (int64_t i0 = 2 * (int64_t)half; i0 < ne0; i0 += HTP_CHUNK) {
        const int64_t n = htp_min64(HTP_CHUNK, ne0 - i0);
        htp_row_load_f32(u, xr + i0 * nbx, nbx, src0->type, n);
        htp_row_store_f32(yr + i0 * nby, nby, dst->type, u, n);
    }
}

static void rope_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct rope_args *      a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    float *                       c = (float *)(void *)(a->scratch + (size_t)ith * a->n_pairs * 2 * sizeof(float));
    float *                       s = c + a->n_pairs;

    int64_t r0, r1;
    htp_split(htp_view_nrows(src0), ith, nth, &r0, &r1);
    int64_t table_i2 = -1;
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(src0->ne, ir, &i1, &i2, &i3);
        if (i2 != table_i2) {
            float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int j = 0; j < (htp_rope_is_multi(a->mode) ? 4 : 1); j++) {
                int32_t pj;
                memcpy(&pj, a->pos->data + (i2 + j * src0->ne[2]) * a->pos->nb[0], sizeof pj);
                p[j] = (float)pj;
            }
            rope_table(a, p, c, s);
            table_i2 = i2;
        }
        rope_row(a, htp_view_row(dst, i1, i2, i3), htp_view_row(src0, i1, i2, i3), c, s);
    }
}

int htp_op_rope_run(struct htp_op_ctx * ctx) {
    const struct htp_rope_params p = htp_rope_params_read(ctx->op.desc);
    if (htp_rope_scratch_size(htp_rope_pairs(&p), ctx->op.n_threads) > ctx->op.vtcm_size) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    struct rope_args a = {0};
    a.n_pairs          = htp_rope_pairs(&p);
    memcpy(a.sections, p.sections, sizeof a.sections);
    a.src0        = ctx->op.src[0];
    a.pos         = ctx->op.src[1];
    a.ff          = ctx->op.src[2];
    a.dst         = ctx->op.dst[0];
    a.n_dims      = p.n_dims;
    a.mode        = p.mode;
    a.freq_scale  = p.freq_scale;
    a.ext_factor  = p.ext_factor;
    a.attn_factor = p.attn_factor;
    a.theta_scale = powf(p.freq_base, -2.0f / (float)p.n_dims);
    a.scratch     = ctx->vtcm;
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    // YaRN range (ggml_rope_yarn_corr_dims): [floor(lo) clamped to >= 0, ceil(hi) clamped to <= n_dims - 1].
    const float lo = floorf(rope_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_fast, p.freq_base));
    const float hi = ceilf(rope_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_slow, p.freq_base));
    a.corr_lo      = 0.0f > lo ? 0.0f : lo;
    a.corr_hi      = (float)(p.n_dims - 1) < hi ? (float)(p.n_dims - 1) : hi;
    ctx->run(ctx->pool, rope_job, &a);
    return HTP_STATUS_OK;
}
