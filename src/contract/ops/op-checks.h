// op-checks.h: the support check of each op family, one file each beside
// this header; contract/op-check.c dispatches to them by op code. Each
// returns enum htp_status: HTP_STATUS_OK, HTP_STATUS_INVAL_PARAMS (malformed),
// HTP_STATUS_NO_SUPPORT (well formed, but not something the kernels do) or
// HTP_STATUS_VTCM_TOO_SMALL (its smallest working set does not fit the
// scratch). A check reads shapes, strides, types, flags and params, never
// tensor data.
//
//   family      file                 ops
//   control     control-check.c      NOP FENCE CPY_FENCE MDEV_GROUP
//   allreduce   allreduce-check.c    ALLREDUCE
//   cpy         cpy-check.c          CPY (CONT, DUP)
//   binary      binary-check.c       ADD SUB MUL DIV
//   unary       unary-check.c        SCALE UNARY CLAMP SQR SQRT GLU
//   norm        norm-check.c         RMS_NORM NORM L2_NORM
//   add_id      add-id-check.c       ADD_ID
//   reduce      reduce-check.c       SUM_ROWS CUMSUM
//   argsort     argsort-check.c      ARGSORT, TOP_K
//   shape       shape-check.c        REPEAT CONCAT PAD DIAG TRI FILL
//   softmax     softmax-check.c      SOFT_MAX
//   rope        rope-check.c         ROPE
//   matmul      matmul-check.c       MUL_MAT MUL_MAT_ID
//   rows        rows-check.c         GET_ROWS SET_ROWS
//   flash_attn  flash-attn-check.c   FLASH_ATTN_EXT
//   ssm         ssm-check.c          SSM_CONV GATED_DELTA_NET SOLVE_TRI
//   im2col      im2col-check.c       IM2COL
//   fused       fused-check.c        RMS_NORM_MUL MUL_MAT_ADD MUL_MAT_QKV MUL_MAT_FFN(_GLU)

#ifndef HTP_CONTRACT_OP_CHECKS_H
#define HTP_CONTRACT_OP_CHECKS_H

#include "contract/op-call.h"

int htp_op_nop_check(const struct htp_op_call * call);
int htp_op_fence_check(const struct htp_op_call * call);
int htp_op_cpy_fence_check(const struct htp_op_call * call);
int htp_op_mdev_group_check(const struct htp_op_call * call);
int htp_op_allreduce_check(const struct htp_op_call * call);
int htp_op_cpy_check(const struct htp_op_call * call);
int htp_op_binary_check(const struct htp_op_call * call);
int htp_op_scale_check(const struct htp_op_call * call);
int htp_op_unary_check(const struct htp_op_call * call);
int htp_op_glu_check(const struct htp_op_call * call);
int htp_op_norm_check(const struct htp_op_call * call);
int htp_op_rms_norm_mul_check(const struct htp_op_call * call);
int htp_op_mul_mat_add_check(const struct htp_op_call * call);
int htp_op_mul_mat_shared_check(const struct htp_op_call * call);
int htp_op_mul_mat_ffn_glu_check(const struct htp_op_call * call);
int htp_op_add_id_check(const struct htp_op_call * call);
int htp_op_sum_rows_check(const struct htp_op_call * call);
int htp_op_cumsum_check(const struct htp_op_call * call);
int htp_op_argsort_check(const struct htp_op_call * call);
int htp_op_shape_check(const struct htp_op_call * call);
int htp_op_softmax_check(const struct htp_op_call * call);
int htp_op_rope_check(const struct htp_op_call * call);
int htp_op_mul_mat_check(const struct htp_op_call * call);
int htp_op_mul_mat_id_check(const struct htp_op_call * call);
int htp_op_get_rows_check(const struct htp_op_call * call);
int htp_op_set_rows_check(const struct htp_op_call * call);
int htp_op_flash_attn_ext_check(const struct htp_op_call * call);
int htp_op_ssm_conv_check(const struct htp_op_call * call);
int htp_op_gated_delta_net_check(const struct htp_op_call * call);
int htp_op_solve_tri_check(const struct htp_op_call * call);
int htp_op_im2col_check(const struct htp_op_call * call);
int htp_op_top_k_check(const struct htp_op_call * call);

// v is a fence operand: flag HTP_TENSOR_FENCE, type I8, ne[0] ==
// HTP_FENCE_SLOT_SIZE, contiguous slots of HTP_FENCE_SLOT_SIZE bytes, 4-byte
// aligned (futex words), at least min_slots slots.
int htp_op_fence_operand_check(const struct htp_tensor_view * v, int64_t min_slots);

// CPY converts src_type to dst_type elementwise (F32, F16, BF16 pairs; F32 <-> I32).
int htp_cpy_can_convert(uint32_t src_type, uint32_t dst_type);

// The CPY quantizes a float source into rows of a KV-cache quant type.
int htp_cpy_quantizes(const struct htp_op_call * call);

// The CPY dequantizes quantized rows into F32.
int htp_cpy_dequantizes(const struct htp_op_call * call);

#endif  // HTP_CONTRACT_OP_CHECKS_H
