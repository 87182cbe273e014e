// ops.c: the run table, one kernel per op code: the NPU core's own families
// (control ops, CPY, ALLREDUCE: op-families.h) and the kernel families
// (kernels.h). Which op codes run at all is the contract's to say: its check
// refuses a code without a kernel, so a NULL row is never reached from a batch.

#include "kernel-iface.h"
#include "kernels.h"
#include "op-families.h"

typedef int (*op_run_fn)(struct htp_op_ctx * ctx);

static const op_run_fn op_runs[HTP_OP_COUNT] = {
    [HTP_OP_NOP]             = htp_op_nop_run,
    [HTP_OP_MDEV_GROUP]      = htp_op_mdev_group_run,
    [HTP_OP_FENCE]           = htp_op_fence_run,
    [HTP_OP_CPY_FENCE]       = htp_op_cpy_fence_run,
    [HTP_OP_CPY]             = htp_op_cpy_run,
    [HTP_OP_ALLREDUCE]       = htp_op_allreduce_run,
    [HTP_OP_ADD]             = htp_op_binary_run,
    [HTP_OP_SUB]             = htp_op_binary_run,
    [HTP_OP_MUL]             = htp_op_binary_run,
    [HTP_OP_DIV]             = htp_op_binary_run,
    [HTP_OP_SCALE]           = htp_op_scale_run,
    [HTP_OP_UNARY]           = htp_op_unary_run,
    [HTP_OP_GLU]             = htp_op_glu_run,
    [HTP_OP_RMS_NORM]        = htp_op_norm_run,
    [HTP_OP_NORM]            = htp_op_norm_run,
    [HTP_OP_L2_NORM]         = htp_op_norm_run,
    [HTP_OP_CLAMP]           = htp_op_unary_run,
    [HTP_OP_SQR]             = htp_op_unary_run,
    [HTP_OP_SQRT]            = htp_op_unary_run,
    [HTP_OP_ADD_ID]          = htp_op_add_id_run,
    [HTP_OP_SUM_ROWS]        = htp_op_sum_rows_run,
    [HTP_OP_CUMSUM]          = htp_op_cumsum_run,
    [HTP_OP_ARGSORT]         = htp_op_argsort_run,
    [HTP_OP_REPEAT]          = htp_op_shape_run,
    [HTP_OP_CONCAT]          = htp_op_shape_run,
    [HTP_OP_PAD]             = htp_op_shape_run,
    [HTP_OP_DIAG]            = htp_op_shape_run,
    [HTP_OP_TRI]             = htp_op_shape_run,
    [HTP_OP_FILL]            = htp_op_shape_run,
    [HTP_OP_SOFT_MAX]        = htp_op_softmax_run,
    [HTP_OP_ROPE]            = htp_op_rope_run,
    [HTP_OP_MUL_MAT]         = htp_op_mul_mat_run,
    [HTP_OP_MUL_MAT_ID]      = htp_op_mul_mat_id_run,
    [HTP_OP_GET_ROWS]        = htp_op_get_rows_run,
    [HTP_OP_SET_ROWS]        = htp_op_set_rows_run,
    [HTP_OP_FLASH_ATTN_EXT]  = htp_op_flash_attn_ext_run,
    [HTP_OP_SSM_CONV]        = htp_op_ssm_conv_run,
    [HTP_OP_GATED_DELTA_NET] = htp_op_gated_delta_net_run,
    [HTP_OP_SOLVE_TRI]       = htp_op_solve_tri_run,
    [HTP_OP_IM2COL]          = htp_op_im2col_run,
    [HTP_OP_TOP_K]           = htp_op_top_k_run,
    [HTP_OP_RMS_NORM_MUL]    = htp_op_norm_run,
    [HTP_OP_MUL_MAT_ADD]     = htp_op_mul_mat_run,
    [HTP_OP_MUL_MAT_QKV]     = htp_op_mul_mat_shared_run,
    [HTP_OP_MUL_MAT_FFN]     = htp_op_mul_mat_shared_run,
    [HTP_OP_MUL_MAT_FFN_GLU] = htp_op_mul_mat_ffn_glu_run,
};

int htp_kernel_run(struct htp_op_ctx * ctx) {
    const uint32_t op = ctx->op.desc->opcode;
    if (op >= HTP_OP_COUNT || op_runs[op] == NULL) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return op_runs[op](ctx);
}
