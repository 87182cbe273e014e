// kernels.h: the ggml-op kernel families, listed in the run table of ops.c. Each family's run computes an op whose
// check (the contract's, contract/ops/op-checks.h) passed, split across workers with ctx->run, and returns enum
// htp_status.
//
//   family       file            ops
//   binary       binary-ops.c    ADD SUB MUL DIV (broadcast src1; F32/F16/BF16)
//   scale        unary-ops.c     SCALE (x * s + b)
//   unary        unary-ops.c     UNARY (neg tanh sigmoid gelu gelu_quick silu exp softplus), CLAMP SQR SQRT
//   glu          unary-ops.c     GLU: swiglu, geglu, swiglu_oai; fused or split form
//   norm         norm-ops.c      RMS_NORM NORM L2_NORM, fused RMS_NORM_MUL
//   add_id       add-id-ops.c    ADD_ID (bias row per selected expert)
//   sum_rows     reduce-ops.c    SUM_ROWS
//   cumsum       reduce-ops.c    CUMSUM (along dim 0)
//   argsort      argsort-ops.c   ARGSORT (F32 -> I32, ascending or descending), TOP_K
//   shape        shape-ops.c     REPEAT CONCAT PAD DIAG TRI FILL
//   softmax      softmax-ops.c   SOFT_MAX with mask, ALiBi, sinks
//   rope         rope-ops.c      ROPE modes normal, neox, mrope, imrope, vision; YaRN, freq factors
//   mul_mat      matmul-ops.c    MUL_MAT, MUL_MAT_ID, fused MUL_MAT_ADD/QKV/FFN(_GLU): the front of the float, quant
//   and K-quant kernels (matmul.h) get_rows     rows-ops.c      GET_ROWS set_rows     rows-ops.c      SET_ROWS (dst[0]
//   is the tensor written into) flash_attn   flash-attn-ops.c FLASH_ATTN_EXT (F32/F16/BF16/block-type K/V, mask, sinks,
//   softcap, ALiBi, GQA) ssm          ssm-ops.c       SSM_CONV, GATED_DELTA_NET (scalar and KDA gates, snapshots),
//   SOLVE_TRI im2col       im2col-ops.c    IM2COL 1D/2D, F32 or F16 output

#ifndef HTP_KERNELS_H
#define HTP_KERNELS_H

#include "contract/op-params.h"
#include "kernel-iface.h"

int htp_op_binary_run(struct htp_op_ctx * ctx);
int htp_op_scale_run(struct htp_op_ctx * ctx);
int htp_op_unary_run(struct htp_op_ctx * ctx);
int htp_op_glu_run(struct htp_op_ctx * ctx);
int htp_op_norm_run(struct htp_op_ctx * ctx);
int htp_op_add_id_run(struct htp_op_ctx * ctx);
int htp_op_sum_rows_run(struct htp_op_ctx * ctx);
int htp_op_cumsum_run(struct htp_op_ctx * ctx);
int htp_op_argsort_run(struct htp_op_ctx * ctx);
int htp_op_shape_run(struct htp_op_ctx * ctx);
int htp_op_softmax_run(struct htp_op_ctx * ctx);
int htp_op_rope_run(struct htp_op_ctx * ctx);
int htp_op_mul_mat_run(struct htp_op_ctx * ctx);
int htp_op_mul_mat_id_run(struct htp_op_ctx * ctx);
int htp_op_mul_mat_shared_run(struct htp_op_ctx * ctx);
int htp_op_mul_mat_ffn_glu_run(struct htp_op_ctx * ctx);
int htp_op_get_rows_run(struct htp_op_ctx * ctx);
int htp_op_set_rows_run(struct htp_op_ctx * ctx);
int htp_op_flash_attn_ext_run(struct htp_op_ctx * ctx);
int htp_op_ssm_conv_run(struct htp_op_ctx * ctx);
int htp_op_gated_delta_net_run(struct htp_op_ctx * ctx);
int htp_op_solve_tri_run(struct htp_op_ctx * ctx);
int htp_op_im2col_run(struct htp_op_ctx * ctx);
int htp_op_top_k_run(struct htp_op_ctx * ctx);

// FLASH_ATTN_EXT's block-K integer dot (and test-hvx's hook): isum[b] = the sum
// over e < 32 of k[32 b + e] * q[32 b + e], b < nbk; HVX or portable C as
// htp_kernels_portable() says (the same sums).
#define HTP_FA_MAX_BLOCKS 32  // blocks per call the kernel passes at most

void htp_fa_block_isums(const int8_t * k, const int8_t * q, int64_t nbk, int32_t * isum);

#endif  // HTP_KERNELS_H
