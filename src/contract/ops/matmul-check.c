// matmul-check.c: the checks and scratch plans of MUL_MAT and MUL_MAT_ID
// (see matmul-check.h).

#include "matmul-check.h"

#include "contract/iq-tiles.h"
#include "contract/kquant-tiles.h"
#include "contract/quant-types.h"
#include "op-checks.h"

// Weights of the QUANT engine's integer kernels (matmul-quant.c): the tiled
// types of 32-element blocks (Q4_0, Q4_1, Q8_0, IQ4_NL, MXFP4, Q5_0, Q5_1);
// and Q1_0, Q2_0, NVFP4, whose blocks the kernels take as 32-element units;
// the K-quants' 256-element tiles have their own engine.
static int mm_quant_type(uint32_t type) {
    const struct htp_tile_format * f = htp_tile_format(type);
    return f != NULL && (f->blck_size == 32 || htp_quant_is_unit_type(type));
}

enum htp_mm_engine htp_mm_engine_of(uint32_t opcode, uint32_t weight_type) {
    if (htp_kq_type_ok(weight_type)) {
        return HTP_MM_KQUANT;
    }
    if (htp_iq_type_ok(weight_type)) {
        return HTP_MM_IQ;
    }
    if (mm_quant_type(weight_type) || weight_type == HTP_TYPE_BF16) {
        return HTP_MM_QUANT;
    }
    if (weight_type == HTP_TYPE_F32 || weight_type == HTP_TYPE_F16) {
        return opcode == HTP_OP_MUL_MAT_ID ? HTP_MM_QUANT : HTP_MM_FLOAT;
    }
    return HTP_MM_NONE;
}

// ---------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------

int htp_mm_needs_staging(const struct htp_tensor_view * src1) {
    return !htp_view_is_f32_packed(src1);
}

int64_t htp_mm_plan_float(const struct htp_tensor_view * src1, uint32_t n_threads, size_t vtcm_size, size_t * slice) {
    if (!htp_mm_needs_staging(src1)) {
        *slice = 0;
        return HTP_MM_CB;
    }
    return htp_mm_plan_staged(src1->ne[0], n_threads, vtcm_size, slice);
}

int64_t htp_mm_plan_staged(int64_t K, uint32_t n_threads, size_t vtcm_size, size_t * slice) {
    // Each staged column starts on a vector boundary.
    const size_t col_bytes = htp_scratch_round((size_t)(K > 0 ? K : 1) * sizeof(float));
    const size_t per       = vtcm_size / (n_threads ? n_threads : 1);
    int64_t      cb        = (int64_t)(per / col_bytes);
    cb                     = cb > HTP_MM_CB ? HTP_MM_CB : cb;
    *slice                 = (size_t)cb * col_bytes;
    return cb;
}

struct htp_qmm_plan htp_qmm_plan(const struct htp_tensor_view * w, uint32_t n_threads, size_t vtcm_size) {
    struct htp_qmm_plan            p     = {0};
    const int64_t                  K     = w->ne[0];
    const struct htp_tile_format * f     = mm_quant_type(w->type) ? htp_tile_format(w->type) : NULL;
    const int                      tiled = (w->flags & HTP_TENSOR_TILED) != 0;
    const size_t                   raw   = f ? (size_t)(K / 32) * HTP_QMM_ACT_BLOCK : (size_t)K * 4;
    p.act_stride                         = (raw + 63) / 64 * 64;
    p.slice_bytes                        = f ? (tiled ? 0 : (size_t)htp_tiled_group_bytes(f, K)) : (size_t)K * 4;
    p.slice_bytes                        = (p.slice_bytes + 63) / 64 * 64;
    p.max_cols                           = htp_qmm_max_cols(&p, 1, n_threads, vtcm_size);
    return p;
}

int64_t htp_qmm_max_cols(const struct htp_qmm_plan * p, int n_lists, uint32_t n_threads, size_t vtcm_size) {
    // The activations and the column lists start on a 64-byte boundary of the area.
    const size_t fixed = p->slice_bytes * n_threads + 64;
    const size_t col   = p->act_stride + (size_t)n_lists * HTP_QMM_COL_BYTES;
    return vtcm_size <= fixed ? 0 : (int64_t)((vtcm_size - fixed) / col);
}

int64_t htp_kq_mm_plan(const struct htp_tensor_view * w, int64_t ncols, int with_ids, uint32_t n_threads,
                       size_t vtcm_size, size_t * fixed) {
    const struct htp_tile_format * f      = htp_tile_format(w->type);
    const size_t                   gbytes = htp_tiled_group_bytes(f, w->ne[0]);
    size_t                         head   = with_ids ? ((size_t)ncols * sizeof(int32_t) + 127) / 128 * 128 : 0;
    if (htp_iq_type_ok(w->type)) {
        head += (size_t)n_threads * htp_iq_dgroup_bytes(w->ne[0]);  // decoded groups, tiled or not
    } else if (!(w->flags & HTP_TENSOR_TILED)) {
        head += (size_t)n_threads * gbytes;
    }
    *fixed             = head;
    const size_t col_b = (size_t)(w->ne[0] / HTP_KQ_QK) * HTP_KQ_ACT_BLOCK;
    if (col_b == 0) {
        return head <= vtcm_size ? ncols : 0;  // K = 0: nothing to quantize
    }
    if (head + col_b > vtcm_size) {
        return 0;
    }
    const int64_t fit = (int64_t)((vtcm_size - head) / col_b);
    return htp_min64(fit, ncols);
}

// ---------------------------------------------------------------------------
// Weight operands
// ---------------------------------------------------------------------------

int htp_kq_weights_check(const struct htp_tensor_view * w) {
    const struct htp_tile_format * f = htp_tile_format(w->type);
    if (!f || !(htp_kq_type_ok(w->type) || htp_iq_type_ok(w->type)) || w->ne[0] % HTP_KQ_QK != 0) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (w->flags & HTP_TENSOR_TILED) {
        return htp_tiled_strides_ok(f, w->ne, w->nb) ? HTP_STATUS_OK : HTP_STATUS_INVAL_PARAMS;
    }
    if (w->nb[0] != f->blck_bytes) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

// Weights of the QUANT engine: a tiled view with tiled.h's strides, plain
// rows of whole blocks, or float rows (never tiled).
static int qmm_weights_check(const struct htp_tensor_view * w) {
    if (mm_quant_type(w->type)) {
        if (w->flags & HTP_TENSOR_TILED) {
            return htp_quant_tiled_view_ok(w) ? HTP_STATUS_OK : HTP_STATUS_INVAL_PARAMS;
        }
        const struct htp_tile_format * f = htp_tile_format(w->type);
        return w->nb[0] == (int64_t)f->blck_bytes && w->ne[0] % f->blck_size == 0 ? HTP_STATUS_OK
                                                                                  : HTP_STATUS_NO_SUPPORT;
    }
    if (htp_type_is_float(w->type) && !(w->flags & HTP_TENSOR_TILED)) {
        return HTP_STATUS_OK;
    }
    return HTP_STATUS_NO_SUPPORT;
}

// ---------------------------------------------------------------------------
// MUL_MAT
// ---------------------------------------------------------------------------

int htp_op_mul_mat_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *dst = call->dst[0];
    if (!src0 || !src1 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(src1) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src0->ne[0] != src1->ne[0] || dst->ne[0] != src0->ne[1] || dst->ne[1] != src1->ne[1] ||
        dst->ne[2] != src1->ne[2] || dst->ne[3] != src1->ne[3]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_view_nelements(dst) > 0 &&
        (src0->ne[2] <= 0 || src0->ne[3] <= 0 || src1->ne[2] % src0->ne[2] != 0 || src1->ne[3] % src0->ne[3] != 0)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src1->type) || dst->type != HTP_TYPE_F32) {
        return HTP_STATUS_NO_SUPPORT;
    }
    size_t fixed;
    switch (htp_mm_engine_of(HTP_OP_MUL_MAT, src0->type)) {
        case HTP_MM_KQUANT:
        case HTP_MM_IQ: {
            const int rc = htp_kq_weights_check(src0);
            if (rc != HTP_STATUS_OK) {
                return rc;
            }
            if (htp_view_nelements(dst) > 0 &&
                htp_kq_mm_plan(src0, 1, 0, call->n_threads, call->vtcm_size, &fixed) < 1) {
                return HTP_STATUS_VTCM_TOO_SMALL;
            }
            return HTP_STATUS_OK;
        }
        case HTP_MM_QUANT: {
            const int rc = qmm_weights_check(src0);
            if (rc != HTP_STATUS_OK) {
                return rc;
            }
            return htp_qmm_plan(src0, call->n_threads, call->vtcm_size).max_cols >= 1 ? HTP_STATUS_OK
                                                                                      : HTP_STATUS_VTCM_TOO_SMALL;
        }
        case HTP_MM_FLOAT:
            if (src0->nb[0] != htp_float_type_size(src0->type) || (src0->flags & HTP_TENSOR_TILED)) {
                return HTP_STATUS_NO_SUPPORT;  // weight rows must be packed
            }
            return htp_mm_plan_float(src1, call->n_threads, call->vtcm_size, &fixed) >= 1 ? HTP_STATUS_OK
                                                                                          : HTP_STATUS_VTCM_TOO_SMALL;
        default:
            return HTP_STATUS_NO_SUPPORT;
    }
}

// ---------------------------------------------------------------------------
// MUL_MAT_ID
// ---------------------------------------------------------------------------

int htp_op_mul_mat_id_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *ids = call->src[2], *dst = call->dst[0];
    if (!src0 || !src1 || !ids || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(src1) ||
        !htp_view_shape_ok(ids) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // src0 [K, M, E, 1]; src1 [K, ne11, T, 1] with ne11 = 1 or U; ids [U, T]; dst [M, U, T, 1]
    if (src0->ne[3] != 1 || src1->ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1 || dst->ne[3] != 1 ||
        src1->ne[0] != src0->ne[0] || dst->ne[0] != src0->ne[1] || dst->ne[1] != ids->ne[0] ||
        dst->ne[2] != ids->ne[1] || src1->ne[2] != ids->ne[1]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_view_nelements(dst) > 0 && (src1->ne[1] <= 0 || ids->ne[0] % src1->ne[1] != 0 || src0->ne[2] <= 0)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (ids->type != HTP_TYPE_I32 || !htp_type_is_float(src1->type) || dst->type != HTP_TYPE_F32) {
        return HTP_STATUS_NO_SUPPORT;
    }
    const enum htp_mm_engine engine = htp_mm_engine_of(HTP_OP_MUL_MAT_ID, src0->type);
    if (engine == HTP_MM_KQUANT || engine == HTP_MM_IQ) {
        const int rc = htp_kq_weights_check(src0);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
        size_t fixed;
        if (htp_view_nelements(dst) > 0 &&
            htp_kq_mm_plan(src0, ids->ne[0] * ids->ne[1], 1, call->n_threads, call->vtcm_size, &fixed) < 1) {
            return HTP_STATUS_VTCM_TOO_SMALL;
        }
        return HTP_STATUS_OK;
    }
    const int rc = qmm_weights_check(src0);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    // A chunk holds at least one token: its ne11 activation rows and U columns.
    const int64_t per_token = htp_max64(src1->ne[1], ids->ne[0]);
    return htp_qmm_plan(src0, call->n_threads, call->vtcm_size).max_cols >= per_token ? HTP_STATUS_OK
                                                                                      : HTP_STATUS_VTCM_TOO_SMALL;
}
