// fused-check.c: the fused ops (layouts in proto/htp-proto.h). A fused op is
// malformed unless it carries HTP_OP_FLAG_FUSED; each part must pass the
// check of the op it stands for, on the operands that part sees.
//
//   RMS_NORM_MUL  src0 x, src1 w (tiled over x), dst x's shape; params[0] = eps
//   MUL_MAT_ADD   src0, src1 as MUL_MAT; src2 F32 tiled over the matmul's
//                 result; dst F32, the matmul's shape
//   MUL_MAT_QKV   3 (FFN: 2) weights, each a MUL_MAT against the shared x, all
//   MUL_MAT_FFN   K-quant (one Q8_K quantization of x serves them) or all of
//                 the QUANT engine (one q8 quantization, 32 a block), scratch
//                 for the largest weight's plan plus one column

#include "fused-check.h"

#include "contract/kquant-tiles.h"
#include "contract/tiled.h"

#include "contract/op-params.h"
#include "matmul-check.h"
#include "op-checks.h"

int htp_op_rms_norm_mul_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *x = call->src[0], *w = call->src[1], *dst = call->dst[0];
    if (call->desc->opcode != HTP_OP_RMS_NORM_MUL || call->desc->flags != HTP_OP_FLAG_FUSED) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!x || !w || !dst || call->src[2] || call->dst[1]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_view_shape_ok(x) || !htp_view_shape_ok(w) || !htp_view_shape_ok(dst) || !htp_view_same_shape(x, dst) ||
        !htp_view_can_repeat(w, x) || !htp_view_readable_for(w, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const float eps = htp_param_f32(call->desc, 0);
    if (!(eps >= 0.0f)) {  // also refuses NaN
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(x->type) || !htp_type_is_float(w->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

int htp_op_mul_mat_add_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *add = call->src[2], *dst = call->dst[0];
    if (call->desc->opcode != HTP_OP_MUL_MAT_ADD || call->desc->flags != HTP_OP_FLAG_FUSED) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!add || !dst || call->src[3] || call->dst[1] || !htp_view_shape_ok(add)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // The matmul part, as MUL_MAT sees it (dst's shape is the matmul's result).
    struct htp_op_desc mm = *call->desc;
    mm.opcode             = HTP_OP_MUL_MAT;
    mm.flags              = 0;
    struct htp_op_call mc = *call;
    mc.desc               = &mm;
    mc.src[2]             = NULL;
    const int rc          = htp_op_mul_mat_check(&mc);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    if (!htp_view_can_repeat(add, dst) || !htp_view_readable_for(add, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (add->type != HTP_TYPE_F32) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

int htp_mm_shared_operands(const struct htp_op_call * call, const struct htp_tensor_view ** w,
                           const struct htp_tensor_view ** x, const struct htp_tensor_view ** out) {
    const uint32_t op = call->desc->opcode;
    const int      n  = op == HTP_OP_MUL_MAT_QKV ? 3 : op == HTP_OP_MUL_MAT_FFN ? 2 : 0;
    if (n == 0) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        w[i] = call->src[i];
    }
    *x     = call->src[n];
    out[0] = call->dst[0];
    out[1] = call->dst[1];
    if (n == 3) {
        out[2] = call->src[4];
    }
    return n;
}

int64_t htp_kq_shared_plan(const struct htp_tensor_view * const * w, int n, int64_t ncols, uint32_t n_threads,
                           size_t vtcm_size, size_t * fixed) {
    size_t head = 0;
    for (int i = 0; i < n; i++) {
        size_t f;
        if (htp_kq_mm_plan(w[i], ncols, 0, n_threads, vtcm_size, &f) < 1 && ncols > 0) {
            return 0;
        }
        head = f > head ? f : head;
    }
    *fixed             = head;
    const size_t col_b = (size_t)(w[0]->ne[0] / HTP_KQ_QK) * HTP_KQ_ACT_BLOCK;
    if (col_b == 0) {
        return head <= vtcm_size ? ncols : 0;
    }
    if (head + col_b > vtcm_size) {
        return 0;
    }
    return htp_min64((int64_t)((vtcm_size - head) / col_b), ncols);
}

struct htp_qmm_plan htp_qmm_shared_plan(const struct htp_tensor_view * const * w, int n, uint32_t n_threads,
                                        size_t vtcm_size) {
    struct htp_qmm_plan p = htp_qmm_plan(w[0], n_threads, vtcm_size);
    for (int i = 1; i < n; i++) {
        const struct htp_qmm_plan q = htp_qmm_plan(w[i], n_threads, vtcm_size);
        if (q.slice_bytes > p.slice_bytes) {
            p = q;
        }
    }
    p.max_cols = htp_qmm_max_cols(&p, n, n_threads, vtcm_size);
    return p;
}

int htp_op_mul_mat_shared_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *w[3], *x, *out[3];
    const int                     n = htp_mm_shared_operands(call, w, &x, out);
    if (n == 0 || call->desc->flags != HTP_OP_FLAG_FUSED || !x) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    for (int k = n + 1 + (n == 3); k < HTP_OP_MAX_INPUTS; k++) {
        if (call->src[k]) {
            return HTP_STATUS_INVAL_PARAMS;  // nothing beyond the layout
        }
    }
    struct htp_op_desc mm = *call->desc;
    mm.opcode             = HTP_OP_MUL_MAT;
    mm.flags              = 0;
    for (int i = 0; i < n; i++) {
        if (!w[i] || !out[i]) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    for (int i = 0; i < n; i++) {
        // Each product as MUL_MAT sees it.
        struct htp_op_call mc = {.desc = &mm, .n_threads = call->n_threads, .vtcm_size = call->vtcm_size};
        mc.src[0]             = w[i];
        mc.src[1]             = x;
        mc.dst[0]             = out[i];
        const int rc          = htp_op_mul_mat_check(&mc);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
    }
    // One quantization of x serves all: every weight on the K-quant engine
    // (Q8_K blocks) or every one on the QUANT engine (its q8 blocks).
    const enum htp_mm_engine engine = htp_mm_engine_of(HTP_OP_MUL_MAT, w[0]->type);
    for (int i = 0; i < n; i++) {
        if (htp_mm_engine_of(HTP_OP_MUL_MAT, w[i]->type) != engine) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    if (engine == HTP_MM_KQUANT) {
        size_t fixed;
        if (htp_view_nrows(x) > 0 && htp_kq_shared_plan(w, n, 1, call->n_threads, call->vtcm_size, &fixed) < 1) {
            return HTP_STATUS_VTCM_TOO_SMALL;
        }
        return HTP_STATUS_OK;
    }
    if (engine == HTP_MM_QUANT) {
        for (int i = 0; i < n; i++) {
            if (!htp_tile_format(w[i]->type)) {
                return HTP_STATUS_NO_SUPPORT;  // BF16: float activations, not the q8 blocks
            }
        }
        return htp_qmm_shared_plan(w, n, call->n_threads, call->vtcm_size).max_cols >= 1 ? HTP_STATUS_OK
                                                                                         : HTP_STATUS_VTCM_TOO_SMALL;
    }
    return HTP_STATUS_NO_SUPPORT;
}

int htp_op_mul_mat_ffn_glu_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *wg = call->src[0], *wu = call->src[1], *x = call->src[2], *dst = call->dst[0];
    if (call->desc->opcode != HTP_OP_MUL_MAT_FFN_GLU || call->desc->flags != HTP_OP_FLAG_FUSED || !wg || !wu || !x ||
        !dst || call->dst[1]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    for (int k = 3; k < HTP_OP_MAX_INPUTS; k++) {
        if (call->src[k]) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    if (call->desc->params[0] != HTP_GLU_SWIGLU || call->desc->params[1] != 0) {
        return HTP_STATUS_NO_SUPPORT;
    }
    // Both products as MUL_MAT sees them (dst has their shape).
    struct htp_op_desc mm = *call->desc;
    mm.opcode             = HTP_OP_MUL_MAT;
    mm.flags              = 0;
    for (int i = 0; i < 2; i++) {
        struct htp_op_call mc = {.desc = &mm, .n_threads = call->n_threads, .vtcm_size = call->vtcm_size};
        mc.src[0]             = i ? wu : wg;
        mc.src[1]             = x;
        mc.dst[0]             = dst;
        const int rc          = htp_op_mul_mat_check(&mc);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
    }
    // The tiles of gate and up rows meet row group by row group: one layout
    // (a column's up matrix sits where its gate matrix does, in the up tensor).
    const int engine = htp_mm_engine_of(HTP_OP_MUL_MAT, wg->type);
    if ((engine != HTP_MM_KQUANT && !(engine == HTP_MM_QUANT && htp_tile_format(wg->type))) || wg->type != wu->type ||
        !(wg->flags & HTP_TENSOR_TILED) || !(wu->flags & HTP_TENSOR_TILED) || !htp_view_same_shape(wg, wu) ||
        wg->nb[2] != wu->nb[2] || wg->nb[3] != wu->nb[3]) {
        return HTP_STATUS_NO_SUPPORT;
    }
    const struct htp_tensor_view * w[2] = {wg, wu};
    if (engine == HTP_MM_QUANT) {
        return htp_view_nrows(x) == 0 || htp_qmm_shared_plan(w, 2, call->n_threads, call->vtcm_size).max_cols >= 1
                   ? HTP_STATUS_OK
                   : HTP_STATUS_VTCM_TOO_SMALL;
    }
    size_t fixed;
    if (htp_view_nrows(x) > 0 && htp_kq_shared_plan(w, 2, 1, call->n_threads, call->vtcm_size, &fixed) < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    return HTP_STATUS_OK;
}
