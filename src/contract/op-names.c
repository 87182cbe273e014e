// op-names.c: the name of every op code, for logs and profiles on both sides.

#include "op-names.h"

#include "proto/htp-proto.h"

// Every op code, whether any kernel runs it or not.
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
    [HTP_OP_TOP_K]           = "TOP_K",
    [HTP_OP_RMS_NORM_MUL]    = "RMS_NORM_MUL",
    [HTP_OP_MUL_MAT_ADD]     = "MUL_MAT_ADD",
    [HTP_OP_MUL_MAT_QKV]     = "MUL_MAT_QKV",
    [HTP_OP_MUL_MAT_FFN]     = "MUL_MAT_FFN",
    [HTP_OP_MUL_MAT_FFN_GLU] = "MUL_MAT_FFN_GLU",
};

const char * htp_op_name(uint32_t opcode) {
    if (opcode >= HTP_OP_COUNT || op_names[opcode] == NULL) {
        return "?";
    }
    return op_names[opcode];
}
