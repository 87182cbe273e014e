// op-check.c: the check of each op code, by family (ops/op-checks.h).

#include "op-check.h"

#include "ops/op-checks.h"

typedef int (*op_check_fn)(const struct htp_op_call * call);

static const op_check_fn op_checks[HTP_OP_COUNT] = {
    [HTP_OP_NOP]             = htp_op_nop_check,
    [HTP_OP_MDEV_GROUP]      = htp_op_mdev_group_check,
    [HTP_OP_FENCE]           = htp_op_fence_check,
    [HTP_OP_CPY_FENCE]       = htp_op_cpy_fence_check,
    [HTP_OP_CPY]             = htp_op_cpy_check,
    [HTP_OP_ALLREDUCE]       = htp_op_allreduce_check,
    [HTP_OP_ADD]             = htp_op_binary_check,
    [HTP_OP_SUB]             = htp_op_binary_check,
    [HTP_OP_MUL]             = htp_op_binary_check,
    [HTP_OP_DIV]             = htp_op_binary_check,
    [HTP_OP_SCALE]           = htp_op_scale_check,
    [HTP_OP_UNARY]           = htp_op_unary_check,
    [HTP_OP_GLU]             = htp_op_glu_check,
    [HTP_OP_RMS_NORM]        = htp_op_norm_check,
    [HTP_OP_NORM]            = htp_op_norm_check,
    [HTP_OP_L2_NORM]         = htp_op_norm_check,
    [HTP_OP_CLAMP]           = htp_op_unary_check,
    [HTP_OP_SQR]             = htp_op_unary_check,
    [HTP_OP_SQRT]            = htp_op_unary_check,
    [HTP_OP_ADD_ID]          = htp_op_add_id_check,
    [HTP_OP_SUM_ROWS]        = htp_op_sum_rows_check,
    [HTP_OP_CUMSUM]          = htp_op_cumsum_check,
    [HTP_OP_ARGSORT]         = htp_op_argsort_check,
    [HTP_OP_REPEAT]          = htp_op_shape_check,
    [HTP_OP_CONCAT]          = htp_op_shape_check,
    [HTP_OP_PAD]             = htp_op_shape_check,
    [HTP_OP_DIAG]            = htp_op_shape_check,
    [HTP_OP_TRI]             = htp_op_shape_check,
    [HTP_OP_FILL]            = htp_op_shape_check,
    [HTP_OP_SOFT_MAX]        = htp_op_softmax_check,
    [HTP_OP_ROPE]            = htp_op_rope_check,
    [HTP_OP_MUL_MAT]         = htp_op_mul_mat_check,
    [HTP_OP_MUL_MAT_ID]      = htp_op_mul_mat_id_check,
    [HTP_OP_GET_ROWS]        = htp_op_get_rows_check,
    [HTP_OP_SET_ROWS]        = htp_op_set_rows_check,
    [HTP_OP_FLASH_ATTN_EXT]  = htp_op_flash_attn_ext_check,
    [HTP_OP_SSM_CONV]        = htp_op_ssm_conv_check,
    [HTP_OP_GATED_DELTA_NET] = htp_op_gated_delta_net_check,
    [HTP_OP_SOLVE_TRI]       = htp_op_solve_tri_check,
    [HTP_OP_IM2COL]          = htp_op_im2col_check,
    [HTP_OP_TOP_K]           = htp_op_top_k_check,
    [HTP_OP_RMS_NORM_MUL]    = htp_op_rms_norm_mul_check,
    [HTP_OP_MUL_MAT_ADD]     = htp_op_mul_mat_add_check,
    [HTP_OP_MUL_MAT_QKV]     = htp_op_mul_mat_shared_check,
    [HTP_OP_MUL_MAT_FFN]     = htp_op_mul_mat_shared_check,
    [HTP_OP_MUL_MAT_FFN_GLU] = htp_op_mul_mat_ffn_glu_check,
};

int htp_op_check(const struct htp_op_call * call) {
    const uint32_t op = call->desc->opcode;
    if (op >= HTP_OP_COUNT || op_checks[op] == NULL) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return op_checks[op](call);
}
