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

// The unit a matmul of ncols columns runs on (htp-proto.h's enum htp_unit):
// HMX, the micro-kernels that meet several columns with each weight load
// (up to 8 per call in matmul-quant.c, 4 in matmul-float.c and
// matmul-kquant.c), when the session allows HMX for matmuls and there is
// more than one column; else HVX, one column per micro-kernel call (decode's
// kernels: several row groups or rows per activation load). Both give the
// same sums per column; HVX is the slower way to do a prefill.
static inline uint32_t htp_mm_unit(const struct htp_op_ctx * ctx, int64_t ncols) {
    return !(ctx->options & HTP_SESSION_MM_NO_HMX) && ncols > 1 ? HTP_UNIT_HMX : HTP_UNIT_HVX;
}

int htp_mm_float_run(struct htp_op_ctx * ctx);
int htp_mm_quant_run(struct htp_op_ctx * ctx);
int htp_mm_quant_id_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_id_run(struct htp_op_ctx * ctx);

// GET_ROWS of K-quant rows (tiled or plain).
int htp_kq_get_rows_run(struct htp_op_ctx * ctx);

#endif  // HTP_MATMUL_H
