// binary-check.c: ADD, SUB, MUL, DIV with ggml's broadcasting: src1 is tiled
// over src0 (each ne of src0 a multiple of src1's), dst has src0's shape.
// Any strides on all three; any mix of F32, F16 and BF16.

#include "op-checks.h"

int htp_op_binary_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *dst = call->dst[0];
    const uint32_t                op = call->desc->opcode;
    if (!src0 || !src1 || !dst || (op != HTP_OP_ADD && op != HTP_OP_SUB && op != HTP_OP_MUL && op != HTP_OP_DIV)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_view_shape_ok(src0) || !htp_view_shape_ok(src1) || !htp_view_same_shape(src0, dst) ||
        !htp_view_can_repeat(src1, src0)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(src1->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
