// kquant-tiles.h: the tiled layout of K-quant weights (Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K) and of IQ4_XS (a K-quant-shaped super-block of iq4_nl indices),
// shared by the host (which repacks weights into it in set_tensor and back in
// get_tensor) and the NPU's kernels (which read it).
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
//                64-bit mask qh[j][c][u / 4]; a sub-block's qs and qh are
//                consecutive (struct htp_q5k_sub), so that the part is read in
//                order, and htp_kmin_qs_off finds qs[j][c] in either type
//                sc[j][r] = scale, mn[j / 2][r][j % 2] = min (the pair layout
//                feeds a 16-bit pairwise multiply-add with two activation sums)
//   Q6_K         sub-block s = e / 16 (16 elements, one int8 scale)
//                chunk c = (e % 16) / 8, u = e % 8:
//                s[s].ql[c] byte (r, u % 4), nibble u / 4 = bits 0-3 of q (q = 0..63,
//                the stored value; ggml subtracts 32)
//                bits 4-5 of q are bits h, h + 1 of s[s].qh byte (r, u % 4), with
//                h = 4 - 4 c + 2 (u / 4): a byte holds the four 2-bit fields of the
//                elements its position carries in the two chunks, (c, nibble)
//                (1, low) at bits 0-1, (1, high) at 2-3, (0, low) at 4-5, (0, high)
//                at 6-7. So qh & 0x33 has the low nibbles' fields at 4-5 and 0-1,
//                qh & 0xCC the high ones' at 6-7 and 2-3, and one 16-bit shift of
//                either puts a field at bits 4-5 with nothing above it: the 6-bit q
//                is then one bit select with its nibble (no masks to expand)
//                sc[s][r] = scale
//   Q3_K         sub-block s = e / 16 (16 elements, one 6-bit scale)
//                k = (e % 16) / 4, t = e % 4:
//                bits 2 k, 2 k + 1 of qs[s] byte (r, t) = bits 0-1 of q (q = 0..7,
//                ggml's value + 4: ggml subtracts 4 where the hmask bit is clear)
//                bit 2 of q is bit (4 r + t) of mask qh[s][k]
//                sc[s][r] = ggml's 6-bit scale - 32 (int8; Q6_K's scale part)
//   Q2_K         qs as Q3_K's (q = 0..3, no high bit)
//                sm[s][r] = ggml's scale byte: scale in the low nibble, min in the high
//   IQ4_XS       qs as Q4_K's (q = 0..15, an index into the iq4_nl value table)
//                sc[j][r] = ggml's 6-bit sub-block scale - 32 (int8)
//
// d and dmin stay fp16 bit patterns, one per row; padding rows are all zero.
// Fields are byte arrays: tiles are only as aligned as their offset in the
// group, so multi-byte fields are read with memcpy or unaligned loads.
//
// Changing anything here changes the tiled format (host and NPU must agree).

#ifndef HTP_CONTRACT_KQUANT_TILES_H
#define HTP_CONTRACT_KQUANT_TILES_H

#include <stddef.h>
#include <stdint.h>

#define HTP_KQ_QK 256  // elements per super-block
#define HTP_KQ_R  16   // rows per tile (HTP_TILE_ROWS)

struct htp_q4k_q {  // quant part, Q4_K
    uint8_t qs[8][4][64];
};

struct htp_q5k_sub {  // sub-block j of a Q5_K quant part: five lines in the order they are read
    uint8_t qs[4][64];
    uint8_t qh[4][2][8];
};

struct htp_q5k_q {  // quant part, Q5_K
    struct htp_q5k_sub j[8];
};

struct htp_kmin_s {  // scale part, Q4_K and Q5_K
    uint8_t sc[8][16];
    uint8_t mn[4][16][2];
    uint8_t d[16][2];     // fp16
    uint8_t dmin[16][2];  // fp16
};

struct htp_q6k_sub {  // sub-block s of a Q6_K quant part: three lines in the order they are read
    uint8_t ql[2][64];
    uint8_t qh[64];
};

struct htp_q6k_q {  // quant part, Q6_K
    struct htp_q6k_sub s[16];
};

struct htp_q6k_s {  // scale part, Q6_K
    int8_t  sc[16][16];
    uint8_t d[16][2];  // fp16
};

struct htp_q3k_q {  // quant part, Q3_K (scale part: struct htp_q6k_s)
    uint8_t qs[16][64];
    uint8_t qh[16][4][8];
};

struct htp_q2k_q {  // quant part, Q2_K
    uint8_t qs[16][64];
};

struct htp_q2k_s {  // scale part, Q2_K
    uint8_t sm[16][16];
    uint8_t d[16][2];     // fp16
    uint8_t dmin[16][2];  // fp16
};

struct htp_iq4xs_s {  // scale part, IQ4_XS (quant part: struct htp_q4k_q)
    int8_t  sc[8][16];
    uint8_t d[16][2];  // fp16
};

_Static_assert(sizeof(struct htp_q3k_q) == 1536 && sizeof(struct htp_q2k_q) == 1024, "q3_K/q2_K q parts");
_Static_assert(sizeof(struct htp_q2k_s) == 320 && sizeof(struct htp_iq4xs_s) == 160, "q2_K/iq4_xs scale parts");
_Static_assert(sizeof(struct htp_q4k_q) == 2048 && sizeof(struct htp_q5k_q) == 2560, "k-quant q parts");
_Static_assert(sizeof(struct htp_q6k_q) == 3072 && sizeof(struct htp_q6k_s) == 288, "q6_K parts");
_Static_assert(sizeof(struct htp_kmin_s) == 320, "q4_K/q5_K scale part");

// Byte offset of qs[j][c] in a Q4_K (q5 = 0) or Q5_K quant part.
static inline size_t htp_kmin_qs_off(int q5, int j, int c) {
    return (size_t)j * (q5 ? sizeof(struct htp_q5k_sub) : sizeof(((struct htp_q4k_q *)0)->qs[0])) + 64 * (size_t)c;
}

// A super-block decoded from either form (ggml block or tile row): what pack,
// unpack and the kernels' dequantization work through.
struct htp_kq_superblock {
    uint8_t q[HTP_KQ_QK];  // Q2_K 0..3, Q3_K 0..7 (ggml subtracts 4), Q4_K 0..15, Q5_K 0..31,
                           // Q6_K 0..63 (ggml subtracts 32), IQ4_XS 0..15 (a table index)
    uint8_t sc[16];        // Q4_K/Q5_K: 8 six-bit scales; Q2_K: 16 four-bit scales; Q6_K, Q3_K:
                           // 16 int8 scales (bit pattern; Q3_K's 6-bit - 32); IQ4_XS: 8 (6-bit - 32)
    uint8_t  mn[16];       // Q4_K/Q5_K: 8 six-bit mins; Q2_K: 16 four-bit mins
    uint16_t d, dmin;      // fp16 bits (dmin used by Q2_K, Q4_K, Q5_K only)
};

// Is type (enum htp_type) one of the K-quants handled here?
int htp_kq_type_ok(uint32_t type);

// Bytes of a ggml block, of a tile's quant part and of its scale part.
size_t htp_kq_block_bytes(uint32_t type);
size_t htp_kq_q_bytes(uint32_t type);
size_t htp_kq_s_bytes(uint32_t type);

// Decode one ggml block, or row r (0..15) of the tile with quant part q and
// scale part s.
void htp_kq_block_decode(uint32_t type, const uint8_t * block, struct htp_kq_superblock * x);
void htp_kq_tile_decode(uint32_t type, const uint8_t * q, const uint8_t * s, int r, struct htp_kq_superblock * x);

// Tile pack/unpack for tiled.c's format table (same contract as
// struct htp_tile_format's pack and unpack).
void htp_kq_pack_q4_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q4_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_q5_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q5_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_q6_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q6_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_q3_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q3_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_q2_K(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_q2_K(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);
void htp_kq_pack_iq4_xs(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s);
void htp_kq_unpack_iq4_xs(const uint8_t * q, const uint8_t * s, int r, uint8_t * block);

#endif  // HTP_CONTRACT_KQUANT_TILES_H
