// tiled.c: pack and unpack of the tiled weight layout described in tiled.h.
// Linked by the NPU (kernels, the plain-layout fallback) and by the host
// (repack in set_tensor, unpack in get_tensor), so both read one definition.
//
// The 32-element types share one shape of tile: a block is a header of
// scale fields followed by 16 bytes of nibbles (or 32 int8 for Q8_0). The
// quant part interleaves 4-byte groups of the 16 rows; the scale part stores
// header field f of row r at s[(f * 16 + r) * field_bytes].

#include "tiled.h"

#include <string.h>

#include "proto/htp-proto.h"
#include "iq-tiles.h"
#include "kquant-tiles.h"

// --- blocks of a header (hdr_fields x field_bytes) and nq quant bytes ---

static void tile_pack(const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q, uint8_t * s, int hdr_fields,
                      int field_bytes, int nq, uint8_t qxor) {
    const int hdr = hdr_fields * field_bytes;
    for (int r = 0; r < HTP_TILE_ROWS; r++) {
        const uint8_t * b = blocks[r];
        for (int f = 0; f < hdr_fields; f++) {
            uint8_t * sf = s + ((size_t)f * HTP_TILE_ROWS + r) * field_bytes;
            if (b) {
                memcpy(sf, b + f * field_bytes, field_bytes);
            } else {
                memset(sf, 0, field_bytes);  // padding row: zero scale
            }
        }
        for (int v = 0; v < nq / 4; v++) {
            for (int j = 0; j < 4; j++) {
                q[64 * v + 4 * r + j] = b ? (uint8_t)(b[hdr + 4 * v + j] ^ qxor) : 0;
            }
        }
    }
}

static void tile_unpack(const uint8_t * q, const uint8_t * s, int r, uint8_t * block, int hdr_fields, int field_bytes,
                        int nq, uint8_t qxor) {
    const int hdr = hdr_fields * field_bytes;
    for (int f = 0; f < hdr_fields; f++) {
        memcpy(block + f * field_bytes, s + ((size_t)f * HTP_TILE_ROWS + r) * field_bytes, field_bytes);
    }
    for (int v = 0; v < nq / 4; v++) {
        for (int j = 0; j < 4; j++) {
            block[hdr + 4 * v + j] = (uint8_t)(q[64 * v + 4 * r + j] ^ qxor);
        }
    }
}

// Q8_0: fp16 d, 32 x int8 (stored + 128 as u8, i.e. xor 0x80).
static void pack_q8_0(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 1, 2, 32, 0x80);
}

static void unpack_q8_0(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 1, 2, 32, 0x80);
}

// Q4_0, IQ4_NL: fp16 d, 16 bytes of nibbles.
static void pack_d_q4(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 1, 2, 16, 0);
}

static void unpack_d_q4(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 1, 2, 16, 0);
}

// Q4_1: fp16 d, fp16 m, 16 bytes of nibbles.
static void pack_q4_1(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 2, 2, 16, 0);
}

static void unpack_q4_1(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 2, 2, 16, 0);
}

// MXFP4: e8m0 exponent, 16 bytes of nibbles.
static void pack_mxfp4(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 1, 1, 16, 0);
}

static void unpack_mxfp4(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 1, 1, 16, 0);
}

// Q5_0, Q5_1: nsc fp16 scale fields, the 32 high bits qh (little-endian:
// bit e is bit 4 of element e), 16 bytes of nibbles. The quant part is the
// nibbles as Q4_0's (256 bytes) and then 8 masks of 8 bytes: bit 4 r + t of
// little-endian mask g is bit 4 g + t of row r's qh, so mask g covers tile
// vector g of the unpacked weights (tiled.h).
static void tile_pack_q5(const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q, uint8_t * s, int nsc) {
    const int hdr = 2 * nsc;
    tile_pack(blocks, q, s, nsc, 2, 0, 0);  // the scale fields
    uint8_t * masks = q + HTP_Q5_MASKS;
    memset(masks, 0, 64);
    for (int r = 0; r < HTP_TILE_ROWS; r++) {
        const uint8_t * b = blocks[r];
        for (int v = 0; v < 4; v++) {
            for (int j = 0; j < 4; j++) {
                q[64 * v + 4 * r + j] = b ? b[hdr + 4 + 4 * v + j] : 0;
            }
        }
        if (!b) {
            continue;
        }
        uint32_t qh;
        memcpy(&qh, b + hdr, 4);
        for (int g = 0; g < 8; g++) {
            masks[8 * g + r / 2] |= (uint8_t)(((qh >> (4 * g)) & 15) << (4 * (r & 1)));
        }
    }
}

static void tile_unpack_q5(const uint8_t * q, const uint8_t * s, int r, uint8_t * block, int nsc) {
    const int hdr = 2 * nsc;
    tile_unpack(q, s, r, block, nsc, 2, 0, 0);
    const uint8_t * masks = q + HTP_Q5_MASKS;
    uint32_t        qh    = 0;
    for (int g = 0; g < 8; g++) {
        qh |= (uint32_t)((masks[8 * g + r / 2] >> (4 * (r & 1))) & 15) << (4 * g);
    }
    memcpy(block + hdr, &qh, 4);
    for (int v = 0; v < 4; v++) {
        for (int j = 0; j < 4; j++) {
            block[hdr + 4 + 4 * v + j] = q[64 * v + 4 * r + j];
        }
    }
}

static void pack_q5_0(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack_q5(b, q, s, 1);
}

static void unpack_q5_0(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack_q5(q, s, r, block, 1);
}

static void pack_q5_1(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack_q5(b, q, s, 2);
}

static void unpack_q5_1(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack_q5(q, s, r, block, 2);
}

// --- Q1_0, Q2_0, NVFP4: ggml blocks of 128 / 64 elements as 32-element units ---
//
// The matmul's activations come in blocks of 32, so each tile is a run of
// units of 32 elements (tiled.h); unit u of a block is its elements
// 32 u .. 32 u + 31.

// Bit 4 r + j of little-endian 64-bit mask g (g = 0..7) of a unit's 64 bytes
// of masks is bit 4 g + j of row r's 32-bit word (Q5_0's mask form).
static void unit_masks_set(uint8_t * masks, int r, uint32_t word) {
    for (int g = 0; g < 8; g++) {
        masks[8 * g + r / 2] |= (uint8_t)(((word >> (4 * g)) & 15) << (4 * (r & 1)));
    }
}

static uint32_t unit_masks_get(const uint8_t * masks, int r) {
    uint32_t word = 0;
    for (int g = 0; g < 8; g++) {
        word |= (uint32_t)((masks[8 * g + r / 2] >> (4 * (r & 1))) & 15) << (4 * g);
    }
    return word;
}

static uint32_t load_le32(const uint8_t * p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store_le32(uint8_t * p, uint32_t w) {
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(w >> (8 * i));
    }
}

// Q1_0: fp16 d, 16 bytes of sign bits (bit j of byte i: element 8 i + j).
// Unit u's masks at q[64 u]: row r's word is bytes 4 u .. 4 u + 3 of qs.
static void pack_q1_0(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 1, 2, 0, 0);
    memset(q, 0, HTP_Q1_0_Q_BYTES);
    for (int r = 0; r < HTP_TILE_ROWS; r++) {
        for (int u = 0; b[r] && u < 4; u++) {
            unit_masks_set(q + HTP_Q1_0_UNIT * u, r, load_le32(b[r] + 2 + 4 * u));
        }
    }
}

static void unpack_q1_0(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 1, 2, 0, 0);
    for (int u = 0; u < 4; u++) {
        store_le32(block + 2 + 4 * u, unit_masks_get(q + HTP_Q1_0_UNIT * u, r));
    }
}

// Q2_0: fp16 d, 16 bytes of 2-bit quants (bits 2 t, 2 t + 1 of byte i:
// element 4 i + t). Unit u at q[128 u]: the masks of bit 0 of its 32 quants,
// then those of bit 1.
static void pack_q2_0(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 1, 2, 0, 0);
    memset(q, 0, HTP_Q2_0_Q_BYTES);
    for (int r = 0; r < HTP_TILE_ROWS; r++) {
        for (int u = 0; b[r] && u < 2; u++) {
            uint32_t plane[2] = {0, 0};
            for (int e = 0; e < 32; e++) {
                const int qv = (b[r][2 + 8 * u + e / 4] >> (2 * (e % 4))) & 3;
                plane[0] |= (uint32_t)(qv & 1) << e;
                plane[1] |= (uint32_t)(qv >> 1) << e;
            }
            unit_masks_set(q + HTP_Q2_0_UNIT * u, r, plane[0]);
            unit_masks_set(q + HTP_Q2_0_UNIT * u + 64, r, plane[1]);
        }
    }
}

static void unpack_q2_0(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 1, 2, 0, 0);
    for (int u = 0; u < 2; u++) {
        const uint32_t p0 = unit_masks_get(q + HTP_Q2_0_UNIT * u, r);
        const uint32_t p1 = unit_masks_get(q + HTP_Q2_0_UNIT * u + 64, r);
        for (int i = 0; i < 8; i++) {
            uint8_t byte = 0;
            for (int t = 0; t < 4; t++) {
                const int e = 4 * i + t;
                byte |= (uint8_t)((((p0 >> e) & 1) | ((p1 >> e) & 1) << 1) << (2 * t));
            }
            block[2 + 8 * u + i] = byte;
        }
    }
}

// NVFP4: 4 ue4m3 scales (sub-block t: elements 16 t .. 16 t + 15), 32 bytes
// of nibbles (sub-block t's element i at qs[8 t + i % 8], low nibble for
// i < 8). Unit u (sub-blocks 2 u, 2 u + 1) at q[256 u] in Q4_0's form: byte
// 64 v + 4 r + j holds element 4 v + j of the unit (sub-block 2 u) in its
// low nibble and element 16 + 4 v + j (sub-block 2 u + 1) in its high one.
static int nvfp4_nibble(const uint8_t * qs, int t, int i) {
    return (qs[8 * t + (i & 7)] >> (4 * (i >> 3))) & 15;
}

static void pack_nvfp4(const uint8_t * const b[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) {
    tile_pack(b, q, s, 4, 1, 0, 0);  // the scale fields
    for (int r = 0; r < HTP_TILE_ROWS; r++) {
        for (int u = 0; u < 2; u++) {
            for (int v = 0; v < 4; v++) {
                for (int j = 0; j < 4; j++) {
                    const uint8_t * qs = b[r] ? b[r] + 4 : NULL;
                    q[HTP_NVFP4_UNIT * u + 64 * v + 4 * r + j] =
                        qs ? (uint8_t)(nvfp4_nibble(qs, 2 * u, 4 * v + j) | nvfp4_nibble(qs, 2 * u + 1, 4 * v + j) << 4)
                           : 0;
                }
            }
        }
    }
}

static void unpack_nvfp4(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    tile_unpack(q, s, r, block, 4, 1, 0, 0);
    uint8_t * qs = block + 4;
    memset(qs, 0, 32);
    for (int u = 0; u < 2; u++) {
        for (int e = 0; e < 16; e++) {
            const uint8_t byte = q[HTP_NVFP4_UNIT * u + 64 * (e / 4) + 4 * r + e % 4];
            for (int h = 0; h < 2; h++) {  // sub-block 2 u + h, element e
                const int t = 2 * u + h;
                qs[8 * t + (e & 7)] |= (uint8_t)(((byte >> (4 * h)) & 15) << (4 * (e >> 3)));
            }
        }
    }
}

static const struct htp_tile_format tile_formats[] = {
    {HTP_TYPE_Q8_0, 32, 34, 512, 32, pack_q8_0, unpack_q8_0, NULL, NULL},
    {HTP_TYPE_Q4_0, 32, 18, 256, 32, pack_d_q4, unpack_d_q4, NULL, NULL},
    {HTP_TYPE_Q4_1, 32, 20, 256, 64, pack_q4_1, unpack_q4_1, NULL, NULL},
    {HTP_TYPE_IQ4_NL, 32, 18, 256, 32, pack_d_q4, unpack_d_q4, NULL, NULL},
    {HTP_TYPE_MXFP4, 32, 17, 256, 16, pack_mxfp4, unpack_mxfp4, NULL, NULL},
    {HTP_TYPE_Q5_0, 32, 22, HTP_Q5_Q_BYTES, 32, pack_q5_0, unpack_q5_0, NULL, NULL},
    {HTP_TYPE_Q5_1, 32, 24, HTP_Q5_Q_BYTES, 64, pack_q5_1, unpack_q5_1, NULL, NULL},
    // Blocks of several 32-element units (tiled.h).
    {HTP_TYPE_Q1_0, 128, 18, HTP_Q1_0_Q_BYTES, 32, pack_q1_0, unpack_q1_0, NULL, NULL},
    {HTP_TYPE_Q2_0, 64, 18, HTP_Q2_0_Q_BYTES, 32, pack_q2_0, unpack_q2_0, NULL, NULL},
    {HTP_TYPE_NVFP4, 64, 36, HTP_NVFP4_Q_BYTES, 64, pack_nvfp4, unpack_nvfp4, NULL, NULL},
    // K-quants: tiles of one 256-element super-block per row, see kquant-tiles.h.
    {HTP_TYPE_Q4_K, 256, 144, 2048, 320, htp_kq_pack_q4_K, htp_kq_unpack_q4_K, NULL, NULL},
    {HTP_TYPE_Q5_K, 256, 176, 2560, 320, htp_kq_pack_q5_K, htp_kq_unpack_q5_K, NULL, NULL},
    {HTP_TYPE_Q6_K, 256, 210, 3072, 288, htp_kq_pack_q6_K, htp_kq_unpack_q6_K, NULL, NULL},
    {HTP_TYPE_Q3_K, 256, 110, 1536, 288, htp_kq_pack_q3_K, htp_kq_unpack_q3_K, NULL, NULL},
    {HTP_TYPE_Q2_K, 256, 84, 1024, 320, htp_kq_pack_q2_K, htp_kq_unpack_q2_K, NULL, NULL},
    {HTP_TYPE_IQ4_XS, 256, 136, 2048, 160, htp_kq_pack_iq4_xs, htp_kq_unpack_iq4_xs, NULL, NULL},
};

const struct htp_tile_format * htp_tile_format(uint32_t type) {
    for (size_t i = 0; i < sizeof tile_formats / sizeof tile_formats[0]; i++) {
        if (tile_formats[i].type == type) {
            return &tile_formats[i];
        }
    }
    return htp_iq_tile_format(type);  // the IQ codebook types: iq-tiles.h
}

void htp_tiled_strides(const struct htp_tile_format * f, const int64_t ne[4], int64_t nb[4]) {
    const uint64_t gb = htp_tiled_group_bytes(f, ne[0]);
    nb[0]             = f->blck_bytes;
    nb[1]             = (int64_t)(gb / HTP_TILE_ROWS);
    nb[2]             = (int64_t)gb * htp_tiled_ngroups(ne[1]);
    nb[3]             = nb[2] * ne[2];
}

uint64_t htp_tiled_nbytes(const struct htp_tile_format * f, const int64_t ne[4]) {
    int64_t nb[4];
    htp_tiled_strides(f, ne, nb);
    return (uint64_t)nb[3] * (uint64_t)ne[3];
}

int htp_tiled_strides_ok(const struct htp_tile_format * f, const int64_t ne[4], const int64_t nb[4]) {
    if (ne[0] < 0 || ne[0] % f->blck_size != 0 || ne[1] < 0 || ne[2] < 0 || ne[3] < 0) {
        return 0;
    }
    int64_t want[4];
    htp_tiled_strides(f, ne, want);
    return nb[0] == want[0] && nb[1] == want[1] && nb[2] == want[2] && nb[3] == want[3];
}

int htp_tiled_pack_group(const struct htp_tile_format * f, const struct htp_iq_coder * coder, const uint8_t * rows,
                         size_t row_stride, int nrows, int64_t nblk, uint8_t * group) {
    if (f->pack_coded && !coder) {
        return -1;
    }
    uint8_t * const qbase = group;
    uint8_t * const sbase = group + (size_t)nblk * f->q_bytes;
    for (int64_t kb = 0; kb < nblk; kb++) {
        const uint8_t * blocks[HTP_TILE_ROWS];
        for (int r = 0; r < HTP_TILE_ROWS; r++) {
            blocks[r] = r < nrows ? rows + (size_t)r * row_stride + (size_t)kb * f->blck_bytes : NULL;
        }
        uint8_t *q = qbase + (size_t)kb * f->q_bytes, *s = sbase + (size_t)kb * f->s_bytes;
        if (f->pack_coded) {
            f->pack_coded(coder, blocks, q, s);
        } else {
            f->pack(blocks, q, s);
        }
    }
    const size_t used = (size_t)nblk * (f->q_bytes + f->s_bytes);
    const size_t gb   = htp_tiled_group_bytes(f, nblk * f->blck_size);
    memset(group + used, 0, gb - used);
    return 0;
}

int htp_tiled_unpack_block(const struct htp_tile_format * f, const struct htp_iq_coder * coder, const uint8_t * group,
                           int64_t nblk, int r, int64_t kb, uint8_t * block) {
    const uint8_t *q = htp_tiled_q(f, group, kb), *s = htp_tiled_s(f, group, nblk, kb);
    if (!f->pack_coded) {
        f->unpack(q, s, r, block);
        return 0;
    }
    if (!coder) {
        return -1;
    }
    f->unpack_coded(coder, q, s, r, block);
    return 0;
}
