// quant-types.h: the block-quantized types (32 elements a block) the NPU's
// row kernels handle: GET_ROWS and dequantizing paths read Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, IQ4_NL and MXFP4, plain or tiled (where tiled.h has a format); CPY and SET_ROWS (a quantized KV cache)
// write llama.cpp's quantized KV-cache types Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and
// IQ4_NL, bit-exact with ggml-cpu. The checks of those ops decide with these,
// so host and NPU agree on them. Q1_0, Q2_0 and NVFP4 (blocks of several
// 32-element units, htp_quant_is_unit_type) are read as the first group.

#ifndef HTP_CONTRACT_QUANT_TYPES_H
#define HTP_CONTRACT_QUANT_TYPES_H

#include <stdint.h>

#include "op-call.h"

// The type's rows can be dequantized (GET_ROWS, fallback paths): the types
// of 32-element blocks Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, and
// those of blocks of several 32-element units (htp_quant_is_unit_type).
int htp_quant_can_dequant(uint32_t type);

// Q1_0 (128-element blocks), Q2_0 and NVFP4 (64): blocks that the QUANT
// matmul and the row dequantizer take as 32-element units (tiled.h).
int htp_quant_is_unit_type(uint32_t type);

// The same or a type of 256-element blocks: the K-quants of htp_kq_type_ok
// (kquant-dot.c's decoder), Q2_K, Q3_K and IQ4_XS (quant-ops.c's, where
// htp_kq_type_ok does not take them). The plain-row dequantizer takes these
// (CPY into F32, GET_ROWS of plain rows).
int htp_quant_can_dequant_row(uint32_t type);

// The type can be produced from F32 rows (CPY, SET_ROWS): Q8_0, Q4_0, Q4_1,
// Q5_0, Q5_1, IQ4_NL.
int htp_quant_can_quantize(uint32_t type);

// A tiled view's strides match the tiled layout of its shape and type.
int htp_quant_tiled_view_ok(const struct htp_tensor_view * v);

#endif  // HTP_CONTRACT_QUANT_TYPES_H
