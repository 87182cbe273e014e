// fused-check.c: the fused ops (layouts in proto/htp-proto.h). A fused op is
// malformed unless it carries HTP_OP_FLAG_FUSED; each part must pass the
// check of the op it stands for, on the operands that part sees.
//
//   RMS_NORM_MUL  src0 x, src1 w (tiled over x), dst x's shape; params[0] = eps
//   MUL_MAT_ADD   src0, src1 as MUL_MAT; src2 F32 tiled over the matmul's
//                 result; dst F32, the matmul's shape

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
