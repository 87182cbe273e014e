// kernels.h: the ggml-op kernel families and their rows of the op dispatch
// table in ops.c. Each family provides a check (operands and params, before
// the batch runs; touches no tensor data) and a run (the computation, split
// across workers with ctx->run). Both return enum htp_status.
//
//   family       file            ops
//   binary       binary-ops.c    ADD SUB MUL DIV (broadcast src1; F32/F16/BF16)
//   scale        unary-ops.c     SCALE (x * s + b)
//   unary        unary-ops.c     UNARY (neg tanh sigmoid gelu gelu_quick silu exp softplus), CLAMP SQR SQRT
//   glu          unary-ops.c     GLU: swiglu, geglu, swiglu_oai; fused or split form
//   norm         norm-ops.c      RMS_NORM NORM L2_NORM
//   add_id       add-id-ops.c    ADD_ID (bias row per selected expert)
//   sum_rows     reduce-ops.c    SUM_ROWS
//   cumsum       reduce-ops.c    CUMSUM (along dim 0)
//   argsort      argsort-ops.c   ARGSORT (F32 -> I32, ascending or descending)
//   shape        shape-ops.c     REPEAT CONCAT PAD DIAG TRI FILL
//   softmax      softmax-ops.c   SOFT_MAX with mask, ALiBi, sinks
//   rope         rope-ops.c      ROPE modes normal, neox, mrope, imrope, vision; YaRN, freq factors
//   mul_mat      matmul-ops.c    MUL_MAT F32/F16 weights x F32 activations
//   get_rows     rows-ops.c      GET_ROWS
//   set_rows     rows-ops.c      SET_ROWS (dst[0] is the tensor written into)
//   flash_attn   flash-attn-ops.c FLASH_ATTN_EXT (F32/F16 K/V, mask, sinks, softcap, ALiBi, GQA)
//   ssm          ssm-ops.c       SSM_CONV, GATED_DELTA_NET (scalar and KDA gates, snapshots), SOLVE_TRI
//   im2col       im2col-ops.c    IM2COL 1D/2D, F32 or F16 output

#ifndef HTP_KERNELS_H
#define HTP_KERNELS_H

#include "htp-ops.h"

// Values of ggml's enum ggml_unary_op / enum ggml_glu_op that these kernels
// run (op params carry them verbatim; the NPU does not include ggml, the
// kernel test checks these against ggml.h).
#define HTP_UNARY_NEG        2   // GGML_UNARY_OP_NEG
#define HTP_UNARY_TANH       4   // GGML_UNARY_OP_TANH
#define HTP_UNARY_SIGMOID    7   // GGML_UNARY_OP_SIGMOID
#define HTP_UNARY_GELU       8   // GGML_UNARY_OP_GELU
#define HTP_UNARY_GELU_QUICK 9   // GGML_UNARY_OP_GELU_QUICK
#define HTP_UNARY_SILU       10  // GGML_UNARY_OP_SILU
#define HTP_UNARY_EXP        13  // GGML_UNARY_OP_EXP
#define HTP_UNARY_SOFTPLUS   15  // GGML_UNARY_OP_SOFTPLUS
#define HTP_GLU_GEGLU        1   // GGML_GLU_OP_GEGLU
#define HTP_GLU_SWIGLU       2   // GGML_GLU_OP_SWIGLU
#define HTP_GLU_SWIGLU_OAI   3   // GGML_GLU_OP_SWIGLU_OAI
// enum ggml_tri_type (TRI params[0]) and enum ggml_sort_order (ARGSORT params[0]).
#define HTP_TRI_UPPER_DIAG 0
#define HTP_TRI_UPPER      1
#define HTP_TRI_LOWER_DIAG 2
#define HTP_TRI_LOWER      3
#define HTP_SORT_ASC       0
#define HTP_SORT_DESC      1

int htp_op_binary_check(const struct htp_op_ctx * ctx);
int htp_op_binary_run(struct htp_op_ctx * ctx);

int htp_op_scale_check(const struct htp_op_ctx * ctx);
int htp_op_scale_run(struct htp_op_ctx * ctx);

int htp_op_unary_check(const struct htp_op_ctx * ctx);
int htp_op_unary_run(struct htp_op_ctx * ctx);

int htp_op_glu_check(const struct htp_op_ctx * ctx);
int htp_op_glu_run(struct htp_op_ctx * ctx);

int htp_op_norm_check(const struct htp_op_ctx * ctx);
int htp_op_norm_run(struct htp_op_ctx * ctx);

int htp_op_add_id_check(const struct htp_op_ctx * ctx);
int htp_op_add_id_run(struct htp_op_ctx * ctx);

int htp_op_sum_rows_check(const struct htp_op_ctx * ctx);
int htp_op_sum_rows_run(struct htp_op_ctx * ctx);

int htp_op_cumsum_check(const struct htp_op_ctx * ctx);
int htp_op_cumsum_run(struct htp_op_ctx * ctx);

int htp_op_argsort_check(const struct htp_op_ctx * ctx);
int htp_op_argsort_run(struct htp_op_ctx * ctx);

int htp_op_shape_check(const struct htp_op_ctx * ctx);
int htp_op_shape_run(struct htp_op_ctx * ctx);

int htp_op_softmax_check(const struct htp_op_ctx * ctx);
int htp_op_softmax_run(struct htp_op_ctx * ctx);

int htp_op_rope_check(const struct htp_op_ctx * ctx);
int htp_op_rope_run(struct htp_op_ctx * ctx);

int htp_op_mul_mat_check(const struct htp_op_ctx * ctx);
int htp_op_mul_mat_run(struct htp_op_ctx * ctx);

// MUL_MAT_ID (qmatmul-ops.c, all weight types; see quant.h).
int htp_op_mul_mat_id_check(const struct htp_op_ctx * ctx);
int htp_op_mul_mat_id_run(struct htp_op_ctx * ctx);

int htp_op_get_rows_check(const struct htp_op_ctx * ctx);
int htp_op_get_rows_run(struct htp_op_ctx * ctx);

int htp_op_set_rows_check(const struct htp_op_ctx * ctx);
int htp_op_set_rows_run(struct htp_op_ctx * ctx);

int htp_op_flash_attn_ext_check(const struct htp_op_ctx * ctx);
int htp_op_flash_attn_ext_run(struct htp_op_ctx * ctx);

int htp_op_ssm_conv_check(const struct htp_op_ctx * ctx);
int htp_op_ssm_conv_run(struct htp_op_ctx * ctx);

int htp_op_gated_delta_net_check(const struct htp_op_ctx * ctx);
int htp_op_gated_delta_net_run(struct htp_op_ctx * ctx);

int htp_op_solve_tri_check(const struct htp_op_ctx * ctx);
int htp_op_solve_tri_run(struct htp_op_ctx * ctx);

int htp_op_im2col_check(const struct htp_op_ctx * ctx);
int htp_op_im2col_run(struct htp_op_ctx * ctx);

// Rows spliced into the dispatch table of ops.c, indexed by op code:
//   [HTP_OP_X] = { "X", check_fn, run_fn },
#define HTP_KERNEL_TABLE_ROWS                                                                                 \
    [HTP_OP_ADD]             = {"ADD", htp_op_binary_check, htp_op_binary_run},                               \
    [HTP_OP_SUB]             = {"SUB", htp_op_binary_check, htp_op_binary_run},                               \
    [HTP_OP_MUL]             = {"MUL", htp_op_binary_check, htp_op_binary_run},                               \
    [HTP_OP_DIV]             = {"DIV", htp_op_binary_check, htp_op_binary_run},                               \
    [HTP_OP_SCALE]           = {"SCALE", htp_op_scale_check, htp_op_scale_run},                               \
    [HTP_OP_UNARY]           = {"UNARY", htp_op_unary_check, htp_op_unary_run},                               \
    [HTP_OP_GLU]             = {"GLU", htp_op_glu_check, htp_op_glu_run},                                     \
    [HTP_OP_RMS_NORM]        = {"RMS_NORM", htp_op_norm_check, htp_op_norm_run},                              \
    [HTP_OP_NORM]            = {"NORM", htp_op_norm_check, htp_op_norm_run},                                  \
    [HTP_OP_L2_NORM]         = {"L2_NORM", htp_op_norm_check, htp_op_norm_run},                               \
    [HTP_OP_CLAMP]           = {"CLAMP", htp_op_unary_check, htp_op_unary_run},                               \
    [HTP_OP_SQR]             = {"SQR", htp_op_unary_check, htp_op_unary_run},                                 \
    [HTP_OP_SQRT]            = {"SQRT", htp_op_unary_check, htp_op_unary_run},                                \
    [HTP_OP_ADD_ID]          = {"ADD_ID", htp_op_add_id_check, htp_op_add_id_run},                            \
    [HTP_OP_SUM_ROWS]        = {"SUM_ROWS", htp_op_sum_rows_check, htp_op_sum_rows_run},                      \
    [HTP_OP_CUMSUM]          = {"CUMSUM", htp_op_cumsum_check, htp_op_cumsum_run},                            \
    [HTP_OP_ARGSORT]         = {"ARGSORT", htp_op_argsort_check, htp_op_argsort_run},                         \
    [HTP_OP_REPEAT]          = {"REPEAT", htp_op_shape_check, htp_op_shape_run},                              \
    [HTP_OP_CONCAT]          = {"CONCAT", htp_op_shape_check, htp_op_shape_run},                              \
    [HTP_OP_PAD]             = {"PAD", htp_op_shape_check, htp_op_shape_run},                                 \
    [HTP_OP_DIAG]            = {"DIAG", htp_op_shape_check, htp_op_shape_run},                                \
    [HTP_OP_TRI]             = {"TRI", htp_op_shape_check, htp_op_shape_run},                                 \
    [HTP_OP_FILL]            = {"FILL", htp_op_shape_check, htp_op_shape_run},                                \
    [HTP_OP_SOFT_MAX]        = {"SOFT_MAX", htp_op_softmax_check, htp_op_softmax_run},                        \
    [HTP_OP_ROPE]            = {"ROPE", htp_op_rope_check, htp_op_rope_run},                                  \
    [HTP_OP_MUL_MAT]         = {"MUL_MAT", htp_op_mul_mat_check, htp_op_mul_mat_run},                         \
    [HTP_OP_MUL_MAT_ID]      = {"MUL_MAT_ID", htp_op_mul_mat_id_check, htp_op_mul_mat_id_run},                \
    [HTP_OP_GET_ROWS]        = {"GET_ROWS", htp_op_get_rows_check, htp_op_get_rows_run},                      \
    [HTP_OP_SET_ROWS]        = {"SET_ROWS", htp_op_set_rows_check, htp_op_set_rows_run},                      \
    [HTP_OP_FLASH_ATTN_EXT]  = {"FLASH_ATTN_EXT", htp_op_flash_attn_ext_check, htp_op_flash_attn_ext_run},    \
    [HTP_OP_SSM_CONV]        = {"SSM_CONV", htp_op_ssm_conv_check, htp_op_ssm_conv_run},                      \
    [HTP_OP_GATED_DELTA_NET] = {"GATED_DELTA_NET", htp_op_gated_delta_net_check, htp_op_gated_delta_net_run}, \
    [HTP_OP_SOLVE_TRI]       = {"SOLVE_TRI", htp_op_solve_tri_check, htp_op_solve_tri_run},                   \
    [HTP_OP_IM2COL]          = {"IM2COL", htp_op_im2col_check, htp_op_im2col_run},

#endif  // HTP_KERNELS_H
