// norm-check.c: RMS_NORM, NORM and L2_NORM over rows (dim 0): src0 and dst of
// one shape (dst may alias src0), any strides, F32/F16/BF16 in and out;
// params[0] = eps (float, >= 0).

#include "op-checks.h"

int htp_op_norm_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *dst = call->dst[0];
    const uint32_t                op = call->desc->opcode;
    if (op != HTP_OP_RMS_NORM && op != HTP_OP_NORM && op != HTP_OP_L2_NORM) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const float eps = htp_param_f32(call->desc, 0);
    if (!(eps >= 0.0f)) {  // also refuses NaN
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
