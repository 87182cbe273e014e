// reduce-check.c: SUM_ROWS (src0 [ne0, ne1, ne2, ne3] -> dst [1, ne1, ne2, ne3])
// and CUMSUM (along dim 0, dst of src0's shape); any strides, F32/F16/BF16.

#include "op-checks.h"

static int reduce_check_types(const struct htp_tensor_view * src0, const struct htp_tensor_view * dst) {
    return htp_type_is_float(src0->type) && htp_type_is_float(dst->type) ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
}

int htp_op_sum_rows_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (dst->ne[0] != 1 || dst->ne[1] != src0->ne[1] || dst->ne[2] != src0->ne[2] || dst->ne[3] != src0->ne[3]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return reduce_check_types(src0, dst);
}

int htp_op_cumsum_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return reduce_check_types(src0, dst);
}
