// kquant-dot.c: arithmetic on K-quant (Q2_K .. Q6_K) and IQ4_XS tiles for
// the MUL_MAT / MUL_MAT_ID / GET_ROWS kernels: dequantization (tiled and
// plain rows), the Q8_K activation blocks, and the 16-row dot products. The
// tile format itself is the contract's (contract/kquant-tiles.h).
//
// The dot products compute exactly ggml's integer sums (weights times the
// int8 activations of struct htp_q8k_block), then scale in fp32:
//   Q4_K/Q5_K  d * da * sum_j sc_j * sum(q * a)  -  dmin * da * sum_j m_j * sum(a)
//   Q2_K       the same over 16 sub-blocks of 16 (4-bit scales and mins)
//   Q6_K       d * da * sum_s sc_s * (sum((q + 32) * a) - 32 * sum(a))      (q + 32 = the stored 0..63)
//   Q3_K       d * da * sum_s sc_s * (sum((q + 4) * a) - 4 * sum(a))        (q + 4 = the stored 0..7)
//   IQ4_XS     d * da * sum_j sc_j * (sum((v + 128) * a) - 128 * sum(a))    (v = the iq4_nl value)
// where the SIMD paths take the unsigned form (vpdpbusd / vrmpy want u8
// weights). Bounds: |sum(q * a)| over a sub-block <= 32 * 31 * 127, times a
// 6-bit scale, times 8 sub-blocks (16 * 63 * 127 * 128 * 16 for Q6_K; for
// IQ4_XS (32 * 241 * 127 + 128 * 32 * 128) * 32 * 8 < 2^29) stays in int32.
//
// On Hexagon (HVX, v67) the dot products, the Q8_K quantizer's integer parts
// and the bit expansion of plain-row dequantization (Q4_K .. Q6_K; Q2_K,
// Q3_K and IQ4_XS rows are decoded by the contract's scalar code) have HVX
// paths (the "HVX" sections below); float work stays scalar in the portable
// order, so the bits are the same. GGML_HTP_SCALAR=1 picks the portable code
// (quant.h).

#include "kquant-dot.h"

#include <math.h>
#include <string.h>

#include "fp16.h"
#include "proto/htp-proto.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define KQ_AVX512 1
#include <immintrin.h>
#endif

#include "quant.h"
#include "stream-prefetch.h"

#if defined(__HVX__)
#include "hvx.h"
#endif

// ---------------------------------------------------------------------------
// Dequantization
// ---------------------------------------------------------------------------

static void kq_dequant_sb(uint32_t type, float * y, const struct htp_kq_superblock * x) {
    const float d = htp_fp16_to_fp32(x->d);
    if (type == HTP_TYPE_Q6_K || type == HTP_TYPE_Q3_K) {
        const int off = type == HTP_TYPE_Q6_K ? 32 : 4;
        for (int e = 0; e < HTP_KQ_QK; e++) {
            y[e] = d * (float)(int8_t)x->sc[e / 16] * (float)((int)x->q[e] - off);
        }
        return;
    }
    if (type == HTP_TYPE_IQ4_XS) {
        for (int e = 0; e < HTP_KQ_QK; e++) {
            y[e] = d * (float)(int8_t)x->sc[e / 32] * (float)htp_iq4nl_values[x->q[e]];
        }
        return;
    }
    const float dmin = htp_fp16_to_fp32(x->dmin);
    const int   sub  = type == HTP_TYPE_Q2_K ? 16 : 32;  // elements per sub-block
    for (int j = 0; j < HTP_KQ_QK / sub; j++) {
        const float dj = d * (float)x->sc[j], mj = dmin * (float)x->mn[j];
        for (int l = 0; l < sub; l++) {
            y[sub * j + l] = dj * (float)x->q[sub * j + l] - mj;
        }
    }
}

void htp_kq_dequant_tiled_row(uint32_t type, float * y, const uint8_t * group, int r, int64_t nsb) {
    const size_t qb = htp_kq_q_bytes(type), sb = htp_kq_s_bytes(type);
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *          q = group + (size_t)b * qb;
        const uint8_t *          s = group + (size_t)nsb * qb + (size_t)b * sb;
        struct htp_kq_superblock x;
        htp_kq_tile_decode(type, q, s, r, &x);
        kq_dequant_sb(type, y + b * HTP_KQ_QK, &x);
    }
}

#if defined(__HVX__)
// HVX decode of a ggml block into the super-block form (what
// htp_kq_block_decode gives): the quants' nibble and bit expansion as
// vectors; the 12-byte scales (ggml's packing: bytes 0-3 scales 0-3 and the
// top 2 bits of scales 4-7, bytes 4-7 the same for the mins, bytes 8-11 the
// low 4 bits of scale | min << 4 for 4-7) in scalar code.

#define KQ_LOW32_CTRL(b) ((b)&0x60)        // vdelta: byte b <- byte b % 32 (^ k: b % 32 + k)
#define KQ_BIT_LO(b)     (1 << (b) / 32)   // element 32 k + l tests bit k (k < 4) ...
#define KQ_BIT_HI(b)     (16 << (b) / 32)  // ... and bit k + 4 in the upper 128 elements
#define KQ_SHIFT_Q6(h)   (2 * ((h) / 16))  // halfword h of 32 k + l bytes: shift 2 k
static const uint8_t  kq_low32_ctrl[128] HVX_ALIGN = {HVX_T128(KQ_LOW32_CTRL)};
static const uint8_t  kq_bit_lo[128] HVX_ALIGN     = {HVX_T128(KQ_BIT_LO)};
static const uint8_t  kq_bit_hi[128] HVX_ALIGN     = {HVX_T128(KQ_BIT_HI)};
static const uint16_t kq_shift_q6[64] HVX_ALIGN    = {HVX_T64(KQ_SHIFT_Q6, 0)};

static void kq_hvx_block_decode(uint32_t type, const uint8_t * b, struct htp_kq_superblock * x) {
    if (type == HTP_TYPE_Q6_K) {
        // ql: element 128 n + 32 k + l (k < 4) has its low bits in nibble k / 2
        // of ql[64 n + 32 (k % 2) + l]: half n is [low nibbles | high nibbles]
        // of ql's 64 bytes n; its top two bits sit at bit 2 k of qh[32 n + l].
        const hvx_v  ql = hvx_ld(b);
        const hvx_vv q  = hvx_join(hvx_nib_lo(ql), hvx_nib_hi(ql));
        const hvx_v  qh = hvx_ld(b + 64);  // qh is its upper half (a load at qh would pass the block's end)
        for (int n = 0; n < 2; n++) {
            const hvx_v rep = __builtin_HEXAGON_V6_vdelta_128B(qh, hvx_ld(kq_low32_ctrl) ^ hvx_b(64 + 32 * n));
            hvx_v       top = __builtin_HEXAGON_V6_vlsrhv_128B(rep, hvx_ld(kq_shift_q6)) & hvx_b(3);
            top             = __builtin_HEXAGON_V6_vaslh_128B(top, 4);
            hvx_st(x->q + 128 * n, (n ? hvx_hi(q) : hvx_lo(q)) | top);
        }
        memcpy(x->sc, b + 192, 16);
        memcpy(&x->d, b + 208, 2);
        x->dmin = 0;
        return;
    }
    const int q5 = type == HTP_TYPE_Q5_K;
    // qs: element 64 i + l (l < 32) is the low nibble of qs[32 i + l], 64 i + 32 + l its high one.
    const hvx_v  qs = hvx_ld(b + (q5 ? 48 : 16));
    const hvx_vv q  = hvx_zip(hvx_nib_lo(qs), hvx_nib_hi(qs), 32);
    hvx_v        lo = hvx_lo(q), hi = hvx_hi(q);
    if (q5) {  // bit 4 of element 32 k + l is bit k of qh[l]
        const hvx_v rep = __builtin_HEXAGON_V6_vdelta_128B(hvx_ld(b + 16), hvx_ld(kq_low32_ctrl));
        const hvx_v b16 = hvx_b(16);
        lo = __builtin_HEXAGON_V6_vaddbq_128B(__builtin_HEXAGON_V6_vgtub_128B(rep & hvx_ld(kq_bit_lo), hvx_zero()), lo,
                                              b16);
        hi = __builtin_HEXAGON_V6_vaddbq_128B(__builtin_HEXAGON_V6_vgtub_128B(rep & hvx_ld(kq_bit_hi), hvx_zero()), hi,
                                              b16);
    }
    hvx_st(x->q, lo);
    hvx_st(x->q + 128, hi);
    const uint8_t * p = b + 4;
    for (int j = 0; j < 4; j++) {
        x->sc[j]     = p[j] & 63;
        x->mn[j]     = p[j + 4] & 63;
        x->sc[j + 4] = (uint8_t)((p[j + 8] & 15) | ((p[j] >> 6) << 4));
        x->mn[j + 4] = (uint8_t)((p[j + 8] >> 4) | ((p[j + 4] >> 6) << 4));
    }
    memcpy(&x->d, b, 2);
    memcpy(&x->dmin, b + 2, 2);
}
#endif

// (GET_ROWS of tiled K-quant weights unpacks each tile row to its ggml block
// and comes here too.)
void htp_kq_dequant_row(uint32_t type, float * y, const uint8_t * row, int64_t nsb) {
    const size_t bs = htp_kq_block_bytes(type);
#if defined(__HVX__)
    // (kq_hvx_block_decode knows Q4_K, Q5_K and Q6_K.)
    const int hvx =
        !htp_kernels_portable() && (type == HTP_TYPE_Q4_K || type == HTP_TYPE_Q5_K || type == HTP_TYPE_Q6_K);
#endif
    for (int64_t b = 0; b < nsb; b++) {
        struct htp_kq_superblock x;
#if defined(__HVX__)
        if (hvx) {
            kq_hvx_block_decode(type, row + (size_t)b * bs, &x);
        } else {
            htp_kq_block_decode(type, row + (size_t)b * bs, &x);
        }
#else
        htp_kq_block_decode(type, row + (size_t)b * bs, &x);
#endif
        kq_dequant_sb(type, y + b * HTP_KQ_QK, &x);
    }
}

// ---------------------------------------------------------------------------
// Activations
// ---------------------------------------------------------------------------

// The 32-value sums from the 16-value ones.
static void kq_q8k_sum32(struct htp_q8k_block * o) {
    for (int g = 0; g < 8; g++) {
        o->bsum32[g] = (int16_t)(o->bsum16[2 * g] + o->bsum16[2 * g + 1]);
    }
}

// Round half to even through the fp32 mantissa (x * iscale is within
// +-127.5): the integer lands in the low mantissa bits of the result's bits.
// (One function for the scalar and HVX paths: the same float code.)
static inline int32_t kq_round_bits(float iscale, float x) {
    const float t = iscale * x + 12582912.0f;
    int32_t     v;
    memcpy(&v, &t, 4);
    return v;
}

// One super-block of 256 floats -> Q8_K: scale by -127 / (the first value of
// largest magnitude), round half to even, clamp at 127; the 16- and 32-value
// sums the dot products use for the weights' offsets.
static void kq_quantize_sb_scalar(struct htp_q8k_block * o, const float * x) {
    float amax = 0.0f;
    for (int i = 0; i < HTP_KQ_QK; i++) {
        const float a = fabsf(x[i]);
        amax          = a > amax ? a : amax;
    }
    memset(o->pad, 0, sizeof o->pad);
    if (amax == 0.0f) {
        memset(o->qs, 0, sizeof o->qs);
        memset(o->bsum16, 0, sizeof o->bsum16);
        memset(o->bsum32, 0, sizeof o->bsum32);
        o->d = 0.0f;
        return;
    }
    float max = 0.0f;  // the first element of largest magnitude, with its sign
    for (int i = 0; i < HTP_KQ_QK; i++) {
        if (fabsf(x[i]) == amax) {
            max = x[i];
            break;
        }
    }
    const float iscale = -127.0f / max;
    for (int i = 0; i < HTP_KQ_QK; i++) {
        int32_t v = kq_round_bits(iscale, x[i]);
        v         = (v & 0x007fffff) - 0x00400000;
        o->qs[i]  = (int8_t)(v < 127 ? v : 127);
    }
    for (int g = 0; g < 16; g++) {
        int s = 0;
        for (int i = 0; i < 16; i++) {
            s += o->qs[16 * g + i];
        }
        o->bsum16[g] = (int16_t)s;
    }
    kq_q8k_sum32(o);
    o->d = 1.0f / iscale;
}

#ifdef KQ_AVX512
// kq_quantize_sb_scalar on sixteen 16-float registers, with the same bits:
// the product is rounded to float first and then to the nearest integer,
// ties to even, as the scalar code's fp32-mantissa trick does.
static void kq_quantize_sb_avx512(struct htp_q8k_block * o, const float * x) {
    __m512    v[16];
    __m512    amax = _mm512_setzero_ps();
    __mmask16 nan  = 0;
    for (int i = 0; i < 16; i++) {
        v[i] = _mm512_loadu_ps(x + 16 * i);
        amax = _mm512_max_ps(amax, _mm512_abs_ps(v[i]));
        nan |= _mm512_cmp_ps_mask(v[i], v[i], _CMP_UNORD_Q);
    }
    const float m = _mm512_reduce_max_ps(amax);
    if (nan || m == INFINITY) {  // the scalar code's way, never an out-of-range conversion
        kq_quantize_sb_scalar(o, x);
        return;
    }
    if (m == 0.0f) {
        memset(o, 0, sizeof *o);
        return;
    }
    float max = 0.0f;  // the first element of largest magnitude, with its sign
    for (int i = 0; i < 16; i++) {
        const __mmask16 eq = _mm512_cmp_ps_mask(_mm512_abs_ps(v[i]), _mm512_set1_ps(m), _CMP_EQ_OQ);
        if (eq) {
            max = x[16 * i + __builtin_ctz(eq)];
            break;
        }
    }
    const float   iscale = -127.0f / max;
    const __m512  vs     = _mm512_set1_ps(iscale);
    const __m512i top    = _mm512_set1_epi32(127);
    for (int i = 0; i < 16; i++) {
        const __m512i q = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v[i], vs)), top);
        _mm_storeu_si128((__m128i *)(void *)(o->qs + 16 * i), _mm512_cvtepi32_epi8(q));
        o->bsum16[i] = (int16_t)_mm512_reduce_add_epi32(q);
    }
    kq_q8k_sum32(o);
    memset(o->pad, 0, sizeof o->pad);
    o->d = 1.0f / iscale;
}
#endif

#if defined(__HVX__)
// kq_quantize_sb_scalar with HVX doing its integer parts: max |x| as the
// largest bit pattern with the sign cleared (the order of finite
// non-negative floats), the first element of that magnitude (smallest index
// among equal lanes), and, from the bits of the rounded floats, the quants,
// their clamp, their bytes and the 16-element sums. The rounding is float
// work, scalar on v67, through the scalar code's kq_round_bits. A max of 0,
// inf or NaN goes to the scalar code whole: its loop passes over a NaN,
// which the bit max would pick.
static void kq_quantize_sb_hvx(struct htp_q8k_block * o, const float * x) {
    const hvx_v m7 = hvx_w(0x7fffffff);
    hvx_v       m  = hvx_zero();
    for (int i = 0; i < 8; i++) {
        m = __builtin_HEXAGON_V6_vmaxw_128B(m, hvx_ld(x + 32 * i) & m7);
    }
    const int32_t bits = hvx_lane(hvx_hmax_w(m), 0);
    if (bits == 0 || (uint32_t)bits >= 0x7f800000u) {
        kq_quantize_sb_scalar(o, x);
        return;
    }
    hvx_v first = hvx_w(HTP_KQ_QK);
    for (int i = 0; i < 8; i++) {
        const hvx_v idx = hvx_ld(hvx_iota_w_tab) + hvx_w(32 * i);
        first = __builtin_HEXAGON_V6_vminw_128B(first, hvx_sel_eq(hvx_ld(x + 32 * i) & m7, hvx_w(bits), idx, first));
    }
    const float iscale = -127.0f / x[hvx_lane(hvx_hmin_w(first), 0)];
    int32_t     t[HTP_KQ_QK] HVX_ALIGN;
    for (int i = 0; i < HTP_KQ_QK; i++) {
        t[i] = kq_round_bits(iscale, x[i]);
    }
    // Quants: 8 vectors of words -> 2 of bytes (the low byte of each word, in order).
    hvx_v q[8];
    for (int i = 0; i < 8; i++) {
        q[i] =
            __builtin_HEXAGON_V6_vminw_128B((hvx_ld(t + 32 * i) & hvx_w(0x007fffff)) - hvx_w(0x00400000), hvx_w(127));
    }
    hvx_v qb[2];
    for (int h = 0; h < 2; h++) {
        const hvx_v lo = __builtin_HEXAGON_V6_vpackeh_128B(q[4 * h + 1], q[4 * h]);
        const hvx_v hi = __builtin_HEXAGON_V6_vpackeh_128B(q[4 * h + 3], q[4 * h + 2]);
        qb[h]          = __builtin_HEXAGON_V6_vpackeb_128B(hi, lo);
        hvx_st(o->qs + 128 * h, qb[h]);
    }
    // Sums: vrmpy against ones gives the 4-element sums in order; adding the
    // even and odd words (vdeal) twice gives the 8- then 16-element sums.
    const hvx_v  ones = hvx_b(1);
    const hvx_vv d4   = __builtin_HEXAGON_V6_vdealvdd_128B(__builtin_HEXAGON_V6_vrmpybv_128B(qb[1], ones),
                                                           __builtin_HEXAGON_V6_vrmpybv_128B(qb[0], ones), -4);
    const hvx_v  s8   = hvx_lo(d4) + hvx_hi(d4);
    const hvx_vv d8   = __builtin_HEXAGON_V6_vdealvdd_128B(s8, s8, -4);
    int32_t      s16[32] HVX_ALIGN;
    hvx_st(s16, hvx_lo(d8) + hvx_hi(d8));
    for (int g = 0; g < 16; g++) {
        o->bsum16[g] = (int16_t)s16[g];
    }
    kq_q8k_sum32(o);
    memset(o->pad, 0, sizeof o->pad);
    o->d = 1.0f / iscale;
}
#endif

void htp_kq_quantize_q8k(struct htp_q8k_block * y, const float * x, int64_t k) {
#if defined(__HVX__)
    const int hvx = !htp_kernels_portable();
#endif
    for (int64_t b = 0; b < k / HTP_KQ_QK; b++, x += HTP_KQ_QK) {
#ifdef KQ_AVX512
        kq_quantize_sb_avx512(&y[b], x);
#elif defined(__HVX__)
        if (hvx) {
            kq_quantize_sb_hvx(&y[b], x);
        } else {
            kq_quantize_sb_scalar(&y[b], x);
        }
#else
        kq_quantize_sb_scalar(&y[b], x);
#endif
    }
}

void htp_kq_quantize_q8k_ref(struct htp_q8k_block * y, const float * x, int64_t k) {
    for (int64_t b = 0; b < k / HTP_KQ_QK; b++, x += HTP_KQ_QK) {
        kq_quantize_sb_scalar(&y[b], x);
    }
}

// ---------------------------------------------------------------------------
// Dot products: portable C
// ---------------------------------------------------------------------------

// One super-block's integer sums of a row and a column (activation scale yd)
// into the row's result: the portable code's float step, which the HVX path
// takes too, so both round alike.
static inline void kq_accumulate(float * out, float d, float dmin, float yd, int32_t isum, int32_t msum) {
    *out += d * yd * (float)isum - dmin * yd * (float)msum;
}

// The integer sums of a decoded super-block with one column: isum (times d)
// and msum (times dmin), as ggml's vec_dot forms them (the offsets of Q3_K
// and Q6_K through the 16-element sums, which is the same integer).
static void kq_sums(uint32_t type, const struct htp_kq_superblock * x, const struct htp_q8k_block * y, int32_t * isum,
                    int32_t * msum) {
    int32_t is = 0, ms = 0;
    switch (type) {
        case HTP_TYPE_Q6_K:
        case HTP_TYPE_Q3_K: {
            const int off = type == HTP_TYPE_Q6_K ? 32 : 4;
            for (int g = 0; g < 16; g++) {
                int32_t t = 0;
                for (int i = 0; i < 16; i++) {
                    t += x->q[16 * g + i] * y->qs[16 * g + i];
                }
                is += (int8_t)x->sc[g] * (t - off * y->bsum16[g]);
            }
            break;
        }
        case HTP_TYPE_Q2_K:
            for (int g = 0; g < 16; g++) {
                int32_t t = 0;
                for (int i = 0; i < 16; i++) {
                    t += x->q[16 * g + i] * y->qs[16 * g + i];
                }
                is += x->sc[g] * t;
                ms += x->mn[g] * y->bsum16[g];
            }
            break;
        case HTP_TYPE_IQ4_XS:
            for (int j = 0; j < 8; j++) {
                int32_t t = 0;
                for (int i = 0; i < 32; i++) {
                    t += htp_iq4nl_values[x->q[32 * j + i]] * y->qs[32 * j + i];
                }
                is += (int8_t)x->sc[j] * t;
            }
            break;
        default:  // Q4_K, Q5_K
            for (int j = 0; j < 8; j++) {
                int32_t t = 0;
                for (int i = 0; i < 32; i++) {
                    t += x->q[32 * j + i] * y->qs[32 * j + i];
                }
                is += x->sc[j] * t;
                ms += x->mn[j] * y->bsum32[j];
            }
            break;
    }
    *isum = is;
    *msum = ms;
}

void htp_kq_dot_group_ref(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                          const struct htp_q8k_block * const * a, int nc) {
    const size_t qb = htp_kq_q_bytes(type), sb = htp_kq_s_bytes(type);
    for (int c = 0; c < nc; c++) {
        for (int r = 0; r < HTP_KQ_R; r++) {
            out[c][r] = 0.0f;
        }
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t * q = group + (size_t)b * qb;
        const uint8_t * s = group + (size_t)nsb * qb + (size_t)b * sb;
        for (int r = 0; r < HTP_KQ_R; r++) {
            struct htp_kq_superblock x;
            htp_kq_tile_decode(type, q, s, r, &x);
            const float d = htp_fp16_to_fp32(x.d), dmin = htp_fp16_to_fp32(x.dmin);
            for (int c = 0; c < nc; c++) {
                int32_t isum, msum;
                kq_sums(type, &x, &a[c][b], &isum, &msum);
                kq_accumulate(&out[c][r], d, dmin, a[c][b].d, isum, msum);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Dot products: AVX-512 VNNI. One zmm lane per row of the group: a 64-byte
// chunk of quants against 4 broadcast activation bytes per vpdpbusd.
// ---------------------------------------------------------------------------

#ifdef KQ_AVX512

// Sub-block j of a Q5_K quant part: its high-bit masks beside its nibbles.
static inline const struct htp_q5k_sub * kq_q5_sub(const uint8_t * part, int j) {
    return &((const struct htp_q5k_q *)(const void *)part)->j[j];
}

static inline __m512i kq_bcast4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

static inline __mmask64 kq_mask(const uint8_t * p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return _cvtu64_mask64(v);
}

// The iq4_nl values + 128 (vpdpbusd's u8 side) in each 128-bit lane.
static inline __m512i kq_iq4_lut(void) {
    uint8_t t8[16];
    for (int i = 0; i < 16; i++) {
        t8[i] = (uint8_t)(htp_iq4nl_values[i] + 128);
    }
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)t8));
}

static inline __attribute__((always_inline)) void kq_dot_kmin_avx512(int q5, int nc, float out[4][HTP_KQ_R],
                                                                     const uint8_t * group, int64_t nsb,
                                                                     const struct htp_q8k_block * const * a) {
    const size_t    qb    = q5 ? sizeof(struct htp_q5k_q) : sizeof(struct htp_q4k_q);
    const uint8_t * sbase = group + (size_t)nsb * qb;
    const __m512i   m4    = _mm512_set1_epi8(15);
    const __m512i   b16   = _mm512_set1_epi8(16);
    __m512          acc[4];
    for (int i = 0; i < 4; i++) {
        acc[i] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *           q = group + (size_t)b * qb;
        const struct htp_kmin_s * s =
            (const struct htp_kmin_s *)(const void *)(sbase + (size_t)b * sizeof(struct htp_kmin_s));
        __m512i isum[4], msum[4];
        for (int i = 0; i < 4; i++) {
            isum[i] = _mm512_setzero_si512();
            msum[i] = _mm512_setzero_si512();
        }
        for (int j = 0; j < 8; j++) {
            __m512i dl[4], dh[4];
            for (int i = 0; i < 4; i++) {
                dl[i] = _mm512_setzero_si512();
                dh[i] = _mm512_setzero_si512();
            }
            for (int c = 0; c < 4; c++) {
                const __m512i v  = _mm512_loadu_si512(q + htp_kmin_qs_off(q5, j, c));
                __m512i       lo = _mm512_and_si512(v, m4);
                __m512i       hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                if (q5) {
                    const struct htp_q5k_sub * x = kq_q5_sub(q, j);
                    lo                           = _mm512_mask_add_epi8(lo, kq_mask(x->qh[c][0]), lo, b16);
                    hi                           = _mm512_mask_add_epi8(hi, kq_mask(x->qh[c][1]), hi, b16);
                }
                for (int i = 0; i < nc; i++) {
                    const int8_t * y = a[i][b].qs + 32 * j + 8 * c;
                    dl[i]            = _mm512_dpbusd_epi32(dl[i], lo, kq_bcast4(y));
                    dh[i]            = _mm512_dpbusd_epi32(dh[i], hi, kq_bcast4(y + 4));
                }
            }
            const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s->sc[j]));
            for (int i = 0; i < nc; i++) {
                isum[i] = _mm512_add_epi32(isum[i], _mm512_mullo_epi32(_mm512_add_epi32(dl[i], dh[i]), sc));
            }
        }
        for (int p = 0; p < 4; p++) {  // mins: pairs (m_2p, m_2p+1) x (bsum32_2p, bsum32_2p+1)
            const __m512i m16 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)s->mn[p]));
            for (int i = 0; i < nc; i++) {
                int32_t pair;
                memcpy(&pair, &a[i][b].bsum32[2 * p], 4);
                msum[i] = _mm512_dpwssd_epi32(msum[i], m16, _mm512_set1_epi32(pair));
            }
        }
        const __m512 d    = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s->d));
        const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s->dmin));
        for (int i = 0; i < nc; i++) {
            const __m512 da = _mm512_set1_ps(a[i][b].d);
            acc[i]          = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[i]), _mm512_mul_ps(d, da), acc[i]);
            acc[i]          = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[i]), _mm512_mul_ps(dmin, da), acc[i]);
        }
    }
    for (int i = 0; i < nc; i++) {
        _mm512_storeu_ps(out[i], acc[i]);
    }
}

// Q6_K sub-block g of a tile's quant part as four vectors of 6-bit q, the
// 16 rows' elements 0-3, 4-7, 8-11 and 12-15 (against activation bytes
// 16 g + 4 k). Each is one bit select (vpternlogd 0xCA, A ? B : C) of a
// nibble (bits 0-3) and a field vector whose high bits sit at 4-5 with
// bits 6-7 clear, which qh's layout allows with one shift (kquant-tiles.h).
// The four masked byte adds a chunk this replaced (qh as bit masks, one
// k-register load each) made Q6_K the slowest K-quant: in a cache-resident
// microbenchmark of the decode loop on an AMD EPYC Zen 4 core it ran 50 G
// weights/s against 80 now. The sub-block's three lines are consecutive
// (struct htp_q6k_sub), so each group is one stream read in order: with ql
// and qh in two runs of the part, the cold (DRAM) matmuls at the 1B shapes
// ran at 0.77-0.92x ggml-cpu; interleaved, 0.92-1.12x (alternated, Zen 4).
static inline __attribute__((always_inline)) void kq_q6_sixbit(const struct htp_q6k_q * q, int g, __m512i u[4]) {
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i v0 = _mm512_loadu_si512(q->s[g].ql[0]), v1 = _mm512_loadu_si512(q->s[g].ql[1]);
    const __m512i qh = _mm512_loadu_si512(q->s[g].qh);
    const __m512i fl = _mm512_and_si512(qh, _mm512_set1_epi8(0x33));        // low nibbles' fields: 4-5, 0-1
    const __m512i fh = _mm512_and_si512(qh, _mm512_set1_epi8((char)0xCC));  // high nibbles': 6-7, 2-3
    u[0]             = _mm512_ternarylogic_epi32(m4, v0, fl, 0xCA);
    u[1]             = _mm512_ternarylogic_epi32(m4, _mm512_srli_epi16(v0, 4), _mm512_srli_epi16(fh, 2), 0xCA);
    u[2]             = _mm512_ternarylogic_epi32(m4, v1, _mm512_slli_epi16(fl, 4), 0xCA);
    u[3]             = _mm512_ternarylogic_epi32(m4, _mm512_srli_epi16(v1, 4), _mm512_slli_epi16(fh, 2), 0xCA);
}

static inline __attribute__((always_inline)) void kq_dot_q6_avx512(int nc, float out[4][HTP_KQ_R],
                                                                   const uint8_t * group, int64_t nsb,
                                                                   const struct htp_q8k_block * const * a) {
    const uint8_t * sbase = group + (size_t)nsb * sizeof(struct htp_q6k_q);
    __m512          acc[4];
    for (int i = 0; i < 4; i++) {
        acc[i] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_q6k_q * q =
            (const struct htp_q6k_q *)(const void *)(group + (size_t)b * sizeof(struct htp_q6k_q));
        const struct htp_q6k_s * s =
            (const struct htp_q6k_s *)(const void *)(sbase + (size_t)b * sizeof(struct htp_q6k_s));
        __m512i isum[4];
        for (int i = 0; i < 4; i++) {
            isum[i] = _mm512_setzero_si512();
        }
        for (int g = 0; g < 16; g++) {
            __m512i u[4];
            kq_q6_sixbit(q, g, u);
            const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s->sc[g]));
            for (int i = 0; i < nc; i++) {
                const int8_t * y  = a[i][b].qs + 16 * g;
                __m512i        dl = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[0], kq_bcast4(y));
                __m512i        dh = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[1], kq_bcast4(y + 4));
                dl                = _mm512_dpbusd_epi32(dl, u[2], kq_bcast4(y + 8));
                dh                = _mm512_dpbusd_epi32(dh, u[3], kq_bcast4(y + 12));
                const __m512i off = _mm512_set1_epi32(32 * a[i][b].bsum16[g]);
                const __m512i t   = _mm512_sub_epi32(_mm512_add_epi32(dl, dh), off);
                isum[i]           = _mm512_add_epi32(isum[i], _mm512_mullo_epi32(t, sc));
            }
        }
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s->d));
        for (int i = 0; i < nc; i++) {
            acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[i]), _mm512_mul_ps(d, _mm512_set1_ps(a[i][b].d)), acc[i]);
        }
    }
    for (int i = 0; i < nc; i++) {
        _mm512_storeu_ps(out[i], acc[i]);
    }
}

// Decode: one column against ng (2 or 4) consecutive row groups
// (kq_dot_*_multi). One activation broadcast feeds 16 ng rows, the groups'
// chains are independent, and every group's quant stream is prefetched
// ahead of the reads: at n = 1 the single group kernels leave the core
// waiting on memory half of the time. Four groups stream Q4_K at about 1.2x
// two, 1.5x one (two threads, weights far larger than the caches).
//
// Always inlined: GCC 12 judged an out-of-line copy of a prefetch helper
// free of side effects (a prefetch stores nothing) and deleted every call,
// so the objdump of kquant.c showed no prefetch at all; check it there after
// touching these.
//
// The scale part of a group's super-block ahead (kq_prefetch_targets), line
// L of it (callers go through L = 0, 1, ... once per super-block). The scales
// are a stream of their own after the group's quants, read at a few lines a
// super-block: too slow for the hardware prefetcher, so unprefetched each
// line was a demand miss.
static inline __attribute__((always_inline)) void kq_prefetch_scales(const void * s, size_t sb, int L) {
    if (64 * L < (int)sb) {
        _mm_prefetch((const char *)s + 64 * L, _MM_HINT_T0);
    }
}

// A group's quant parts are one run of nsb * qb bytes (tiled.h), which the
// Q4_K, Q5_K and Q6_K decode loops consume in 32 steps a super-block, each
// part in order (Q5_K's and Q6_K's high bits sit beside their sub-block's
// nibbles). Step st prefetches lines st n / 32 .. (st + 1) n / 32 - 1 of the
// next quant part (n lines: 32, 40, 48; part: super-block b + 1, or the
// first of the group ng groups on: the next call's, or the next tile's,
// whoever takes it): every line once, in the order it will be read, one part
// (2, 2.5, 3 KiB) ahead. When Q5_K and Q6_K kept their high bits in a run of
// their own after the nibbles, a part was two streams, which cost Q6_K a
// fifth of its cold (DRAM) matmul speed on Zen 4. Before this, a fixed 3 KiB
// distance computed line by line in a loop whose bounds and end test GCC 12
// could not fold: the loop cut the unrolled step in pieces, and the kernel
// kept each loaded vector on the stack and read it back from there.
// (With 32 to 48 lines that is one or two a step: no loop, since st is
// not a constant where the sub-block loop stays rolled.)
static inline __attribute__((always_inline)) void kq_prefetch_part(const uint8_t * part, size_t qb, int st) {
    const int n = (int)(qb / 64), first = st * n / 32, end = (st + 1) * n / 32;
    _mm_prefetch((const char *)part + 64 * first, _MM_HINT_T0);
    if (end - first > 1) {
        _mm_prefetch((const char *)part + 64 * (first + 1), _MM_HINT_T0);
    }
}

// Quant and scale part of super-block b in each of the ng row groups from g0
// on (group h at g0 + h gstride; tiled.h's group: all quant parts, then all
// scale parts).
static inline __attribute__((always_inline)) void kq_sb_parts(const uint8_t * g0, size_t gstride, int ng, int64_t nsb,
                                                              size_t qb, size_t sbytes, int64_t b, const uint8_t * q[4],
                                                              const uint8_t * s[4]) {
    for (int h = 0; h < ng; h++) {
        const uint8_t * g = g0 + (size_t)h * gstride;
        q[h]              = g + (size_t)b * qb;
        s[h]              = g + (size_t)nsb * qb + (size_t)b * sbytes;
    }
}

// What the decode kernels prefetch while they read super-block b of ng groups
// from g0 on: super-block b + dist (1 or 2) of each group, or, for the last
// ones, the first ones of the ng groups that follow (the next tile, whoever
// takes it: without this each tile's first two super-blocks were demand
// misses, a quarter of the weights at K = 2048). pq[h], ps[h]: quant and
// scale part. Where there is nothing further (one group, or a K shorter than
// dist super-blocks) they name super-block b itself, already loaded, so the
// inner loops need no test.
static inline __attribute__((always_inline)) void kq_prefetch_targets(const uint8_t * g0, size_t gstride, int ng,
                                                                      int64_t nsb, size_t qb, size_t sbytes, int64_t b,
                                                                      int dist, const uint8_t * pq[4],
                                                                      const uint8_t * ps[4]) {
    const int       ahead = ng > 1 && b + dist - nsb < nsb;
    const int64_t   bn    = !ahead ? b : b + dist < nsb ? b + dist : b + dist - nsb;
    const uint8_t * base  = ahead && b + dist >= nsb ? g0 + (size_t)ng * gstride : g0;
    kq_sb_parts(base, gstride, 4, nsb, qb, sbytes, bn, pq, ps);
}

// The loops over a call's groups (and a step's chunks) keep each group's
// accumulators in registers only when fully unrolled; GCC 12 left the group
// loop rolled (it held a prefetch loop) and kept dl[] / dh[] on
// the stack, a store and a reload around every vpdpbusd. Unrolled, hot
// (cache-resident) Q6_K decode went from 0.87-1.04x to 1.22-1.26x ggml-cpu
// (htp-bench matmul, 1B shapes), Q5_K's 512 x 2048 from 1.18x to 1.43x; cold
// decode, bound by memory, moved within noise.
#define KQ_UNROLL_GROUPS _Pragma("GCC unroll 4")

static inline __attribute__((always_inline)) void kq_dot_kmin_multi_avx512(int q5, int pf, int ng,
                                                                           float out[4][HTP_KQ_R], const uint8_t * g0,
                                                                           size_t gstride, int64_t nsb,
                                                                           const struct htp_q8k_block * a) {
    const size_t    qb     = q5 ? sizeof(struct htp_q5k_q) : sizeof(struct htp_q4k_q);
    const uint8_t * gs[4]  = {g0, g0 + gstride, g0 + 2 * gstride, g0 + 3 * gstride};
    const __m512i   m4     = _mm512_set1_epi8(15);
    const __m512i   b16    = _mm512_set1_epi8(16);
    __m512          acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *           q[4];
        const struct htp_kmin_s * s[4];
        for (int h = 0; h < ng; h++) {
            q[h] = gs[h] + (size_t)b * qb;
            s[h] = (const struct htp_kmin_s *)(const void *)(gs[h] + (size_t)nsb * qb +
                                                             (size_t)b * sizeof(struct htp_kmin_s));
        }
        const uint8_t *pq[4], *ps[4];
        kq_prefetch_targets(g0, gstride, ng, nsb, qb, sizeof(struct htp_kmin_s), b, 1, pq, ps);
        __m512i isum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
        for (int j = 0; j < 8; j++) {
            __m512i dl[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
            __m512i dh[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
            KQ_UNROLL_GROUPS
            for (int c = 0; c < 4; c++) {
                const int8_t * y  = a[b].qs + 32 * j + 8 * c;
                const __m512i  yl = kq_bcast4(y), yh = kq_bcast4(y + 4);
                KQ_UNROLL_GROUPS
                for (int h = 0; h < ng; h++) {
                    if (pf) {
                        kq_prefetch_part(pq[h], qb, 4 * j + c);
                    }
                    const __m512i v  = _mm512_loadu_si512(q[h] + htp_kmin_qs_off(q5, j, c));
                    __m512i       lo = _mm512_and_si512(v, m4), hi;
                    if (q5) {
                        const struct htp_q5k_sub * x = kq_q5_sub(q[h], j);
                        hi                           = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                        lo                           = _mm512_mask_add_epi8(lo, kq_mask(x->qh[c][0]), lo, b16);
                        hi                           = _mm512_mask_add_epi8(hi, kq_mask(x->qh[c][1]), hi, b16);
                    } else {
                        hi = _mm512_andnot_si512(m4, v);  // 16 x the high nibble
                    }
                    dl[h] = _mm512_dpbusd_epi32(dl[h], lo, yl);
                    dh[h] = _mm512_dpbusd_epi32(dh[h], hi, yh);
                }
            }
            KQ_UNROLL_GROUPS
            for (int h = 0; h < ng; h++) {
                if (pf) {
                    kq_prefetch_scales(ps[h], sizeof(struct htp_kmin_s), j);
                }
                const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s[h]->sc[j]));
                const __m512i hi = q5 ? dh[h] : _mm512_srai_epi32(dh[h], 4);  // exact: multiples of 16
                isum[h]          = _mm512_add_epi32(isum[h], _mm512_mullo_epi32(_mm512_add_epi32(dl[h], hi), sc));
            }
        }
        const __m512 da = _mm512_set1_ps(a[b].d);
        KQ_UNROLL_GROUPS
        for (int h = 0; h < ng; h++) {
            __m512i msum = _mm512_setzero_si512();
            for (int p = 0; p < 4; p++) {  // mins: pairs (m_2p, m_2p+1) x (bsum32_2p, bsum32_2p+1)
                const __m512i m16 =
                    _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)s[h]->mn[p]));
                int32_t pair;
                memcpy(&pair, &a[b].bsum32[2 * p], 4);
                msum = _mm512_dpwssd_epi32(msum, m16, _mm512_set1_epi32(pair));
            }
            const __m512 d    = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s[h]->d));
            const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s[h]->dmin));
            acc[h]            = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[h]), _mm512_mul_ps(d, da), acc[h]);
            acc[h]            = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(dmin, da), acc[h]);
        }
    }
    for (int h = 0; h < ng; h++) {
        _mm512_storeu_ps(out[h], acc[h]);
    }
}

static inline __attribute__((always_inline)) void kq_dot_q6_multi_avx512(int ng, float out[4][HTP_KQ_R],
                                                                         const uint8_t * g0, size_t gstride,
                                                                         int64_t nsb, const struct htp_q8k_block * a) {
    const uint8_t * gs[4]  = {g0, g0 + gstride, g0 + 2 * gstride, g0 + 3 * gstride};
    __m512          acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_q6k_q * q[4];
        const struct htp_q6k_s * s[4];
        for (int h = 0; h < ng; h++) {
            q[h] = (const struct htp_q6k_q *)(const void *)(gs[h] + (size_t)b * sizeof(struct htp_q6k_q));
            s[h] = (const struct htp_q6k_s *)(const void *)(gs[h] + (size_t)nsb * sizeof(struct htp_q6k_q) +
                                                            (size_t)b * sizeof(struct htp_q6k_s));
        }
        const uint8_t *pq[4], *ps[4];
        kq_prefetch_targets(g0, gstride, ng, nsb, sizeof(struct htp_q6k_q), sizeof(struct htp_q6k_s), b, 1, pq, ps);
        __m512i isum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
        for (int g = 0; g < 16; g++) {
            const int8_t * y  = a[b].qs + 16 * g;
            const __m512i  y0 = kq_bcast4(y), y1 = kq_bcast4(y + 4), y2 = kq_bcast4(y + 8), y3 = kq_bcast4(y + 12);
            const __m512i  off = _mm512_set1_epi32(32 * a[b].bsum16[g]);
            KQ_UNROLL_GROUPS
            for (int h = 0; h < ng; h++) {
                kq_prefetch_part(pq[h], sizeof(struct htp_q6k_q), 2 * g);
                kq_prefetch_part(pq[h], sizeof(struct htp_q6k_q), 2 * g + 1);
                kq_prefetch_scales(ps[h], sizeof(struct htp_q6k_s), g);
                __m512i u[4];
                kq_q6_sixbit(q[h], g, u);
                __m512i dl       = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[0], y0);
                __m512i dh       = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[1], y1);
                dl               = _mm512_dpbusd_epi32(dl, u[2], y2);
                dh               = _mm512_dpbusd_epi32(dh, u[3], y3);
                const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s[h]->sc[g]));
                const __m512i t  = _mm512_sub_epi32(_mm512_add_epi32(dl, dh), off);
                isum[h]          = _mm512_add_epi32(isum[h], _mm512_mullo_epi32(t, sc));
            }
        }
        const __m512 da = _mm512_set1_ps(a[b].d);
        KQ_UNROLL_GROUPS
        for (int h = 0; h < ng; h++) {
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s[h]->d));
            acc[h]         = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[h]), _mm512_mul_ps(d, da), acc[h]);
        }
    }
    for (int h = 0; h < ng; h++) {
        _mm512_storeu_ps(out[h], acc[h]);
    }
}

// Q2_K, Q3_K and IQ4_XS: one kernel for the group (nc columns, ng = 1) and
// the decode (one column, ng = 2 or 4 groups) forms; output o is group o
// (decode) or column o. A sub-block (16 elements, or 32 for IQ4_XS) is nv
// vectors of 4 elements x 16 rows: vector k holds elements 4 k .. 4 k + 3
// of the sub-block as unsigned bytes (Q3_K: the stored 0..7, IQ4_XS: the
// table value + 128), against activation bytes sub * s + 4 k. The offsets
// (4, 128) come off through the column's sums, once per sub-block and row.
static inline __attribute__((always_inline)) __m512i kq_x_vec(const uint32_t type, const uint8_t * q, int s, int k,
                                                              __m512i lut) {
    const __m512i m3 = _mm512_set1_epi8(3), m4 = _mm512_set1_epi8(15);
    if (type == HTP_TYPE_IQ4_XS) {
        const struct htp_q4k_q * x = (const struct htp_q4k_q *)(const void *)q;
        const __m512i            v = _mm512_loadu_si512(x->qs[s][k / 2]);
        return _mm512_shuffle_epi8(lut,
                                   (k & 1) ? _mm512_and_si512(_mm512_srli_epi16(v, 4), m4) : _mm512_and_si512(v, m4));
    }
    const __m512i v = _mm512_loadu_si512(q + 64 * s);  // qs[s] of Q2_K and Q3_K
    __m512i       u = _mm512_and_si512(_mm512_srli_epi16(v, 2 * k), m3);
    if (type == HTP_TYPE_Q3_K) {
        const struct htp_q3k_q * x = (const struct htp_q3k_q *)(const void *)q;
        u                          = _mm512_mask_add_epi8(u, kq_mask(x->qh[s][k]), u, _mm512_set1_epi8(4));
    }
    return u;
}

// Quant-part lines of super-block b + 2, spread over the nsub sub-block steps.
static inline __attribute__((always_inline)) void kq_x_prefetch(const uint8_t * q, size_t qb, int nsub, int s) {
    const char * p = (const char *)q;
    for (int L = s; L < (int)(qb / 64); L += nsub) {
        _mm_prefetch(p + 64 * L, _MM_HINT_T0);
    }
}

// Q2_K and Q3_K: the frame of kq_dot_x_avx512 (output o is group o in the
// decode form, column o in the group form) with fewer instructions a
// sub-block. The four 2-bit fields k of a qs byte come out with one shift:
// k = 0, 2 as (v & 3) and (v >> 4 & 3), k = 1, 3 as (v & 12) and
// (v >> 4 & 12), i.e. 4 x the field (Q3_K's third bit adds 4, or 16 to the
// times-4 ones). The two kinds sum into their own dot products dA and dB
// (dB = 4 x its true sum, so isB >> 2 below is exact). Every per-row product
// of a sub-block, scale x dot and min x sum, is one vpdpwssd on dwords whose
// values fit in int16 with a zero high half on one side: |dA| <= 8 * 7 * 127,
// |dB| <= 8 * 28 * 127, |bsum16| <= 16 * 128, scales and mins zero-extended
// (Q3_K's signed scale masked to its low 16 bits), so the high halves add
// nothing and the low halves multiply exactly. The offsets (Q2_K's mins,
// Q3_K's 4 x sum(a)) sum apart as off and come off at the end:
//   Q2_K  isum = isA + isB / 4  (times d),  off = sum_s m_s * bsum16_s  (times dmin)
//   Q3_K  isum = isA + isB / 4 - off,      off = sum_s sc_s * 4 * bsum16_s
static inline __attribute__((always_inline)) void kq_dot_q23_avx512(const uint32_t type, const int ng, const int nc,
                                                                    float out[4][HTP_KQ_R], const uint8_t * g0,
                                                                    size_t gstride, int64_t nsb,
                                                                    const struct htp_q8k_block * const * a) {
    const int     q3 = type == HTP_TYPE_Q3_K;
    const size_t  qb = htp_kq_q_bytes(type), sbytes = htp_kq_s_bytes(type);
    const size_t  d_off = q3 ? offsetof(struct htp_q6k_s, d) : offsetof(struct htp_q2k_s, d);
    const int     no    = ng > nc ? ng : nc;
    const __m512i m3 = _mm512_set1_epi8(3), m12 = _mm512_set1_epi8(12);
    const __m512i b4 = _mm512_set1_epi8(4), b16 = _mm512_set1_epi8(16);
    const __m512i low16 = _mm512_set1_epi32(0xffff), m15 = _mm512_set1_epi32(15);
    __m512        acc[4];
    for (int o = 0; o < 4; o++) {
        acc[o] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *q[4], *s[4];
        kq_sb_parts(g0, gstride, ng, nsb, qb, sbytes, b, q, s);
        const uint8_t *pq[4], *ps[4];
        kq_prefetch_targets(g0, gstride, ng, nsb, qb, sbytes, b, 2, pq, ps);
        __m512i isa[4], isb[4], off[4];
        for (int o = 0; o < 4; o++) {
            isa[o] = isb[o] = off[o] = _mm512_setzero_si512();
        }
        for (int j = 0; j < 16; j++) {
            __m512i da[4], db[4];
            for (int o = 0; o < 4; o++) {
                da[o] = db[o] = _mm512_setzero_si512();
            }
            for (int h = 0; h < ng; h++) {
                if (ng > 1) {
                    for (int L = j; L < (int)(qb / 64); L += 16) {
                        _mm_prefetch((const char *)pq[h] + 64 * L, _MM_HINT_T0);
                    }
                    if (64 * j < (int)sbytes) {
                        _mm_prefetch((const char *)ps[h] + 64 * j, _MM_HINT_T0);
                    }
                }
                const __m512i v  = _mm512_loadu_si512(q[h] + 64 * j);  // qs[j]
                const __m512i v4 = _mm512_srli_epi16(v, 4);
                __m512i       u0 = _mm512_and_si512(v, m3), u1 = _mm512_and_si512(v, m12);
                __m512i       u2 = _mm512_and_si512(v4, m3), u3 = _mm512_and_si512(v4, m12);
                if (q3) {
                    const struct htp_q3k_q * x = (const struct htp_q3k_q *)(const void *)q[h];
                    u0                         = _mm512_mask_add_epi8(u0, kq_mask(x->qh[j][0]), u0, b4);
                    u1                         = _mm512_mask_add_epi8(u1, kq_mask(x->qh[j][1]), u1, b16);
                    u2                         = _mm512_mask_add_epi8(u2, kq_mask(x->qh[j][2]), u2, b4);
                    u3                         = _mm512_mask_add_epi8(u3, kq_mask(x->qh[j][3]), u3, b16);
                }
                for (int i = 0; i < nc; i++) {
                    const int8_t * y = a[i][b].qs + 16 * j;
                    da[h + i]        = _mm512_dpbusd_epi32(da[h + i], u0, kq_bcast4(y));
                    db[h + i]        = _mm512_dpbusd_epi32(db[h + i], u1, kq_bcast4(y + 4));
                    da[h + i]        = _mm512_dpbusd_epi32(da[h + i], u2, kq_bcast4(y + 8));
                    db[h + i]        = _mm512_dpbusd_epi32(db[h + i], u3, kq_bcast4(y + 12));
                }
            }
            for (int o = 0; o < no; o++) {
                const int                    h   = ng > 1 ? o : 0;
                const struct htp_q8k_block * y   = a[ng > 1 ? 0 : o] + b;
                const __m128i                sc8 = _mm_loadu_si128((const __m128i *)(const void *)(s[h] + 16 * j));
                __m512i                      sc, w;
                if (q3) {
                    sc = _mm512_and_si512(_mm512_cvtepi8_epi32(sc8), low16);
                    w  = _mm512_set1_epi32(4 * y->bsum16[j]);
                } else {
                    const __m512i sm = _mm512_cvtepu8_epi32(sc8);
                    sc               = _mm512_and_si512(sm, m15);
                    w                = _mm512_srli_epi32(sm, 4);  // the mins
                }
                isa[o] = _mm512_dpwssd_epi32(isa[o], da[o], sc);
                isb[o] = _mm512_dpwssd_epi32(isb[o], db[o], sc);
                off[o] = q3 ? _mm512_dpwssd_epi32(off[o], sc, w)
                            : _mm512_dpwssd_epi32(off[o], w, _mm512_set1_epi32(y->bsum16[j]));
            }
        }
        for (int o = 0; o < no; o++) {
            const int    h    = ng > 1 ? o : 0;
            const __m512 dact = _mm512_set1_ps(a[ng > 1 ? 0 : o][b].d);
            const __m512 d    = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(s[h] + d_off)));
            __m512i      isum = _mm512_add_epi32(isa[o], _mm512_srai_epi32(isb[o], 2));
            if (q3) {
                isum = _mm512_sub_epi32(isum, off[o]);
            }
            acc[o] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, dact), acc[o]);
            if (!q3) {
                const __m512 dmin =
                    _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(s[h] + d_off + 32)));
                acc[o] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(off[o]), _mm512_mul_ps(dmin, dact), acc[o]);
            }
        }
    }
    for (int o = 0; o < no; o++) {
        _mm512_storeu_ps(out[o], acc[o]);
    }
}

static inline __attribute__((always_inline)) void kq_dot_x_avx512(const uint32_t type, const int ng, const int nc,
                                                                  float out[4][HTP_KQ_R], const uint8_t * g0,
                                                                  size_t gstride, int64_t nsb,
                                                                  const struct htp_q8k_block * const * a) {
    if (type == HTP_TYPE_Q2_K || type == HTP_TYPE_Q3_K) {
        kq_dot_q23_avx512(type, ng, nc, out, g0, gstride, nsb, a);
        return;
    }
    const int     iq4 = type == HTP_TYPE_IQ4_XS, q2 = type == HTP_TYPE_Q2_K;
    const int     nsub = iq4 ? 8 : 16, sub = iq4 ? 32 : 16, nv = sub / 4;
    const size_t  qb = htp_kq_q_bytes(type), sbytes = htp_kq_s_bytes(type);
    const size_t  d_off = q2    ? offsetof(struct htp_q2k_s, d)
                          : iq4 ? offsetof(struct htp_iq4xs_s, d)
                                : offsetof(struct htp_q6k_s, d);
    const int     no    = ng > nc ? ng : nc;
    const __m512i lut   = iq4 ? kq_iq4_lut() : _mm512_setzero_si512();
    __m512        acc[4];
    for (int o = 0; o < 4; o++) {
        acc[o] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *q[4], *s[4];
        kq_sb_parts(g0, gstride, ng, nsb, qb, sbytes, b, q, s);
        const uint8_t *pq[4], *ps[4];
        kq_prefetch_targets(g0, gstride, ng, nsb, qb, sbytes, b, 2, pq, ps);
        __m512i isum[4], msum[4];
        for (int o = 0; o < 4; o++) {
            isum[o] = msum[o] = _mm512_setzero_si512();
        }
        for (int j = 0; j < nsub; j++) {
            __m512i dot[4];
            for (int o = 0; o < 4; o++) {
                dot[o] = _mm512_setzero_si512();
            }
            for (int h = 0; h < ng; h++) {
                if (ng > 1) {
                    kq_x_prefetch(pq[h], qb, nsub, j);
                    kq_prefetch_scales(ps[h], sbytes, j);
                }
                for (int k = 0; k < nv; k++) {
                    const __m512i u = kq_x_vec(type, q[h], j, k, lut);
                    for (int i = 0; i < nc; i++) {
                        dot[h + i] = _mm512_dpbusd_epi32(dot[h + i], u, kq_bcast4(a[i][b].qs + sub * j + 4 * k));
                    }
                }
            }
            for (int o = 0; o < no; o++) {
                const int                    h = ng > 1 ? o : 0;
                const struct htp_q8k_block * y = a[ng > 1 ? 0 : o] + b;
                const __m128i sc8 = _mm_loadu_si128((const __m128i *)(const void *)(s[h] + 16 * j));  // sc[j] / sm[j]
                if (q2) {
                    const __m512i w = _mm512_cvtepu8_epi32(sc8);
                    const __m512i m = _mm512_srli_epi32(w, 4);
                    isum[o]         = _mm512_add_epi32(isum[o],
                                                       _mm512_mullo_epi32(dot[o], _mm512_and_si512(w, _mm512_set1_epi32(15))));
                    msum[o]         = _mm512_add_epi32(msum[o], _mm512_mullo_epi32(m, _mm512_set1_epi32(y->bsum16[j])));
                } else {
                    const __m512i off = _mm512_set1_epi32(iq4 ? 128 * y->bsum32[j] : 4 * y->bsum16[j]);
                    isum[o]           = _mm512_add_epi32(
                                  isum[o], _mm512_mullo_epi32(_mm512_sub_epi32(dot[o], off), _mm512_cvtepi8_epi32(sc8)));
                }
            }
        }
        for (int o = 0; o < no; o++) {
            const int    h  = ng > 1 ? o : 0;
            const __m512 da = _mm512_set1_ps(a[ng > 1 ? 0 : o][b].d);
            const __m512 d  = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(s[h] + d_off)));
            acc[o]          = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[o]), _mm512_mul_ps(d, da), acc[o]);
            if (q2) {
                const __m512 dmin =
                    _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(s[h] + d_off + 32)));
                acc[o] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[o]), _mm512_mul_ps(dmin, da), acc[o]);
            }
        }
    }
    for (int o = 0; o < no; o++) {
        _mm512_storeu_ps(out[o], acc[o]);
    }
}

// One instance per (type, form).
#define KQ_X_INST(T, name)                                                                           \
    static void kq_x_##name##_g1(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb,             \
                                 const struct htp_q8k_block * const * a) {                           \
        kq_dot_x_avx512(T, 1, 1, out, g, 0, nsb, a);                                                 \
    }                                                                                                \
    static void kq_x_##name##_g2(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb,             \
                                 const struct htp_q8k_block * const * a) {                           \
        kq_dot_x_avx512(T, 1, 2, out, g, 0, nsb, a);                                                 \
    }                                                                                                \
    static void kq_x_##name##_g3(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb,             \
                                 const struct htp_q8k_block * const * a) {                           \
        kq_dot_x_avx512(T, 1, 3, out, g, 0, nsb, a);                                                 \
    }                                                                                                \
    static void kq_x_##name##_g4(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb,             \
                                 const struct htp_q8k_block * const * a) {                           \
        kq_dot_x_avx512(T, 1, 4, out, g, 0, nsb, a);                                                 \
    }                                                                                                \
    static void kq_x_##name##_m2(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb, \
                                 const struct htp_q8k_block * a) {                                   \
        kq_dot_x_avx512(T, 2, 1, out, g0, gs, nsb, &a);                                              \
    }                                                                                                \
    static void kq_x_##name##_m4(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb, \
                                 const struct htp_q8k_block * a) {                                   \
        kq_dot_x_avx512(T, 4, 1, out, g0, gs, nsb, &a);                                              \
    }
KQ_X_INST(HTP_TYPE_Q3_K, q3)
KQ_X_INST(HTP_TYPE_Q2_K, q2)
KQ_X_INST(HTP_TYPE_IQ4_XS, iq4)
#undef KQ_X_INST

// One instance per (type, group count): ng must be a constant in the loops.
// Q4_K also has one without software prefetch (_hw: the hardware
// prefetcher's alone), taken where htp_mm_stream_prefetch is 0. Q5_K and
// Q6_K read their high-bit lines out of order within a part, which the
// hardware prefetcher does not follow: they keep their prefetches.
#define KQ_MULTI(ng)                                                                                    \
    static void kq_multi_q4_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb,    \
                                 const struct htp_q8k_block * a) {                                      \
        kq_dot_kmin_multi_avx512(0, 1, ng, out, g0, gs, nsb, a);                                        \
    }                                                                                                   \
    static void kq_multi_q4_hw_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb, \
                                    const struct htp_q8k_block * a) {                                   \
        kq_dot_kmin_multi_avx512(0, 0, ng, out, g0, gs, nsb, a);                                        \
    }                                                                                                   \
    static void kq_multi_q5_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb,    \
                                 const struct htp_q8k_block * a) {                                      \
        kq_dot_kmin_multi_avx512(1, 1, ng, out, g0, gs, nsb, a);                                        \
    }                                                                                                   \
    static void kq_multi_q6_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb,    \
                                 const struct htp_q8k_block * a) {                                      \
        kq_dot_q6_multi_avx512(ng, out, g0, gs, nsb, a);                                                \
    }
KQ_MULTI(2)
KQ_MULTI(4)
#undef KQ_MULTI

void htp_kq_dot_multi(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * g0, size_t gstride, int ng, int64_t nsb,
                      const struct htp_q8k_block * a) {
    typedef void (*fn)(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb,
                       const struct htp_q8k_block * a);
    static const fn q4[2] = {kq_multi_q4_2, kq_multi_q4_4}, q5[2] = {kq_multi_q5_2, kq_multi_q5_4},
                    q4_hw[2] = {kq_multi_q4_hw_2, kq_multi_q4_hw_4}, q6[2] = {kq_multi_q6_2, kq_multi_q6_4},
                    q3[2] = {kq_x_q3_m2, kq_x_q3_m4}, q2[2] = {kq_x_q2_m2, kq_x_q2_m4},
                    iq4[2] = {kq_x_iq4_m2, kq_x_iq4_m4};
    const fn * t;
    switch (type) {
        case HTP_TYPE_IQ4_XS:
            t = iq4;
            break;
        case HTP_TYPE_Q2_K:
            t = q2;
            break;
        case HTP_TYPE_Q3_K:
            t = q3;
            break;
        case HTP_TYPE_Q5_K:
            t = q5;
            break;
        case HTP_TYPE_Q6_K:
            t = q6;
            break;
        default:
            t = htp_mm_stream_prefetch ? q4 : q4_hw;
            break;
    }
    t[ng == 4](out, g0, gstride, nsb, a);
}

// One straight-line instance per (type, column count).
#define KQ_INST(nc)                                                                \
    static void kq_q4_##nc(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb, \
                           const struct htp_q8k_block * const * a) {               \
        kq_dot_kmin_avx512(0, nc, out, g, nsb, a);                                 \
    }                                                                              \
    static void kq_q5_##nc(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb, \
                           const struct htp_q8k_block * const * a) {               \
        kq_dot_kmin_avx512(1, nc, out, g, nsb, a);                                 \
    }                                                                              \
    static void kq_q6_##nc(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb, \
                           const struct htp_q8k_block * const * a) {               \
        kq_dot_q6_avx512(nc, out, g, nsb, a);                                      \
    }
KQ_INST(1)
KQ_INST(2)
KQ_INST(3)
KQ_INST(4)
#undef KQ_INST

typedef void (*kq_dot_fn)(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb,
                          const struct htp_q8k_block * const * a);

void htp_kq_dot_group(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc) {
    static const kq_dot_fn q4[4]  = {kq_q4_1, kq_q4_2, kq_q4_3, kq_q4_4};
    static const kq_dot_fn q5[4]  = {kq_q5_1, kq_q5_2, kq_q5_3, kq_q5_4};
    static const kq_dot_fn q6[4]  = {kq_q6_1, kq_q6_2, kq_q6_3, kq_q6_4};
    static const kq_dot_fn q3[4]  = {kq_x_q3_g1, kq_x_q3_g2, kq_x_q3_g3, kq_x_q3_g4};
    static const kq_dot_fn q2[4]  = {kq_x_q2_g1, kq_x_q2_g2, kq_x_q2_g3, kq_x_q2_g4};
    static const kq_dot_fn iq4[4] = {kq_x_iq4_g1, kq_x_iq4_g2, kq_x_iq4_g3, kq_x_iq4_g4};
    const kq_dot_fn *      t;
    switch (type) {
        case HTP_TYPE_IQ4_XS:
            t = iq4;
            break;
        case HTP_TYPE_Q2_K:
            t = q2;
            break;
        case HTP_TYPE_Q3_K:
            t = q3;
            break;
        case HTP_TYPE_Q5_K:
            t = q5;
            break;
        case HTP_TYPE_Q6_K:
            t = q6;
            break;
        default:
            t = q4;
            break;
    }
    t[nc - 1](out, group, nsb, a);
}

#else  // portable C, and HVX on Hexagon

#if defined(__HVX__)

// ---------------------------------------------------------------------------
// Dot products: HVX (v67). The portable code's integer sums 32 lanes at a
// time, then its float step (kq_accumulate) row by row: the same bits.
//
// Lanes: two row groups A and B (decode: a pair of groups a call), or one
// group twice (several columns against one group). hvx_join puts a 64-byte
// chunk of A's tile in lanes 0-15 and the same chunk of B's in lanes 16-31;
// a chunk holds 4 consecutive elements of the 16 rows in its low nibbles and
// the next 4 in its high ones (kquant-tiles.h), so one vrmpy with the
// column's 4 activation bytes in a scalar register adds them into all 32
// rows. Each sub-block's 32-lane sum is then multiplied by the rows' scales
// (bytes sc[j][r] of the scale part, laid out by kq_hvx_scales so that one
// vrmpy with a one-byte selector makes them words), and Q4_K/Q5_K's mins by
// the column's 32-element sums with one 16-bit pairwise multiply-add a pair
// (the mn[p][r][2] layout).
// ---------------------------------------------------------------------------

// The scale bytes of 8 sub-blocks (sc[8][16]: row r of sub-block j at
// 16 j + r) of A and B as words: vshuffb then vshuffh gather bytes i, 64 + i,
// 32 + i, 96 + i into word i, which are sub-blocks (0, 4, 2, 6) of row i for
// i < 16 and (1, 5, 3, 7) of row i - 16 above; joined, lo holds the first
// four sub-blocks' bytes, hi the others, A's rows in lanes 0-15, B's in 16-31.
static inline hvx_vv kq_hvx_scales(const uint8_t * sa, const uint8_t * sb) {
    const hvx_v ta = __builtin_HEXAGON_V6_vshuffh_128B(__builtin_HEXAGON_V6_vshuffb_128B(hvx_ld(sa)));
    const hvx_v tb = __builtin_HEXAGON_V6_vshuffh_128B(__builtin_HEXAGON_V6_vshuffb_128B(hvx_ld(sb)));
    return hvx_join(ta, tb);
}

// Sub-block j's scales from kq_hvx_scales as words, unsigned (Q4_K, Q5_K) or signed (Q6_K).
static inline int kq_hvx_scale_byte(int j) {
    return ((j >> 1) & 1) * 2 + (j >> 2);
}

static inline hvx_v kq_hvx_scale_u(hvx_vv s, int j) {
    return hvx_rmpy((j & 1) ? hvx_hi(s) : hvx_lo(s), 1 << (8 * kq_hvx_scale_byte(j)));
}

static inline hvx_v kq_hvx_scale_s(hvx_vv s, int j) {
    return __builtin_HEXAGON_V6_vrmpybv_128B((j & 1) ? hvx_hi(s) : hvx_lo(s), hvx_w(1 << (8 * kq_hvx_scale_byte(j))));
}

// The last 64 bytes of A's and B's scale parts (parts of `bytes` bytes at
// sa, sb) as floats, A's first: fd[0..31] from A, [32..63] from B. For
// Q4_K/Q5_K that is d (16) then dmin (16); Q6_K's d is the upper 16 of each
// 32. Loaded as the whole vectors that end there (see hvx.h: a 64-byte copy
// to a staging buffer became a load past the end of a group's last tile).
static inline void kq_hvx_d(const uint8_t * sa, const uint8_t * sb, size_t bytes, float fd[64]) {
    const hvx_vv j = hvx_join(hvx_ld(sa + bytes - 128), hvx_ld(sb + bytes - 128));
    hvx_fp16_to_fp32_64_v(hvx_hi(j), fd);
}

// Q4_K (q5 = 0) / Q5_K: nc columns against A (outa) and, when two, B (outb).
static inline __attribute__((always_inline)) void kq_hvx_kmin(const int q5, const int nc, const uint8_t * ga,
                                                              const uint8_t * gb, const int two, int64_t nsb,
                                                              const struct htp_q8k_block * const * a,
                                                              float (*outa)[HTP_KQ_R], float (*outb)[HTP_KQ_R]) {
    const size_t qbytes = q5 ? sizeof(struct htp_q5k_q) : sizeof(struct htp_q4k_q);
    for (int i = 0; i < nc; i++) {
        memset(outa[i], 0, sizeof outa[i]);
        if (two) {
            memset(outb[i], 0, sizeof outb[i]);
        }
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *qa = ga + (size_t)b * qbytes, *qb = gb + (size_t)b * qbytes;
        const struct htp_kmin_s * sa = (const struct htp_kmin_s *)(const void *)(ga + (size_t)nsb * qbytes +
                                                                                 (size_t)b * sizeof(struct htp_kmin_s));
        const struct htp_kmin_s * sb = (const struct htp_kmin_s *)(const void *)(gb + (size_t)nsb * qbytes +
                                                                                 (size_t)b * sizeof(struct htp_kmin_s));
        const hvx_vv sc = kq_hvx_scales(sa->sc[0], sb->sc[0]);
        hvx_v isum[4], msum[4];
        for (int i = 0; i < nc; i++) {
            isum[i] = msum[i] = hvx_zero();
        }
        for (int j = 0; j < 8; j++) {
            const size_t qs = htp_kmin_qs_off(q5, j, 0);
            const hvx_vv x01 = hvx_join(hvx_ld(qa + qs), hvx_ld(qb + qs));  // chunks 0, 1
            const hvx_vv x23 = hvx_join(hvx_ld(qa + qs + 128), hvx_ld(qb + qs + 128));
            const hvx_v x[4] = {hvx_lo(x01), hvx_hi(x01), hvx_lo(x23), hvx_hi(x23)};
            hvx_v lo[4], hi[4];  // elements 8 c + 0..3 and 8 c + 4..7 of the sub-block
            hvx_v mw[8];         // bit 4: mask 2 c (low nibbles), 2 c + 1 (high) of qh[j][c]
            if (q5) {
                // Q5_K's masks of sub-block j, A's and B's zipped (a load past the last
                // sub-block reads the group's scale parts)
                const size_t qh = qs + offsetof(struct htp_q5k_sub, qh);
                hvx_mask_words(hvx_lo(hvx_zip(hvx_ld(qa + qh), hvx_ld(qb + qh), 8)), mw);
            }
            for (int c = 0; c < 4; c++) {
                lo[c] = hvx_nib_lo(x[c]);
                hi[c] = hvx_nib_hi(x[c]);
                if (q5) {
                    lo[c] = hvx_mask_or(lo[c], mw[2 * c], 4);
                    hi[c] = hvx_mask_or(hi[c], mw[2 * c + 1], 4);
                }
            }
            const hvx_v scj = kq_hvx_scale_u(sc, j);
            for (int i = 0; i < nc; i++) {
                const int8_t * y = a[i][b].qs + 32 * j;
                hvx_v t = hvx_rmpy(lo[0], hvx_word(y));
                t = hvx_rmpy_acc(t, hi[0], hvx_word(y + 4));
                for (int c = 1; c < 4; c++) {
                    t = hvx_rmpy_acc(t, lo[c], hvx_word(y + 8 * c));
                    t = hvx_rmpy_acc(t, hi[c], hvx_word(y + 8 * c + 4));
                }
                isum[i] = __builtin_HEXAGON_V6_vmpyiewuh_acc_128B(isum[i], t, scj);
            }
        }
        // Mins: word (p, r) of mn is the pair (m_2p, m_2p+1) of row r, widened to halfwords.
        const hvx_vv ua = __builtin_HEXAGON_V6_vunpackub_128B(hvx_ld(sa->mn[0][0]));
        const hvx_vv ub = __builtin_HEXAGON_V6_vunpackub_128B(hvx_ld(sb->mn[0][0]));
        const hvx_vv m01 = hvx_join(hvx_lo(ua), hvx_lo(ub)), m23 = hvx_join(hvx_hi(ua), hvx_hi(ub));
        const hvx_v mp[4] = {hvx_lo(m01), hvx_hi(m01), hvx_lo(m23), hvx_hi(m23)};
        float fd[64] HVX_ALIGN;
        kq_hvx_d((const uint8_t *)sa, (const uint8_t *)sb, sizeof *sa, fd);  // d[16][2] then dmin[16][2]
        for (int i = 0; i < nc; i++) {
            for (int p = 0; p < 4; p++) {
                int32_t pair;
                memcpy(&pair, &a[i][b].bsum32[2 * p], 4);
                msum[i] = __builtin_HEXAGON_V6_vdmpyhsat_acc_128B(msum[i], mp[p], pair);
            }
            int32_t is[32] HVX_ALIGN, ms[32] HVX_ALIGN;
            hvx_st(is, isum[i]);
            hvx_st(ms, msum[i]);
            const float yd = a[i][b].d;
            for (int r = 0; r < HTP_KQ_R; r++) {
                kq_accumulate(&outa[i][r], fd[r], fd[16 + r], yd, is[r], ms[r]);
                if (two) {
                    kq_accumulate(&outb[i][r], fd[32 + r], fd[48 + r], yd, is[16 + r], ms[16 + r]);
                }
            }
        }
    }
}

// Q6_K: the same with 16 sub-blocks of 16, two bits above the nibble from
// their qh byte's field, signed scales and the -32 offset applied per
// sub-block through the column's 16-element sums.
static inline __attribute__((always_inline)) void kq_hvx_q6(const int nc, const uint8_t * ga, const uint8_t * gb,
                                                            const int two, int64_t nsb,
                                                            const struct htp_q8k_block * const * a,
                                                            float (*outa)[HTP_KQ_R], float (*outb)[HTP_KQ_R]) {
    const size_t qbytes = sizeof(struct htp_q6k_q);
    for (int i = 0; i < nc; i++) {
        memset(outa[i], 0, sizeof outa[i]);
        if (two) {
            memset(outb[i], 0, sizeof outb[i]);
        }
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *qa = ga + (size_t)b * qbytes, *qb = gb + (size_t)b * qbytes;
        const struct htp_q6k_s * sa =
            (const struct htp_q6k_s *)(const void *)(ga + (size_t)nsb * qbytes + (size_t)b * sizeof(struct htp_q6k_s));
        const struct htp_q6k_s * sb =
            (const struct htp_q6k_s *)(const void *)(gb + (size_t)nsb * qbytes + (size_t)b * sizeof(struct htp_q6k_s));
        const hvx_vv sc[2] = {kq_hvx_scales((const uint8_t *)sa->sc[0], (const uint8_t *)sb->sc[0]),
                              kq_hvx_scales((const uint8_t *)sa->sc[8], (const uint8_t *)sb->sc[8])};
        hvx_v isum[4];
        for (int i = 0; i < nc; i++) {
            isum[i] = hvx_zero();
        }
        for (int s = 0; s < 16; s++) {
            const size_t ql = (size_t)s * sizeof(struct htp_q6k_sub), qh = ql + offsetof(struct htp_q6k_sub, qh);
            const hvx_vv x = hvx_join(hvx_ld(qa + ql), hvx_ld(qb + ql));  // chunks 0, 1
            const hvx_v xc[2] = {hvx_lo(x), hvx_hi(x)};
            // s[s].qh of A and B (a load past the last one reads the group's scale parts), each
            // byte's four 2-bit fields brought to bits 4-5 (kquant-tiles.h)
            const hvx_v f = hvx_lo(hvx_join(hvx_ld(qa + qh), hvx_ld(qb + qh))), f30 = hvx_b(0x30);
            hvx_v lo[2], hi[2];  // elements 8 c + 0..3 and 8 c + 4..7 of the sub-block
            lo[0] = hvx_nib_lo(xc[0]) | (f & f30);
            hi[0] = hvx_nib_hi(xc[0]) | (hvx_lsr_b(f, 2) & f30);
            lo[1] = hvx_nib_lo(xc[1]) | (__builtin_HEXAGON_V6_vaslh_128B(f, 4) & f30);
            hi[1] = hvx_nib_hi(xc[1]) | (__builtin_HEXAGON_V6_vaslh_128B(f, 2) & f30);
            const hvx_v scs = kq_hvx_scale_s(sc[s / 8], s % 8);
            for (int i = 0; i < nc; i++) {
                const int8_t * y = a[i][b].qs + 16 * s;
                hvx_v t = hvx_w(-32 * a[i][b].bsum16[s]);
                t = hvx_rmpy_acc(t, lo[0], hvx_word(y));
                t = hvx_rmpy_acc(t, hi[0], hvx_word(y + 4));
                t = hvx_rmpy_acc(t, lo[1], hvx_word(y + 8));
                t = hvx_rmpy_acc(t, hi[1], hvx_word(y + 12));
                isum[i] = __builtin_HEXAGON_V6_vmpyiewh_acc_128B(isum[i], t, scs);
            }
        }
        float fd[64] HVX_ALIGN;
        kq_hvx_d((const uint8_t *)sa, (const uint8_t *)sb, sizeof *sa, fd);  // d[16][2]: fd[16 ..], fd[48 ..]
        for (int i = 0; i < nc; i++) {
            int32_t is[32] HVX_ALIGN;
            hvx_st(is, isum[i]);
            const float yd = a[i][b].d;
            for (int r = 0; r < HTP_KQ_R; r++) {
                kq_accumulate(&outa[i][r], fd[16 + r], 0.0f, yd, is[r], 0);
                if (two) {
                    kq_accumulate(&outb[i][r], fd[48 + r], 0.0f, yd, is[16 + r], 0);
                }
            }
        }
    }
}

// One instance per (type, column count) with one group twice, and per type
// the pair (decode): type and nc must be constants in the loops (a runtime
// q5 let clang 14 issue Q5_K's mask loads for Q4_K too, past the end of a
// one-super-block Q4_K group).
#define KQ_HVX_INST(T, q5, nc)                                                            \
    static void kq_hvx_##T##_##nc(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb, \
                                  const struct htp_q8k_block * const * a) {               \
        if (q5 < 0) {                                                                     \
            kq_hvx_q6(nc, g, g, 0, nsb, a, out, NULL);                                    \
        } else {                                                                          \
            kq_hvx_kmin(q5, nc, g, g, 0, nsb, a, out, NULL);                              \
        }                                                                                 \
    }
#define KQ_HVX_TYPE(T, q5)                                                                                     \
    KQ_HVX_INST(T, q5, 1)                                                                                      \
    KQ_HVX_INST(T, q5, 2)                                                                                      \
    KQ_HVX_INST(T, q5, 3)                                                                                      \
    KQ_HVX_INST(T, q5, 4)                                                                                      \
    static void kq_hvx_##T##_pair(float out[2][HTP_KQ_R], const uint8_t * g0, const uint8_t * g1, int64_t nsb, \
                                  const struct htp_q8k_block * a) {                                            \
        if (q5 < 0) {                                                                                          \
            kq_hvx_q6(1, g0, g1, 1, nsb, &a, out, out + 1);                                                    \
        } else {                                                                                               \
            kq_hvx_kmin(q5, 1, g0, g1, 1, nsb, &a, out, out + 1);                                              \
        }                                                                                                      \
    }
KQ_HVX_TYPE(q4, 0)
KQ_HVX_TYPE(q5, 1)
KQ_HVX_TYPE(q6, -1)
#undef KQ_HVX_TYPE
#undef KQ_HVX_INST

// Q2_K, Q3_K, IQ4_XS: the same frame. A sub-block's quants become nv
// vectors of unsigned bytes, vector k = its elements 4 k .. 4 k + 3 of A's
// 16 rows (lanes 0-15) and B's (16-31): Q2_K/Q3_K the 2-bit fields k of
// qs[s] (plus Q3_K's third bit from mask qh[s][k]), IQ4_XS the iq4_nl table
// value + 128 of each nibble. The offsets (Q3_K 4, IQ4_XS 128) start the
// sub-block's sum through the column's sums; the scales multiply it signed
// (Q3_K, IQ4_XS) or unsigned (Q2_K, whose scale byte also holds the min).
static inline __attribute__((always_inline)) void kq_hvx_x(const uint32_t type, const int nc, const uint8_t * ga,
                                                           const uint8_t * gb, const int two, int64_t nsb,
                                                           const struct htp_q8k_block * const * a,
                                                           float (*outa)[HTP_KQ_R], float (*outb)[HTP_KQ_R]) {
    const int iq4 = type == HTP_TYPE_IQ4_XS, q2 = type == HTP_TYPE_Q2_K, q3 = type == HTP_TYPE_Q3_K;
    const int nsub = iq4 ? 8 : 16, sub = iq4 ? 32 : 16;
    const size_t qbytes = htp_kq_q_bytes(type), sbytes = htp_kq_s_bytes(type);
    const size_t qh_off = offsetof(struct htp_q3k_q, qh);
    const hvx_v lut = iq4 ? hvx_table16(htp_iq4nl_values, 128) : hvx_zero();
    for (int i = 0; i < nc; i++) {
        memset(outa[i], 0, sizeof outa[i]);
        if (two) {
            memset(outb[i], 0, sizeof outb[i]);
        }
    }
    for (int64_t b = 0; b < nsb; b++) {
        const uint8_t *qa = ga + (size_t)b * qbytes, *qb = gb + (size_t)b * qbytes;
        const uint8_t * sa = ga + (size_t)nsb * qbytes + (size_t)b * sbytes;
        const uint8_t * sb = gb + (size_t)nsb * qbytes + (size_t)b * sbytes;
        const hvx_vv sc[2] = {kq_hvx_scales(sa, sb), iq4 ? kq_hvx_scales(sa, sb) : kq_hvx_scales(sa + 128, sb + 128)};
        hvx_v isum[4], msum[4];
        for (int i = 0; i < nc; i++) {
            isum[i] = msum[i] = hvx_zero();
        }
        for (int sq = 0; sq < nsub; sq += 4) {  // Q3_K: sub-blocks sq .. sq + 3 share a load of their masks
            const hvx_vv qh =
                q3 ? hvx_zip(hvx_ld(qa + qh_off + 32 * sq), hvx_ld(qb + qh_off + 32 * sq), 8) : (hvx_vv){0};
            for (int hh = 0; hh < 2; hh++) {
                hvx_v mw[8];  // masks of sub-blocks sq + 2 hh (0-3) and sq + 2 hh + 1 (4-7)
                if (q3) {
                    hvx_mask_words(hh ? hvx_hi(qh) : hvx_lo(qh), mw);
                }
                const int s0 = sq + 2 * hh;
                const hvx_vv x2 = iq4 ? (hvx_vv){0} : hvx_join(hvx_ld(qa + 64 * s0), hvx_ld(qb + 64 * s0));
                for (int w = 0; w < 2; w++) {
                    const int s = s0 + w;
                    if (s >= nsub) {
                        break;
                    }
                    hvx_v u[8];
                    int nv;
                    if (iq4) {
                        const hvx_vv x01 = hvx_join(hvx_ld(qa + 256 * s), hvx_ld(qb + 256 * s));
                        const hvx_vv x23 = hvx_join(hvx_ld(qa + 256 * s + 128), hvx_ld(qb + 256 * s + 128));
                        const hvx_v x[4] = {hvx_lo(x01), hvx_hi(x01), hvx_lo(x23), hvx_hi(x23)};
                        for (int c = 0; c < 4; c++) {
                            u[2 * c] = hvx_lut16(hvx_nib_lo(x[c]), lut);
                            u[2 * c + 1] = hvx_lut16(hvx_nib_hi(x[c]), lut);
                        }
                        nv = 8;
                    } else {
                        const hvx_v x = w ? hvx_hi(x2) : hvx_lo(x2);
                        for (int k = 0; k < 4; k++) {
                            u[k] = (k ? hvx_lsr_b(x, 2 * k) : x) & hvx_b(3);
                            if (q3) {
                                u[k] = hvx_mask_or(u[k], mw[4 * w + k], 2);
                            }
                        }
                        nv = 4;
                    }
                    const hvx_v scw = q2 ? kq_hvx_scale_u(sc[s / 8], s % 8) : kq_hvx_scale_s(sc[s / 8], s % 8);
                    for (int i = 0; i < nc; i++) {
                        const int8_t * y = a[i][b].qs + sub * s;
                        hvx_v t = q3 ? hvx_w(-4 * a[i][b].bsum16[s])
                                  : iq4 ? hvx_w(-128 * a[i][b].bsum32[s])
                                        : hvx_zero();
                        for (int k = 0; k < nv; k++) {
                            t = hvx_rmpy_acc(t, u[k], hvx_word(y + 4 * k));
                        }
                        if (q2) {
                            isum[i] = __builtin_HEXAGON_V6_vmpyiewuh_acc_128B(isum[i], t, scw & hvx_w(15));
                            msum[i] = __builtin_HEXAGON_V6_vmpyiewh_acc_128B(msum[i], hvx_w(a[i][b].bsum16[s]),
                                                                             __builtin_HEXAGON_V6_vlsrw_128B(scw, 4));
                        } else {
                            isum[i] = __builtin_HEXAGON_V6_vmpyiewh_acc_128B(isum[i], t, scw);
                        }
                    }
                }
            }
        }
        float fd[64] HVX_ALIGN;
        kq_hvx_d(sa, sb, sbytes, fd);  // Q2_K: d, dmin; Q3_K, IQ4_XS: d in fd[16 ..], fd[48 ..]
        const int dd = q2 ? 0 : 16;
        for (int i = 0; i < nc; i++) {
            int32_t is[32] HVX_ALIGN, ms[32] HVX_ALIGN;
            hvx_st(is, isum[i]);
            hvx_st(ms, msum[i]);
            const float yd = a[i][b].d;
            for (int r = 0; r < HTP_KQ_R; r++) {
                kq_accumulate(&outa[i][r], fd[dd + r], q2 ? fd[16 + r] : 0.0f, yd, is[r], ms[r]);
                if (two) {
                    kq_accumulate(&outb[i][r], fd[32 + dd + r], q2 ? fd[48 + r] : 0.0f, yd, is[16 + r], ms[16 + r]);
                }
            }
        }
    }
}

#define KQ_HVX_X_INST(T, name, nc)                                                           \
    static void kq_hvx_##name##_##nc(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb, \
                                     const struct htp_q8k_block * const * a) {               \
        kq_hvx_x(T, nc, g, g, 0, nsb, a, out, NULL);                                         \
    }
#define KQ_HVX_X_TYPE(T, name)                                                                                    \
    KQ_HVX_X_INST(T, name, 1)                                                                                     \
    KQ_HVX_X_INST(T, name, 2)                                                                                     \
    KQ_HVX_X_INST(T, name, 3)                                                                                     \
    KQ_HVX_X_INST(T, name, 4)                                                                                     \
    static void kq_hvx_##name##_pair(float out[2][HTP_KQ_R], const uint8_t * g0, const uint8_t * g1, int64_t nsb, \
                                     const struct htp_q8k_block * a) {                                            \
        kq_hvx_x(T, 1, g0, g1, 1, nsb, &a, out, out + 1);                                                         \
    }
KQ_HVX_X_TYPE(HTP_TYPE_Q3_K, q3)
KQ_HVX_X_TYPE(HTP_TYPE_Q2_K, q2)
KQ_HVX_X_TYPE(HTP_TYPE_IQ4_XS, iq4)
#undef KQ_HVX_X_TYPE
#undef KQ_HVX_X_INST

typedef void (*kq_hvx_group_fn)(float out[4][HTP_KQ_R], const uint8_t * g, int64_t nsb,
                                const struct htp_q8k_block * const * a);
typedef void (*kq_hvx_pair_fn)(float out[2][HTP_KQ_R], const uint8_t * g0, const uint8_t * g1, int64_t nsb,
                               const struct htp_q8k_block * a);

#endif  // __HVX__

void htp_kq_dot_group(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc) {
#if defined(__HVX__)
    if (!htp_kernels_portable()) {
        static const kq_hvx_group_fn q4[4] = {kq_hvx_q4_1, kq_hvx_q4_2, kq_hvx_q4_3, kq_hvx_q4_4};
        static const kq_hvx_group_fn q5[4] = {kq_hvx_q5_1, kq_hvx_q5_2, kq_hvx_q5_3, kq_hvx_q5_4};
        static const kq_hvx_group_fn q6[4] = {kq_hvx_q6_1, kq_hvx_q6_2, kq_hvx_q6_3, kq_hvx_q6_4};
        static const kq_hvx_group_fn q3[4] = {kq_hvx_q3_1, kq_hvx_q3_2, kq_hvx_q3_3, kq_hvx_q3_4};
        static const kq_hvx_group_fn q2[4] = {kq_hvx_q2_1, kq_hvx_q2_2, kq_hvx_q2_3, kq_hvx_q2_4};
        static const kq_hvx_group_fn iq4[4] = {kq_hvx_iq4_1, kq_hvx_iq4_2, kq_hvx_iq4_3, kq_hvx_iq4_4};
        const kq_hvx_group_fn * t;
        switch (type) {
            case HTP_TYPE_IQ4_XS:
                t = iq4;
                break;
            case HTP_TYPE_Q2_K:
                t = q2;
                break;
            case HTP_TYPE_Q3_K:
                t = q3;
                break;
            case HTP_TYPE_Q5_K:
                t = q5;
                break;
            case HTP_TYPE_Q6_K:
                t = q6;
                break;
            default:
                t = q4;
                break;
        }
        t[nc - 1](out, group, nsb, a);
        return;
    }
#endif
    htp_kq_dot_group_ref(type, out, group, nsb, a, nc);
}

void htp_kq_dot_multi(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * g0, size_t gstride, int ng, int64_t nsb,
                      const struct htp_q8k_block * a) {
#if defined(__HVX__)
    if (!htp_kernels_portable()) {  // ng is 2 or 4: pairs of groups
        kq_hvx_pair_fn pair;
        switch (type) {
            case HTP_TYPE_IQ4_XS:
                pair = kq_hvx_iq4_pair;
                break;
            case HTP_TYPE_Q2_K:
                pair = kq_hvx_q2_pair;
                break;
            case HTP_TYPE_Q3_K:
                pair = kq_hvx_q3_pair;
                break;
            case HTP_TYPE_Q5_K:
                pair = kq_hvx_q5_pair;
                break;
            case HTP_TYPE_Q6_K:
                pair = kq_hvx_q6_pair;
                break;
            default:
                pair = kq_hvx_q4_pair;
                break;
        }
        for (int h = 0; h < ng; h += 2) {
            pair(out + h, g0 + (size_t)h * gstride, g0 + (size_t)(h + 1) * gstride, nsb, a);
        }
        return;
    }
#endif
    float o[4][HTP_KQ_R];
    for (int h = 0; h < ng; h++) {
        htp_kq_dot_group_ref(type, o, g0 + (size_t)h * gstride, nsb, &a, 1);
        memcpy(out[h], o[0], sizeof out[h]);
    }
}

#endif
