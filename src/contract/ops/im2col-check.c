// im2col-check.c: IM2COL's operands and params, read once for the check and
// the kernel (see im2col-check.h).

#include "im2col-check.h"

#include "op-checks.h"

int htp_im2col_read(const struct htp_op_call * call, struct htp_im2col_params * a) {
    const struct htp_tensor_view *ker = call->src[0], *src = call->src[1], *dst = call->dst[0];
    if (!ker || !src || !dst || !htp_view_shape_ok(ker) || !htp_view_shape_ok(src) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const int32_t * p = call->desc->params;
    a->src = src, a->dst = dst;
    a->s0 = p[0], a->s1 = p[1], a->p0 = p[2], a->p1 = p[3], a->d0 = p[4], a->d1 = p[5];
    a->is_2d = p[6] == 1;
    if (a->s0 <= 0 || a->d0 <= 0 || a->p0 < 0 || (a->is_2d && (a->s1 <= 0 || a->d1 <= 0 || a->p1 < 0))) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    a->KW = ker->ne[0];
    a->KH = a->is_2d ? ker->ne[1] : 1;
    a->IW = src->ne[0];
    a->IH = a->is_2d ? src->ne[1] : 1;
    a->IC = a->is_2d ? src->ne[2] : src->ne[1];
    a->N  = a->is_2d ? src->ne[3] : src->ne[2];
    a->OW = dst->ne[1];
    a->OH = a->is_2d ? dst->ne[2] : 1;
    if ((a->is_2d ? ker->ne[2] : ker->ne[1]) != a->IC || (!a->is_2d && src->ne[3] != 1)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const int64_t ow = (a->IW + 2 * (int64_t)a->p0 - (int64_t)a->d0 * (a->KW - 1) - 1) / a->s0 + 1;
    const int64_t oh = a->is_2d ? (a->IH + 2 * (int64_t)a->p1 - (int64_t)a->d1 * (a->KH - 1) - 1) / a->s1 + 1 : 1;
    if (dst->ne[0] != a->IC * a->KH * a->KW || a->OW != ow || a->OH != oh ||
        (a->is_2d ? dst->ne[3] != a->N : (dst->ne[2] != a->N || dst->ne[3] != 1))) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (dst->type != HTP_TYPE_F32 && dst->type != HTP_TYPE_F16) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (src->type != HTP_TYPE_F32 && !(src->type == HTP_TYPE_F16 && dst->type == HTP_TYPE_F16)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (!htp_view_rows_packed(dst) || !htp_view_rows_packed(src)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

int htp_op_im2col_check(const struct htp_op_call * call) {
    struct htp_im2col_params a;
    return htp_im2col_read(call, &a);
}
