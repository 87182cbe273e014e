// softmax-check.c: SOFT_MAX along rows with an optional mask (src1, F32/F16,
// broadcast over dims 2-3), optional sinks (src2, F32, one per head), scale
// and ALiBi max_bias (params[0], [1]); src0 and dst F32/F16/BF16 of one shape.

#include <math.h>

#include "op-checks.h"

int htp_op_softmax_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *mask = call->src[1], *sinks = call->src[2], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (mask) {
        if (!htp_view_shape_ok(mask) || mask->ne[0] != src0->ne[0] || mask->ne[1] < src0->ne[1] || mask->ne[2] <= 0 ||
            mask->ne[3] <= 0 || src0->ne[2] % mask->ne[2] != 0 || src0->ne[3] % mask->ne[3] != 0) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        if (mask->type != HTP_TYPE_F32 && mask->type != HTP_TYPE_F16) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    if (sinks) {
        if (!htp_view_shape_ok(sinks) || sinks->ne[0] < src0->ne[2] || !htp_view_readable_for(sinks, dst)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        if (sinks->type != HTP_TYPE_F32) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    const float scale = htp_param_f32(call->desc, 0), max_bias = htp_param_f32(call->desc, 1);
    if (!isfinite(scale) || !(max_bias >= 0.0f) || !isfinite(max_bias)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
