// kquant-dot.h: the NPU's arithmetic on K-quant tiles (layout in
// contract/kquant-tiles.h): the activation blocks the kernels quantize F32
// activations into, and the block-level routines the MUL_MAT / MUL_MAT_ID /
// GET_ROWS kernels are built from.
//
// The one idea: a tile holds one 256-element super-block of each of 16
// consecutive weight rows, interleaved so that one 64-byte load carries 4
// consecutive elements of all 16 rows. Broadcasting 4 int8 activations to
// the 16 lanes and one unsigned-by-signed byte dot product (vpdpbusd) then
// advances 16 rows at once, with no horizontal sums.

#ifndef HTP_KQUANT_DOT_H
#define HTP_KQUANT_DOT_H

#include <stddef.h>
#include <stdint.h>

#include "contract/kquant-tiles.h"
#include "contract/ops/matmul-check.h"

// Activations quantized per 256 for the integer dot products, as ggml's
// block_q8_K: x[i] ~ d * qs[i], with the sums of qs over each 16 and each 32.
struct htp_q8k_block {
    int8_t  qs[HTP_KQ_QK];
    float   d;
    int16_t bsum16[16];
    int16_t bsum32[8];
    uint8_t pad[12];
};
_Static_assert(sizeof(struct htp_q8k_block) == HTP_KQ_ACT_BLOCK, "q8k block: the size the scratch plan counts");

// Dequantizes row r (0..15) of a tiled row group of nsb super-blocks into
// y[nsb * 256].
void htp_kq_dequant_tiled_row(uint32_t type, float * y, const uint8_t * group, int r, int64_t nsb);

// Dequantizes nsb ggml blocks (a plain row) into y[nsb * 256]. On Hexagon the
// bit expansion is HVX (the scaling scalar, the same bits).
void htp_kq_dequant_row(uint32_t type, float * y, const uint8_t * row, int64_t nsb);

// Quantizes x[k] (k % 256 == 0) into k / 256 activation blocks, as ggml's
// quantize_row_q8_K (same rounding, so the integer sums agree exactly).
// AVX-512, HVX (its integer parts; bit-identical to the portable code) or
// portable C, whichever the build targets.
void htp_kq_quantize_q8k(struct htp_q8k_block * y, const float * x, int64_t k);

// The same with the portable C code only (for tests of the SIMD path).
void htp_kq_quantize_q8k_ref(struct htp_q8k_block * y, const float * x, int64_t k);

// out[c][r] = dot product of row r (0..15) of a tiled row group of nsb
// super-blocks with column c (0 .. nc-1, nc <= 4) of quantized activations,
// a[c][0 .. nsb-1]. Uses AVX-512 VNNI, AVX2, HVX (bit-identical to the
// portable code) or portable C, whichever the build targets; on Hexagon
// GGML_HTP_SCALAR=1 selects the portable code (quant.h).
void htp_kq_dot_group(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc);

// Decode: out[h][r] = dot product of row r of row group h (ng = 2 or 4
// groups, group h at g0 + h * gstride) with one column of activations
// a[0 .. nsb-1]; the same sums as ng htp_kq_dot_group calls with nc = 1, in
// one pass over all the groups.
void htp_kq_dot_multi(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * g0, size_t gstride, int ng, int64_t nsb,
                      const struct htp_q8k_block * a);

// The same with the portable C code only (for tests of the SIMD paths).
void htp_kq_dot_group_ref(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                          const struct htp_q8k_block * const * a, int nc);

#endif  // HTP_KQUANT_DOT_H
