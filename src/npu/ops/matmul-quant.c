// matmul-quant.c: MUL_MAT with quantized (Q4_0, Q4_1, Q8_0, IQ4_NL, MXFP4,
// Q5_0, Q5_1, NVFP4, Q1_0, Q2_0) or BF16 weights, and MUL_MAT_ID (mixture of experts) for every
// weight type; the fused MUL_MAT_QKV, MUL_MAT_FFN and MUL_MAT_FFN_GLU of quantized weights.
//
//   MUL_MAT     src0 [K, M, ne02, ne03]  src1 [K, N, ne12, ne13] F32/F16/BF16  dst [M, N, ne12, ne13] F32
//   MUL_MAT_ID  src0 [K, M, E]           src1 [K, ne11, T]   src2 ids I32 [U, T]   dst [M, U, T] F32
//               dst[:, s, t] = src0[:, :, ids[s, t]] x src1[:, s % ne11, t]
//
// Quantized weights take integer dot products, as ggml-cpu does: activations
// are quantized on the NPU into the scratch area ("VTCM") as Q8 blocks of 32
// (QMM_ABLK = 40 bytes each, back to back: int8 q[32], f32 d, int32 sum of q,
// so a column is one sequential stream for the micro-kernel; three separate
// q/d/sum arrays made 24 streams at 8 columns), then one vpdpbusd multiplies
// a vector of weight bytes (u8, 16 rows x 4 k of a tile, tiled.h) by 4 activation bytes
// broadcast to every lane. Each lane collects one row's block dot product; the
// weights' offset (8 for Q4_0, 128 for the u8 form of Q8_0 and the table
// types, 16 for Q5_0) is removed by starting the accumulator at
// -offset * sum(q). Per block the int32 dot is scaled by d_w (16 lanes) * d_a
// and accumulated in f32; Q4_1 and Q5_1 add m_w * d_a * sum(q), as ggml-cpu
// does with its q8_1 activations. Q5_0 / Q5_1 weights are unpacked as the
// 4-bit types and get their fifth bit from the tile's masks (tiled.h).
//
// Q1_0 (blocks of 128), Q2_0 and NVFP4 (64) are taken as 32-element units,
// one per activation block (tiled.h: unit k of a row is at k * unit bytes of
// the group's quant parts): Q1_0's sign masks expand to 0 / 2 with offset 1
// (x = d (2b - 1)), Q2_0's two bit planes to 0..3 with offset 1, NVFP4's
// nibbles through the e2m1 table as MXFP4's. NVFP4 has a scale per 16
// elements, so a unit takes two int dots (its low nibbles, elements 0-15,
// and its high ones), each started at -128 * the sum of its 16 activation
// quants and scaled by its own ue4m3 scale; Q1_0's and Q2_0's units all use
// their block's d.
//
// Work: columns (one src1 row each; for MUL_MAT_ID one (slot, token) pair,
// sorted by expert) are described in a list; tiles of one row group (16 rows)
// x up to QMM_CB columns are shared between the workers (work-share.h), in
// chunks of QMM_SHARE_CHUNK, column block by column block, so decode splits
// over rows and prefill over rows and columns. Within a tile
// the micro-kernel takes up to QMM_NC columns that share a weight slice and
// loads each weight vector once for all of them; a lone column (decode)
// instead takes four row groups per call (two where fewer are left, or on
// HVX), so each activation load feeds 64 rows and the core has four
// independent chains while the weights stream in (with software prefetch
// ahead of every group). Against two groups, in six alternated pairs over
// three runs at different times: the 1B model at vocabulary 512 decoded
// Q4_0 3-8% and MXFP4 3-6% faster, and the cold lm-head matmul (128256 x
// 2048, n = 1) read Q8_0 1-7% and MXFP4 4-8% faster (Q4_0's moved -3% to
// +11%, within its noise). Weights in the plain ggml
// layout (not repacked) are packed one row group at a time into the worker's
// slice of scratch and then take the same path. If the activations of all
// columns do not fit the scratch, they are processed in chunks.
//
// Float weights (F32/F16/BF16 under MUL_MAT_ID, BF16 under MUL_MAT) use the
// same column list with f32 dot products.
//
// On Hexagon (HVX, v67) the micro-kernels and the activation quantizer have
// HVX paths for their integer work (see qmm_hvx); GGML_HTP_SCALAR=1 selects
// the portable C instead (quant.h), which gives the same bits.

#include <string.h>

#include "contract/ops/fused-check.h"
#include "contract/ops/matmul-check.h"
#include "fp16.h"
#include "contract/type-traits.h"
#include "kernel-util.h"
#include "matmul.h"
#include "kquant-dot.h"
#include "quant.h"
#include "stream-prefetch.h"
#include "contract/tiled.h"
#include "vec.h"
#include "work-share.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#define QMM_AVX512 1
#endif

#if defined(__HVX__)
#include "hvx.h"
#endif

#define QMM_NC          8   // columns per micro-kernel call
#define QMM_CB          64  // columns per tile
#define QMM_SHARE_CHUNK 4   // row groups a worker claims at a time

#define QMM_ABLK HTP_QMM_ACT_BLOCK  // one quantized activation block: q[32], f32 d at 32, i32 sum at 36

struct qmm_col {
    const uint8_t * act;  // quantized (or f32 staged) activations of this column
    uint8_t *       dst;  // dst row: element m at dst + m * dst_nb0
    const uint8_t * w;    // weight slice (2-D) of this column
};

_Static_assert(sizeof(struct qmm_col) <= HTP_QMM_COL_BYTES, "the scratch plan's column size");

struct qmm_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * src1;
    const struct htp_tile_format * f;  // NULL: float weights
    int                            tiled;
    int64_t                        K, M, nblk;
    uint64_t                       gb;       // bytes per row group (tiled layout)
    int64_t                        dst_nb0;  // dst element stride
    const struct htp_tensor_view * add;      // MUL_MAT_ADD's addend (matmul.h's epilogue), else NULL
    const uint8_t *                up;       // MUL_MAT_FFN_GLU's up weights (src0: the gate's), else NULL
    ptrdiff_t                      up_off;   // ... where a column's up matrix is, from its gate matrix
    int                            glu_up;   // MUL_MAT_FFN_GLU's up pass on HVX: dst holds the gate's sums
    size_t                         act_stride;
    // chunk
    int64_t          act_row0, n_act;  // src1 flat rows quantized into acts
    uint8_t *        acts;
    struct qmm_col * cols;
    int64_t          ncols, n_cb, n_groups;
    int              max_nc;  // columns per micro-kernel call: QMM_NC on HMX, 1 on HVX (htp_mm_unit)
    uint8_t *        slices;  // per-worker scratch: one packed group or one f32 weight row
    size_t           slice_bytes;
};

// ---------------------------------------------------------------------------
// Activation quantization: a row of K floats -> Q8 blocks of 32
// ---------------------------------------------------------------------------

// One block of 32 floats with its max |x| found -> one activation block at o.
// As ggml-cpu's q8_0 / q8_1 activations: the quants are x * (127 / amax),
// and the block's scale is amax / 127 rounded to fp16 (where ggml-cpu keeps
// it), so the integer dot's result is scaled by the very same number.
static inline float qmm_act_scale(float amax) {
    return htp_fp16_to_fp32(htp_fp32_to_fp16(amax / 127.0f));
}

static inline void qmm_quantize_block(const float * xb, float amax, uint8_t * o) {
    const float db = qmm_act_scale(amax);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t     s  = 0;
    for (int j = 0; j < 32; j++) {
        // Ties to even, as ggml-cpu's SIMD; NaN / inf saturate (kernel-util.h).
        const int32_t v = htp_f2i_sat(__builtin_nearbyintf(xb[j] * id), -128, 127);
        o[j]            = (uint8_t)(int8_t)v;
        s += v;
    }
    memcpy(o + 32, &db, 4);
    memcpy(o + 36, &s, 4);
}

// nb blocks of 32 floats at x -> nb activation blocks of QMM_ABLK bytes at out
// (quant.h). The portable code:
void htp_qmm_quantize_blocks_ref(const float * x, int64_t nb, uint8_t * out) {
    for (int64_t b = 0; b < nb; b++) {
        const float * xb   = x + 32 * b;
        float         amax = 0.0f;
        for (int j = 0; j < 32; j++) {
            const float v = xb[j] < 0 ? -xb[j] : xb[j];
            amax          = amax > v ? amax : v;
        }
        qmm_quantize_block(xb, amax, out + QMM_ABLK * b);
    }
}

#if defined(__HVX__)
// HVX finds max |x|: a block is one vector, and for finite non-negative
// floats the order of the bit patterns (sign cleared) is the order of the
// values, so a signed word max of x & 0x7fffffff is max |x| exactly. Blocks
// the portable loop treats specially go to it: all zeros (its max keeps the
// sign of the last -0), inf or NaN (its max forgets a NaN met before a
// number). The rounding is float work, scalar on v67, and the int8 sum rides
// in that loop (one add beside a multiply and a rounding per element, less
// than moving the 32 bytes into a vector would cost).
static void qmm_quantize_blocks_hvx(const float * x, int64_t nb, uint8_t * out) {
    for (int64_t b = 0; b < nb; b++) {
        const float *  xb   = x + 32 * b;
        const uint32_t bits = (uint32_t)hvx_lane(hvx_hmax_w(hvx_ld(xb) & hvx_w(0x7fffffff)), 0);
        if (bits == 0 || bits >= 0x7f800000u) {
            htp_qmm_quantize_blocks_ref(xb, 1, out + QMM_ABLK * b);
            continue;
        }
        qmm_quantize_block(xb, htp_bits_f32(bits), out + QMM_ABLK * b);
    }
}
#endif

#ifdef QMM_AVX512
// htp_f2i_sat(nearbyint(p), -128, 127) on 16 lanes: NaN to 0, the rest
// clamped to the int8 range and rounded, ties to even (the default MXCSR).
static inline __m512i qmm_f2i_sat_avx512(__m512 p) {
    p = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(p, p, _CMP_ORD_Q), p);
    p = _mm512_min_ps(_mm512_max_ps(p, _mm512_set1_ps(-128.0f)), _mm512_set1_ps(127.0f));
    return _mm512_cvtps_epi32(p);
}

// htp_qmm_quantize_blocks_ref on two 16-float registers a block, same bits on
// finite data: the product is rounded to float, then to the nearest integer,
// ties to even. A NaN or inf in the block (amax or id then not finite) gives
// saturated quants, never an out-of-range conversion.
static void qmm_quantize_blocks_avx512(const float * x, int64_t nb, uint8_t * out) {
    for (int64_t b = 0; b < nb; b++) {
        const __m512  lo   = _mm512_loadu_ps(x + 32 * b);
        const __m512  hi   = _mm512_loadu_ps(x + 32 * b + 16);
        const float   amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(lo), _mm512_abs_ps(hi)));
        const float   db   = qmm_act_scale(amax);
        const float   id   = amax != 0.0f ? 127.0f / amax : 0.0f;
        const __m512  vid  = _mm512_set1_ps(id);
        const __m512i qlo  = qmm_f2i_sat_avx512(_mm512_mul_ps(lo, vid));
        const __m512i qhi  = qmm_f2i_sat_avx512(_mm512_mul_ps(hi, vid));
        const int32_t s    = _mm512_reduce_add_epi32(_mm512_add_epi32(qlo, qhi));
        uint8_t *     o    = out + QMM_ABLK * b;
        _mm_storeu_si128((__m128i *)(void *)o, _mm512_cvtepi32_epi8(qlo));
        _mm_storeu_si128((__m128i *)(void *)(o + 16), _mm512_cvtepi32_epi8(qhi));
        memcpy(o + 32, &db, 4);
        memcpy(o + 36, &s, 4);
    }
}
#endif

void htp_qmm_quantize_blocks(const float * x, int64_t nb, uint8_t * out) {
#ifdef QMM_AVX512
    qmm_quantize_blocks_avx512(x, nb, out);
#elif defined(__HVX__)
    if (htp_kernels_portable()) {
        htp_qmm_quantize_blocks_ref(x, nb, out);
    } else {
        qmm_quantize_blocks_hvx(x, nb, out);
    }
#else
    htp_qmm_quantize_blocks_ref(x, nb, out);
#endif
}

// Float weights: ggml-cpu converts the activations to its dot product's
// type first (BF16 weights: to bf16; F16: to fp16; F32: kept), so the f32
// activations are rounded the same way (then every product is exact in f32,
// as on the CPU). Without it a dot that cancels, one output of m = n = 1,
// differed from the CPU's by an NMSE up to 2e-2 (BF16).
static void qmm_round_float_acts(uint32_t wtype, float * x, int64_t n) {
    if (wtype == HTP_TYPE_BF16) {
        for (int64_t i = 0; i < n; i++) {
            x[i] = htp_bf16_to_fp32(htp_fp32_to_bf16(x[i]));
        }
    } else if (wtype == HTP_TYPE_F16) {
        for (int64_t i = 0; i < n; i++) {
            x[i] = htp_fp16_to_fp32(htp_fp32_to_fp16(x[i]));
        }
    }
}

static void qmm_act_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct qmm_args *        a    = arg;
    const struct htp_tensor_view * src1 = a->src1;
    float                          buf[HTP_CHUNK];
    int64_t                        r0, r1;
    htp_split(a->n_act, ith, nth, &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        int64_t i1, i2, i3;
        htp_row_index(src1->ne, a->act_row0 + i, &i1, &i2, &i3);
        const uint8_t * row = htp_view_row(src1, i1, i2, i3);
        uint8_t *       out = a->acts + (size_t)i * a->act_stride;
        if (!a->f) {
            htp_row_load_f32((float *)(void *)out, row, src1->nb[0], src1->type, a->K);
            qmm_round_float_acts(a->src0->type, (float *)(void *)out, a->K);
            continue;
        }
        for (int64_t c = 0; c < a->K; c += HTP_CHUNK) {  // chunks of whole blocks
            const int64_t k = htp_min64(HTP_CHUNK, a->K - c);
            const float * x = buf;
            if (htp_view_is_f32_packed(src1)) {
                x = (const float *)(const void *)(row + c * 4);
            } else {
                htp_row_load_f32(buf, row + c * src1->nb[0], src1->nb[0], src1->type, k);
            }
            htp_qmm_quantize_blocks(x, k / 32, out + (c / 32) * QMM_ABLK);
        }
    }
}

// ---------------------------------------------------------------------------
// Micro-kernel: one row group (16 rows) x nc columns over all blocks.
// out[c][r] = dot(row r, column c).
// ---------------------------------------------------------------------------

static inline int qmm_offset(uint32_t type) {
    switch (type) {
        case HTP_TYPE_Q1_0:  // expanded to 0 / 2
        case HTP_TYPE_Q2_0:
            return 1;
        case HTP_TYPE_Q4_0:
            return 8;
        case HTP_TYPE_Q5_0:
            return 16;
        case HTP_TYPE_Q4_1:
        case HTP_TYPE_Q5_1:
            return 0;
        default:
            return 128;  // Q8_0's u8 form, the table types
    }
}

// Q5_0, Q5_1: 4-bit tiles plus a fifth bit from the masks.
static inline int qmm_q5(uint32_t type) {
    return type == HTP_TYPE_Q5_0 || type == HTP_TYPE_Q5_1;
}

// The types with a min (x = d*q + m): m_w * d_a * sum(q) per block.
static inline int qmm_has_min(uint32_t type) {
    return type == HTP_TYPE_Q4_1 || type == HTP_TYPE_Q5_1;
}

// Q1_0, Q2_0, NVFP4: ggml blocks of several 32-element units (tiled.h).
static inline int qmm_unit_type(uint32_t type) {
    return type == HTP_TYPE_Q1_0 || type == HTP_TYPE_Q2_0 || type == HTP_TYPE_NVFP4;
}

// Units a ggml block, and bytes of a unit's quant part.
static inline int qmm_units(uint32_t type) {
    return type == HTP_TYPE_Q1_0 ? 4 : qmm_unit_type(type) ? 2 : 1;
}

static inline uint32_t qmm_unit_bytes(uint32_t type) {
    return type == HTP_TYPE_Q1_0 ? HTP_Q1_0_UNIT : type == HTP_TYPE_Q2_0 ? HTP_Q2_0_UNIT : HTP_NVFP4_UNIT;
}

// Bytes of a tile's quant part and scale part (tiled.h).
static inline uint32_t qmm_qbytes(uint32_t type) {
    return type == HTP_TYPE_Q8_0 || type == HTP_TYPE_NVFP4 ? 512 : qmm_q5(type) ? HTP_Q5_Q_BYTES : 256;
}

static inline uint32_t qmm_sbytes(uint32_t type) {
    return qmm_has_min(type) || type == HTP_TYPE_NVFP4 ? 64 : type == HTP_TYPE_MXFP4 ? 16 : 32;
}

// The unit types' scales of unit k of a row (sb: the group's scale parts),
// for the 16 rows: d[r], and for NVFP4 d[r] of the unit's first sub-block
// (its low nibbles) and d[16 + r] of its second. Every path (portable, AVX-512,
// HVX) converts with these exact values.
static inline void qmm_unit_scales(uint32_t type, const uint8_t * sb, int64_t k, float d[32]) {
    const int       nu = qmm_units(type);
    const uint8_t * s  = sb + (size_t)(k / nu) * qmm_sbytes(type);
    if (type == HTP_TYPE_NVFP4) {
        const int f = 2 * (int)(k % nu);
        for (int r = 0; r < HTP_TILE_ROWS; r++) {
            d[r]      = htp_ue4m3_to_fp32_half(s[16 * f + r]);
            d[16 + r] = htp_ue4m3_to_fp32_half(s[16 * (f + 1) + r]);
        }
        return;
    }
    for (int r = 0; r < HTP_TILE_ROWS; r++) {
        uint16_t h;
        memcpy(&h, s + 2 * r, 2);
        d[r] = htp_fp16_to_fp32(h);
    }
}

// Sum of the first 16 int8 quants of an activation block (NVFP4's first sub-block).
static inline int32_t qmm_half_sum(const uint8_t * aq) {
    int32_t s = 0;
    for (int j = 0; j < 16; j++) {
        s += (int8_t)aq[j];
    }
    return s;
}

// Portable: unit k's u8 weights of row r (element order) from its quant part uq.
static inline void qmm_unit_weights(uint32_t type, const uint8_t * uq, int r, uint8_t w[32]) {
    for (int e = 0; e < 32; e++) {
        const int g = e / 4, j = e % 4, bit = 4 * (r & 1) + j;
        if (type == HTP_TYPE_NVFP4) {
            const uint8_t b = uq[64 * (g & 3) + 4 * r + j];
            w[e]            = (uint8_t)(htp_mxfp4_values[g < 4 ? (b & 15) : (b >> 4)] + 128);
            continue;
        }
        const int b0 = (uq[8 * g + r / 2] >> bit) & 1;
        if (type == HTP_TYPE_Q1_0) {
            w[e] = (uint8_t)(2 * b0);
        } else {
            w[e] = (uint8_t)(b0 + 2 * ((uq[64 + 8 * g + r / 2] >> bit) & 1));
        }
    }
}

// Portable kernel of the unit types (also their reference on HVX builds):
// unit by unit, rows r, columns c: the int dot(s) of the unit, then
// out = fma(dot, d * d_a, out) (NVFP4: the first sub-block's, then the second's).
static void qmm_unit_tile_ref(const uint32_t type, const int nc, const uint8_t * group, int64_t nblk,
                              const uint8_t * const * acts, float (*out)[HTP_TILE_ROWS]) {
    const int64_t   nk  = nblk * qmm_units(type);
    const uint32_t  ub  = qmm_unit_bytes(type);
    const int       off = qmm_offset(type);
    const uint8_t * sb  = group + (size_t)nblk * qmm_qbytes(type);
    for (int c = 0; c < nc; c++) {
        memset(out[c], 0, sizeof out[c]);
    }
    for (int64_t k = 0; k < nk; k++) {
        float d[32];
        qmm_unit_scales(type, sb, k, d);
        for (int r = 0; r < HTP_TILE_ROWS; r++) {
            uint8_t w[32];
            qmm_unit_weights(type, group + (size_t)k * ub, r, w);
            for (int c = 0; c < nc; c++) {
                const int8_t * aq = (const int8_t *)acts[c] + k * QMM_ABLK;
                float          ad;
                int32_t        is;
                memcpy(&ad, aq + 32, 4);
                memcpy(&is, aq + 36, 4);
                if (type == HTP_TYPE_NVFP4) {
                    const int32_t is0 = qmm_half_sum((const uint8_t *)aq);
                    int32_t       lo = -off * is0, hi = -off * (is - is0);
                    for (int e = 0; e < 16; e++) {
                        lo += (int32_t)w[e] * aq[e];
                        hi += (int32_t)w[16 + e] * aq[16 + e];
                    }
                    out[c][r] = __builtin_fmaf((float)lo, d[r] * ad, out[c][r]);
                    out[c][r] = __builtin_fmaf((float)hi, d[16 + r] * ad, out[c][r]);
                } else {
                    int32_t ia = -off * is;
                    for (int e = 0; e < 32; e++) {
                        ia += (int32_t)w[e] * aq[e];
                    }
                    out[c][r] = __builtin_fmaf((float)ia, d[r] * ad, out[c][r]);
                }
            }
        }
    }
}

void htp_qmm_unit_dot_tile_ref(uint32_t type, const uint8_t * group, int64_t nblk, const uint8_t * const * acts, int nc,
                               float out[8][16]) {
    qmm_unit_tile_ref(type, nc, group, nblk, acts, out);
}

#if !defined(QMM_AVX512)
// The same on qmm_col columns.
static inline void qmm_unit_tile_cols(const uint32_t type, const int nc, const uint8_t * group, int64_t nblk,
                                      const struct qmm_col * cols, float (*out)[HTP_TILE_ROWS]) {
    const uint8_t * acts[QMM_NC];
    for (int c = 0; c < nc; c++) {
        acts[c] = cols[c].act;
    }
    qmm_unit_tile_ref(type, nc, group, nblk, acts, out);
}
#endif

#if defined(QMM_AVX512)

// Bytes ahead of the current tile that the kernels prefetch in a group's
// quant stream: the hardware prefetcher alone left decode at about half the
// read bandwidth (htp-bench matmul, m = 32768, k = 8192, n = 1). Not on AMD
// Zen 4, where they are off (stream-prefetch.c).
#define QMM_PREFETCH 4096

// Always inlined: GCC deletes calls to an out-of-line function whose only
// effect is prefetching (see kq_prefetch_sb in kquant.c).
static inline __attribute__((always_inline)) void qmm_prefetch(const uint8_t * p, uint32_t bytes) {
    for (uint32_t o = 0; htp_mm_stream_prefetch && o < bytes; o += 64) {
        _mm_prefetch((const char *)(p + QMM_PREFETCH + o), _MM_HINT_T0);
    }
}

// The scale stream of a group (after its quants) is read at 16-64 bytes a
// block, too slowly for the hardware prefetcher to follow: each of its lines
// was a demand miss. One prefetch a block, QMM_SCALE_AHEAD blocks ahead
// (and the first lines when a group starts), keeps it in flight.
#define QMM_SCALE_AHEAD 16

static inline __attribute__((always_inline)) void qmm_prefetch_scales_start(uint32_t type, const uint8_t * sb,
                                                                            int64_t nblk) {
    const int64_t bytes = htp_min64(nblk, QMM_SCALE_AHEAD) * qmm_sbytes(type);
    for (int64_t o = 0; htp_mm_stream_prefetch && o < bytes; o += 64) {
        _mm_prefetch((const char *)(sb + o), _MM_HINT_T0);
    }
}

static inline __attribute__((always_inline)) void qmm_prefetch_scales(uint32_t type, const uint8_t * sb, int64_t kb) {
    if (htp_mm_stream_prefetch) {
        _mm_prefetch((const char *)(sb + (kb + QMM_SCALE_AHEAD) * qmm_sbytes(type)), _MM_HINT_T0);
    }
}

static inline __m512i qmm_lut(uint32_t type) {
    if (type != HTP_TYPE_IQ4_NL && type != HTP_TYPE_MXFP4) {
        return _mm512_setzero_si512();
    }
    const int8_t * tab = type == HTP_TYPE_IQ4_NL ? htp_iq4nl_values : htp_mxfp4_values;
    uint8_t        t8[16];
    for (int i = 0; i < 16; i++) {
        t8[i] = (uint8_t)(tab[i] + 128);  // u8 form: value + 128
    }
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)t8));
}

// The quant part of one tile as 8 vectors of u8 weights; vector g holds
// k-group g (elements 4g .. 4g+3) of the 16 rows. With hi16 set, the Q4_0 and
// Q4_1 high nibbles are left in place (16 x their value): one instruction
// fewer per vector, and the caller divides that half's dot product by 16.
// Q5_0 / Q5_1 (never hi16) then add 16 where mask g has the row's bit.
static inline __attribute__((always_inline)) void qmm_unpack(const uint32_t type, const uint8_t * q, __m512i lut,
                                                             int hi16, __m512i w[8]) {
    if (type == HTP_TYPE_Q8_0) {
        for (int v = 0; v < 8; v++) {
            w[v] = _mm512_loadu_si512((const void *)(q + 64 * v));
        }
        return;
    }
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    for (int v = 0; v < 4; v++) {
        const __m512i raw = _mm512_loadu_si512((const void *)(q + 64 * v));
        w[v]              = _mm512_and_si512(raw, m4);
        if (type == HTP_TYPE_IQ4_NL || type == HTP_TYPE_MXFP4) {
            w[v]     = _mm512_shuffle_epi8(lut, w[v]);
            w[v + 4] = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4));
        } else if (hi16) {
            w[v + 4] = _mm512_andnot_si512(m4, raw);
        } else {
            w[v + 4] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
        }
    }
    if (qmm_q5(type)) {
        const __m512i b16 = _mm512_set1_epi8(16);
        for (int g = 0; g < 8; g++) {
            uint64_t m;
            memcpy(&m, q + HTP_Q5_MASKS + 8 * g, 8);
            w[g] = _mm512_mask_add_epi8(w[g], _cvtu64_mask64(m), w[g], b16);
        }
    }
}

// The 16 rows' scales of tile kb (*ms: Q4_1's / Q5_1's mins, else zero).
static inline __attribute__((always_inline)) __m512 qmm_scales(const uint32_t type, const uint8_t * sb, int64_t kb,
                                                               __m512 * ms) {
    const uint8_t * s = sb + kb * qmm_sbytes(type);
    *ms               = _mm512_setzero_ps();
    if (type == HTP_TYPE_MXFP4) {
        const __m512i   e    = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)s));
        const __mmask16 lo   = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
        const __m512i   norm = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
        const __m512i   sub  = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
        return _mm512_castsi512_ps(_mm512_mask_blend_epi32(lo, norm, sub));
    }
    if (qmm_has_min(type)) {
        *ms = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(s + 32)));
    }
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)s));
}

// NVFP4's ue4m3 scales, 16 bytes at s -> 16 floats, htp_ue4m3_to_fp32_half's values.
static inline __m512 qmm_ue4m3_avx512(const uint8_t * s) {
    const __m512i x  = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s));
    const __m512i x7 = _mm512_and_si512(x, _mm512_set1_epi32(0x7f));
    const __m512i e  = _mm512_srli_epi32(x7, 3);
    const __m512i m  = _mm512_and_si512(x7, _mm512_set1_epi32(7));
    const __m512i norm =
        _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(119)), 23), _mm512_slli_epi32(m, 20));
    const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(1.0f / 1024.0f));
    const __m512 v =
        _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), _mm512_castsi512_ps(norm), sub);
    return _mm512_maskz_mov_ps(_mm512_cmpneq_epi32_mask(x, _mm512_set1_epi32(0x7f)), v);
}

// Unit k of a unit type as 8 vectors of u8 weights (k-group g in w[g]).
static inline __attribute__((always_inline)) void qmm_unit_unpack(const uint32_t type, const uint8_t * uq, __m512i lut,
                                                                  __m512i w[8]) {
    if (type == HTP_TYPE_NVFP4) {
        qmm_unpack(HTP_TYPE_MXFP4, uq, lut, 0, w);  // Q4_0's nibble form, the e2m1 table
        return;
    }
    for (int g = 0; g < 8; g++) {
        uint64_t m0;
        memcpy(&m0, uq + 8 * g, 8);
        if (type == HTP_TYPE_Q1_0) {
            w[g] = _mm512_maskz_mov_epi8(_cvtu64_mask64(m0), _mm512_set1_epi8(2));
        } else {
            uint64_t m1;
            memcpy(&m1, uq + 64 + 8 * g, 8);
            const __m512i b0 = _mm512_maskz_mov_epi8(_cvtu64_mask64(m0), _mm512_set1_epi8(1));
            w[g]             = _mm512_mask_add_epi8(b0, _cvtu64_mask64(m1), b0, _mm512_set1_epi8(2));
        }
    }
}

// The scales of unit k of a group (sb: its scale parts): d0 (NVFP4: of the
// unit's first sub-block) and d1 (NVFP4: of its second).
static inline __attribute__((always_inline)) void qmm_unit_scales_avx512(const uint32_t type, const uint8_t * sb,
                                                                         int64_t k, __m512 * d0, __m512 * d1) {
    const int       nu = qmm_units(type);
    const uint8_t * s  = sb + (size_t)(k / nu) * qmm_sbytes(type);
    if (type == HTP_TYPE_NVFP4) {
        *d0 = qmm_ue4m3_avx512(s + 32 * (k % nu));
        *d1 = qmm_ue4m3_avx512(s + 32 * (k % nu) + 16);
    } else {
        *d0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s));
        *d1 = _mm512_setzero_ps();
    }
}

// qmm_unit_tile_ref's arithmetic, 16 rows a vector.
static inline __attribute__((always_inline)) void qmm_unit_tile(const uint32_t type, const int nc,
                                                                const uint8_t * group, int64_t nblk,
                                                                const struct qmm_col * cols,
                                                                float (*out)[HTP_TILE_ROWS]) {
    const int       nu  = qmm_units(type);
    const int64_t   nk  = nblk * nu;
    const uint32_t  ub  = qmm_unit_bytes(type);
    const int       off = qmm_offset(type);
    const uint8_t * sb  = group + (size_t)nblk * qmm_qbytes(type);
    const __m512i   lut = qmm_lut(type == HTP_TYPE_NVFP4 ? HTP_TYPE_MXFP4 : type);
    __m512          acc[QMM_NC];
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < nk; k++) {
        qmm_prefetch(group + k * ub, ub);
        __m512i w[8];
        qmm_unit_unpack(type, group + k * ub, lut, w);
        __m512 d0, d1;
        qmm_unit_scales_avx512(type, sb, k, &d0, &d1);
        for (int c = 0; c < nc; c++) {
            const uint8_t * aq = cols[c].act + k * QMM_ABLK;
            float           ad;
            int32_t         is;
            memcpy(&ad, aq + 32, 4);
            memcpy(&is, aq + 36, 4);
            const __m512 vad = _mm512_set1_ps(ad);
            if (type == HTP_TYPE_NVFP4) {
                const int32_t is0 = qmm_half_sum(aq);
                __m512i       lo = _mm512_set1_epi32(-off * is0), hi = _mm512_set1_epi32(-off * (is - is0));
                for (int g = 0; g < 4; g++) {
                    int32_t a4, b4;
                    memcpy(&a4, aq + 4 * g, 4);
                    memcpy(&b4, aq + 16 + 4 * g, 4);
                    lo = _mm512_dpbusd_epi32(lo, w[g], _mm512_set1_epi32(a4));
                    hi = _mm512_dpbusd_epi32(hi, w[g + 4], _mm512_set1_epi32(b4));
                }
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), _mm512_mul_ps(d0, vad), acc[c]);
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_mul_ps(d1, vad), acc[c]);
            } else {
                __m512i ia = _mm512_set1_epi32(-off * is);
                for (int g = 0; g < 8; g++) {
                    int32_t a4;
                    memcpy(&a4, aq + 4 * g, 4);
                    ia = _mm512_dpbusd_epi32(ia, w[g], _mm512_set1_epi32(a4));
                }
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia), _mm512_mul_ps(d0, vad), acc[c]);
            }
        }
    }
    for (int c = 0; c < nc; c++) {
        _mm512_storeu_ps(out[c], acc[c]);
    }
}

// Decode of the unit types: one column against two row groups, as
// qmm_tile_pair: each activation broadcast feeds both groups, four
// independent int chains. The int dots are exact, so splitting Q1_0's and
// Q2_0's unit dot in two halves gives qmm_unit_tile's sums and bits.
static inline __attribute__((always_inline)) void qmm_unit_pair(const uint32_t type, const uint8_t * g0,
                                                                const uint8_t * g1, int64_t nblk,
                                                                const struct qmm_col * col,
                                                                float                  out[2][HTP_TILE_ROWS]) {
    const int64_t   nk   = nblk * qmm_units(type);
    const uint32_t  ub   = qmm_unit_bytes(type);
    const int       off  = qmm_offset(type);
    const uint8_t * sb0  = g0 + (size_t)nblk * qmm_qbytes(type);
    const uint8_t * sb1  = g1 + (size_t)nblk * qmm_qbytes(type);
    const __m512i   lut  = qmm_lut(type == HTP_TYPE_NVFP4 ? HTP_TYPE_MXFP4 : type);
    __m512          acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    qmm_prefetch_scales_start(type, sb0, nblk);
    qmm_prefetch_scales_start(type, sb1, nblk);
    for (int64_t k = 0; k < nk; k++) {
        qmm_prefetch(g0 + k * ub, ub);
        qmm_prefetch(g1 + k * ub, ub);
        if (k % qmm_units(type) == 0) {
            qmm_prefetch_scales(type, sb0, k / qmm_units(type));
            qmm_prefetch_scales(type, sb1, k / qmm_units(type));
        }
        __m512i w0[8], w1[8];
        qmm_unit_unpack(type, g0 + k * ub, lut, w0);
        qmm_unit_unpack(type, g1 + k * ub, lut, w1);
        const uint8_t * aq = col->act + k * QMM_ABLK;
        float           ad;
        int32_t         is;
        memcpy(&ad, aq + 32, 4);
        memcpy(&is, aq + 36, 4);
        const int32_t is0 = type == HTP_TYPE_NVFP4 ? qmm_half_sum(aq) : is;
        __m512i       lo0 = _mm512_set1_epi32(-off * is0), lo1 = lo0;
        __m512i       hi0 = _mm512_set1_epi32(type == HTP_TYPE_NVFP4 ? -off * (is - is0) : 0), hi1 = hi0;
        for (int g = 0; g < 4; g++) {
            int32_t a4, b4;
            memcpy(&a4, aq + 4 * g, 4);
            memcpy(&b4, aq + 16 + 4 * g, 4);
            const __m512i va = _mm512_set1_epi32(a4), vb = _mm512_set1_epi32(b4);
            lo0 = _mm512_dpbusd_epi32(lo0, w0[g], va);
            lo1 = _mm512_dpbusd_epi32(lo1, w1[g], va);
            hi0 = _mm512_dpbusd_epi32(hi0, w0[g + 4], vb);
            hi1 = _mm512_dpbusd_epi32(hi1, w1[g + 4], vb);
        }
        __m512 d00, d01, d10, d11;
        qmm_unit_scales_avx512(type, sb0, k, &d00, &d01);
        qmm_unit_scales_avx512(type, sb1, k, &d10, &d11);
        const __m512 vad = _mm512_set1_ps(ad);
        if (type == HTP_TYPE_NVFP4) {
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo0), _mm512_mul_ps(d00, vad), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo1), _mm512_mul_ps(d10, vad), acc1);
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi0), _mm512_mul_ps(d01, vad), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi1), _mm512_mul_ps(d11, vad), acc1);
        } else {
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo0, hi0)), _mm512_mul_ps(d00, vad), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo1, hi1)), _mm512_mul_ps(d10, vad), acc1);
        }
    }
    _mm512_storeu_ps(out[0], acc0);
    _mm512_storeu_ps(out[1], acc1);
}

static inline __attribute__((always_inline)) void qmm_tile(const uint32_t type, const int nc, const uint8_t * group,
                                                           int64_t nblk, int64_t K, const struct qmm_col * cols,
                                                           float out[QMM_NC][HTP_TILE_ROWS]) {
    if (qmm_unit_type(type)) {
        qmm_unit_tile(type, nc, group, nblk, cols, out);
        return;
    }
    const uint32_t qbytes = qmm_qbytes(type);
    const int      off    = qmm_offset(type);
    const uint8_t *qb = group, *sb = group + (size_t)nblk * qbytes;
    const __m512i  lut = qmm_lut(type);

    __m512 acc[QMM_NC];
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    (void)K;
    for (int64_t kb = 0; kb < nblk; kb++) {
        qmm_prefetch(qb + kb * qbytes, qbytes);
        __m512i w[8];
        qmm_unpack(type, qb + kb * qbytes, lut, 0, w);
        __m512       ms;
        const __m512 ds = qmm_scales(type, sb, kb, &ms);
        for (int c = 0; c < nc; c++) {
            const uint8_t * aq = cols[c].act + kb * QMM_ABLK;
            float           ad;
            int32_t         is;
            memcpy(&ad, aq + 32, 4);
            memcpy(&is, aq + 36, 4);
            __m512i ia = _mm512_set1_epi32(-off * is);
            for (int g = 0; g < 8; g++) {
                int32_t a4;
                memcpy(&a4, aq + 4 * g, 4);
                ia = _mm512_dpbusd_epi32(ia, w[g], _mm512_set1_epi32(a4));
            }
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia), _mm512_mul_ps(ds, _mm512_set1_ps(ad)), acc[c]);
            if (qmm_has_min(type)) {
                acc[c] = _mm512_fmadd_ps(ms, _mm512_set1_ps(ad * (float)is), acc[c]);
            }
        }
    }
    for (int c = 0; c < nc; c++) {
        _mm512_storeu_ps(out[c], acc[c]);
    }
}

// Decode: one column against two row groups at once. Each activation
// broadcast feeds both groups, and the two groups' (and two halves')
// independent dot-product chains keep the core busy while the weights stream
// in: about 1.5x the throughput of two qmm_tile calls at n = 1.
static inline __attribute__((always_inline)) void qmm_tile_pair(const uint32_t type, const uint8_t * g0,
                                                                const uint8_t * g1, int64_t nblk,
                                                                const struct qmm_col * col,
                                                                float                  out[2][HTP_TILE_ROWS]) {
    if (qmm_unit_type(type)) {
        qmm_unit_pair(type, g0, g1, nblk, col, out);
        return;
    }
    const uint32_t qbytes = qmm_qbytes(type);
    const int      off    = qmm_offset(type);
    const int      hi16   = type == HTP_TYPE_Q4_0 || type == HTP_TYPE_Q4_1;
    const uint8_t *sb0 = g0 + (size_t)nblk * qbytes, *sb1 = g1 + (size_t)nblk * qbytes;
    const __m512i  lut = qmm_lut(type);

    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    qmm_prefetch_scales_start(type, sb0, nblk);
    qmm_prefetch_scales_start(type, sb1, nblk);
    for (int64_t kb = 0; kb < nblk; kb++) {
        qmm_prefetch(g0 + kb * qbytes, qbytes);
        qmm_prefetch(g1 + kb * qbytes, qbytes);
        qmm_prefetch_scales(type, sb0, kb);
        qmm_prefetch_scales(type, sb1, kb);
        __m512i w0[8], w1[8];
        qmm_unpack(type, g0 + kb * qbytes, lut, hi16, w0);
        qmm_unpack(type, g1 + kb * qbytes, lut, hi16, w1);
        const uint8_t * aq = col->act + kb * QMM_ABLK;
        float           ad;
        int32_t         is;
        memcpy(&ad, aq + 32, 4);
        memcpy(&is, aq + 36, 4);
        __m512i lo0 = _mm512_set1_epi32(-off * is), lo1 = lo0;
        __m512i hi0 = _mm512_setzero_si512(), hi1 = hi0;
        for (int g = 0; g < 4; g++) {
            int32_t a4, b4;
            memcpy(&a4, aq + 4 * g, 4);
            memcpy(&b4, aq + 16 + 4 * g, 4);
            const __m512i va = _mm512_set1_epi32(a4), vb = _mm512_set1_epi32(b4);
            lo0 = _mm512_dpbusd_epi32(lo0, w0[g], va);
            lo1 = _mm512_dpbusd_epi32(lo1, w1[g], va);
            hi0 = _mm512_dpbusd_epi32(hi0, w0[g + 4], vb);
            hi1 = _mm512_dpbusd_epi32(hi1, w1[g + 4], vb);
        }
        if (hi16) {  // exact: every product in hi is a multiple of 16
            hi0 = _mm512_srai_epi32(hi0, 4);
            hi1 = _mm512_srai_epi32(hi1, 4);
        }
        __m512       ms0, ms1;
        const __m512 ds0 = qmm_scales(type, sb0, kb, &ms0), ds1 = qmm_scales(type, sb1, kb, &ms1);
        const __m512 vad = _mm512_set1_ps(ad);  // the activation block's scale
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo0, hi0)), _mm512_mul_ps(ds0, vad), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo1, hi1)), _mm512_mul_ps(ds1, vad), acc1);
        if (qmm_has_min(type)) {
            const __m512 vm = _mm512_set1_ps(ad * (float)is);
            acc0            = _mm512_fmadd_ps(ms0, vm, acc0);
            acc1            = _mm512_fmadd_ps(ms1, vm, acc1);
        }
    }
    _mm512_storeu_ps(out[0], acc0);
    _mm512_storeu_ps(out[1], acc1);
}

// Decode: one column against four consecutive row groups (group h at g0 +
// h gstride), each group's arithmetic exactly qmm_tile_pair's. The eight
// activation broadcasts of a block feed all four groups, whose chains are
// independent: more of the core's time goes to the weights' arithmetic while
// four streams of them are in flight. (The unit types take two pairs.)
static inline __attribute__((always_inline)) void qmm_tile_quad(const uint32_t type, const uint8_t * g0, size_t gstride,
                                                                int64_t nblk, const struct qmm_col * col,
                                                                float out[4][HTP_TILE_ROWS]) {
    if (qmm_unit_type(type)) {
        qmm_unit_pair(type, g0, g0 + gstride, nblk, col, out);
        qmm_unit_pair(type, g0 + 2 * gstride, g0 + 3 * gstride, nblk, col, out + 2);
        return;
    }
    const uint32_t  qbytes = qmm_qbytes(type);
    const int       off    = qmm_offset(type);
    const int       hi16   = type == HTP_TYPE_Q4_0 || type == HTP_TYPE_Q4_1;
    const __m512i   lut    = qmm_lut(type);
    const uint8_t * g[4]   = {g0, g0 + gstride, g0 + 2 * gstride, g0 + 3 * gstride};
    const uint8_t * sb[4];
    __m512          acc[4];
    for (int h = 0; h < 4; h++) {
        sb[h]  = g[h] + (size_t)nblk * qbytes;
        acc[h] = _mm512_setzero_ps();
        qmm_prefetch_scales_start(type, sb[h], nblk);
    }
    for (int64_t kb = 0; kb < nblk; kb++) {
        const uint8_t * aq = col->act + kb * QMM_ABLK;
        float           ad;
        int32_t         is;
        memcpy(&ad, aq + 32, 4);
        memcpy(&is, aq + 36, 4);
        __m512i va[4], vb[4];
        for (int k = 0; k < 4; k++) {
            int32_t a4, b4;
            memcpy(&a4, aq + 4 * k, 4);
            memcpy(&b4, aq + 16 + 4 * k, 4);
            va[k] = _mm512_set1_epi32(a4);
            vb[k] = _mm512_set1_epi32(b4);
        }
        const __m512 vad = _mm512_set1_ps(ad);
        for (int h = 0; h < 4; h++) {
            qmm_prefetch(g[h] + kb * qbytes, qbytes);
            qmm_prefetch_scales(type, sb[h], kb);
            __m512i w[8];
            qmm_unpack(type, g[h] + kb * qbytes, lut, hi16, w);
            __m512i lo = _mm512_set1_epi32(-off * is), hi = _mm512_setzero_si512();
            for (int k = 0; k < 4; k++) {
                lo = _mm512_dpbusd_epi32(lo, w[k], va[k]);
                hi = _mm512_dpbusd_epi32(hi, w[k + 4], vb[k]);
            }
            if (hi16) {
                hi = _mm512_srai_epi32(hi, 4);
            }
            __m512       ms;
            const __m512 ds = qmm_scales(type, sb[h], kb, &ms);
            acc[h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo, hi)), _mm512_mul_ps(ds, vad), acc[h]);
            if (qmm_has_min(type)) {
                acc[h] = _mm512_fmadd_ps(ms, _mm512_set1_ps(ad * (float)is), acc[h]);
            }
        }
    }
    for (int h = 0; h < 4; h++) {
        _mm512_storeu_ps(out[h], acc[h]);
    }
}

#else  // portable C: the same arithmetic lane by lane

static inline float qmm_scale(uint32_t type, const uint8_t * s, int r) {
    if (type == HTP_TYPE_MXFP4) {
        return htp_e8m0_to_fp32_half(s[r]);
    }
    uint16_t h;
    memcpy(&h, s + 2 * r, 2);
    return htp_fp16_to_fp32(h);
}

static inline __attribute__((always_inline)) void qmm_tile(const uint32_t type, const int nc, const uint8_t * group,
                                                           int64_t nblk, int64_t K, const struct qmm_col * cols,
                                                           float out[QMM_NC][HTP_TILE_ROWS]) {
    if (qmm_unit_type(type)) {
        qmm_unit_tile_cols(type, nc, group, nblk, cols, out);
        return;
    }
    const int q8 = type == HTP_TYPE_Q8_0;
    const uint32_t qbytes = qmm_qbytes(type);
    const uint32_t sbytes = qmm_sbytes(type);
    const int off = qmm_offset(type);
    const uint8_t *qb = group, *sb = group + (size_t)nblk * qbytes;
    (void)K;
    for (int c = 0; c < nc; c++) {
        for (int r = 0; r < HTP_TILE_ROWS; r++) {
            out[c][r] = 0.0f;
        }
    }
    for (int64_t kb = 0; kb < nblk; kb++) {
        for (int r = 0; r < HTP_TILE_ROWS; r++) {
            uint8_t w[32];  // u8 form of the row's 32 weights, element order
            for (int g = 0; g < 8; g++) {
                for (int j = 0; j < 4; j++) {
                    uint8_t u;
                    const uint8_t * tq = qb + kb * qbytes;
                    if (q8) {
                        u = tq[64 * g + 4 * r + j];
                    } else {
                        const uint8_t b = tq[64 * (g & 3) + 4 * r + j];
                        u = g < 4 ? (b & 15) : (b >> 4);
                        if (qmm_q5(type)) {  // bit 4r + j of mask g
                            const uint8_t m = tq[HTP_Q5_MASKS + 8 * g + r / 2];
                            u |= (uint8_t)(((m >> (4 * (r & 1) + j)) & 1) << 4);
                        }
                        if (type == HTP_TYPE_IQ4_NL) {
                            u = (uint8_t)(htp_iq4nl_values[u] + 128);
                        } else if (type == HTP_TYPE_MXFP4) {
                            u = (uint8_t)(htp_mxfp4_values[u] + 128);
                        }
                    }
                    w[4 * g + j] = u;
                }
            }
            const float ds = qmm_scale(type, sb + kb * sbytes, r);
            const float ms = qmm_has_min(type) ? qmm_scale(type, sb + kb * sbytes + 32, r) : 0.0f;
            for (int c = 0; c < nc; c++) {
                const int8_t * aq = (const int8_t *)cols[c].act + kb * QMM_ABLK;
                float ad;
                int32_t is;
                memcpy(&ad, aq + 32, 4);
                memcpy(&is, aq + 36, 4);
                int32_t ia = -off * is;
                for (int k = 0; k < 32; k++) {
                    ia += (int32_t)w[k] * aq[k];
                }
                out[c][r] = __builtin_fmaf((float)ia, ds * ad, out[c][r]);
                if (qmm_has_min(type)) {
                    out[c][r] = __builtin_fmaf(ms, ad * (float)is, out[c][r]);
                }
            }
        }
    }
}

static inline __attribute__((always_inline)) void qmm_tile_pair(const uint32_t type, const uint8_t * g0,
                                                                const uint8_t * g1, int64_t nblk,
                                                                const struct qmm_col * col,
                                                                float out[2][HTP_TILE_ROWS]) {
    float o[QMM_NC][HTP_TILE_ROWS];
    qmm_tile(type, 1, g0, nblk, 0, col, o);
    memcpy(out[0], o[0], sizeof out[0]);
    qmm_tile(type, 1, g1, nblk, 0, col, o);
    memcpy(out[1], o[0], sizeof out[1]);
}

static inline __attribute__((always_inline)) void qmm_tile_quad(const uint32_t type, const uint8_t * g0, size_t gstride,
                                                                int64_t nblk, const struct qmm_col * col,
                                                                float out[4][HTP_TILE_ROWS]) {
    qmm_tile_pair(type, g0, g0 + gstride, nblk, col, out);
    qmm_tile_pair(type, g0 + 2 * gstride, g0 + 3 * gstride, nblk, col, out + 2);
}

#endif

#if defined(__HVX__)

// HVX (v67): qmm_tile's integer dot products 32 lanes at a time, its float
// scaling in scalar code in the same order, so the results are its bits.
//
// Lanes: two row groups A and B (decode's pair), or one group twice (the
// multi-column tile). hvx_join puts the 64-byte tile vector v of A in lanes
// 0-15 and the same vector of B in lanes 16-31, so w[g] below holds k-group
// g (elements 4g .. 4g+3 of the block) of A's 16 rows, then B's, as u8. A
// vrmpy with the column's 4 activation bytes of k-group g in a scalar
// register advances all 32 rows; 8 make the block. With one group the upper
// half repeats the lower one (no activation vectors to build, and each
// weight vector still serves every column of the call).

// The u8 weights of one tile of groups A and B (qa, qb: the tile's quant part in each).
static inline __attribute__((always_inline)) void qmm_hvx_weights(const uint32_t type, const uint8_t * qa,
                                                                  const uint8_t * qb, hvx_v lut, hvx_v w[8]) {
    if (type == HTP_TYPE_Q8_0) {  // vector p: k-groups 2p and 2p + 1, already u8
        for (int p = 0; p < 4; p++) {
            const hvx_vv j = hvx_join(hvx_ld(qa + 128 * p), hvx_ld(qb + 128 * p));
            w[2 * p]       = hvx_lo(j);
            w[2 * p + 1]   = hvx_hi(j);
        }
        return;
    }
    // 4-bit: tile vector v (0..3) has k-group v in its low nibbles, v + 4 in its high ones.
    for (int p = 0; p < 2; p++) {
        const hvx_vv j = hvx_join(hvx_ld(qa + 128 * p), hvx_ld(qb + 128 * p));
        for (int h = 0; h < 2; h++) {
            const hvx_v x  = h ? hvx_hi(j) : hvx_lo(j);
            hvx_v       lo = hvx_nib_lo(x), hi = hvx_nib_hi(x);
            if (type == HTP_TYPE_IQ4_NL || type == HTP_TYPE_MXFP4) {
                lo = hvx_lut16(lo, lut);
                hi = hvx_lut16(hi, lut);
            }
            w[2 * p + h]     = lo;
            w[2 * p + h + 4] = hi;
        }
    }
    // Q5: A's and B's 8 masks, interleaved 8 bytes at a time (hvx.h). Each
    // load's upper 64 bytes (the next tile, or after the last one its scale
    // parts and padding: at least 64 bytes, tiled.h) stay inside the group.
    if (qmm_q5(type)) {
        const hvx_vv m = hvx_zip(hvx_ld(qa + HTP_Q5_MASKS), hvx_ld(qb + HTP_Q5_MASKS), 8);
        hvx_v        mw[8];
        hvx_mask_words(hvx_lo(m), mw);
        for (int g = 0; g < 8; g++) {
            w[g] = hvx_mask_or(w[g], mw[g], 4);
        }
    }
}

// Floats per tile in qmm_hvx_scales' output: d of row r at r, Q4_1's / Q5_1's m at 16 + r.
static inline int qmm_hvx_sstride(uint32_t type) {
    return qmm_has_min(type) ? 32 : 16;
}

// The scales of tiles kb .. kb + n - 1 (n <= 4) of a group whose scale parts
// start at sb, converted in one go (HVX integer ops, exact): tile i at
// sc + i * qmm_hvx_sstride(type). The loads stop at the last scale (a group's
// scales may end its buffer); what lies before them (its quant parts) is
// readable, which hvx_ld_tail needs.
static inline __attribute__((always_inline)) void qmm_hvx_scales(const uint32_t type, const uint8_t * sb, int64_t kb,
                                                                 int n, float sc[128]) {
    const int       bytes = n * (int)qmm_sbytes(type);
    const uint8_t * s     = sb + kb * qmm_sbytes(type);
    if (type == HTP_TYPE_MXFP4) {  // 16 exponent bytes a tile -> 64 words
        const hvx_v  e = hvx_ld_tail(s, bytes);
        const hvx_vv w = __builtin_HEXAGON_V6_vunpackuh_128B(hvx_lo(__builtin_HEXAGON_V6_vunpackub_128B(e)));
        hvx_st(sc, hvx_e8m0_half_bits(hvx_lo(w)));
        hvx_st(sc + 32, hvx_e8m0_half_bits(hvx_hi(w)));
        return;
    }
    // 4 tiles of 16 d, or Q4_1's / Q5_1's tiles 0-1 (16 d, 16 m each) and then 2-3
    hvx_fp16_to_fp32_64_v(bytes >= 128 ? hvx_ld(s) : hvx_ld_tail(s, bytes), sc);
    if (bytes > 128) {
        hvx_fp16_to_fp32_64_v(bytes == 256 ? hvx_ld(s + 128) : hvx_ld_tail(s + 128, bytes - 128), sc + 64);
    }
}

// One block's dots of 16 rows, fa[r] = (float) of the int32 dot, into out[r]
// as qmm_tile scales them. (Rolled: unrolled, the 32 rows of a pair spilled
// their products to the stack; rolled is about 15% faster under qemu.)
static inline __attribute__((always_inline)) void qmm_hvx_rows(const uint32_t type, const float * fa, const float * ds,
                                                               float ad, int32_t is, float * out) {
    _Pragma("clang loop unroll(disable)") for (int r = 0; r < HTP_TILE_ROWS; r++) {
        out[r] = __builtin_fmaf(fa[r], ds[r] * ad, out[r]);
        if (qmm_has_min(type)) {
            out[r] = __builtin_fmaf(ds[16 + r], ad * (float)is, out[r]);
        }
    }
}

// The unit types: unit k's u8 weights of groups A and B (qa, qb: the unit's
// quant part in each), lanes as qmm_hvx_weights'. Q1_0's and Q2_0's masks
// are Q5_0's form, expanded by hvx_mask_or into bit 1 (Q1_0: 0 / 2) or bits
// 0 and 1 (Q2_0's two planes). A Q1_0 unit's 128-byte load reads the next
// unit or, after the last one, the group's scale parts and padding (at
// least 64 bytes, tiled.h): it stays inside the group.
static inline __attribute__((always_inline)) void qmm_hvx_unit_weights(const uint32_t type, const uint8_t * qa,
                                                                       const uint8_t * qb, hvx_v lut, hvx_v w[8]) {
    if (type == HTP_TYPE_NVFP4) {
        qmm_hvx_weights(HTP_TYPE_MXFP4, qa, qb, lut, w);
        return;
    }
    const hvx_vv m = hvx_zip(hvx_ld(qa), hvx_ld(qb), 8);  // lo: A's and B's bit-0 masks, hi: Q2_0's bit-1 masks
    hvx_v        m0[8];
    hvx_mask_words(hvx_lo(m), m0);
    if (type == HTP_TYPE_Q1_0) {
        for (int g = 0; g < 8; g++) {
            w[g] = hvx_mask_or(hvx_zero(), m0[g], 1);
        }
        return;
    }
    hvx_v m1[8];
    hvx_mask_words(hvx_hi(m), m1);
    for (int g = 0; g < 8; g++) {
        w[g] = hvx_mask_or(hvx_mask_or(hvx_zero(), m0[g], 0), m1[g], 1);
    }
}

// qmm_unit_tile_ref's rows: out[r] = fma(fa[r], d[r] * ad, out[r]).
static inline __attribute__((always_inline)) void qmm_hvx_unit_rows(const float * fa, const float * d, float ad,
                                                                    float * out) {
    _Pragma("clang loop unroll(disable)") for (int r = 0; r < HTP_TILE_ROWS; r++) {
        out[r] = __builtin_fmaf(fa[r], d[r] * ad, out[r]);
    }
}

// NVFP4's 64 ue4m3 scales of a tile (s: its scale part) -> the floats of
// htp_ue4m3_to_fp32_half at sc (field f of row r at 16 f + r): e = bits 3-6,
// m = bits 0-2; e > 0: (1 + m/8) 2^(e-8), built as bits; e = 0: m 2^-10,
// (float)m with its exponent lowered by 10; 0x7f (NaN) and 0 give +0.
static inline __attribute__((always_inline)) void qmm_hvx_nvfp4_scales(const uint8_t * s, float sc[64]) {
    const hvx_vv h = __builtin_HEXAGON_V6_vunpackub_128B(hvx_ld_tail(s, 64));
    const hvx_vv w = __builtin_HEXAGON_V6_vunpackuh_128B(hvx_lo(h));
    for (int i = 0; i < 2; i++) {
        const hvx_v x    = i ? hvx_hi(w) : hvx_lo(w);
        const hvx_v e    = (x >> 3) & hvx_w(15);
        const hvx_v m    = x & hvx_w(7);
        const hvx_v norm = ((e + hvx_w(119)) << 23) | (m << 20);
        const hvx_v sub  = hvx_sel_eq(m, hvx_zero(), hvx_zero(), hvx_small_int_to_float_bits(m) - hvx_w(10 << 23));
        hvx_v       r    = hvx_sel_eq(e, hvx_zero(), sub, norm);
        r                = hvx_sel_eq(x, hvx_w(0x7f), hvx_zero(), r);
        hvx_st(sc + 32 * i, r);
    }
}

// The unit types on HVX: qmm_unit_tile_ref's integer dots 32 lanes at a
// time (groups A and B, or A twice), its scaling in the same order.
static inline __attribute__((always_inline)) void qmm_hvx_unit(const uint32_t type, const int nc, const uint8_t * ga,
                                                               const uint8_t * gb, const int two, int64_t nblk,
                                                               const struct qmm_col * cols,
                                                               float (*outa)[HTP_TILE_ROWS],
                                                               float (*outb)[HTP_TILE_ROWS]) {
    const int       nu  = qmm_units(type);
    const int64_t   nk  = nblk * nu;
    const uint32_t  ub  = qmm_unit_bytes(type);
    const int       off = qmm_offset(type);
    const uint8_t * sba = ga + (size_t)nblk * qmm_qbytes(type);
    const uint8_t * sbb = gb + (size_t)nblk * qmm_qbytes(type);
    const hvx_v     lut = type == HTP_TYPE_NVFP4 ? hvx_table16(htp_mxfp4_values, 128) : hvx_zero();
    for (int c = 0; c < nc; c++) {
        memset(outa[c], 0, sizeof outa[c]);
        if (two) {
            memset(outb[c], 0, sizeof outb[c]);
        }
    }
    float sca[128] HVX_ALIGN, scb[128] HVX_ALIGN;
    float fa[32] HVX_ALIGN, fb[32] HVX_ALIGN;
    for (int64_t k = 0; k < nk; k++) {
        // The scales, converted by HVX integer ops (exact): NVFP4 a tile at a
        // time, Q1_0's / Q2_0's d (Q4_0's scale part) four tiles at a time.
        const int64_t kb = k / nu;
        if (k % nu == 0 && (type == HTP_TYPE_NVFP4 || kb % 4 == 0)) {
            if (type == HTP_TYPE_NVFP4) {
                qmm_hvx_nvfp4_scales(sba + (size_t)kb * 64, sca);
                if (two) {
                    qmm_hvx_nvfp4_scales(sbb + (size_t)kb * 64, scb);
                }
            } else {
                const int n = (int)htp_min64(4, nblk - kb);
                qmm_hvx_scales(HTP_TYPE_Q4_0, sba, kb, n, sca);
                if (two) {
                    qmm_hvx_scales(HTP_TYPE_Q4_0, sbb, kb, n, scb);
                }
            }
        }
        const int     so = type == HTP_TYPE_NVFP4 ? 32 * (int)(k % nu) : 16 * (int)(kb % 4);
        const float * da = sca + so;  // NVFP4: + 16 the second sub-block's
        const float * db = scb + so;
        hvx_v         w[8];
        qmm_hvx_unit_weights(type, ga + k * ub, gb + k * ub, lut, w);
        for (int c = 0; c < nc; c++) {
            const int8_t * aq = (const int8_t *)cols[c].act + k * QMM_ABLK;
            float          ad;
            int32_t        is;
            memcpy(&ad, __builtin_assume_aligned(aq + 32, 4), 4);
            memcpy(&is, __builtin_assume_aligned(aq + 36, 4), 4);
            if (type == HTP_TYPE_NVFP4) {
                const int32_t is0 = qmm_half_sum((const uint8_t *)aq);
                hvx_v         lo = hvx_w(-off * is0), hi = hvx_w(-off * (is - is0));
                for (int g = 0; g < 4; g++) {
                    lo = hvx_rmpy_acc(lo, w[g], hvx_word(aq + 4 * g));
                    hi = hvx_rmpy_acc(hi, w[g + 4], hvx_word(aq + 16 + 4 * g));
                }
                hvx_st(fa, hvx_small_int_to_float_bits(lo));
                hvx_st(fb, hvx_small_int_to_float_bits(hi));
                for (int r = 0; r < HTP_TILE_ROWS; r++) {  // per row: the first sub-block, then the second
                    outa[c][r] = __builtin_fmaf(fa[r], da[r] * ad, outa[c][r]);
                    outa[c][r] = __builtin_fmaf(fb[r], da[16 + r] * ad, outa[c][r]);
                }
                if (two) {
                    for (int r = 0; r < HTP_TILE_ROWS; r++) {
                        outb[c][r] = __builtin_fmaf(fa[16 + r], db[r] * ad, outb[c][r]);
                        outb[c][r] = __builtin_fmaf(fb[16 + r], db[16 + r] * ad, outb[c][r]);
                    }
                }
                continue;
            }
            hvx_v acc = hvx_w(-off * is);
            for (int g = 0; g < 8; g++) {
                acc = hvx_rmpy_acc(acc, w[g], hvx_word(aq + 4 * g));
            }
            hvx_st(fa, hvx_small_int_to_float_bits(acc));
            qmm_hvx_unit_rows(fa, da, ad, outa[c]);
            if (two) {
                qmm_hvx_unit_rows(fa + 16, db, ad, outb[c]);
            }
        }
    }
}

// nc columns against groups A (outa) and, when two, B (outb); else gb = ga.
static inline __attribute__((always_inline)) void qmm_hvx(const uint32_t type, const int nc, const uint8_t * ga,
                                                          const uint8_t * gb, const int two, int64_t nblk,
                                                          const struct qmm_col * cols, float (*outa)[HTP_TILE_ROWS],
                                                          float (*outb)[HTP_TILE_ROWS]) {
    if (qmm_unit_type(type)) {
        qmm_hvx_unit(type, nc, ga, gb, two, nblk, cols, outa, outb);
        return;
    }
    const uint32_t  qbytes = qmm_qbytes(type);
    const int       off    = qmm_offset(type);
    const int       ss     = qmm_hvx_sstride(type);
    const uint8_t * sba    = ga + (size_t)nblk * qbytes;
    const uint8_t * sbb    = gb + (size_t)nblk * qbytes;
    const hvx_v     lut    = type == HTP_TYPE_IQ4_NL  ? hvx_table16(htp_iq4nl_values, 128)
                             : type == HTP_TYPE_MXFP4 ? hvx_table16(htp_mxfp4_values, 128)
                                                      : hvx_zero();
    for (int c = 0; c < nc; c++) {
        memset(outa[c], 0, sizeof outa[c]);
        if (two) {
            memset(outb[c], 0, sizeof outb[c]);
        }
    }
    float sca[128] HVX_ALIGN, scb[128] HVX_ALIGN;
    float fa[32] HVX_ALIGN;
    for (int64_t kb0 = 0; kb0 < nblk; kb0 += 4) {
        const int n = (int)htp_min64(4, nblk - kb0);
        qmm_hvx_scales(type, sba, kb0, n, sca);
        if (two) {
            qmm_hvx_scales(type, sbb, kb0, n, scb);
        }
        for (int i = 0; i < n; i++) {
            const int64_t kb = kb0 + i;
            hvx_v         w[8];
            qmm_hvx_weights(type, ga + kb * qbytes, gb + kb * qbytes, lut, w);
            for (int c = 0; c < nc; c++) {
                const int8_t * aq = (const int8_t *)cols[c].act + kb * QMM_ABLK;
                float          ad;
                int32_t        is;
                memcpy(&ad, __builtin_assume_aligned(aq + 32, 4), 4);
                memcpy(&is, __builtin_assume_aligned(aq + 36, 4), 4);
                hvx_v acc = hvx_w(-off * is);  // removes the weights' offset, as qmm_tile's start
                for (int g = 0; g < 8; g++) {
                    acc = hvx_rmpy_acc(acc, w[g], hvx_word(aq + 4 * g));
                }
                // |dot| <= 32 * 128 * 127 < 2^24: converted exactly by integer ops.
                hvx_st(fa, hvx_small_int_to_float_bits(acc));
                qmm_hvx_rows(type, fa, sca + ss * i, ad, is, outa[c]);
                if (two) {
                    qmm_hvx_rows(type, fa + 16, scb + ss * i, ad, is, outb[c]);
                }
            }
        }
    }
}

#endif

typedef void (*qmm_tile_fn)(const uint8_t * group, int64_t nblk, int64_t K, const struct qmm_col * cols,
                            float out[QMM_NC][HTP_TILE_ROWS]);

typedef void (*qmm_pair_fn)(const uint8_t * g0, const uint8_t * g1, int64_t nblk, const struct qmm_col * col,
                            float out[2][HTP_TILE_ROWS]);

typedef void (*qmm_quad_fn)(const uint8_t * g0, size_t gstride, int64_t nblk, const struct qmm_col * col,
                            float out[4][HTP_TILE_ROWS]);

// One straight-line instance per (type, column count), and the pair and quad
// kernels (quad NULL: decode takes pairs).
struct qmm_kernels {
    qmm_tile_fn tile[QMM_NC];  // [nc - 1]
    qmm_pair_fn pair;
    qmm_quad_fn quad;
};

#define QMM_FN(T, NC)                                                                                       \
    static void qmm_##T##_##NC(const uint8_t * group, int64_t nblk, int64_t K, const struct qmm_col * cols, \
                               float out[QMM_NC][HTP_TILE_ROWS]) {                                          \
        qmm_tile(HTP_TYPE_##T, NC, group, nblk, K, cols, out);                                              \
    }
#define QMM_FNS(T)                                                                                                \
    QMM_FN(T, 1)                                                                                                  \
    QMM_FN(T, 2)                                                                                                  \
    QMM_FN(T, 3)                                                                                                  \
    QMM_FN(T, 4)                                                                                                  \
    QMM_FN(T, 5)                                                                                                  \
    QMM_FN(T, 6)                                                                                                  \
    QMM_FN(T, 7)                                                                                                  \
    QMM_FN(T, 8)                                                                                                  \
    static void qmm_##T##_pair(const uint8_t * g0, const uint8_t * g1, int64_t nblk, const struct qmm_col * col,  \
                               float out[2][HTP_TILE_ROWS]) {                                                     \
        qmm_tile_pair(HTP_TYPE_##T, g0, g1, nblk, col, out);                                                      \
    }                                                                                                             \
    static void qmm_##T##_quad(const uint8_t * g0, size_t gstride, int64_t nblk, const struct qmm_col * col,      \
                               float out[4][HTP_TILE_ROWS]) {                                                     \
        qmm_tile_quad(HTP_TYPE_##T, g0, gstride, nblk, col, out);                                                 \
    }                                                                                                             \
    static const struct qmm_kernels qmm_kernels_##T = {                                                           \
        {qmm_##T##_1, qmm_##T##_2, qmm_##T##_3, qmm_##T##_4, qmm_##T##_5, qmm_##T##_6, qmm_##T##_7, qmm_##T##_8}, \
        qmm_##T##_pair,                                                                                           \
        qmm_##T##_quad};

QMM_FNS(Q4_0)
QMM_FNS(Q4_1)
QMM_FNS(Q8_0)
QMM_FNS(IQ4_NL)
QMM_FNS(MXFP4)
QMM_FNS(Q5_0)
QMM_FNS(Q5_1)
QMM_FNS(Q1_0)
QMM_FNS(Q2_0)
QMM_FNS(NVFP4)

#if defined(__HVX__)
#define QMM_HVX_FN(T, NC)                                                                                       \
    static void qmm_hvx_##T##_##NC(const uint8_t * group, int64_t nblk, int64_t K, const struct qmm_col * cols, \
                                   float out[QMM_NC][HTP_TILE_ROWS]) {                                          \
        (void)K;                                                                                                \
        qmm_hvx(HTP_TYPE_##T, NC, group, group, 0, nblk, cols, out, NULL);                                      \
    }
#define QMM_HVX_FNS(T)                                                                                               \
    QMM_HVX_FN(T, 1)                                                                                                 \
    QMM_HVX_FN(T, 2)                                                                                                 \
    QMM_HVX_FN(T, 3)                                                                                                 \
    QMM_HVX_FN(T, 4)                                                                                                 \
    QMM_HVX_FN(T, 5)                                                                                                 \
    QMM_HVX_FN(T, 6)                                                                                                 \
    QMM_HVX_FN(T, 7)                                                                                                 \
    QMM_HVX_FN(T, 8)                                                                                                 \
    static void qmm_hvx_##T##_pair(const uint8_t * g0, const uint8_t * g1, int64_t nblk, const struct qmm_col * col, \
                                   float out[2][HTP_TILE_ROWS]) {                                                    \
        qmm_hvx(HTP_TYPE_##T, 1, g0, g1, 1, nblk, col, out, out + 1);                                                \
    }                                                                                                                \
    static const struct qmm_kernels qmm_hvx_kernels_##T = {                                                          \
        {qmm_hvx_##T##_1, qmm_hvx_##T##_2, qmm_hvx_##T##_3, qmm_hvx_##T##_4, qmm_hvx_##T##_5, qmm_hvx_##T##_6,       \
         qmm_hvx_##T##_7, qmm_hvx_##T##_8},                                                                          \
        qmm_hvx_##T##_pair,                                                                                          \
        NULL};

QMM_HVX_FNS(Q4_0)
QMM_HVX_FNS(Q4_1)
QMM_HVX_FNS(Q8_0)
QMM_HVX_FNS(IQ4_NL)
QMM_HVX_FNS(MXFP4)
QMM_HVX_FNS(Q5_0)
QMM_HVX_FNS(Q5_1)
QMM_HVX_FNS(Q1_0)
QMM_HVX_FNS(Q2_0)
QMM_HVX_FNS(NVFP4)
#endif

static const struct qmm_kernels * qmm_kernels(uint32_t type) {
#if defined(__HVX__)
    if (!htp_kernels_portable()) {
        switch (type) {
            case HTP_TYPE_Q4_0:
                return &qmm_hvx_kernels_Q4_0;
            case HTP_TYPE_Q4_1:
                return &qmm_hvx_kernels_Q4_1;
            case HTP_TYPE_Q8_0:
                return &qmm_hvx_kernels_Q8_0;
            case HTP_TYPE_IQ4_NL:
                return &qmm_hvx_kernels_IQ4_NL;
            case HTP_TYPE_MXFP4:
                return &qmm_hvx_kernels_MXFP4;
            case HTP_TYPE_Q5_0:
                return &qmm_hvx_kernels_Q5_0;
            case HTP_TYPE_Q5_1:
                return &qmm_hvx_kernels_Q5_1;
            case HTP_TYPE_Q1_0:
                return &qmm_hvx_kernels_Q1_0;
            case HTP_TYPE_Q2_0:
                return &qmm_hvx_kernels_Q2_0;
            case HTP_TYPE_NVFP4:
                return &qmm_hvx_kernels_NVFP4;
            default:
                return NULL;
        }
    }
#endif
    switch (type) {
        case HTP_TYPE_Q4_0:
            return &qmm_kernels_Q4_0;
        case HTP_TYPE_Q4_1:
            return &qmm_kernels_Q4_1;
        case HTP_TYPE_Q8_0:
            return &qmm_kernels_Q8_0;
        case HTP_TYPE_IQ4_NL:
            return &qmm_kernels_IQ4_NL;
        case HTP_TYPE_MXFP4:
            return &qmm_kernels_MXFP4;
        case HTP_TYPE_Q5_0:
            return &qmm_kernels_Q5_0;
        case HTP_TYPE_Q5_1:
            return &qmm_kernels_Q5_1;
        case HTP_TYPE_Q1_0:
            return &qmm_kernels_Q1_0;
        case HTP_TYPE_Q2_0:
            return &qmm_kernels_Q2_0;
        case HTP_TYPE_NVFP4:
            return &qmm_kernels_NVFP4;
        default:
            return NULL;
    }
}

void htp_qmm_dot_tile(uint32_t type, const uint8_t * group, int64_t nblk, const uint8_t * const * acts, int nc,
                      float out[8][16]) {
    struct qmm_col cols[QMM_NC];
    memset(cols, 0, sizeof cols);
    for (int c = 0; c < nc; c++) {
        cols[c].act = acts[c];
        cols[c].w   = group;
    }
    qmm_kernels(type)->tile[nc - 1](group, nblk, nblk * 32, cols, out);
}

void htp_qmm_dot_pair(uint32_t type, const uint8_t * g0, const uint8_t * g1, int64_t nblk, const uint8_t * act,
                      float out[2][16]) {
    struct qmm_col col = {.act = act, .w = g0};
    qmm_kernels(type)->pair(g0, g1, nblk, &col, out);
}

int htp_qmm_dot_quad(uint32_t type, const uint8_t * g0, size_t gstride, int64_t nblk, const uint8_t * act,
                     float out[4][16]) {
    const struct qmm_kernels * k   = qmm_kernels(type);
    struct qmm_col             col = {.act = act, .w = g0};
    if (!k->quad) {
        return 0;
    }
    k->quad(g0, gstride, nblk, &col, out);
    return 1;
}

// ---------------------------------------------------------------------------
// Tiles
// ---------------------------------------------------------------------------

static void qmm_write(const struct qmm_args * a, const struct qmm_col * cols, int nc, int64_t m0,
                      float (*out)[HTP_TILE_ROWS]) {
    const int nr = (int)htp_min64(HTP_TILE_ROWS, a->M - m0);
    for (int c = 0; c < nc; c++) {
        const uint8_t * ar = NULL;
        if (a->add) {
            // MUL_MAT's column j of the chunk is src1's flat row act_row0 + j.
            int64_t n, i2, i3;
            htp_row_index(a->src1->ne, a->act_row0 + (cols + c - a->cols), &n, &i2, &i3);
            ar = htp_mm_addend_row(a->add, n, i2, i3);
        }
        if (a->glu_up) {
            htp_mm_store_glu(cols[c].dst, a->dst_nb0, m0, out[c], nr);
        } else {
            htp_mm_store(cols[c].dst, a->dst_nb0, m0, out[c], nr, a->add, ar);
        }
    }
}

// A worker's state across the items it claims: its slice of scratch and the
// (matrix, row group) packed into the slice, if any.
struct qmm_worker {
    uint8_t *                  slice;
    const struct qmm_kernels * kern;  // NULL: float weights
    const uint8_t *            packed_w;
    int64_t                    packed_g;
};

// Row group g (rows m0 ..) of weight matrix w as a tile group: in place when
// tiled, else packed into the worker's slice (kept while asked for again).
static const uint8_t * qmm_group(const struct qmm_args * a, struct qmm_worker * wk, const uint8_t * w, int64_t g,
                                 int64_t m0) {
    if (a->tiled) {
        return w + (size_t)g * a->gb;
    }
    if (wk->packed_w != w || wk->packed_g != g) {
        htp_tiled_pack_group(a->f, NULL, w + m0 * a->src0->nb[1], (size_t)a->src0->nb[1],
                             (int)htp_min64(HTP_TILE_ROWS, a->M - m0), a->nblk, wk->slice);
        wk->packed_w = w;
        wk->packed_g = g;
    }
    return wk->slice;
}

// MUL_MAT_FFN_GLU: n columns' gate sums become silu(gate) * up.
static void qmm_glu(float (*gate)[HTP_TILE_ROWS], const float (*up)[HTP_TILE_ROWS], int n) {
    htp_vec_swiglu_f32((int64_t)n * HTP_TILE_ROWS, &gate[0][0], &gate[0][0], &up[0][0]);
}

// ng (2 or 4) consecutive row groups from w against one column.
static void qmm_decode_groups(const struct qmm_kernels * k, int ng, const uint8_t * w, size_t gb, int64_t nblk,
                              const struct qmm_col * col, float out[4][HTP_TILE_ROWS]) {
    if (ng == 4) {
        k->quad(w, gb, nblk, col, out);
    } else {
        k->pair(w, w + gb, nblk, col, out);
    }
}

// Item t: row group t % n_groups against column block t / n_groups. Returns
// how many items it did: 4 or 2 when a lone column (decode), or every column
// on HVX, took this group and the next ones together (t + 3 < t1, t + 1 <
// t1: they are this worker's too), else 1.
static int64_t qmm_item(const struct qmm_args * a, struct qmm_worker * wk, int64_t t, int64_t t1) {
    const int64_t g = t % a->n_groups, cb = t / a->n_groups;
    const int64_t c0 = cb * QMM_CB, c1 = htp_min64(a->ncols, c0 + QMM_CB);
    const int64_t m0 = g * HTP_TILE_ROWS;
    // A lone column (or HVX) takes four groups, or two, of this worker's.
    const int lone = wk->kern && a->tiled && (c1 - c0 == 1 || a->max_nc == 1);
    const int ng   = !lone                                                 ? 1
                     : wk->kern->quad && t + 3 < t1 && g + 3 < a->n_groups ? 4
                     : t + 1 < t1 && g + 1 < a->n_groups                   ? 2
                                                                           : 1;
    if (ng > 1) {
        for (int64_t c = c0; c < c1; c++) {
            const struct qmm_col * col = a->cols + c;
            const uint8_t *        w   = col->w + (size_t)g * a->gb;
            float                  out[4][HTP_TILE_ROWS];
            qmm_decode_groups(wk->kern, ng, w, a->gb, a->nblk, col, out);
            if (a->up) {
                float up[4][HTP_TILE_ROWS];
                qmm_decode_groups(wk->kern, ng, w + a->up_off, a->gb, a->nblk, col, up);
                qmm_glu(out, (const float(*)[HTP_TILE_ROWS])up, ng);
            }
            for (int h = 0; h < ng; h++) {
                qmm_write(a, col, 1, m0 + h * HTP_TILE_ROWS, out + h);
            }
        }
        return ng;
    }
    for (int64_t c = c0; c < c1;) {
        int nc = 1;
        while (nc < a->max_nc && c + nc < c1 && a->cols[c + nc].w == a->cols[c].w) {
            nc++;
        }
        const struct qmm_col * cols = a->cols + c;
        float                  out[QMM_NC][HTP_TILE_ROWS];
        if (wk->kern) {
            wk->kern->tile[nc - 1](qmm_group(a, wk, cols[0].w, g, m0), a->nblk, a->K, cols, out);
            if (a->up) {
                // Tiled (the check's rule): the up rows in place.
                float up[QMM_NC][HTP_TILE_ROWS];
                wk->kern->tile[nc - 1](cols[0].w + a->up_off + (size_t)g * a->gb, a->nblk, a->K, cols, up);
                qmm_glu(out, (const float(*)[HTP_TILE_ROWS])up, nc);
            }
        } else {
            float *   wrow = (float *)(void *)wk->slice;
            const int nr   = (int)htp_min64(HTP_TILE_ROWS, a->M - m0);
            for (int r = 0; r < nr; r++) {
                htp_row_load_f32(wrow, cols[0].w + (m0 + r) * a->src0->nb[1], a->src0->nb[0], a->src0->type, a->K);
                for (int j = 0; j < nc; j++) {
                    out[j][r] = htp_vec_dot_f32(a->K, wrow, (const float *)(const void *)cols[j].act);
                }
            }
        }
        qmm_write(a, cols, nc, m0, out);
        c += nc;
    }
    return 1;
}

// A dot pass: the (column block, row group) items of one weight, group-major,
// or of MUL_MAT_QKV's two or three weights in one job (weight i's items are
// [item0[i], item0[i + 1]) of the share), so a worker goes on from one
// weight's items to the next's without a barrier.
struct qmm_dot {
    const struct qmm_args *    w[3];
    const struct qmm_kernels * kern[3];  // weight i's kernels (NULL: float weights)
    int64_t                    item0[4];
    struct htp_share           items;
};

static void qmm_job(void * arg, uint32_t ith, uint32_t nth) {
    struct qmm_dot *  d  = arg;
    struct qmm_worker wk = {
        .slice    = d->w[0]->slices + (size_t)ith * d->w[0]->slice_bytes,
        .packed_g = -1,
    };
    (void)nth;  // d->items knows the workers
    int64_t t0, t1;
    while (htp_share_claim(&d->items, ith, &t0, &t1)) {
        for (int64_t t = t0; t < t1;) {
            int i = 0;
            while (t >= d->item0[i + 1]) {
                i++;
            }
            const struct qmm_args * a   = d->w[i];
            const int64_t           end = htp_min64(t1, d->item0[i + 1]);
            wk.kern                     = d->kern[i];
            t += qmm_item(a, &wk, t - d->item0[i], end - d->item0[i]);
        }
    }
}

// ---------------------------------------------------------------------------
// Planning shared by MUL_MAT and MUL_MAT_ID
// ---------------------------------------------------------------------------

// The scratch plan (contract/ops/matmul-check.h): per-worker slices, and the
// largest column count a chunk can hold.
static int64_t qmm_plan(struct qmm_args * a, const struct htp_op_ctx * ctx) {
    const struct htp_qmm_plan p = htp_qmm_plan(a->src0, ctx->op.n_threads, ctx->op.vtcm_size);
    a->act_stride               = p.act_stride;
    a->slice_bytes              = p.slice_bytes;
    return p.max_cols;
}

// The fields of a that follow from the weights w and their result dst.
// Weights of a type with a tile format are quantized (the rest are float).
static void qmm_set_weights(struct qmm_args * a, const struct htp_tensor_view * w, const struct htp_tensor_view * dst) {
    const struct htp_tile_format * f = htp_tile_format(w->type);
    a->src0                          = w;
    a->f                             = f;
    a->tiled                         = (w->flags & HTP_TENSOR_TILED) != 0;
    a->K                             = w->ne[0];
    a->M                             = w->ne[1];
    a->nblk                          = f ? a->K / f->blck_size : 0;
    a->gb                            = f ? htp_tiled_group_bytes(f, a->K) : 0;
    a->dst_nb0                       = dst->nb[0];
}

static void qmm_init(struct qmm_args * a, const struct htp_op_ctx * ctx) {
    memset(a, 0, sizeof *a);
    a->src1 = ctx->op.src[1];
    qmm_set_weights(a, ctx->op.src[0], ctx->op.dst[0]);
    a->max_nc = QMM_NC;
}

// The op's unit (matmul.h) over its ncols columns: HVX takes one column per call.
static void qmm_set_unit(struct qmm_args * a, struct htp_op_ctx * ctx, int64_t ncols) {
    const uint32_t unit = htp_mm_unit(ctx, ncols);
    a->max_nc           = unit == HTP_UNIT_HMX ? QMM_NC : 1;
    ctx->engine         = unit;
}

// Lay out a chunk's scratch: acts, then n_lists column lists (one per weight
// of a shared run), then worker slices.
static void qmm_chunk_layout(struct qmm_args * a, const struct htp_op_ctx * ctx, int64_t max_cols, int n_lists) {
    uint8_t * p = (uint8_t *)(((uintptr_t)ctx->vtcm + 63) & ~(uintptr_t)63);
    a->acts     = p;
    p += (size_t)max_cols * a->act_stride;
    a->cols = (struct qmm_col *)(void *)p;
    p += (size_t)n_lists * (size_t)max_cols * sizeof(struct qmm_col);
    a->slices = (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

static void qmm_quantize_chunk(struct qmm_args * a, struct htp_op_ctx * ctx) {
    // A decode's activations (a column or a few) take the caller well under
    // a microsecond: handing them to the pool would cost a dispatch and a
    // join for one worker's work.
    if (a->n_act * a->K <= HTP_SMALL_ACT_ELEMS) {
        qmm_act_job(a, 0, 1);
    } else {
        ctx->run(ctx->pool, qmm_act_job, a);
    }
}

// The dot products of the chunk's columns (activations quantized) with the n
// weights of w[] (their column lists filled), as one job.
static void qmm_dot_chunk(struct qmm_args * w, int n, struct htp_op_ctx * ctx) {
    struct qmm_dot d = {0};
    for (int i = 0; i < n; i++) {
        struct qmm_args * a = &w[i];
        a->n_cb             = (a->ncols + QMM_CB - 1) / QMM_CB;
        a->n_groups         = htp_tiled_ngroups(a->M);
        d.w[i]              = a;
        d.kern[i]           = a->f ? qmm_kernels(a->f->type) : NULL;
        d.item0[i + 1]      = d.item0[i] + a->n_groups * a->n_cb;
    }
    // Chunks of QMM_SHARE_CHUNK row groups: even, so decode's group pairs stay whole.
    htp_share_init(&d.items, d.item0[n], QMM_SHARE_CHUNK, ctx->op.n_threads);
    ctx->run(ctx->pool, qmm_job, &d);
}

static void qmm_run_chunk(struct qmm_args * a, struct htp_op_ctx * ctx) {
    qmm_quantize_chunk(a, ctx);
    qmm_dot_chunk(a, 1, ctx);
}

// Columns j0 .. j0 + ncols - 1 of src1 against weights w into dst (the
// weights' 2-D slice broadcast over src1's dims 2 and 3, as MUL_MAT's).
static void qmm_fill_cols(struct qmm_args * a, const struct htp_tensor_view * w, const struct htp_tensor_view * dst,
                          int64_t j0) {
    const struct htp_tensor_view * src1 = a->src1;
    const int64_t                  r2 = src1->ne[2] / w->ne[2], r3 = src1->ne[3] / w->ne[3];
    for (int64_t j = 0; j < a->ncols; j++) {
        int64_t n, i2, i3;
        htp_row_index(src1->ne, j0 + j, &n, &i2, &i3);
        a->cols[j].act = a->acts + (size_t)j * a->act_stride;
        a->cols[j].dst = htp_view_row(dst, n, i2, i3);
        a->cols[j].w   = w->data + (i2 / r2) * w->nb[2] + (i3 / r3) * w->nb[3];
    }
}

// ---------------------------------------------------------------------------
// MUL_MAT
// ---------------------------------------------------------------------------

int htp_mm_quant_run(struct htp_op_ctx * ctx) {
    const struct htp_tensor_view *src0 = ctx->op.src[0], *src1 = ctx->op.src[1], *dst = ctx->op.dst[0];
    if (htp_view_nelements(dst) == 0) {
        return HTP_STATUS_OK;
    }
    struct qmm_args a;
    qmm_init(&a, ctx);
    a.add = ctx->op.desc->opcode == HTP_OP_MUL_MAT_ADD ? ctx->op.src[2] : NULL;
    qmm_set_unit(&a, ctx, htp_view_nrows(src1));
    const int64_t max_cols = htp_min64(qmm_plan(&a, ctx), htp_view_nrows(src1));
    if (max_cols < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    qmm_chunk_layout(&a, ctx, max_cols, 1);
    const int64_t ncols = htp_view_nrows(src1);
    for (int64_t j0 = 0; j0 < ncols; j0 += max_cols) {
        a.act_row0 = j0;
        a.n_act    = htp_min64(max_cols, ncols - j0);
        a.ncols    = a.n_act;
        qmm_fill_cols(&a, src0, dst, j0);
        qmm_run_chunk(&a, ctx);
    }
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// MUL_MAT_QKV, MUL_MAT_FFN: n quantized weights against one activation tensor
// ---------------------------------------------------------------------------

// Each chunk of columns is quantized once (the q8 blocks do not depend on the
// weight type); each weight's dot pass then reads the same blocks. Scratch:
// contract/ops/fused-check.h's plan (the largest worker slice of the n).
int htp_mm_quant_shared_run(struct htp_op_ctx * ctx) {
    const struct htp_tensor_view *w[3], *x, *out[3];
    const int                     n = htp_mm_shared_operands(&ctx->op, w, &x, out);
    if (n == 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const int64_t ncols = htp_view_nrows(x);
    if (ncols == 0) {
        return HTP_STATUS_OK;
    }
    struct qmm_args a;
    memset(&a, 0, sizeof a);
    a.src1                      = x;
    const struct htp_qmm_plan p = htp_qmm_shared_plan(w, n, ctx->op.n_threads, ctx->op.vtcm_size);
    a.act_stride                = p.act_stride;
    a.slice_bytes               = p.slice_bytes;
    const int64_t max_cols      = htp_min64(p.max_cols, ncols);
    if (max_cols < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    qmm_set_unit(&a, ctx, ncols);
    qmm_chunk_layout(&a, ctx, max_cols, n);
    // One qmm_args per weight with an output, each with its own column list.
    struct qmm_args                part[3];
    const struct htp_tensor_view * part_out[3];
    int                            np = 0;
    for (int i = 0; i < n; i++) {
        if (htp_view_nelements(out[i]) > 0) {
            part[np] = a;
            qmm_set_weights(&part[np], w[i], out[i]);
            part[np].cols  = a.cols + np * max_cols;
            part_out[np++] = out[i];
        }
    }
    for (int64_t j0 = 0; j0 < ncols && np > 0; j0 += max_cols) {
        for (int i = 0; i < np; i++) {
            part[i].act_row0 = j0;
            part[i].n_act    = htp_min64(max_cols, ncols - j0);
            part[i].ncols    = part[i].n_act;
            qmm_fill_cols(&part[i], part[i].src0, part_out[i], j0);
        }
        qmm_quantize_chunk(&part[0], ctx);
        qmm_dot_chunk(part, np, ctx);
    }
    return HTP_STATUS_OK;
}

// MUL_MAT_FFN_GLU: gate and up (one quantized type, tiled, one shape) from
// one quantization of x. On HMX an item's gate and up tiles meet in the
// GLU's row store, so neither product is stored; on HVX (a decode) the gate
// is a plain dot pass into dst and the up's pass stores silu(gate) * up, so
// that each pass streams one matrix (matmul-kquant.c says why).
int htp_mm_quant_ffn_glu_run(struct htp_op_ctx * ctx) {
    const struct htp_tensor_view *wg = ctx->op.src[0], *wu = ctx->op.src[1], *x = ctx->op.src[2], *dst = ctx->op.dst[0];
    if (htp_view_nelements(dst) == 0) {
        return HTP_STATUS_OK;
    }
    if (!(wg->flags & HTP_TENSOR_TILED) || !htp_tile_format(wg->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    struct qmm_args a;
    memset(&a, 0, sizeof a);
    a.src1 = x;
    qmm_set_weights(&a, wg, dst);
    const struct htp_tensor_view * w[2]     = {wg, wu};
    const struct htp_qmm_plan      p        = htp_qmm_shared_plan(w, 2, ctx->op.n_threads, ctx->op.vtcm_size);
    const int64_t                  ncols    = htp_view_nrows(x);
    const int64_t                  max_cols = htp_min64(p.max_cols, ncols);
    a.act_stride                            = p.act_stride;
    a.slice_bytes                           = p.slice_bytes;
    if (max_cols < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    qmm_set_unit(&a, ctx, ncols);
    qmm_chunk_layout(&a, ctx, max_cols, 1);
    const int two_pass = a.max_nc == 1;
    if (!two_pass) {
        a.up     = wu->data;
        a.up_off = wu->data - wg->data;
    }
    for (int64_t j0 = 0; j0 < ncols; j0 += max_cols) {
        a.act_row0 = j0;
        a.n_act    = htp_min64(max_cols, ncols - j0);
        a.ncols    = a.n_act;
        if (!two_pass) {
            qmm_fill_cols(&a, wg, dst, j0);
            qmm_run_chunk(&a, ctx);
            continue;
        }
        qmm_quantize_chunk(&a, ctx);
        for (int pass = 0; pass < 2; pass++) {
            a.glu_up = pass;
            qmm_set_weights(&a, w[pass], dst);
            qmm_fill_cols(&a, w[pass], dst, j0);
            qmm_dot_chunk(&a, 1, ctx);
        }
    }
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// MUL_MAT_ID
// ---------------------------------------------------------------------------

int htp_mm_quant_id_run(struct htp_op_ctx * ctx) {
    const struct htp_tensor_view *src0 = ctx->op.src[0], *src1 = ctx->op.src[1], *ids = ctx->op.src[2],
                                 *dst = ctx->op.dst[0];
    if (htp_view_nelements(dst) == 0) {
        return HTP_STATUS_OK;
    }
    const int64_t U = ids->ne[0], T = ids->ne[1], ne11 = src1->ne[1], E = src0->ne[2];
    // Every id must name an expert; checked before anything runs.
    for (int64_t t = 0; t < T; t++) {
        for (int64_t s = 0; s < U; s++) {
            int32_t e;
            memcpy(&e, ids->data + s * ids->nb[0] + t * ids->nb[1], 4);
            if (e < 0 || e >= E) {
                return HTP_STATUS_INVAL_PARAMS;
            }
        }
    }
    struct qmm_args a;
    qmm_init(&a, ctx);
    qmm_set_unit(&a, ctx, U * T);
    const int64_t per_token = htp_max64(ne11, U);
    const int64_t max_cols  = qmm_plan(&a, ctx);
    if (max_cols < per_token) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    qmm_chunk_layout(&a, ctx, max_cols, 1);
    const int64_t tok_per_chunk = max_cols / per_token;
    for (int64_t t0 = 0; t0 < T; t0 += tok_per_chunk) {
        const int64_t t1 = htp_min64(T, t0 + tok_per_chunk);
        a.act_row0       = t0 * ne11;
        a.n_act          = (t1 - t0) * ne11;
        // Columns (slot, token) of this chunk, grouped by expert.
        a.ncols = 0;
        for (int64_t e = 0; e < E; e++) {
            for (int64_t t = t0; t < t1; t++) {
                for (int64_t s = 0; s < U; s++) {
                    int32_t id;
                    memcpy(&id, ids->data + s * ids->nb[0] + t * ids->nb[1], 4);
                    if (id != e) {
                        continue;
                    }
                    struct qmm_col * c = &a.cols[a.ncols++];
                    c->act             = a.acts + (size_t)((t - t0) * ne11 + s % ne11) * a.act_stride;
                    c->dst             = htp_view_row(dst, s, t, 0);
                    c->w               = src0->data + e * src0->nb[2];
                }
            }
        }
        qmm_run_chunk(&a, ctx);
    }
    return HTP_STATUS_OK;
}
