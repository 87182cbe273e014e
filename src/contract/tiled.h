// tiled.h: the tiled ("repacked") layout of quantized weights, shared by the
// host (which repacks in set_tensor, see src/host/repack.h) and the NPU
// kernels (which read it). Both sides link tiled.c; neither includes ggml.
//
// Idea: the integer dot-product kernels want one vector load to feed many
// weight rows at once. So rows are taken in groups of HTP_TILE_ROWS = 16 and,
// for each block of the row (32 elements for Q4_0 .. MXFP4, 64 or 128 for Q2_0, NVFP4, Q1_0,
// 256 for K-quants),
// the 16 rows' blocks become one *tile*: a quant part, in which the 16 rows'
// quants are interleaved 4 bytes at a time (so a 64-byte vector holds 4
// consecutive k-values of 16 rows: one int32 lane per row for vpdpbusd), and a
// scale part with the 16 rows' scales side by side (one vector of 16 lanes).
//
// A 2-D slice (i2, i3) of a tiled tensor [ne0, ne1, ne2, ne3]:
//
//   nblk   = ne0 / blck_size                 blocks per row
//   ngroup = ceil(ne1 / 16)                  row groups (last one padded)
//   group g (rows 16g .. 16g+15), group_bytes = round_up(nblk * (q_bytes + s_bytes), 128):
//     +0                      q part of tile 0, tile 1, ... tile nblk-1   (nblk * q_bytes)
//     +nblk * q_bytes         s part of tile 0, tile 1, ... tile nblk-1   (nblk * s_bytes)
//     ...                     zero padding up to group_bytes
//   slice = ngroup * group_bytes bytes; slices follow each other (i2 fastest).
//
// Rows past ne1 in the last group are padding: their scales are zero, so they
// contribute 0 to any dot product; kernels never write results for them.
//
// Tile formats (r = row within the group 0..15, q[] = the quant part,
// s[] = the scale part; "block" = ggml's block of that row):
//
//   Q8_0    q: 512 bytes, q[64*v + 4*r + j] = qs[4*v + j] ^ 0x80   (v = 0..7, j = 0..3)
//              i.e. the int8 quant + 128 as an unsigned byte (vpdpbusd's u8 side)
//           s: 32 bytes, 16 x fp16 d
//   Q4_0    q: 256 bytes, q[64*v + 4*r + j] = qs[4*v + j]           (v = 0..3, j = 0..3)
//              the byte is unchanged: low nibble = element 4v+j, high nibble =
//              element 16+4v+j, so vector v's low nibbles hold k-group v and its
//              high nibbles k-group v+4 (values 0..15, offset 8)
//           s: 32 bytes, 16 x fp16 d
//   Q4_1    q: as Q4_0 (values 0..15, no offset: x = d*q + m)
//           s: 64 bytes, 16 x fp16 d, then 16 x fp16 m
//   IQ4_NL  q: as Q4_0 (nibbles index the iq4_nl value table)
//           s: 32 bytes, 16 x fp16 d
//   MXFP4   q: as Q4_0 (nibbles index the e2m1 value table, doubled as in ggml)
//           s: 16 bytes, 16 x e8m0 exponent
//   Q5_0    q: 320 bytes: q[0 .. 255] as Q4_0 (the low 4 bits of each
//              element, offset 16 once the fifth bit is in), then at
//              q[HTP_Q5_MASKS] 8 masks of 8 bytes: bit 4r + j of the
//              little-endian 64-bit mask g (g = 0..7) is bit 4 of element
//              4g + j of row r (= bit 4g + j of the block's qh). Unpacked
//              vector g (k-group g: vector g's low nibbles for g < 4, vector
//              g-4's high ones for g >= 4) has 16 added to byte 4r + j where
//              mask g's bit 4r + j is set: one masked byte add a vector
//              (AVX-512), the same masks as Q5_K's (kquant-tiles.h, hvx.h).
//              At least 64 bytes of the group follow any tile's masks (the
//              next tile, or the scale parts and padding), so a 128-byte
//              load at the masks stays inside the group (HVX).
//           s: 32 bytes, 16 x fp16 d
//   Q5_1    q: as Q5_0 (values 0..31, no offset: x = d*q + m)
//           s: 64 bytes, 16 x fp16 d, then 16 x fp16 m
//   IQ2_XXS, IQ2_XS, IQ3_XXS, IQ3_S (iq-tiles.h's list)
//           q: 16 x the ggml block, row after row (verbatim); s: none
//           (blocks of 256 elements; iq-tiles.c holds their format table)
//   IQ1_S, IQ1_M, IQ2_S
//           q: 16 x the row's block with its points as codes (iq-tiles.h),
//              row after row; s: none. Pack and unpack need the coder.
//
//   Blocks of more than 32 elements (Q1_0: 128, Q2_0 and NVFP4: 64) are
//   cut into units of 32 elements (unit u = elements 32u .. 32u+31 of the
//   block), because the activations are quantized in blocks of 32 (q8_0, as
//   ggml-cpu's vec_dot_type of all three). A tile's quant part is its units'
//   quant parts one after another, so unit k of a row (k = 32-element block
//   of the row) is at q part start + k * unit bytes for every k, across tiles.
//   Masks below are Q5_0's form: 8 masks of 8 bytes, bit 4r + j of the
//   little-endian 64-bit mask g is bit 4g + j of row r's 32-bit word.
//   Q1_0    q: 256 bytes, 4 units of 64 bytes: unit u is the masks of the
//              words qs[4u .. 4u+3] (little-endian; bit e = sign bit of
//              element 32u + e: 1 -> +d, 0 -> -d). The kernels expand a
//              set bit to 2, a clear one to 0, and take offset 1 (2b - 1 = +-1).
//              1 bit a weight, as ggml's block: its 128-element block stays one
//              scale in s, read by all 4 units. After the last unit's masks
//              at least 128 bytes of the group follow (its scale parts and
//              padding: 32 nblk + pad is a positive multiple of 128), so a
//              128-byte load at any unit stays inside the group (HVX).
//           s: 32 bytes, 16 x fp16 d
//   Q2_0    q: 256 bytes, 2 units of 128 bytes: unit u's 64 bytes of masks
//              of bit 0 of its 32 quants (element 32u + e: bit e), then 64
//              bytes of masks of bit 1 (q = b0 + 2 b1, offset 1: x = (q-1) d)
//           s: 32 bytes, 16 x fp16 d
//   NVFP4   q: 512 bytes, 2 units of 256 bytes in Q4_0's nibble form:
//              byte 64v + 4r + j of unit u has element 4v + j of the unit
//              (sub-block 2u) in its low nibble and element 16 + 4v + j
//              (sub-block 2u+1) in its high one, e2m1 table indices. So a
//              unit's low nibbles are one 16-element sub-block and its high
//              nibbles the next: the kernels take two dot products per unit,
//              one per scale.
//           s: 64 bytes, 4 fields of 16 bytes: s[16f + r] = ue4m3 scale f
//              (sub-block f) of row r
//
// Unpacking a tile row gives back the original block bytes exactly (get_tensor
// must return what set_tensor received).
//
// Operand description of a tiled tensor (flag HTP_TENSOR_TILED): ne as the
// ggml tensor; nb[0] = ggml block bytes; nb[1] = group_bytes / 16 (bytes per
// row, averaged over a group); nb[2] = slice bytes; nb[3] = nb[2] * ne2. The
// NPU validates a tiled operand's extent as ne3 * nb[3] and kernels check the
// strides with htp_tiled_strides_ok() before reading.
//
// Adding a type: write its pack/unpack in tiled.c, add a row to the format
// table there, and describe the tile here. Changing a format changes what the
// host writes and the NPU reads: both sides build from this one source.

#ifndef HTP_TILED_H
#define HTP_TILED_H

#include <stddef.h>
#include <stdint.h>

#define HTP_TILE_ROWS  16   // rows per group (int32 lanes of a 512-bit vector)
#define HTP_TILE_ALIGN 128  // group size granularity (one HVX vector)

#define HTP_Q5_Q_BYTES 320  // Q5_0 / Q5_1 quant part: 256 bytes of nibbles, then the masks
#define HTP_Q5_MASKS   256  // offset of the 8 x 8 bytes of high-bit masks in it

// Quant parts of the types whose blocks are several 32-element units, and the bytes of a unit.
#define HTP_Q1_0_Q_BYTES  256
#define HTP_Q1_0_UNIT     64
#define HTP_Q2_0_Q_BYTES  256
#define HTP_Q2_0_UNIT     128
#define HTP_NVFP4_Q_BYTES 512
#define HTP_NVFP4_UNIT    256

struct htp_iq_coder;  // the codebooks of the code blocks both ways (iq-tiles.h)

struct htp_tile_format {
    uint32_t type;        // enum htp_type
    uint32_t blck_size;   // elements per block (ggml's)
    uint32_t blck_bytes;  // bytes per ggml block
    uint32_t q_bytes;     // bytes of a tile's quant part (16 rows x one block)
    uint32_t s_bytes;     // bytes of a tile's scale part
    // blocks[r]: ggml block of row r, or NULL for a padding row -> one tile.
    void (*pack)(const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q, uint8_t * s);
    // Row r of a tile -> its ggml block (exact inverse of pack).
    void (*unpack)(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
    // The formats that store codebook points as codes (IQ1_S, IQ1_M, IQ2_S) pack and
    // unpack with the coder: these instead of the two above (NULL there).
    void (*pack_coded)(const struct htp_iq_coder * c, const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q,
                       uint8_t * s);
    void (*unpack_coded)(const struct htp_iq_coder * c, const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
};

// Format of a type, or NULL if the type has no tiled layout.
const struct htp_tile_format * htp_tile_format(uint32_t type);

// Row groups of ne1 rows.
static inline int64_t htp_tiled_ngroups(int64_t ne1) {
    return (ne1 + HTP_TILE_ROWS - 1) / HTP_TILE_ROWS;
}

// Bytes of one row group of rows with ne0 elements.
static inline uint64_t htp_tiled_group_bytes(const struct htp_tile_format * f, int64_t ne0) {
    const uint64_t nblk = (uint64_t)ne0 / f->blck_size;
    const uint64_t raw  = nblk * (f->q_bytes + f->s_bytes);
    return (raw + HTP_TILE_ALIGN - 1) / HTP_TILE_ALIGN * HTP_TILE_ALIGN;
}

// Strides (see the header comment) and total bytes of a tiled tensor of shape ne.
void     htp_tiled_strides(const struct htp_tile_format * f, const int64_t ne[4], int64_t nb[4]);
uint64_t htp_tiled_nbytes(const struct htp_tile_format * f, const int64_t ne[4]);

// 1 if nb are the strides of a tiled tensor of shape ne and type f.
int htp_tiled_strides_ok(const struct htp_tile_format * f, const int64_t ne[4], const int64_t nb[4]);

// Pack rows [0, nrows) (nrows <= 16) of nblk blocks each, row i at
// rows + i * row_stride, into one group (group_bytes, padding zeroed).
// coder: the codebooks for the formats with pack_coded, else unused (NULL).
// 0, or -1 (nothing written) when the format needs a coder and has none.
int htp_tiled_pack_group(const struct htp_tile_format * f, const struct htp_iq_coder * coder, const uint8_t * rows,
                         size_t row_stride, int nrows, int64_t nblk, uint8_t * group);

// Block kb of row r (0..15) of a group of nblk blocks -> the ggml block bytes.
// coder and the result as htp_tiled_pack_group's.
int htp_tiled_unpack_block(const struct htp_tile_format * f, const struct htp_iq_coder * coder, const uint8_t * group,
                           int64_t nblk, int r, int64_t kb, uint8_t * block);

// Quant and scale part of tile kb of a group.
static inline const uint8_t * htp_tiled_q(const struct htp_tile_format * f, const uint8_t * group, int64_t kb) {
    return group + (size_t)kb * f->q_bytes;
}

static inline const uint8_t * htp_tiled_s(const struct htp_tile_format * f, const uint8_t * group, int64_t nblk,
                                          int64_t kb) {
    return group + (size_t)nblk * f->q_bytes + (size_t)kb * f->s_bytes;
}

#endif  // HTP_TILED_H
