// ops.c: the op dispatch table. One row per op code: { name, check, run }.
// The NPU core's own families (control ops, CPY) are listed here; the kernel
// families add theirs through HTP_KERNEL_TABLE_ROWS (kernels.h). A code with
// no row answers HTP_STATUS_NO_SUPPORT at check time, before the batch runs.

#include "htp-ops.h"
#include "kernels.h"
#include "op-families.h"

static const struct htp_op_row op_table[HTP_OP_COUNT] = {
    [HTP_OP_NOP]        = {"NOP", htp_op_nop_check, htp_op_nop_run},
    [HTP_OP_MDEV_GROUP] = {"MDEV_GROUP", htp_op_mdev_group_check, htp_op_mdev_group_run},
    [HTP_OP_FENCE]      = {"FENCE", htp_op_fence_check, htp_op_fence_run},
    [HTP_OP_CPY_FENCE]  = {"CPY_FENCE", htp_op_cpy_fence_check, htp_op_cpy_fence_run},
    [HTP_OP_CPY]        = {"CPY", htp_op_cpy_check, htp_op_cpy_run},
    [HTP_OP_ALLREDUCE]  = {"ALLREDUCE", htp_op_allreduce_check, htp_op_allreduce_run},
    HTP_KERNEL_TABLE_ROWS};

// Names of every op code, supported here or not (logs and profiles).
static const char * const op_names[HTP_OP_COUNT] = {
    [HTP_OP_INVALID]         = "INVALID",
    [HTP_OP_NOP]             = "NOP",
    [HTP_OP_MDEV_GROUP]      = "MDEV_GROUP",
    [HTP_OP_FENCE]           = "FENCE",
    [HTP_OP_CPY_FENCE]       = "CPY_FENCE",
    [HTP_OP_ALLREDUCE]       = "ALLREDUCE",
    [HTP_OP_CPY]             = "CPY",
    [HTP_OP_ADD]             = "ADD",
    [HTP_OP_SUB]             = "SUB",
    [HTP_OP_MUL]             = "MUL",
    [HTP_OP_DIV]             = "DIV",
    [HTP_OP_ADD_ID]          = "ADD_ID",
    [HTP_OP_SCALE]           = "SCALE",
    [HTP_OP_CLAMP]           = "CLAMP",
    [HTP_OP_SQR]             = "SQR",
    [HTP_OP_SQRT]            = "SQRT",
    [HTP_OP_SUM_ROWS]        = "SUM_ROWS",
    [HTP_OP_NORM]            = "NORM",
    [HTP_OP_L2_NORM]         = "L2_NORM",
    [HTP_OP_RMS_NORM]        = "RMS_NORM",
    [HTP_OP_SOFT_MAX]        = "SOFT_MAX",
    [HTP_OP_ROPE]            = "ROPE",
    [HTP_OP_MUL_MAT]         = "MUL_MAT",
    [HTP_OP_MUL_MAT_ID]      = "MUL_MAT_ID",
    [HTP_OP_GET_ROWS]        = "GET_ROWS",
    [HTP_OP_SET_ROWS]        = "SET_ROWS",
    [HTP_OP_UNARY]           = "UNARY",
    [HTP_OP_GLU]             = "GLU",
    [HTP_OP_FLASH_ATTN_EXT]  = "FLASH_ATTN_EXT",
    [HTP_OP_REPEAT]          = "REPEAT",
    [HTP_OP_ARGSORT]         = "ARGSORT",
    [HTP_OP_SSM_CONV]        = "SSM_CONV",
    [HTP_OP_GATED_DELTA_NET] = "GATED_DELTA_NET",
    [HTP_OP_CUMSUM]          = "CUMSUM",
    [HTP_OP_CONCAT]          = "CONCAT",
    [HTP_OP_FILL]            = "FILL",
    [HTP_OP_DIAG]            = "DIAG",
    [HTP_OP_SOLVE_TRI]       = "SOLVE_TRI",
    [HTP_OP_TRI]             = "TRI",
    [HTP_OP_PAD]             = "PAD",
    [HTP_OP_IM2COL]          = "IM2COL",
};

static const struct htp_op_row * row_of(uint32_t opcode) {
    if (opcode >= HTP_OP_COUNT || op_table[opcode].check == NULL || op_table[opcode].run == NULL) {
        return NULL;
    }
    return &op_table[opcode];
}

int htp_ops_check(const struct htp_op_ctx * ctx) {
    const struct htp_op_row * row = row_of(ctx->desc->opcode);
    return row ? row->check(ctx) : HTP_STATUS_NO_SUPPORT;
}

int htp_ops_run(struct htp_op_ctx * ctx) {
    const struct htp_op_row * row = row_of(ctx->desc->opcode);
    return row ? row->run(ctx) : HTP_STATUS_NO_SUPPORT;
}

const char * htp_op_name(uint32_t opcode) {
    if (opcode >= HTP_OP_COUNT) {
        return "?";
    }
    if (op_table[opcode].name != NULL) {
        return op_table[opcode].name;
    }
    return op_names[opcode] ? op_names[opcode] : "?";
}
