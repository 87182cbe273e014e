// shape-ops.c: ops that move or place elements without arithmetic.
//
//   REPEAT  src0 [n0, n1, n2, n3] -> dst [k0*n0, k1*n1, k2*n2, k3*n3]:  dst[i] = src0[i mod n]
//   CONCAT  src0, src1 -> dst, joined along dim params[0]; other dims equal
//   PAD     src0 [n0, ...] -> dst [lp0 + n0 + rp0, ...]; params = lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3,
//           circular: dst[i] = src0[i - lp] inside, 0 outside; params[8] != 0: src0[(i - lp) mod n]
//   DIAG    src0 [n, 1, n2, n3] -> dst [n, n, n2, n3]:  dst[i0, i1] = i0 == i1 ? src0[i0] : 0
//   TRI     src0 [n0, n1, ...] -> dst same shape:  dst[i0, i1] = keep(i0, i1) ? src0[i0, i1] : 0,
//           params[0] = enum ggml_tri_type (keep: UPPER_DIAG i0 >= i1, UPPER i0 > i1,
//           LOWER_DIAG i0 <= i1, LOWER i0 < i1)
//   FILL    dst = params[0] (a float) everywhere; src0, if given, is not read
//
// CONCAT of a block type copies whole blocks (rows of packed blocks, every
// ne[0] whole blocks: shape-check.c).
//
// Any strides. The data-movement ops take any plain (non-block) type with the
// same type for sources and dst and copy element bytes; zeros are all-zero
// bytes (0 in every such type). FILL writes F32, F16 or BF16. Work is split
// by dst rows; every row is written whole, so each element has one writer.

#include "contract/type-traits.h"
#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct shape_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * src1;
    const struct htp_tensor_view * dst;
    int64_t                        es;   // element size in bytes (CONCAT of a block type: block bytes)
    int64_t                        blk;  // elements per such unit: 1, or the block size
    const struct htp_op_desc *     desc;
};

// Element size of a plain type, 0 for block types and codes we do not know.
static int64_t shape_elem_size(uint32_t type) {
    const struct htp_type_traits * tt = htp_type_traits(type);
    return tt && tt->blck_size == 1 ? (int64_t)tt->type_size : 0;
}

// n elements from x (stride sx) to y (stride sy), es bytes each.
static void shape_copy(uint8_t * y, int64_t sy, const uint8_t * x, int64_t sx, int64_t n, int64_t es) {
    if (n <= 0) {
        return;
    }
    if (sx == es && sy == es) {
        memmove(y, x, (size_t)(n * es));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        memmove(y + i * sy, x + i * sx, (size_t)es);  // src and dst views may overlap
    }
}

static void shape_zero(uint8_t * y, int64_t sy, int64_t n, int64_t es) {
    if (n <= 0) {
        return;
    }
    if (sy == es) {
        memset(y, 0, (size_t)(n * es));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        memset(y + i * sy, 0, (size_t)es);
    }
}

// i mod n in [0, n) for any sign of i (n > 0).
static int64_t shape_wrap(int64_t i, int64_t n) {
    const int64_t r = i % n;
    return r < 0 ? r + n : r;
}

// ---------------------------------------------------------------------------
// Per-op row writers: dst row (i1, i2, i3) in full.
// ---------------------------------------------------------------------------

static void repeat_row(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3) {
    const struct htp_tensor_view *s = a->src0, *d = a->dst;
    const uint8_t *               x = htp_view_row(s, i1 % s->ne[1], i2 % s->ne[2], i3 % s->ne[3]);
    uint8_t *                     y = htp_view_row(d, i1, i2, i3);
    for (int64_t c = 0; c < d->ne[0]; c += s->ne[0]) {
        shape_copy(y + c * d->nb[0], d->nb[0], x, s->nb[0], s->ne[0], a->es);
    }
}

static void concat_row(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3) {
    const struct htp_tensor_view *s0 = a->src0, *s1 = a->src1, *d = a->dst;
    const int                     dim = a->desc->params[0];
    uint8_t *                     y   = htp_view_row(d, i1, i2, i3);
    const int64_t                 n0 = s0->ne[0] / a->blk, n1 = s1->ne[0] / a->blk, nd = d->ne[0] / a->blk;
    if (dim == 0) {
        shape_copy(y, d->nb[0], htp_view_row(s0, i1, i2, i3), s0->nb[0], n0, a->es);
        shape_copy(y + n0 * d->nb[0], d->nb[0], htp_view_row(s1, i1, i2, i3), s1->nb[0], n1, a->es);
        return;
    }
    int64_t i[4] = {0, i1, i2, i3};
    if (i[dim] < s0->ne[dim]) {
        shape_copy(y, d->nb[0], htp_view_row(s0, i[1], i[2], i[3]), s0->nb[0], nd, a->es);
    } else {
        i[dim] -= s0->ne[dim];
        shape_copy(y, d->nb[0], htp_view_row(s1, i[1], i[2], i[3]), s1->nb[0], nd, a->es);
    }
}

static void pad_row(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3) {
    const struct htp_tensor_view *s = a->src0, *d = a->dst;
    const int32_t *               p        = a->desc->params;
    const int                     circular = p[8] != 0;
    uint8_t *                     y        = htp_view_row(d, i1, i2, i3);
    const int64_t                 di[4]    = {0, i1, i2, i3};
    int64_t                       si[4]    = {0, 0, 0, 0};
    for (int k = 1; k < 4; k++) {
        si[k] = di[k] - p[2 * k];
        if (circular) {
            si[k] = shape_wrap(si[k], s->ne[k]);
        } else if (si[k] < 0 || si[k] >= s->ne[k]) {
            shape_zero(y, d->nb[0], d->ne[0], a->es);
            return;
        }
    }
    const uint8_t * x   = htp_view_row(s, si[1], si[2], si[3]);
    const int64_t   lp0 = p[0], n0 = s->ne[0];
    if (circular) {
        for (int64_t c = 0; c < d->ne[0];) {
            // Runs of consecutive source elements between wrap points.
            const int64_t j = shape_wrap(c - lp0, n0), n = htp_min64(d->ne[0] - c, n0 - j);
            shape_copy(y + c * d->nb[0], d->nb[0], x + j * s->nb[0], s->nb[0], n, a->es);
            c += n;
        }
        return;
    }
    shape_zero(y, d->nb[0], lp0, a->es);
    shape_copy(y + lp0 * d->nb[0], d->nb[0], x, s->nb[0], n0, a->es);
    shape_zero(y + (lp0 + n0) * d->nb[0], d->nb[0], d->ne[0] - lp0 - n0, a->es);
}

static void diag_row(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3) {
    const struct htp_tensor_view *s = a->src0, *d = a->dst;
    uint8_t *                     y = htp_view_row(d, i1, i2, i3);
    shape_zero(y, d->nb[0], d->ne[0], a->es);
    shape_copy(y + i1 * d->nb[0], d->nb[0], htp_view_row(s, 0, i2, i3) + i1 * s->nb[0], s->nb[0], 1, a->es);
}

static void tri_row(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3) {
    const struct htp_tensor_view *s = a->src0, *d = a->dst;
    const int64_t                 n  = d->ne[0];
    int64_t                       k0 = 0, k1 = n;  // kept columns [k0, k1)
    switch (a->desc->params[0]) {
        case HTP_TRI_UPPER_DIAG:
            k0 = i1;
            break;
        case HTP_TRI_UPPER:
            k0 = i1 + 1;
            break;
        case HTP_TRI_LOWER_DIAG:
            k1 = i1 + 1;
            break;
        default:  // HTP_TRI_LOWER (check refused the rest)
            k1 = i1;
            break;
    }
    k0                = htp_min64(k0, n);
    k1                = htp_min64(k1, n);
    uint8_t *       y = htp_view_row(d, i1, i2, i3);
    const uint8_t * x = htp_view_row(s, i1, i2, i3);
    shape_zero(y, d->nb[0], k0, a->es);
    shape_copy(y + k0 * d->nb[0], d->nb[0], x + k0 * s->nb[0], s->nb[0], k1 - k0, a->es);
    shape_zero(y + k1 * d->nb[0], d->nb[0], n - htp_max64(k0, k1), a->es);
}

static void fill_row(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3) {
    const struct htp_tensor_view * d = a->dst;
    float                          buf[HTP_CHUNK];
    const float                    c = htp_param_f32(a->desc, 0);
    const int64_t                  n = htp_min64(HTP_CHUNK, d->ne[0]);
    for (int64_t i = 0; i < n; i++) {
        buf[i] = c;
    }
    uint8_t * y = htp_view_row(d, i1, i2, i3);
    for (int64_t k = 0; k < d->ne[0]; k += HTP_CHUNK) {
        htp_row_store_f32(y + k * d->nb[0], d->nb[0], d->type, buf, htp_min64(HTP_CHUNK, d->ne[0] - k));
    }
}

typedef void (*shape_row_fn)(const struct shape_args * a, int64_t i1, int64_t i2, int64_t i3);

static shape_row_fn shape_row_of(uint32_t opcode) {
    switch (opcode) {
        case HTP_OP_REPEAT:
            return repeat_row;
        case HTP_OP_CONCAT:
            return concat_row;
        case HTP_OP_PAD:
            return pad_row;
        case HTP_OP_DIAG:
            return diag_row;
        case HTP_OP_TRI:
            return tri_row;
        case HTP_OP_FILL:
            return fill_row;
        default:
            return NULL;
    }
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------

struct shape_job_args {
    struct shape_args a;
    shape_row_fn      row;
};

static void shape_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct shape_job_args *  j = arg;
    const struct htp_tensor_view * d = j->a.dst;
    int64_t                        r0, r1;
    htp_split(htp_view_nrows(d), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(d->ne, ir, &i1, &i2, &i3);
        j->row(&j->a, i1, i2, i3);
    }
}

int htp_op_shape_run(struct htp_op_ctx * ctx) {
    struct shape_job_args j = {{ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0], 0, 1, ctx->op.desc},
                               shape_row_of(ctx->op.desc->opcode)};
    if (!j.row) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    j.a.es                            = shape_elem_size(j.a.dst->type);
    const struct htp_type_traits * tt = htp_type_traits(j.a.dst->type);
    if (ctx->op.desc->opcode == HTP_OP_CONCAT && tt && tt->blck_size > 1) {  // whole blocks (the check's)
        j.a.es  = (int64_t)tt->type_size;
        j.a.blk = tt->blck_size;
    }
    if (htp_view_nelements(j.a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, shape_job, &j);
    return HTP_STATUS_OK;
}
