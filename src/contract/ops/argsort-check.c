// argsort-check.c: ARGSORT, F32 rows -> I32 indices of the same shape,
// ascending or descending (params[0]); dst rows are sorted in place as int32
// arrays, so they must be packed and aligned.

#include "contract/op-params.h"
#include "op-checks.h"

int htp_op_argsort_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (call->desc->params[0] != HTP_SORT_ASC && call->desc->params[0] != HTP_SORT_DESC) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src0->ne[0] > INT32_MAX) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src0->type != HTP_TYPE_F32 || dst->type != HTP_TYPE_I32) {
        return HTP_STATUS_NO_SUPPORT;
    }
    // dst rows are sorted in place as int32 arrays.
    if (dst->nb[0] != 4 || ((uintptr_t)dst->data & 3) != 0 || dst->nb[1] % 4 != 0 || dst->nb[2] % 4 != 0 ||
        dst->nb[3] % 4 != 0) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
