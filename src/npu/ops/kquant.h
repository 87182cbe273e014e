// kquant.h: K-quant weights (Q4_K, Q5_K, Q6_K) on the NPU: their tiled
// layout, shared by the host (which repacks weights into it in set_tensor and
// back in get_tensor) and the kernels; the activation blocks the kernels
// quantize F32 activations into; and the block-level compute routines the
// MUL_MAT / MUL_MAT_ID / GET_ROWS kernels are built from.
//
// The one idea: a tile holds one 256-element super-block of each of 16
// consecutive weight rows, interleaved so that one 64-byte load carries 4
// consecutive elements of all 16 rows. Broadcasting 4 int8 activations to
// the 16 lanes and one unsigned-by-signed byte dot product (vpdpbusd) then
// advances 16 rows at once, with no horizontal sums. The 6-bit scales and mins
// that ggml packs into 12 bytes are decoded at repack time into one byte per
// (sub-block, row), so the dot product never unpacks them.
//
// The transform is a permutation of the original bits (plus zero padding
// rows), so get_tensor rebuilds the ggml blocks byte for byte.
//
// Tiles sit in row groups as tiled.h lays out every tiled type (a group's
// quant parts, then its scale parts). For the K-quants, row r (0..15) and
// element e (0..255) of a tile; "byte (r, t)" is byte 4 r + t of a 64-byte
// chunk, t = 0..3:
//
//   Q4_K, Q5_K   sub-block j = e / 32 (32 elements, one 6-bit scale and min)
//                chunk c = (e % 32) / 8, u = e % 8:
//                qs[j][c] byte (r, u % 4): low nibble if u < 4, high nibble
//                otherwise = the low 4 bits of q (q = 0..15 / 0..31)
//                Q5_K: bit 4 of q is bit (4 r + u % 4) of the little-endian
//                64-bit mask qh[j][c][u / 4]
//                sc[j][r] = scale, mn[j / 2][r][j % 2] = min (the pair layout
//                feeds a 16-bit pairwise multiply-add with two activation sums)
//   Q6_K         sub-block s = e / 16 (16 elements, one int8 scale)
//                chunk c = (e % 16) / 8, u = e % 8:
//                ql[s][c] byte (r, u % 4), nibble u / 4 = bits 0-3 of q (q = 0..63,
//                the stored value; ggml subtracts 32)
//                bit 4 + i of q is bit (4 r + u % 4) of mask qh[s][c][2 (u / 4) + i]
//                sc[s][r] = scale
//
// d and dmin stay fp16 bit patterns, one per row; padding rows are all zero.
// Fields are byte arrays: tiles are only as aligned as their offset in the
// group, so multi-byte fields are read with memcpy or unaligned loads.
//
// Changing anything here changes the tiled format (host and NPU must agree).

#ifndef HTP_KQUANT_H
#define HTP_KQUANT_H

#include <stddef.h>
#include <stdint.h>

#define HTP_KQ_QK 256  // elements per super-block
#define HTP_KQ_R  16   // rows per tile (HTP_TILE_ROWS)

struct htp_q4k_q {  // quant part, Q4_K
    uint8_t qs[8][4][64];
};

struct htp_q5k_q {  // quant part, Q5_K
    uint8_t qs[8][4][64];
    uint8_t qh[8][4][2][8];
};

struct htp_kmin_s {  // scale part, Q4_K and Q5_K
    uint8_t sc[8][16];
    uint8_t mn[4][16][2];
    uint8_t d[16][2];     // fp16
    uint8_t dmin[16][2];  // fp16
};

struct htp_q6k_q {  // quant part, Q6_K
    uint8_t ql[16][2][64];
    uint8_t qh[16][2][4][8];
};

struct htp_q6k_s {  // scale part, Q6_K
    int8_t  sc[16][16];
    uint8_t d[16][2];  // fp16
};

_Static_assert(sizeof(struct htp_q4k_q) == 2048 && sizeof(struct htp_q5k_q) == 2560, "k-quant q parts");
_Static_assert(sizeof(struct htp_q6k_q) == 3072 && sizeof(struct htp_q6k_s) == 288, "q6_K parts");
_Static_assert(sizeof(struct htp_kmin_s) == 320, "q4_K/q5_K scale part");

// Activations quantized per 256 for the integer dot products, as ggml's
// block_q8_K: x[i] ~ d * qs[i], with the sums of qs over each 16 and each 32.
struct htp_q8k_block {
    int8_t  qs[HTP_KQ_QK];
    float   d;
    int16_t bsum16[16];
    int16_t bsum32[8];
    uint8_t pad[12];
};
_Static_assert(sizeof(struct htp_q8k_block) == 320, "q8k block");

// Is type (enum htp_type) one of the K-quants handled here?
int htp_kq_type_ok(uint32_t type);

// Tile pack/unpack for tiled.c's format table (same contract as
// struct htp_tile_format's pack and unpack).
void htp_kq_pack_q4_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q4_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_q5_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q5_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_q6_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q6_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);

// Dequantizes row r (0..15) of a tiled row group of nsb super-blocks into
// y[nsb * 256].
void htp_kq_dequant_tiled_row(uint32_t type, float * y, const uint8_t * group, int r, int64_t nsb);

// Dequantizes nsb ggml blocks (a plain row) into y[nsb * 256].
void htp_kq_dequant_row(uint32_t type, float * y, const uint8_t * row, int64_t nsb);

// Quantizes x[k] (k % 256 == 0) into k / 256 activation blocks, as ggml's
// quantize_row_q8_K (same rounding, so the integer sums agree exactly).
// AVX-512 or portable C, whichever the build targets.
void htp_kq_quantize_q8k(struct htp_q8k_block * y, const float * x, int64_t k);

// The same with the portable C code only (for tests of the SIMD path).
void htp_kq_quantize_q8k_ref(struct htp_q8k_block * y, const float * x, int64_t k);

// out[c][r] = dot product of row r (0..15) of a tiled row group of nsb
// super-blocks with column c (0 .. nc-1, nc <= 4) of quantized activations,
// a[c][0 .. nsb-1]. Uses AVX-512 VNNI, AVX2 or portable C, whichever the
// build targets.
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

// The op kernels (kquant-ops.c), reached through the MUL_MAT, MUL_MAT_ID and
// GET_ROWS kernels when src0 is a K-quant. Same contract as kernels.h.
struct htp_op_ctx;
int htp_kq_mul_mat_check(const struct htp_op_ctx * ctx);
int htp_kq_mul_mat_run(struct htp_op_ctx * ctx);
int htp_kq_mul_mat_id_check(const struct htp_op_ctx * ctx);
int htp_kq_mul_mat_id_run(struct htp_op_ctx * ctx);
int htp_kq_get_rows_check(const struct htp_op_ctx * ctx);
int htp_kq_get_rows_run(struct htp_op_ctx * ctx);

#endif  // HTP_KQUANT_H
