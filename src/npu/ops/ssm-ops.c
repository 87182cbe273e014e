// ssm-ops.c: the sequence-model ops of recurrent and hybrid LLMs (Mamba,
// Qwen3-Next, Kimi linear attention): SSM_CONV, GATED_DELTA_NET and SOLVE_TRI.
//
// SSM_CONV, the causal depthwise convolution over a sliding window:
//   src0 sx [d_conv - 1 + n_t, d_inner, n_s]   F32, packed rows
//   src1 c  [d_conv, d_inner]                  F32, packed rows
//   dst     [d_inner, n_t, n_s]                F32, packed rows
//   dst[i, t, s] = sum_j sx[t + j, i, s] * c[j, i]
//
// GATED_DELTA_NET, the gated delta rule recurrence, one state per (head, seq):
//   src0 q [S, Hq, T, Nq]  src1 k [S, Hk, T, Nk]  src2 v [S, H, T, N]   F32, packed rows
//   src3 g [1 or S, H, T, N] (scalar gate, or per-row for KDA)  src4 beta [1, H, T, N]
//   src5 state [S, S, H, N] (the initial state, contiguous)
//   dst [S * H, T * N + K * S * N] F32 contiguous: the outputs o[t], then K snapshots of
//       the state (slot 0 = after the last token, slot i = i tokens earlier; slots
//       older than the sequence are left alone). params[0] = K.
//   Head h reads q head h % Hq and k head h % Hk; seq n reads q seq n / (N / Nq).
//   The state is kept transposed (row j holds column j of S) so that, per token,
//   every row is independent:
//     row_j *= e^g (or e^g[i] elementwise)      delta_j = (v_j - row_j . k) * beta
//     row_j += delta_j * k                      o_j     = row_j . q / sqrt(S)
//   and each row is decayed, updated and read in one pass while it is in cache.
//
// SOLVE_TRI, forward substitution with a lower-triangular A (left side, non-unit):
//   src0 A [n, n, B2, B3]  src1 B [k, n, B2, B3]  dst X [k, n, B2, B3]   F32, packed rows
//   A X = B, solved column by column: x_i = (b_i - sum_{t<i} A[i, t] x_t) / A[i, i]

#include <math.h>

#include "contract/ops/ssm-check.h"
#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

// ---------------------------------------------------------------------------
// SSM_CONV

struct ssm_conv_args {
    const struct htp_tensor_view *sx, *c, *dst;
};

static void ssm_conv_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct ssm_conv_args *  a  = arg;
    const struct htp_tensor_view *sx = a->sx, *c = a->c, *dst = a->dst;
    const int64_t                 nc = c->ne[0], n_t = dst->ne[1], n_s = dst->ne[2];
    int64_t                       i0, i1;
    htp_split(dst->ne[0], ith, nth, &i0, &i1);  // channels
    for (int64_t i = i0; i < i1; i++) {
        const float * w = (const float *)(const void *)(c->data + i * c->nb[1]);
        for (int64_t s = 0; s < n_s; s++) {
            const float * x = (const float *)(const void *)(sx->data + i * sx->nb[1] + s * sx->nb[2]);
            for (int64_t t = 0; t < n_t; t++) {
                float sum = 0.0f;
                for (int64_t j = 0; j < nc; j++) {
                    sum += x[t + j] * w[j];
                }
                float * y = (float *)(void *)(dst->data + i * 4 + t * dst->nb[1] + s * dst->nb[2]);
                *y        = sum;
            }
        }
    }
}

int htp_op_ssm_conv_run(struct htp_op_ctx * ctx) {
    struct ssm_conv_args a = {ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0]};
    if (htp_view_nelements(a.dst) > 0) {
        ctx->run(ctx->pool, ssm_conv_job, &a);
    }
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// GATED_DELTA_NET

struct gdn_args {
    const struct htp_tensor_view *q, *k, *v, *g, *beta, *state, *dst;
    int64_t                       S, H, T, N, K;
    int                           kda;
    uint8_t *                     scratch;
    size_t                        slice;
};

static const float * gdn_row(const struct htp_tensor_view * t, int64_t i1, int64_t i2, int64_t i3) {
    return (const float *)(const void *)htp_view_row(t, i1, i2, i3);
}

static void gdn_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct gdn_args * a = arg;
    const int64_t           S = a->S, H = a->H, T = a->T, N = a->N, K = a->K;
    const float             qscale = 1.0f / sqrtf((float)S);
    float *                 ws     = (float *)(void *)(a->scratch + (size_t)ith * a->slice);
    float *                 decay  = ws;      // [S] e^g per row element (KDA)
    float *                 work   = ws + S;  // [S * S] the state when K > 1
    float *                 out    = (float *)(void *)a->dst->data;
    float *                 states = out + S * H * T * N;
    const int64_t           snap   = S * S * H * N;  // floats per snapshot slot

    int64_t r0, r1;
    htp_split(H * N, ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t h = ir % H, n = ir / H;
        float *       M = K > 1 ? work : states + (n * H + h) * S * S;
        memcpy(M, gdn_row(a->state, 0, h, n), (size_t)(S * S) * sizeof(float));
        const int64_t hq = h % a->q->ne[1], hk = h % a->k->ne[1];
        const int64_t nq = n / (N / a->q->ne[3]), nk = n / (N / a->k->ne[3]);

        for (int64_t t = 0; t < T; t++) {
            const float * q  = gdn_row(a->q, hq, t, nq);
            const float * k  = gdn_row(a->k, hk, t, nk);
            const float * v  = gdn_row(a->v, h, t, n);
            const float * g  = gdn_row(a->g, h, t, n);
            const float   bt = *gdn_row(a->beta, h, t, n);
            float *       o  = out + ((n * T + t) * H + h) * S;
            float         eg = 1.0f;
            if (a->kda) {
                for (int64_t i = 0; i < S; i++) {
                    decay[i] = expf(g[i]);
                }
            } else {
                eg = expf(g[0]);
            }
            for (int64_t j = 0; j < S; j++) {
                float * row = M + j * S;
                if (a->kda) {
                    htp_vec_binop_f32(HTP_VEC_MUL, S, row, row, decay);
                } else {
                    htp_vec_scale_bias_f32(S, row, row, eg, 0.0f);
                }
                const float    delta = (v[j] - htp_vec_dot_f32(S, row, k)) * bt;
                int64_t        i     = 0;
                const htp_vf32 vd    = htp_vf32_splat(delta);
                for (; i + HTP_VF32_N <= S; i += HTP_VF32_N) {
                    htp_vf32_store(row + i, htp_vf32_fma(vd, htp_vf32_load(k + i), htp_vf32_load(row + i)));
                }
                for (; i < S; i++) {
                    row[i] += delta * k[i];
                }
                o[j] = htp_vec_dot_f32(S, row, q) * qscale;
            }
            const int64_t slot = T - 1 - t;
            if (K > 1 && slot < K) {
                memcpy(states + slot * snap + (n * H + h) * S * S, M, (size_t)(S * S) * sizeof(float));
            }
        }
    }
}

int htp_op_gated_delta_net_run(struct htp_op_ctx * ctx) {
    struct gdn_args a = {0};
    a.q = ctx->op.src[0], a.k = ctx->op.src[1], a.v = ctx->op.src[2], a.g = ctx->op.src[3];
    a.beta = ctx->op.src[4], a.state = ctx->op.src[5], a.dst = ctx->op.dst[0];
    a.S = a.v->ne[0], a.H = a.v->ne[1], a.T = a.v->ne[2], a.N = a.v->ne[3];
    a.K       = ctx->op.desc->params[0];
    a.kda     = a.g->ne[0] == a.S && a.S > 1;
    a.scratch = ctx->vtcm;
    a.slice   = htp_gdn_slice_bytes(a.S, a.K);
    if (a.slice > ctx->op.vtcm_size / (ctx->op.n_threads ? ctx->op.n_threads : 1)) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    ctx->run(ctx->pool, gdn_job, &a);
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// SOLVE_TRI

struct solve_tri_args {
    const struct htp_tensor_view *A, *B, *X;
};

// Workers take (batch, block of RHS columns); rows are solved in order, each
// row updating a whole block of columns with vector operations.
#define SOLVE_COLS 64

static void solve_tri_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct solve_tri_args * a = arg;
    const struct htp_tensor_view *A = a->A, *B = a->B, *X = a->X;
    const int64_t                 n = A->ne[0], k = B->ne[0];
    const int64_t                 ncb = (k + SOLVE_COLS - 1) / SOLVE_COLS, nbatch = A->ne[2] * A->ne[3];
    int64_t                       w0, w1;
    htp_split(nbatch * ncb, ith, nth, &w0, &w1);
    for (int64_t w = w0; w < w1; w++) {
        const int64_t b = w / ncb, c0 = (w % ncb) * SOLVE_COLS, nc = htp_min64(SOLVE_COLS, k - c0);
        const int64_t i2 = b % A->ne[2], i3 = b / A->ne[2];
        for (int64_t i = 0; i < n; i++) {
            const float * ar = (const float *)(const void *)htp_view_row(A, i, i2, i3);
            const float * br = (const float *)(const void *)htp_view_row(B, i, i2, i3) + c0;
            float *       xr = (float *)(void *)htp_view_row(X, i, i2, i3) + c0;
            float         acc[SOLVE_COLS];
            memset(acc, 0, sizeof acc);
            for (int64_t t = 0; t < i; t++) {
                const float * xt = (const float *)(const void *)htp_view_row(X, t, i2, i3) + c0;
                const float   at = ar[t];
                for (int64_t j = 0; j < nc; j++) {
                    acc[j] += at * xt[j];
                }
            }
            const float d = ar[i];
            for (int64_t j = 0; j < nc; j++) {
                xr[j] = (br[j] - acc[j]) / d;
            }
        }
    }
}

int htp_op_solve_tri_run(struct htp_op_ctx * ctx) {
    struct solve_tri_args a = {ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0]};
    if (htp_view_nelements(a.X) > 0) {
        ctx->run(ctx->pool, solve_tri_job, &a);
    }
    return HTP_STATUS_OK;
}
