// iq-tiles.h: the weight layouts of the IQ codebook types (IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M), shared by
// the host (set_tensor / get_tensor repack) and the NPU's kernels, and the one
// list of the IQ types the NPU has kernels for.
//
// 1. The tiled layout (in buffers; tiled.h's row groups). A tile is one
//    256-element super-block of each of 16 consecutive rows, and its quant
//    part is those 16 rows' ggml blocks verbatim, row after row; there is no
//    scale part (s_bytes = 0):
//
//      tile of super-block b in a group:  q[r * blck_bytes ..] = row r's block b (r = 0..15)
//      padding rows: all zero bytes (d = 0: their weights are exact zeros)
//
//    So pack and unpack are copies (get_tensor gets ggml's bytes back) and a
//    type gets its format from one row of the table in iq-tiles.c. Against
//    one column the kernels read a tile's 16 blocks in place
//    (npu/ops/iq-rows.h, where built); otherwise they decode the codebook
//    indices once per row group into the decoded tile below. Either way the
//    gain of tiling is that one group's rows sit together.
//
// 2. The decoded tile (NPU scratch only, never in a buffer, described here
//    because the scratch plan counts it): what a row group's super-block
//    becomes once decoded (npu/ops/iq-decode.h gives per row
//    weight e = (d * sc[e / 16]) * q[e]):
//
//      q[c][4 r + t]   element 4 c + t (c = 0..63, t = 0..3) of row r, as q + 64
//                      (an unsigned byte: vpdpbusd / vrmpy take u8 weights);
//                      one 64-byte line = 4 consecutive elements of the 16 rows
//      sc[s][l]        int32 scale of sub-block s (16 elements) of row l % 16,
//                      lanes 16..31 repeating lanes 0..15 (one 128-byte HVX
//                      vector holds both halves of a two-chunk product)
//      d[r]            float, the row's d (iq-decode.h); then padding to 128
//
//    Padding rows decode as q + 64 = 64, sc = 0, d = 0. A row group's decoded
//    form is nsb such tiles, HTP_IQ_DTILE_BYTES each.
//
// Adding a type: its decoder (npu/ops/iq-decode.c's switch) and one line in
// iq_kernel_types (iq-tiles.c): the format, the op claims (MUL_MAT,
// MUL_MAT_ID, GET_ROWS, CPY to F32) and the tests' type lists follow.

#ifndef HTP_CONTRACT_IQ_TILES_H
#define HTP_CONTRACT_IQ_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "tiled.h"

#define HTP_IQ_TILE_QK 256  // elements per super-block
#define HTP_IQ_TILE_R  16   // rows per tile (HTP_TILE_ROWS)

struct htp_iq_dtile {
    uint8_t q[64][64];
    int32_t sc[16][32];
    float   d[16];
    uint8_t pad[64];
};

#define HTP_IQ_DTILE_BYTES 6272
_Static_assert(sizeof(struct htp_iq_dtile) == HTP_IQ_DTILE_BYTES && HTP_IQ_DTILE_BYTES % 128 == 0, "decoded tile");

// 1 if the NPU has MUL_MAT / MUL_MAT_ID / GET_ROWS / CPY kernels for type
// (enum htp_type): the IQ types of iq_kernel_types.
int htp_iq_type_ok(uint32_t type);

// The tiled format of an IQ type of htp_iq_type_ok, else NULL (tiled.c's
// htp_tile_format asks here for the types of its own table's).
const struct htp_tile_format * htp_iq_tile_format(uint32_t type);

// Bytes of the decoded form of one row group of rows of ne0 elements.
static inline size_t htp_iq_dgroup_bytes(int64_t ne0) {
    return (size_t)(ne0 / HTP_IQ_TILE_QK) * HTP_IQ_DTILE_BYTES;
}

#endif  // HTP_CONTRACT_IQ_TILES_H
