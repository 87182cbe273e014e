// flash-attn-ops.c: FLASH_ATTN_EXT, attention with an online softmax over
// blocks of the KV sequence, never materialising the n_q x n_kv score matrix.
//
//   src0 q     [DK, n_q, n_head, ne3]            F32/F16, any strides
//   src1 k     [DK, n_kv, n_head_kv, ne3k]       F32/F16/BF16 or a block type, any row strides
//   src2 v     [DV, n_kv, n_head_kv, ne3k]       as k, its own type
//   src3 mask  [>= n_kv, >= n_q, nm2 | n_head, nm3 | ne3]  F16/F32, optional
//   src4 sinks [>= n_head]                       F32, optional
//   dst        [DV, n_head, n_q, ne3]            F32, nb[0] = 4 (ggml's permute(0, 2, 1, 3))
//   params: [0] scale, [1] max_bias (ALiBi), [2] logit_softcap (floats), [3] precision (ignored:
//           we always accumulate in fp32)
//
// Query head h reads KV head h / (n_head / n_head_kv) (GQA). For a query row:
//
//   s_j = scale * q.k_j                 (then softcap * tanh(s_j / softcap) when softcap != 0)
//   s_j += slope(h) * mask[j]           (a -inf mask entry drops j)
//   out = sum_j e^(s_j - M) v_j / (sum_j e^(s_j - M) + e^(sink_h - M))
//
// Work items: (i3, KV head, group of its query heads, block of tokens), at
// most FA_ROWS query rows each, so the K/V block a worker stages in its slice
// of the scratch area ("VTCM", converted to fp32 and padded to whole vectors)
// is reused by every query head that shares it and by several tokens. (On
// x86, F16 K and V are not staged but read in place: FA_F16_DIRECT.)
// Workers take items from a shared counter (causal masks make items uneven).
// KV blocks whose mask is -inf for every row of the item are skipped before
// anything is staged.
//
// Decode with few KV heads has fewer items than workers: the KV sequence is
// then also cut into chunks (head split + KV split, the reference's
// GGML_HEXAGON_FA_SPLIT behaviour); each (item, chunk) leaves its partial
// (max, sum, unnormalised output) in a shared part of the scratch area and a
// second pass merges the chunks of each row. Prefill with few heads first
// takes smaller token blocks (more items). The session option
// HTP_SESSION_FA_NO_SPLIT (GGML_HEXAGON_FA_SPLIT=0) turns both off: items
// keep FA_ROWS rows and the KV sequence is never cut.
//
// Units (htp-proto.h's enum htp_unit): on HMX the scores of up to 4 query
// rows of an item are taken at once, each K vector loaded once for all of
// them (fa_dot_rows, fa_qdot_n); on HVX one query row at a time. HMX is used
// when the session allows it (not HTP_SESSION_FA_NO_HMX) and an item holds
// more than one query row (GQA, or several tokens); the sums are the same.
//
// K and V types (a llama.cpp KV cache; k and v may differ), as ggml-cpu
// computes them:
//   - F32 / F16 K: q . k in fp32.
//   - BF16 K: q rounded to bf16 first (ggml-cpu's bf16 dot sees q so), then fp32.
//   - block K (Q8_0, Q4_0, Q5_0, IQ4_NL; Q4_1, Q5_1): each q row quantized to
//     int8 blocks of 32 as ggml-cpu's q8_0 (q8_1 for the types with a min:
//     with the block's fp16 d * sum of quants) and an integer dot per block:
//     q . k = sum_b d_k d_q isum_b (+ m_k s_q). The K block is expanded to
//     int8 quants and float scales when it is staged.
//   - V of any type is converted (dequantized) to fp32 rows when staged and
//     accumulated in fp32.
// The block-K dot is AVX-512 VNNI / AVX2 on x86 (Q8_0 K read in place), and
// on Hexagon HVX integer sums (vrmpy; htp_fa_block_isums, GGML_HTP_SCALAR=1
// takes its portable C) with the float scaling scalar.

#include <math.h>
#include <stdatomic.h>

#include "contract/ops/flash-attn-check.h"
#include "contract/type-traits.h"
#include "kernels.h"
#include "kernel-util.h"
#include "quant.h"
#include "vec.h"

#if defined(__AVX2__)
#include <immintrin.h>
// Q8_0 K is dotted where it lies (its quants are int8 already); elsewhere
// every block K is expanded, so that the HVX dot reads whole vectors.
#define FA_K_INPLACE 1
#else
#define FA_K_INPLACE 0
#endif

#if defined(__HVX__)
#include "hvx.h"
#endif

// F16 K and V read where they lie, converted in registers, instead of staged
// as fp32 rows first (fa_f16_direct): x86, whose loads from the cache are as
// cheap as from the staging area. Hexagon keeps the staging (VTCM). With V's
// rows also loaded once for an item's four query heads (fa_accum_v_t), a
// decode's attention (htp-bench fa -n 1, 32 / 8 heads of 64, F16 KV, three
// alternated runs of the NPU builds on a Zen 5) went from 61-65 to 53-58 us a
// layer at n_kv 256, 227-259 -> 171-194 at 1024 and 937-1116 -> 659-762 at
// 4096; the reads in place alone gave 217-222 -> 193-195 at 1024. What is
// left waits on the KV rows: an item reads its head's 128 bytes of each
// KiB-long cache row, and the prefetches ahead of them stall, the core's
// misses in flight all taken (perf annotate). A reduction of the four scores
// in one tree (four horizontal sums a K row) measured no faster, nor did
// prefetching into the L2 only, nor chunks of 256 positions taken chunk by
// chunk so both workers read one stretch of the cache at once (slower: the
// chunks' partials and merge).
#if defined(__x86_64__) && (HTP_VR_BYTES == 64 || HTP_VR_BYTES == 32)
#define FA_F16_DIRECT 1
#else
#define FA_F16_DIRECT 0
#endif

#define FA_ROWS   HTP_FA_ROWS
#define FA_KV_BLK HTP_FA_KV_BLK

// How q . k is taken (the K type's family).
enum fa_kdot {
    FA_KDOT_F32,   // F32 / F16 K: fp32 rows
    FA_KDOT_BF16,  // BF16 K: fp32 rows, q rounded through bf16
    FA_KDOT_Q8,    // block K without a min: q as q8_0 blocks
    FA_KDOT_Q8_1,  // block K with a min (Q4_1, Q5_1): q as q8_1 blocks
};

struct fa_args {
    struct htp_fa_shape s;  // operands, sizes and params (the contract's reading of the op)
    enum fa_kdot        kdot;
    int64_t             nbk;                       // 32-element blocks of a K row (block K)
    int64_t             dkp, dvp;                  // head sizes padded to whole vectors
    int64_t             k_row_bytes, v_row_bytes;  // bytes of a K / V row (prefetching)
    int64_t             hsub, n_hsub;              // query heads per item; items per KV head
    int64_t             tpb, n_tb;                 // tokens per item; token blocks
    int64_t             n_items;
    int64_t             n_chunks, chunk;     // KV chunks per item and their length
    int                 max_nq;              // query rows scored per K load: 4 on HMX, 1 on HVX
    int                 direct_k, direct_v;  // F16 K / V read in place (fa_f16_direct), not staged
    uint8_t *           scratch;
    size_t              slice;     // scratch bytes per worker
    uint32_t            n_active;  // workers whose slice fits the scratch area
    float *             partials;  // n_items * n_chunks * FA_ROWS * (dvp + 2); NULL: no split
    _Atomic int64_t     next;      // next task (item * n_chunks + chunk) to take
};

// Which rows an item holds: heads [h0, h0 + nh), tokens [t0, t0 + nt); row r = hi * nt + ti.
struct fa_item {
    int64_t i3, ik2, ik3, h0, nh, t0, nt;
};

static struct fa_item fa_item_of(const struct fa_args * a, int64_t item) {
    struct fa_item it;
    const int64_t  tb = item % a->n_tb;
    const int64_t  hs = (item / a->n_tb) % a->n_hsub;
    it.ik2            = (item / (a->n_tb * a->n_hsub)) % a->s.n_head_kv;
    it.i3             = item / (a->n_tb * a->n_hsub * a->s.n_head_kv);
    it.ik3            = it.i3 / a->s.rk3;
    it.h0             = it.ik2 * a->s.rk2 + hs * a->hsub;
    it.nh             = htp_min64(a->hsub, (it.ik2 + 1) * a->s.rk2 - it.h0);
    it.t0             = tb * a->tpb;
    it.nt             = htp_min64(a->tpb, a->s.n_q - it.t0);
    return it;
}

static float fa_slope(const struct fa_args * a, int64_t h) {
    if (a->s.max_bias <= 0.0f) {
        return 1.0f;
    }
    const uint32_t hu = (uint32_t)h;
    return hu < a->s.n_head_log2 ? powf(a->s.m0, (float)(hu + 1))
                                 : powf(a->s.m1, (float)(2 * (hu - a->s.n_head_log2) + 1));
}

// Bytes the first d elements of a K or V row span: whole blocks of a block
// type (nb[0] is the block's bytes then), d elements nb[0] apart otherwise.
static inline int64_t fa_row_bytes(const struct htp_tensor_view * t, int64_t d) {
    if (htp_type_is_float(t->type)) {
        return d * t->nb[0];
    }
    return d / (int64_t)htp_type_traits(t->type)->blck_size * t->nb[0];
}

static size_t fa_partials_bytes(const struct fa_args * a) {
    return (size_t)a->n_items * a->n_chunks * FA_ROWS * (size_t)(a->dvp + 2) * sizeof(float);
}

// Whether rows of K or V (head size d, padded dp) are read in place
// (FA_F16_DIRECT): F16, each row's elements adjacent, whole vectors. F16 is
// the KV cache llama.cpp makes by default. Staged, every row went through
// the type's row loader and a clear of its pad before a vector of it was
// used.
static int fa_f16_direct(const struct htp_tensor_view * t, int64_t d, int64_t dp) {
    return FA_F16_DIRECT && t->type == HTP_TYPE_F16 && t->nb[0] == 2 && d == dp && d % HTP_VR_N == 0;
}

// Cuts the op into items and chunks for n_threads workers and vtcm_size
// bytes of scratch; split 0 keeps whole token blocks and KV sequences
// (GGML_HEXAGON_FA_SPLIT=0). Returns enum htp_status (VTCM_TOO_SMALL if one
// worker's slice does not fit).
static int fa_plan(struct fa_args * a, uint32_t n_threads, size_t vtcm_size, int split) {
    const uint32_t kt = a->s.k->type;
    a->kdot           = kt == HTP_TYPE_F32 || kt == HTP_TYPE_F16     ? FA_KDOT_F32
                        : kt == HTP_TYPE_BF16                        ? FA_KDOT_BF16
                        : kt == HTP_TYPE_Q4_1 || kt == HTP_TYPE_Q5_1 ? FA_KDOT_Q8_1
                                                                     : FA_KDOT_Q8;
    a->nbk            = a->s.dk / 32;
    a->k_row_bytes    = fa_row_bytes(a->s.k, a->s.dk);
    a->v_row_bytes    = fa_row_bytes(a->s.v, a->s.dv);
    a->dkp            = htp_fa_pad(a->s.dk);
    a->dvp            = htp_fa_pad(a->s.dv);
    a->direct_k       = fa_f16_direct(a->s.k, a->s.dk, a->dkp) && a->kdot == FA_KDOT_F32;
    a->direct_v       = fa_f16_direct(a->s.v, a->s.dv, a->dvp);
    a->slice          = htp_fa_slice_bytes(a->dkp, a->dvp);
    if (a->slice > vtcm_size) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    const uint32_t fit = (uint32_t)htp_min64((int64_t)(vtcm_size / a->slice), HTP_MAX_NTHREADS);
    a->n_active        = n_threads < fit ? n_threads : fit;
    if (a->n_active == 0) {
        a->n_active = 1;
    }

    a->hsub   = htp_min64(a->s.rk2, FA_ROWS);
    a->n_hsub = (a->s.rk2 + a->hsub - 1) / a->hsub;
    a->tpb    = htp_max64(1, FA_ROWS / a->hsub);
    for (;;) {
        a->n_tb    = (a->s.n_q + a->tpb - 1) / a->tpb;
        a->n_items = a->s.ne3 * a->s.n_head_kv * a->n_hsub * a->n_tb;
        if (!split || a->tpb == 1 || a->n_items >= (int64_t)a->n_active) {
            break;
        }
        a->tpb /= 2;  // prefill with few heads: smaller token blocks before splitting KV
    }

    // Fewer items than workers: split the KV sequence as well, in whole blocks.
    a->n_chunks          = 1;
    a->chunk             = a->s.n_kv;
    const int64_t blocks = (a->s.n_kv + FA_KV_BLK - 1) / FA_KV_BLK;
    if (split && a->n_items > 0 && a->n_items < (int64_t)a->n_active && blocks > 1) {
        int64_t want = htp_min64(((int64_t)a->n_active + a->n_items - 1) / a->n_items, blocks);
        for (; want > 1; want--) {
            a->chunk    = (blocks + want - 1) / want * FA_KV_BLK;
            a->n_chunks = (a->s.n_kv + a->chunk - 1) / a->chunk;
            if ((size_t)a->n_active * a->slice + fa_partials_bytes(a) <= vtcm_size) {
                break;
            }
        }
        if (want <= 1) {
            a->n_chunks = 1;
            a->chunk    = a->s.n_kv;
        }
    }
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// Per-worker computation

// Sum of the lanes of a register: with the target's shuffles where it has
// them (one per output score, so it must be cheap), the portable tree otherwise.
static inline float fa_hsum(htp_vr v) {
#if HTP_VR_BYTES == 64
    return _mm512_reduce_add_ps(v);
#elif HTP_VR_BYTES == 32
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x        = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x        = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
#else
    return htp_vr_hsum(v);
#endif
}

// Vector d / HTP_VR_N of a K or V row: staged fp32, or F16 in place.
static inline __attribute__((always_inline)) htp_vr fa_row_vec(const void * row, int64_t d, int f16) {
    return f16 ? htp_vr_load_f16((const uint8_t *)row + 2 * d) : htp_vr_load((const float *)row + d);
}

// Scores of one K row (fp32, or F16 when f16) against up to 4 query rows:
// out[i] = q_i . kr (n a multiple of HTP_VR_N).
static inline __attribute__((always_inline)) void fa_dot_rows(int64_t n, const void * kr, const float * q,
                                                              int64_t qstride, int nq, float * out, int f16) {
    htp_vr a0 = htp_vr_splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
    if (nq == 4) {
        for (int64_t d = 0; d < n; d += HTP_VR_N) {
            const htp_vr kv = fa_row_vec(kr, d, f16);
            a0              = htp_vr_fma(htp_vr_load(q + d), kv, a0);
            a1              = htp_vr_fma(htp_vr_load(q + qstride + d), kv, a1);
            a2              = htp_vr_fma(htp_vr_load(q + 2 * qstride + d), kv, a2);
            a3              = htp_vr_fma(htp_vr_load(q + 3 * qstride + d), kv, a3);
        }
        out[0] = fa_hsum(a0), out[1] = fa_hsum(a1), out[2] = fa_hsum(a2), out[3] = fa_hsum(a3);
        return;
    }
    for (int i = 0; i < nq; i++) {
        const float * qi = q + i * qstride;
        htp_vr        s0 = htp_vr_splat(0.0f), s1 = s0;
        int64_t       d = 0;
        for (; d + 2 * HTP_VR_N <= n; d += 2 * HTP_VR_N) {
            s0 = htp_vr_fma(htp_vr_load(qi + d), fa_row_vec(kr, d, f16), s0);
            s1 = htp_vr_fma(htp_vr_load(qi + d + HTP_VR_N), fa_row_vec(kr, d + HTP_VR_N, f16), s1);
        }
        for (; d < n; d += HTP_VR_N) {
            s0 = htp_vr_fma(htp_vr_load(qi + d), fa_row_vec(kr, d, f16), s0);
        }
        out[i] = fa_hsum(s0 + s1);
    }
}

// For each of the nr (1 to 4) rows i = ri[k] of an item: o_i[0, n) +=
// sum_j p_i[j] * row_j[0, n) for j < nb, o_i at o + i * n, p_i at p + i *
// FA_KV_BLK, row j at vt + j * stride bytes: staged fp32 rows, or F16 ones in
// place when f16 (n a multiple of HTP_VR_N). Each vector of a V row is loaded
// (and converted) once for the nr rows: a row at a time, an item's four
// query heads read every V row four times.
static inline __attribute__((always_inline)) void fa_accum_v_t(const int nr, int64_t n, float * o, const float * p,
                                                               const int * ri, const uint8_t * vt, int64_t stride,
                                                               int64_t nb, int f16) {
    int64_t d = 0;
    for (; d + 4 * HTP_VR_N <= n; d += 4 * HTP_VR_N) {
        htp_vr acc[4][4];
        for (int k = 0; k < nr; k++) {
            for (int c = 0; c < 4; c++) {
                acc[k][c] = htp_vr_load(o + ri[k] * n + d + c * HTP_VR_N);
            }
        }
        for (int64_t j = 0; j < nb; j++) {
            const void * vr = vt + j * stride;
            htp_vr       v[4];
            for (int c = 0; c < 4; c++) {
                v[c] = fa_row_vec(vr, d + c * HTP_VR_N, f16);
            }
            for (int k = 0; k < nr; k++) {
                const htp_vr pj = htp_vr_splat(p[ri[k] * FA_KV_BLK + j]);
                for (int c = 0; c < 4; c++) {
                    acc[k][c] = htp_vr_fma(pj, v[c], acc[k][c]);
                }
            }
        }
        for (int k = 0; k < nr; k++) {
            for (int c = 0; c < 4; c++) {
                memcpy(o + ri[k] * n + d + c * HTP_VR_N, &acc[k][c], sizeof acc[k][c]);
            }
        }
    }
    for (; d < n; d += HTP_VR_N) {
        htp_vr acc[4];
        for (int k = 0; k < nr; k++) {
            acc[k] = htp_vr_load(o + ri[k] * n + d);
        }
        for (int64_t j = 0; j < nb; j++) {
            const htp_vr v = fa_row_vec(vt + j * stride, d, f16);
            for (int k = 0; k < nr; k++) {
                acc[k] = htp_vr_fma(htp_vr_splat(p[ri[k] * FA_KV_BLK + j]), v, acc[k]);
            }
        }
        for (int k = 0; k < nr; k++) {
            memcpy(o + ri[k] * n + d, &acc[k], sizeof acc[k]);
        }
    }
}

// fa_accum_v_t for the live rows ri[0, nl) of an item, four at a time.
static inline __attribute__((always_inline)) void fa_accum_v_rows(int64_t n, float * o, const float * p, const int * ri,
                                                                  int nl, const uint8_t * vt, int64_t stride,
                                                                  int64_t nb, int f16) {
    for (int k = 0; k < nl; k += 4) {
        switch (nl - k) {
            case 1:
                fa_accum_v_t(1, n, o, p, ri + k, vt, stride, nb, f16);
                break;
            case 2:
                fa_accum_v_t(2, n, o, p, ri + k, vt, stride, nb, f16);
                break;
            case 3:
                fa_accum_v_t(3, n, o, p, ri + k, vt, stride, nb, f16);
                break;
            default:
                fa_accum_v_t(4, n, o, p, ri + k, vt, stride, nb, f16);
                break;
        }
    }
}

// tanh(x) = 1 - 2 / (e^2x + 1): saturates to +-1 where e^2x over/underflows.
static inline htp_vf32 fa_tanh(htp_vf32 x) {
    const htp_vf32 one = htp_vf32_splat(1.0f);
    return one - htp_vf32_splat(2.0f) / (htp_vf32_exp(x + x) + one);
}

// s[j] = f(s[j]) + bias[j] for j < n: f scales and, with a softcap, squashes.
static void fa_finish_scores(const struct fa_args * a, float * s, const float * bias, int64_t n) {
    const htp_vf32 vscale = htp_vf32_splat(a->s.scale), vcap = htp_vf32_splat(a->s.softcap);
    for (int64_t j = 0; j < n; j += HTP_VF32_N) {
        const int64_t m = htp_min64(HTP_VF32_N, n - j);
        htp_vf32      x = m == HTP_VF32_N ? htp_vf32_load(s + j) : htp_vf32_load_n(s + j, m, 0.0f);
        x               = x * vscale;
        if (a->s.softcap != 0.0f) {
            x = vcap * fa_tanh(x);
        }
        x += m == HTP_VF32_N ? htp_vf32_load(bias + j) : htp_vf32_load_n(bias + j, m, 0.0f);
        if (m == HTP_VF32_N) {
            htp_vf32_store(s + j, x);
        } else {
            htp_vf32_store_n(s + j, x, m);
        }
    }
}

// Rows ahead of the one being converted that fa_stage prefetches: a decode
// step reads each head's K and V rows once, from memory, one short row per
// KV-cache row (the heads are interleaved), which the hardware prefetcher
// does not follow; the conversion loops were most of the op's time.
#define FA_PREFETCH_ROWS 8

// Prefetch rows [ic, ic + n) of a K or V view (row_bytes each). Always
// inlined: GCC deletes calls to an out-of-line function whose only effect
// is prefetching (see kq_prefetch_sb in kquant.c).
static inline __attribute__((always_inline)) void fa_prefetch_rows(const struct htp_tensor_view * t, int64_t ic,
                                                                   int64_t i2, int64_t i3, int64_t n,
                                                                   int64_t row_bytes) {
    for (int64_t j = 0; j < n; j++) {
        const uint8_t * row = htp_view_row(t, ic + j, i2, i3);
        for (int64_t o = 0; o < row_bytes; o += 64) {
            __builtin_prefetch(row + o);
        }
    }
}

// n rows of a K or V view starting at KV row ic, converted to fp32 rows of
// `pad` floats (the tail zeroed).
static void fa_stage(float * dst, const struct htp_tensor_view * t, int64_t ic, int64_t i2, int64_t i3, int64_t n,
                     int64_t d, int64_t pad) {
    const int64_t rb = fa_row_bytes(t, d);
    for (int64_t j = 0; j < n; j++) {
        if (j + FA_PREFETCH_ROWS < n) {
            fa_prefetch_rows(t, ic + j + FA_PREFETCH_ROWS, i2, i3, 1, rb);
        }
        float *         row = dst + j * pad;
        const uint8_t * src = htp_view_row(t, ic + j, i2, i3);
        if (htp_type_is_float(t->type)) {
            htp_row_load_f32(row, src, t->nb[0], t->type, d);
        } else {
            htp_quant_dequant_row(t->type, src, row, d);  // V of a block type (K goes to fa_stage_kq)
        }
        memset(row + d, 0, (size_t)(pad - d) * sizeof(float));
    }
}

// ---------------------------------------------------------------------------
// Block K: the staged layout and the integer dot
//
// With a block-type K (dkp = DK then, a multiple of 32; nbk = DK / 32 blocks)
// the slice's query area (FA_ROWS * dkp floats) holds, instead of fp32 rows:
//   int8  q[FA_ROWS][dkp]   each query row's quants, in element order
//   float d[FA_ROWS][nbk]   their block scales, rounded through fp16 as ggml's q8_0 / q8_1 store them
//   float m[FA_ROWS][nbk]   q8_1 only: fp16(unrounded d * sum of the block's quants)
//   float dx[FA_ROWS][8 * nbk]  each d repeated 8 times (one per int32 lane of a block's dot)
// and the K area (FA_KV_BLK * dkp floats) holds the block's K rows expanded:
//   int8  q[FA_KV_BLK][dkp] quants as signed values (Q4_0 q - 8, Q5_0 q - 16,
//                           IQ4_NL its table values; Q4_1 / Q5_1 q as is)
//   float d[FA_KV_BLK][nbk] block scales
//   float m[FA_KV_BLK][nbk] block mins (Q4_1, Q5_1)
//   float dx[FA_KV_BLK][8 * nbk]  as the query's
// 2.25 * dkp bytes a row, inside the 4 * dkp of the fp32 rows the plan sizes.

struct fa_qk {
    int8_t * q;
    float *  d;
    float *  m;
    float *  dx;
    // K only: where row j's quants are, block b at rows[j] + b * bstride: the
    // expanded q (bstride 32) or, for Q8_0, whose quants are int8 already,
    // the view's own row (bstride 34: only d and dx are staged).
    const int8_t ** rows;
    int64_t         bstride;
};

static struct fa_qk fa_qk_area(float * base, int64_t rows, int64_t dkp, int64_t nbk) {
    struct fa_qk a;
    a.q       = (int8_t *)(void *)base;
    a.d       = (float *)(void *)(a.q + rows * dkp);
    a.m       = a.d + rows * nbk;
    a.dx      = a.m + rows * nbk;
    a.rows    = NULL;
    a.bstride = 32;
    return a;
}

// One block of 32 query floats -> q8_0 quants and scale (and q8_1's scaled
// sum when m is not NULL), as ggml-cpu's x86 quantize_row_q8_0 / _q8_1:
// x * (127 / max |x|) rounded to nearest, ties to even. NaN and inf saturate
// (kernel-util.h) instead of converting out of range.
static void fa_quantize_q_block(const float * x, int8_t * q, float * d, float * m) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float v = x[j] < 0.0f ? -x[j] : x[j];
        amax          = amax > v ? amax : v;
    }
    const float dq  = amax / 127.0f;
    const float id  = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t     sum = 0;
    for (int j = 0; j < 32; j++) {
        const int32_t v = htp_f2i_sat(__builtin_nearbyintf(x[j] * id), -128, 127);
        q[j]            = (int8_t)v;
        sum += v;
    }
    *d = htp_fp16_to_fp32(htp_fp32_to_fp16(dq));
    if (m) {
        *m = htp_fp16_to_fp32(htp_fp32_to_fp16(dq * (float)sum));
    }
}

static inline float fa_rd16(const uint8_t * p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return htp_fp16_to_fp32(h);
}

#if defined(__AVX2__)
// The 16 nibble bytes at p -> 32 nibbles in element order (low nibbles are
// elements 0-15, high 16-31), each mapped through the 16-entry table tab.
static inline void fa_expand_nibbles_avx2(const uint8_t * p, const int8_t tab[16], int8_t * q) {
    const __m128i v  = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i lo = _mm_and_si128(v, _mm_set1_epi8(15));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(15));
    const __m128i t  = _mm_loadu_si128((const __m128i *)(const void *)tab);
    _mm_storeu_si128((__m128i *)(void *)q, _mm_shuffle_epi8(t, lo));
    _mm_storeu_si128((__m128i *)(void *)(q + 16), _mm_shuffle_epi8(t, hi));
}

static const int8_t fa_q4_0_values[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};
static const int8_t fa_q4_1_values[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#endif

// One K block of type at b -> 32 signed quants at q, its scale (and min).
static void fa_expand_k_block(uint32_t type, const uint8_t * b, int8_t * q, float * d, float * m) {
    uint32_t qh;
#if defined(__AVX2__)
    switch (type) {  // the 4-bit types by table, 16 nibbles a shuffle
        case HTP_TYPE_Q4_0:
            *d = fa_rd16(b);
            fa_expand_nibbles_avx2(b + 2, fa_q4_0_values, q);
            return;
        case HTP_TYPE_IQ4_NL:
            *d = fa_rd16(b);
            fa_expand_nibbles_avx2(b + 2, htp_iq4nl_values, q);
            return;
        case HTP_TYPE_Q4_1:
            *d = fa_rd16(b), *m = fa_rd16(b + 2);
            fa_expand_nibbles_avx2(b + 4, fa_q4_1_values, q);
            return;
        default:
            break;
    }
#endif
    switch (type) {
        case HTP_TYPE_Q8_0:
            *d = fa_rd16(b);
            memcpy(q, b + 2, 32);
            break;
        case HTP_TYPE_Q4_0:
            *d = fa_rd16(b);
            for (int j = 0; j < 16; j++) {
                q[j]      = (int8_t)((b[2 + j] & 15) - 8);
                q[j + 16] = (int8_t)((b[2 + j] >> 4) - 8);
            }
            break;
        case HTP_TYPE_IQ4_NL:
            *d = fa_rd16(b);
            for (int j = 0; j < 16; j++) {
                q[j]      = htp_iq4nl_values[b[2 + j] & 15];
                q[j + 16] = htp_iq4nl_values[b[2 + j] >> 4];
            }
            break;
        case HTP_TYPE_Q4_1:
            *d = fa_rd16(b), *m = fa_rd16(b + 2);
            for (int j = 0; j < 16; j++) {
                q[j]      = (int8_t)(b[4 + j] & 15);
                q[j + 16] = (int8_t)(b[4 + j] >> 4);
            }
            break;
        case HTP_TYPE_Q5_0:  // { fp16 d; u32 qh; u8 qs[16] }: bit j of qh is bit 4 of element j
            *d = fa_rd16(b);
            memcpy(&qh, b + 2, 4);
            for (int j = 0; j < 16; j++) {
                q[j]      = (int8_t)(((b[6 + j] & 15) | (((qh >> j) & 1) << 4)) - 16);
                q[j + 16] = (int8_t)(((b[6 + j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16);
            }
            break;
        case HTP_TYPE_Q5_1:  // { fp16 d; fp16 m; u32 qh; u8 qs[16] }
            *d = fa_rd16(b), *m = fa_rd16(b + 2);
            memcpy(&qh, b + 4, 4);
            for (int j = 0; j < 16; j++) {
                q[j]      = (int8_t)((b[8 + j] & 15) | (((qh >> j) & 1) << 4));
                q[j + 16] = (int8_t)((b[8 + j] >> 4) | (((qh >> (j + 16)) & 1) << 4));
            }
            break;
        default:  // unreachable: the check refuses other types
            *d = 0.0f, *m = 0.0f;
            memset(q, 0, 32);
            break;
    }
}

static inline void fa_fill8(float * p, float v) {
    for (int i = 0; i < 8; i++) {
        p[i] = v;
    }
}

// Query row r (DK elements of q) -> its quantized blocks in the query area.
static void fa_load_q_blocks(const struct fa_args * a, struct fa_qk qa, const uint8_t * src, int64_t r) {
    const struct htp_tensor_view * q = a->s.q;
    float                          x[32];
    for (int64_t b = 0; b < a->nbk; b++) {
        htp_row_load_f32(x, src + 32 * b * q->nb[0], q->nb[0], q->type, 32);
        fa_quantize_q_block(x, qa.q + r * a->dkp + 32 * b, qa.d + r * a->nbk + b,
                            a->kdot == FA_KDOT_Q8_1 ? qa.m + r * a->nbk + b : NULL);
        fa_fill8(qa.dx + r * 8 * a->nbk + 8 * b, qa.d[r * a->nbk + b]);
    }
}

// n K rows starting at KV row ic -> the K area, expanded.
static void fa_stage_kq(const struct fa_args * a, struct fa_qk kt, const struct htp_tensor_view * t, int64_t ic,
                        int64_t i2, int64_t i3, int64_t n) {
    const int64_t bb = t->nb[0];
    for (int64_t j = 0; j < n; j++) {
        // Twice as far ahead as fa_stage: a block row is staged in less time than a float row.
        if (j + 2 * FA_PREFETCH_ROWS < n) {
            fa_prefetch_rows(t, ic + j + 2 * FA_PREFETCH_ROWS, i2, i3, 1, a->k_row_bytes);
        }
        const uint8_t * row = htp_view_row(t, ic + j, i2, i3);
        if (FA_K_INPLACE && t->type == HTP_TYPE_Q8_0) {  // { fp16 d; i8 q[32] }: the quants stay where they are
            kt.rows[j] = (const int8_t *)(row + 2);
            for (int64_t b = 0; b < a->nbk; b++) {
                kt.d[j * a->nbk + b] = fa_rd16(row + b * bb);
                fa_fill8(kt.dx + j * 8 * a->nbk + 8 * b, kt.d[j * a->nbk + b]);
            }
            continue;
        }
        kt.rows[j] = kt.q + j * a->dkp;
        for (int64_t b = 0; b < a->nbk; b++) {
            fa_expand_k_block(t->type, row + b * bb, kt.q + j * a->dkp + 32 * b, kt.d + j * a->nbk + b,
                              kt.m + j * a->nbk + b);
            fa_fill8(kt.dx + j * 8 * a->nbk + 8 * b, kt.d[j * a->nbk + b]);
        }
    }
}

#if defined(__HVX__)
// Four blocks a vector: vrmpy (signed bytes) leaves 32 words, each the sum of
// 4 products; three rotate-adds sum each block's 8 words into its first lane
// (lane 8 t for block t of the vector). A last partial vector is copied into a
// zeroed one first: the rows end where their blocks do (no reading past).
static void fa_block_isums_hvx(const int8_t * k, const int8_t * q, int64_t nbk, int32_t * isum) {
    for (int64_t b = 0; b < nbk; b += 4) {
        const int nb = (int)htp_min64(4, nbk - b);
        hvx_v     kv, qv;
        if (nb == 4) {
            kv = hvx_ld(k + 32 * b), qv = hvx_ld(q + 32 * b);
        } else {
            int8_t kt[128] HVX_ALIGN = {0}, qt[128] HVX_ALIGN = {0};
            memcpy(kt, k + 32 * b, 32 * (size_t)nb);
            memcpy(qt, q + 32 * b, 32 * (size_t)nb);
            kv = hvx_ld(kt), qv = hvx_ld(qt);
        }
        hvx_v p = __builtin_HEXAGON_V6_vrmpybv_128B(kv, qv);
        p       = __builtin_HEXAGON_V6_vaddw_128B(p, __builtin_HEXAGON_V6_vror_128B(p, 4));
        p       = __builtin_HEXAGON_V6_vaddw_128B(p, __builtin_HEXAGON_V6_vror_128B(p, 8));
        p       = __builtin_HEXAGON_V6_vaddw_128B(p, __builtin_HEXAGON_V6_vror_128B(p, 16));
        for (int t = 0; t < nb; t++) {
            isum[b + t] = hvx_lane(p, 8 * t);
        }
    }
}
#endif

void htp_fa_block_isums(const int8_t * k, const int8_t * q, int64_t nbk, int32_t * isum) {
#if defined(__HVX__)
    if (!htp_kernels_portable()) {
        fa_block_isums_hvx(k, q, nbk, isum);
        return;
    }
#endif
    for (int64_t b = 0; b < nbk; b++) {
        int32_t s = 0;
        for (int e = 0; e < 32; e++) {
            s += (int32_t)k[32 * b + e] * (int32_t)q[32 * b + e];
        }
        isum[b] = s;
    }
}

#if defined(__AVX2__)
// {sum of a0's lanes, a1's, a2's, a3's} at out: one reduction for four rows.
static inline void fa_hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3, float * out) {
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

// 8 partial sums of k . q over one block: |k| (unsigned) times q with k's sign.
static inline __m256 fa_i8dot_ps(__m256i kabs, __m256i k, const int8_t * q) {
    const __m256i sq = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(const void *)q), k);
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), kabs, sq));
#else
    // pairs of |k| q are at most 128 * 127 * 2: no saturation
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(kabs, sq), _mm256_set1_epi16(1)));
#endif
}
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define FA_QDOT_AVX512 1
#endif

// Scores of staged K row j against NQ query rows from row r: out[i] = q_{r+i} . k_j.
// SIMD: per block, 8 int32 partial dots scaled by d_k d_q lane-wise (the dx
// areas), accumulated in fp32 (two blocks a register with AVX-512), the four
// rows reduced together at the end.
static inline __attribute__((always_inline)) void fa_qdot_n(const struct fa_args * a, struct fa_qk kt, int64_t j,
                                                            struct fa_qk qa, int64_t r, const int NQ, float * out) {
    const int64_t  nbk = a->nbk, dkp = a->dkp, bs = kt.bstride;
    const int8_t * kq = kt.rows[j];
#if defined(__AVX2__)
    const float * kdx    = kt.dx + j * 8 * nbk;
    __m256        acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t       b      = 0;
#ifdef FA_QDOT_AVX512
    if (nbk >= 2) {
        __m512 acc2[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        for (; b + 2 <= nbk; b += 2) {
            const __m512i kv = _mm512_inserti64x4(
                _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(kq + bs * b))),
                _mm256_loadu_si256((const __m256i *)(const void *)(kq + bs * (b + 1))), 1);
            const __m512i   ka  = _mm512_abs_epi8(kv);  // -128 gives 0x80: 128 read unsigned
            const __mmask64 neg = _mm512_movepi8_mask(kv);
            const __m512    ks  = _mm512_loadu_ps(kdx + 8 * b);
            for (int i = 0; i < NQ; i++) {
                const int64_t qr = r + i;
                const __m512i qv = _mm512_loadu_si512((const void *)(qa.q + qr * dkp + 32 * b));
                const __m512i sq = _mm512_mask_sub_epi8(qv, neg, _mm512_setzero_si512(), qv);
                const __m512  dp = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ka, sq));
                acc2[i] =
                    _mm512_fmadd_ps(dp, _mm512_mul_ps(ks, _mm512_loadu_ps(qa.dx + qr * 8 * nbk + 8 * b)), acc2[i]);
            }
        }
        for (int i = 0; i < NQ; i++) {
            acc[i] = _mm256_add_ps(_mm512_castps512_ps256(acc2[i]),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc2[i]), 1)));
        }
    }
#endif
    for (; b < nbk; b++) {
        const __m256i kv = _mm256_loadu_si256((const __m256i *)(const void *)(kq + bs * b));
        const __m256i ka = _mm256_abs_epi8(kv);  // -128 gives 0x80: 128 read unsigned
        const __m256  ks = _mm256_loadu_ps(kdx + 8 * b);
        for (int i = 0; i < NQ; i++) {
            const int64_t qr = r + i;
            acc[i]           = _mm256_fmadd_ps(fa_i8dot_ps(ka, kv, qa.q + qr * dkp + 32 * b),
                                               _mm256_mul_ps(ks, _mm256_loadu_ps(qa.dx + qr * 8 * nbk + 8 * b)), acc[i]);
        }
    }
    float sums[4];
    fa_hsum4(acc[0], NQ > 1 ? acc[1] : acc[0], NQ > 2 ? acc[2] : acc[0], NQ > 3 ? acc[3] : acc[0], sums);
    for (int i = 0; i < NQ; i++) {
        out[i] = sums[i];
    }
#else
    // Expanded K (bs 32): the integer sums by HVX or portable C, the float
    // part in one order, so both give the same bits.
    const float * kd = kt.d + j * nbk;
    int32_t       isum[HTP_FA_MAX_BLOCKS];
    (void)bs;
    for (int i = 0; i < NQ; i++) {
        const float * qd  = qa.d + (r + i) * nbk;
        float         sum = 0.0f;
        for (int64_t b0 = 0; b0 < nbk; b0 += HTP_FA_MAX_BLOCKS) {
            const int64_t nb = htp_min64(HTP_FA_MAX_BLOCKS, nbk - b0);
            htp_fa_block_isums(kq + 32 * b0, qa.q + (r + i) * dkp + 32 * b0, nb, isum);
            for (int64_t b = 0; b < nb; b++) {
                sum += kd[b0 + b] * qd[b0 + b] * (float)isum[b];
            }
        }
        out[i] = sum;
    }
#endif
    if (a->kdot == FA_KDOT_Q8_1) {  // + m_k * (d_q * sum q) per block
        const float * km = kt.m + j * nbk;
        for (int i = 0; i < NQ; i++) {
            const float * qm  = qa.m + (r + i) * nbk;
            float         add = 0.0f;
            for (int64_t b = 0; b < nbk; b++) {
                add += km[b] * qm[b];
            }
            out[i] += add;
        }
    }
}

static void fa_qdot_rows(const struct fa_args * a, struct fa_qk kt, int64_t j, struct fa_qk qa, int64_t r, int nq,
                         float * out) {
    switch (nq) {
        case 4:
            fa_qdot_n(a, kt, j, qa, r, 4, out);
            break;
        case 3:
            fa_qdot_n(a, kt, j, qa, r, 3, out);
            break;
        case 2:
            fa_qdot_n(a, kt, j, qa, r, 2, out);
            break;
        default:
            fa_qdot_n(a, kt, j, qa, r, 1, out);
            break;
    }
}

// One (item, chunk): accumulate KV rows [c0, c1) into the item's rows, then
// either write the normalised result (no split) or leave the partial.
static void fa_task(const struct fa_args * a, float * ws, int64_t item, int64_t chunk) {
    const struct fa_item it   = fa_item_of(a, item);
    const int64_t        rows = it.nh * it.nt, dkp = a->dkp, dvp = a->dvp;
    float *              qs = ws;                        // [FA_ROWS][dkp]
    float *              kt = qs + FA_ROWS * dkp;        // [FA_KV_BLK][dkp]
    float *              vt = kt + FA_KV_BLK * dkp;      // [FA_KV_BLK][dvp]
    float *              sc = vt + FA_KV_BLK * dvp;      // [FA_ROWS][FA_KV_BLK] scores, then weights
    float *              bs = sc + FA_ROWS * FA_KV_BLK;  // [FA_ROWS][FA_KV_BLK] mask * slope
    float *              o  = bs + FA_ROWS * FA_KV_BLK;  // [FA_ROWS][dvp]
    float                M[FA_ROWS], S[FA_ROWS], slope[FA_ROWS];
    int                  live[FA_ROWS];
    const int            qblk = a->kdot == FA_KDOT_Q8 || a->kdot == FA_KDOT_Q8_1;
    const int8_t *       krows[FA_KV_BLK];
    const struct fa_qk   qa = fa_qk_area(qs, FA_ROWS, dkp, a->nbk);
    struct fa_qk         ka = fa_qk_area(kt, FA_KV_BLK, dkp, a->nbk);
    ka.rows                 = krows;
    ka.bstride              = FA_K_INPLACE && a->s.k->type == HTP_TYPE_Q8_0 ? a->s.k->nb[0] : 32;

    for (int64_t r = 0; r < rows; r++) {
        const int64_t   h = it.h0 + r / it.nt, t = it.t0 + r % it.nt;
        const uint8_t * src = htp_view_row(a->s.q, t, h, it.i3);
        if (qblk) {
            fa_load_q_blocks(a, qa, src, r);
        } else {
            float * qr = qs + r * dkp;
            htp_row_load_f32(qr, src, a->s.q->nb[0], a->s.q->type, a->s.dk);
            if (a->kdot == FA_KDOT_BF16) {
                for (int64_t d = 0; d < a->s.dk; d++) {
                    qr[d] = htp_bf16_to_fp32(htp_fp32_to_bf16(qr[d]));
                }
            }
            memset(qr + a->s.dk, 0, (size_t)(dkp - a->s.dk) * sizeof(float));
        }
        memset(o + r * dvp, 0, (size_t)dvp * sizeof(float));
        M[r]     = -INFINITY;
        S[r]     = 0.0f;
        slope[r] = fa_slope(a, h);
    }

    const int64_t c0 = chunk * a->chunk, c1 = htp_min64(a->s.n_kv, c0 + a->chunk);
    for (int64_t ic = c0; ic < c1; ic += FA_KV_BLK) {
        const int64_t nb  = htp_min64(FA_KV_BLK, c1 - ic);
        int           any = 0;
        if (ic == c0) {  // later blocks' first K rows were asked for while the block before accumulated
            // (all of them, when K is read in place: no staging loop runs ahead of the scoring)
            fa_prefetch_rows(a->s.k, ic, it.ik2, it.ik3, a->direct_k ? nb : htp_min64(nb, FA_PREFETCH_ROWS),
                             a->k_row_bytes);
        }
        for (int64_t r = 0; r < rows; r++) {
            float * b = bs + r * FA_KV_BLK;
            live[r]   = 1;
            if (a->s.mask) {
                const struct htp_tensor_view * m = a->s.mask;
                const int64_t                  h = it.h0 + r / it.nt, t = it.t0 + r % it.nt;
                const uint8_t *                mr =
                    m->data + ic * m->nb[0] + t * m->nb[1] + (h % m->ne[2]) * m->nb[2] + (it.i3 % m->ne[3]) * m->nb[3];
                htp_row_load_f32(b, mr, m->nb[0], m->type, nb);
                if (slope[r] != 1.0f) {
                    htp_vec_scale_bias_f32(nb, b, b, slope[r], 0.0f);
                }
                live[r] = htp_vec_max_f32(nb, b) != -INFINITY;
            } else {
                memset(b, 0, (size_t)nb * sizeof(float));
            }
            any |= live[r];
        }
        if (!any) {
            continue;  // masked out for every row: nothing to stage
        }

        // The first V rows of the block arrive while K is staged and scored.
        fa_prefetch_rows(a->s.v, ic, it.ik2, it.ik3, a->direct_v && ic == c0 ? nb : htp_min64(nb, FA_PREFETCH_ROWS),
                         a->v_row_bytes);
        if (qblk) {
            fa_stage_kq(a, ka, a->s.k, ic, it.ik2, it.ik3, nb);
        } else if (!a->direct_k) {
            fa_stage(kt, a->s.k, ic, it.ik2, it.ik3, nb, a->s.dk, dkp);
        }
        // The next block's K and V rows, one of each per row scored here, so
        // they are on their way a whole block ahead (fa_stage's own prefetch
        // runs only a few rows ahead of a loop that converts a row in a few
        // ns; a decode's rows of one KV head are 128 bytes every KiB). F16 KV
        // at n_kv 2048 (htp-bench fa, alternated builds): 528-577 -> 491-508
        // us a layer; Q8_0 3%. The op stays bound by its per-row work: items
        // of four KV heads reading each cache row's heads side by side were
        // no faster.
        const int64_t next = ic + FA_KV_BLK;
        for (int64_t j = 0; j < nb; j++) {
            if (next + j < c1) {
                fa_prefetch_rows(a->s.k, next + j, it.ik2, it.ik3, 1, a->k_row_bytes);
                fa_prefetch_rows(a->s.v, next + j, it.ik2, it.ik3, 1, a->v_row_bytes);
            }
            float   dots[4];
            int64_t r = 0;
            while (r < rows) {
                const int nq = (int)htp_min64(a->max_nq, rows - r);
                if (qblk) {
                    fa_qdot_rows(a, ka, j, qa, r, nq, dots);
#if FA_F16_DIRECT
                } else if (a->direct_k) {
                    fa_dot_rows(dkp, htp_view_row(a->s.k, ic + j, it.ik2, it.ik3), qs + r * dkp, dkp, nq, dots, 1);
#endif
                } else {
                    fa_dot_rows(dkp, kt + j * dkp, qs + r * dkp, dkp, nq, dots, 0);
                }
                for (int i = 0; i < nq; i++) {
                    sc[(r + i) * FA_KV_BLK + j] = dots[i];
                }
                r += nq;
            }
        }

        int any_v = 0;
        for (int64_t r = 0; r < rows; r++) {
            if (!live[r]) {
                continue;
            }
            float * s = sc + r * FA_KV_BLK;
            fa_finish_scores(a, s, bs + r * FA_KV_BLK, nb);
            const float mb = htp_vec_max_f32(nb, s);
            if (mb == -INFINITY) {
                live[r] = 0;
                continue;
            }
            if (mb > M[r]) {
                const float ms = htp_exp_f32(M[r] - mb);  // 0 on the first live block
                htp_vec_scale_bias_f32(dvp, o + r * dvp, o + r * dvp, ms, 0.0f);
                S[r] *= ms;
                M[r] = mb;
            }
            S[r] += htp_vec_exp_sub_sum_f32(nb, s, s, M[r]);
            any_v = 1;
        }
        if (!any_v) {
            continue;
        }
        if (!a->direct_v) {
            fa_stage(vt, a->s.v, ic, it.ik2, it.ik3, nb, a->s.dv, dvp);
        }
        if (ic + FA_KV_BLK < c1) {  // the next block's first K rows arrive while this one accumulates
            fa_prefetch_rows(a->s.k, ic + FA_KV_BLK, it.ik2, it.ik3, htp_min64(c1 - ic - FA_KV_BLK, FA_PREFETCH_ROWS),
                             a->k_row_bytes);
        }
        int lr[FA_ROWS], nl = 0;  // the live rows
        for (int r = 0; r < (int)rows; r++) {
            if (live[r]) {
                lr[nl++] = r;
            }
        }
#if FA_F16_DIRECT
        if (a->direct_v) {
            fa_accum_v_rows(dvp, o, sc, lr, nl, htp_view_row(a->s.v, ic, it.ik2, it.ik3), a->s.v->nb[1], nb, 1);
        } else
#endif
        {
            fa_accum_v_rows(dvp, o, sc, lr, nl, (const uint8_t *)vt, dvp * (int64_t)sizeof(float), nb, 0);
        }
    }

    if (a->partials) {
        float * p = a->partials + (item * a->n_chunks + chunk) * FA_ROWS * (dvp + 2);
        for (int64_t r = 0; r < rows; r++) {
            float * pr = p + r * (dvp + 2);
            pr[0]      = M[r];
            pr[1]      = S[r];
            memcpy(pr + 2, o + r * dvp, (size_t)dvp * sizeof(float));
        }
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        const int64_t h = it.h0 + r / it.nt, t = it.t0 + r % it.nt;
        float *       orow = o + r * dvp;
        float         s    = S[r];
        if (a->s.sinks) {
            float sink;
            memcpy(&sink, a->s.sinks->data + h * a->s.sinks->nb[0], sizeof sink);
            if (sink > M[r]) {
                const float ms = htp_exp_f32(M[r] - sink);
                htp_vec_scale_bias_f32(a->s.dv, orow, orow, ms, 0.0f);
                s = s * ms + 1.0f;
            } else {
                s += htp_exp_f32(sink - M[r]);
            }
        }
        htp_vec_scale_bias_f32(a->s.dv, orow, orow, s == 0.0f ? 0.0f : 1.0f / s, 0.0f);
        htp_row_store_f32(htp_view_row(a->s.dst, h, t, it.i3), 4, HTP_TYPE_F32, orow, a->s.dv);
    }
}

static void fa_job(void * arg, uint32_t ith, uint32_t nth) {
    struct fa_args * a = arg;
    (void)nth;
    if (ith >= a->n_active) {
        return;  // no scratch slice for this worker
    }
    float *       ws      = (float *)(void *)(a->scratch + (size_t)ith * a->slice);
    const int64_t n_tasks = a->n_items * a->n_chunks;
    for (;;) {
        // Relaxed: the counter only hands out task numbers; the pool's join
        // publishes what the tasks wrote.
        const int64_t task = atomic_fetch_add_explicit(&a->next, 1, memory_order_relaxed);
        if (task >= n_tasks) {
            break;
        }
        fa_task(a, ws, task / a->n_chunks, task % a->n_chunks);
    }
}

// Second pass of a split: each output row merges its chunks' partials.
static void fa_merge_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct fa_args * a   = arg;
    const int64_t          dvp = a->dvp;
    (void)nth;
    if (ith >= a->n_active) {
        return;
    }
    float * acc = (float *)(void *)(a->scratch + (size_t)ith * a->slice);  // dvp floats of the worker's slice
    int64_t r0, r1;
    htp_split(a->n_items * FA_ROWS, ith, a->n_active, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t        item = ir / FA_ROWS, r = ir % FA_ROWS;
        const struct fa_item it = fa_item_of(a, item);
        if (r >= it.nh * it.nt) {
            continue;
        }
        const int64_t h = it.h0 + r / it.nt, t = it.t0 + r % it.nt;
        float         M = -INFINITY, S = 0.0f;
        memset(acc, 0, (size_t)dvp * sizeof(float));
        for (int64_t c = 0; c < a->n_chunks; c++) {
            const float * p = a->partials + ((item * a->n_chunks + c) * FA_ROWS + r) * (dvp + 2);
            if (p[1] == 0.0f) {
                continue;  // nothing live in this chunk
            }
            const float mn = p[0] > M ? p[0] : M;
            const float so = htp_exp_f32(M - mn), sn = htp_exp_f32(p[0] - mn);
            htp_vec_scale_bias_f32(dvp, acc, acc, so, 0.0f);
            for (int64_t d = 0; d < dvp; d++) {
                acc[d] += p[2 + d] * sn;
            }
            S = S * so + p[1] * sn;
            M = mn;
        }
        if (a->s.sinks) {
            float sink;
            memcpy(&sink, a->s.sinks->data + h * a->s.sinks->nb[0], sizeof sink);
            if (sink > M) {
                const float ms = htp_exp_f32(M - sink);
                htp_vec_scale_bias_f32(a->s.dv, acc, acc, ms, 0.0f);
                S = S * ms + 1.0f;
            } else {
                S += htp_exp_f32(sink - M);
            }
        }
        htp_vec_scale_bias_f32(a->s.dv, acc, acc, S == 0.0f ? 0.0f : 1.0f / S, 0.0f);
        htp_row_store_f32(htp_view_row(a->s.dst, h, t, it.i3), 4, HTP_TYPE_F32, acc, a->s.dv);
    }
}

int htp_op_flash_attn_ext_run(struct htp_op_ctx * ctx) {
    struct fa_args a;
    memset(&a, 0, sizeof a);
    int st = htp_fa_read(&ctx->op, &a.s);
    if (st != HTP_STATUS_OK) {
        return st;
    }
    // No work: and no plan either, whose arithmetic divides by the head
    // counts (zero query heads made rk2 0; found by fuzz-npu-batch).
    if (htp_view_nelements(a.s.dst) == 0) {
        return HTP_STATUS_OK;
    }
    st = fa_plan(&a, ctx->op.n_threads, ctx->op.vtcm_size, !(ctx->options & HTP_SESSION_FA_NO_SPLIT));
    if (st != HTP_STATUS_OK) {
        return st;
    }
    // The unit: HMX when allowed and an item has several query rows.
    const int64_t  item_rows = a.hsub * htp_min64(a.tpb, a.s.n_q);
    const uint32_t unit      = !(ctx->options & HTP_SESSION_FA_NO_HMX) && item_rows > 1 ? HTP_UNIT_HMX : HTP_UNIT_HVX;
    a.max_nq                 = unit == HTP_UNIT_HMX ? 4 : 1;
    ctx->engine              = unit | (a.n_chunks > 1 ? HTP_ENGINE_KV_SPLIT : 0);
    a.scratch                = ctx->vtcm;
    if (a.n_chunks > 1) {
        a.partials = (float *)(void *)(ctx->vtcm + (size_t)a.n_active * a.slice);
    }
    atomic_init(&a.next, 0);
    ctx->run(ctx->pool, fa_job, &a);
    if (a.partials) {
        ctx->run(ctx->pool, fa_merge_job, &a);
    }
    return HTP_STATUS_OK;
}
