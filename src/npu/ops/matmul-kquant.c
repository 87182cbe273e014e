// matmul-kquant.c: MUL_MAT, MUL_MAT_ID and GET_ROWS with K-quant weights
// (Q2_K .. Q6_K, and IQ4_XS), in the tiled layout (contract/kquant-tiles.h) or plain ggml rows.
//
//   MUL_MAT     src0 [K, M, ne02, ne03] K-quant; src1 [K, N, ne12, ne13] F32/F16/BF16
//               dst [M, N, ne12, ne13] F32 (weights broadcast over dims 2-3 as in ggml)
//               (MUL_MAT_ADD: + src2 as each row is stored, matmul.h's epilogue)
//   MUL_MAT_ID  src0 experts [K, M, n_as]; src1 [K, ne11 | n_used, T]; src2 ids I32 [n_used, T]
//               dst [M, n_used, T]:  dst[:, e, t] = src0[:, :, ids[e, t]] x src1[:, e % ne11, t]
//   GET_ROWS    src0 [K, n, ne2, ne3] K-quant; src1 I32 [m, ne2, ne3]; dst [K, m, ne2, ne3] F32/F16/BF16
//
// A matmul runs in two passes over the worker pool per chunk of columns (a
// column is one (src1 row, weight matrix, dst row) triple):
//   1. quantize: each column's activations -> struct htp_q8k_block rows in the
//      scratch area ("VTCM"), as ggml-cpu quantizes to Q8_K;
//   2. dot: tiles of KQ_RB row groups x KQ_CB columns, claimed by the workers
//      from a work share (work-share.h: contiguous runs, a slow worker's tail
//      taken by the others); within a tile each 16-row group meets the columns four
//      at a time (htp_kq_dot_group: one weight load feeds 4 columns), and a
//      lone column (decode) meets four or two row groups at once
//      (htp_kq_dot_multi).
// MUL_MAT_ID first sorts its columns by expert (counting sort into scratch),
// so the columns of one expert share weight loads like an ordinary matmul.
// Plain (not tiled) weights are packed one row group at a time into the
// worker's slice of scratch and then read as tiles.
//
// The IQ codebook types (IQ2_XXS, IQ2_XS, IQ2_S, ...: contract/iq-tiles.h)
// run through the same passes: their row groups, tiled or plain, are decoded
// into the worker's slice of scratch (decoded tiles, iq-dot.h), once per
// group and column block, and the dot pass reads those (htp_iq_dot_group;
// no multi-group decode call).
//
// Scratch: [ids order: ncols int32 (MUL_MAT_ID)] [pack: n_threads x group,
// or n_threads x decoded group (IQ)] [activations: chunk x K/256 blocks]. An op whose smallest working set (one
// column) does not fit answers HTP_STATUS_VTCM_TOO_SMALL.

#include <stdatomic.h>

#include "kernel-util.h"
#include "contract/ops/fused-check.h"
#include "contract/ops/matmul-check.h"
#include "matmul.h"
#include "kquant-dot.h"
#include "iq-dot.h"
#include "iq-rows.h"
#include "contract/tiled.h"
#include "vec.h"
#include "work-share.h"

#define KQ_RB 4   // row groups (of 16 rows) per tile
#define KQ_CB 64  // columns per tile

// ---------------------------------------------------------------------------
// Matmul core, shared by MUL_MAT and MUL_MAT_ID
// ---------------------------------------------------------------------------

struct kq_mm {
    const struct htp_tensor_view * src0, *src1, *dst, *ids;
    const struct htp_tensor_view * add;     // MUL_MAT_ADD's addend (matmul.h's epilogue), else NULL
    const struct htp_tensor_view * up;      // MUL_MAT_FFN_GLU's up weights (src0: gate), else NULL
    int                            glu_up;  // MUL_MAT_FFN_GLU's up pass on HVX: dst holds the gate's sums
    const struct htp_tile_format * f;
    int                            tiled;
    htp_iq_decode_fn               iq;         // an IQ codebook type's decoder, else NULL
    const struct htp_codebooks *   codebooks;  // the session's codebooks (IQ)
    const struct htp_iq_codes *    iq_codes;   // ... as codes (iq-rows.h)
    int64_t                        nsb;        // super-blocks per row
    size_t                         gbytes;     // bytes of a row group (tiled, and as packed into scratch)
    int64_t                        ngroup;     // row groups per matrix
    int64_t                        r2, r3;     // MUL_MAT broadcast ratios
    int64_t                        ncols;      // columns in all
    const int32_t *                order;      // MUL_MAT_ID: column j -> e * T + t, sorted by expert
    uint8_t *                      pack;       // plain weights: n_threads x gbytes (IQ: decoded groups)
    struct htp_q8k_block *         act;        // chunk x nsb blocks
    int64_t                        j0, j1;     // the chunk of columns being computed
    int64_t                        cb;         // columns per tile (all of the chunk's when plain)
    int64_t                        n_rb;       // tiles down the rows
    int                            max_nc;     // columns per micro-kernel call: 4 on HMX, 1 on HVX (htp_mm_unit)
    struct htp_share               tiles;      // the chunk's tiles, column block major, between the workers
    atomic_int                     bad_id;     // an expert id out of range was met (relaxed: read after run)
};

// Column j: weight matrix, src1 row and dst row (NULL w: bad expert id),
// and the addend's row if ar is given (NULL: no addend).
static void kq_col(const struct kq_mm * a, int64_t j, const uint8_t ** w, const uint8_t ** x, uint8_t ** y,
                   const uint8_t ** ar) {
    const struct htp_tensor_view *src0 = a->src0, *src1 = a->src1, *dst = a->dst;
    if (ar) {
        *ar = NULL;
    }
    if (!a->ids) {
        int64_t n, i2, i3;
        htp_row_index(src1->ne, j, &n, &i2, &i3);
        *w = src0->data + (i2 / a->r2) * src0->nb[2] + (i3 / a->r3) * src0->nb[3];
        *x = htp_view_row(src1, n, i2, i3);
        *y = htp_view_row(dst, n, i2, i3);
        if (ar) {
            *ar = htp_mm_addend_row(a->add, n, i2, i3);
        }
        return;
    }
    const int64_t n_used = a->ids->ne[0];
    const int64_t e = a->order[j] % n_used, t = a->order[j] / n_used;
    int32_t       id;
    memcpy(&id, a->ids->data + e * a->ids->nb[0] + t * a->ids->nb[1], sizeof id);
    *w = id >= 0 && id < src0->ne[2] ? src0->data + id * src0->nb[2] : NULL;
    *x = htp_view_row(src1, e % src1->ne[1], t, 0);
    *y = htp_view_row(dst, e, t, 0);
}

static void kq_quantize_job(void * arg, uint32_t ith, uint32_t nth) {
    struct kq_mm * a = arg;
    int64_t        c0, c1;
    htp_split(a->j1 - a->j0, ith, nth, &c0, &c1);
    float buf[HTP_KQ_QK];
    for (int64_t c = c0; c < c1; c++) {
        const uint8_t *w, *x;
        uint8_t *      y;
        kq_col(a, a->j0 + c, &w, &x, &y, NULL);
        for (int64_t b = 0; b < a->nsb; b++) {
            htp_row_load_f32(buf, x + b * HTP_KQ_QK * a->src1->nb[0], a->src1->nb[0], a->src1->type, HTP_KQ_QK);
            htp_kq_quantize_q8k(a->act + c * a->nsb + b, buf, HTP_KQ_QK);
        }
    }
}

// Row group g of matrix w as tiles: in place when tiled, else packed into
// this worker's scratch (kept while the same group is asked for again).
static const uint8_t * kq_group(const struct kq_mm * a, const uint8_t * w, int64_t g, uint8_t * pack,
                                const uint8_t ** cached_w, int64_t * cached_g) {
    if (a->iq) {  // decoded into scratch, from its tiles or its plain rows
        if (*cached_w != w || *cached_g != g) {
            const int64_t M = a->src0->ne[1];
            const int     n = (int)htp_min64(HTP_KQ_R, M - g * HTP_KQ_R);
            if (a->tiled) {
                htp_iq_decode_group(a->iq, a->codebooks, w + (size_t)g * a->gbytes, htp_iq_tile_blck_bytes(a->f),
                                    a->f->q_bytes, n, a->nsb, (struct htp_iq_dtile *)(void *)pack);
            } else {
                htp_iq_decode_group(a->iq, a->codebooks, w + g * HTP_KQ_R * a->src0->nb[1], (size_t)a->src0->nb[1],
                                    a->f->blck_bytes, n, a->nsb, (struct htp_iq_dtile *)(void *)pack);
            }
            *cached_w = w;
            *cached_g = g;
        }
        return pack;
    }
    if (a->tiled) {
        return w + (size_t)g * a->gbytes;
    }
    if (*cached_w != w || *cached_g != g) {
        const int64_t M = a->src0->ne[1];
        const int     n = (int)htp_min64(HTP_KQ_R, M - g * HTP_KQ_R);
        htp_tiled_pack_group(a->f, NULL, w + g * HTP_KQ_R * a->src0->nb[1], (size_t)a->src0->nb[1], n, a->nsb, pack);
        *cached_w = w;
        *cached_g = g;
    }
    return pack;
}

// Rows m0 .. m0 + nr of dst row y: the sums out, with MUL_MAT_ADD's addend
// row ar, or as the GLU's up pass combines them with the gate's.
static void kq_store(const struct kq_mm * a, uint8_t * y, int64_t m0, const float * out, int64_t nr,
                     const uint8_t * ar) {
    if (a->glu_up) {
        htp_mm_store_glu(y, a->dst->nb[0], m0, out, nr);
    } else {
        htp_mm_store(y, a->dst->nb[0], m0, out, nr, a->add, ar);
    }
}

// IQ weights against a lone column: row group g straight from its ggml
// blocks (htp_iq_dot_rows: no decoded tiles), where the build and the type
// have that kernel; 0 if not (then nothing was done).
static int kq_iq_rows(struct kq_mm * a, int64_t g, int64_t c) {
    const uint8_t *w, *x, *ar;
    uint8_t *      y;
    kq_col(a, a->j0 + c, &w, &x, &y, &ar);
    if (!w) {
        atomic_store_explicit(&a->bad_id, 1, memory_order_relaxed);
        return 1;
    }
    if (!a->tiled && a->f->pack_coded) {
        return 0;  // plain IQ1 rows: ggml's blocks, where these kernels read the tiles' codes
    }
    const int64_t   m0 = g * HTP_KQ_R, nr = htp_min64(HTP_KQ_R, a->src0->ne[1] - m0);
    const size_t    bb   = a->f->blck_bytes;
    const uint8_t * base = a->tiled ? w + (size_t)g * a->gbytes : w + m0 * a->src0->nb[1];
    const size_t    rs   = a->tiled ? htp_iq_tile_blck_bytes(a->f) : (size_t)a->src0->nb[1],
                 bs      = a->tiled ? a->f->q_bytes : bb;
    float out[HTP_KQ_R];
    if (!a->iq_codes ||
        !htp_iq_dot_rows(a->src0->type, a->iq_codes, base, rs, bs, (int)nr, a->nsb, a->act + c * a->nsb, out)) {
        return 0;
    }
    kq_store(a, y, m0, out, nr, ar);
    return 1;
}

// Tile t of the chunk: row groups KQ_RB x column block cb (see kq_mm_execute).
static void kq_tile(struct kq_mm * a, int64_t t, uint8_t * pack, const uint8_t ** cached_w, int64_t * cached_g) {
    const int64_t M   = a->src0->ne[1];
    const int64_t nch = a->j1 - a->j0;
    const int64_t cbi = t / a->n_rb, rbi = t % a->n_rb;
    const int64_t c0 = cbi * a->cb, c1 = htp_min64(nch, c0 + a->cb);
    const int64_t g0 = rbi * KQ_RB, g1 = htp_min64(a->ngroup, g0 + KQ_RB);
    for (int64_t g = g0; g < g1; g++) {
        const int64_t m0 = g * HTP_KQ_R, nr = htp_min64(HTP_KQ_R, M - m0);
        // Decode (a lone column), or every column on HVX: the tile's groups,
        // four or two at a time, one column at a time.
        const int ng = (int)htp_min64(g1 - g, 4) & ~1;
        if (a->tiled && !a->iq && (c1 - c0 == 1 || a->max_nc == 1) && ng >= 2) {
            for (int64_t c = c0; c < c1; c++) {
                const uint8_t *w, *x, *ar;
                uint8_t *      y;
                kq_col(a, a->j0 + c, &w, &x, &y, &ar);
                if (!w) {
                    atomic_store_explicit(&a->bad_id, 1, memory_order_relaxed);
                    continue;
                }
                float out[4][HTP_KQ_R];
                htp_kq_dot_multi(a->src0->type, out, w + (size_t)g * a->gbytes, a->gbytes, ng, a->nsb,
                                 a->act + c * a->nsb);
                const int64_t nrows = htp_min64((int64_t)ng * HTP_KQ_R, M - m0);
                kq_store(a, y, m0, &out[0][0], nrows, ar);
            }
            g += ng - 1;
            continue;
        }
        if (a->iq && c1 - c0 == 1 && kq_iq_rows(a, g, c0)) {
            continue;  // IQ decode: the rows straight from their blocks
        }
        for (int64_t c = c0; c < c1;) {
            // Up to 4 columns that read the same weight matrix.
            const struct htp_q8k_block * act[4];
            uint8_t *                    y[4];
            const uint8_t *              w, *x, *wc, *ar[4];
            kq_col(a, a->j0 + c, &w, &x, &y[0], &ar[0]);
            if (!w) {
                atomic_store_explicit(&a->bad_id, 1, memory_order_relaxed);
                c++;
                continue;
            }
            act[0] = a->act + c * a->nsb;
            int nc = 1;
            for (; nc < a->max_nc && c + nc < c1; nc++) {
                kq_col(a, a->j0 + c + nc, &wc, &x, &y[nc], &ar[nc]);
                if (wc != w) {
                    break;
                }
                act[nc] = a->act + (c + nc) * a->nsb;
            }
            const uint8_t * grp = kq_group(a, w, g, pack, cached_w, cached_g);
            float           out[4][HTP_KQ_R];
            if (a->iq) {
                htp_iq_dot_group(out, (const struct htp_iq_dtile *)(const void *)grp, a->nsb, act, nc);
            } else {
                htp_kq_dot_group(a->src0->type, out, grp, a->nsb, act, nc);
            }
            for (int i = 0; i < nc; i++) {
                kq_store(a, y[i], m0, out[i], nr, ar[i]);
            }
            c += nc;
        }
    }
}

// MUL_MAT_FFN_GLU on HMX: gate and up rows of tile t (tiled weights, one
// layout), stored as silu(gate) * up. Column c's up matrix sits where its
// gate matrix does, in the up tensor.
static void kq_glu_tile(struct kq_mm * a, int64_t t) {
    const int64_t   M   = a->src0->ne[1];
    const int64_t   nch = a->j1 - a->j0;
    const int64_t   cbi = t / a->n_rb, rbi = t % a->n_rb;
    const int64_t   c0 = cbi * a->cb, c1 = htp_min64(nch, c0 + a->cb);
    const int64_t   g0 = rbi * KQ_RB, g1 = htp_min64(a->ngroup, g0 + KQ_RB);
    const ptrdiff_t up_off = a->up->data - a->src0->data;
    for (int64_t g = g0; g < g1; g++) {
        const int64_t m0 = g * HTP_KQ_R, nr = htp_min64(HTP_KQ_R, M - m0);
        // The gate's row group against every column of the tile first, then
        // the up's: one weight group stays in cache at a time (gate sums wait
        // in gsum, KQ_CB columns of 16 rows).
        float gsum[KQ_CB][HTP_KQ_R];
        for (int pass = 0; pass < 2; pass++) {
            for (int64_t c = c0; c < c1;) {
                const struct htp_q8k_block * act[4];
                uint8_t *                    y[4];
                const uint8_t *              w, *x, *wc;
                kq_col(a, a->j0 + c, &w, &x, &y[0], NULL);
                act[0] = a->act + c * a->nsb;
                int nc = 1;
                for (; nc < a->max_nc && c + nc < c1; nc++) {
                    kq_col(a, a->j0 + c + nc, &wc, &x, &y[nc], NULL);
                    if (wc != w) {
                        break;
                    }
                    act[nc] = a->act + (c + nc) * a->nsb;
                }
                float sums[4][HTP_KQ_R], out[HTP_KQ_R];
                htp_kq_dot_group(a->src0->type, sums, w + (pass ? up_off : 0) + (size_t)g * a->gbytes, a->nsb, act, nc);
                for (int i = 0; i < nc; i++) {
                    if (pass == 0) {
                        memcpy(gsum[c - c0 + i], sums[i], sizeof sums[i]);
                    } else {
                        htp_vec_swiglu_f32(nr, out, gsum[c - c0 + i], sums[i]);
                        htp_mm_store(y[i], a->dst->nb[0], m0, out, nr, NULL, NULL);
                    }
                }
                c += nc;
            }
        }
    }
}

static void kq_glu_job(void * arg, uint32_t ith, uint32_t nth) {
    struct kq_mm * a = arg;
    (void)nth;
    int64_t t0, t1;
    while (htp_share_claim(&a->tiles, ith, &t0, &t1)) {
        for (int64_t t = t0; t < t1; t++) {
            kq_glu_tile(a, t);
        }
    }
}

// A dot pass: the tiles of one weight, or of MUL_MAT_QKV's two or three in
// one job (weight i's tiles are [tile0[i], tile0[i + 1]) of the share), so a
// worker goes on from one weight's tiles to the next's without a barrier. On
// the 1B model's decode the QKV op took 1.56-1.57x the time of the layer's o
// matmul as three jobs, 1.42-1.44x as one (Q4_K; Q4_0 in matmul-quant.c:
// 1.50-1.51x -> 1.39-1.44x; htp-run's profile, alternated builds).
struct kq_dot {
    struct kq_mm *   w[3];
    int64_t          tile0[4];
    size_t           slice;  // a worker's pack area (plain or IQ weights): the largest weight's
    struct htp_share tiles;
};

// The bytes of a worker's pack slice for a's weights.
static size_t kq_slice(const struct kq_mm * a) {
    return a->iq ? htp_iq_dgroup_bytes(a->src0->ne[0]) : a->gbytes;
}

static void kq_dot_job(void * arg, uint32_t ith, uint32_t nth) {
    struct kq_dot * d        = arg;
    const uint8_t * cached_w = NULL;  // the group in this worker's pack slice (kq_group)
    int64_t         cached_g = -1;
    (void)nth;  // d->tiles knows the workers
    int64_t t0, t1;
    while (htp_share_claim(&d->tiles, ith, &t0, &t1)) {
        for (int64_t t = t0; t < t1; t++) {
            int i = 0;
            while (t >= d->tile0[i + 1]) {
                i++;
            }
            struct kq_mm * a = d->w[i];
            kq_tile(a, t - d->tile0[i], a->pack ? a->pack + (size_t)ith * d->slice : NULL, &cached_w, &cached_g);
        }
    }
}

// The weight matrix's share of a: its layout, its row groups and tiles.
static void kq_mm_weights(struct kq_mm * a, const struct htp_tensor_view * w) {
    a->src0   = w;
    a->f      = htp_tile_format(w->type);
    a->tiled  = (w->flags & HTP_TENSOR_TILED) != 0;
    a->iq     = !htp_iq_type_ok(w->type) ? NULL : a->tiled ? htp_iq_tile_decoder(w->type) : htp_iq_decoder(w->type);
    a->nsb    = w->ne[0] / HTP_KQ_QK;
    a->gbytes = htp_tiled_group_bytes(a->f, w->ne[0]);
    a->ngroup = htp_tiled_ngroups(w->ne[1]);
    a->n_rb   = (a->ngroup + KQ_RB - 1) / KQ_RB;
}

// Quantize the chunk [j0, j1) of the columns' activations into a->act.
static void kq_mm_quantize(struct htp_op_ctx * ctx, struct kq_mm * a) {
    if ((a->j1 - a->j0) * a->src0->ne[0] <= HTP_SMALL_ACT_ELEMS) {
        kq_quantize_job(a, 0, 1);  // a decode's column: not worth a dispatch (matmul-quant.c)
    } else {
        ctx->run(ctx->pool, kq_quantize_job, a);
    }
}

// The dot pass of the chunk against the n weights w[] (their activations
// quantized), as one job.
static void kq_mm_dot(struct htp_op_ctx * ctx, struct kq_mm * w, int n) {
    struct kq_dot d = {0};
    for (int i = 0; i < n; i++) {
        struct kq_mm * a = &w[i];
        a->cb            = a->tiled ? KQ_CB : a->j1 - a->j0;  // plain weights: one column block, each group packed once
        d.w[i]           = a;
        d.tile0[i + 1]   = d.tile0[i] + a->n_rb * ((a->j1 - a->j0 + a->cb - 1) / a->cb);
        if (a->pack && kq_slice(a) > d.slice) {
            d.slice = kq_slice(a);  // what the plan gave each worker (tiled weights pack nothing)
        }
    }
    htp_share_init(&d.tiles, d.tile0[n], 1, ctx->op.n_threads);
    ctx->run(ctx->pool, kq_dot_job, &d);
}

static int kq_mm_execute(struct htp_op_ctx * ctx, struct kq_mm * a) {
    size_t        fixed;
    const int64_t chunk =
        htp_kq_mm_plan(a->src0, a->ncols, a->ids != NULL, ctx->op.n_threads, ctx->op.vtcm_size, &fixed);
    if (chunk < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    kq_mm_weights(a, a->src0);
    if (htp_iq_type_ok(a->src0->type) && (!a->iq || !ctx->codebooks)) {
        return HTP_STATUS_NO_SUPPORT;  // no decoder, or the host sent no codebooks
    }
    a->codebooks = ctx->codebooks;
    a->iq_codes  = ctx->iq_codes;
    uint8_t * p  = ctx->vtcm + (a->ids ? ((size_t)a->ncols * sizeof(int32_t) + 127) / 128 * 128 : 0);
    a->pack      = a->tiled && !a->iq ? NULL : p;
    a->act       = (struct htp_q8k_block *)(void *)(ctx->vtcm + fixed);
    ctx->engine  = htp_mm_unit(ctx, a->ncols);
    a->max_nc    = ctx->engine == HTP_UNIT_HMX ? 4 : 1;
    for (a->j0 = 0; a->j0 < a->ncols; a->j0 = a->j1) {
        a->j1 = htp_min64(a->ncols, a->j0 + chunk);
        kq_mm_quantize(ctx, a);
        kq_mm_dot(ctx, a, 1);
    }
    return atomic_load_explicit(&a->bad_id, memory_order_relaxed) ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// MUL_MAT
// ---------------------------------------------------------------------------

int htp_mm_kquant_run(struct htp_op_ctx * ctx) {
    struct kq_mm a = {0};
    a.src0         = ctx->op.src[0];
    a.src1         = ctx->op.src[1];
    a.dst          = ctx->op.dst[0];
    a.add          = ctx->op.desc->opcode == HTP_OP_MUL_MAT_ADD ? ctx->op.src[2] : NULL;
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    a.r2    = a.src1->ne[2] / a.src0->ne[2];
    a.r3    = a.src1->ne[3] / a.src0->ne[3];
    a.ncols = htp_view_nrows(a.src1);
    return kq_mm_execute(ctx, &a);
}

// ---------------------------------------------------------------------------
// MUL_MAT_QKV, MUL_MAT_FFN: n weights against one activation tensor
// ---------------------------------------------------------------------------

// Each chunk of columns is quantized once; then the weights' dot passes read
// the same Q8_K blocks, in one job (scratch: the largest weight's pack area,
// then the activations; contract/ops/fused-check.h's plan).
int htp_mm_kquant_shared_run(struct htp_op_ctx * ctx) {
    const struct htp_tensor_view *w[3], *x, *out[3];
    const int                     n = htp_mm_shared_operands(&ctx->op, w, &x, out);
    if (n == 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const int64_t ncols = htp_view_nrows(x);
    if (ncols == 0) {
        return HTP_STATUS_OK;
    }
    size_t        fixed;
    const int64_t chunk = htp_kq_shared_plan(w, n, ncols, ctx->op.n_threads, ctx->op.vtcm_size, &fixed);
    if (chunk < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    ctx->engine = htp_mm_unit(ctx, ncols);
    // One kq_mm per weight with an output, all reading the same activations;
    // each chunk's dot passes run as one job (kq_mm_dot).
    struct kq_mm part[3] = {{0}};
    int          np      = 0;
    for (int i = 0; i < n; i++) {
        if (htp_view_nelements(out[i]) == 0) {
            continue;
        }
        struct kq_mm * p = &part[np++];
        kq_mm_weights(p, w[i]);
        p->src1   = x;
        p->dst    = out[i];
        p->ncols  = ncols;
        p->act    = (struct htp_q8k_block *)(void *)(ctx->vtcm + fixed);
        p->max_nc = ctx->engine == HTP_UNIT_HMX ? 4 : 1;
        p->pack   = p->tiled && !p->iq ? NULL : ctx->vtcm;  // as kq_mm_execute
        p->r2     = x->ne[2] / w[i]->ne[2];
        p->r3     = x->ne[3] / w[i]->ne[3];
    }
    for (int64_t j0 = 0; j0 < ncols && np > 0; j0 += chunk) {
        for (int i = 0; i < np; i++) {
            part[i].j0 = j0;
            part[i].j1 = htp_min64(ncols, j0 + chunk);
        }
        kq_mm_quantize(ctx, &part[0]);  // kq_col reads src0 only for the weight's pointer
        kq_mm_dot(ctx, part, np);
    }
    return HTP_STATUS_OK;
}

// MUL_MAT_FFN_GLU: gate and up (tiled, one layout) from one quantization of
// x. On HMX their tiles meet in the GLU's row store and neither product is
// stored. On HVX (a decode) the gate is a plain dot pass into dst and the
// up's pass turns each row into silu(gate) * up: each pass streams one
// matrix, as a lone MUL_MAT does. Alternating a tile of gate with a tile of
// up made each worker switch between two weight streams 9 MiB apart every
// 74 KiB: on the 1B Q4_K model the op took 2.36-2.43x the time of the layer's
// down matmul for 1.99x its bytes; in two passes, 2.08-2.13x (htp-run's
// profile, medians over 48 tokens, three alternated pairs of builds).
int htp_mm_kquant_ffn_glu_run(struct htp_op_ctx * ctx) {
    struct kq_mm a = {0};
    a.src1         = ctx->op.src[2];
    a.dst          = ctx->op.dst[0];
    a.up           = ctx->op.src[1];
    a.ncols        = htp_view_nrows(a.src1);
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    const struct htp_tensor_view * w[2] = {ctx->op.src[0], ctx->op.src[1]};
    size_t                         fixed;
    const int64_t chunk = htp_kq_shared_plan(w, 2, a.ncols, ctx->op.n_threads, ctx->op.vtcm_size, &fixed);
    if (chunk < 1 || !(w[0]->flags & HTP_TENSOR_TILED)) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    kq_mm_weights(&a, w[0]);
    a.r2        = a.src1->ne[2] / w[0]->ne[2];
    a.r3        = a.src1->ne[3] / w[0]->ne[3];
    a.act       = (struct htp_q8k_block *)(void *)(ctx->vtcm + fixed);
    a.cb        = KQ_CB;
    ctx->engine = htp_mm_unit(ctx, a.ncols);
    a.max_nc    = ctx->engine == HTP_UNIT_HMX ? 4 : 1;
    for (a.j0 = 0; a.j0 < a.ncols; a.j0 = a.j1) {
        a.j1 = htp_min64(a.ncols, a.j0 + chunk);
        kq_mm_quantize(ctx, &a);
        if (a.max_nc == 1) {
            for (int pass = 0; pass < 2; pass++) {
                a.glu_up = pass;
                kq_mm_weights(&a, w[pass]);
                kq_mm_dot(ctx, &a, 1);
            }
            continue;
        }
        htp_share_init(&a.tiles, a.n_rb * ((a.j1 - a.j0 + a.cb - 1) / a.cb), 1, ctx->op.n_threads);
        ctx->run(ctx->pool, kq_glu_job, &a);
    }
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// MUL_MAT_ID
// ---------------------------------------------------------------------------

int htp_mm_kquant_id_run(struct htp_op_ctx * ctx) {
    struct kq_mm a = {0};
    a.src0         = ctx->op.src[0];
    a.src1         = ctx->op.src[1];
    a.ids          = ctx->op.src[2];
    a.dst          = ctx->op.dst[0];
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    const int64_t n_used = a.ids->ne[0], T = a.ids->ne[1], n_as = a.src0->ne[2];
    a.ncols = n_used * T;
    size_t fixed;
    if (htp_kq_mm_plan(a.src0, a.ncols, 1, ctx->op.n_threads, ctx->op.vtcm_size, &fixed) < 1) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    // Columns sorted by expert: two passes of a counting sort over the ids
    // (bad ids go last; kq_col reports them). Buckets live on the stack for
    // up to 1024 experts, else the order stays unsorted.
    int32_t * order = (int32_t *)(void *)ctx->vtcm;
    int64_t   start[1025];
    const int sort = n_as <= 1024;
    if (sort) {
        memset(start, 0, sizeof start);
    }
    for (int64_t j = 0; j < a.ncols; j++) {
        int32_t id;
        memcpy(&id, a.ids->data + (j % n_used) * a.ids->nb[0] + (j / n_used) * a.ids->nb[1], sizeof id);
        if (sort) {
            start[id >= 0 && id < n_as ? id : n_as]++;
        }
        order[j] = (int32_t)j;
    }
    if (sort) {
        int64_t pos = 0;
        for (int64_t e = 0; e <= n_as; e++) {
            const int64_t n = start[e];
            start[e]        = pos;
            pos += n;
        }
        for (int64_t j = 0; j < a.ncols; j++) {
            int32_t id;
            memcpy(&id, a.ids->data + (j % n_used) * a.ids->nb[0] + (j / n_used) * a.ids->nb[1], sizeof id);
            order[start[id >= 0 && id < n_as ? id : n_as]++] = (int32_t)j;
        }
    }
    a.order = order;
    return kq_mm_execute(ctx, &a);
}

// ---------------------------------------------------------------------------
// GET_ROWS
// ---------------------------------------------------------------------------

struct kq_rows {
    const struct htp_tensor_view *src, *idx, *dst;
    htp_iq_decode_fn              iq_decode;  // IQ codebook weights (with their codebooks), else NULL
    const struct htp_codebooks *  cb;
    atomic_int                    bad_index;  // relaxed: read after ctx->run returns
};

// One 256-element block of either family into y[256].
static void kq_rows_dequant(const struct kq_rows * a, float * y, const uint8_t * blk) {
    if (a->iq_decode) {
        htp_iq_dequant_block(a->iq_decode, a->cb, blk, y);
    } else {
        htp_kq_dequant_row(a->src->type, y, blk, 1);
    }
}

static void kq_get_rows_job(void * arg, uint32_t ith, uint32_t nth) {
    struct kq_rows *               a   = arg;
    const struct htp_tensor_view * src = a->src, *idx = a->idx, *dst = a->dst;
    const struct htp_tile_format * f      = htp_tile_format(src->type);
    const int64_t                  nsb    = src->ne[0] / HTP_KQ_QK;
    const int                      tiled  = (src->flags & HTP_TENSOR_TILED) != 0;
    const size_t                   gbytes = htp_tiled_group_bytes(f, src->ne[0]);
    float                          buf[HTP_KQ_QK];

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        int32_t r;
        memcpy(&r, idx->data + i1 * idx->nb[0] + i2 * idx->nb[1] + i3 * idx->nb[2], sizeof r);
        if (r < 0 || r >= src->ne[1]) {
            atomic_store_explicit(&a->bad_index, 1, memory_order_relaxed);
            continue;
        }
        const uint8_t * m = src->data + i2 * src->nb[2] + i3 * src->nb[3];
        uint8_t *       y = htp_view_row(dst, i1, i2, i3);
        for (int64_t b = 0; b < nsb; b++) {  // one super-block at a time through buf
            if (tiled) {
                // Row r of its group, super-block b only: a group of one tile.
                const uint8_t * grp = m + (size_t)(r / HTP_KQ_R) * gbytes;
                const uint8_t * q   = htp_tiled_q(f, grp, b);
                if (a->iq_decode) {  // an IQ tile holds each row's block whole: decoded in place
                    kq_rows_dequant(a, buf, q + (size_t)(r % HTP_KQ_R) * htp_iq_tile_blck_bytes(f));
                } else {
                    uint8_t blk[256];
                    f->unpack(q, htp_tiled_s(f, grp, nsb, b), r % HTP_KQ_R, blk);
                    kq_rows_dequant(a, buf, blk);
                }
            } else {
                kq_rows_dequant(a, buf, m + r * src->nb[1] + b * src->nb[0]);
            }
            htp_row_store_f32(y + b * HTP_KQ_QK * dst->nb[0], dst->nb[0], dst->type, buf, HTP_KQ_QK);
        }
    }
}

int htp_kq_get_rows_run(struct htp_op_ctx * ctx) {
    struct kq_rows a = {ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0], NULL, NULL, 0};
    if (htp_iq_type_ok(a.src->type)) {
        a.iq_decode = a.src->flags & HTP_TENSOR_TILED ? htp_iq_tile_decoder(a.src->type) : htp_iq_decoder(a.src->type);
        a.cb        = ctx->codebooks;
        if (!a.iq_decode || !a.cb) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, kq_get_rows_job, &a);
    return atomic_load_explicit(&a.bad_index, memory_order_relaxed) ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}
