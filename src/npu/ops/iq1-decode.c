// iq1-decode.c: IQ1_S and IQ1_M super-blocks into struct htp_iq_superblock
// (formats: iq1-decode.h). Exactness: ggml forms each weight as
// (d * (2 s + 1)) * (point + delta) with point + delta in {+-1/8, +-7/8,
// +-9/8}, exact in fp32, so one rounding in d * scale and one in the
// product. With d / 8 (exact: d is an fp16 value, IQ1_M's assembled from its
// four nibbles bit for bit) and q = 8 point + 8 delta, an odd integer,
// (d / 8) * (2 s + 1) * q rounds at the same two places to the same values
// scaled by the exact 1/8.
//
// The AVX-512 variants form the indices of 8 groups in 32-bit lanes, gather
// their 8-byte points (one 64-byte vector per 64 weights) and form
// 8 point +- 1 on bytes; the scales are the portable code's.

#include "iq1-decode.h"

#include <string.h>

#include "fp16.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define IQ1_AVX512 1
#include <immintrin.h>
#endif

static uint16_t load16(const uint8_t * p) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

// The decoded groups of a super-block: 32 indices into iq1s and, per group,
// whether its delta is -1/8.
struct iq1_groups {
    uint16_t index[32];
    uint32_t neg;  // bit g: group g's delta is negative
};

static void iq1s_scales(const uint8_t * block, struct htp_iq_superblock * x) {
    x->d = htp_fp16_to_fp32(load16(block)) * 0.125f;
    for (int j = 0; j < 8; j++) {
        const uint8_t sc = (uint8_t)(2 * ((load16(block + 34 + 2 * j) >> 12) & 7) + 1);
        x->sc[2 * j]     = sc;
        x->sc[2 * j + 1] = sc;
    }
}

static void iq1s_groups(const uint8_t * block, struct iq1_groups * gr) {
    gr->neg = 0;
    for (int j = 0; j < 8; j++) {
        const uint16_t w = load16(block + 34 + 2 * j);
        for (int l = 0; l < 4; l++) {
            gr->index[4 * j + l] = (uint16_t)(block[2 + 4 * j + l] | ((w >> (3 * l)) & 7) << 8);
        }
        gr->neg |= (uint32_t)(w >> 15) * (0xfu << (4 * j));
    }
}

// IQ1_M's scales and d from its four scale words (at +48 of ggml's block, +68 of a code block).
static void iq1m_scales(const uint8_t * words, struct htp_iq_superblock * x) {
    uint16_t sw[4];
    for (int i = 0; i < 4; i++) {
        sw[i] = load16(words + 2 * i);
    }
    const uint16_t dbits = (uint16_t)(sw[0] >> 12 | (sw[1] >> 12) << 4 | (sw[2] >> 12) << 8 | (sw[3] >> 12) << 12);
    x->d                 = htp_fp16_to_fp32(dbits) * 0.125f;
    for (int j = 0; j < 8; j++) {
        const int s      = sw[j / 2] >> (6 * (j % 2));
        x->sc[2 * j]     = (uint8_t)(2 * (s & 7) + 1);
        x->sc[2 * j + 1] = (uint8_t)(2 * ((s >> 3) & 7) + 1);
    }
}

static void iq1m_groups(const uint8_t * block, struct iq1_groups * gr) {
    uint32_t neg = 0;
    for (int h = 0; h < 16; h++) {  // high[h]: groups 2 h (low nibble) and 2 h + 1
        const uint32_t nib2  = block[32 + h];
        gr->index[2 * h]     = (uint16_t)(block[2 * h] | (nib2 & 7) << 8);
        gr->index[2 * h + 1] = (uint16_t)(block[2 * h + 1] | (nib2 & 0x70) << 4);
        neg |= ((nib2 >> 3 & 1) | (nib2 >> 6 & 2)) << (2 * h);
    }
    gr->neg = neg;
}

// 8 point +- 1 of a point's 8 bytes p (-1, 0, 1 each) at once: 8 p has its
// low 3 bits clear, so 8 p + 1 is 8 p | 1 per byte; 8 p - 1 is 8 p + 1 with
// bits 1..3 flipped, and bits 4..7 too where p = 0 (1 -> -1), no byte
// carrying into the next.
static uint64_t iq1_weights8(uint64_t p, uint32_t negative) {
    const uint64_t ones = 0x0101010101010101ull;
    const uint64_t plus = ((p << 3) & (0xf8 * ones)) | ones;
    const uint64_t flip = (0x0e * ones) | ((~p & ones) * 0xf0);
    return plus ^ (flip & (0 - (uint64_t)negative));  // no branch: the deltas' signs are data
}

static void iq1_points_ref(const struct htp_codebooks * cb, const struct iq1_groups * gr,
                           struct htp_iq_superblock * x) {
    for (int g = 0; g < 32; g++) {
        uint64_t p;
        memcpy(&p, cb->iq1s[gr->index[g]], sizeof p);
        p = iq1_weights8(p, (gr->neg >> g) & 1);
        memcpy(x->q + 8 * g, &p, sizeof p);
    }
}

void htp_iq1s_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    struct iq1_groups gr;
    iq1s_scales(block, x);
    iq1s_groups(block, &gr);
    iq1_points_ref(cb, &gr, x);
}

void htp_iq1m_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    struct iq1_groups gr;
    iq1m_scales(block + 48, x);
    iq1m_groups(block, &gr);
    iq1_points_ref(cb, &gr, x);
}

#ifdef IQ1_AVX512
// 8 gathered points (groups 8 k .. 8 k + 7) -> 64 weights 8 point +- 1, the
// delta negative in the groups neg8 names.
static void iq1_store8(int8_t * q, const struct htp_codebooks * cb, __m256i index, __mmask8 neg8) {
    const __m512i p  = _mm512_i32gather_epi64(index, (const void *)cb->iq1s, 8);
    const __m512i p8 = _mm512_and_si512(_mm512_slli_epi16(p, 3), _mm512_set1_epi8((char)0xf8));  // -8, 0, 8
    const __m512i d  = _mm512_mask_blend_epi64(neg8, _mm512_set1_epi8(1), _mm512_set1_epi8(-1));
    _mm512_storeu_si512((void *)q, _mm512_add_epi8(p8, d));
}

static __m256i load8_u8(const uint8_t * p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

// IQ1_S: per 8 groups, words 2 k and 2 k + 1 give the high index bits (3 per
// group) and the deltas' signs (bit 15).
static void iq1s_decode_avx512(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    iq1s_scales(block, x);
    const __m256i word_of  = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const __m256i shift_of = _mm256_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9);
    for (int k = 0; k < 4; k++) {
        uint32_t w2;
        memcpy(&w2, block + 34 + 4 * k, sizeof w2);
        const __m256i  words = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(_mm_cvtsi32_si128((int)w2)), word_of);
        const __m256i  hi    = _mm256_and_si256(_mm256_srlv_epi32(words, shift_of), _mm256_set1_epi32(7));
        const __m256i  index = _mm256_or_si256(load8_u8(block + 2 + 8 * k), _mm256_slli_epi32(hi, 8));
        const __mmask8 neg8  = (__mmask8)((w2 >> 15 & 1) * 0x0f | (w2 >> 31) * 0xf0);
        iq1_store8(x->q + 64 * k, cb, index, neg8);
    }
}

// IQ1_M: per 8 groups, bytes 4 k .. 4 k + 3 of high hold a nibble each.
static void iq1m_decode_avx512(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    iq1m_scales(block + 48, x);
    const __m256i byte_of  = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    const __m256i shift_of = _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4);
    for (int k = 0; k < 4; k++) {
        uint32_t h4;
        memcpy(&h4, block + 32 + 4 * k, sizeof h4);
        const __m256i  bytes = _mm256_permutevar8x32_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi32_si128((int)h4)), byte_of);
        const __m256i  nib   = _mm256_srlv_epi32(bytes, shift_of);
        const __m256i  hi    = _mm256_and_si256(nib, _mm256_set1_epi32(7));
        const __m256i  index = _mm256_or_si256(load8_u8(block + 8 * k), _mm256_slli_epi32(hi, 8));
        const __mmask8 neg8  = _mm256_test_epi32_mask(nib, _mm256_set1_epi32(8));
        iq1_store8(x->q + 64 * k, cb, index, neg8);
    }
}
#endif

// --- code blocks (the tiles' form, contract/iq-tiles.h): no codebook ---

// 8 point + delta of a point's code (coordinate j + 1 at bits 2 j): byte j
// of the result is 8 (field j - 1) + 1, less 2 where the delta is negative.
static uint64_t iq1_code_weights8(uint16_t code, uint32_t negative) {
    uint64_t v = 0;
    for (int j = 0; j < 8; j++) {
        const int q = 8 * (((code >> (2 * j)) & 3) - 1) + (negative ? -1 : 1);
        v |= (uint64_t)(uint8_t)q << (8 * j);
    }
    return v;
}

void htp_iq1s_code_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    (void)cb;
    x->d = htp_fp16_to_fp32(load16(block)) * 0.125f;
    for (int g = 0; g < 8; g++) {
        const uint32_t nib = (uint32_t)(block[66 + g / 2] >> (4 * (g % 2))) & 15;
        x->sc[2 * g]       = (uint8_t)(2 * (nib & 7) + 1);
        x->sc[2 * g + 1]   = x->sc[2 * g];
        for (int l = 0; l < 4; l++) {
            const int      p = 4 * g + l;
            const uint64_t w = iq1_code_weights8(load16(block + 2 + 2 * p), nib >> 3);
            memcpy(x->q + 8 * p, &w, sizeof w);
        }
    }
}

void htp_iq1m_code_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    (void)cb;
    iq1m_scales(block + 68, x);
    uint32_t neg;
    memcpy(&neg, block + 64, sizeof neg);
    for (int p = 0; p < 32; p++) {
        const uint64_t w = iq1_code_weights8(load16(block + 2 * p), (neg >> (8 * (p % 4) + p / 4)) & 1);
        memcpy(x->q + 8 * p, &w, sizeof w);
    }
}

#if defined(IQ1_AVX512) && defined(__AVX512VBMI__)
#define IQ1_CODES_AVX512 1
// The 64 weights of points 8 k .. 8 k + 7 (their codes, 16 bytes at codes):
// one code a 64-bit lane, field j to byte j by a bit-field shuffle, to 8 (field - 1)
// by a byte permute, plus the points' deltas (-1 in the lanes neg8 names, else +1).
static void iq1_codes_store8(int8_t * q, const uint8_t * codes, __mmask8 neg8) {
    const __m512i w     = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)codes));
    const __m512i ramp  = _mm512_set1_epi64(0x0e0c0a0806040200ll);  // byte j: bit 2 j
    const __m512i eight = _mm512_set1_epi32(0x0800f8);  // field 0, 1, 2: -8, 0, 8 (by the low 6 bits: period 4)
    const __m512i v     = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(ramp, w), eight);
    const __m512i d     = _mm512_mask_blend_epi64(neg8, _mm512_set1_epi8(1), _mm512_set1_epi8(-1));
    _mm512_storeu_si512((void *)q, _mm512_add_epi8(v, d));
}

static void iq1s_code_decode_avx512(const uint8_t * block, struct htp_iq_superblock * x) {
    x->d = htp_fp16_to_fp32(load16(block)) * 0.125f;
    for (int k = 0; k < 4; k++) {  // groups 2 k and 2 k + 1: byte 66 + k
        const uint32_t m = block[66 + k];
        x->sc[4 * k] = x->sc[4 * k + 1] = (uint8_t)(2 * (m & 7) + 1);
        x->sc[4 * k + 2] = x->sc[4 * k + 3] = (uint8_t)(2 * ((m >> 4) & 7) + 1);
        iq1_codes_store8(x->q + 64 * k, block + 2 + 16 * k, (__mmask8)((m >> 3 & 1) * 0x0f | (m >> 7) * 0xf0));
    }
}

static void iq1m_code_decode_avx512(const uint8_t * block, struct htp_iq_superblock * x) {
    iq1m_scales(block + 68, x);
    uint32_t neg;
    memcpy(&neg, block + 64, sizeof neg);
    for (int k = 0; k < 4; k++) {  // point 8 k + i is (group 2 k + i / 4, step i % 4): bit 8 (i % 4) + 2 k + i / 4
        uint32_t m = 0;
        for (int i = 0; i < 8; i++) {
            m |= (neg >> (8 * (i % 4) + 2 * k + i / 4) & 1) << i;
        }
        iq1_codes_store8(x->q + 64 * k, block + 16 * k, (__mmask8)m);
    }
}
#endif

void htp_iq1s_code_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ1_CODES_AVX512
    (void)cb;
    iq1s_code_decode_avx512(block, x);
#else
    htp_iq1s_code_decode_ref(block, cb, x);
#endif
}

void htp_iq1m_code_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ1_CODES_AVX512
    (void)cb;
    iq1m_code_decode_avx512(block, x);
#else
    htp_iq1m_code_decode_ref(block, cb, x);
#endif
}

void htp_iq1s_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ1_AVX512
    iq1s_decode_avx512(block, cb, x);
#else
    htp_iq1s_decode_ref(block, cb, x);
#endif
}

void htp_iq1m_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ1_AVX512
    iq1m_decode_avx512(block, cb, x);
#else
    htp_iq1m_decode_ref(block, cb, x);
#endif
}
