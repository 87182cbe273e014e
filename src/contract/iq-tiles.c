// iq-tiles.c: the IQ types with NPU kernels and their tiled formats (see
// iq-tiles.h): a tile is the 16 rows' ggml blocks, verbatim (IQ2_XXS,
// IQ2_XS, IQ3) or with their points as codes (IQ1, IQ2_S).

#include "iq-tiles.h"

#include <string.h>

#include "proto/htp-proto.h"

// The IQ types the NPU has kernels (decoders) for. Enabling another IQ type
// (its decoder in npu/ops/iq-decode.c) is one line here.
// One type a line, so each decoder family's branch adds its own lines
// (decoders: npu/ops/iq2-decode.c, iq3-decode.c, iq1-decode.c).
// clang-format off
static const uint32_t iq_kernel_types[] = {
    HTP_TYPE_IQ2_XXS,
    HTP_TYPE_IQ2_XS,
    HTP_TYPE_IQ2_S,
    HTP_TYPE_IQ3_XXS,
    HTP_TYPE_IQ3_S,
    HTP_TYPE_IQ1_S,
    HTP_TYPE_IQ1_M,
};
// clang-format on

int htp_iq_type_ok(uint32_t type) {
    for (size_t i = 0; i < sizeof iq_kernel_types / sizeof iq_kernel_types[0]; i++) {
        if (iq_kernel_types[i] == type) {
            return 1;
        }
    }
    return 0;
}

// Pack / unpack of a tile of blocks of BYTES bytes: copies (padding rows zero).
#define IQ_COPY_FNS(BYTES)                                                                               \
    static void iq_pack_##BYTES(const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) { \
        (void)s;                                                                                         \
        for (int r = 0; r < HTP_TILE_ROWS; r++) {                                                        \
            if (blocks[r]) {                                                                             \
                memcpy(q + (size_t)r * (BYTES), blocks[r], (BYTES));                                     \
            } else {                                                                                     \
                memset(q + (size_t)r * (BYTES), 0, (BYTES));                                             \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    static void iq_unpack_##BYTES(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {        \
        (void)s;                                                                                         \
        memcpy(block, q + (size_t)r * (BYTES), (BYTES));                                                 \
    }

IQ_COPY_FNS(66)   // IQ2_XXS
IQ_COPY_FNS(74)   // IQ2_XS
IQ_COPY_FNS(98)   // IQ3_XXS
IQ_COPY_FNS(110)  // IQ3_S
#undef IQ_COPY_FNS

// --- IQ1, IQ2_S: points as codes (iq-tiles.h, 3.) ---

static uint16_t get16(const uint8_t * p) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put16(uint8_t * p, uint16_t v) {
    memcpy(p, &v, sizeof v);
}

// The key of a code (sum_j field j * 3^j), or -1 if a field is 3 (no coordinate has that code).
static int key_of(uint16_t code) {
    int key = 0;
    for (int j = 7; j >= 0; j--) {
        const int c = (code >> (2 * j)) & 3;
        if (c == 3) {
            return -1;
        }
        key = 3 * key + c;
    }
    return key;
}

// The position of v in set[0..2], or 3 if it is not there.
static int field_of(uint8_t v, const uint8_t set[3]) {
    int c = 0;
    while (c < 3 && set[c] != v) {
        c++;
    }
    return c;
}

// code[i] and index[] of n points of 8 coordinates (bytes, each in set[0..2]); -1 if two are equal.
static int build_codes(const uint8_t * points, int n, const uint8_t set[3], uint16_t * code, uint16_t * index) {
    for (int k = 0; k < HTP_IQ_KEYS; k++) {
        index[k] = HTP_IQ_NO_POINT;
    }
    for (int i = 0; i < n; i++) {
        uint16_t c = 0;
        for (int j = 0; j < 8; j++) {
            c |= (uint16_t)(field_of(points[8 * i + j], set) << (2 * j));
        }
        const int key = key_of(c);
        if (key < 0 || index[key] != HTP_IQ_NO_POINT) {
            return -1;
        }
        code[i]    = c;
        index[key] = (uint16_t)i;
    }
    return 0;
}

int htp_iq_coder_build(const struct htp_codebooks * cb, struct htp_iq_coder * c) {
    static const uint8_t iq1_set[3] = {0xff, 0, 1};  // -1, 0, 1 as bytes
    static const uint8_t iq2_set[3] = {8, 25, 43};
    return build_codes((const uint8_t *)&cb->iq1s[0][0], 2048, iq1_set, c->iq1_code, c->iq1_index) != 0 ||
                   build_codes(&cb->iq2s[0][0], 1024, iq2_set, c->iq2s_code, c->iq2s_index) != 0
               ? -1
               : 0;
}

// The index of a code's point (index: a coder's table). Codes come from pack,
// so every one has a point; anything else (bytes that pack did not write)
// reads as point 0.
static uint16_t index_of(const uint16_t * index, uint16_t code) {
    const int key = key_of(code);
    return key < 0 || index[key] == HTP_IQ_NO_POINT ? 0 : index[key];
}

// IQ1_S, ggml: +0 d, +2 index_lo[32], +34 u16 qh[8] (group g: bits 3 l .. 3 l + 2 the
// high index bits of point l, 12..14 the scale, 15 the delta's sign).
static void iq1s_to_codes(const struct htp_iq_coder * c, const uint8_t * b, uint8_t * o) {
    memcpy(o, b, 2);
    memset(o + 66, 0, 4);
    for (int g = 0; g < 8; g++) {
        const uint16_t w = get16(b + 34 + 2 * g);
        for (int l = 0; l < 4; l++) {
            const int p = 4 * g + l;
            put16(o + 2 + 2 * p, c->iq1_code[b[2 + p] | ((w >> (3 * l)) & 7) << 8]);
        }
        o[66 + g / 2] |= (uint8_t)((w >> 12) << (4 * (g % 2)));
    }
}

static void iq1s_from_codes(const struct htp_iq_coder * c, const uint8_t * o, uint8_t * b) {
    memcpy(b, o, 2);
    for (int g = 0; g < 8; g++) {
        uint16_t w = (uint16_t)(((o[66 + g / 2] >> (4 * (g % 2))) & 15) << 12);
        for (int l = 0; l < 4; l++) {
            const int      p = 4 * g + l;
            const uint16_t i = index_of(c->iq1_index, get16(o + 2 + 2 * p));
            b[2 + p]         = (uint8_t)i;
            w |= (uint16_t)((i >> 8) << (3 * l));
        }
        put16(b + 34 + 2 * g, w);
    }
}

// IQ1_M, ggml: +0 index_lo[32], +32 high[16] (nibble p % 2 of high[p / 2]: bits 0..2
// the high index bits of point p, bit 3 its delta's sign), +48 u16 scales[4].
static void iq1m_to_codes(const struct htp_iq_coder * c, const uint8_t * b, uint8_t * o) {
    uint32_t neg = 0;
    for (int p = 0; p < 32; p++) {
        const int nib = (b[32 + p / 2] >> (4 * (p % 2))) & 15;
        put16(o + 2 * p, c->iq1_code[b[p] | (nib & 7) << 8]);
        neg |= (uint32_t)(nib >> 3) << (8 * (p % 4) + p / 4);
    }
    memcpy(o + 64, &neg, 4);
    memcpy(o + 68, b + 48, 8);
}

static void iq1m_from_codes(const struct htp_iq_coder * c, const uint8_t * o, uint8_t * b) {
    uint32_t neg;
    memcpy(&neg, o + 64, 4);
    memset(b + 32, 0, 16);
    for (int p = 0; p < 32; p++) {
        const uint16_t i   = index_of(c->iq1_index, get16(o + 2 * p));
        const int      nib = (i >> 8) | (int)((neg >> (8 * (p % 4) + p / 4)) & 1) << 3;
        b[p]               = (uint8_t)i;
        b[32 + p / 2] |= (uint8_t)(nib << (4 * (p % 2)));
    }
    memcpy(b + 48, o + 68, 8);
}

// IQ2_S, ggml: +0 d, +2 index_lo[32], +34 signs[32], +66 qh[8] (byte g: bits 2 l, 2 l + 1
// the high index bits of point l), +74 scales[8].
static void iq2s_to_codes(const struct htp_iq_coder * c, const uint8_t * b, uint8_t * o) {
    memcpy(o, b, 2);
    for (int p = 0; p < 32; p++) {
        put16(o + 2 + 2 * p, c->iq2s_code[b[2 + p] | ((b[66 + p / 4] >> (2 * (p % 4))) & 3) << 8]);
    }
    memcpy(o + 66, b + 34, 32);
    memcpy(o + 98, b + 74, 8);
}

static void iq2s_from_codes(const struct htp_iq_coder * c, const uint8_t * o, uint8_t * b) {
    memcpy(b, o, 2);
    memset(b + 66, 0, 8);
    for (int p = 0; p < 32; p++) {
        const uint16_t i = index_of(c->iq2s_index, get16(o + 2 + 2 * p));
        b[2 + p]         = (uint8_t)i;
        b[66 + p / 4] |= (uint8_t)((i >> 8) << (2 * (p % 4)));
    }
    memcpy(b + 34, o + 66, 32);
    memcpy(b + 74, o + 98, 8);
}

// Pack / unpack of a tile of code blocks: each row's block as codes, CODE bytes a row.
#define IQ_CODED_FNS(NAME, CODE)                                                                                     \
    static void NAME##_pack(const struct htp_iq_coder * c, const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q, \
                            uint8_t * s) {                                                                           \
        (void)s;                                                                                                     \
        for (int r = 0; r < HTP_TILE_ROWS; r++) {                                                                    \
            if (blocks[r]) {                                                                                         \
                NAME##_to_codes(c, blocks[r], q + (size_t)r * (CODE));                                               \
            } else {                                                                                                 \
                memset(q + (size_t)r * (CODE), 0, (CODE));                                                           \
            }                                                                                                        \
        }                                                                                                            \
    }                                                                                                                \
    static void NAME##_unpack(const struct htp_iq_coder * c, const uint8_t * q, const uint8_t * s, int r,            \
                              uint8_t * block) {                                                                     \
        (void)s;                                                                                                     \
        NAME##_from_codes(c, q + (size_t)r * (CODE), block);                                                         \
    }

IQ_CODED_FNS(iq1s, HTP_IQ1S_CODE_BLOCK)
IQ_CODED_FNS(iq1m, HTP_IQ1M_CODE_BLOCK)
IQ_CODED_FNS(iq2s, HTP_IQ2S_CODE_BLOCK)
#undef IQ_CODED_FNS

#define IQ_FORMAT(T, BYTES) \
    { (T), 256, (BYTES), 16 * (BYTES), 0, iq_pack_##BYTES, iq_unpack_##BYTES, NULL, NULL }
#define IQ_CODED_FORMAT(T, BYTES, NAME, CODE) \
    { (T), 256, (BYTES), 16 * (CODE), 0, NULL, NULL, NAME##_pack, NAME##_unpack }

// Every IQ codebook type's format; only those of htp_iq_type_ok are given out.
static const struct htp_tile_format iq_formats[] = {
    IQ_FORMAT(HTP_TYPE_IQ2_XXS, 66),
    IQ_FORMAT(HTP_TYPE_IQ2_XS, 74),
    IQ_CODED_FORMAT(HTP_TYPE_IQ2_S, 82, iq2s, HTP_IQ2S_CODE_BLOCK),
    IQ_FORMAT(HTP_TYPE_IQ3_XXS, 98),
    IQ_FORMAT(HTP_TYPE_IQ3_S, 110),
    IQ_CODED_FORMAT(HTP_TYPE_IQ1_S, 50, iq1s, HTP_IQ1S_CODE_BLOCK),
    IQ_CODED_FORMAT(HTP_TYPE_IQ1_M, 56, iq1m, HTP_IQ1M_CODE_BLOCK),
};
#undef IQ_FORMAT
#undef IQ_CODED_FORMAT

const struct htp_tile_format * htp_iq_tile_format(uint32_t type) {
    if (!htp_iq_type_ok(type)) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof iq_formats / sizeof iq_formats[0]; i++) {
        if (iq_formats[i].type == type) {
            return &iq_formats[i];
        }
    }
    return NULL;
}
