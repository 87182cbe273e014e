// iq-dot.c: decoded tiles and 16-row dot products of the IQ codebook types
// (iq-dot.h; the decoded tile is contract/iq-tiles.h's).
//
// Decode is scalar C on every target (a codebook lookup per 8 weights, once
// per row group and column block, see matmul-kquant.c); the dot products over
// decoded tiles have AVX-512 VNNI and HVX paths. HVX (v67): a 128-byte vector
// holds two 64-byte chunks (4 elements of the 16 rows each); vrmpy with the
// first chunk's 4 activation bytes as its scalar gives the right sums in
// lanes 0-15, with the second's in lanes 16-31; rotating the second product
// by 64 bytes and adding folds a sub-block into lanes 0-15, which the
// sub-block's scale words multiply (vmpyie: word by the low halfword). The
// float step stays scalar in the portable order (v67 has no HVX float).

#include "iq-dot.h"

#include <string.h>

#include "fp16.h"
#include "proto/htp-proto.h"
#include "quant.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define IQ_AVX512 1
#include <immintrin.h>
#endif

#if defined(__HVX__)
#include "hvx.h"
#endif

void htp_iq_decode_group(htp_iq_decode_fn decode, const struct htp_codebooks * cb, const uint8_t * base,
                         size_t row_stride, size_t blk_stride, int nrows, int64_t nsb, struct htp_iq_dtile * dg) {
    for (int64_t b = 0; b < nsb; b++) {
        struct htp_iq_dtile * t = dg + b;
        for (int r = 0; r < HTP_IQ_TILE_R; r++) {
            struct htp_iq_superblock x;
            if (r < nrows) {
                decode(base + (size_t)r * row_stride + (size_t)b * blk_stride, cb, &x);
            } else {
                memset(&x, 0, sizeof x);
            }
            for (int c = 0; c < 64; c++) {
                // q + 64 of 4 int8 (-64 .. 63) at once: flip bit 6, and bit 7 where it is set (q < 0)
                uint32_t w;
                memcpy(&w, x.q + 4 * c, 4);
                w ^= 0x40404040u ^ (w & 0x80808080u);
                memcpy(&t->q[c][4 * r], &w, 4);
            }
            for (int s = 0; s < 16; s++) {
                t->sc[s][r] = t->sc[s][r + 16] = x.sc[s];
            }
            t->d[r] = x.d;
        }
        memset(t->pad, 0, sizeof t->pad);
    }
}

void htp_iq_dequant_block(htp_iq_decode_fn decode, const struct htp_codebooks * cb, const uint8_t * block,
                          float y[HTP_IQ_QK]) {
    struct htp_iq_superblock x;
    decode(block, cb, &x);
    for (int s = 0; s < 16; s++) {
        const float dsc = x.d * (float)x.sc[s];
        for (int e = 0; e < 16; e++) {
            y[16 * s + e] = dsc * (float)x.q[16 * s + e];
        }
    }
}

// The float step of one activation block: out[r] += (d[r] * ad) * tot[r].
static inline void iq_accumulate(float out[HTP_IQ_TILE_R], const float d[HTP_IQ_TILE_R], float ad,
                                 const int32_t tot[HTP_IQ_TILE_R]) {
    for (int r = 0; r < HTP_IQ_TILE_R; r++) {
        const float dd = d[r] * ad;
        const float p  = (float)tot[r] * dd;
        out[r]         = out[r] + p;
    }
}

void htp_iq_dot_group_ref(float out[4][HTP_IQ_TILE_R], const struct htp_iq_dtile * dg, int64_t nsb,
                          const struct htp_q8k_block * const * a, int nc) {
    for (int i = 0; i < nc; i++) {
        memset(out[i], 0, sizeof out[i]);
    }
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_iq_dtile * t = dg + b;
        for (int i = 0; i < nc; i++) {
            const struct htp_q8k_block * y = &a[i][b];
            int32_t                      tot[HTP_IQ_TILE_R];
            for (int r = 0; r < HTP_IQ_TILE_R; r++) {
                int32_t sum = 0;
                for (int s = 0; s < 16; s++) {
                    int32_t v = 0;
                    for (int k = 0; k < 4; k++) {
                        for (int j = 0; j < 4; j++) {
                            v += (int32_t)t->q[4 * s + k][4 * r + j] * y->qs[16 * s + 4 * k + j];
                        }
                    }
                    v -= 64 * (int32_t)y->bsum16[s];
                    sum += v * t->sc[s][r];
                }
                tot[r] = sum;
            }
            iq_accumulate(out[i], t->d, y->d, tot);
        }
    }
}

#ifdef IQ_AVX512

static inline int32_t iq_rd32(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

void htp_iq_dot_group(float out[4][HTP_IQ_TILE_R], const struct htp_iq_dtile * dg, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc) {
    __m512 acc[4];
    for (int i = 0; i < 4; i++) {
        acc[i] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_iq_dtile * t = dg + b;
        __m512i                     tot[4];
        for (int i = 0; i < 4; i++) {
            tot[i] = _mm512_setzero_si512();
        }
        for (int s = 0; s < 16; s++) {
            const __m512i w0  = _mm512_loadu_si512(t->q[4 * s]);
            const __m512i w1  = _mm512_loadu_si512(t->q[4 * s + 1]);
            const __m512i w2  = _mm512_loadu_si512(t->q[4 * s + 2]);
            const __m512i w3  = _mm512_loadu_si512(t->q[4 * s + 3]);
            const __m512i scv = _mm512_loadu_si512(t->sc[s]);
            for (int i = 0; i < nc; i++) {
                const int8_t * y = a[i][b].qs + 16 * s;
                __m512i        v = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w0, _mm512_set1_epi32(iq_rd32(y)));
                v                = _mm512_dpbusd_epi32(v, w1, _mm512_set1_epi32(iq_rd32(y + 4)));
                v                = _mm512_dpbusd_epi32(v, w2, _mm512_set1_epi32(iq_rd32(y + 8)));
                v                = _mm512_dpbusd_epi32(v, w3, _mm512_set1_epi32(iq_rd32(y + 12)));
                v                = _mm512_sub_epi32(v, _mm512_set1_epi32(64 * (int32_t)a[i][b].bsum16[s]));
                tot[i]           = _mm512_add_epi32(tot[i], _mm512_mullo_epi32(v, scv));
            }
        }
        const __m512 dv = _mm512_loadu_ps(t->d);
        for (int i = 0; i < nc; i++) {
            const __m512 dd = _mm512_mul_ps(dv, _mm512_set1_ps(a[i][b].d));
            acc[i]          = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_cvtepi32_ps(tot[i]), dd));
        }
    }
    for (int i = 0; i < nc; i++) {
        _mm512_storeu_ps(out[i], acc[i]);
    }
}

#elif defined(__HVX__)

void htp_iq_dot_group(float out[4][HTP_IQ_TILE_R], const struct htp_iq_dtile * dg, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc) {
    if (htp_kernels_portable()) {
        htp_iq_dot_group_ref(out, dg, nsb, a, nc);
        return;
    }
    for (int i = 0; i < nc; i++) {
        memset(out[i], 0, sizeof out[i]);
    }
    for (int64_t b = 0; b < nsb; b++) {
        const struct htp_iq_dtile * t = dg + b;
        for (int i = 0; i < nc; i++) {
            const struct htp_q8k_block * y   = &a[i][b];
            hvx_v                        tot = hvx_zero();
            for (int s = 0; s < 16; s++) {
                const hvx_v    x01 = hvx_ld(t->q[4 * s]);      // chunks 4 s, 4 s + 1
                const hvx_v    x23 = hvx_ld(t->q[4 * s + 2]);  // chunks 4 s + 2, 4 s + 3
                const int8_t * q   = y->qs + 16 * s;
                hvx_v          lo  = hvx_rmpy_acc(hvx_rmpy(x01, hvx_word(q)), x23, hvx_word(q + 8));      // lanes 0-15
                hvx_v          hi = hvx_rmpy_acc(hvx_rmpy(x01, hvx_word(q + 4)), x23, hvx_word(q + 12));  // lanes 16-31
                hvx_v          v  = lo + __builtin_HEXAGON_V6_vror_128B(hi, 64);
                v                 = v - hvx_w(64 * (int32_t)y->bsum16[s]);
                tot               = __builtin_HEXAGON_V6_vmpyiewuh_acc_128B(tot, v, hvx_ld(t->sc[s]));
            }
            int32_t HVX_ALIGN lanes[32];
            hvx_st(lanes, tot);
            iq_accumulate(out[i], t->d, y->d, lanes);
        }
    }
}

#else

void htp_iq_dot_group(float out[4][HTP_IQ_TILE_R], const struct htp_iq_dtile * dg, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc) {
    htp_iq_dot_group_ref(out, dg, nsb, a, nc);
}

#endif
