// iq3-decode.c: IQ3_XXS and IQ3_S super-blocks into struct htp_iq_superblock
// (formats: iq3-decode.h). Exactness: ggml forms each weight as
// (d * (s + 1/2)) / 2 * point * sign (IQ3_XXS) or (d * (2 s + 1)) * point *
// sign (IQ3_S), with one rounding in d * scale and one in the product with
// the point; the powers of two in between are exact (d is an fp16 value, so
// no product leaves fp32's normal range) and a sign flip commutes with
// round-to-nearest. (d / 4) * (2 s + 1) * (+-point) rounds at the same two
// places to the same values.
//
// The AVX-512 variants gather the 4-byte points 16 at a time, one 64-byte
// vector per 64 weights, and negate the weights a 64-bit mask of signs
// names (IQ3_XXS's expanded from its 7-bit fields in vector lanes); the
// scales are the portable code's.

#include "iq3-decode.h"

#include <string.h>

#include "fp16.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define IQ3_AVX512 1
#include <immintrin.h>
#endif

static uint32_t load32(const uint8_t * p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static float load_d(const uint8_t * p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return htp_fp16_to_fp32(h);
}

// IQ3_XXS: the 32 sign bits of word w's weights (bit i: weight 32 w + i).
static uint32_t iq3xxs_signs32(uint32_t word) {
    uint32_t s = 0;
    for (int l = 0; l < 4; l++) {
        s |= (uint32_t)htp_iq_signs8(word >> (7 * l)) << (8 * l);
    }
    return s;
}

static void iq3xxs_scales(const uint8_t * block, struct htp_iq_superblock * x) {
    x->d = load_d(block) * 0.25f;
    for (int w = 0; w < 8; w++) {
        const uint8_t sc = (uint8_t)(2 * (load32(block + 66 + 4 * w) >> 28) + 1);
        x->sc[2 * w]     = sc;
        x->sc[2 * w + 1] = sc;
    }
}

// The 4 weights of a point (its bytes, little-endian) with the ones sign
// bits 0..3 name negated: -v = (v ^ 0xff) + 1 per byte, no carry across
// bytes since no coordinate is 0.
static uint32_t signed_point(const uint8_t * point, uint32_t signs4) {
    static const uint32_t byte_masks[16] = {
        0x00000000, 0x000000ff, 0x0000ff00, 0x0000ffff, 0x00ff0000, 0x00ff00ff, 0x00ffff00, 0x00ffffff,
        0xff000000, 0xff0000ff, 0xff00ff00, 0xff00ffff, 0xffff0000, 0xffff00ff, 0xffffff00, 0xffffffff,
    };
    const uint32_t m = byte_masks[signs4 & 15];
    return (load32(point) ^ m) + (m & 0x01010101u);
}

static void store32(int8_t * q, uint32_t v) {
    memcpy(q, &v, sizeof v);
}

void htp_iq3xxs_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    iq3xxs_scales(block, x);
    for (int w = 0; w < 8; w++) {
        const uint32_t signs = iq3xxs_signs32(load32(block + 66 + 4 * w));
        for (int g = 0; g < 8; g++) {
            store32(x->q + 32 * w + 4 * g, signed_point(cb->iq3xxs[block[2 + 8 * w + g]], signs >> (4 * g)));
        }
    }
}

static void iq3s_scales(const uint8_t * block, struct htp_iq_superblock * x) {
    x->d = load_d(block);
    for (int j = 0; j < 8; j++) {
        const uint8_t b  = block[106 + j / 2];
        const uint8_t sc = (uint8_t)(2 * (j % 2 ? b >> 4 : b & 15) + 1);
        x->sc[2 * j]     = sc;
        x->sc[2 * j + 1] = sc;
    }
}

void htp_iq3s_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    iq3s_scales(block, x);
    for (int j = 0; j < 8; j++) {  // weights 32 j .. 32 j + 31
        const uint32_t ninth = block[66 + j];
        uint32_t       signs = load32(block + 74 + 4 * j);
        for (int g = 8 * j; g < 8 * j + 8; g++, signs >>= 4) {
            const int index = block[2 + g] | ((ninth >> (g % 8)) & 1) << 8;
            store32(x->q + 4 * g, signed_point(cb->iq3s[index], signs));
        }
    }
}

#ifdef IQ3_AVX512
// 16 points of 4 bytes, table[index[i]] for the 16 indices, as 64 bytes.
static __m512i gather16(const uint8_t (*table)[4], __m512i index) {
    return _mm512_i32gather_epi32(index, (const void *)table, 4);
}

// iq3xxs_signs32 of the two words at p, in 8 lanes: the 7-bit fields, their
// parity as bit 7, narrowed to the 8 bytes of a 64-bit mask.
static __mmask64 iq3xxs_signs64_avx512(const uint8_t * p) {
    const __m256i words =
        _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(const void *)p)),
                                    _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
    const __m256i f   = _mm256_and_si256(_mm256_srlv_epi32(words, _mm256_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21)),
                                         _mm256_set1_epi32(127));
    __m256i       par = _mm256_xor_si256(f, _mm256_srli_epi32(f, 4));
    par               = _mm256_xor_si256(par, _mm256_srli_epi32(par, 2));
    par               = _mm256_xor_si256(par, _mm256_srli_epi32(par, 1));
    const __m256i b   = _mm256_or_si256(f, _mm256_slli_epi32(_mm256_and_si256(par, _mm256_set1_epi32(1)), 7));
    return (__mmask64)_mm_cvtsi128_si64(_mm256_cvtepi32_epi8(b));
}

static void iq3xxs_decode_avx512(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    iq3xxs_scales(block, x);
    const __m512i zero = _mm512_setzero_si512();
    for (int k = 0; k < 4; k++) {  // weights 64 k .. 64 k + 63: words 2 k, 2 k + 1
        const __m512i index =
            _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(block + 2 + 16 * k)));
        const __m512i   v   = gather16(cb->iq3xxs, index);
        const __mmask64 neg = iq3xxs_signs64_avx512(block + 66 + 8 * k);
        _mm512_storeu_si512((void *)(x->q + 64 * k), _mm512_mask_sub_epi8(v, neg, zero, v));
    }
}

static void iq3s_decode_avx512(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    iq3s_scales(block, x);
    const __m512i zero  = _mm512_setzero_si512();
    const __m512i ninth = _mm512_set1_epi32(256);
    for (int k = 0; k < 4; k++) {  // groups 16 k .. 16 k + 15, weights 64 k .. 64 k + 63
        const __m512i   lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(block + 2 + 16 * k)));
        const __mmask16 hi = (__mmask16)(block[66 + 2 * k] | block[67 + 2 * k] << 8);
        const __m512i   v  = gather16(cb->iq3s, _mm512_mask_or_epi32(lo, hi, lo, ninth));
        uint64_t        signs;
        memcpy(&signs, block + 74 + 8 * k, sizeof signs);
        _mm512_storeu_si512((void *)(x->q + 64 * k), _mm512_mask_sub_epi8(v, (__mmask64)signs, zero, v));
    }
}
#endif

void htp_iq3xxs_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ3_AVX512
    iq3xxs_decode_avx512(block, cb, x);
#else
    htp_iq3xxs_decode_ref(block, cb, x);
#endif
}

void htp_iq3s_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ3_AVX512
    iq3s_decode_avx512(block, cb, x);
#else
    htp_iq3s_decode_ref(block, cb, x);
#endif
}
