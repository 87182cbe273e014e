// im2col-check.h: IM2COL, the patch gather that turns a convolution into a
// matrix multiplication (vision encoders, audio front ends), as its check
// reads it and its kernel runs it:
//
//   src0 kernel: only its shape is used: [KW, KH, IC, OC] (2D) or [KW, IC, OC] (1D)
//   src1 image   [IW, IH, IC, N] (2D) or [IW, IC, N] (1D)      F32, or F16 when dst is F16
//   dst          [IC * KH * KW, OW, OH, N] (2D) or [IC * KW, OW, N] (1D)   F32/F16, packed rows
//   params: [0] s0 [1] s1 [2] p0 [3] p1 [4] d0 [5] d1 (stride, padding, dilation
//           along W and H), [6] is_2D

#ifndef HTP_CONTRACT_IM2COL_CHECK_H
#define HTP_CONTRACT_IM2COL_CHECK_H

#include "contract/op-call.h"

struct htp_im2col_params {
    const struct htp_tensor_view *src, *dst;
    int32_t                       s0, s1, p0, p1, d0, d1;
    int                           is_2d;
    int64_t                       KW, KH, IC, IW, IH, OW, OH, N;
};

// Read and check call's operands and params into *a. Returns enum htp_status.
int htp_im2col_read(const struct htp_op_call * call, struct htp_im2col_params * a);

#endif  // HTP_CONTRACT_IM2COL_CHECK_H
