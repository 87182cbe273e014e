// unary-ops.c: elementwise ops of one input (SCALE, CLAMP, SQR, SQRT, UNARY)
// and the gated linear units (GLU). Any strides; F32, F16 or BF16 in and out,
// computed in fp32. All share one row walker: a row function gets fp32
// pointers to the input(s) and the output for a column range, and applies the
// op's vector expression 32 lanes at a time.
//
//   SCALE   src0 [ne0, ne1, ne2, ne3] -> dst same shape; params[0] = s, params[1] = b: x * s + b
//   CLAMP   src0 -> dst same shape; params[0] = min, params[1] = max (dst may alias src0: ggml_clamp
//           is in place)
//   SQR     x * x                SQRT   sqrt(x)
//   UNARY   src0 -> dst same shape; params[0] = enum ggml_unary_op, one of
//           NEG, TANH, SIGMOID, GELU (tanh form), GELU_QUICK, SILU, EXP, SOFTPLUS
//   GLU     fused: src0 [2*nc (+1), ...] holds both halves (an odd last column is
//           unused, as in ggml); split: src0, src1 [nc, ...]
//           -> dst [nc, ...]; params[0] = enum ggml_glu_op (SWIGLU, GEGLU, SWIGLU_OAI),
//           params[1] = swapped (fused form only), SWIGLU_OAI: params[2] = alpha, params[3] = limit
//
// Transcendentals are our own vector versions built on htp_vf32_exp (vec.h),
// accurate to a few fp32 ulps; ggml-cpu computes GELU of inputs in (-10, 10)
// through an fp16 table, which our fp32 results match to fp16 precision.

#include <math.h>

#include "fp16.h"
#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

enum unary_kind {
    UNARY_SCALE,
    UNARY_CLAMP,
    UNARY_SQR,
    UNARY_SQRT,
    UNARY_NEG,
    UNARY_TANH,
    UNARY_SIGMOID,
    UNARY_GELU,
    UNARY_GELU_QUICK,
    UNARY_SILU,
    UNARY_EXP,
    UNARY_SOFTPLUS,
    UNARY_SWIGLU,  // GLU kinds from here on: they read a gate
    UNARY_GEGLU,
    UNARY_SWIGLU_OAI,
};

struct unary_args {
    const struct htp_tensor_view * x;  // input (GLU: the activated half)
    const struct htp_tensor_view * g;  // GLU only: the gate tensor (src0 or src1)
    const struct htp_tensor_view * dst;
    int64_t                        x_off;  // column offset of x's half within its row (GLU fused form)
    int64_t                        g_off;
    enum unary_kind                kind;
    float                          p0, p1;  // SCALE s, b; CLAMP min, max; SWIGLU_OAI alpha, limit
    struct htp_ew_plan             plan;
};

// ---------------------------------------------------------------------------
// Vector math
// ---------------------------------------------------------------------------

// e^x including results in the subnormal range, which htp_vf32_exp flushes to
// 0 (x below ln FLT_MIN): there e^x = e^(x + 24 ln 2) 2^-24, a normal number
// scaled by a power of two (one rounding, as expf).
static inline htp_vf32 vf_exp(htp_vf32 x) {
    const htp_vf32 y    = htp_vf32_exp(x);
    const htp_vf32 tiny = htp_vf32_exp(x + 16.635532333438687f) * 5.9604644775390625e-8f;
    return htp_vf32_select(htp_vf32_lt(x, htp_vf32_splat(-87.33654f)), tiny, y);
}

static inline htp_vf32 vf_sigmoid(htp_vf32 x) {
    return htp_vf32_splat(1.0f) / (htp_vf32_splat(1.0f) + htp_vf32_exp(-x));
}

// tanh: an odd Taylor polynomial below |x| = 1/4 (where 1 - e^-2|x| would
// cancel), (1 - e)/(1 + e) with e = e^-2|x| above; the sign put back last.
static inline htp_vf32 vf_tanh(htp_vf32 x) {
    const htp_vf32 ax    = htp_vf32_select(htp_vf32_lt(x, htp_vf32_splat(0.0f)), -x, x);
    const htp_vf32 e     = htp_vf32_exp(-2.0f * ax);
    const htp_vf32 big   = (htp_vf32_splat(1.0f) - e) / (htp_vf32_splat(1.0f) + e);
    const htp_vf32 x2    = ax * ax;
    htp_vf32       p     = htp_vf32_splat(-1382.0f / 155925.0f);
    p                    = htp_vf32_fma(p, x2, htp_vf32_splat(62.0f / 2835.0f));
    p                    = htp_vf32_fma(p, x2, htp_vf32_splat(-17.0f / 315.0f));
    p                    = htp_vf32_fma(p, x2, htp_vf32_splat(2.0f / 15.0f));
    p                    = htp_vf32_fma(p, x2, htp_vf32_splat(-1.0f / 3.0f));
    p                    = htp_vf32_fma(p, x2, htp_vf32_splat(1.0f));
    const htp_vf32 small = p * ax;
    const htp_vf32 r     = htp_vf32_select(htp_vf32_lt(ax, htp_vf32_splat(0.25f)), small, big);
    // Copy x's sign onto r (also keeps -0 and NaN as they are).
    const htp_vi32 sign_bit = (htp_vi32){0} + INT32_MIN;
    return (htp_vf32)(((htp_vi32)r & ~sign_bit) | ((htp_vi32)x & sign_bit));
}

// GELU, tanh form: 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
static inline htp_vf32 vf_gelu(htp_vf32 x) {
    const htp_vf32 u =
        htp_vf32_splat(0.7978845608028654f) * x * htp_vf32_fma(htp_vf32_splat(0.044715f), x * x, htp_vf32_splat(1.0f));
    return x / (htp_vf32_splat(1.0f) + htp_vf32_exp(-2.0f * u));
}

static inline htp_vf32 vf_gelu_quick(htp_vf32 x) {
    return x / (htp_vf32_splat(1.0f) + htp_vf32_exp(-1.702f * x));
}

// log(1 + t) for t in [0, 1]: 2 atanh(s), s = t / (2 + t) in [0, 1/3], as an
// odd series in s (terms to s^17, truncation below 1e-9); no cancellation for
// small t.
static inline htp_vf32 vf_log1p_01(htp_vf32 t) {
    const htp_vf32 s  = t / (htp_vf32_splat(2.0f) + t);
    const htp_vf32 s2 = s * s;
    htp_vf32       p  = htp_vf32_splat(1.0f / 17.0f);
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 15.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 13.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 11.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 9.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 7.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 5.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f / 3.0f));
    p                 = htp_vf32_fma(p, s2, htp_vf32_splat(1.0f));
    return 2.0f * s * p;
}

// softplus = log(1 + e^x) = max(x, 0) + log(1 + e^-|x|); x itself above 20 as ggml.
static inline htp_vf32 vf_softplus(htp_vf32 x) {
    const htp_vf32 ax = htp_vf32_select(htp_vf32_lt(x, htp_vf32_splat(0.0f)), -x, x);
    const htp_vf32 r  = htp_vf32_max(x, htp_vf32_splat(0.0f)) + vf_log1p_01(htp_vf32_exp(-ax));
    return htp_vf32_select(htp_vf32_gt(x, htp_vf32_splat(20.0f)), x, r);
}

static inline htp_vf32 vf_sqrt(htp_vf32 x) {
    for (int i = 0; i < HTP_VF32_N; i++) {
        x[i] = sqrtf(x[i]);
    }
    return x;
}

// min(x, hi) then max(., lo), in ggml's order (NaN inputs end up as hi).
static inline htp_vf32 vf_clamp(htp_vf32 x, float lo, float hi) {
    const htp_vf32 t = htp_vf32_select(htp_vf32_lt(x, htp_vf32_splat(hi)), x, htp_vf32_splat(hi));
    return htp_vf32_select(htp_vf32_gt(t, htp_vf32_splat(lo)), t, htp_vf32_splat(lo));
}

// gpt-oss gated unit: x' = min(x, limit), g' = clamp(g, -limit, limit),
// x' sigmoid(alpha x') (g' + 1).
static inline htp_vf32 vf_swiglu_oai(htp_vf32 x, htp_vf32 g, float alpha, float limit) {
    const htp_vf32 xc = htp_vf32_select(htp_vf32_lt(x, htp_vf32_splat(limit)), x, htp_vf32_splat(limit));
    const htp_vf32 gc = vf_clamp(g, -limit, limit);
    return xc / (htp_vf32_splat(1.0f) + htp_vf32_exp(-alpha * xc)) * (gc + 1.0f);
}

// y[0, n) = EXPR over vectors vx (from x) and vg (from g, zero when g is
// NULL); tails go through partial loads and stores (padding lanes hold 0).
#define UNARY_ROW(n, y, x, g, EXPR)                                                                 \
    do {                                                                                            \
        int64_t i = 0;                                                                              \
        for (; i + HTP_VF32_N <= (n); i += HTP_VF32_N) {                                            \
            const htp_vf32 vx = htp_vf32_load((x) + i);                                             \
            const htp_vf32 vg = (g) ? htp_vf32_load((g) + i) : htp_vf32_splat(0.0f);                \
            (void)vg;                                                                               \
            htp_vf32_store((y) + i, (EXPR));                                                        \
        }                                                                                           \
        if (i < (n)) {                                                                              \
            const htp_vf32 vx = htp_vf32_load_n((x) + i, (n)-i, 0.0f);                              \
            const htp_vf32 vg = (g) ? htp_vf32_load_n((g) + i, (n)-i, 0.0f) : htp_vf32_splat(0.0f); \
            (void)vg;                                                                               \
            htp_vf32_store_n((y) + i, (EXPR), (n)-i);                                               \
        }                                                                                           \
    } while (0)

// y[0, n) = op(x[0, n)) (GLU kinds: op(x, g)). y may alias x or g.
static void unary_apply(const struct unary_args * a, int64_t n, float * y, const float * x, const float * g) {
    const float p0 = a->p0, p1 = a->p1;
    switch (a->kind) {
        case UNARY_SCALE:
            htp_vec_scale_bias_f32(n, y, x, p0, p1);
            break;
        case UNARY_CLAMP:
            UNARY_ROW(n, y, x, g, vf_clamp(vx, p0, p1));
            break;
        case UNARY_SQR:
            UNARY_ROW(n, y, x, g, vx * vx);
            break;
        case UNARY_SQRT:
            UNARY_ROW(n, y, x, g, vf_sqrt(vx));
            break;
        case UNARY_NEG:
            UNARY_ROW(n, y, x, g, -vx);
            break;
        case UNARY_TANH:
            UNARY_ROW(n, y, x, g, vf_tanh(vx));
            break;
        case UNARY_SIGMOID:
            UNARY_ROW(n, y, x, g, vf_sigmoid(vx));
            break;
        case UNARY_GELU:
            UNARY_ROW(n, y, x, g, vf_gelu(vx));
            break;
        case UNARY_GELU_QUICK:
            UNARY_ROW(n, y, x, g, vf_gelu_quick(vx));
            break;
        case UNARY_SILU:
            htp_vec_silu_f32(n, y, x);
            break;
        case UNARY_EXP:
            UNARY_ROW(n, y, x, g, vf_exp(vx));
            break;
        case UNARY_SOFTPLUS:
            UNARY_ROW(n, y, x, g, vf_softplus(vx));
            break;
        case UNARY_SWIGLU:
            htp_vec_swiglu_f32(n, y, x, g);
            break;
        case UNARY_GEGLU:
            UNARY_ROW(n, y, x, g, vf_gelu(vx) * vg);
            break;
        case UNARY_SWIGLU_OAI:
            UNARY_ROW(n, y, x, g, vf_swiglu_oai(vx, vg, p0, p1));
            break;
    }
}

// GEGLU of F16 rows as ggml-cpu computes it: GELU of an f16 input comes from
// its f16 table, so rounded to f16 before the gate multiplies it (where the
// GELU is tiny that rounding is a few percent of the result).
static void geglu_f16_rows(int64_t n, float * y, const float * x, const float * g) {
    UNARY_ROW(n, y, x, g, vf_gelu(vx));  // (the gate is read, unused, here)
    for (int64_t i = 0; i < n; i++) {
        y[i] = htp_fp16_to_fp32(htp_fp32_to_fp16(y[i])) * g[i];
    }
}

static int unary_all_packed(const struct unary_args * a) {
    return htp_view_is_f32_packed(a->x) && htp_view_is_f32_packed(a->dst) && (!a->g || htp_view_is_f32_packed(a->g));
}

static void unary_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct unary_args *     a = arg;
    const struct htp_tensor_view *x = a->x, *g = a->g, *dst = a->dst;
    const int                     fast = unary_all_packed(a);

    int64_t it0, it1;
    htp_split(htp_ew_plan_items(&a->plan), ith, nth, &it0, &it1);
    for (int64_t it = it0; it < it1; it++) {
        int64_t ir, c0, c1, i1, i2, i3;
        htp_ew_plan_item(&a->plan, it, &ir, &c0, &c1);
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        uint8_t *       yr = htp_view_row(dst, i1, i2, i3);
        const uint8_t * xr = htp_view_row(x, i1, i2, i3) + a->x_off * x->nb[0];
        const uint8_t * gr = g ? htp_view_row(g, i1, i2, i3) + a->g_off * g->nb[0] : NULL;
        if (fast) {
            unary_apply(a, c1 - c0, (float *)(void *)yr + c0, (const float *)(const void *)xr + c0,
                        gr ? (const float *)(const void *)gr + c0 : NULL);
            continue;
        }
        float bx[HTP_CHUNK], bg[HTP_CHUNK];
        for (int64_t c = c0; c < c1; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, c1 - c);
            htp_row_load_f32(bx, xr + c * x->nb[0], x->nb[0], x->type, n);
            if (g) {
                htp_row_load_f32(bg, gr + c * g->nb[0], g->nb[0], g->type, n);
            }
            if (a->kind == UNARY_GEGLU && x->type == HTP_TYPE_F16) {
                geglu_f16_rows(n, bx, bx, bg);
            } else {
                unary_apply(a, n, bx, bx, g ? bg : NULL);
            }
            htp_row_store_f32(yr + c * dst->nb[0], dst->nb[0], dst->type, bx, n);
        }
    }
}

static int unary_run(struct htp_op_ctx * ctx, struct unary_args * a) {
    if (htp_view_nelements(a->dst) == 0) {
        return HTP_STATUS_OK;
    }
    a->plan = htp_ew_plan_make(htp_view_nrows(a->dst), a->dst->ne[0], ctx->op.n_threads);
    ctx->run(ctx->pool, unary_job, a);
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// SCALE
// ---------------------------------------------------------------------------

int htp_op_scale_run(struct htp_op_ctx * ctx) {
    struct unary_args a = {0};
    a.x                 = ctx->op.src[0];
    a.dst               = ctx->op.dst[0];
    a.kind              = UNARY_SCALE;
    a.p0                = htp_param_f32(ctx->op.desc, 0);
    a.p1                = htp_param_f32(ctx->op.desc, 1);
    return unary_run(ctx, &a);
}

// ---------------------------------------------------------------------------
// UNARY, CLAMP, SQR, SQRT
// ---------------------------------------------------------------------------

// The kind an elementwise op code (and for UNARY its ggml unary op) names;
// 0 when these kernels do not run it.
static int unary_kind_of(const struct htp_op_desc * desc, enum unary_kind * kind) {
    switch (desc->opcode) {
        case HTP_OP_CLAMP:
            *kind = UNARY_CLAMP;
            return 1;
        case HTP_OP_SQR:
            *kind = UNARY_SQR;
            return 1;
        case HTP_OP_SQRT:
            *kind = UNARY_SQRT;
            return 1;
        case HTP_OP_UNARY:
            break;
        default:
            return 0;
    }
    switch (desc->params[0]) {
        case HTP_UNARY_NEG:
            *kind = UNARY_NEG;
            return 1;
        case HTP_UNARY_TANH:
            *kind = UNARY_TANH;
            return 1;
        case HTP_UNARY_SIGMOID:
            *kind = UNARY_SIGMOID;
            return 1;
        case HTP_UNARY_GELU:
            *kind = UNARY_GELU;
            return 1;
        case HTP_UNARY_GELU_QUICK:
            *kind = UNARY_GELU_QUICK;
            return 1;
        case HTP_UNARY_SILU:
            *kind = UNARY_SILU;
            return 1;
        case HTP_UNARY_EXP:
            *kind = UNARY_EXP;
            return 1;
        case HTP_UNARY_SOFTPLUS:
            *kind = UNARY_SOFTPLUS;
            return 1;
        default:
            return 0;
    }
}

int htp_op_unary_run(struct htp_op_ctx * ctx) {
    struct unary_args a = {0};
    if (!unary_kind_of(ctx->op.desc, &a.kind)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    a.x   = ctx->op.src[0];
    a.dst = ctx->op.dst[0];
    if (a.kind == UNARY_CLAMP) {
        a.p0 = htp_param_f32(ctx->op.desc, 0);
        a.p1 = htp_param_f32(ctx->op.desc, 1);
    }
    return unary_run(ctx, &a);
}

// ---------------------------------------------------------------------------
// GLU
// ---------------------------------------------------------------------------

static int glu_kind_of(int32_t op, enum unary_kind * kind) {
    switch (op) {
        case HTP_GLU_SWIGLU:
            *kind = UNARY_SWIGLU;
            return 1;
        case HTP_GLU_GEGLU:
            *kind = UNARY_GEGLU;
            return 1;
        case HTP_GLU_SWIGLU_OAI:
            *kind = UNARY_SWIGLU_OAI;
            return 1;
        default:
            return 0;
    }
}

int htp_op_glu_run(struct htp_op_ctx * ctx) {
    struct unary_args a = {0};
    if (!glu_kind_of(ctx->op.desc->params[0], &a.kind)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    a.x   = ctx->op.src[0];
    a.dst = ctx->op.dst[0];
    if (a.kind == UNARY_SWIGLU_OAI) {
        a.p0 = htp_param_f32(ctx->op.desc, 2);  // alpha
        a.p1 = htp_param_f32(ctx->op.desc, 3);  // limit
    }
    if (ctx->op.src[1]) {
        // Split form: as ggml, swapped does not apply.
        a.g = ctx->op.src[1];
    } else {
        const int64_t nc = a.dst->ne[0];
        const int     sw = ctx->op.desc->params[1] != 0;
        a.g              = ctx->op.src[0];
        a.x_off          = sw ? nc : 0;
        a.g_off          = sw ? 0 : nc;
    }
    return unary_run(ctx, &a);
}
