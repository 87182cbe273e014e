// matmul-float.c: MUL_MAT with F32 or F16 weights and F32 activations, batched
// over dims 2-3 with ggml's broadcasting of the weights:
//
//   src0 weights [K, M, ne02, ne03]        F32/F16, rows packed (nb[0] = type size)
//   src1 acts    [K, N, ne12, ne13]        F32 (also F16/BF16), any strides
//   dst          [M, N, ne12, ne13]        F32, any strides
//   dst[m, n, i2, i3] = sum_k src0[k, m, i2 / (ne12/ne02), i3 / (ne13/ne03)] * src1[k, n, i2, i3]
//
// The output is cut into tiles of MM_RB weight rows x cb columns (a column is
// one src1 row, i.e. one (n, i2, i3)); tiles are numbered column block by
// column block and each worker takes a contiguous run of them, so decode
// (one column) splits over weight rows and prefill over both. Within a tile a
// micro-kernel (mm_micro) computes 4 weight rows x 4 columns at once: 16
// register-width accumulators (htp_vr, see vec.h), each weight vector loaded
// (and widened from fp16) once for 4 columns; the rows and columns left over
// take 2 x up to 4. Accumulation is fp32 with FMA.
// A single column (decode) takes its own job and micro-kernels (mm_dec_job):
// MM_DEC_ROWS weight rows per activation vector load, from as many distant
// streams of rows, with software prefetch in each.
//
// F16 weights, on a CPU with AVX512-FP16 (MM_PH), are multiplied in half
// precision as HMX does, on both units, so that a column's sums depend on
// neither the unit nor how a group splits the columns (decode takes
// mm_micro_ph_dec, whose rows sum in the same order). The column block is staged as fp16 and each
// 32-lane fp16 FMA chain runs MM_PH_FLUSH vectors of K before it is widened
// and added into fp32 accumulators. ggml-cpu's F16 dot on such a CPU sums all
// of K in fp16; this keeps each fp16 partial to MM_PH_FLUSH products a lane.
// Twice the lanes of the fp32 micro-kernel and no widening of the weights:
// at the 1B model's shapes (n = 512) the matmuls went from about ggml-cpu's
// speed to 1.86-2.00x of it; decode (n = 1) stayed at 0.85-1.12x.
//
// Activations that are not packed, aligned F32 rows are first converted into
// the worker's slice of the scratch area ("VTCM"), one column block at a
// time: cb * K floats per worker. If even one column per worker does not fit,
// the op answers HTP_STATUS_VTCM_TOO_SMALL.

#include "contract/ops/matmul-check.h"
#include "kernel-util.h"
#include "matmul.h"
#include "stream-prefetch.h"
#include "vec.h"

#define MM_RB 32  // weight rows per tile
#ifndef MM_PF_BYTES
#define MM_PF_BYTES 2048  // software prefetch distance in each weight row (0: none)
#endif
#ifndef MM_DEC_ROWS
#define MM_DEC_ROWS 4  // weight rows per decode micro-kernel call (divides MM_RB)
#endif
#if defined(__AVX512FP16__) && defined(__AVX512BW__)
#define MM_PH       1
#define MM_PH_FLUSH 16  // fp16 vectors of K summed in fp16 before each widening
#else
#define MM_PH 0
#endif

struct mm_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * src1;
    const struct htp_tensor_view * dst;
    const struct htp_tensor_view * add;         // MUL_MAT_ADD's addend (matmul.h's epilogue), else NULL
    int64_t                        r2, r3;      // broadcast ratios ne12/ne02, ne13/ne03
    int64_t                        ncols;       // N * ne12 * ne13
    int64_t                        cb;          // columns per tile
    int64_t                        n_rb, n_cb;  // tiles along rows, along columns
    int                            max_nc;      // columns per micro-kernel call: 4 on HMX, 1 on HVX (htp_mm_unit)
    int                            stage;       // 1: convert src1 columns into scratch first
    int                            ph;          // 1: F16 prefill in half precision (MM_PH), columns staged as fp16
    uint8_t *                      scratch;
    size_t                         slice;  // scratch bytes per worker
};

// The micro-kernel: nr (1, 2, or 4 with nc = 4) weight rows w[] times nc
// (1..4) columns y[] of K elements; out[r][c] receives the dot products.
// Always inlined into the switch below so that each (nr, nc) becomes
// straight-line code with its accumulators in registers.
static inline __attribute__((always_inline)) htp_vr mm_load_w(int f16, const uint8_t * w, int64_t k, int64_t n) {
    if (f16) {
        return n >= HTP_VR_N ? htp_vr_load_f16(w + 2 * k) : htp_vr_load_f16_n(w + 2 * k, n);
    }
    const float * wf = (const float *)(const void *)w + k;
    return n >= HTP_VR_N ? htp_vr_load(wf) : htp_vr_load_n(wf, n);
}

static inline __attribute__((always_inline)) void mm_micro(int nr, int nc, int f16, int64_t K,
                                                           const uint8_t * const * w, const float * const * y,
                                                           float (*out)[4]) {
    // Register-width accumulators (see vec.h), all in registers. With one or
    // two columns, a second set takes every other vector of K so that four
    // FMA chains stay in flight.
    //
    // Prefill's whole shape is 4 x 4: 16 accumulators, each activation
    // vector loaded once for 4 rows and each weight vector (widened once) for
    // 4 columns: 16 FMAs for 8 loads, where 2 x 4 has 8 for 6. On 2 cores of
    // an AMD EPYC (Zen 5, no AVX512-FP16), F16 2048 x 2048 at n = 512
    // (htp-bench matmul, hot, two alternated pairs): 22.5-22.8 ms -> 20.5 ms,
    // 1.58-1.61x -> 1.75x ggml-cpu; the 1B model's F16 pp512 at vocabulary
    // 512 (two alternated pairs) 1.35-1.46x -> 1.66-1.78x.
    const int ks = nc <= 2 ? 2 : 1;
    htp_vr    acc[4][4];
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < 4; c++) {
            acc[r][c] = htp_vr_splat(0.0f);
        }
    }
    int64_t k = 0;
    for (; k + ks * HTP_VR_N <= K; k += ks * HTP_VR_N) {
        for (int s = 0; s < ks; s++) {
            htp_vr yv[4];
            for (int c = 0; c < nc; c++) {
                yv[c] = htp_vr_load(y[c] + k + s * HTP_VR_N);
            }
            for (int r = 0; r < nr; r++) {
                const htp_vr wv = mm_load_w(f16, w[r], k + s * HTP_VR_N, HTP_VR_N);
                for (int c = 0; c < nc; c++) {
                    acc[r][c + 2 * s] = htp_vr_fma(wv, yv[c], acc[r][c + 2 * s]);
                }
            }
        }
    }
    for (; k < K; k += HTP_VR_N) {  // the rest, the last vector possibly partial
        const int64_t n = K - k;
        htp_vr        yv[4];
        for (int c = 0; c < nc; c++) {
            yv[c] = n >= HTP_VR_N ? htp_vr_load(y[c] + k) : htp_vr_load_n(y[c] + k, n);
        }
        for (int r = 0; r < nr; r++) {
            const htp_vr wv = mm_load_w(f16, w[r], k, n);
            for (int c = 0; c < nc; c++) {
                acc[r][c] = htp_vr_fma(wv, yv[c], acc[r][c]);
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < nc; c++) {
            out[r][c] = htp_vr_hsum(ks == 2 ? acc[r][c] + acc[r][c + 2] : acc[r][c]);
        }
    }
}

// F32 decode (one column): MM_DEC_ROWS weight rows at once, so each
// activation vector is loaded once per MM_DEC_ROWS weight vectors. The
// activation column is read from L2 (K fp32 values rarely fit L1); the 2-row
// kernel read as many activation bytes as weight bytes. Measured when this
// kernel also took F16 rows (one core, m=4096 k=14336 f16): 2 rows 18 GB/s,
// 4 rows 25, 4 rows + prefetch 2 KiB ahead 29-34, 8 rows 24 (too many
// streams). The prefetches go to all cache levels (T0): non-temporal ones
// (NTA) cost nothing on Zen 4 but, on an Intel Xeon, held decode to 13-28
// GB/s against 50 with T0 when the weights sat in its L3 (2048 x 8192 hot:
// 2609 -> 655 us), and 2048 x 8192 cold 2663 -> 715 us.
static void mm_micro_dec_f32(int64_t K, const uint8_t * const * w, const float * y, float out[MM_DEC_ROWS]) {
    htp_vr acc[MM_DEC_ROWS];
    for (int r = 0; r < MM_DEC_ROWS; r++) {
        acc[r] = htp_vr_splat(0.0f);
    }
    const int pf = MM_PF_BYTES > 0 && htp_mm_stream_prefetch;
    int64_t   k  = 0;
    for (; k + HTP_VR_N <= K; k += HTP_VR_N) {
        const htp_vr yv = htp_vr_load(y + k);
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            for (int64_t o = 0; pf && o < HTP_VR_N * 4; o += 64) {
                __builtin_prefetch(w[r] + k * 4 + MM_PF_BYTES + o, 0, 3);
            }
            acc[r] = htp_vr_fma(mm_load_w(0, w[r], k, HTP_VR_N), yv, acc[r]);
        }
    }
    if (k < K) {
        const int64_t n  = K - k;
        const htp_vr  yv = htp_vr_load_n(y + k, n);
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            acc[r] = htp_vr_fma(mm_load_w(0, w[r], k, n), yv, acc[r]);
        }
    }
    for (int r = 0; r < MM_DEC_ROWS; r++) {
        out[r] = htp_vr_hsum(acc[r]);
    }
}

// F16 decode without AVX512-FP16: MM_DEC_ROWS rows side by side, each
// activation vector loaded once for all of them, a cache line of each row a
// step with a software prefetch MM_PF_BYTES ahead. mm_dec_job hands it one
// row of each of MM_DEC_ROWS distant streams, so the prefetch runs on
// across the row's end into the next row the stream reads (see there).
static inline __attribute__((always_inline)) void mm_micro_dec_f16(int64_t K, const uint8_t * const * w,
                                                                   const float * y, float out[MM_DEC_ROWS]) {
    htp_vr acc[2][MM_DEC_ROWS];
    for (int r = 0; r < MM_DEC_ROWS; r++) {
        acc[0][r] = acc[1][r] = htp_vr_splat(0.0f);
    }
    const int pf = MM_PF_BYTES > 0 && htp_mm_stream_prefetch;
    int64_t   k  = 0;
    for (; k + 2 * HTP_VR_N <= K; k += 2 * HTP_VR_N) {
        const htp_vr y0 = htp_vr_load(y + k), y1 = htp_vr_load(y + k + HTP_VR_N);
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            if (pf) {
                __builtin_prefetch(w[r] + 2 * k + MM_PF_BYTES, 0, 3);
            }
            acc[0][r] = htp_vr_fma(htp_vr_load_f16(w[r] + 2 * k), y0, acc[0][r]);
            acc[1][r] = htp_vr_fma(htp_vr_load_f16(w[r] + 2 * k + 2 * HTP_VR_N), y1, acc[1][r]);
        }
    }
    for (; k < K; k += HTP_VR_N) {
        const int64_t n  = K - k;
        const htp_vr  yv = n >= HTP_VR_N ? htp_vr_load(y + k) : htp_vr_load_n(y + k, n);
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            const htp_vr wv = n >= HTP_VR_N ? htp_vr_load_f16(w[r] + 2 * k) : htp_vr_load_f16_n(w[r] + 2 * k, n);
            acc[0][r]       = htp_vr_fma(wv, yv, acc[0][r]);
        }
    }
    for (int r = 0; r < MM_DEC_ROWS; r++) {
        out[r] = htp_vr_hsum(acc[0][r] + acc[1][r]);
    }
}

// Decode of MM_DEC_ROWS rows w[] by the column y.
static void mm_dispatch_dec(int f16, int64_t K, const uint8_t * const * w, const float * y, float out[MM_DEC_ROWS]) {
    if (f16) {
        mm_micro_dec_f16(K, w, y, out);
    } else {
        mm_micro_dec_f32(K, w, y, out);
    }
}

#if MM_PH
// The half-precision micro-kernel: nr (1 or 2) F16 weight rows w[] times nc
// (1..4) fp16 columns y[], as mm_micro. A chain of fp16 FMAs per (row,
// column) runs MM_PH_FLUSH vectors, then its 32 lanes are widened into an
// fp32 accumulator.
static inline __attribute__((always_inline)) __m512h mm_ph_load(const uint16_t * p, int64_t n) {
    const __m512i v = n >= 32 ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16((__mmask32)((1u << n) - 1u), p);
    return _mm512_castsi512_ph(v);
}

static inline __attribute__((always_inline)) __m512 mm_ph_widen(__m512h v) {
    const __m512i b = _mm512_castph_si512(v);
    return _mm512_add_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(b)), _mm512_cvtph_ps(_mm512_extracti64x4_epi64(b, 1)));
}

static inline __attribute__((always_inline)) void mm_micro_ph(int nr, int nc, int64_t K, const uint8_t * const * w,
                                                              const uint16_t * const * y, float out[2][4]) {
    __m512 acc[2][4];
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < nc; c++) {
            acc[r][c] = _mm512_setzero_ps();
        }
    }
    for (int64_t k = 0; k < K;) {
        const int64_t kend = htp_min64(K, k + MM_PH_FLUSH * 32);
        __m512h       part[2][4];
        for (int r = 0; r < nr; r++) {
            for (int c = 0; c < nc; c++) {
                part[r][c] = _mm512_setzero_ph();
            }
        }
        for (; k < kend; k += 32) {
            const int64_t n = kend - k;
            __m512h       yv[4];
            for (int c = 0; c < nc; c++) {
                yv[c] = mm_ph_load(y[c] + k, n);
            }
            for (int r = 0; r < nr; r++) {
                const __m512h wv = mm_ph_load((const uint16_t *)(const void *)w[r] + k, n);
                for (int c = 0; c < nc; c++) {
                    part[r][c] = _mm512_fmadd_ph(wv, yv[c], part[r][c]);
                }
            }
        }
        for (int r = 0; r < nr; r++) {
            for (int c = 0; c < nc; c++) {
                acc[r][c] = _mm512_add_ps(acc[r][c], mm_ph_widen(part[r][c]));
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < nc; c++) {
            out[r][c] = _mm512_reduce_add_ps(acc[r][c]);
        }
    }
}

// Decode (one column) in half precision: MM_DEC_ROWS weight rows against
// the staged fp16 column, each row's chain exactly mm_micro_ph's for one
// column (fp16 FMAs over MM_PH_FLUSH vectors, then widened into fp32), so a
// row's sum has the same bits whichever kernel computes it. Four rows keep
// four FMA chains in flight where the two-row kernel had two: with the
// weights in the L2 (512 x 2048, htp-bench matmul hot) decode went from
// 0.75-0.88x to 0.95-0.96x ggml-cpu, the lm-head (128256 x 2048) from
// 1.05-1.07x to 1.12-1.13x. Software prefetch, 1 to 4 KiB ahead, gained
// nothing here (the 1B model's decode, alternated), so there is none.
static void mm_micro_ph_dec(int64_t K, const uint8_t * const * w, const uint16_t * y, float out[MM_DEC_ROWS]) {
    __m512 acc[MM_DEC_ROWS];
    for (int r = 0; r < MM_DEC_ROWS; r++) {
        acc[r] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < K;) {
        const int64_t kend = htp_min64(K, k + MM_PH_FLUSH * 32);
        __m512h       part[MM_DEC_ROWS];
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            part[r] = _mm512_setzero_ph();
        }
        for (; k < kend; k += 32) {
            const int64_t n  = kend - k;
            const __m512h yv = mm_ph_load(y + k, n);
            for (int r = 0; r < MM_DEC_ROWS; r++) {
                part[r] = _mm512_fmadd_ph(mm_ph_load((const uint16_t *)(const void *)w[r] + k, n), yv, part[r]);
            }
        }
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            acc[r] = _mm512_add_ps(acc[r], mm_ph_widen(part[r]));
        }
    }
    for (int r = 0; r < MM_DEC_ROWS; r++) {
        out[r] = _mm512_reduce_add_ps(acc[r]);
    }
}

#endif

// Expands CALL(nr, nc) for the micro-kernel shape (nr, nc), nr 1..2 and nc
// 1..4, so that each shape is its own straight-line instance.
#define MM_BY_SHAPE(nr, nc, CALL) \
    switch ((nr)*8 + (nc)) {      \
        case 9:                   \
            CALL(1, 1);           \
            break;                \
        case 10:                  \
            CALL(1, 2);           \
            break;                \
        case 11:                  \
            CALL(1, 3);           \
            break;                \
        case 12:                  \
            CALL(1, 4);           \
            break;                \
        case 17:                  \
            CALL(2, 1);           \
            break;                \
        case 18:                  \
            CALL(2, 2);           \
            break;                \
        case 19:                  \
            CALL(2, 3);           \
            break;                \
        default:                  \
            CALL(2, 4);           \
            break;                \
    }

// Picks the straight-line micro-kernel for (nr, nc) and the weight type; ph:
// the columns y[] are staged fp16 for the half-precision kernel (MM_PH).
static void mm_dispatch(int nr, int nc, int f16, int ph, int64_t K, const uint8_t * const * w, const float * const * y,
                        float out[2][4]) {
#if MM_PH
    if (ph) {
        const uint16_t * yh[4];
        for (int c = 0; c < nc; c++) {
            yh[c] = (const uint16_t *)(const void *)y[c];
        }
#define MM_CALL_PH(r, c) mm_micro_ph(r, c, K, w, yh, out)
        MM_BY_SHAPE(nr, nc, MM_CALL_PH)
#undef MM_CALL_PH
        return;
    }
#else
    (void)ph;
#endif
#define MM_CALL_F16(r, c) mm_micro(r, c, 1, K, w, y, out)
#define MM_CALL_F32(r, c) mm_micro(r, c, 0, K, w, y, out)
    if (f16) {
        MM_BY_SHAPE(nr, nc, MM_CALL_F16)
    } else {
        MM_BY_SHAPE(nr, nc, MM_CALL_F32)
    }
#undef MM_CALL_F16
#undef MM_CALL_F32
}

// One activation row (element stride nb, F32/F16/BF16) as K fp16 values at dst.
static void mm_stage_f16(uint16_t * dst, const uint8_t * src, int64_t nb, uint32_t type, int64_t K) {
    float buf[256];
    for (int64_t k = 0; k < K; k += 256) {
        const int64_t n = htp_min64(256, K - k);
        htp_row_load_f32(buf, src + k * nb, nb, type, n);
        htp_fp32_to_fp16_row(buf, dst + k, n);
    }
}

// Column j -> (n, i2, i3) of src1 / dst.
static void mm_col_index(const struct mm_args * a, int64_t j, int64_t * n, int64_t * i2, int64_t * i3) {
    htp_row_index(a->src1->ne, j, n, i2, i3);
}

static void mm_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct mm_args *        a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *src1 = a->src1, *dst = a->dst;
    const int64_t                 K = src0->ne[0], M = src0->ne[1];
    const int                     f16        = src0->type == HTP_TYPE_F16;
    uint8_t *                     stage      = a->scratch + a->slice * ith;
    const size_t                  col_stride = a->cb > 0 ? a->slice / (size_t)a->cb : 0;  // bytes per staged column

    int64_t t0, t1;
    htp_split(a->n_rb * a->n_cb, ith, nth, &t0, &t1);
    int64_t staged_cb = -1;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t cbi = t / a->n_rb, rbi = t % a->n_rb;
        const int64_t j0 = cbi * a->cb, j1 = htp_min64(a->ncols, j0 + a->cb);
        const int64_t m0 = rbi * MM_RB, m1 = htp_min64(M, m0 + MM_RB);

        if (a->stage && staged_cb != cbi) {
            for (int64_t j = j0; j < j1; j++) {
                int64_t n, i2, i3;
                mm_col_index(a, j, &n, &i2, &i3);
                uint8_t * col = stage + (size_t)(j - j0) * col_stride;
                if (a->ph) {
                    mm_stage_f16((uint16_t *)(void *)col, htp_view_row(src1, n, i2, i3), src1->nb[0], src1->type, K);
                } else {
                    htp_row_load_f32((float *)(void *)col, htp_view_row(src1, n, i2, i3), src1->nb[0], src1->type, K);
                }
            }
            staged_cb = cbi;
        }

        // Columns in groups of up to 4 that share a batch (and so weight rows).
        for (int64_t j = j0; j < j1;) {
            int64_t         n, i2, i3;
            const float *   y[4];
            uint8_t *       d[4];
            const uint8_t * ar[4];
            mm_col_index(a, j, &n, &i2, &i3);
            int nc = 0;
            for (; nc < a->max_nc && j + nc < j1; nc++) {
                int64_t cn, c2, c3;
                mm_col_index(a, j + nc, &cn, &c2, &c3);
                if (c2 != i2 || c3 != i3) {
                    break;
                }
                y[nc]  = a->stage ? (const float *)(const void *)(stage + (size_t)(j + nc - j0) * col_stride)
                                  : (const float *)(const void *)htp_view_row(src1, cn, c2, c3);
                d[nc]  = htp_view_row(dst, cn, c2, c3);
                ar[nc] = htp_mm_addend_row(a->add, cn, c2, c3);
            }
            const uint8_t * wbase = src0->data + (i2 / a->r2) * src0->nb[2] + (i3 / a->r3) * src0->nb[3];
            int64_t         m     = m0;
            if (nc == 1) {
                for (; m + MM_DEC_ROWS <= m1; m += MM_DEC_ROWS) {
                    const uint8_t * w[MM_DEC_ROWS];
                    float           out[MM_DEC_ROWS];
                    for (int r = 0; r < MM_DEC_ROWS; r++) {
                        w[r] = wbase + (m + r) * src0->nb[1];
                    }
#if MM_PH
                    if (a->ph) {
                        mm_micro_ph_dec(K, w, (const uint16_t *)(const void *)y[0], out);
                    } else
#endif
                    {
                        mm_dispatch_dec(f16, K, w, y[0], out);
                    }
                    htp_mm_store(d[0], dst->nb[0], m, out, MM_DEC_ROWS, a->add, ar[0]);
                }
            }
            if (nc == 4 && !a->ph) {
                for (; m + 4 <= m1; m += 4) {
                    const uint8_t * w[4];
                    float           out[4][4];
                    for (int r = 0; r < 4; r++) {
                        w[r] = wbase + (m + r) * src0->nb[1];
                    }
                    if (f16) {
                        mm_micro(4, 4, 1, K, w, y, out);
                    } else {
                        mm_micro(4, 4, 0, K, w, y, out);
                    }
                    for (int r = 0; r < 4; r++) {
                        for (int c = 0; c < 4; c++) {
                            htp_mm_store(d[c], dst->nb[0], m + r, &out[r][c], 1, a->add, ar[c]);
                        }
                    }
                }
            }
            for (; m < m1; m += 2) {
                const int       nr   = m + 1 < m1 ? 2 : 1;
                const uint8_t * w[2] = {wbase + m * src0->nb[1], wbase + (m + nr - 1) * src0->nb[1]};
                float           out[2][4];
                mm_dispatch(nr, nc, f16, a->ph, K, w, y, out);
                for (int r = 0; r < nr; r++) {
                    for (int c = 0; c < nc; c++) {
                        htp_mm_store(d[c], dst->nb[0], m + r, &out[r][c], 1, a->add, ar[c]);
                    }
                }
            }
            j += nc;
        }
    }
}

// Decode (one column). Each worker takes a contiguous run of rows [r0, r1)
// (whole tiles, as mm_job would) and cuts it into MM_DEC_ROWS equal streams
// of adjacent rows; each kernel call sums the next row of every stream, the
// rest (fewer than MM_DEC_ROWS rows) follow one by one. So a worker reads
// MM_DEC_ROWS long sequential streams far apart, the pattern of the membw
// read loop, and the kernel's prefetch, running past a row's end, lands in
// the row its stream reads next. Adjacent rows side by side (a tile's rows,
// as before) made MM_DEC_ROWS streams only one row long, 4 KiB at K = 2048:
// the prefetch past their ends was wasted and each next group began cold;
// reading them one after the other instead left the hardware prefetcher
// alone, and it does not run ahead far enough.
//
// On 2 cores of an AMD EPYC (Zen 5), F16 ratio to ggml-cpu at n = 1 over
// three alternated pairs of builds, rows one after the other (up to
// K = 4096) -> streams, hot / cold: 128256 x 2048 1.00-1.09 / 0.92-0.97
// -> 1.37-1.53 / 1.08-1.39, 8192 x 2048 1.38-1.63 / 1.23-1.31 ->
// 1.14-1.76 / 1.06-1.56, 2048 x 8192 1.23-1.39 / 1.14-1.29 -> 1.22-1.68 /
// 1.07-1.51, 2048 x 2048 0.92-1.08 / 1.03-1.16 -> 0.97-1.04 / 0.98-1.35,
// 512 x 2048 0.88-1.15 / 1.00-1.06 -> 0.89-1.10 / 1.07-1.35 (the small
// ones gain least: a worker's streams are short); the 1B model's F16 tg
// 1.22-1.32x -> 1.40-1.49x (two pairs, both vocabularies, -p 64 -n 128).
// The AVX512-FP16 decode (mm_micro_ph_dec) keeps mm_job's tiles: no such
// CPU here to measure a change on. A standalone 2-thread read of a 128256 x 2048 F16
// matrix: one row at a time 36-42 GB/s, four far streams with a 2 KiB
// prefetch 53-60 GB/s, the membw loop 67-70 GB/s in the same minutes.
static void mm_dec_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct mm_args *        a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *src1 = a->src1, *dst = a->dst;
    const int64_t                 K = src0->ne[0], M = src0->ne[1];
    const int                     f16 = src0->type == HTP_TYPE_F16;

    int64_t t0, t1;
    htp_split(a->n_rb, ith, nth, &t0, &t1);
    const int64_t r0 = t0 * MM_RB, r1 = htp_min64(M, t1 * MM_RB);
    if (r0 >= r1) {
        return;
    }
    const float * y = (const float *)(const void *)htp_view_row(src1, 0, 0, 0);
    if (a->stage) {
        float * col = (float *)(void *)(a->scratch + a->slice * ith);
        htp_row_load_f32(col, htp_view_row(src1, 0, 0, 0), src1->nb[0], src1->type, K);
        y = col;
    }
    uint8_t *       d  = htp_view_row(dst, 0, 0, 0);
    const uint8_t * ar = htp_mm_addend_row(a->add, 0, 0, 0);
    const int64_t   q  = (r1 - r0) / MM_DEC_ROWS;  // rows per stream
    for (int64_t i = 0; i < q; i++) {
        const uint8_t * w[MM_DEC_ROWS];
        float           out[MM_DEC_ROWS];
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            w[r] = src0->data + (r0 + r * q + i) * src0->nb[1];
        }
        mm_dispatch_dec(f16, K, w, y, out);
        for (int r = 0; r < MM_DEC_ROWS; r++) {
            htp_mm_store(d, dst->nb[0], r0 + r * q + i, &out[r], 1, a->add, ar);
        }
    }
    for (int64_t m = r0 + q * MM_DEC_ROWS; m < r1; m++) {
        const uint8_t * w[2] = {src0->data + m * src0->nb[1], NULL};
        float           out[2][4];
        mm_dispatch(1, 1, f16, 0, K, w, &y, out);
        htp_mm_store(d, dst->nb[0], m, &out[0][0], 1, a->add, ar);
    }
}

int htp_mm_float_run(struct htp_op_ctx * ctx) {
    struct mm_args a = {0};
    a.src0           = ctx->op.src[0];
    a.src1           = ctx->op.src[1];
    a.dst            = ctx->op.dst[0];
    a.add            = ctx->op.desc->opcode == HTP_OP_MUL_MAT_ADD ? ctx->op.src[2] : NULL;
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    a.cb = htp_mm_plan_float(a.src1, ctx->op.n_threads, ctx->op.vtcm_size, &a.slice);
    if (a.cb < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    a.stage     = htp_mm_needs_staging(a.src1);
    a.scratch   = ctx->vtcm;
    a.r2        = a.src1->ne[2] / a.src0->ne[2];
    a.r3        = a.src1->ne[3] / a.src0->ne[3];
    a.ncols     = htp_view_nrows(a.src1);
    ctx->engine = htp_mm_unit(ctx, a.ncols);
    if (MM_PH && a.src0->type == HTP_TYPE_F16) {
        // The fp16 columns take half the room of the fp32 ones the plan
        // sizes; without room for that plan the op keeps the fp32 path.
        size_t        slice;
        const int64_t cb = htp_mm_plan_staged(a.src1->ne[0], ctx->op.n_threads, ctx->op.vtcm_size, &slice);
        if (cb >= 1) {
            a.ph    = 1;
            a.stage = 1;
            a.cb    = cb;
            a.slice = slice;
        }
    }
    a.max_nc = ctx->engine == HTP_UNIT_HMX ? 4 : 1;
    a.n_rb   = (a.src0->ne[1] + MM_RB - 1) / MM_RB;
    a.n_cb   = (a.ncols + a.cb - 1) / a.cb;
    ctx->run(ctx->pool, a.ncols == 1 && !a.ph ? mm_dec_job : mm_job, &a);
    return HTP_STATUS_OK;
}
