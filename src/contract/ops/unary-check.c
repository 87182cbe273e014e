// unary-check.c: the elementwise families: SCALE, UNARY (the ggml unary ops
// the kernels run), CLAMP, SQR, SQRT, and GLU (fused: src0 holds both halves,
// or split: src0 and src1); F32/F16/BF16 in and out, any strides.

#include "op-checks.h"
#include "contract/op-params.h"

// Operand checks common to the one-input ops: one input, output of its shape.
static int unary_check_same(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

// The ops of the UNARY family the kernels run: CLAMP, SQR, SQRT, and UNARY
// with one of these ggml unary ops in params[0].
static int unary_op_known(const struct htp_op_desc * desc) {
    switch (desc->opcode) {
        case HTP_OP_CLAMP:
        case HTP_OP_SQR:
        case HTP_OP_SQRT:
            return 1;
        case HTP_OP_UNARY:
            break;
        default:
            return 0;
    }
    switch (desc->params[0]) {
        case HTP_UNARY_NEG:
        case HTP_UNARY_TANH:
        case HTP_UNARY_SIGMOID:
        case HTP_UNARY_GELU:
        case HTP_UNARY_GELU_QUICK:
        case HTP_UNARY_SILU:
        case HTP_UNARY_EXP:
        case HTP_UNARY_SOFTPLUS:
            return 1;
        default:
            return 0;
    }
}

int htp_op_scale_check(const struct htp_op_call * call) {
    return unary_check_same(call);
}

int htp_op_unary_check(const struct htp_op_call * call) {
    const int rc = unary_check_same(call);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    return unary_op_known(call->desc) ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
}

int htp_op_glu_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src1) {
        if (!htp_view_same_shape(src0, src1) || !htp_view_same_shape(src0, dst)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    } else if (src0->ne[0] / 2 != dst->ne[0] || src0->ne[1] != dst->ne[1] || src0->ne[2] != dst->ne[2] ||
               src0->ne[3] != dst->ne[3]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type) || (src1 && !htp_type_is_float(src1->type))) {
        return HTP_STATUS_NO_SUPPORT;
    }
    const int32_t glu   = call->desc->params[0];
    const int     known = glu == HTP_GLU_SWIGLU || glu == HTP_GLU_GEGLU || glu == HTP_GLU_SWIGLU_OAI;
    return known ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
}
