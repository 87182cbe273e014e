// allreduce-check.c: ALLREDUCE's operands (the layout is in proto/htp-proto.h):
// every rank's tensor, packed F32 or F16 of one element count, then every
// rank's fence slot; dst is this rank's tensor.

#include "op-checks.h"

static int is_packed(const struct htp_tensor_view * v, int64_t esize) {
    return v->nb[0] == esize && v->nb[1] == v->nb[0] * v->ne[0] && v->nb[2] == v->nb[1] * v->ne[1] &&
           v->nb[3] == v->nb[2] * v->ne[2];
}

int htp_op_allreduce_check(const struct htp_op_call * call) {
    const int32_t * p       = call->desc->params;
    const int32_t   n_ranks = p[3];
    if (n_ranks < 2 || n_ranks > HTP_ALLREDUCE_MAX_RANKS || p[2] < 0 || p[2] >= n_ranks || (p[4] != 0 && p[4] != 1)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const struct htp_tensor_view * own = call->src[p[2]];
    const struct htp_tensor_view * dst = call->dst[0];
    if (own == NULL || dst == NULL || dst->data != own->data || !htp_view_same_shape(own, dst) ||
        dst->type != own->type) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (own->type != HTP_TYPE_F32 && own->type != HTP_TYPE_F16) {
        return HTP_STATUS_NO_SUPPORT;
    }
    const int64_t esize = own->type == HTP_TYPE_F32 ? 4 : 2;
    for (int32_t r = 0; r < n_ranks; r++) {
        const struct htp_tensor_view * t = call->src[r];
        if (t == NULL || t->type != own->type || htp_view_nelements(t) != htp_view_nelements(own) ||
            !htp_view_shape_ok(t) || !is_packed(t, esize) || ((uintptr_t)t->data % (uintptr_t)esize) != 0) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        int rc = htp_op_fence_operand_check(call->src[n_ranks + r], 1);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
    }
    for (int i = 2 * n_ranks; i < HTP_OP_MAX_INPUTS; i++) {
        if (call->src[i] != NULL) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    return HTP_STATUS_OK;
}
