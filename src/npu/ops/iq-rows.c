// iq-rows.c: IQ rows against one column from their blocks (iq-rows.h).
//
// The AVX-512 kernels (VBMI, VNNI, BITALG) take a tile's 16 rows one
// super-block at a time: the column's 256 activations are loaded once per
// super-block, in the order the row kernels consume weights, and each row's
// 16 int32 partial sums are folded into one vector of the 16 rows' sums,
// which takes the float step of iq-dot.h for all 16 rows at once.
//
// Weight order. A 32-weight group g of a super-block is 4 points of 8
// weights (IQ1, IQ2) or 8 points of 4 (IQ3). Step h (0..3) of a row takes
// weights 8 h .. 8 h + 7 of every group: point h of each (IQ1, IQ2), points
// 2 h and 2 h + 1 (IQ3). So 64-bit lane g of every vector in a step belongs
// to group g, its 32-bit lanes 2 g and 2 g + 1 to the group's scale (one per
// group) or to its first or last 16 weights (IQ2_XS, IQ2_S, IQ1_M: h < 2 or
// h >= 2), and every step adds into the same lanes.
//
// One step: the points' codes (iq-rows.h), 16 bits per point, sit in their
// group's lane; vpmultishiftqb moves coordinate j's code to byte j and
// vpermb turns it into the coordinate (by the low 6 bits: the tables repeat
// the value set). The group's sign byte of the step names, bit j, the
// weights to negate; vpshufbitqmb turns it into a byte mask, and the masked
// activations go into vpdpbusd with the unsigned coordinates. IQ1's and
// IQ2_S's tiles hold the codes themselves (contract/iq-tiles.h).

#include "iq-rows.h"

#include <string.h>

#include "proto/htp-proto.h"

static const uint8_t iq2_values[3]    = {8, 25, 43};
static const uint8_t iq3xxs_values[8] = {4, 12, 20, 28, 36, 44, 52, 62};
static const uint8_t iq3s_values[8]   = {1, 3, 5, 7, 9, 11, 13, 15};

// The code of a point of n coordinates, bits per coordinate each.
static uint16_t point_code(const uint8_t * point, int n, const uint8_t * set, int nset, int bits) {
    uint16_t code = 0;
    for (int j = 0; j < n; j++) {
        int c = 0;
        while (c < nset - 1 && set[c] != point[j]) {
            c++;
        }
        code |= (uint16_t)(c << (bits * j));
    }
    return code;
}

void htp_iq_codes_build(const struct htp_codebooks * cb, struct htp_iq_codes * codes) {
    memset(codes, 0, sizeof *codes);
    for (int i = 0; i < 256; i++) {
        const uint16_t c    = point_code(cb->iq2xxs[i], 8, iq2_values, 3, 2);
        codes->iq2xxs_lo[i] = (uint8_t)c;
        codes->iq2xxs_hi[i] = (uint8_t)(c >> 8);
        const uint16_t c3   = point_code(cb->iq3xxs[i], 4, iq3xxs_values, 8, 3);
        codes->iq3xxs_lo[i] = (uint8_t)c3;
        codes->iq3xxs_hi[i] = (uint8_t)(c3 >> 8);
    }
    for (int i = 0; i < 512; i++) {
        codes->iq2xs[i]   = point_code(cb->iq2xs[i], 8, iq2_values, 3, 2);
        const uint16_t c3 = point_code(cb->iq3s[i], 4, iq3s_values, 8, 3);
        codes->iq3s_lo[i] = (uint8_t)c3;
        codes->iq3s_hi[i] = (uint8_t)(c3 >> 8);
    }
    for (uint32_t f = 0; f < 128; f++) {
        codes->signs8[f] = htp_iq_signs8(f);
    }
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__) && defined(__AVX512VNNI__) && \
    defined(__AVX512BITALG__)
#define IQ_ROWS_AVX512 1
#include <immintrin.h>
#endif

#ifdef IQ_ROWS_AVX512

// A 64-bit lane of 4 bytes b0, b0 + st, b0 + 2 st, b0 + 3 st (low first).
#define IQ_RAMP4(b0, st)                                                                                            \
    ((uint64_t)(uint8_t)(b0) | (uint64_t)(uint8_t)((b0) + (st)) << 8 | (uint64_t)(uint8_t)((b0) + 2 * (st)) << 16 | \
     (uint64_t)(uint8_t)((b0) + 3 * (st)) << 24)
// ... of 8 bytes b0, b0 + st, .., b0 + 7 st.
#define IQ_RAMP8(b0, st) (IQ_RAMP4(b0, st) | IQ_RAMP4((b0) + 4 * (st), st) << 32)

static inline __m512i bcast64(uint64_t v) {
    return _mm512_set1_epi64((long long)v);
}

// Byte i = 8 (i / 8): added to a per-lane pattern of byte indices, the same
// pattern in every 64-bit lane's own bytes.
static inline __m512i lane_base(void) {
    return _mm512_setr_epi64(0, 0x0808080808080808ll, 0x1010101010101010ll, 0x1818181818181818ll, 0x2020202020202020ll,
                             0x2828282828282828ll, 0x3030303030303030ll, 0x3838383838383838ll);
}

// What a row kernel reads besides its block and column: code tables (64
// bytes a register: byte tables low bytes first, word tables in index
// order), the value table of the step's vpermb, and the 128 expanded sign
// bytes of a 7-bit field (htp_iq_signs8) for the types that store 7 sign bits.
struct iq_rows_k {
    __m512i tab[16];
    __m512i values;
    __m512i signs8[2];
};

// The column's super-block as the row kernels read it.
struct iq_col {
    __m512i x[4];  // step order: x[h] lane g = activations 32 g + 8 h .. 32 g + 8 h + 7
    // IQ1, where s4[h] is x[h]'s sums of 4 (32-bit lane 2 g + i: bytes 8 g + 4 i .. + 3):
    __m512i s9;        // 9 (s4[0] + .. + s4[3])
    __m512i lo9, hi9;  // 9 (s4[0] + s4[1]), 9 (s4[2] + s4[3])
};

static inline void iq_rows_acts(const int8_t * qs, __m512i x[4]) {
    const __m512i a0 = _mm512_loadu_si512(qs), a1 = _mm512_loadu_si512(qs + 64);
    const __m512i a2 = _mm512_loadu_si512(qs + 128), a3 = _mm512_loadu_si512(qs + 192);
    for (int h = 0; h < 4; h++) {
        const __m512i idx = _mm512_setr_epi64(h, 4 + h, 8 + h, 12 + h, h, 4 + h, 8 + h, 12 + h);
        const __m512i t01 = _mm512_permutex2var_epi64(a0, idx, a1);
        const __m512i t23 = _mm512_permutex2var_epi64(a2, idx, a3);
        x[h]              = _mm512_shuffle_i64x2(t01, t23, _MM_SHUFFLE(1, 0, 1, 0));
    }
}

// A byte lookup of 256 entries (tables t[0..3]) by every byte of q.
static inline __m512i lookup256(const __m512i * t, __m512i q, __mmask64 bit7) {
    return _mm512_mask_blend_epi8(bit7, _mm512_permutex2var_epi8(t[0], q, t[1]),
                                  _mm512_permutex2var_epi8(t[2], q, t[3]));
}

// The 16-bit codes of points 0..3 (or 4..7, second) of each lane's index
// bytes, as the lane's 4 words, from their low and high bytes.
static inline __m512i codes_of(__m512i lo, __m512i hi, int second) {
    const __m512i pick = _mm512_add_epi8(bcast64(second ? 0x4707460645054404ull : 0x4303420241014000ull), lane_base());
    return _mm512_permutex2var_epi8(lo, pick, hi);
}

// One step on the step's coordinates v (unsigned): times the activations x
// negated where the sign bits sel names are set, added into acc.
static inline __m512i iq_step_points(__m512i acc, __m512i v, __m512i signs, uint64_t sel, __m512i x) {
    const __mmask64 neg = _mm512_bitshuffle_epi64_mask(signs, bcast64(sel));
    return _mm512_dpbusd_epi32(acc, v, _mm512_mask_sub_epi8(x, neg, _mm512_setzero_si512(), x));
}

// One step on codes: the coordinates of the codes ctrl names (vpmultishiftqb control).
static inline __m512i iq_step(__m512i acc, __m512i codes, uint64_t ctrl, const __m512i values, __m512i signs,
                              uint64_t sel, __m512i x) {
    const __m512i v = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(bcast64(ctrl), codes), values);
    return iq_step_points(acc, v, signs, sel, x);
}

// 2 s + 1 of the 4-bit fields s.
static inline __m512i odd_scale(__m512i s) {
    return _mm512_or_si512(_mm512_slli_epi32(s, 1), _mm512_set1_epi32(1));
}

// IQ2_XS, IQ2_S: the scale bytes at p (byte g: low nibble for weights 0..15
// of group g, high for 16..31) in 32-bit lanes 2 g and 2 g + 1.
static inline void iq2_scales16(const uint8_t * p, __m512i * lo, __m512i * hi) {
    uint64_t s;
    memcpy(&s, p, sizeof s);
    const __m512i b = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull,
                                                    _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
                                                    _mm512_zextsi128_si512(_mm_cvtsi64_si128((long long)s)));
    *lo             = odd_scale(_mm512_and_si512(b, _mm512_set1_epi32(15)));
    *hi             = odd_scale(_mm512_srli_epi32(b, 4));
}

// IQ1, IQ2: step h takes point h of each group, its code at bits 16 h of the lane.
#define IQ2_CTRL(h) IQ_RAMP8(16 * (h), 2)
// The sign byte of step h: byte h of the lane.
#define IQ_SEL(h) IQ_RAMP8(8 * (h), 1)

static inline __m512i iq2_values_table(void) {
    return _mm512_set1_epi32(8 | 25 << 8 | 43 << 16);
}

// IQ2_XXS (66 bytes): d, then per group 4 index bytes and a 32-bit word of
// 4 x 7 sign bits and the 4-bit scale (bits 28..31).
static inline __m512i iq2xxs_row(const uint8_t * blk, const __m512i x[4], const struct iq_rows_k * k) {
    const __m512i   q     = _mm512_loadu_si512(blk + 2);
    const __mmask64 bit7  = _mm512_movepi8_mask(q);
    const __m512i   codes = codes_of(lookup256(k->tab, q, bit7), lookup256(k->tab + 4, q, bit7), 0);
    const __m512i   f     = _mm512_multishift_epi64_epi8(bcast64(IQ_RAMP4(32, 7)), q);  // byte l: field l
    const __m512i   signs = _mm512_permutex2var_epi8(k->signs8[0], f, k->signs8[1]);
    __m512i         acc   = _mm512_setzero_si512();
    for (int h = 0; h < 4; h++) {
        acc = iq_step(acc, codes, IQ2_CTRL(h), k->values, signs, IQ_SEL(h), x[h]);
    }
    const __m512i s = _mm512_shuffle_epi32(_mm512_srli_epi64(q, 60), _MM_SHUFFLE(2, 2, 0, 0));
    return _mm512_mullo_epi32(acc, odd_scale(s));
}

// The steps of IQ2_XS and IQ2_S: h < 2 and h >= 2 apart, each sum times its scales.
static inline __m512i iq2_steps16(__m512i codes, const __m512i values, __m512i signs, const __m512i x[4],
                                  const uint8_t * scales) {
    __m512i lo, hi;
    iq2_scales16(scales, &lo, &hi);
    __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    acc0 = iq_step(acc0, codes, IQ2_CTRL(0), values, signs, IQ_SEL(0), x[0]);
    acc0 = iq_step(acc0, codes, IQ2_CTRL(1), values, signs, IQ_SEL(1), x[1]);
    acc1 = iq_step(acc1, codes, IQ2_CTRL(2), values, signs, IQ_SEL(2), x[2]);
    acc1 = iq_step(acc1, codes, IQ2_CTRL(3), values, signs, IQ_SEL(3), x[3]);
    return _mm512_add_epi32(_mm512_mullo_epi32(acc0, lo), _mm512_mullo_epi32(acc1, hi));
}

// IQ2_XS (74 bytes): d, 32 x 16 bits (9-bit index, 7 sign bits), 8 scale bytes.
static inline __m512i iq2xs_row(const uint8_t * blk, const __m512i x[4], const struct iq_rows_k * k) {
    const __m512i q = _mm512_loadu_si512(blk + 2);
    __m512i       t[8];
    for (int p = 0; p < 8; p++) {  // entries 64 p .. 64 p + 63, by index bits 0..5
        t[p] = _mm512_permutex2var_epi16(k->tab[2 * p], q, k->tab[2 * p + 1]);
    }
    const __mmask32 b6 = _mm512_test_epi16_mask(q, _mm512_set1_epi16(0x40));
    const __mmask32 b7 = _mm512_test_epi16_mask(q, _mm512_set1_epi16(0x80));
    const __mmask32 b8 = _mm512_test_epi16_mask(q, _mm512_set1_epi16(0x100));
    const __m512i   u0 =
        _mm512_mask_blend_epi16(b7, _mm512_mask_blend_epi16(b6, t[0], t[1]), _mm512_mask_blend_epi16(b6, t[2], t[3]));
    const __m512i u1 =
        _mm512_mask_blend_epi16(b7, _mm512_mask_blend_epi16(b6, t[4], t[5]), _mm512_mask_blend_epi16(b6, t[6], t[7]));
    const __m512i codes = _mm512_mask_blend_epi16(b8, u0, u1);
    const __m512i f     = _mm512_multishift_epi64_epi8(bcast64(IQ_RAMP4(9, 16)), q);  // byte l: field l
    const __m512i signs = _mm512_permutex2var_epi8(k->signs8[0], f, k->signs8[1]);
    return iq2_steps16(codes, k->values, signs, x, blk + 66);
}

// IQ2_S code block (106 bytes, contract/iq-tiles.h): d, 32 codes, 32 sign
// bytes (4 a group), 8 scale bytes.
static inline __m512i iq2s_row(const uint8_t * blk, const __m512i x[4], const struct iq_rows_k * k) {
    const __m512i codes = _mm512_loadu_si512(blk + 2);
    const __m512i signs = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(blk + 66)));
    return iq2_steps16(codes, k->values, signs, x, blk + 98);
}

// IQ3: step h takes points 2 h and 2 h + 1 of each group, whose codes are
// words 2 h % 4 and 2 h % 4 + 1 of the first (h < 2) or second code vector.
#define IQ3_CTRL(h) (IQ_RAMP4(32 * ((h) % 2), 3) | IQ_RAMP4(32 * ((h) % 2) + 16, 3) << 32)

static inline __m512i iq3_steps(__m512i ca, __m512i cb, const __m512i values, __m512i signs, const __m512i x[4]) {
    __m512i acc = _mm512_setzero_si512();
    acc         = iq_step(acc, ca, IQ3_CTRL(0), values, signs, IQ_SEL(0), x[0]);
    acc         = iq_step(acc, ca, IQ3_CTRL(1), values, signs, IQ_SEL(1), x[1]);
    acc         = iq_step(acc, cb, IQ3_CTRL(2), values, signs, IQ_SEL(2), x[2]);
    return iq_step(acc, cb, IQ3_CTRL(3), values, signs, IQ_SEL(3), x[3]);
}

// IQ3_XXS (98 bytes): d, 64 index bytes (8 per group), then per group a
// 32-bit word of 4 x 7 sign bits and the 4-bit scale (bits 28..31).
static inline __m512i iq3xxs_row(const uint8_t * blk, const __m512i x[4], const struct iq_rows_k * k) {
    const __m512i   q    = _mm512_loadu_si512(blk + 2);
    const __mmask64 bit7 = _mm512_movepi8_mask(q);
    const __m512i   lo = lookup256(k->tab, q, bit7), hi = lookup256(k->tab + 4, q, bit7);
    const __m512i   words = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(blk + 66)));
    const __m512i   f     = _mm512_multishift_epi64_epi8(bcast64(IQ_RAMP4(0, 7)), words);
    const __m512i   signs = _mm512_permutex2var_epi8(k->signs8[0], f, k->signs8[1]);
    const __m512i   acc   = iq3_steps(codes_of(lo, hi, 0), codes_of(lo, hi, 1), k->values, signs, x);
    const __m512i   s     = _mm512_shuffle_epi32(_mm512_and_si512(_mm512_srli_epi64(words, 28), _mm512_set1_epi64(15)),
                                                 _MM_SHUFFLE(2, 2, 0, 0));
    return _mm512_mullo_epi32(acc, odd_scale(s));
}

// IQ3_S (110 bytes): d, 64 low index bytes, 8 bytes of ninth index bits
// (bit 8 g + p: point p of group g), 32 sign bytes (4 per group), 4 bytes of
// 4-bit scales (group g: byte g / 2, high nibble for odd g).
static inline __m512i iq3s_row(const uint8_t * blk, const __m512i x[4], const struct iq_rows_k * k) {
    const __m512i q = _mm512_loadu_si512(blk + 2);
    uint64_t      ninth;
    memcpy(&ninth, blk + 66, sizeof ninth);
    const __mmask64 bit7 = _mm512_movepi8_mask(q), bit8 = _cvtu64_mask64(ninth);
    const __m512i   lo = _mm512_mask_blend_epi8(bit8, lookup256(k->tab, q, bit7), lookup256(k->tab + 4, q, bit7));
    const __m512i   hi = _mm512_mask_blend_epi8(bit8, lookup256(k->tab + 8, q, bit7), lookup256(k->tab + 12, q, bit7));
    const __m512i   signs = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(blk + 74)));
    const __m512i   acc   = iq3_steps(codes_of(lo, hi, 0), codes_of(lo, hi, 1), k->values, signs, x);
    uint32_t        sc;
    memcpy(&sc, blk + 106, sizeof sc);
    const __m512i b = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull,
                                                    _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                                    _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)sc)));
    const __m512i s = _mm512_and_si512(_mm512_srlv_epi32(b, _mm512_set4_epi32(4, 4, 0, 0)), _mm512_set1_epi32(15));
    return _mm512_mullo_epi32(acc, odd_scale(s));
}

// IQ1 (points of -1, 0, 1 plus a delta of +-1/8 per 32 or 8 weights; q =
// 8 p + delta with delta = +-1, iq-decode.h), from the tiles' code blocks
// (contract/iq-tiles.h, 3.): the kernels multiply the unsigned u = q + 9
// (0 .. 18: the value permute maps code p + 1 to 8 p + 9, the delta is added
// per point) and take 9 times the activations' sum off: sum q a = sum u a - 9 S.
static inline __m512i iq1_step(__m512i acc, __m512i codes, int h, __m512i delta, __m512i x) {
    const __m512i to_u = _mm512_set1_epi32(1 | 9 << 8 | 17 << 16);  // code 0, 1, 2 (p = -1, 0, 1): 8 p + 9
    const __m512i v    = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(bcast64(IQ2_CTRL(h)), codes), to_u);
    return _mm512_dpbusd_epi32(acc, _mm512_add_epi8(v, delta), x);
}

// The deltas of the 8 points of a step, +1, or -1 in the 64-bit lanes neg names.
static inline __m512i iq1_deltas(__mmask8 neg) {
    return _mm512_mask_blend_epi64(neg, _mm512_set1_epi8(1), _mm512_set1_epi8(-1));
}

// IQ1_S code block (70 bytes): d, 32 codes (lane g: group g's 4), 8 nibbles
// (group g: the scale at bits 0..2, the delta's sign at bit 3).
static inline __m512i iq1s_row(const uint8_t * blk, const struct iq_col * col) {
    const __m512i codes = _mm512_loadu_si512(blk + 2);
    uint32_t      meta;
    memcpy(&meta, blk + 66, sizeof meta);
    const __m512i nib   = _mm512_srlv_epi64(_mm512_set1_epi64(meta), _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28));
    const __m512i delta = iq1_deltas(_mm512_test_epi64_mask(nib, _mm512_set1_epi64(8)));  // lane g: nibble g
    __m512i       acc   = _mm512_setzero_si512();
    for (int h = 0; h < 4; h++) {
        acc = iq1_step(acc, codes, h, delta, col->x[h]);
    }
    const __m512i s = _mm512_shuffle_epi32(_mm512_and_si512(nib, _mm512_set1_epi64(7)), _MM_SHUFFLE(2, 2, 0, 0));
    return _mm512_mullo_epi32(_mm512_sub_epi32(acc, col->s9), odd_scale(s));
}

// IQ1_M code block (76 bytes): 32 codes, the deltas' signs (byte h: step h's
// 8 groups), 4 x 16 bits of scales (two 3-bit fields per group: weights 0..15
// and 16..31) whose top nibbles are d's.
static inline __m512i iq1m_row(const uint8_t * blk, const struct iq_col * col) {
    const __m512i codes = _mm512_loadu_si512(blk);
    uint32_t      neg;
    memcpy(&neg, blk + 64, sizeof neg);
    __m512i acc[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int h = 0; h < 4; h++) {  // step h: point h of each group, the delta its own
        const __m512i delta = iq1_deltas(_cvtu32_mask8((uint8_t)(neg >> (8 * h))));
        acc[h / 2]          = iq1_step(acc[h / 2], codes, h, delta, col->x[h]);
    }
    uint64_t sw;
    memcpy(&sw, blk + 68, sizeof sw);
    const __m512i w     = _mm512_permutexvar_epi16(  // 32-bit lane k: scale word k / 4 (word 8: zero)
        _mm512_setr_epi32(0x80000, 0x80000, 0x80000, 0x80000, 0x80001, 0x80001, 0x80001, 0x80001, 0x80002, 0x80002,
                              0x80002, 0x80002, 0x80003, 0x80003, 0x80003, 0x80003),
        _mm512_zextsi128_si512(_mm_cvtsi64_si128((long long)sw)));
    const __m512i s     = _mm512_srlv_epi32(w, _mm512_set4_epi32(6, 6, 0, 0));
    const __m512i seven = _mm512_set1_epi32(7);
    return _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_sub_epi32(acc[0], col->lo9), odd_scale(_mm512_and_si512(s, seven))),
        _mm512_mullo_epi32(_mm512_sub_epi32(acc[1], col->hi9),
                           odd_scale(_mm512_and_si512(_mm512_srli_epi32(s, 3), seven))));
}

// Lanes 0..7: the sums of a's lane pairs; lanes 8..15: b's.
static inline __m512i pair_sums(__m512i a, __m512i b) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd  = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    return _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b), _mm512_permutex2var_epi32(a, odd, b));
}

static inline __attribute__((always_inline)) __m512i iq_row(uint32_t type, const uint8_t * blk,
                                                            const struct iq_col * col, const struct iq_rows_k * k) {
    switch (type) {
        case HTP_TYPE_IQ2_XXS:
            return iq2xxs_row(blk, col->x, k);
        case HTP_TYPE_IQ2_XS:
            return iq2xs_row(blk, col->x, k);
        case HTP_TYPE_IQ2_S:
            return iq2s_row(blk, col->x, k);
        case HTP_TYPE_IQ3_XXS:
            return iq3xxs_row(blk, col->x, k);
        case HTP_TYPE_IQ3_S:
            return iq3s_row(blk, col->x, k);
        case HTP_TYPE_IQ1_S:
            return iq1s_row(blk, col);
        default:
            return iq1m_row(blk, col);
    }
}

// The fp16 bits of a block's d (IQ1_M: the top nibbles of its scale words).
static inline uint16_t iq_dbits(uint32_t type, const uint8_t * blk) {
    uint16_t h[4];
    if (type != HTP_TYPE_IQ1_M) {
        memcpy(h, blk, sizeof h[0]);
        return h[0];
    }
    memcpy(h, blk + 68, sizeof h);
    return (uint16_t)(h[0] >> 12 | (h[1] >> 12) << 4 | (h[2] >> 12) << 8 | (h[3] >> 12) << 12);
}

// The tile loop of one type (type and unit constant where it is inlined).
static inline __attribute__((always_inline)) void iq_rows_run(uint32_t type, float unit, const struct iq_rows_k * k,
                                                              const uint8_t * base, size_t row_stride,
                                                              size_t blk_stride, int nrows, int64_t nsb,
                                                              const struct htp_q8k_block * a, float out[16]) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nsb; b++) {
        struct iq_col col;
        iq_rows_acts(a[b].qs, col.x);
        if (type == HTP_TYPE_IQ1_S || type == HTP_TYPE_IQ1_M) {
            const __m512i nine = _mm512_set1_epi8(9);  // 9 times the sums of 4
            __m512i       s9[4];
            for (int h = 0; h < 4; h++) {
                s9[h] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), nine, col.x[h]);
            }
            col.lo9 = _mm512_add_epi32(s9[0], s9[1]);
            col.hi9 = _mm512_add_epi32(s9[2], s9[3]);
            col.s9  = _mm512_add_epi32(col.lo9, col.hi9);
        }
        uint16_t dh[16];
        __m512i  quad[4];
        for (int q4 = 0; q4 < 4; q4++) {
            __m512i v[4];
            for (int i = 0; i < 4; i++) {
                const int r = 4 * q4 + i;
                if (r < nrows) {
                    const uint8_t * blk = base + (size_t)r * row_stride + (size_t)b * blk_stride;
                    dh[r]               = iq_dbits(type, blk);
                    v[i]                = iq_row(type, blk, &col, k);
                } else {
                    dh[r] = 0;
                    v[i]  = _mm512_setzero_si512();
                }
            }
            quad[q4] = pair_sums(pair_sums(v[0], v[1]), pair_sums(v[2], v[3]));  // 4 lanes a row
        }
        const __m512i tot = pair_sums(pair_sums(quad[0], quad[1]), pair_sums(quad[2], quad[3]));  // lane r: row r
        const __m512  d =
            _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)dh)), _mm512_set1_ps(unit));
        const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(a[b].d));
        acc             = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(tot), dd));
    }
    _mm512_storeu_ps(out, acc);
}

static void load_tables(__m512i * t, const void * table, int n) {
    for (int i = 0; i < n; i++) {
        t[i] = _mm512_loadu_si512((const uint8_t *)table + 64 * i);
    }
}

// Byte tables of n registers each: the codes' low bytes, then their high bytes.
static void load_byte_tables(struct iq_rows_k * k, const uint8_t * lo, const uint8_t * hi, int n) {
    load_tables(k->tab, lo, n);
    load_tables(k->tab + n, hi, n);
}

int htp_iq_dot_rows(uint32_t type, const struct htp_iq_codes * codes, const uint8_t * base, size_t row_stride,
                    size_t blk_stride, int nrows, int64_t nsb, const struct htp_q8k_block * a, float out[16]) {
    struct iq_rows_k k;
    load_tables(k.signs8, codes->signs8, 2);
    k.values = iq2_values_table();
    switch (type) {
        case HTP_TYPE_IQ2_XXS:
            load_byte_tables(&k, codes->iq2xxs_lo, codes->iq2xxs_hi, 4);
            iq_rows_run(HTP_TYPE_IQ2_XXS, 0.125f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        case HTP_TYPE_IQ2_XS:
            load_tables(k.tab, codes->iq2xs, 16);
            iq_rows_run(HTP_TYPE_IQ2_XS, 0.125f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        case HTP_TYPE_IQ2_S:
            iq_rows_run(HTP_TYPE_IQ2_S, 0.125f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        case HTP_TYPE_IQ3_XXS:
            load_byte_tables(&k, codes->iq3xxs_lo, codes->iq3xxs_hi, 4);
            k.values = bcast64(0x3e342c241c140c04ull);  // 4, 12, .., 52, 62
            iq_rows_run(HTP_TYPE_IQ3_XXS, 0.25f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        case HTP_TYPE_IQ3_S:
            load_byte_tables(&k, codes->iq3s_lo, codes->iq3s_hi, 8);
            k.values = bcast64(IQ_RAMP8(1, 2));  // 1, 3, .., 15
            iq_rows_run(HTP_TYPE_IQ3_S, 1.0f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        case HTP_TYPE_IQ1_S:
            iq_rows_run(HTP_TYPE_IQ1_S, 0.125f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        case HTP_TYPE_IQ1_M:
            iq_rows_run(HTP_TYPE_IQ1_M, 0.125f, &k, base, row_stride, blk_stride, nrows, nsb, a, out);
            return 1;
        default:
            return 0;
    }
}

#else

int htp_iq_dot_rows(uint32_t type, const struct htp_iq_codes * codes, const uint8_t * base, size_t row_stride,
                    size_t blk_stride, int nrows, int64_t nsb, const struct htp_q8k_block * a, float out[16]) {
    (void)type;
    (void)codes;
    (void)base;
    (void)row_stride;
    (void)blk_stride;
    (void)nrows;
    (void)nsb;
    (void)a;
    (void)out;
    return 0;
}

#endif
