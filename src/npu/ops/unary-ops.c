// unary-ops.c: elementwise ops of one input (SCALE, UNARY silu) and the gated
// linear unit (GLU swiglu). Any strides; F32, F16 or BF16 in and out, computed
// in fp32. All three share one row walker: a row function gets fp32 pointers
// to the input(s) and the output for a column range.
//
//   SCALE   src0 [ne0, ne1, ne2, ne3] -> dst same shape; params[0] = s, params[1] = b
//   UNARY   src0 -> dst same shape; params[0] = enum ggml_unary_op (SILU only)
//   GLU     fused: src0 [2*nc, ...] holds both halves; split: src0, src1 [nc, ...]
//           -> dst [nc, ...]; params[0] = enum ggml_glu_op (SWIGLU only), params[1] = swapped

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

enum unary_kind { UNARY_SCALE, UNARY_SILU, UNARY_SWIGLU };

struct unary_args {
    const struct htp_tensor_view *x;  // input (GLU: the activated half)
    const struct htp_tensor_view *g;  // GLU only: the gate tensor (src0 or src1)
    const struct htp_tensor_view *dst;
    int64_t                       x_off;  // column offset of x's half within its row (GLU fused form)
    int64_t                       g_off;
    enum unary_kind               kind;
    float                         s, b;  // SCALE
    struct htp_ew_plan            plan;
};

static void unary_apply(const struct unary_args *a, int64_t n, float *y, const float *x, const float *g) {
    switch (a->kind) {
        case UNARY_SCALE:
            htp_vec_scale_bias_f32(n, y, x, a->s, a->b);
            break;
        case UNARY_SILU:
            htp_vec_silu_f32(n, y, x);
            break;
        case UNARY_SWIGLU:
            htp_vec_swiglu_f32(n, y, x, g);
            break;
    }
}

static int unary_all_packed(const struct unary_args *a) {
    return htp_view_is_f32_packed(a->x) && htp_view_is_f32_packed(a->dst) && (!a->g || htp_view_is_f32_packed(a->g));
}

static void unary_job(void *arg, uint32_t ith, uint32_t nth) {
    const struct unary_args      *a = arg;
    const struct htp_tensor_view *x = a->x, *g = a->g, *dst = a->dst;
    const int                     fast = unary_all_packed(a);

    int64_t it0, it1;
    htp_split(htp_ew_plan_items(&a->plan), ith, nth, &it0, &it1);
    for (int64_t it = it0; it < it1; it++) {
        int64_t ir, c0, c1, i1, i2, i3;
        htp_ew_plan_item(&a->plan, it, &ir, &c0, &c1);
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        uint8_t       *yr = htp_view_row(dst, i1, i2, i3);
        const uint8_t *xr = htp_view_row(x, i1, i2, i3) + a->x_off * x->nb[0];
        const uint8_t *gr = g ? htp_view_row(g, i1, i2, i3) + a->g_off * g->nb[0] : NULL;
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
            unary_apply(a, n, bx, bx, bg);
            htp_row_store_f32(yr + c * dst->nb[0], dst->nb[0], dst->type, bx, n);
        }
    }
}

static int unary_run(struct htp_op_ctx *ctx, struct unary_args *a) {
    if (htp_view_nelements(a->dst) == 0) {
        return HTP_STATUS_OK;
    }
    a->plan = htp_ew_plan_make(htp_view_nrows(a->dst), a->dst->ne[0], ctx->n_threads);
    ctx->run(ctx->pool, unary_job, a);
    return HTP_STATUS_OK;
}

// Operand checks common to SCALE and UNARY: one input, output of its shape.
static int unary_check_same(const struct htp_op_ctx *ctx) {
    const struct htp_tensor_view *src0 = ctx->src[0], *dst = ctx->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// SCALE
// ---------------------------------------------------------------------------

int htp_op_scale_check(const struct htp_op_ctx *ctx) {
    return unary_check_same(ctx);
}

int htp_op_scale_run(struct htp_op_ctx *ctx) {
    struct unary_args a = {0};
    a.x                 = ctx->src[0];
    a.dst               = ctx->dst[0];
    a.kind              = UNARY_SCALE;
    a.s                 = htp_param_f32(ctx->desc, 0);
    a.b                 = htp_param_f32(ctx->desc, 1);
    return unary_run(ctx, &a);
}

// ---------------------------------------------------------------------------
// UNARY
// ---------------------------------------------------------------------------

int htp_op_unary_check(const struct htp_op_ctx *ctx) {
    const int rc = unary_check_same(ctx);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    return ctx->desc->params[0] == HTP_UNARY_SILU ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
}

int htp_op_unary_run(struct htp_op_ctx *ctx) {
    if (ctx->desc->params[0] != HTP_UNARY_SILU) {
        return HTP_STATUS_NO_SUPPORT;
    }
    struct unary_args a = {0};
    a.x                 = ctx->src[0];
    a.dst               = ctx->dst[0];
    a.kind              = UNARY_SILU;
    return unary_run(ctx, &a);
}

// ---------------------------------------------------------------------------
// GLU
// ---------------------------------------------------------------------------

int htp_op_glu_check(const struct htp_op_ctx *ctx) {
    const struct htp_tensor_view *src0 = ctx->src[0], *src1 = ctx->src[1], *dst = ctx->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src1) {
        if (!htp_view_same_shape(src0, src1) || !htp_view_same_shape(src0, dst)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    } else if (src0->ne[0] != 2 * dst->ne[0] || src0->ne[1] != dst->ne[1] || src0->ne[2] != dst->ne[2] ||
               src0->ne[3] != dst->ne[3]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type) || (src1 && !htp_type_is_float(src1->type))) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return ctx->desc->params[0] == HTP_GLU_SWIGLU ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
}

int htp_op_glu_run(struct htp_op_ctx *ctx) {
    if (ctx->desc->params[0] != HTP_GLU_SWIGLU) {
        return HTP_STATUS_NO_SUPPORT;
    }
    struct unary_args a = {0};
    a.x                 = ctx->src[0];
    a.dst               = ctx->dst[0];
    a.kind              = UNARY_SWIGLU;
    if (ctx->src[1]) {
        // Split form: as ggml, swapped does not apply.
        a.g = ctx->src[1];
    } else {
        const int64_t nc = a.dst->ne[0];
        const int     sw = ctx->desc->params[1] != 0;
        a.g              = ctx->src[0];
        a.x_off          = sw ? nc : 0;
        a.g_off          = sw ? 0 : nc;
    }
    return unary_run(ctx, &a);
}
