// kquant-dot.c: arithmetic on K-quant (Q4_K, Q5_K, Q6_K) tiles for the
// MUL_MAT / MUL_MAT_ID / GET_ROWS kernels: dequantization (tiled and plain
// rows), the Q8_K activation blocks, and the 16-row dot products. The tile
// format itself is the contract's (contract/kquant-tiles.h).
//
// The dot products compute exactly ggml's integer sums (weights times the
// int8 activations of struct htp_q8k_block), then scale in fp32:
//   Q4_K/Q5_K  d * da * sum_j sc_j * sum(q * a)  -  dmin * da * sum_j m_j * sum(a)
//   Q6_K       d * da * sum_s sc_s * (sum((q + 32) * a) - 32 * sum(a))      (q + 32 = the stored 0..63)
// Bounds: |sum(q * a)| over a sub-block <= 32 * 31 * 127, times a 6-bit scale,
// times 8 sub-blocks (or 16 * 63 * 127 * 128 * 16 for Q6_K) stays in int32.

#include "kquant-dot.h"

#include <math.h>
#include <string.h>

#include "fp16.h"
#include "proto/htp-proto.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define KQ_AVX512 1
#include <immintrin.h>
#endif

// ---------------------------------------------------------------------------
// Dequantization
// ---------------------------------------------------------------------------

static void kq_dequant_sb(uint32_t type, float * y, const struct htp_kq_superblock * x) {
    const float d = htp_fp16_to_fp32(x->d);
    if (type == HTP_TYPE_Q6_K) {
        for (int e = 0; e < HTP_KQ_QK; e++) {
            y[e] = d * (float)(int8_t)x->sc[e / 16] * (float)((int)x->q[e] - 32);
        }
        return;
    }
    const float dmin = htp_fp16_to_fp32(x->dmin);
    for (int j = 0; j < 8; j++) {
        const float dj = d * (float)x->sc[j], mj = dmin * (float)x->mn[j];
        for (int l = 0; l < 32; l++) {
            y[32 * j + l] = dj * (float)x->q[32 * j + l] - mj;
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

void htp_kq_dequant_row(uint32_t type, float * y, const uint8_t * row, int64_t nsb) {
    const size_t bs = htp_kq_block_bytes(type);
    for (int64_t b = 0; b < nsb; b++) {
        struct htp_kq_superblock x;
        htp_kq_block_decode(type, row + (size_t)b * bs, &x);
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
        // Round half to even through the fp32 mantissa (x * iscale is
        // within +-127.5): the integer lands in the low mantissa bits.
        const float t = iscale * x[i] + 12582912.0f;
        int32_t     v;
        memcpy(&v, &t, 4);
        v        = (v & 0x007fffff) - 0x00400000;
        o->qs[i] = (int8_t)(v < 127 ? v : 127);
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
    __m512 v[16];
    __m512 amax = _mm512_setzero_ps();
    for (int i = 0; i < 16; i++) {
        v[i] = _mm512_loadu_ps(x + 16 * i);
        amax = _mm512_max_ps(amax, _mm512_abs_ps(v[i]));
    }
    const float m = _mm512_reduce_max_ps(amax);
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

void htp_kq_quantize_q8k(struct htp_q8k_block * y, const float * x, int64_t k) {
    for (int64_t b = 0; b < k / HTP_KQ_QK; b++, x += HTP_KQ_QK) {
#ifdef KQ_AVX512
        kq_quantize_sb_avx512(&y[b], x);
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

void htp_kq_dot_group_ref(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                          const struct htp_q8k_block * const * a, int nc) {
    const size_t qb = htp_kq_q_bytes(type), sb = htp_kq_s_bytes(type);
    const int    q6 = type == HTP_TYPE_Q6_K;
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
                const struct htp_q8k_block * y    = &a[c][b];
                int32_t                      isum = 0, msum = 0;
                if (q6) {
                    for (int g = 0; g < 16; g++) {
                        int32_t t = 0;
                        for (int i = 0; i < 16; i++) {
                            t += x.q[16 * g + i] * y->qs[16 * g + i];
                        }
                        isum += (int8_t)x.sc[g] * (t - 32 * y->bsum16[g]);
                    }
                } else {
                    for (int j = 0; j < 8; j++) {
                        int32_t t = 0;
                        for (int i = 0; i < 32; i++) {
                            t += x.q[32 * j + i] * y->qs[32 * j + i];
                        }
                        isum += x.sc[j] * t;
                        msum += x.mn[j] * y->bsum32[j];
                    }
                }
                out[c][r] += d * y->d * (float)isum - dmin * y->d * (float)msum;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Dot products: AVX-512 VNNI. One zmm lane per row of the group: a 64-byte
// chunk of quants against 4 broadcast activation bytes per vpdpbusd.
// ---------------------------------------------------------------------------

#ifdef KQ_AVX512

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
        const struct htp_q5k_q *  q = (const struct htp_q5k_q *)(const void *)(group + (size_t)b * qb);
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
                const __m512i v  = _mm512_loadu_si512(q->qs[j][c]);
                __m512i       lo = _mm512_and_si512(v, m4);
                __m512i       hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                if (q5) {
                    lo = _mm512_mask_add_epi8(lo, kq_mask(q->qh[j][c][0]), lo, b16);
                    hi = _mm512_mask_add_epi8(hi, kq_mask(q->qh[j][c][1]), hi, b16);
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

static inline __attribute__((always_inline)) void kq_dot_q6_avx512(int nc, float out[4][HTP_KQ_R],
                                                                   const uint8_t * group, int64_t nsb,
                                                                   const struct htp_q8k_block * const * a) {
    const uint8_t * sbase = group + (size_t)nsb * sizeof(struct htp_q6k_q);
    const __m512i   m4    = _mm512_set1_epi8(15);
    const __m512i   b16 = _mm512_set1_epi8(16), b32 = _mm512_set1_epi8(32);
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
            __m512i dl[4], dh[4];
            for (int i = 0; i < 4; i++) {
                dl[i] = _mm512_setzero_si512();
                dh[i] = _mm512_setzero_si512();
            }
            for (int c = 0; c < 2; c++) {
                const __m512i v  = _mm512_loadu_si512(q->ql[g][c]);
                __m512i       lo = _mm512_and_si512(v, m4);
                __m512i       hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                lo               = _mm512_mask_add_epi8(lo, kq_mask(q->qh[g][c][0]), lo, b16);
                lo               = _mm512_mask_add_epi8(lo, kq_mask(q->qh[g][c][1]), lo, b32);
                hi               = _mm512_mask_add_epi8(hi, kq_mask(q->qh[g][c][2]), hi, b16);
                hi               = _mm512_mask_add_epi8(hi, kq_mask(q->qh[g][c][3]), hi, b32);
                for (int i = 0; i < nc; i++) {
                    const int8_t * y = a[i][b].qs + 16 * g + 8 * c;
                    dl[i]            = _mm512_dpbusd_epi32(dl[i], lo, kq_bcast4(y));
                    dh[i]            = _mm512_dpbusd_epi32(dh[i], hi, kq_bcast4(y + 4));
                }
            }
            const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s->sc[g]));
            for (int i = 0; i < nc; i++) {
                const __m512i off = _mm512_set1_epi32(32 * a[i][b].bsum16[g]);
                const __m512i t   = _mm512_sub_epi32(_mm512_add_epi32(dl[i], dh[i]), off);
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
// chains are independent, and every group's quant part is prefetched two
// super-blocks ahead: at n = 1 the single group kernels leave the core
// waiting on memory half of the time. Four groups stream Q4_K at about 1.2x
// two, 1.5x one (two threads, weights far larger than the caches).
//
// The inner loops take 32 steps a super-block, and a quant part is 32 cache
// lines for Q4_K but 40 for Q5_K and 48 for Q6_K (their high bits follow the
// low ones): step L prefetches line L and, while there are more, line 32 + L,
// so every line is asked for. (A fixed distance from the vector being read
// left a third of each Q6_K super-block to demand misses.) Always inlined:
// GCC 12 judged an out-of-line copy free of side effects (a prefetch stores
// nothing) and deleted every call, so the objdump of kquant.c showed no
// prefetch at all; check it there after touching this.
static inline __attribute__((always_inline)) void kq_prefetch_sb(const void * q, size_t qb, int L) {
    const char * p = (const char *)q + 2 * qb;
    _mm_prefetch(p + 64 * L, _MM_HINT_T0);
    if (32 + L < (int)(qb / 64)) {
        _mm_prefetch(p + 64 * (32 + L), _MM_HINT_T0);
    }
}

static inline __attribute__((always_inline)) void kq_dot_kmin_multi_avx512(int q5, int ng, float out[4][HTP_KQ_R],
                                                                           const uint8_t * g0, size_t gstride,
                                                                           int64_t                      nsb,
                                                                           const struct htp_q8k_block * a) {
    const size_t    qb     = q5 ? sizeof(struct htp_q5k_q) : sizeof(struct htp_q4k_q);
    const uint8_t * gs[4]  = {g0, g0 + gstride, g0 + 2 * gstride, g0 + 3 * gstride};
    const __m512i   m4     = _mm512_set1_epi8(15);
    const __m512i   b16    = _mm512_set1_epi8(16);
    __m512          acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_q5k_q *  q[4];
        const struct htp_kmin_s * s[4];
        for (int h = 0; h < ng; h++) {
            q[h] = (const struct htp_q5k_q *)(const void *)(gs[h] + (size_t)b * qb);
            s[h] = (const struct htp_kmin_s *)(const void *)(gs[h] + (size_t)nsb * qb +
                                                             (size_t)b * sizeof(struct htp_kmin_s));
        }
        __m512i isum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
        for (int j = 0; j < 8; j++) {
            __m512i dl[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
            __m512i dh[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
            for (int c = 0; c < 4; c++) {
                const int8_t * y  = a[b].qs + 32 * j + 8 * c;
                const __m512i  yl = kq_bcast4(y), yh = kq_bcast4(y + 4);
                for (int h = 0; h < ng; h++) {
                    kq_prefetch_sb(q[h], qb, 4 * j + c);
                    const __m512i v  = _mm512_loadu_si512(q[h]->qs[j][c]);
                    __m512i       lo = _mm512_and_si512(v, m4), hi;
                    if (q5) {
                        hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                        lo = _mm512_mask_add_epi8(lo, kq_mask(q[h]->qh[j][c][0]), lo, b16);
                        hi = _mm512_mask_add_epi8(hi, kq_mask(q[h]->qh[j][c][1]), hi, b16);
                    } else {
                        hi = _mm512_andnot_si512(m4, v);  // 16 x the high nibble
                    }
                    dl[h] = _mm512_dpbusd_epi32(dl[h], lo, yl);
                    dh[h] = _mm512_dpbusd_epi32(dh[h], hi, yh);
                }
            }
            for (int h = 0; h < ng; h++) {
                const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s[h]->sc[j]));
                const __m512i hi = q5 ? dh[h] : _mm512_srai_epi32(dh[h], 4);  // exact: multiples of 16
                isum[h]          = _mm512_add_epi32(isum[h], _mm512_mullo_epi32(_mm512_add_epi32(dl[h], hi), sc));
            }
        }
        const __m512 da = _mm512_set1_ps(a[b].d);
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
    const uint8_t * gs[4] = {g0, g0 + gstride, g0 + 2 * gstride, g0 + 3 * gstride};
    const __m512i   m4    = _mm512_set1_epi8(15);
    const __m512i   b16 = _mm512_set1_epi8(16), b32 = _mm512_set1_epi8(32);
    __m512          acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_q6k_q * q[4];
        const struct htp_q6k_s * s[4];
        for (int h = 0; h < ng; h++) {
            q[h] = (const struct htp_q6k_q *)(const void *)(gs[h] + (size_t)b * sizeof(struct htp_q6k_q));
            s[h] = (const struct htp_q6k_s *)(const void *)(gs[h] + (size_t)nsb * sizeof(struct htp_q6k_q) +
                                                            (size_t)b * sizeof(struct htp_q6k_s));
        }
        __m512i isum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
        for (int g = 0; g < 16; g++) {
            __m512i dl[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
            __m512i dh[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
            for (int c = 0; c < 2; c++) {
                const int8_t * y  = a[b].qs + 16 * g + 8 * c;
                const __m512i  yl = kq_bcast4(y), yh = kq_bcast4(y + 4);
                for (int h = 0; h < ng; h++) {
                    kq_prefetch_sb(q[h], sizeof(struct htp_q6k_q), 2 * g + c);
                    const __m512i v  = _mm512_loadu_si512(q[h]->ql[g][c]);
                    __m512i       lo = _mm512_and_si512(v, m4);
                    __m512i       hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                    lo               = _mm512_mask_add_epi8(lo, kq_mask(q[h]->qh[g][c][0]), lo, b16);
                    lo               = _mm512_mask_add_epi8(lo, kq_mask(q[h]->qh[g][c][1]), lo, b32);
                    hi               = _mm512_mask_add_epi8(hi, kq_mask(q[h]->qh[g][c][2]), hi, b16);
                    hi               = _mm512_mask_add_epi8(hi, kq_mask(q[h]->qh[g][c][3]), hi, b32);
                    dl[h]            = _mm512_dpbusd_epi32(dl[h], lo, yl);
                    dh[h]            = _mm512_dpbusd_epi32(dh[h], hi, yh);
                }
            }
            const __m512i off = _mm512_set1_epi32(32 * a[b].bsum16[g]);
            for (int h = 0; h < ng; h++) {
                const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s[h]->sc[g]));
                const __m512i t  = _mm512_sub_epi32(_mm512_add_epi32(dl[h], dh[h]), off);
                isum[h]          = _mm512_add_epi32(isum[h], _mm512_mullo_epi32(t, sc));
            }
        }
        const __m512 da = _mm512_set1_ps(a[b].d);
        for (int h = 0; h < ng; h++) {
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s[h]->d));
            acc[h]         = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[h]), _mm512_mul_ps(d, da), acc[h]);
        }
    }
    for (int h = 0; h < ng; h++) {
        _mm512_storeu_ps(out[h], acc[h]);
    }
}

// One instance per (type, group count): ng must be a constant in the loops.
#define KQ_MULTI(ng)                                                                                 \
    static void kq_multi_q4_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb, \
                                 const struct htp_q8k_block * a) {                                   \
        kq_dot_kmin_multi_avx512(0, ng, out, g0, gs, nsb, a);                                        \
    }                                                                                                \
    static void kq_multi_q5_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb, \
                                 const struct htp_q8k_block * a) {                                   \
        kq_dot_kmin_multi_avx512(1, ng, out, g0, gs, nsb, a);                                        \
    }                                                                                                \
    static void kq_multi_q6_##ng(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb, \
                                 const struct htp_q8k_block * a) {                                   \
        kq_dot_q6_multi_avx512(ng, out, g0, gs, nsb, a);                                             \
    }
KQ_MULTI(2)
KQ_MULTI(4)
#undef KQ_MULTI

void htp_kq_dot_multi(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * g0, size_t gstride, int ng, int64_t nsb,
                      const struct htp_q8k_block * a) {
    typedef void (*fn)(float out[4][HTP_KQ_R], const uint8_t * g0, size_t gs, int64_t nsb,
                       const struct htp_q8k_block * a);
    static const fn q4[2] = {kq_multi_q4_2, kq_multi_q4_4}, q5[2] = {kq_multi_q5_2, kq_multi_q5_4},
                    q6[2] = {kq_multi_q6_2, kq_multi_q6_4};
    const fn * t          = type == HTP_TYPE_Q6_K ? q6 : type == HTP_TYPE_Q5_K ? q5 : q4;
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
    static const kq_dot_fn q4[4] = {kq_q4_1, kq_q4_2, kq_q4_3, kq_q4_4};
    static const kq_dot_fn q5[4] = {kq_q5_1, kq_q5_2, kq_q5_3, kq_q5_4};
    static const kq_dot_fn q6[4] = {kq_q6_1, kq_q6_2, kq_q6_3, kq_q6_4};
    const kq_dot_fn *      t     = type == HTP_TYPE_Q6_K ? q6 : type == HTP_TYPE_Q5_K ? q5 : q4;
    t[nc - 1](out, group, nsb, a);
}

#else  // portable

void htp_kq_dot_group(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * group, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc) {
    htp_kq_dot_group_ref(type, out, group, nsb, a, nc);
}

void htp_kq_dot_multi(uint32_t type, float out[4][HTP_KQ_R], const uint8_t * g0, size_t gstride, int ng, int64_t nsb,
                      const struct htp_q8k_block * a) {
    float o[4][HTP_KQ_R];
    for (int h = 0; h < ng; h++) {
        htp_kq_dot_group_ref(type, o, g0 + (size_t)h * gstride, nsb, &a, 1);
        memcpy(out[h], o[0], sizeof out[h]);
    }
}

#endif
