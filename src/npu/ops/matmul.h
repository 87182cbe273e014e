// matmul.h: the three MUL_MAT / MUL_MAT_ID kernels behind the family's front
// (matmul-ops.c), one per engine of contract/ops/matmul-check.h. Each runs an
// op whose check passed; same contract as kernels.h.
//
//   engine   file              weights
//   FLOAT    matmul-float.c    F32, F16 (MUL_MAT)
//   QUANT    matmul-quant.c    Q4_0 Q4_1 Q8_0 IQ4_NL MXFP4 Q5_0 Q5_1, BF16; F32/F16 under MUL_MAT_ID
//   KQUANT   matmul-kquant.c   Q2_K .. Q6_K, IQ4_XS (and their GET_ROWS)

#ifndef HTP_MATMUL_H
#define HTP_MATMUL_H

#include "kernel-iface.h"

// Activations of at most this many elements (a decode's column, K up to
// 16384) are quantized by the calling worker alone, not through the pool.
#define HTP_SMALL_ACT_ELEMS 16384

int htp_mm_float_run(struct htp_op_ctx * ctx);
int htp_mm_quant_run(struct htp_op_ctx * ctx);
int htp_mm_quant_id_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_id_run(struct htp_op_ctx * ctx);

// GET_ROWS of K-quant rows (tiled or plain).
int htp_kq_get_rows_run(struct htp_op_ctx * ctx);

#endif  // HTP_MATMUL_H
