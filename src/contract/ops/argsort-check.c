// argsort-check.c: ARGSORT, F32 rows -> I32 indices of the same shape,
// ascending or descending (params[0]); dst rows are sorted in place as int32
// arrays, so they must be packed and aligned. TOP_K, F32 rows -> the I32
// indices of each row's k largest (k = dst ne[0]).

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

// Rows evenly spaced over dims 1..3 (each dim's stride the one below times
// its extent, where the extent is above 1): ggml-cpu's TOP_K finds row i at
// i * nb[1], which is row i only then.
static int top_k_rows_flat(const struct htp_tensor_view * v) {
    return (v->ne[2] <= 1 || v->nb[2] == v->ne[1] * v->nb[1]) && (v->ne[3] <= 1 || v->nb[3] == v->ne[2] * v->nb[2]);
}

// TOP_K: src0 F32 [n, ne1, ne2, ne3] -> dst I32 [k, ne1, ne2, ne3], k <= n.
// Claimed as ggml-cpu computes it right: src0 elements packed (it reads rows
// as float arrays) and both tensors' rows evenly spaced; dst rows serve as
// the kernel's heap, so they are packed and aligned as ARGSORT's.
int htp_op_top_k_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *dst = call->dst[0];
    if (!src0 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (dst->ne[0] > src0->ne[0] || dst->ne[1] != src0->ne[1] || dst->ne[2] != src0->ne[2] ||
        dst->ne[3] != src0->ne[3] || src0->ne[0] > INT32_MAX) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src0->type != HTP_TYPE_F32 || dst->type != HTP_TYPE_I32) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (src0->nb[0] != 4 || !top_k_rows_flat(src0) || !top_k_rows_flat(dst)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (dst->nb[0] != 4 || ((uintptr_t)dst->data & 3) != 0 || dst->nb[1] % 4 != 0 || dst->nb[2] % 4 != 0 ||
        dst->nb[3] % 4 != 0) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
