// iq1-decode.c: IQ1_S and IQ1_M super-blocks into struct htp_iq_superblock
// (formats: iq1-decode.h). Exactness: ggml forms each weight as
// (d * (2 s + 1)) * (point + delta) with point + delta in {+-1/8, +-7/8,
// +-9/8}, exact in fp32, so one rounding in d * scale and one in the
// product. With d / 8 (exact: d is an fp16 value, IQ1_M's assembled from its
// four nibbles bit for bit) and q = 8 point + 8 delta, an odd integer,
// (d / 8) * (2 s + 1) * q rounds at the same two places to the same values
// scaled by the exact 1/8.
//
// The AVX-512 variants gather the 8-byte points 8 at a time, one 64-byte
// vector per 64 weights, and form 8 point +- 1 on bytes; the indices, scales
// and delta masks are the portable code's integers.

#include "iq1-decode.h"

#include <string.h>

#include "fp16.h"

#if defined(__AVX512F__) && defined(__AVX512BW__)
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

static void iq1s_head(const uint8_t * block, struct htp_iq_superblock * x, struct iq1_groups * gr) {
    x->d    = htp_fp16_to_fp32(load16(block)) * 0.125f;
    gr->neg = 0;
    for (int j = 0; j < 8; j++) {
        const uint16_t w  = load16(block + 34 + 2 * j);
        const uint8_t  sc = (uint8_t)(2 * ((w >> 12) & 7) + 1);
        x->sc[2 * j]      = sc;
        x->sc[2 * j + 1]  = sc;
        for (int l = 0; l < 4; l++) {
            gr->index[4 * j + l] = (uint16_t)(block[2 + 4 * j + l] | ((w >> (3 * l)) & 7) << 8);
        }
        gr->neg |= (uint32_t)(w >> 15) * (0xfu << (4 * j));
    }
}

static void iq1m_head(const uint8_t * block, struct htp_iq_superblock * x, struct iq1_groups * gr) {
    uint16_t sw[4];
    for (int i = 0; i < 4; i++) {
        sw[i] = load16(block + 48 + 2 * i);
    }
    const uint16_t dbits = (uint16_t)(sw[0] >> 12 | (sw[1] >> 12) << 4 | (sw[2] >> 12) << 8 | (sw[3] >> 12) << 12);
    x->d                 = htp_fp16_to_fp32(dbits) * 0.125f;
    for (int j = 0; j < 8; j++) {
        const int s      = sw[j / 2] >> (6 * (j % 2));
        x->sc[2 * j]     = (uint8_t)(2 * (s & 7) + 1);
        x->sc[2 * j + 1] = (uint8_t)(2 * ((s >> 3) & 7) + 1);
    }
    gr->neg = 0;
    for (int g = 0; g < 32; g++) {
        const int nib = block[32 + g / 2] >> (4 * (g % 2));
        gr->index[g]  = (uint16_t)(block[g] | (nib & 7) << 8);
        gr->neg |= (uint32_t)((nib >> 3) & 1) << g;
    }
}

static void iq1_points_ref(const struct htp_codebooks * cb, const struct iq1_groups * gr,
                           struct htp_iq_superblock * x) {
    for (int g = 0; g < 32; g++) {
        const int8_t * point = cb->iq1s[gr->index[g]];
        const int      delta = (gr->neg >> g) & 1 ? -1 : 1;
        for (int j = 0; j < 8; j++) {
            x->q[8 * g + j] = (int8_t)(8 * point[j] + delta);
        }
    }
}

void htp_iq1s_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    struct iq1_groups gr;
    iq1s_head(block, x, &gr);
    iq1_points_ref(cb, &gr, x);
}

void htp_iq1m_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    struct iq1_groups gr;
    iq1m_head(block, x, &gr);
    iq1_points_ref(cb, &gr, x);
}

#ifdef IQ1_AVX512
// Each byte of 8-bit mask m spread over its 8 bytes (for 8 groups of 8 weights).
static __mmask64 spread8(uint32_t m) {
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) {
        r |= (uint64_t)((m >> i) & 1) * (0xffull << (8 * i));
    }
    return (__mmask64)r;
}

static void iq1_points_avx512(const struct htp_codebooks * cb, const struct iq1_groups * gr,
                              struct htp_iq_superblock * x) {
    const __m512i one  = _mm512_set1_epi8(1);
    const __m512i two  = _mm512_set1_epi8(2);
    const __m512i high = _mm512_set1_epi8((char)0xf8);  // a byte's bits after << 3
    for (int k = 0; k < 4; k++) {                       // groups 8 k .. 8 k + 7, weights 64 k .. 64 k + 63
        const __m256i index =
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(gr->index + 8 * k)));
        const __m512i p  = _mm512_i32gather_epi64(index, (const void *)cb->iq1s, 8);
        const __m512i p8 = _mm512_and_si512(_mm512_slli_epi16(p, 3), high);  // 8 point: -8, 0, 8
        const __m512i q  = _mm512_add_epi8(p8, one);
        _mm512_storeu_si512((void *)(x->q + 64 * k), _mm512_mask_sub_epi8(q, spread8(gr->neg >> (8 * k)), q, two));
    }
}

static void iq1s_decode_avx512(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    struct iq1_groups gr;
    iq1s_head(block, x, &gr);
    iq1_points_avx512(cb, &gr, x);
}

static void iq1m_decode_avx512(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    struct iq1_groups gr;
    iq1m_head(block, x, &gr);
    iq1_points_avx512(cb, &gr, x);
}
#endif

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
