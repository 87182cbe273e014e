// iq-tiles.h: the weight layouts of the IQ codebook types (IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M), shared by
// the host (set_tensor / get_tensor repack) and the NPU's kernels, and the one
// list of the IQ types the NPU has kernels for.
//
// 1. The tiled layout (in buffers; tiled.h's row groups). A tile is one
//    256-element super-block of each of 16 consecutive rows, and its quant
//    part is those 16 rows' blocks, row after row; there is no scale part
//    (s_bytes = 0):
//
//      tile of super-block b in a group:  q[r * tile_blck ..] = row r's block b (r = 0..15)
//      tile_blck = q_bytes / 16 (htp_iq_tile_blck_bytes)
//      padding rows: all zero bytes (d = 0: their weights are exact zeros)
//
//    IQ2_XXS, IQ2_XS and IQ3 keep ggml's block verbatim (tile_blck = ggml's
//    block bytes), so their pack and unpack are copies. IQ1_S, IQ1_M and
//    IQ2_S keep their block with every point as a code (3. below), so their
//    pack and unpack take the coder. Against one column the kernels read a tile's 16 blocks in
//    place (npu/ops/iq-rows.h, where built); otherwise they decode the blocks
//    once per row group into the decoded tile below.
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
// 3. Code blocks (IQ1_S, IQ1_M and IQ2_S tiles). ggml stores each point of 8
//    weights as an index into a codebook: 11 bits into IQ1's 2048 points, 10
//    bits into IQ2_S's 1024, tables too large to look up in registers, so a
//    kernel would gather every point from memory. These tiles store the point
//    itself instead, as its code: 2 bits a coordinate, the coordinate's
//    position in its type's value set (IQ1: -1, 0, +1; IQ2_S: 8, 25, 43) at
//    bits 2 j, 2 j + 1, which a kernel turns into bytes with one shift and one
//    permute. Point p = 4 g + l is point l of group g (weights 8 p .. 8 p + 7
//    of the super-block; a group is 32 weights).
//
//      IQ1_S, 70 bytes (ggml: 50)
//        +0    fp16 d
//        +2    u16 code[32]    point p's code
//        +66   u8  meta[4]     nibble g (low nibble first) of meta[g / 2]: bits 0..2 the scale
//                              of group g, bit 3 the sign of its delta (set: -1/8)
//      IQ1_M, 76 bytes (ggml: 56)
//        +0    u16 code[32]    point p's code
//        +64   u32 neg         bit 8 l + g set: the delta of point (g, l) is -1/8 (byte l: the
//                              8 groups' point l, the order a kernel takes them in)
//        +68   u16 scales[4]   ggml's scale words, verbatim (the fp16 d in their top nibbles)
//      IQ2_S, 106 bytes (ggml: 82)
//        +0    fp16 d
//        +2    u16 code[32]    point p's code
//        +66   u8  signs[32]   ggml's sign bytes, verbatim (bit j of signs[p]: weight j of point p negative)
//        +98   u8  scales[8]   ggml's scale bytes, verbatim
//
//    The rest of ggml's block is moved bit for bit. Unpacking maps each code
//    back to its index (struct htp_iq_coder), exact because each codebook's
//    points are distinct (checked where the coder is built). The kernels read
//    29-40% more bytes than ggml's block; these types' decode is bound by its
//    arithmetic, not by memory, so that pays.
//
// Adding a type: its decoder (npu/ops/iq-decode.c's switch) and one line in
// iq_kernel_types (iq-tiles.c): the format, the op claims (MUL_MAT,
// MUL_MAT_ID, GET_ROWS, CPY to F32) and the tests' type lists follow.

#ifndef HTP_CONTRACT_IQ_TILES_H
#define HTP_CONTRACT_IQ_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "codebooks.h"
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

#define HTP_IQ1S_CODE_BLOCK 70    // bytes of an IQ1_S code block (3. above)
#define HTP_IQ1M_CODE_BLOCK 76    // ... of an IQ1_M code block
#define HTP_IQ2S_CODE_BLOCK 106   // ... of an IQ2_S code block
#define HTP_IQ_KEYS         6561  // 3^8: the codes of every point of 8 coordinates of 3 values
#define HTP_IQ_NO_POINT     0xffffu

// The codebooks of the code blocks both ways, for pack (index -> code) and
// unpack (code -> index). A code's key is sum_j (field j) * 3^j.
struct htp_iq_coder {
    uint16_t iq1_code[2048];          // IQ1 point index -> code
    uint16_t iq1_index[HTP_IQ_KEYS];  // key -> IQ1 point index; HTP_IQ_NO_POINT where no point has it
    uint16_t iq2s_code[1024];         // IQ2_S likewise
    uint16_t iq2s_index[HTP_IQ_KEYS];
};

// The coder of cb's IQ1 and IQ2_S points (htp_codebooks_ok has passed): 0,
// or -1 when two points of a codebook are equal (codes could not be mapped back).
int htp_iq_coder_build(const struct htp_codebooks * cb, struct htp_iq_coder * c);

// Bytes of a row's block inside a tile of an IQ type's format f.
static inline size_t htp_iq_tile_blck_bytes(const struct htp_tile_format * f) {
    return f->q_bytes / HTP_IQ_TILE_R;
}

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
