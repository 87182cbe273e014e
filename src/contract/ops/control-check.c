// control-check.c: the ops with no ggml counterpart: NOP, FENCE (params[0] =
// seq, params[1] = 1 signal or 0 wait), CPY_FENCE (a CPY, then signal the
// fence src[1]) and MDEV_GROUP (params[0] = member, src[0] = the group's fence
// slots, one per member).

#include "op-checks.h"

int htp_op_fence_operand_check(const struct htp_tensor_view * v, int64_t min_slots) {
    if (v == NULL || !(v->flags & HTP_TENSOR_FENCE) || v->type != HTP_TYPE_I8 || v->ne[0] != HTP_FENCE_SLOT_SIZE ||
        v->nb[0] != 1 || v->ne[2] != 1 || v->ne[3] != 1 || v->ne[1] < min_slots ||
        (v->ne[1] > 1 && v->nb[1] != HTP_FENCE_SLOT_SIZE) || ((uintptr_t)v->data % 4) != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return HTP_STATUS_OK;
}

int htp_op_nop_check(const struct htp_op_call * call) {
    (void)call;
    return HTP_STATUS_OK;
}

int htp_op_fence_check(const struct htp_op_call * call) {
    const int32_t * p = call->desc->params;
    if (p[1] != 0 && p[1] != 1) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return htp_op_fence_operand_check(call->src[0], 1);
}

int htp_op_cpy_fence_check(const struct htp_op_call * call) {
    int rc = htp_op_fence_operand_check(call->src[1], 1);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    // The copy sees src[0] and dst[0] only.
    struct htp_op_call c = *call;
    for (int i = 1; i < HTP_OP_MAX_INPUTS; i++) {
        c.src[i] = NULL;
    }
    return htp_op_cpy_check(&c);
}

int htp_op_mdev_group_check(const struct htp_op_call * call) {
    const struct htp_tensor_view * f  = call->src[0];
    int                            rc = htp_op_fence_operand_check(f, 1);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    if (call->desc->params[0] < 0 || (int64_t)call->desc->params[0] >= f->ne[1] || f->ne[1] > HTP_GROUP_MAX_MEMBERS) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return HTP_STATUS_OK;
}
