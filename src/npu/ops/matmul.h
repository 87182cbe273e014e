// matmul.h: the three MUL_MAT / MUL_MAT_ID kernels behind the family's front
// (matmul-ops.c), one per engine of contract/ops/matmul-check.h. Each runs an
// op whose check passed; same contract as kernels.h.
//
//   engine   file              weights
//   FLOAT    matmul-float.c    F32, F16 (MUL_MAT)
//   QUANT    matmul-quant.c    Q4_0 Q4_1 Q8_0 IQ4_NL MXFP4 Q5_0 Q5_1 NVFP4 Q1_0 Q2_0, BF16; F32/F16 under MUL_MAT_ID
//   KQUANT   matmul-kquant.c   Q2_K .. Q6_K, IQ4_XS (and their GET_ROWS)
//   IQ       matmul-kquant.c   IQ codebook types (contract/iq-tiles.h), decoded tiles (iq-dot.h)

#ifndef HTP_MATMUL_H
#define HTP_MATMUL_H

#include <string.h>

#include "kernel-iface.h"
#include "vec.h"

// Activations of at most this many elements (a decode's column, K up to
// 16384) are quantized by the calling worker alone, not through the pool.
#define HTP_SMALL_ACT_ELEMS 16384

// MUL_MAT_ADD's epilogue (proto/htp-proto.h), shared by the three engines:
// each output row is stored as out + the addend's element, the addend tiled
// over dst as ggml broadcasts. The addend's row for dst row (n, i2, i3), or
// NULL when the op has no addend (plain MUL_MAT, MUL_MAT_ID).
static inline const uint8_t * htp_mm_addend_row(const struct htp_tensor_view * add, int64_t n, int64_t i2, int64_t i3) {
    if (!add) {
        return NULL;
    }
    return add->data + (n % add->ne[1]) * add->nb[1] + (i2 % add->ne[2]) * add->nb[2] + (i3 % add->ne[3]) * add->nb[3];
}

// Store out[0 .. nr) as elements m0 .. m0 + nr of F32 dst row y (element
// stride nb0), adding the addend row arow's elements when arow is not NULL
// (add->ne[0] divides the row length; the usual 1 or whole row need no
// division per element).
static inline void htp_mm_store(uint8_t * y, int64_t nb0, int64_t m0, const float * out, int64_t nr,
                                const struct htp_tensor_view * add, const uint8_t * arow) {
    if (!arow) {
        if (nb0 == 4) {
            memcpy(y + m0 * 4, out, (size_t)nr * 4);
        } else {
            for (int64_t r = 0; r < nr; r++) {
                memcpy(y + (m0 + r) * nb0, &out[r], 4);
            }
        }
        return;
    }
    const int64_t an0 = add->ne[0], anb0 = add->nb[0];
    for (int64_t r = 0; r < nr; r++) {
        const int64_t m = m0 + r, k = an0 == 1 ? 0 : m < an0 ? m : m % an0;
        float         a;
        memcpy(&a, arow + k * anb0, sizeof a);
        const float v = out[r] + a;
        memcpy(y + m * nb0, &v, sizeof v);
    }
}

// MUL_MAT_FFN_GLU's second pass on HVX: elements m0 .. m0 + nr of F32 dst
// row y (element stride nb0) hold the gate's sums from the first pass; each
// becomes silu(gate) * up, up = out[0 .. nr).
static inline void htp_mm_store_glu(uint8_t * y, int64_t nb0, int64_t m0, const float * out, int64_t nr) {
    if (nb0 == 4) {
        float * row = (float *)(void *)(y + m0 * 4);
        htp_vec_swiglu_f32(nr, row, row, out);
        return;
    }
    for (int64_t r0 = 0; r0 < nr; r0 += 64) {
        const int64_t n = nr - r0 < 64 ? nr - r0 : 64;
        float         gate[64];
        for (int64_t r = 0; r < n; r++) {
            memcpy(&gate[r], y + (m0 + r0 + r) * nb0, 4);
        }
        htp_vec_swiglu_f32(n, gate, gate, out + r0);
        for (int64_t r = 0; r < n; r++) {
            memcpy(y + (m0 + r0 + r) * nb0, &gate[r], 4);
        }
    }
}

// The unit a matmul of ncols columns runs on (htp-proto.h's enum htp_unit):
// HMX, the micro-kernels that meet several columns with each weight load
// (up to 8 per call in matmul-quant.c, 4 in matmul-float.c and
// matmul-kquant.c), when the session allows HMX for matmuls and there is
// more than one column; else HVX, one column per micro-kernel call (decode's
// kernels: several row groups or rows per activation load). Both give the
// same sums per column (a multi-NPU group relies on it); HVX is the slower
// way to do a prefill.
static inline uint32_t htp_mm_unit(const struct htp_op_ctx * ctx, int64_t ncols) {
    return !(ctx->options & HTP_SESSION_MM_NO_HMX) && ncols > 1 ? HTP_UNIT_HMX : HTP_UNIT_HVX;
}

int htp_mm_float_run(struct htp_op_ctx * ctx);
int htp_mm_quant_run(struct htp_op_ctx * ctx);
int htp_mm_quant_id_run(struct htp_op_ctx * ctx);
int htp_mm_quant_shared_run(struct htp_op_ctx * ctx);  // MUL_MAT_QKV, MUL_MAT_FFN
int htp_mm_quant_ffn_glu_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_id_run(struct htp_op_ctx * ctx);
int htp_mm_kquant_shared_run(struct htp_op_ctx * ctx);  // MUL_MAT_QKV, MUL_MAT_FFN
int htp_mm_kquant_ffn_glu_run(struct htp_op_ctx * ctx);

// GET_ROWS of K-quant rows (tiled or plain).
int htp_kq_get_rows_run(struct htp_op_ctx * ctx);

// GET_ROWS of IQ codebook rows (tiled or plain) and CPY of them into F32 (iq-ops.c).
int htp_iq_get_rows_run(struct htp_op_ctx * ctx);
int htp_iq_cpy_run(struct htp_op_ctx * ctx);

#endif  // HTP_MATMUL_H
