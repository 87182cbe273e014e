// quant.h: the quantized block formats on the NPU side (the NPU does not
// include ggml; the formats equal ggml's, see tiled.h for the repacked form):
// dequantizing rows (plain or tiled) to F32, quantizing F32 rows to the
// KV-cache quant types with ggml-cpu's rounding (CPY and SET_ROWS),
// and the hooks by which the MUL_MAT / GET_ROWS / SET_ROWS / CPY families
// hand quantized cases to quant-ops.c and qmatmul-ops.c.
//
//   Q4_0    { fp16 d; u8 qs[16] }            x = d * (q - 8)
//   Q4_1    { fp16 d; fp16 m; u8 qs[16] }    x = d * q + m
//   Q5_0    { fp16 d; u8 qh[4]; u8 qs[16] }  x = d * (q - 16)
//   Q5_1    { fp16 d; fp16 m; u8 qh[4]; u8 qs[16] }  x = d * q + m
//   Q8_0    { fp16 d; i8 qs[32] }            x = d * q
//   IQ4_NL  { fp16 d; u8 qs[16] }            x = d * iq4nl[q]
//   MXFP4   { u8 e; u8 qs[16] }              x = 2^(e-128) * fp4x2[q]   (table values doubled)
//   Q1_0    { fp16 d; u8 qs[16] }  128 elements: bit j % 8 of qs[j / 8] set -> +d, else -d
//   Q2_0    { fp16 d; u8 qs[16] }  64 elements: q = bits 2 (j % 4) of qs[j / 4], x = d * (q - 1)
//   NVFP4   { u8 s[4]; u8 qs[32] } 64 elements, sub-block t of 16: x = ue4m3(s[t]) / 2 * fp4x2[q],
//                                  element i of t in qs[8 t + i % 8] (high nibble for i >= 8)
// Nibble order (all 4-bit types): qs[j] & 15 is element j, qs[j] >> 4 element j + 16;
// Q5_0 / Q5_1: bit 4 of element j's q is bit j of qh (a little-endian u32).

#ifndef HTP_QUANT_H
#define HTP_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "contract/quant-types.h"
#include "kernel-iface.h"

extern const int8_t htp_iq4nl_values[16];
extern const int8_t htp_mxfp4_values[16];

// ggml's e8m0 -> fp32 with the 0.5 factor of its doubled fp4 table.
float htp_e8m0_to_fp32_half(uint8_t e);

// NVFP4's ue4m3 scale -> fp32 as ggml_ue4m3_to_fp32 (which has the same 0.5 factor).
float htp_ue4m3_to_fp32_half(uint8_t x);

// n elements (a multiple of the block size) of a plain row at x -> y, for
// the types htp_quant_can_dequant_row names (the K-quants through
// kquant-dot.c's decoder); bit-exact with ggml's dequantize_row_*.
void htp_quant_dequant_row(uint32_t type, const uint8_t * x, float * y, int64_t n);

// Elements [k0, k0 + n) (whole blocks) of row (i1, i2, i3) of a tiled view
// (HTP_TENSOR_TILED) -> y.
void htp_quant_dequant_tiled_row(const struct htp_tensor_view * v, int64_t i1, int64_t i2, int64_t i3, int64_t k0,
                                 int64_t n, float * y);

// n floats (a multiple of 32) -> blocks of type at y (Q8_0, Q4_0, Q4_1,
// Q5_0, Q5_1, IQ4_NL), bit-exact with what ggml-cpu's CPY / SET_ROWS write:
// Q8_0 as its x86 quantize_row_q8_0 (ties to even of x * 127 / amax; see
// quant-ops.c), the others as ggml's quantize_row_*_ref.
void htp_quant_quantize_row(uint32_t type, const float * x, uint8_t * y, int64_t n);

// Activations of the Q4_0-family matmuls: nb blocks of 32 floats at x ->
// nb blocks of 40 bytes at out: int8 q[32] (round half to even of x / d),
// float d = max |x| / 127 at byte 32, int32 sum of q at byte 36. The same
// quants and d as ggml-cpu's SIMD quantize_row_q8_0 (which stores d as
// fp16). AVX-512 where the build has it; _ref is the portable code (tests).
void htp_qmm_quantize_blocks(const float * x, int64_t nb, uint8_t * out);
void htp_qmm_quantize_blocks_ref(const float * x, int64_t nb, uint8_t * out);

// The micro-kernels of the Q4_0-family matmuls (matmul-quant.c) on one tiled
// row group of nblk blocks, for tests: out[c][r] = dot(row r, column c) for
// nc (1..8) columns of activation blocks acts[c] (htp_qmm_quantize_blocks;
// nblk * blck_size / 32 of them: Q1_0, Q2_0 and NVFP4 take several a block);
// the pair form takes one column against groups g0 (out[0]) and g1 (out[1]),
// as decode does. HVX or portable C as htp_kernels_portable() says.
void htp_qmm_dot_tile(uint32_t type, const uint8_t * group, int64_t nblk, const uint8_t * const * acts, int nc,
                      float out[8][16]);
void htp_qmm_dot_pair(uint32_t type, const uint8_t * g0, const uint8_t * g1, int64_t nblk, const uint8_t * act,
                      float out[2][16]);
// The quad form: groups g0 + h gstride into out[h], h = 0..3. Returns 0
// (out untouched) where the kernels have none (HVX: decode takes pairs).
int htp_qmm_dot_quad(uint32_t type, const uint8_t * g0, size_t gstride, int64_t nblk, const uint8_t * act,
                     float out[4][16]);
// The portable kernel of Q1_0, Q2_0 and NVFP4 on every build (what the
// AVX-512 and HVX paths must equal bit for bit), as htp_qmm_dot_tile.
void htp_qmm_unit_dot_tile_ref(uint32_t type, const uint8_t * group, int64_t nblk, const uint8_t * const * acts, int nc,
                               float out[8][16]);

// GGML_HTP_SCALAR=1 in the NPU's environment: the kernels with an HVX path
// (matmul-quant.c, kquant-dot.c, quant-ops.c) take their portable C instead,
// so one Hexagon binary measures both (see quant-ops.c). Other targets keep
// their SIMD paths whatever it says.
int htp_kernels_portable(void);
// Tests: pick the path in-process (1 portable, 0 HVX where built).
void htp_kernels_set_portable(int portable);

// --- hooks for the op families (return enum htp_status) ---

// CPY from F32/F16/BF16 into a quant type (cpy-ops.c hands these over).
int htp_op_cpy_q_run(struct htp_op_ctx * ctx);

// CPY from a quantized source into F32 (cpy-ops.c hands these over).
int htp_op_cpy_dq_run(struct htp_op_ctx * ctx);

#endif  // HTP_QUANT_H
