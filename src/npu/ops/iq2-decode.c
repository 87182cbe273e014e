// iq2-decode.c: the decoders of IQ2_XXS, IQ2_XS and IQ2_S (iq-decode.h).
//
// All three code 8 weights at a time as a point of a codebook whose
// coordinates are 8, 25 or 43 (contract/codebooks.h), a sign per weight and a
// 4-bit scale l per 32 (IQ2_XXS) or 16 (IQ2_XS, IQ2_S) weights; ggml's weight
// is fp16 d * (l + 1/2) / 4 * coordinate * sign = (d / 8) * (2 l + 1) * (+-coordinate),
// so sc = 2 l + 1 and the decoded d is d / 8 (a power of two: exact).
//
//   IQ2_XXS (66 bytes)  d, then per 32 weights 8 bytes: 4 index bytes (one
//                       per 8 weights), then a 32-bit word of 4 x 7 stored
//                       sign bits (htp_iq_signs8) and the scale in bits 28..31
//   IQ2_XS  (74 bytes)  d, 32 x 16-bit: 9-bit index, 7 stored sign bits; then
//                       8 scale bytes (low nibble: first 16 of the 32, high: last 16)
//   IQ2_S   (82 bytes)  d, 32 index bytes (low 8 bits), 32 sign bytes (all 8
//                       signs stored), 8 bytes of high index bits (2 per 8
//                       weights, from bit 0 up), 8 scale bytes as IQ2_XS's;
//                       in tiles a code block of 106 bytes instead
//                       (contract/iq-tiles.h), htp_iq2s_code_decode's

#include <string.h>

#include "fp16.h"
#include "iq-decode.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__)
#define IQ2S_CODES_AVX512 1
#include <immintrin.h>
#endif

static inline uint16_t iq_rd16(const uint8_t * p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t iq_rd32(const uint8_t * p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// 8 weights of point p (coordinates 8, 25 or 43, unsigned) with signs (bit
// j: weight j negative), 8 bytes at a time: byte j of the mask m is 0xff
// where bit j is set (the replicated byte keeps bit j in byte j; adding 0x7f
// carries a set bit into bit 7), and (p ^ m) + (m & 1) negates those bytes
// (no carry between bytes: every coordinate is at least 1).
static inline void iq_put8(int8_t * q, const uint8_t p[8], uint32_t signs) {
    uint64_t g, t = ((uint64_t)(signs & 0xff) * 0x0101010101010101ull) & 0x8040201008040201ull;
    memcpy(&g, p, 8);
    t                  = ((t + 0x7f7f7f7f7f7f7f7full) | t) & 0x8080808080808080ull;
    const uint64_t m   = (t >> 7) * 0xff;
    const uint64_t out = (g ^ m) + (m & 0x0101010101010101ull);
    memcpy(q, &out, 8);
}

void htp_iq2xxs_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    x->d               = htp_fp16_to_fp32(iq_rd16(block)) * 0.125f;
    const uint8_t * qs = block + 2;
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t * g   = qs + 8 * ib;
        const uint32_t  aux = iq_rd32(g + 4);
        const uint8_t   sc  = (uint8_t)(2 * (aux >> 28) + 1);
        x->sc[2 * ib]       = sc;
        x->sc[2 * ib + 1]   = sc;
        for (int l = 0; l < 4; l++) {
            iq_put8(x->q + 32 * ib + 8 * l, cb->iq2xxs[g[l]], htp_iq_signs8(aux >> (7 * l)));
        }
    }
}

void htp_iq2xs_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    x->d                   = htp_fp16_to_fp32(iq_rd16(block)) * 0.125f;
    const uint8_t * qs     = block + 2;
    const uint8_t * scales = block + 2 + 64;
    for (int ib = 0; ib < 8; ib++) {
        x->sc[2 * ib]     = (uint8_t)(2 * (scales[ib] & 15) + 1);
        x->sc[2 * ib + 1] = (uint8_t)(2 * (scales[ib] >> 4) + 1);
        for (int l = 0; l < 4; l++) {
            const uint16_t v = iq_rd16(qs + 2 * (4 * ib + l));
            iq_put8(x->q + 32 * ib + 8 * l, cb->iq2xs[v & 511], htp_iq_signs8(v >> 9));
        }
    }
}

void htp_iq2s_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    x->d                   = htp_fp16_to_fp32(iq_rd16(block)) * 0.125f;
    const uint8_t * lo     = block + 2;
    const uint8_t * signs  = block + 2 + 32;
    const uint8_t * hi     = block + 2 + 64;
    const uint8_t * scales = block + 2 + 64 + 8;
    for (int ib = 0; ib < 8; ib++) {
        x->sc[2 * ib]     = (uint8_t)(2 * (scales[ib] & 15) + 1);
        x->sc[2 * ib + 1] = (uint8_t)(2 * (scales[ib] >> 4) + 1);
        for (int l = 0; l < 4; l++) {
            const uint32_t idx = lo[4 * ib + l] | (((uint32_t)hi[ib] >> (2 * l)) & 3) << 8;
            iq_put8(x->q + 32 * ib + 8 * l, cb->iq2s[idx], signs[4 * ib + l]);
        }
    }
}

// A tile's IQ2_S code block (contract/iq-tiles.h: d, 32 codes, the 32 sign
// bytes, the 8 scale bytes): each code's fields pick 8, 25 or 43.
static void iq2s_code_scales(const uint8_t * block, struct htp_iq_superblock * x) {
    x->d                   = htp_fp16_to_fp32(iq_rd16(block)) * 0.125f;
    const uint8_t * scales = block + 98;
    for (int ib = 0; ib < 8; ib++) {
        x->sc[2 * ib]     = (uint8_t)(2 * (scales[ib] & 15) + 1);
        x->sc[2 * ib + 1] = (uint8_t)(2 * (scales[ib] >> 4) + 1);
    }
}

void htp_iq2s_code_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
    (void)cb;
    static const uint8_t values[4] = {8, 25, 43, 43};  // field 3: never written by pack
    const uint8_t *      signs     = block + 66;
    iq2s_code_scales(block, x);
    for (int p = 0; p < 32; p++) {
        const uint16_t code = iq_rd16(block + 2 + 2 * p);
        uint8_t        point[8];
        for (int j = 0; j < 8; j++) {
            point[j] = values[(code >> (2 * j)) & 3];
        }
        iq_put8(x->q + 8 * p, point, signs[p]);
    }
}

#ifdef IQ2S_CODES_AVX512
// 64 weights a step: the 8 codes of points 8 k .. 8 k + 7 one a 64-bit lane,
// field j to byte j by a bit-field shuffle, to 8, 25 or 43 by a byte permute
// (index bits 0..1 only: the table repeats with period 4), and the 8 sign
// bytes, bit j of byte i for weight 8 i + j, as the mask of the lanes to negate.
static void iq2s_code_decode_avx512(const uint8_t * block, struct htp_iq_superblock * x) {
    const __m512i ramp   = _mm512_set1_epi64(0x0e0c0a0806040200ll);  // byte j: bit 2 j
    const __m512i values = _mm512_set1_epi32(0x2b2b1908);            // field 0..3: 8, 25, 43, 43
    iq2s_code_scales(block, x);
    for (int k = 0; k < 4; k++) {
        const __m512i codes =
            _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)(block + 2 + 16 * k)));
        const __m512i v = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(ramp, codes), values);
        uint64_t      negative;
        memcpy(&negative, block + 66 + 8 * k, sizeof negative);
        _mm512_storeu_si512((void *)(x->q + 64 * k),
                            _mm512_mask_sub_epi8(v, (__mmask64)negative, _mm512_setzero_si512(), v));
    }
}
#endif

void htp_iq2s_code_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x) {
#ifdef IQ2S_CODES_AVX512
    (void)cb;
    iq2s_code_decode_avx512(block, x);
#else
    htp_iq2s_code_decode_ref(block, cb, x);
#endif
}
