// add-id-check.c: ADD_ID, a bias added per selected expert:
//   src0 [ne0, ne1 = experts used, ne2 = tokens, ne3]   F32/F16/BF16, any strides
//   src1 [ne0, n_as = experts, ...]                     F32/F16/BF16
//   src2 ids I32 [>= ne1, >= ne2]; dst src0's shape.
// The ids themselves are data: the kernel checks each against n_as as it reads it.

#include "op-checks.h"

int htp_op_add_id_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *ids = call->src[2], *dst = call->dst[0];
    if (!src0 || !src1 || !ids || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(src1) ||
        !htp_view_shape_ok(ids) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src1->ne[0] != src0->ne[0] || ids->ne[0] < src0->ne[1] || ids->ne[1] < src0->ne[2]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Each dst row reads an id and a src1 row. An empty src1 or ids (a zero
    // in a dimension the rules above leave free) spans no byte, so validation
    // lets it sit anywhere, even at its buffer's guard page: the fuzzer read
    // there. Refuse them unless there is nothing to compute.
    if (htp_view_nelements(dst) > 0 && (htp_view_nelements(src1) == 0 || htp_view_nelements(ids) == 0)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (ids->type != HTP_TYPE_I32 || !htp_type_is_float(src0->type) || !htp_type_is_float(src1->type) ||
        !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
