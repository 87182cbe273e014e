// kernels.h: the ggml-op kernel families and their rows of the op dispatch
// table in ops.c. Each family provides a check (operands and params, before
// the batch runs; touches no tensor data) and a run (the computation, split
// across workers with ctx->run). Both return enum htp_status.
//
//   family       file            ops
//   binary       binary-ops.c    ADD SUB MUL DIV (broadcast src1; F32/F16/BF16)
//   scale        unary-ops.c     SCALE (x * s + b)
//   unary        unary-ops.c     UNARY: silu only
//   glu          unary-ops.c     GLU: swiglu only, fused or split form
//   rms_norm     norm-ops.c      RMS_NORM
//   softmax      softmax-ops.c   SOFT_MAX with mask, ALiBi, sinks
//   rope         rope-ops.c      ROPE modes normal and neox, YaRN, freq factors
//   mul_mat      matmul-ops.c    MUL_MAT F32/F16 weights x F32 activations
//   get_rows     rows-ops.c      GET_ROWS
//   set_rows     rows-ops.c      SET_ROWS (dst[0] is the tensor written into)

#ifndef HTP_KERNELS_H
#define HTP_KERNELS_H

#include "htp-ops.h"

// Values of ggml's enum ggml_unary_op / enum ggml_glu_op that these kernels
// run (op params carry them verbatim; the NPU does not include ggml, the
// kernel test checks these against ggml.h).
#define HTP_UNARY_SILU 10  // GGML_UNARY_OP_SILU
#define HTP_GLU_SWIGLU 2   // GGML_GLU_OP_SWIGLU

int htp_op_binary_check(const struct htp_op_ctx* ctx);
int htp_op_binary_run(struct htp_op_ctx* ctx);

int htp_op_scale_check(const struct htp_op_ctx* ctx);
int htp_op_scale_run(struct htp_op_ctx* ctx);

int htp_op_unary_check(const struct htp_op_ctx* ctx);
int htp_op_unary_run(struct htp_op_ctx* ctx);

int htp_op_glu_check(const struct htp_op_ctx* ctx);
int htp_op_glu_run(struct htp_op_ctx* ctx);

int htp_op_rms_norm_check(const struct htp_op_ctx* ctx);
int htp_op_rms_norm_run(struct htp_op_ctx* ctx);

int htp_op_softmax_check(const struct htp_op_ctx* ctx);
int htp_op_softmax_run(struct htp_op_ctx* ctx);

int htp_op_rope_check(const struct htp_op_ctx* ctx);
int htp_op_rope_run(struct htp_op_ctx* ctx);

int htp_op_mul_mat_check(const struct htp_op_ctx* ctx);
int htp_op_mul_mat_run(struct htp_op_ctx* ctx);

int htp_op_get_rows_check(const struct htp_op_ctx* ctx);
int htp_op_get_rows_run(struct htp_op_ctx* ctx);

int htp_op_set_rows_check(const struct htp_op_ctx* ctx);
int htp_op_set_rows_run(struct htp_op_ctx* ctx);

// Rows spliced into the dispatch table of ops.c, indexed by op code:
//   [HTP_OP_X] = { "X", check_fn, run_fn },
#define HTP_KERNEL_TABLE_ROWS                                                     \
    [HTP_OP_ADD]      = {"ADD", htp_op_binary_check, htp_op_binary_run},          \
    [HTP_OP_SUB]      = {"SUB", htp_op_binary_check, htp_op_binary_run},          \
    [HTP_OP_MUL]      = {"MUL", htp_op_binary_check, htp_op_binary_run},          \
    [HTP_OP_DIV]      = {"DIV", htp_op_binary_check, htp_op_binary_run},          \
    [HTP_OP_SCALE]    = {"SCALE", htp_op_scale_check, htp_op_scale_run},          \
    [HTP_OP_UNARY]    = {"UNARY", htp_op_unary_check, htp_op_unary_run},          \
    [HTP_OP_GLU]      = {"GLU", htp_op_glu_check, htp_op_glu_run},                \
    [HTP_OP_RMS_NORM] = {"RMS_NORM", htp_op_rms_norm_check, htp_op_rms_norm_run}, \
    [HTP_OP_SOFT_MAX] = {"SOFT_MAX", htp_op_softmax_check, htp_op_softmax_run},   \
    [HTP_OP_ROPE]     = {"ROPE", htp_op_rope_check, htp_op_rope_run},             \
    [HTP_OP_MUL_MAT]  = {"MUL_MAT", htp_op_mul_mat_check, htp_op_mul_mat_run},    \
    [HTP_OP_GET_ROWS] = {"GET_ROWS", htp_op_get_rows_check, htp_op_get_rows_run}, \
    [HTP_OP_SET_ROWS] = {"SET_ROWS", htp_op_set_rows_check, htp_op_set_rows_run},

#endif  // HTP_KERNELS_H
