// test-ops: op conformance suite. Every op case is computed on the device
// under test and on ggml-cpu from the same input bytes, and the outputs are
// compared with ggml's normalised error, NMSE = sum (cpu - dev)^2 / sum cpu^2,
// against the op's threshold (the values ggml's test-backend-ops uses).
//
// Each generator says which of its cases the backend must claim: a must-claim
// case that supports_op refuses is a FAILURE (so a broken check cannot hide
// failures as skips). Cases outside what the kernels claim (a weight type or
// copy they do not run, say) are run with a reason: refused, they count as
// skipped under that reason; claimed, they must pass like any other.
//
// One idea to hold: a case is a family (how to build, describe, initialise and
// judge one kind of graph) plus a parameter struct. The graph is built twice
// from the same parameters, once per backend, so both graphs are identical and
// their tensors pair up in creation order; inputs are filled from a per-case
// RNG and written to both. Every tensor is followed by a "sentinel" tensor whose
// bytes must survive the computation, which catches writes past an output.
//
// Adding an op: write a params struct, build/desc (and init or max_err if the
// defaults don't fit), a generator that enumerates the cases, and a line in
// `generators` below.
//
// Usage: test-ops [-b DEVICE] [-o OPNAME[,OPNAME...]] [-s SEED] [-v] [--inject-error]
//   -b  device to test (default HTP0); "-b CPU" checks the harness against a
//       second CPU backend, where every case must pass with zero error
//   -o  only cases whose op (ggml_op_desc of the output) is OPNAME; a
//       comma-separated list selects several
//   --inject-error  perturb the device's result so every case must fail
// Prints each failure with its parameters, then exactly one summary line
// "N passed, M failed, K skipped" (with the skips counted by reason).
// Exit 0 pass, 1 fail, 77 device missing.

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-htp.h"
#include "ggml.h"

// ---------------------------------------------------------------------------
// Random numbers: splitmix64, seeded per case so a filtered run (-o) sees the
// same inputs as a full one.

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng * r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float rng_uniform(struct rng * r, float lo, float hi) {  // [lo, hi)
    return lo + (hi - lo) * (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

static int64_t rng_below(struct rng * r, int64_t n) {  // [0, n)
    return (int64_t)(rng_next(r) % (uint64_t)n);
}

// ---------------------------------------------------------------------------
// Building a case graph. Builders create their inputs with tb_new(), which puts
// a sentinel after each one; the runner adds one after the output too.

enum { SENTINEL_ELEMS = 1024, CTX_TENSORS = 256 };

struct tb {
    struct ggml_context * ctx;
    int                   n_sent;
};

static void tb_sentinel(struct tb * b) {
    struct ggml_tensor * t = ggml_new_tensor_1d(b->ctx, GGML_TYPE_F32, SENTINEL_ELEMS);
    ggml_format_name(t, "sent%d", b->n_sent++);
}

static int is_sentinel(const struct ggml_tensor * t) {
    return strncmp(t->name, "sent", 4) == 0;
}

static struct ggml_tensor * tb_new(struct tb * b, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                   int64_t ne3, const char * name) {
    struct ggml_tensor * t = ggml_new_tensor_4d(b->ctx, type, ne0, ne1, ne2, ne3);
    ggml_set_name(t, name);
    tb_sentinel(b);
    return t;
}

// A view of the first ne0..ne3 elements of t, keeping t's strides.
static struct ggml_tensor * tb_view(struct tb * b, struct ggml_tensor * t, int64_t ne0, int64_t ne1, int64_t ne2,
                                    int64_t ne3, size_t offset) {
    return ggml_view_4d(b->ctx, t, ne0, ne1, ne2, ne3, t->nb[1], t->nb[2], t->nb[3], offset);
}

// ---------------------------------------------------------------------------
// Op families.

struct op_family {
    struct ggml_tensor * (*build)(struct tb * b, const void * p);
    void (*desc)(const void * p, char * s, size_t n);
    // Optional: fill v (ggml_nelements(t) values, converted to t's type by the
    // caller) for a tensor that needs special values; return 1 if it did.
    int (*init)(const void * p, const struct ggml_tensor * t, struct rng * r, float * v);
    // Optional: the NMSE threshold; NULL means test-backend-ops' default 1e-7.
    double (*max_err)(const void * p);
    float lo, hi;  // default uniform range of the inputs
};

static const char * tname(enum ggml_type t) {
    return ggml_type_name(t);
}

// snprintf that appends to s and never overflows.
static void cat(char * s, size_t n, const char * fmt, ...) {
    size_t len = strlen(s);
    if (len + 1 >= n) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s + len, n - len, fmt, ap);
    va_end(ap);
}

static void cat_ne(char * s, size_t n, const char * key, const int64_t * ne, int count) {
    cat(s, n, "%s=[", key);
    for (int i = 0; i < count; i++) {
        cat(s, n, i ? ",%" PRId64 : "%" PRId64, ne[i]);
    }
    cat(s, n, "]");
}

static void cat_ni(char * s, size_t n, const char * key, const int * v, int count) {
    cat(s, n, "%s=[", key);
    for (int i = 0; i < count; i++) {
        cat(s, n, i ? ",%d" : "%d", v[i]);
    }
    cat(s, n, "]");
}

// ---- MUL_MAT: C^T = A B^T, a [k, m, bs0, bs1], b [k, n, bs0*nr0, bs1*nr1] --

struct p_mul_mat {
    enum ggml_type ta;
    int64_t        m, n, k;
    int64_t        bs[2];   // batch of a in dims 2, 3
    int64_t        nr[2];   // b repeats a's batch nr times (broadcast)
    int            per[4];  // both operands created permuted, then permuted back
    int64_t        k_v;     // rows k_v long in memory (non-contiguous view), 0 = none
};

static struct ggml_tensor * build_mul_mat(struct tb * b, const void * pv) {
    const struct p_mul_mat * p = pv;
    struct ggml_tensor *     a, *x;
    int                      permuted = p->per[0] != 0 || p->per[1] != 1 || p->per[2] != 2 || p->per[3] != 3;
    if (permuted) {
        const int64_t nea[4] = {p->k, p->m, p->bs[0], p->bs[1]};
        const int64_t neb[4] = {p->k, p->n, p->bs[0] * p->nr[0], p->bs[1] * p->nr[1]};
        const int *   q      = p->per;
        a                    = tb_new(b, p->ta, nea[q[0]], nea[q[1]], nea[q[2]], nea[q[3]], "a");
        x                    = tb_new(b, GGML_TYPE_F32, neb[q[0]], neb[q[1]], neb[q[2]], neb[q[3]], "b");
        a                    = ggml_permute(b->ctx, a, q[0], q[1], q[2], q[3]);
        x                    = ggml_permute(b->ctx, x, q[0], q[1], q[2], q[3]);
    } else {
        int64_t kp = p->k_v ? p->k_v : p->k;
        a          = tb_new(b, p->ta, kp, p->m, p->bs[0], p->bs[1], "a");
        x          = tb_new(b, GGML_TYPE_F32, kp, p->n, p->bs[0] * p->nr[0], p->bs[1] * p->nr[1], "b");
        if (p->k_v) {
            a = tb_view(b, a, p->k, p->m, p->bs[0], p->bs[1], 0);
            x = tb_view(b, x, p->k, p->n, p->bs[0] * p->nr[0], p->bs[1] * p->nr[1], 0);
        }
    }
    return ggml_mul_mat(b->ctx, a, x);
}

static void desc_mul_mat(const void * pv, char * s, size_t n) {
    const struct p_mul_mat * p = pv;
    cat(s, n, "type_a=%s,type_b=f32,m=%" PRId64 ",n=%" PRId64 ",k=%" PRId64 ",", tname(p->ta), p->m, p->n, p->k);
    cat_ne(s, n, "bs", p->bs, 2);
    cat_ne(s, n, ",nr", p->nr, 2);
    cat_ni(s, n, ",per", p->per, 4);
    cat(s, n, ",k_v=%" PRId64, p->k_v);
}

static double max_err_mul_mat(const void * p) {
    (void)p;
    return 5e-4;
}

static const struct op_family fam_mul_mat = {
    build_mul_mat, desc_mul_mat, NULL, max_err_mul_mat, -1.0f, 1.0f,
};

// ---- ADD, SUB, MUL, DIV with src1 broadcast --------------------------------

struct p_bin {
    enum ggml_op   op;
    enum ggml_type type;
    int64_t        ne[4];    // src1 shape
    int            nr[4];    // src0 = src1 repeated nr times per dim
    int            perm1;    // src1 created permuted (1,2,0,3), non-contiguous
    int            overlap;  // src0 and src1 overlapping views of one tensor
    int            v0;       // src0 a view with padded rows
};

static struct ggml_tensor * build_bin(struct tb * b, const void * pv) {
    const struct p_bin * p     = pv;
    const int64_t *      ne    = p->ne;
    int64_t              na[4] = {ne[0] * p->nr[0], ne[1] * p->nr[1], ne[2] * p->nr[2], ne[3] * p->nr[3]};
    struct ggml_tensor * a, *x;
    if (p->v0) {
        a = tb_new(b, p->type, na[0] + 3, na[1], na[2], na[3], "a");
        a = tb_view(b, a, na[0], na[1], na[2], na[3], 0);
    } else {
        a = tb_new(b, p->type, na[0], na[1], na[2], na[3], "a");
    }
    if (p->perm1) {
        x = tb_new(b, p->type, ne[1], ne[2], ne[0], ne[3], "b");
        x = ggml_permute(b->ctx, x, 1, 2, 0, 3);
    } else if (p->overlap) {
        // b = last two thirds of a along dim 3, a' = first two thirds
        int64_t n3 = 2 * (ne[3] / 3);
        x          = tb_view(b, a, ne[0], ne[1], ne[2], n3, (size_t)(ne[3] / 3) * a->nb[3]);
        a          = tb_view(b, a, ne[0], ne[1], ne[2], n3, 0);
    } else {
        x = tb_new(b, p->type, ne[0], ne[1], ne[2], ne[3], "b");
    }
    switch (p->op) {
        case GGML_OP_ADD:
            return ggml_add(b->ctx, a, x);
        case GGML_OP_SUB:
            return ggml_sub(b->ctx, a, x);
        case GGML_OP_MUL:
            return ggml_mul(b->ctx, a, x);
        default:
            return ggml_div(b->ctx, a, x);
    }
}

static void desc_bin(const void * pv, char * s, size_t n) {
    const struct p_bin * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne", p->ne, 4);
    cat_ni(s, n, ",nr", p->nr, 4);
    cat(s, n, ",perm1=%d,src_overlap=%d,v0=%d", p->perm1, p->overlap, p->v0);
}

// MUL and DIV are ill-conditioned near zero: keep their inputs near 1, as ggml does.
static int init_bin(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_bin * p = pv;
    if (is_sentinel(t) || (p->op != GGML_OP_MUL && p->op != GGML_OP_DIV)) {
        return 0;
    }
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        v[i] = rng_uniform(r, 0.9f, 1.1f);
    }
    return 1;
}

static const struct op_family fam_bin = {build_bin, desc_bin, init_bin, NULL, -1.0f, 1.0f};

// ---- SCALE: a * s + bias -----------------------------------------------------

struct p_scale {
    int64_t ne[4];
    float   s, bias;
};

static struct ggml_tensor * build_scale(struct tb * b, const void * pv) {
    const struct p_scale * p = pv;
    struct ggml_tensor *   a = tb_new(b, GGML_TYPE_F32, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "a");
    return ggml_scale_bias(b->ctx, a, p->s, p->bias);
}

static void desc_scale(const void * pv, char * s, size_t n) {
    const struct p_scale * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",scale=%g,bias=%g", p->s, p->bias);
}

static const struct op_family fam_scale = {build_scale, desc_scale, NULL, NULL, -1.0f, 1.0f};

// ---- CPY: src (maybe permuted / transposed) into dst (maybe permuted, strided
// or of another shape with the same element count) ---------------------------

struct p_cpy {
    enum ggml_type ts, td;
    int64_t        ne[4];       // src shape as created
    int64_t        ne_dst[4];   // dst shape, ne_dst[0] == 0: same as (permuted) src
    int            per_src[4];  // all 0: none
    int            per_dst[4];
    int            transpose;  // src transposed after the permute
    int64_t        alloc[4];   // dst a view into a tensor this big, alloc[0] == 0: none
};

static int has_perm(const int * per) {
    return per[0] + per[1] + per[2] + per[3] > 0;
}

static struct ggml_tensor * build_cpy(struct tb * b, const void * pv) {
    const struct p_cpy * p   = pv;
    struct ggml_tensor * src = tb_new(b, p->ts, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "src");
    if (has_perm(p->per_src)) {
        src = ggml_permute(b->ctx, src, p->per_src[0], p->per_src[1], p->per_src[2], p->per_src[3]);
    }
    if (p->transpose) {
        src = ggml_transpose(b->ctx, src);
    }
    int64_t nd[4];
    for (int i = 0; i < 4; i++) {
        nd[i] = p->ne_dst[0] ? p->ne_dst[i] : src->ne[i];
    }
    struct ggml_tensor * dst;
    if (p->alloc[0]) {
        dst = tb_new(b, p->td, p->alloc[0], p->alloc[1], p->alloc[2], p->alloc[3], "dst");
        dst = tb_view(b, dst, nd[0], nd[1], nd[2], nd[3], 0);
    } else if (has_perm(p->per_dst)) {
        // created so that after the permute it has the shape nd
        int64_t c[4];
        for (int i = 0; i < 4; i++) {
            c[i] = nd[p->per_dst[i]];
        }
        dst = tb_new(b, p->td, c[0], c[1], c[2], c[3], "dst");
        dst = ggml_permute(b->ctx, dst, p->per_dst[0], p->per_dst[1], p->per_dst[2], p->per_dst[3]);
    } else {
        dst = tb_new(b, p->td, nd[0], nd[1], nd[2], nd[3], "dst");
    }
    return ggml_cpy(b->ctx, src, dst);
}

static void desc_cpy(const void * pv, char * s, size_t n) {
    const struct p_cpy * p = pv;
    cat(s, n, "type_src=%s,type_dst=%s,", tname(p->ts), tname(p->td));
    cat_ne(s, n, "ne_src", p->ne, 4);
    if (p->ne_dst[0]) {
        cat_ne(s, n, ",ne_dst", p->ne_dst, 4);
    }
    cat_ni(s, n, ",permute_src", p->per_src, 4);
    cat_ni(s, n, ",permute_dst", p->per_dst, 4);
    cat(s, n, ",transpose=%d", p->transpose);
    if (p->alloc[0]) {
        cat_ne(s, n, ",dst_alloc", p->alloc, 4);
    }
}

// Same type: a copy, exact. Across F32/F16: one rounding, 1e-6 as in ggml.
// Into the KV-cache quant types, test-backend-ops' bound: about one quant
// off by one in the whole tensor (values in [-150, 150]).
static double max_err_cpy(const void * pv) {
    const struct p_cpy * p = pv;
    if (p->ts == p->td) {
        return 0.0;
    }
    const enum ggml_type td = p->td;
    if (td == GGML_TYPE_Q4_0 || td == GGML_TYPE_Q4_1 || td == GGML_TYPE_IQ4_NL || td == GGML_TYPE_Q5_0 ||
        td == GGML_TYPE_Q5_1 || td == GGML_TYPE_Q8_0) {
        double e = 150.0 / 8.0;
        e *= td == GGML_TYPE_IQ4_NL                         ? 2.0
             : td == GGML_TYPE_Q5_0 || td == GGML_TYPE_Q5_1 ? 0.5
             : td == GGML_TYPE_Q8_0                         ? 0.125
                                                            : 1.0;
        return e * e / (150.0 * 150.0 * 0.25 * (double)(p->ne[0] * p->ne[1] * p->ne[2] * p->ne[3]));
    }
    return 1e-6;
}

static const struct op_family fam_cpy = {build_cpy, desc_cpy, NULL, max_err_cpy, -150.0f, 150.0f};

// ---- CONT and DUP of non-contiguous views --------------------------------------

struct p_cont {
    enum ggml_op   op;  // GGML_OP_CONT or GGML_OP_DUP
    enum ggml_type type;
    int64_t        ne[4];
    int            view;  // 0: transpose, 1: slice (row ne1-1 of each matrix), 2: permute by per
    int            per[4];
};

static struct ggml_tensor * build_cont(struct tb * b, const void * pv) {
    const struct p_cont * p   = pv;
    struct ggml_tensor *  src = tb_new(b, p->type, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "src");
    if (p->view == 0) {
        src = ggml_transpose(b->ctx, src);
    } else if (p->view == 1) {
        src = ggml_view_4d(b->ctx, src, src->ne[0], 1, src->ne[2], src->ne[3], src->nb[1], src->nb[2], src->nb[3],
                           src->nb[1] * (size_t)(src->ne[1] - 1));
    } else if (has_perm(p->per)) {
        src = ggml_permute(b->ctx, src, p->per[0], p->per[1], p->per[2], p->per[3]);
    }
    return p->op == GGML_OP_DUP ? ggml_dup(b->ctx, src) : ggml_cont(b->ctx, src);
}

static void desc_cont(const void * pv, char * s, size_t n) {
    const struct p_cont * p       = pv;
    static const char *   views[] = {"transpose", "slice", "permute"};
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",view=%s", views[p->view]);
    if (p->view == 2) {
        cat_ni(s, n, ",permute", p->per, 4);
    }
}

static const struct op_family fam_cont = {build_cont, desc_cont, NULL, NULL, -1.0f, 1.0f};

// ---- GET_ROWS: out[:, i, b1, b2] = src[:, rows[i, b1, b2], b1, b2] ---------------

struct p_get_rows {
    enum ggml_type type;
    int64_t        n, m, r;   // row length, rows in src, rows taken
    int64_t        be1, be2;  // batch
    int            v;         // rows index is a view of the first r/2 of each batch
};

static struct ggml_tensor * build_get_rows(struct tb * b, const void * pv) {
    const struct p_get_rows * p    = pv;
    struct ggml_tensor *      src  = tb_new(b, p->type, p->n, p->m, p->be1, p->be2, "src");
    struct ggml_tensor *      rows = tb_new(b, GGML_TYPE_I32, p->r, p->be1, p->be2, 1, "rows");
    if (p->v) {
        rows = ggml_view_3d(b->ctx, rows, p->r / 2, p->be1, p->be2, rows->nb[1], rows->nb[2], 0);
    }
    return ggml_get_rows(b->ctx, src, rows);
}

static void desc_get_rows(const void * pv, char * s, size_t n) {
    const struct p_get_rows * p = pv;
    cat(s, n, "type=%s,n=%" PRId64 ",m=%" PRId64 ",r=%" PRId64 ",be1=%" PRId64 ",be2=%" PRId64 ",v=%d", tname(p->type),
        p->n, p->m, p->r, p->be1, p->be2, p->v);
}

static int init_get_rows(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_get_rows * p = pv;
    if (strcmp(t->name, "rows") != 0) {
        return 0;
    }
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        v[i] = (float)rng_below(r, p->m);
    }
    return 1;
}

static const struct op_family fam_get_rows = {build_get_rows, desc_get_rows, init_get_rows, NULL, -1.0f, 1.0f};

// ---- SET_ROWS: dst[:, idx[i, b2 % ne2, b3 % ne3], b2, b3] = src[:, i, b2, b3] -----

struct p_set_rows {
    enum ggml_type td, ti;   // dst type, index type (I64 or I32)
    int64_t        ne[4];    // dst is [ne0, ne1, ne2*nr23[0], ne3*nr23[1]]
    int            nr23[2];  // src/dst batch repeats the index batch
    int64_t        r;        // rows written per batch
    int            v;        // src and index are views of their first r/2 rows
};

static struct ggml_tensor * build_set_rows(struct tb * b, const void * pv) {
    const struct p_set_rows * p  = pv;
    const int64_t *           ne = p->ne;
    int64_t                   n2 = ne[2] * p->nr23[0], n3 = ne[3] * p->nr23[1];
    struct ggml_tensor *      dst = tb_new(b, p->td, ne[0], ne[1], n2, n3, "dst");
    struct ggml_tensor *      src = tb_new(b, GGML_TYPE_F32, ne[0], p->r, n2, n3, "src");
    struct ggml_tensor *      idx = tb_new(b, p->ti, p->r, ne[2], ne[3], 1, "idx");
    if (p->v) {
        src = tb_view(b, src, ne[0], p->r / 2, n2, n3, 0);
        idx = ggml_view_3d(b->ctx, idx, p->r / 2, ne[2], ne[3], idx->nb[1], idx->nb[2], 0);
    }
    return ggml_set_rows(b->ctx, dst, src, idx);
}

static void desc_set_rows(const void * pv, char * s, size_t n) {
    const struct p_set_rows * p = pv;
    cat(s, n, "type=%s,type_idx=%s,", tname(p->td), tname(p->ti));
    cat_ne(s, n, "ne", p->ne, 4);
    cat_ni(s, n, ",nr23", p->nr23, 2);
    cat(s, n, ",r=%" PRId64 ",v=%d", p->r, p->v);
}

// Each index row: distinct rows of dst (a shuffled prefix of 0..ne1-1), so the
// result does not depend on the order rows are written in.
static int init_set_rows(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_set_rows * p = pv;
    if (strcmp(t->name, "idx") != 0) {
        return 0;
    }
    int64_t   nrows = p->ne[1];
    int64_t * perm  = malloc(sizeof(int64_t) * (size_t)nrows);
    if (!perm) {
        return 0;
    }
    for (int64_t row = 0; row < ggml_nrows(t); row++) {
        for (int64_t i = 0; i < nrows; i++) {
            perm[i] = i;
        }
        for (int64_t i = nrows - 1; i > 0; i--) {
            int64_t j = rng_below(r, i + 1), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        for (int64_t i = 0; i < t->ne[0]; i++) {
            v[row * t->ne[0] + i] = (float)perm[i];
        }
    }
    free(perm);
    return 1;
}

static const struct op_family fam_set_rows = {build_set_rows, desc_set_rows, init_set_rows, NULL, -1.0f, 1.0f};

// ---- RMS_NORM over rows ------------------------------------------------------------

struct p_rms_norm {
    int64_t ne[4];
    int     v;  // input is a view of the first half of every dim
    float   eps;
};

static struct ggml_tensor * build_rms_norm(struct tb * b, const void * pv) {
    const struct p_rms_norm * p = pv;
    struct ggml_tensor *      a = tb_new(b, GGML_TYPE_F32, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "a");
    if (p->v) {
        a = tb_view(b, a, a->ne[0] / 2, a->ne[1] / 2, a->ne[2] / 2, a->ne[3] / 2, 0);
    }
    return ggml_rms_norm(b->ctx, a, p->eps);
}

static void desc_rms_norm(const void * pv, char * s, size_t n) {
    const struct p_rms_norm * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",v=%d,eps=%g", p->v, p->eps);
}

static const struct op_family fam_rms_norm = {build_rms_norm, desc_rms_norm, NULL, NULL, -10.0f, 10.0f};

// ---- SOFT_MAX: softmax(a * scale + slope * mask) over rows, optional sinks ----------

struct p_soft_max {
    int64_t        ne[4];   // mask shape; a is [ne0, ne1, ne2*nr23[0], ne3*nr23[1]]
    int            mask;    // 0 none, 1 uniform, 2 uniform with -inf holes
    enum ggml_type m_prec;  // mask type
    int            nr23[2];
    float          scale, max_bias;  // max_bias > 0: ALiBi slopes per head
    int            sinks;
};

static struct ggml_tensor * build_soft_max(struct tb * b, const void * pv) {
    const struct p_soft_max * p  = pv;
    const int64_t *           ne = p->ne;
    struct ggml_tensor *      a  = tb_new(b, GGML_TYPE_F32, ne[0], ne[1], ne[2] * p->nr23[0], ne[3] * p->nr23[1], "a");
    struct ggml_tensor *      mask  = NULL;
    struct ggml_tensor *      sinks = NULL;
    if (p->mask) {
        mask = tb_new(b, p->m_prec, ne[0], ne[1], ne[2], ne[3], "mask");
    }
    if (p->sinks) {
        sinks = tb_new(b, GGML_TYPE_F32, ne[2] * p->nr23[0], 1, 1, 1, "sinks");
    }
    struct ggml_tensor * out = ggml_soft_max_ext(b->ctx, a, mask, p->scale, p->max_bias);
    ggml_soft_max_add_sinks(out, sinks);
    return out;
}

static void desc_soft_max(const void * pv, char * s, size_t n) {
    const struct p_soft_max * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",mask=%d,m_prec=%s,sinks=%d,", p->mask, tname(p->m_prec), p->sinks);
    cat_ni(s, n, "nr23", p->nr23, 2);
    cat(s, n, ",scale=%g,max_bias=%g", p->scale, p->max_bias);
}

// mask == 2: about a quarter of each row is -inf (a causal/padding mask), but
// never a whole row, whose softmax would be undefined.
static int init_soft_max(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_soft_max * p = pv;
    if (p->mask != 2 || strcmp(t->name, "mask") != 0) {
        return 0;
    }
    int64_t ne0 = t->ne[0];
    for (int64_t row = 0; row < ggml_nrows(t); row++) {
        int64_t keep = rng_below(r, ne0);
        for (int64_t i = 0; i < ne0; i++) {
            int hole         = i != keep && rng_below(r, 4) == 0;
            v[row * ne0 + i] = hole ? -INFINITY : rng_uniform(r, -1.0f, 1.0f);
        }
    }
    return 1;
}

// ggml: "the 1024 test with bias occasionally fails" at 1e-7.
static double max_err_soft_max(const void * p) {
    (void)p;
    return 1e-6;
}

static const struct op_family fam_soft_max = {
    build_soft_max, desc_soft_max, init_soft_max, max_err_soft_max, -1.0f, 1.0f,
};

// ---- ROPE (normal and neox), with YaRN parameters and frequency factors --------------

struct p_rope {
    int64_t ne[4];                // [head dim, heads, tokens, 1]
    int     n_dims, mode, n_ctx;  // n_ctx: positions are in [0, n_ctx)
    int     n_ctx_orig;
    float   fs, ef, af;  // freq_scale, ext_factor, attn_factor
    float   beta_fast, beta_slow;
    int     ff;  // frequency factors
    int     v;   // 1: view of a bigger tensor, 2: second half of dim 0
};

static struct ggml_tensor * build_rope(struct tb * b, const void * pv) {
    const struct p_rope * p  = pv;
    const int64_t *       ne = p->ne;
    struct ggml_tensor *  a;
    if (p->v == 1) {
        a = tb_new(b, GGML_TYPE_F32, ne[0] * 2, ne[1] * 4, ne[2] * 3, ne[3], "a");
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
    } else if (p->v == 2) {
        a = tb_new(b, GGML_TYPE_F32, ne[0] * 2, ne[1], ne[2], ne[3], "a");
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], (size_t)ne[0] * sizeof(float));
    } else {
        a = tb_new(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], "a");
    }
    struct ggml_tensor * pos  = tb_new(b, GGML_TYPE_I32, ne[2], 1, 1, 1, "pos");
    struct ggml_tensor * freq = NULL;
    if (p->ff) {
        freq = tb_new(b, GGML_TYPE_F32, p->n_dims / 2, 1, 1, 1, "freq");
    }
    return ggml_rope_ext(b->ctx, a, pos, freq, p->n_dims, p->mode, p->n_ctx_orig, 10000.0f, p->fs, p->ef, p->af,
                         p->beta_fast, p->beta_slow);
}

static void desc_rope(const void * pv, char * s, size_t n) {
    const struct p_rope * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",n_dims=%d,mode=%d,n_ctx=%d,n_ctx_orig=%d,fs=%g,ef=%g,af=%g,beta=%g/%g,ff=%d,v=%d", p->n_dims, p->mode,
        p->n_ctx, p->n_ctx_orig, p->fs, p->ef, p->af, p->beta_fast, p->beta_slow, p->ff, p->v);
}

static int init_rope(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_rope * p = pv;
    if (strcmp(t->name, "pos") == 0) {
        for (int64_t i = 0; i < ggml_nelements(t); i++) {
            v[i] = (float)rng_below(r, p->n_ctx);
        }
        return 1;
    }
    if (strcmp(t->name, "freq") == 0) {
        for (int64_t i = 0; i < ggml_nelements(t); i++) {
            v[i] = rng_uniform(r, 0.9f, 1.1f);
        }
        return 1;
    }
    return 0;
}

static const struct op_family fam_rope = {build_rope, desc_rope, init_rope, NULL, -1.0f, 1.0f};

// ---- UNARY SILU ----------------------------------------------------------------------

struct p_unary {
    enum ggml_unary_op op;
    enum ggml_type     type;
    int64_t            ne[4];
    int                v;  // view of a tensor bigger in every dim
};

static struct ggml_tensor * build_unary(struct tb * b, const void * pv) {
    const struct p_unary * p  = pv;
    const int64_t *        ne = p->ne;
    struct ggml_tensor *   a;
    if (p->v) {
        a = tb_new(b, p->type, ne[0] * 3, ne[1] * 2, ne[2] * 5, ne[3] * 4, "a");
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
    } else {
        a = tb_new(b, p->type, ne[0], ne[1], ne[2], ne[3], "a");
    }
    return ggml_unary(b->ctx, a, p->op);
}

static void desc_unary(const void * pv, char * s, size_t n) {
    const struct p_unary * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",v=%d", p->v);
}

static const struct op_family fam_unary = {build_unary, desc_unary, NULL, NULL, -150.0f, 150.0f};

// ---- GLU SWIGLU: fused (gate in one half of each row) or split --------------------------

struct p_glu {
    enum ggml_glu_op op;
    enum ggml_type   type;
    int64_t          ne[4];  // input shape (fused: both halves)
    int              v;      // inputs are views with rows 3x longer in memory
    int              swapped;
    int              split;  // a and gate in separate tensors
};

static struct ggml_tensor * build_glu(struct tb * b, const void * pv) {
    const struct p_glu * p  = pv;
    const int64_t *      ne = p->ne;
    int64_t              n0 = p->v ? ne[0] * 3 : ne[0];
    struct ggml_tensor * a  = tb_new(b, p->type, n0, ne[1], ne[2], ne[3], "a");
    struct ggml_tensor * g  = NULL;
    if (p->split) {
        g = tb_new(b, p->type, n0, ne[1], ne[2], ne[3], "g");
    }
    if (p->v) {
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
        g = g ? tb_view(b, g, ne[0], ne[1], ne[2], ne[3], 0) : NULL;
    }
    if (p->split) {
        return ggml_glu_split(b->ctx, a, g, p->op);
    }
    return ggml_glu(b->ctx, a, p->op, p->swapped);
}

static void desc_glu(const void * pv, char * s, size_t n) {
    const struct p_glu * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne_a", p->ne, 4);
    cat(s, n, ",v=%d,%s", p->v, p->split ? "split" : p->swapped ? "swapped" : "fused");
}

static const struct op_family fam_glu = {build_glu, desc_glu, NULL, NULL, -150.0f, 150.0f};

// ---- FLASH_ATTN_EXT: q [hsk, nb, nh*nr2, nr3], k [hsk, kv, nh, nr3], v [hsv, kv, nh, nr3] --

struct p_fa {
    int64_t        hsk, hsv;      // head sizes of K (and Q) and V
    int64_t        nh, nr2, nr3;  // KV heads, query heads per KV head (GQA), dim 3
    int64_t        kv, nb;        // KV length, query tokens
    int            mask;          // 0 none, 1 shared by all heads, 2 one per query head
    int            sinks;
    float          max_bias, softcap;
    enum ggml_type tkv;
    int            permute;  // q, k, v laid out [d, heads, tokens] and permuted, as llama.cpp's caches
    int            tv_own;   // v has its own type tv (a llama.cpp type_v != type_k); else tkv
    enum ggml_type tv;
};

static enum ggml_type fa_tv(const struct p_fa * p) {
    return p->tv_own ? p->tv : p->tkv;
}

static struct ggml_tensor * build_fa(struct tb * b, const void * pv) {
    const struct p_fa * p   = pv;
    const int64_t       nhq = p->nh * p->nr2;
    struct ggml_tensor *q, *k, *v, *m = NULL, *s = NULL;
    if (p->permute) {
        q = ggml_permute(b->ctx, tb_new(b, GGML_TYPE_F32, p->hsk, nhq, p->nb, p->nr3, "q"), 0, 2, 1, 3);
        k = ggml_permute(b->ctx, tb_new(b, p->tkv, p->hsk, p->nh, p->kv, p->nr3, "k"), 0, 2, 1, 3);
        v = ggml_permute(b->ctx, tb_new(b, fa_tv(p), p->hsv, p->nh, p->kv, p->nr3, "v"), 0, 2, 1, 3);
    } else {
        q = tb_new(b, GGML_TYPE_F32, p->hsk, p->nb, nhq, p->nr3, "q");
        k = tb_new(b, p->tkv, p->hsk, p->kv, p->nh, p->nr3, "k");
        v = tb_new(b, fa_tv(p), p->hsv, p->kv, p->nh, p->nr3, "v");
    }
    if (p->mask) {
        m = tb_new(b, GGML_TYPE_F16, p->kv, p->nb, p->mask == 2 ? nhq : 1, p->nr3, "m");
    }
    if (p->sinks) {
        s = tb_new(b, GGML_TYPE_F32, nhq, 1, 1, 1, "sinks");
    }
    struct ggml_tensor * out =
        ggml_flash_attn_ext(b->ctx, q, k, v, m, 1.0f / sqrtf((float)p->hsk), p->max_bias, p->softcap);
    ggml_flash_attn_ext_add_sinks(out, s);
    ggml_flash_attn_ext_set_prec(out, GGML_PREC_F32);
    return out;
}

static void desc_fa(const void * pv, char * s, size_t n) {
    const struct p_fa * p = pv;
    cat(s, n,
        "hsk=%" PRId64 ",hsv=%" PRId64 ",nh=%" PRId64 ",nr23=[%" PRId64 ",%" PRId64 "],kv=%" PRId64 ",nb=%" PRId64
        ",mask=%d,sinks=%d,max_bias=%g,softcap=%g,type_KV=%s,permute=%d",
        p->hsk, p->hsv, p->nh, p->nr2, p->nr3, p->kv, p->nb, p->mask, p->sinks, p->max_bias, p->softcap, tname(p->tkv),
        p->permute);
    if (p->tv_own) {
        cat(s, n, ",type_V=%s", tname(p->tv));
    }
}

// Mask: causal (token i sees the first kv - nb + i + 1 entries), random values
// where visible, a few random -inf holes, and every fourth row of a
// multi-token case fully masked over its first 64+ entries, so that whole KV
// blocks are skipped for some rows and not others.
static int init_fa(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    (void)pv;
    if (strcmp(t->name, "sinks") == 0) {
        for (int64_t i = 0; i < ggml_nelements(t); i++) {
            v[i] = rng_uniform(r, -4.0f, 4.0f);
        }
        return 1;
    }
    if (strcmp(t->name, "m") != 0) {
        return 0;
    }
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1];
    for (int64_t row = 0; row < ggml_nrows(t); row++) {
        const int64_t i1  = row % ne1;
        int64_t       lim = ne0 - ne1 + i1 + 1;
        lim               = lim < 1 ? 1 : lim;
        for (int64_t i = 0; i < ne0; i++) {
            int hole         = i >= lim || rng_below(r, 8) == 0 || (ne1 > 1 && i1 % 4 == 1 && i < 70);
            v[row * ne0 + i] = hole ? -INFINITY : rng_uniform(r, -1.0f, 1.0f);
        }
        if (i1 % 4 != 1) {
            v[row * ne0 + lim - 1] = 0.0f;  // at least one visible entry
        }
    }
    return 1;
}

static double max_err_fa(const void * p) {
    (void)p;
    return 5e-4;
}

static const struct op_family fam_fa = {build_fa, desc_fa, init_fa, max_err_fa, -1.0f, 1.0f};

// ---- ROPE multi-section (mrope, imrope) and vision, through ggml_rope_multi ----------
// p_rope's n_dims is test-backend-ops' (vision passes n_dims / 2 to ggml); sections
// as test-backend-ops: thirds of n_dims (t, h, w), or quarters for vision (x, y).

static struct ggml_tensor * build_rope_multi(struct tb * b, const void * pv) {
    const struct p_rope * p  = pv;
    const int64_t *       ne = p->ne;
    struct ggml_tensor *  a;
    if (p->v == 1) {
        a = tb_new(b, GGML_TYPE_F32, ne[0] * 2, ne[1] * 4, ne[2] * 3, ne[3], "a");
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
    } else {
        a = tb_new(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], "a");
    }
    struct ggml_tensor * pos  = tb_new(b, GGML_TYPE_I32, ne[2] * 4, 1, 1, 1, "pos");
    struct ggml_tensor * freq = NULL;
    if (p->ff) {
        freq = tb_new(b, GGML_TYPE_F32, p->n_dims / 2, 1, 1, 1, "freq");
    }
    const int vision = p->mode == GGML_ROPE_TYPE_VISION;
    int       sec[4] = {p->n_dims / 3, p->n_dims / 3, p->n_dims / 3, 0};
    if (vision) {
        sec[0] = sec[1] = p->n_dims / 4;
        sec[2]          = 0;
    }
    return ggml_rope_multi(b->ctx, a, pos, freq, vision ? p->n_dims / 2 : p->n_dims, sec, p->mode, 0, 10000.0f, p->fs,
                           p->ef, p->af, 1.0f, 1.0f);
}

static const struct op_family fam_rope_multi = {build_rope_multi, desc_rope, init_rope, NULL, -1.0f, 1.0f};

// ---- UNARY GELU, GELU_QUICK, SIGMOID, NEG, EXP, SOFTPLUS, TANH (p_unary, build_unary) ---------------

// As test-backend-ops: [-150, 150], but F16 EXP in [-10, 10] so it stays finite.
// F32 EXP views too: over [-150, 150] the NMSE is ruled by the few largest
// values, in [-10, 10] every element counts.
static int init_unary_more(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_unary * p = pv;
    if (is_sentinel(t) || p->op != GGML_UNARY_OP_EXP || (p->type != GGML_TYPE_F16 && !p->v)) {
        return 0;
    }
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        v[i] = rng_uniform(r, -10.0f, 10.0f);
    }
    return 1;
}

static const struct op_family fam_unary_more = {build_unary, desc_unary, init_unary_more, NULL, -150.0f, 150.0f};

// ---- SQR, SQRT, CLAMP (elementwise, one input) -------------------------------------------

struct p_ew1 {
    enum ggml_op   op;  // GGML_OP_SQR, GGML_OP_SQRT or GGML_OP_CLAMP
    enum ggml_type type;
    int64_t        ne[4];
    int            v;  // view of a tensor bigger in every dim
    float          min, max;
};

static struct ggml_tensor * build_ew1(struct tb * b, const void * pv) {
    const struct p_ew1 * p  = pv;
    const int64_t *      ne = p->ne;
    struct ggml_tensor * a;
    if (p->v) {
        a = tb_new(b, p->type, ne[0] * 2, ne[1] * 3, ne[2] + 1, ne[3], "a");
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
    } else {
        a = tb_new(b, p->type, ne[0], ne[1], ne[2], ne[3], "a");
    }
    switch (p->op) {
        case GGML_OP_SQR:
            return ggml_sqr(b->ctx, a);
        case GGML_OP_SQRT:
            return ggml_sqrt(b->ctx, a);
        default:
            return ggml_clamp(b->ctx, a, p->min, p->max);
    }
}

static void desc_ew1(const void * pv, char * s, size_t n) {
    const struct p_ew1 * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",v=%d", p->v);
    if (p->op == GGML_OP_CLAMP) {
        cat(s, n, ",min=%g,max=%g", p->min, p->max);
    }
}

// SQRT of non-negative inputs (including 0).
static int init_ew1(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_ew1 * p = pv;
    if (is_sentinel(t) || p->op != GGML_OP_SQRT) {
        return 0;
    }
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        v[i] = i % 17 == 0 ? 0.0f : rng_uniform(r, 0.0f, 100.0f);
    }
    return 1;
}

static const struct op_family fam_ew1 = {build_ew1, desc_ew1, init_ew1, NULL, -1.0f, 1.0f};

// ---- GLU SWIGLU_OAI (split form, alpha and limit) ------------------------------------------

struct p_oai {
    int64_t ne[4];
    int     v;  // inputs are views with rows 3x longer in memory
    float   alpha, limit;
};

static struct ggml_tensor * build_oai(struct tb * b, const void * pv) {
    const struct p_oai * p  = pv;
    const int64_t *      ne = p->ne;
    int64_t              n0 = p->v ? ne[0] * 3 : ne[0];
    struct ggml_tensor * a  = tb_new(b, GGML_TYPE_F32, n0, ne[1], ne[2], ne[3], "a");
    struct ggml_tensor * g  = tb_new(b, GGML_TYPE_F32, n0, ne[1], ne[2], ne[3], "g");
    if (p->v) {
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
        g = tb_view(b, g, ne[0], ne[1], ne[2], ne[3], 0);
    }
    return ggml_swiglu_oai(b->ctx, a, g, p->alpha, p->limit);
}

static void desc_oai(const void * pv, char * s, size_t n) {
    const struct p_oai * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne_a", p->ne, 4);
    cat(s, n, ",v=%d,alpha=%g,limit=%g", p->v, p->alpha, p->limit);
}

static const struct op_family fam_oai = {build_oai, desc_oai, NULL, NULL, -150.0f, 150.0f};

// ---- NORM and L2_NORM over rows, optionally of a view or of permuted rows -----------------

struct p_norm {
    enum ggml_op op;  // GGML_OP_NORM or GGML_OP_L2_NORM
    int64_t      ne[4];
    int          v;          // input is a view of the first half of every dim
    int          noncontig;  // rows not contiguous (created transposed, then permuted)
    float        eps;
};

static struct ggml_tensor * build_norm(struct tb * b, const void * pv) {
    const struct p_norm * p  = pv;
    const int64_t *       ne = p->ne;
    struct ggml_tensor *  a;
    if (p->noncontig) {
        a = tb_new(b, GGML_TYPE_F32, ne[1], ne[0], ne[2], ne[3], "a");
        a = ggml_permute(b->ctx, a, 1, 0, 2, 3);
    } else {
        a = tb_new(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], "a");
    }
    if (p->v) {
        a = ggml_view_4d(b->ctx, a, a->ne[0] / 2, a->ne[1] / 2, a->ne[2] / 2, a->ne[3] / 2, a->nb[1], a->nb[2],
                         a->nb[3], 0);
    }
    return p->op == GGML_OP_NORM ? ggml_norm(b->ctx, a, p->eps) : ggml_l2_norm(b->ctx, a, p->eps);
}

static void desc_norm(const void * pv, char * s, size_t n) {
    const struct p_norm * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",v=%d,eps=%g,noncontig_rows=%d", p->v, p->eps, p->noncontig);
}

static const struct op_family fam_norm = {build_norm, desc_norm, NULL, NULL, -1.0f, 1.0f};

// ---- SUM_ROWS, optionally of a strided slice or a permutation ------------------------------

struct p_sum_rows {
    int64_t ne[4];
    int     permute;  // (0, 2, 3, 1)
    int     slice;    // every other matrix of dim 2, dim 3 from 1
};

static struct ggml_tensor * build_sum_rows(struct tb * b, const void * pv) {
    const struct p_sum_rows * p  = pv;
    const int64_t *           ne = p->ne;
    struct ggml_tensor *      a  = tb_new(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], "a");
    if (p->slice) {
        a = ggml_view_4d(b->ctx, a, ne[0], ne[1], ne[2] / 2, ne[3] - 1, a->nb[1], a->nb[2] * 2, a->nb[3], a->nb[3]);
    }
    if (p->permute) {
        a = ggml_permute(b->ctx, a, 0, 2, 3, 1);
    }
    return ggml_sum_rows(b->ctx, a);
}

static void desc_sum_rows(const void * pv, char * s, size_t n) {
    const struct p_sum_rows * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",permute=%d,slice=%d", p->permute, p->slice);
}

static const struct op_family fam_sum_rows = {build_sum_rows, desc_sum_rows, NULL, NULL, -1.0f, 1.0f};

// ---- CUMSUM along rows ------------------------------------------------------------------------

struct p_cumsum {
    int64_t ne[4];
    int     v;  // input rows padded in memory (a view)
};

static struct ggml_tensor * build_cumsum(struct tb * b, const void * pv) {
    const struct p_cumsum * p = pv;
    struct ggml_tensor *    a = tb_new(b, GGML_TYPE_F32, p->ne[0] + (p->v ? 5 : 0), p->ne[1], p->ne[2], p->ne[3], "a");
    if (p->v) {
        a = tb_view(b, a, p->ne[0], p->ne[1], p->ne[2], p->ne[3], 0);
    }
    return ggml_cumsum(b->ctx, a);
}

static void desc_cumsum(const void * pv, char * s, size_t n) {
    const struct p_cumsum * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",v=%d", p->v);
}

static const struct op_family fam_cumsum = {build_cumsum, desc_cumsum, NULL, NULL, -1.0f, 1.0f};

// ---- ARGSORT of rows with distinct values ------------------------------------------------------

struct p_argsort {
    int64_t              ne[4];
    enum ggml_sort_order order;
};

static struct ggml_tensor * build_argsort(struct tb * b, const void * pv) {
    const struct p_argsort * p = pv;
    struct ggml_tensor *     a = tb_new(b, GGML_TYPE_F32, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "a");
    return ggml_argsort(b->ctx, a, p->order);
}

static void desc_argsort(const void * pv, char * s, size_t n) {
    const struct p_argsort * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",order=%s", p->order == GGML_SORT_ORDER_ASC ? "asc" : "desc");
}

// Each row a shuffle of 0 .. ne0-1 (as test-backend-ops: no ties, so one right answer).
static int init_argsort(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    (void)pv;
    if (strcmp(t->name, "a") != 0) {
        return 0;
    }
    const int64_t ne0 = t->ne[0];
    for (int64_t row = 0; row < ggml_nrows(t); row++) {
        float * x = v + row * ne0;
        for (int64_t i = 0; i < ne0; i++) {
            x[i] = (float)i;
        }
        for (int64_t i = ne0 - 1; i > 0; i--) {
            int64_t j   = rng_below(r, i + 1);
            float   tmp = x[i];
            x[i]        = x[j];
            x[j]        = tmp;
        }
    }
    return 1;
}

static double max_err_exact(const void * p) {
    (void)p;
    return 0.0;
}

static const struct op_family fam_argsort = {build_argsort, desc_argsort, init_argsort, max_err_exact, -1.0f, 1.0f};

// ---- TOP_K: the indices of each row's k largest ---------------------------------------------------

struct p_top_k {
    int64_t ne[4];
    int64_t k;
    int     v;  // 1: a is a view with padded rows, 2: also a gap between its matrices
};

static struct ggml_tensor * build_top_k(struct tb * b, const void * pv) {
    const struct p_top_k * p  = pv;
    const int64_t *        ne = p->ne;
    struct ggml_tensor *   a;
    if (p->v) {
        a = tb_new(b, GGML_TYPE_F32, ne[0] + 16, ne[1] + (p->v == 2), ne[2], ne[3], "a");
        a = tb_view(b, a, ne[0], ne[1], ne[2], ne[3], 0);
    } else {
        a = tb_new(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], "a");
    }
    return ggml_top_k(b->ctx, a, (int)p->k);
}

static void desc_top_k(const void * pv, char * s, size_t n) {
    const struct p_top_k * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne", p->ne, 4);
    cat(s, n, ",k=%" PRId64 ",v=%d", p->k, p->v);
}

// Rows as ARGSORT's (shuffles, no ties: test-backend-ops' inputs), so the
// order ggml-cpu leaves is the one right answer and the compare is exact.
static const struct op_family fam_top_k = {build_top_k, desc_top_k, init_argsort, max_err_exact, -1.0f, 1.0f};

// ---- CONCAT along each dim, optionally of views ---------------------------------------------------

struct p_concat {
    enum ggml_type type;
    int64_t        ne_a[4];
    int64_t        ne_b_d;  // b's size along dim
    int            dim;
    int            v;  // 1: a is a view, 2: b is a view
};

static struct ggml_tensor * build_concat(struct tb * b, const void * pv) {
    const struct p_concat * p = pv;
    int64_t                 nb_[4];
    memcpy(nb_, p->ne_a, sizeof nb_);
    nb_[p->dim]            = p->ne_b_d;
    const int64_t *     na = p->ne_a;
    struct ggml_tensor *a, *x;
    if (p->v & 1) {
        a = tb_new(b, p->type, na[0] * 2, na[1] * 4, na[2] * 3, na[3], "a");
        a = tb_view(b, a, na[0], na[1], na[2], na[3], 0);
    } else {
        a = tb_new(b, p->type, na[0], na[1], na[2], na[3], "a");
    }
    if (p->v & 2) {
        x = tb_new(b, p->type, nb_[0] * 3, nb_[1] * 2, nb_[2] * 4, nb_[3], "b");
        x = tb_view(b, x, nb_[0], nb_[1], nb_[2], nb_[3], 0);
    } else {
        x = tb_new(b, p->type, nb_[0], nb_[1], nb_[2], nb_[3], "b");
    }
    return ggml_concat(b->ctx, a, x, p->dim);
}

static void desc_concat(const void * pv, char * s, size_t n) {
    const struct p_concat * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne_a", p->ne_a, 4);
    cat(s, n, ",ne_b_d=%" PRId64 ",dim=%d,v=%d", p->ne_b_d, p->dim, p->v);
}

static const struct op_family fam_concat = {build_concat, desc_concat, NULL, max_err_exact, -1.0f, 1.0f};

// ---- REPEAT: src tiled nr times per dim ----------------------------------------------------------

struct p_repeat {
    enum ggml_type type;
    int64_t        ne[4];
    int            nr[4];
    int            v;  // src a view with padded rows
};

static struct ggml_tensor * build_repeat(struct tb * b, const void * pv) {
    const struct p_repeat * p   = pv;
    const int64_t *         ne  = p->ne;
    struct ggml_tensor *    src = tb_new(b, p->type, ne[0] + (p->v ? 3 : 0), ne[1], ne[2], ne[3], "src");
    if (p->v) {
        src = tb_view(b, src, ne[0], ne[1], ne[2], ne[3], 0);
    }
    struct ggml_tensor * target =
        tb_new(b, p->type, ne[0] * p->nr[0], ne[1] * p->nr[1], ne[2] * p->nr[2], ne[3] * p->nr[3], "target");
    return ggml_repeat(b->ctx, src, target);
}

static void desc_repeat(const void * pv, char * s, size_t n) {
    const struct p_repeat * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne", p->ne, 4);
    cat_ni(s, n, ",nr", p->nr, 4);
    cat(s, n, ",v=%d", p->v);
}

static const struct op_family fam_repeat = {build_repeat, desc_repeat, NULL, max_err_exact, -1.0f, 1.0f};

// ---- PAD (ggml_pad_ext, zero or circular), of a view or a permutation -----------------------------

struct p_pad {
    int64_t ne[4];
    int     lp[4], rp[4];
    int     tfrm;  // 0 none, 1 view of the first half of each dim, 2 permuted (2, 1, 0, 3)
    int     circular;
};

static struct ggml_tensor * build_pad(struct tb * b, const void * pv) {
    const struct p_pad * p = pv;
    struct ggml_tensor * a = tb_new(b, GGML_TYPE_F32, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "a");
    if (p->tfrm == 1) {
        a = tb_view(b, a, (a->ne[0] + 1) / 2, (a->ne[1] + 1) / 2, (a->ne[2] + 1) / 2, (a->ne[3] + 1) / 2, 0);
    } else if (p->tfrm == 2) {
        a = ggml_permute(b->ctx, a, 2, 1, 0, 3);
    }
    const int *l = p->lp, *r = p->rp;
    if (p->circular) {
        return ggml_pad_ext_circular(b->ctx, a, l[0], r[0], l[1], r[1], l[2], r[2], l[3], r[3]);
    }
    return ggml_pad_ext(b->ctx, a, l[0], r[0], l[1], r[1], l[2], r[2], l[3], r[3]);
}

static void desc_pad(const void * pv, char * s, size_t n) {
    const struct p_pad * p = pv;
    cat(s, n, "type=f32,");
    cat_ne(s, n, "ne_a", p->ne, 4);
    cat_ni(s, n, ",lp", p->lp, 4);
    cat_ni(s, n, ",rp", p->rp, 4);
    cat(s, n, ",tfrm=%d,circular=%d", p->tfrm, p->circular);
}

static const struct op_family fam_pad = {build_pad, desc_pad, NULL, max_err_exact, -1.0f, 1.0f};

// ---- DIAG, TRI, FILL ----------------------------------------------------------------------------------

struct p_place {
    enum ggml_op       op;  // GGML_OP_DIAG, GGML_OP_TRI or GGML_OP_FILL
    enum ggml_type     type;
    int64_t            ne[4];
    enum ggml_tri_type tri;
    float              c;  // FILL value
};

static struct ggml_tensor * build_place(struct tb * b, const void * pv) {
    const struct p_place * p = pv;
    struct ggml_tensor *   a = tb_new(b, p->type, p->ne[0], p->ne[1], p->ne[2], p->ne[3], "a");
    switch (p->op) {
        case GGML_OP_DIAG:
            return ggml_diag(b->ctx, a);
        case GGML_OP_TRI:
            return ggml_tri(b->ctx, a, p->tri);
        default:
            return ggml_fill(b->ctx, a, p->c);
    }
}

static void desc_place(const void * pv, char * s, size_t n) {
    const struct p_place * p = pv;
    cat(s, n, "type=%s,", tname(p->type));
    cat_ne(s, n, "ne", p->ne, 4);
    if (p->op == GGML_OP_TRI) {
        cat(s, n, ",tri_type=%d", (int)p->tri);
    } else if (p->op == GGML_OP_FILL) {
        cat(s, n, ",c=%g", p->c);
    }
}

static const struct op_family fam_place = {build_place, desc_place, NULL, max_err_exact, -1.0f, 1.0f};

// ---- ADD_ID: a[:, e, t] + b[:, ids[e, t]] (MoE expert biases) --------------------------------------

struct p_add_id {
    int64_t n_embd, n_experts, n_used, n_token;
};

static struct ggml_tensor * build_add_id(struct tb * b, const void * pv) {
    const struct p_add_id * p   = pv;
    struct ggml_tensor *    a   = tb_new(b, GGML_TYPE_F32, p->n_embd, p->n_used, p->n_token, 1, "a");
    struct ggml_tensor *    x   = tb_new(b, GGML_TYPE_F32, p->n_embd, p->n_experts, 1, 1, "b");
    struct ggml_tensor *    ids = tb_new(b, GGML_TYPE_I32, p->n_experts, p->n_token, 1, 1, "ids");
    if (p->n_used != p->n_experts) {
        ids = ggml_view_2d(b->ctx, ids, p->n_used, p->n_token, ids->nb[1], 0);
    }
    return ggml_add_id(b->ctx, a, x, ids);
}

static void desc_add_id(const void * pv, char * s, size_t n) {
    const struct p_add_id * p = pv;
    cat(s, n,
        "type_a=f32,type_b=f32,n_embd=%" PRId64 ",n_experts=%" PRId64 ",n_experts_used=%" PRId64 ",n_token=%" PRId64,
        p->n_embd, p->n_experts, p->n_used, p->n_token);
}

// Each ids row: a shuffle of the experts (distinct experts per token).
static int init_add_id(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_add_id * p = pv;
    if (strcmp(t->name, "ids") != 0) {
        return 0;
    }
    for (int64_t row = 0; row < ggml_nrows(t); row++) {
        float * x = v + row * t->ne[0];
        for (int64_t i = 0; i < t->ne[0]; i++) {
            x[i] = (float)(i % p->n_experts);
        }
        for (int64_t i = t->ne[0] - 1; i > 0; i--) {
            int64_t j   = rng_below(r, i + 1);
            float   tmp = x[i];
            x[i]        = x[j];
            x[j]        = tmp;
        }
    }
    return 1;
}

static const struct op_family fam_add_id = {build_add_id, desc_add_id, init_add_id, NULL, -1.0f, 1.0f};

// ---- SSM_CONV: sx [d_conv - 1 + n_t, d_inner, n_s], c [d_conv, d_inner] ------------

struct p_ssm_conv {
    int64_t d_conv, n_t, d_inner, n_s;
};

static struct ggml_tensor * build_ssm_conv(struct tb * b, const void * pv) {
    const struct p_ssm_conv * p  = pv;
    struct ggml_tensor *      sx = tb_new(b, GGML_TYPE_F32, p->d_conv - 1 + p->n_t, p->d_inner, p->n_s, 1, "sx");
    struct ggml_tensor *      c  = tb_new(b, GGML_TYPE_F32, p->d_conv, p->d_inner, 1, 1, "c");
    return ggml_ssm_conv(b->ctx, sx, c);
}

static void desc_ssm_conv(const void * pv, char * s, size_t n) {
    const struct p_ssm_conv * p = pv;
    cat(s, n, "d_conv=%" PRId64 ",n_t=%" PRId64 ",d_inner=%" PRId64 ",n_s=%" PRId64, p->d_conv, p->n_t, p->d_inner,
        p->n_s);
}

static const struct op_family fam_ssm_conv = {build_ssm_conv, desc_ssm_conv, NULL, NULL, -1.0f, 1.0f};

// ---- GATED_DELTA_NET: q, k [S, H, T, N], v [S, H * v_repeat, T, N], gates, initial state ----

struct p_gdn {
    int64_t S, H, v_repeat, T, N, K;
    int     kda, permuted;  // permuted: q, k, v created [S, T, H, N] and permuted
};

static struct ggml_tensor * build_gdn(struct tb * b, const void * pv) {
    const struct p_gdn * p  = pv;
    const int64_t        Hv = p->H * p->v_repeat;
    struct ggml_tensor * q, *k, *v;
    if (p->permuted) {
        q = ggml_permute(b->ctx, tb_new(b, GGML_TYPE_F32, p->S, p->T, p->H, p->N, "q"), 0, 2, 1, 3);
        k = ggml_permute(b->ctx, tb_new(b, GGML_TYPE_F32, p->S, p->T, p->H, p->N, "k"), 0, 2, 1, 3);
        v = ggml_permute(b->ctx, tb_new(b, GGML_TYPE_F32, p->S, p->T, Hv, p->N, "v"), 0, 2, 1, 3);
    } else {
        q = tb_new(b, GGML_TYPE_F32, p->S, p->H, p->T, p->N, "q");
        k = tb_new(b, GGML_TYPE_F32, p->S, p->H, p->T, p->N, "k");
        v = tb_new(b, GGML_TYPE_F32, p->S, Hv, p->T, p->N, "v");
    }
    struct ggml_tensor * g     = tb_new(b, GGML_TYPE_F32, p->kda ? p->S : 1, Hv, p->T, p->N, "g");
    struct ggml_tensor * beta  = tb_new(b, GGML_TYPE_F32, 1, Hv, p->T, p->N, "beta");
    struct ggml_tensor * state = tb_new(b, GGML_TYPE_F32, p->S, p->S, Hv, p->N, "state");
    return ggml_gated_delta_net(b->ctx, q, k, v, g, beta, state, p->K);
}

static void desc_gdn(const void * pv, char * s, size_t n) {
    const struct p_gdn * p = pv;
    cat(s, n,
        "head_size=%" PRId64 ",n_head=%" PRId64 ",v_repeat=%" PRId64 ",n_seq_tokens=%" PRId64 ",n_seqs=%" PRId64
        ",K=%" PRId64 ",kda=%d,permuted=%d",
        p->S, p->H, p->v_repeat, p->T, p->N, p->K, p->kda, p->permuted);
}

// q, k of norm about 1 (a stable delta rule), log-decays g < 0, beta in (0, 1).
static int init_gdn(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_gdn * p  = pv;
    const int64_t        n  = ggml_nelements(t);
    float                lo = -1.0f, hi = 1.0f;
    if (strcmp(t->name, "q") == 0 || strcmp(t->name, "k") == 0) {
        lo = -1.7f / sqrtf((float)p->S), hi = -lo;
    } else if (strcmp(t->name, "g") == 0) {
        lo = -1.0f, hi = -0.01f;
    } else if (strcmp(t->name, "beta") == 0) {
        lo = 0.0f, hi = 1.0f;
    } else if (strcmp(t->name, "state") == 0) {
        lo = -0.1f, hi = 0.1f;
    } else if (strcmp(t->name, "v") != 0) {
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        v[i] = rng_uniform(r, lo, hi);
    }
    return 1;
}

static const struct op_family fam_gdn = {build_gdn, desc_gdn, init_gdn, NULL, -1.0f, 1.0f};

// ---- SOLVE_TRI: A X = B, A [n, n, b2, b3] lower triangular, B [k, n, b2, b3] ----------

struct p_solve_tri {
    int64_t n, k, b2, b3;
};

static struct ggml_tensor * build_solve_tri(struct tb * b, const void * pv) {
    const struct p_solve_tri * p = pv;
    struct ggml_tensor *       a = tb_new(b, GGML_TYPE_F32, p->n, p->n, p->b2, p->b3, "A");
    struct ggml_tensor *       x = tb_new(b, GGML_TYPE_F32, p->k, p->n, p->b2, p->b3, "B");
    return ggml_solve_tri(b->ctx, a, x, true, true, false);
}

static void desc_solve_tri(const void * pv, char * s, size_t n) {
    const struct p_solve_tri * p = pv;
    cat(s, n, "n=%" PRId64 ",k=%" PRId64 ",b=[%" PRId64 ",%" PRId64 "]", p->n, p->k, p->b2, p->b3);
}

// A: well conditioned: diagonal of magnitude in [1, 2), small entries below it, zeros above.
static int init_solve_tri(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_solve_tri * p = pv;
    if (strcmp(t->name, "A") != 0) {
        return 0;
    }
    for (int64_t m = 0; m < p->b2 * p->b3; m++) {
        for (int64_t i = 0; i < p->n; i++) {
            for (int64_t j = 0; j < p->n; j++) {
                float x = 0.0f;
                if (j == i) {
                    x = rng_uniform(r, 1.0f, 2.0f) * (rng_below(r, 2) ? 1.0f : -1.0f);
                } else if (j < i) {
                    x = rng_uniform(r, -1.0f, 1.0f) / (float)p->n;
                }
                v[(m * p->n + i) * p->n + j] = x;
            }
        }
    }
    return 1;
}

static double max_err_solve_tri(const void * p) {
    (void)p;
    return 1e-6;
}

static const struct op_family fam_solve_tri = {build_solve_tri,   desc_solve_tri, init_solve_tri,
                                               max_err_solve_tri, -1.0f,          1.0f};

// ---- IM2COL: input [IW, IH, IC, N] (2D) or [IW, IC, N] (1D), kernel shape only ----------

struct p_im2col {
    enum ggml_type tsrc, tdst;
    int64_t        in[4], ker[4];
    int            s0, s1, p0, p1, d0, d1, is_2d;
};

static struct ggml_tensor * build_im2col(struct tb * b, const void * pv) {
    const struct p_im2col * p = pv;
    struct ggml_tensor *    x = tb_new(b, p->tsrc, p->in[0], p->in[1], p->in[2], p->in[3], "input");
    struct ggml_tensor *    k = tb_new(b, GGML_TYPE_F16, p->ker[0], p->ker[1], p->ker[2], p->ker[3], "kernel");
    return ggml_im2col(b->ctx, k, x, p->s0, p->s1, p->p0, p->p1, p->d0, p->d1, p->is_2d, p->tdst);
}

static void desc_im2col(const void * pv, char * s, size_t n) {
    const struct p_im2col * p = pv;
    cat(s, n, "type_input=%s,dst_type=%s,", tname(p->tsrc), tname(p->tdst));
    cat_ne(s, n, "ne_input", p->in, 4);
    cat_ne(s, n, ",ne_kernel", p->ker, 4);
    cat(s, n, ",s=%d/%d,p=%d/%d,d=%d/%d,is_2D=%d", p->s0, p->s1, p->p0, p->p1, p->d0, p->d1, p->is_2d);
}

static const struct op_family fam_im2col = {build_im2col, desc_im2col, NULL, NULL, -1.0f, 1.0f};

// ---- Fusion: graphs of the patterns the backend fuses into one op ----------
// (GGML_HEXAGON_OPFUSION), and near misses it must leave alone. Each case
// says how many nodes fusion absorbs on an HTP device (fused): the runner
// checks the device's count (ggml_backend_htp_stats.fused) against it, 0
// when fusion is off.

enum fuse_kind {
    FUSE_RMS_NORM_MUL,  // mul(rms_norm(x), w)
    FUSE_MUL_MAT_ADD,   // add(mul_mat(a, x), c)
    FUSE_MUL_MAT_QKV,   // concat(mul_mat(wq, x), concat(mul_mat(wk, x), mul_mat(wv, x)))
    FUSE_MUL_MAT_FFN,   // swiglu(mul_mat(wg, x), mul_mat(wu, x))
};

struct p_fuse {
    enum fuse_kind kind;
    int64_t        ne[4];   // x (RMS_NORM); MUL_MAT: [k, m, n, bs]
    int64_t        wne[4];  // RMS_NORM_MUL: w's shape; MUL_MAT_ADD: the addend's
    enum ggml_type ta;      // MUL_MAT's weight type
    int            swap;    // the intermediate is the second operand of the last node
    int            v;       // x is a view of the first half of each row (non-contiguous)
    int            shared;  // negative: the intermediate is also read by another node
    int            small;   // negative: the intermediate is broadcast into the other operand (w/c: wne)
    int            fused;   // nodes fusion absorbs
    enum ggml_type tv;      // QKV: V's weight type, FFN: up's (0: ta)
    int            xview;   // QKV/FFN negative: the second matmul reads another view of x's bytes
};

static struct ggml_tensor * build_fuse(struct tb * b, const void * pv) {
    const struct p_fuse * p = pv;
    struct ggml_tensor *  mid, *other, *out;
    if (p->kind == FUSE_RMS_NORM_MUL) {
        struct ggml_tensor * x = tb_new(b, GGML_TYPE_F32, p->ne[0] * (p->v ? 2 : 1), p->ne[1], p->ne[2], p->ne[3], "x");
        if (p->v) {
            x = tb_view(b, x, p->ne[0], p->ne[1], p->ne[2], p->ne[3], 0);
        }
        mid   = ggml_rms_norm(b->ctx, x, 1e-6f);
        other = tb_new(b, GGML_TYPE_F32, p->wne[0], p->wne[1], p->wne[2], p->wne[3], "w");
        out   = p->swap || p->small ? ggml_mul(b->ctx, other, mid) : ggml_mul(b->ctx, mid, other);
    } else if (p->kind == FUSE_MUL_MAT_QKV || p->kind == FUSE_MUL_MAT_FFN) {
        // x [k, n, bs]; Q (gate, up) [m, n, bs], K and V [m / 2, n, bs].
        const int64_t        k = p->ne[0], m = p->ne[1], n = p->ne[2], bs = p->ne[3];
        const int            qkv = p->kind == FUSE_MUL_MAT_QKV;
        struct ggml_tensor * x   = tb_new(b, GGML_TYPE_F32, k, n, bs, 1, "x");
        struct ggml_tensor * x2  = p->xview ? ggml_view_3d(b->ctx, x, k, n, bs, x->nb[1], x->nb[2], 0) : x;
        struct ggml_tensor * wq  = tb_new(b, p->ta, k, m, 1, 1, "wq");
        struct ggml_tensor * wk  = tb_new(b, !qkv && p->tv ? p->tv : p->ta, k, qkv ? m / 2 : m, 1, 1, "wk");
        struct ggml_tensor * q   = ggml_mul_mat(b->ctx, wq, x);
        struct ggml_tensor * kk  = ggml_mul_mat(b->ctx, wk, x2);
        if (!qkv) {
            struct ggml_tensor * glu = ggml_swiglu_split(b->ctx, q, kk);
            // shared: the gate also read by a SCALE (the pair still fuses, the GLU not).
            return p->shared ? ggml_add(b->ctx, glu, ggml_scale(b->ctx, q, 0.5f)) : glu;
        }
        struct ggml_tensor * wv = tb_new(b, p->tv ? p->tv : p->ta, k, m / 2, 1, 1, "wv");
        struct ggml_tensor * v  = ggml_mul_mat(b->ctx, wv, x);
        // q, kk, v come first in the graph's order (what graph_optimize does for a model).
        return ggml_concat(b->ctx, q, ggml_concat(b->ctx, kk, v, 0), 0);
    } else {
        const int64_t        k = p->ne[0], m = p->ne[1], n = p->ne[2], bs = p->ne[3];
        struct ggml_tensor * a = tb_new(b, p->ta, k, m, 1, 1, "a");
        struct ggml_tensor * x = tb_new(b, GGML_TYPE_F32, k * (p->v ? 2 : 1), n, bs, 1, "x");
        if (p->v) {
            x = tb_view(b, x, k, n, bs, 1, 0);
        }
        mid   = ggml_mul_mat(b->ctx, a, x);
        other = tb_new(b, GGML_TYPE_F32, p->wne[0], p->wne[1], p->wne[2], p->wne[3], "c");
        out   = p->swap || p->small ? ggml_add(b->ctx, other, mid) : ggml_add(b->ctx, mid, other);
    }
    if (p->shared) {
        // A second reader of the intermediate: out + 0.5 * mid.
        out = ggml_add(b->ctx, out, ggml_scale(b->ctx, mid, 0.5f));
    }
    return out;
}

static void desc_fuse(const void * pv, char * s, size_t n) {
    const struct p_fuse * p = pv;
    if (p->kind != FUSE_RMS_NORM_MUL) {
        cat(s, n, "type_a=%s,", tname(p->ta));
    }
    if (p->kind == FUSE_MUL_MAT_QKV || p->kind == FUSE_MUL_MAT_FFN) {
        cat(s, n, "type_v=%s,xview=%d,", tname(p->tv ? p->tv : p->ta), p->xview);
    }
    cat_ne(s, n, "ne", p->ne, 4);
    cat_ne(s, n, ",other", p->wne, 4);
    cat(s, n, ",swap=%d,v=%d,shared=%d,small=%d,fused=%d", p->swap, p->v, p->shared, p->small, p->fused);
}

static double max_err_fuse(const void * pv) {
    const struct p_fuse * p = pv;
    return p->kind == FUSE_RMS_NORM_MUL ? 1e-7 : 5e-4;
}

static const struct op_family fam_fuse = {build_fuse, desc_fuse, NULL, max_err_fuse, -1.0f, 1.0f};

// ---------------------------------------------------------------------------
// Running a case.

struct suite {
    ggml_backend_t             ref;  // ggml-cpu, the reference
    ggml_backend_t             dut;  // device under test
    ggml_backend_dev_t         dut_dev;
    ggml_backend_buffer_type_t ref_buft, dut_buft;
    const char *               filter;   // -o
    const char *               exclude;  // -x
    uint64_t                   seed;
    int                        verbose;
    int                        inject;
    int                        case_no;  // every generated case, filtered or not
    int                        n_pass, n_fail, n_skip;
    struct skip_reason {
        char * why;
        int    n;
    } skips[16];
    int n_skip_reasons;
    struct op_count {
        char name[32];
        int  pass, fail, skip;
    } ops[64];
    int n_ops;
};

static struct op_count * op_count(struct suite * s, const char * name) {
    for (int i = 0; i < s->n_ops; i++) {
        if (strcmp(s->ops[i].name, name) == 0) {
            return &s->ops[i];
        }
    }
    if (s->n_ops == (int)(sizeof s->ops / sizeof s->ops[0])) {
        return NULL;
    }
    struct op_count * c = &s->ops[s->n_ops++];
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

static int is_view_op(enum ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

static struct ggml_context * case_ctx(void) {
    struct ggml_init_params ip = {
        .mem_size   = ggml_tensor_overhead() * CTX_TENSORS + ggml_graph_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    return ggml_init(ip);
}

// Converts n values to tensor type `type` into dst (row length ne0).
static void to_type(enum ggml_type type, const float * v, int64_t n, int64_t ne0, void * dst) {
    switch (type) {
        case GGML_TYPE_F32:
            memcpy(dst, v, sizeof(float) * (size_t)n);
            break;
        case GGML_TYPE_F16:
            ggml_fp32_to_fp16_row(v, dst, n);
            break;
        case GGML_TYPE_BF16:
            ggml_fp32_to_bf16_row(v, dst, n);
            break;
        case GGML_TYPE_I32:
            for (int64_t i = 0; i < n; i++) {
                ((int32_t *)dst)[i] = (int32_t)lrintf(v[i]);
            }
            break;
        case GGML_TYPE_I64:
            for (int64_t i = 0; i < n; i++) {
                ((int64_t *)dst)[i] = (int64_t)llrintf(v[i]);
            }
            break;
        default:  // quantized (IQ2_XXS, IQ2_XS, IQ1_S want an importance matrix: all ones, as test-backend-ops)
            if (ggml_quantize_requires_imatrix(type)) {
                float * im = malloc(sizeof(float) * (size_t)ne0);
                for (int64_t i = 0; i < ne0; i++) {
                    im[i] = 1.0f;
                }
                ggml_quantize_chunk(type, v, dst, 0, n / ne0, ne0, im);
                free(im);
            } else {
                ggml_quantize_chunk(type, v, dst, 0, n / ne0, ne0, NULL);
            }
            break;
    }
}

// One element of t at byte offset off in its data, as float.
static float elem_f32(enum ggml_type type, const uint8_t * p) {
    switch (type) {
        case GGML_TYPE_F32: {
            float f;
            memcpy(&f, p, sizeof f);
            return f;
        }
        case GGML_TYPE_F16: {
            ggml_fp16_t h;
            memcpy(&h, p, sizeof h);
            return ggml_fp16_to_fp32(h);
        }
        case GGML_TYPE_BF16: {
            ggml_bf16_t h;
            memcpy(&h, p, sizeof h);
            return ggml_bf16_to_fp32(h);
        }
        case GGML_TYPE_I32: {
            int32_t i;
            memcpy(&i, p, sizeof i);
            return (float)i;
        }
        case GGML_TYPE_I64: {
            int64_t i;
            memcpy(&i, p, sizeof i);
            return (float)i;
        }
        default:
            return NAN;
    }
}

// Reads t (any strides, a view or not) into out[ggml_nelements(t)] as float,
// in logical element order. Returns 0, or -1 on allocation failure.
static int read_f32(const struct ggml_tensor * t, float * out) {
    size_t    nbytes = ggml_nbytes(t);
    uint8_t * buf    = malloc(nbytes ? nbytes : 1);
    if (!buf) {
        return -1;
    }
    ggml_backend_tensor_get(t, buf, 0, nbytes);
    const struct ggml_type_traits * tt = ggml_get_type_traits(t->type);
    int64_t                         bs = ggml_blck_size(t->type), k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < t->ne[0]; i0 += bs) {
                    const uint8_t * p = buf + i3 * t->nb[3] + i2 * t->nb[2] + i1 * t->nb[1] + i0 / bs * t->nb[0];
                    if (ggml_is_quantized(t->type)) {
                        tt->to_float(p, out + k, bs);
                        k += bs;
                    } else {
                        out[k++] = elem_f32(t->type, p);
                    }
                }
            }
        }
    }
    free(buf);
    return 0;
}

// ggml counts FLT_MAX as infinity (saturating backends produce it).
static int inf_like(float f) {
    return isinf(f) || f == FLT_MAX || f == -FLT_MAX;
}

// Compares the device's output b with the reference a; writes why on failure.
static int compare(const float * a, const float * b, int64_t n, double max_err, double * err, char * why, size_t nwhy) {
    double diff = 0.0, ref = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            snprintf(why, nwhy, "NaN at %" PRId64 " (cpu=%g dev=%g)", i, a[i], b[i]);
            return 0;
        }
        if (inf_like(a[i]) || inf_like(b[i])) {
            if (!inf_like(a[i]) || !inf_like(b[i]) || signbit(a[i]) != signbit(b[i])) {
                snprintf(why, nwhy, "inf mismatch at %" PRId64 " (cpu=%g dev=%g)", i, a[i], b[i]);
                return 0;
            }
            continue;
        }
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        ref += (double)a[i] * a[i];
    }
    // An all-zero reference would make NMSE 0/0: judge the absolute error instead.
    *err = ref > 0.0 ? diff / ref : diff;
    if (*err > max_err) {
        snprintf(why, nwhy, "NMSE %.3e > %.1e", *err, max_err);
        return 0;
    }
    return 1;
}

// Fills every tensor of ctx_a that owns memory, and its twin in ctx_b, with
// the same bytes. Returns 0, or -1 on allocation failure.
static int init_inputs(const struct op_family * f, const void * p, struct ggml_context * ca, struct ggml_context * cb,
                       struct rng * r) {
    struct ggml_tensor * ta = ggml_get_first_tensor(ca);
    struct ggml_tensor * tb = ggml_get_first_tensor(cb);
    for (; ta && tb; ta = ggml_get_next_tensor(ca, ta), tb = ggml_get_next_tensor(cb, tb)) {
        if (ta->view_src || ggml_nelements(ta) == 0) {
            continue;  // views share their source's bytes
        }
        int64_t n     = ggml_nelements(ta);
        float * v     = malloc(sizeof(float) * (size_t)n);
        void *  bytes = malloc(ggml_nbytes(ta));
        if (!v || !bytes) {
            free(v);
            free(bytes);
            return -1;
        }
        if (!f->init || !f->init(p, ta, r, v)) {
            for (int64_t i = 0; i < n; i++) {
                v[i] = rng_uniform(r, f->lo, f->hi);
            }
        }
        to_type(ta->type, v, n, ta->ne[0], bytes);
        ggml_backend_tensor_set(ta, bytes, 0, ggml_nbytes(ta));
        ggml_backend_tensor_set(tb, bytes, 0, ggml_nbytes(tb));
        free(v);
        free(bytes);
    }
    return 0;
}

// Sentinels of the device's graph must hold the bytes they were given (the
// reference's copies are untouched by construction). Returns the first bad one.
static const char * check_sentinels(struct ggml_context * ca, struct ggml_context * cb) {
    static char          name[GGML_MAX_NAME];
    float                a[SENTINEL_ELEMS], b[SENTINEL_ELEMS];
    struct ggml_tensor * ta = ggml_get_first_tensor(ca);
    struct ggml_tensor * tb = ggml_get_first_tensor(cb);
    for (; ta && tb; ta = ggml_get_next_tensor(ca, ta), tb = ggml_get_next_tensor(cb, tb)) {
        if (!is_sentinel(ta)) {
            continue;
        }
        ggml_backend_tensor_get(ta, a, 0, sizeof a);
        ggml_backend_tensor_get(tb, b, 0, sizeof b);
        if (memcmp(a, b, sizeof a) != 0) {
            snprintf(name, sizeof name, "%s", ta->name);
            return name;
        }
    }
    return NULL;
}

static int lists_op(const char * list, const char * op) {
    size_t n = strlen(op);
    for (const char * p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, op, n) == 0) {
            return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

enum verdict { V_PASS, V_FAIL, V_SKIP, V_FILTERED };

// NULL: the next cases must be claimed by the device. Otherwise the reason
// they lie outside what its kernels claim (set by run_case_outside).
static const char * g_outside;

// Non-zero: the device's tensors of the next cases live in a buffer marked as
// weights, so quantized weights are stored tiled at set_tensor (otherwise the
// default buffer, where GGML_HEXAGON_RT_REPACK decides at graph time).
static int g_weights_buf;

// Non-NULL: the name the next cases go by (and -o selects), instead of
// their output node's op.
static const char * g_case_op;

// >= 0: graph nodes the device's fusion must absorb in the next cases (on an
// HTP device with GGML_HEXAGON_OPFUSION on; none with it off).
static int g_expect_fused = -1;

// GGML_HEXAGON_OPFUSION as the backend reads it: on unless a number that is 0.
static int opfusion_enabled(void) {
    const char * e = getenv("GGML_HEXAGON_OPFUSION");
    if (!e || !*e) {
        return 1;
    }
    char *     end;
    const long v = strtol(e, &end, 10);
    return *end != '\0' || v != 0;
}

static enum verdict run_case_inner(struct suite * s, const struct op_family * f, const void * p, char * desc,
                                   size_t ndesc, char * why, size_t nwhy, double * err) {
    enum verdict          v  = V_FAIL;
    struct ggml_context * ca = case_ctx(), *cb = case_ctx();
    ggml_backend_buffer_t ba = NULL, bb = NULL;
    float *               fa = NULL, *fb = NULL;
    if (!ca || !cb) {
        snprintf(why, nwhy, "ggml_init failed");
        goto done;
    }

    struct tb            bld_a = {ca, 0}, bld_b = {cb, 0};
    struct ggml_tensor * oa = f->build(&bld_a, p);
    tb_sentinel(&bld_a);
    const char * case_op = g_case_op ? g_case_op : ggml_op_desc(oa);
    cat(desc, ndesc, "%s(", case_op);
    f->desc(p, desc, ndesc);
    cat(desc, ndesc, ")");
    if ((s->filter && !lists_op(s->filter, case_op)) || (s->exclude && lists_op(s->exclude, case_op))) {
        v = V_FILTERED;
        goto done;
    }

    // The device must accept every computing node; the reference too.
    for (struct ggml_tensor * t = ggml_get_first_tensor(ca); t; t = ggml_get_next_tensor(ca, t)) {
        if (t->op == GGML_OP_NONE || is_view_op(t->op)) {
            continue;
        }
        if (!ggml_backend_supports_op(s->ref, t)) {
            snprintf(why, nwhy, "the CPU refuses %s", ggml_op_desc(t));
            v = V_SKIP;
            goto done;
        }
        if (!ggml_backend_dev_supports_op(s->dut_dev, t)) {
            if (g_outside == NULL) {
                snprintf(why, nwhy, "must be claimed, but supports_op refuses %s", ggml_op_desc(t));
                goto done;
            }
            snprintf(why, nwhy, "%s", g_outside);
            v = V_SKIP;
            goto done;
        }
    }

    struct ggml_tensor * ob = f->build(&bld_b, p);
    tb_sentinel(&bld_b);

    ba = ggml_backend_alloc_ctx_tensors_from_buft(ca, s->ref_buft);
    bb = ggml_backend_alloc_ctx_tensors_from_buft(cb, s->dut_buft);
    if (!ba || !bb) {
        snprintf(why, nwhy, "cannot allocate the %s tensors", ba ? "device" : "CPU");
        goto done;
    }
    if (g_weights_buf) {
        ggml_backend_buffer_set_usage(bb, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        cat(desc, ndesc, "[weights]");
    }

    struct rng r = {s->seed ^ ((uint64_t)s->case_no * 0xd1342543de82ef95ull)};
    if (init_inputs(f, p, ca, cb, &r) != 0) {
        snprintf(why, nwhy, "out of memory");
        goto done;
    }

    struct ggml_cgraph * ga = ggml_new_graph(ca);
    struct ggml_cgraph * gb = ggml_new_graph(cb);
    ggml_build_forward_expand(ga, oa);
    ggml_build_forward_expand(gb, ob);
    if (ggml_backend_graph_compute(s->ref, ga) != GGML_STATUS_SUCCESS) {
        snprintf(why, nwhy, "CPU graph_compute failed");
        goto done;
    }
    struct ggml_backend_htp_stats st0, st1;
    ggml_backend_htp_get_stats(s->dut, &st0);
    enum ggml_status st = ggml_backend_graph_compute(s->dut, gb);
    ggml_backend_synchronize(s->dut);
    if (st != GGML_STATUS_SUCCESS) {
        snprintf(why, nwhy, "device graph_compute failed: %s", ggml_status_to_string(st));
        goto done;
    }
    ggml_backend_htp_get_stats(s->dut, &st1);
    if (g_expect_fused >= 0 && ggml_backend_is_htp(s->dut)) {
        const uint64_t want = opfusion_enabled() ? (uint64_t)g_expect_fused : 0;
        if (st1.fused - st0.fused != want) {
            snprintf(why, nwhy, "fusion absorbed %" PRIu64 " nodes, expected %" PRIu64, st1.fused - st0.fused, want);
            goto done;
        }
    }

    int64_t n = ggml_nelements(oa);
    fa        = malloc(sizeof(float) * (size_t)(n ? n : 1));
    fb        = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!fa || !fb || read_f32(oa, fa) != 0 || read_f32(ob, fb) != 0) {
        snprintf(why, nwhy, "out of memory");
        goto done;
    }
    if (s->inject && n > 0) {
        // one element off by the reference's whole norm: NMSE >= ~1 for any op
        double e = 0.0;
        for (int64_t i = 0; i < n; i++) {
            e += (double)fa[i] * fa[i];
        }
        fb[n / 2] += (float)sqrt(isfinite(e) ? e : 1.0) + 1.0f;
    }
    double max_err = f->max_err ? f->max_err(p) : 1e-7;
    if (!compare(fa, fb, n, max_err, err, why, nwhy)) {
        goto done;
    }
    const char * bad = check_sentinels(ca, cb);
    if (bad) {
        snprintf(why, nwhy, "sentinel %s overwritten (write out of bounds)", bad);
        goto done;
    }
    v = V_PASS;

done:
    free(fa);
    free(fb);
    ggml_backend_buffer_free(ba);
    ggml_backend_buffer_free(bb);
    if (ca) {
        ggml_free(ca);
    }
    if (cb) {
        ggml_free(cb);
    }
    return v;
}

// One more skip for reason why (reasons are few: a fixed table).
static void count_skip(struct suite * s, const char * why) {
    for (int i = 0; i < s->n_skip_reasons; i++) {
        if (strcmp(s->skips[i].why, why) == 0) {
            s->skips[i].n++;
            return;
        }
    }
    if (s->n_skip_reasons < (int)(sizeof s->skips / sizeof s->skips[0])) {
        s->skips[s->n_skip_reasons++] = (struct skip_reason){strdup(why), 1};
    }
}

static void run_case(struct suite * s, const struct op_family * f, const void * p) {
    char   desc[512] = "", why[256] = "";
    double err = 0.0;
    s->case_no++;
    enum verdict v = run_case_inner(s, f, p, desc, sizeof desc, why, sizeof why, &err);
    if (v == V_FILTERED) {
        return;
    }
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(desc, "("), desc);
    struct op_count * c = op_count(s, name);
    switch (v) {
        case V_PASS:
            s->n_pass++;
            if (c) {
                c->pass++;
            }
            if (s->verbose) {
                printf("ok    %s: NMSE %.3e\n", desc, err);
            }
            break;
        case V_SKIP:
            s->n_skip++;
            if (c) {
                c->skip++;
            }
            count_skip(s, why);
            if (s->verbose) {
                printf("skip  %s: %s\n", desc, why);
            }
            break;
        default:
            s->n_fail++;
            if (c) {
                c->fail++;
            }
            printf("FAIL  %s: %s\n", desc, why);
            break;
    }
    fflush(stdout);
}

// A case outside what the kernels claim: the device may refuse it (a skip
// counted under why); if it claims it, it must pass.
static void run_case_outside(struct suite * s, const struct op_family * f, const void * p, const char * why) {
    g_outside = why;
    run_case(s, f, p);
    g_outside = NULL;
}

#define OUTSIDE_TYPE "type outside what the kernels claim"

// ---------------------------------------------------------------------------
// Case generators, one per op family. Shapes follow test-backend-ops where it
// has them, plus sweeps of odd sizes; all small enough for 2 cores.

static void gen_mul_mat(struct suite * s) {
    static const enum ggml_type types[]    = {GGML_TYPE_F32, GGML_TYPE_F16};
    static const int            pers[3][4] = {{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}};
    for (int ti = 0; ti < 2; ti++) {
        struct p_mul_mat p = {.ta = types[ti], .per = {0, 1, 2, 3}};
        // m, n, k sweep: 1, odd sizes, around block/vector widths
        static const int64_t ms[] = {1, 3, 16, 17, 33, 64, 129};
        static const int64_t ns[] = {1, 2, 5, 8, 17, 33};
        static const int64_t ks[] = {1, 7, 16, 32, 33, 64, 129, 256};
        for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++) {
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
                for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
                    p.m = ms[a], p.n = ns[b], p.k = ks[c];
                    p.bs[0] = p.bs[1] = p.nr[0] = p.nr[1] = 1;
                    run_case(s, &fam_mul_mat, &p);
                }
            }
        }
        // batches and broadcast (test-backend-ops: bs {1,3}x{1,2}, nr {1,2}x{1,2})
        static const int64_t shapes[][3] = {{16, 1, 256}, {16, 4, 4}, {16, 16, 256}, {17, 5, 33}, {33, 8, 128}};
        static const int64_t bss[][2]    = {{1, 1}, {3, 1}, {3, 2}, {10, 1}};
        static const int64_t nrs[][2]    = {{1, 1}, {2, 1}, {1, 2}, {2, 2}};
        for (size_t a = 0; a < sizeof shapes / sizeof shapes[0]; a++) {
            for (size_t b = 0; b < sizeof bss / sizeof bss[0]; b++) {
                for (size_t c = 0; c < sizeof nrs / sizeof nrs[0]; c++) {
                    if (bss[b][0] * bss[b][1] == 1 && nrs[c][0] * nrs[c][1] == 1) {
                        continue;  // in the sweep
                    }
                    p.m = shapes[a][0], p.n = shapes[a][1], p.k = shapes[a][2];
                    memcpy(p.bs, bss[b], sizeof p.bs);
                    memcpy(p.nr, nrs[c], sizeof p.nr);
                    run_case(s, &fam_mul_mat, &p);
                }
            }
        }
        // both operands permuted (non-contiguous), as test-backend-ops
        static const int64_t pns[] = {1, 4, 8, 16};
        static const int64_t pks[] = {4, 33, 256};
        for (int q = 0; q < 3; q++) {
            for (size_t b = 0; b < 4; b++) {
                for (size_t c = 0; c < 3; c++) {
                    for (int64_t nr0 = 1; nr0 <= 2; nr0++) {
                        struct p_mul_mat pp = {
                            .ta = types[ti], .m = 16, .n = pns[b], .k = pks[c], .bs = {2, 3}, .nr = {nr0, 1}};
                        memcpy(pp.per, pers[q], sizeof pp.per);
                        run_case(s, &fam_mul_mat, &pp);
                    }
                }
            }
        }
        // rows longer in memory than k (views), batched and broadcast
        static const int64_t vs[][4] = {{16, 5, 64, 80}, {33, 7, 129, 160}, {1, 9, 32, 33}, {64, 1, 256, 512}};
        for (size_t a = 0; a < sizeof vs / sizeof vs[0]; a++) {
            for (int64_t bs0 = 1; bs0 <= 2; bs0++) {
                for (int64_t nr0 = 1; nr0 <= 2; nr0++) {
                    struct p_mul_mat pv = {.ta  = types[ti],
                                           .m   = vs[a][0],
                                           .n   = vs[a][1],
                                           .k   = vs[a][2],
                                           .k_v = vs[a][3],
                                           .bs  = {bs0, 1},
                                           .nr  = {nr0, 1},
                                           .per = {0, 1, 2, 3}};
                    run_case(s, &fam_mul_mat, &pv);
                }
            }
        }
        // larger k, a long batch, and the attention-like shapes of test-backend-ops
        static const struct p_mul_mat big[] = {
            {.m = 16, .n = 1, .k = 1024, .bs = {3, 2}, .nr = {1, 1}},
            // decode at long K with row tails (F16/F32 decode: far streams of rows)
            {.m = 9, .n = 1, .k = 4095, .bs = {1, 1}, .nr = {1, 1}},
            {.m = 8, .n = 1, .k = 4096, .bs = {1, 1}, .nr = {1, 1}},
            {.m = 13, .n = 1, .k = 4111, .bs = {2, 1}, .nr = {1, 1}},
            {.m = 16, .n = 8, .k = 1024, .bs = {3, 2}, .nr = {1, 1}},
            {.m = 16, .n = 8, .k = 256, .bs = {256, 1}, .nr = {1, 1}},
            {.m = 64, .n = 2, .k = 128, .bs = {8, 1}, .nr = {1, 1}},
            {.m = 83, .n = 2, .k = 128, .bs = {8, 1}, .nr = {4, 1}},
            {.m = 64, .n = 45, .k = 128, .bs = {8, 1}, .nr = {4, 1}},
            {.m = 128, .n = 45, .k = 64, .bs = {8, 1}, .nr = {4, 1}},
            {.m = 64, .n = 77, .k = 77, .bs = {12, 1}, .nr = {1, 1}},
            {.m = 1056, .n = 1, .k = 193, .bs = {1, 1}, .nr = {4, 1}, .per = {0, 2, 1, 3}},
            {.m = 1056, .n = 1, .k = 67, .bs = {1, 1}, .nr = {4, 1}, .per = {0, 2, 1, 3}},
        };
        for (size_t a = 0; a < sizeof big / sizeof big[0]; a++) {
            struct p_mul_mat pb = big[a];
            pb.ta               = types[ti];
            if (!has_perm(pb.per)) {
                pb.per[1] = 1, pb.per[2] = 2, pb.per[3] = 3;
            }
            run_case(s, &fam_mul_mat, &pb);
        }
    }
}

static void gen_bin(struct suite * s) {
    static const enum ggml_op   ops[]   = {GGML_OP_ADD, GGML_OP_SUB, GGML_OP_MUL, GGML_OP_DIV};
    static const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    // (ne, nr) from test-backend-ops' test_bin_bcast list, plus odd shapes
    static const struct {
        int64_t ne[4];
        int     nr[4];
    } bc[] = {
        {{1, 1, 8, 1}, {1, 1, 1, 1}},    {{1, 1, 1, 1}, {32, 1, 1, 1}}, {{1, 1, 320, 320}, {1, 1, 1, 1}},
        {{10, 5, 1, 1}, {1, 1, 1, 1}},   {{10, 5, 4, 1}, {1, 1, 1, 1}}, {{10, 5, 4, 3}, {1, 1, 1, 1}},
        {{10, 5, 4, 3}, {2, 1, 1, 1}},   {{10, 5, 4, 3}, {1, 2, 1, 1}}, {{10, 5, 4, 3}, {1, 1, 2, 1}},
        {{10, 5, 4, 3}, {1, 1, 1, 2}},   {{10, 5, 4, 3}, {1, 1, 2, 2}}, {{10, 5, 4, 3}, {1, 2, 2, 2}},
        {{10, 5, 4, 3}, {2, 2, 2, 2}},   {{7, 3, 5, 2}, {3, 1, 1, 1}},  {{33, 1, 1, 1}, {1, 7, 3, 2}},
        {{1, 13, 1, 3}, {129, 1, 2, 1}},
    };
    for (int t = 0; t < 2; t++) {
        for (int o = 0; o < 4; o++) {
            for (size_t i = 0; i < sizeof bc / sizeof bc[0]; i++) {
                for (int perm1 = 0; perm1 <= 1; perm1++) {
                    for (int v0 = 0; v0 <= 1; v0++) {
                        struct p_bin p = {.op = ops[o], .type = types[t], .perm1 = perm1, .v0 = v0};
                        memcpy(p.ne, bc[i].ne, sizeof p.ne);
                        memcpy(p.nr, bc[i].nr, sizeof p.nr);
                        run_case(s, &fam_bin, &p);
                    }
                }
            }
            // src0 and src1 overlapping views of one tensor
            static const int64_t ov[][4] = {{10, 5, 4, 6}, {10, 5, 4, 5}, {1, 1, 120, 120}, {1, 1, 4, 320}};
            for (size_t i = 0; i < 4; i++) {
                struct p_bin p = {.op = ops[o], .type = types[t], .overlap = 1, .nr = {1, 1, 1, 1}};
                memcpy(p.ne, ov[i], sizeof p.ne);
                run_case(s, &fam_bin, &p);
            }
            // stable-diffusion-like wide broadcasts
            static const struct {
                int64_t ne[4];
                int     nr[4];
            } sd[] = {
                {{1280, 1, 1, 1}, {1, 16, 16, 1}},
                {{1280, 16, 16, 1}, {1, 1, 1, 1}},
                {{1, 1, 640, 1}, {32, 32, 1, 1}},
                {{5120, 1, 1, 1}, {1, 64, 1, 1}},
            };
            for (size_t i = 0; i < sizeof sd / sizeof sd[0]; i++) {
                struct p_bin p = {.op = ops[o], .type = types[t]};
                memcpy(p.ne, sd[i].ne, sizeof p.ne);
                memcpy(p.nr, sd[i].nr, sizeof p.nr);
                run_case(s, &fam_bin, &p);
            }
        }
    }
}

static void gen_scale(struct suite * s) {
    static const int64_t shapes[][4] = {
        {10, 10, 10, 10}, {100, 10, 10, 10}, {7, 3, 1, 1}, {4096, 2, 1, 1}, {1, 1, 1, 1}};
    static const float sb[][2] = {{2.0f, 0.0f}, {2.0f, 1.0f}, {0.5f, -0.25f}, {-1.5f, 0.0f}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (size_t j = 0; j < sizeof sb / sizeof sb[0]; j++) {
            struct p_scale p = {.s = sb[j][0], .bias = sb[j][1]};
            memcpy(p.ne, shapes[i], sizeof p.ne);
            run_case(s, &fam_scale, &p);
        }
    }
}

static void gen_cpy(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++) {
            enum ggml_type ts = types[a], td = types[b];
            // as test-backend-ops: contiguous, by rows, src transposed-ish, dst permuted
            struct p_cpy c[] = {
                {ts, td, {256, 4, 4, 4}, {0}, {0}, {0}, 0, {0}},
                {ts, td, {256, 2, 3, 4}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
                {ts, td, {256, 2, 3, 4}, {0}, {1, 0, 2, 3}, {0}, 0, {0}},
                {ts, td, {256, 1, 4, 1}, {0}, {1, 2, 0, 3}, {0}, 0, {0}},
                {ts, td, {256, 4, 3, 1}, {0}, {0}, {0}, 1, {0}},
                {ts, td, {256, 4, 3, 3}, {0}, {0}, {0}, 1, {0}},
                {ts, td, {33, 17, 1, 1}, {0}, {0}, {0}, 1, {0}},
                {ts, td, {128, 2, 3, 1}, {128, 2, 3, 1}, {0}, {0}, 0, {128, 4, 3, 1}},
                {ts, td, {31, 5, 3, 1}, {31, 5, 3, 1}, {0}, {0}, 0, {40, 6, 4, 1}},
            };
            for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
                run_case(s, &fam_cpy, &c[i]);
            }
            // odd row lengths, src and dst permutations
            for (int64_t k = 1; k <= 33; k += (k < 4 ? 1 : 29)) {
                struct p_cpy o[] = {
                    {ts, td, {k, 2, 3, 4}, {0}, {0}, {0}, 0, {0}},
                    {ts, td, {k, 2, 3, 4}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
                    {ts, td, {k, 2, 3, 4}, {0}, {0, 3, 1, 2}, {0, 2, 1, 3}, 0, {0}},
                    {ts, td, {k, 2, 3, 4}, {0}, {0}, {1, 0, 2, 3}, 0, {0}},
                };
                for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) {
                    run_case(s, &fam_cpy, &o[i]);
                }
            }
            // reshaping copies: every permutation of {3,5,7,32} into two fixed shapes
            int64_t          d[4]       = {3, 5, 7, 32};
            static const int idx[24][4] = {
                {0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {0, 3, 2, 1},
                {1, 0, 2, 3}, {1, 0, 3, 2}, {1, 2, 0, 3}, {1, 2, 3, 0}, {1, 3, 0, 2}, {1, 3, 2, 0},
                {2, 0, 1, 3}, {2, 0, 3, 1}, {2, 1, 0, 3}, {2, 1, 3, 0}, {2, 3, 0, 1}, {2, 3, 1, 0},
                {3, 0, 1, 2}, {3, 0, 2, 1}, {3, 1, 0, 2}, {3, 1, 2, 0}, {3, 2, 0, 1}, {3, 2, 1, 0},
            };
            for (int i = 0; i < 24; i += (ts == td ? 1 : 5)) {
                struct p_cpy r1 = {ts, td, {0}, {3, 5, 7, 32}, {0}, {0}, 0, {0}};
                struct p_cpy r2 = {ts, td, {0}, {32, 7, 5, 3}, {0}, {0}, 0, {0}};
                for (int j = 0; j < 4; j++) {
                    r1.ne[j] = r2.ne[j] = d[idx[i][j]];
                }
                if (i != 0) {
                    run_case(s, &fam_cpy, &r1);
                }
                if (i != 23) {
                    run_case(s, &fam_cpy, &r2);
                }
            }
        }
    }

    // CONT (transpose, slice, permutations) and DUP (plain and permuted)
    static const int64_t cshapes[][4] = {{2, 1, 1, 1}, {2, 1, 3, 5},  {2, 3, 5, 7},
                                         {1, 4, 4, 1}, {1, 8, 17, 1}, {10, 10, 10, 1}};
    static const int     cpers[][4]   = {{0, 2, 1, 3}, {1, 2, 0, 3}, {0, 3, 1, 2}, {2, 0, 3, 1}};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof cshapes / sizeof cshapes[0]; i++) {
            for (int view = 0; view <= 2; view++) {
                for (int q = 0; q < (view == 2 ? 4 : 1); q++) {
                    struct p_cont p = {.op = GGML_OP_CONT, .type = types[t], .view = view};
                    memcpy(p.ne, cshapes[i], sizeof p.ne);
                    memcpy(p.per, cpers[q], sizeof p.per);
                    run_case(s, &fam_cont, &p);
                }
            }
        }
        struct p_cont dups[] = {
            {GGML_OP_DUP, types[t], {10, 10, 20, 1}, 2, {0}},
            {GGML_OP_DUP, types[t], {10, 10, 5, 1}, 2, {0, 2, 1, 3}},
            {GGML_OP_DUP, types[t], {10, 10, 5, 1}, 2, {1, 0, 2, 3}},
            {GGML_OP_DUP, types[t], {10, 8, 3, 1}, 2, {1, 2, 0, 3}},
            {GGML_OP_DUP, types[t], {33, 3, 2, 2}, 0, {0}},
        };
        for (size_t i = 0; i < sizeof dups / sizeof dups[0]; i++) {
            run_case(s, &fam_cont, &dups[i]);
        }
    }
}

static void gen_get_rows(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    static const int64_t        ns[]    = {1, 33, 256};
    static const int64_t        ms[]    = {1, 5, 64};
    static const int64_t        rs[]    = {1, 4, 9};
    static const int64_t        be[][2] = {{1, 1}, {7, 1}, {2, 3}};
    for (int t = 0; t < 2; t++) {
        for (size_t a = 0; a < 3; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    for (size_t d = 0; d < 3; d++) {
                        for (int v = 0; v <= (rs[c] >= 2); v++) {
                            struct p_get_rows p = {types[t], ns[a], ms[b], rs[c], be[d][0], be[d][1], v};
                            run_case(s, &fam_get_rows, &p);
                        }
                    }
                }
            }
        }
        // test-backend-ops' larger shapes, scaled down to keep the suite fast
        struct p_get_rows big[] = {
            {types[t], 300 * 256, 5, 4, 1, 2, 0},
            {types[t], 64, 8000, 7000, 2, 1, 0},
            {types[t], 32, 5, 4, 70, 10, 0},
            {types[t], 1, 8, 2, 1, 1, 0},
        };
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
            run_case(s, &fam_get_rows, &big[i]);
        }
    }
}

static void gen_set_rows(struct suite * s) {
    static const enum ggml_type tds[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    static const enum ggml_type tis[] = {GGML_TYPE_I64, GGML_TYPE_I32};
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++) {
            enum ggml_type    td = tds[a], ti = tis[b];
            struct p_set_rows one = {td, ti, {1, 8, 1, 3}, {1, 1}, 2, 0};
            run_case(s, &fam_set_rows, &one);
            for (int64_t bb = 1; bb <= 7; bb += 6) {
                for (int v = 0; v <= 1; v++) {
                    struct p_set_rows c[] = {
                        {td, ti, {256, 5, bb, 3}, {1, 1}, 1, v},
                        {td, ti, {256, 11, 1, bb}, {2, 3}, 7, v},
                        {td, ti, {3, 3, bb, 1}, {2, 3}, 2, v},
                        {td, ti, {31, 3, bb, 1}, {2, 3}, 2, v},
                        {td, ti, {33, 5, 1, bb}, {2, 3}, 1, v},
                        {td, ti, {128, 64, bb, 1}, {1, 1}, 32, v},  // KV-cache-like
                    };
                    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
                        run_case(s, &fam_set_rows, &c[i]);
                    }
                }
            }
        }
    }
}

static void gen_rms_norm(struct suite * s) {
    static const float eps[] = {0.0f, 1e-6f, 1e-4f, 1e-1f, 10.0f};
    for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++) {
        for (int64_t n = 64; n <= 1025; n += 961) {
            for (int v = 0; v <= 1; v++) {
                struct p_rms_norm p = {{n, 5, 4, 3}, v, eps[e]};
                run_case(s, &fam_rms_norm, &p);
            }
        }
    }
    static const int64_t odd[] = {1, 3, 7, 31, 33, 127, 255, 4096};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        for (int v = 0; v <= 1; v++) {
            struct p_rms_norm p = {{odd[i] * (v ? 2 : 1), 3, 2, 2}, v, 1e-6f};
            run_case(s, &fam_rms_norm, &p);
        }
    }
}

static void gen_soft_max(struct suite * s) {
    static const enum ggml_type precs[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int mask = 0; mask <= 2; mask++) {
        for (int sinks = 0; sinks <= 1; sinks++) {
            for (int ab = 0; ab <= 1; ab++) {
                float max_bias = ab ? 8.0f : 0.0f;
                if (!mask && ab) {
                    continue;  // ALiBi needs the mask
                }
                for (int sc = 0; sc <= 1; sc++) {
                    float scale = sc ? 0.1f : 1.0f;
                    for (int64_t ne0 = 16; ne0 <= 1024; ne0 *= 64) {
                        for (int64_t ne1 = 16; ne1 <= 64; ne1 *= 4) {
                            for (int pr = 0; pr < (mask ? 2 : 1); pr++) {
                                struct p_soft_max p[] = {
                                    {{ne0, ne1, 1, 1}, mask, precs[pr], {1, 1}, scale, max_bias, sinks},
                                    {{ne0 - 1, ne1 - 1, 1, 1}, mask, precs[pr], {1, 1}, scale, max_bias, sinks},
                                    {{ne0, ne1, 1, 3}, mask, precs[pr], {3, 1}, scale, max_bias, sinks},
                                    {{ne0 - 1, ne1 - 1, 1, 1}, mask, precs[pr], {2, 3}, scale, max_bias, sinks},
                                };
                                for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
                                    if (i >= 2 && (!mask || ne0 > 32)) {
                                        continue;  // broadcast cases: small, masked
                                    }
                                    run_case(s, &fam_soft_max, &p[i]);
                                }
                            }
                        }
                    }
                }
            }
            // attention-like: 32 heads sharing one mask
            for (int pr = 0; pr < 2; pr++) {
                struct p_soft_max p = {{32, 2, 32, 1}, mask, precs[pr], {1, 1}, 0.1f, 0.0f, sinks};
                run_case(s, &fam_soft_max, &p);
                if (mask) {
                    p.max_bias = 8.0f;
                    run_case(s, &fam_soft_max, &p);
                }
            }
        }
    }
}

static void gen_rope(struct suite * s) {
    static const float fss[] = {1.0f, 1.4245f}, efs[] = {0.0f, 0.7465f}, afs[] = {1.0f, 1.4245f};
    int                all = 1;  // the full shape list once, the main shapes for every parameter set
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++) {
            for (int c = 0; c < 2; c++) {
                for (int ff = 0; ff <= 1; ff++) {
                    for (int v = 0; v <= 1; v++) {
                        struct p_rope base = {.n_ctx     = 512,
                                              .fs        = fss[a],
                                              .ef        = efs[b],
                                              .af        = afs[c],
                                              .beta_fast = 1.0f,
                                              .beta_slow = 1.0f,
                                              .ff        = ff,
                                              .v         = v};
                        struct {
                            int64_t ne[4];
                            int     n_dims, mode;
                        } sh[] = {
                            {{128, 32, 2, 1}, 128, 0},  // llama 7B
                            {{64, 128, 2, 1}, 64, 2},   // neox (falcon 40B)
                            {{80, 32, 2, 1}, 32, 0},    // partial rotation
                            {{80, 32, 2, 1}, 32, 2},    // neox, partial (phi-2)
                            {{128, 40, 2, 1}, 128, 0}, {{128, 52, 2, 1}, 128, 0}, {{128, 64, 2, 1}, 128, 0},
                            {{16, 16, 256, 1}, 16, 0}, {{64, 1, 2, 1}, 64, 2},    {{64, 71, 2, 1}, 64, 2},
                            {{64, 8, 2, 1}, 64, 2},    {{80, 32, 2, 1}, 20, 0},   {{80, 32, 4, 1}, 32, 0},
                            {{80, 32, 2, 1}, 20, 2},   {{80, 32, 4, 1}, 32, 2},   {{16, 16, 256, 1}, 16, 2},
                        };
                        size_t nsh = all ? sizeof sh / sizeof sh[0] : 4;
                        for (size_t i = 0; i < nsh; i++) {
                            struct p_rope p = base;
                            memcpy(p.ne, sh[i].ne, sizeof p.ne);
                            p.n_dims = sh[i].n_dims, p.mode = sh[i].mode;
                            run_case(s, &fam_rope, &p);
                        }
                        if (v == 0) {  // a view starting halfway along dim 0 (rope_2d style)
                            for (int mode = 0; mode <= 2; mode += 2) {
                                struct p_rope p     = base;
                                int64_t       ne[4] = {36, 16, 57, 1};
                                memcpy(p.ne, ne, sizeof p.ne);
                                p.n_dims = 36, p.mode = mode, p.v = 2;
                                run_case(s, &fam_rope, &p);
                            }
                        }
                    }
                }
                all = 0;
            }
        }
    }
    // YaRN as llama.cpp runs it: real n_ctx_orig and beta_fast/slow, long positions
    for (int mode = 0; mode <= 2; mode += 2) {
        for (int ff = 0; ff <= 1; ff++) {
            for (int nd = 0; nd <= 1; nd++) {
                struct p_rope p = {.ne         = {128, 8, 5, 1},
                                   .n_dims     = nd ? 64 : 128,
                                   .mode       = mode,
                                   .n_ctx      = 32768,
                                   .n_ctx_orig = 4096,
                                   .fs         = 0.125f,
                                   .ef         = 1.0f,
                                   .af         = 1.0f,
                                   .beta_fast  = 32.0f,
                                   .beta_slow  = 1.0f,
                                   .ff         = ff,
                                   .v          = nd};
                run_case(s, &fam_rope, &p);
            }
        }
    }
}

static void gen_unary(struct suite * s) {
    static const int64_t        shapes[][4] = {{128, 2, 2, 2}, {5, 7, 11, 13}, {1, 1, 1, 1}, {4096, 3, 1, 1}};
    static const enum ggml_type types[]     = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            for (int v = 0; v <= 1; v++) {
                struct p_unary p = {GGML_UNARY_OP_SILU, types[t], {0}, v};
                memcpy(p.ne, shapes[i], sizeof p.ne);
                run_case(s, &fam_unary, &p);
            }
        }
    }
}

static void gen_glu(struct suite * s) {
    static const int64_t        shapes[][4] = {{128, 2, 2, 2}, {5, 7, 11, 13}, {2, 1, 1, 1}, {1024, 3, 1, 1}};
    static const enum ggml_type types[]     = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            for (int v = 0; v <= 1; v++) {
                for (int form = 0; form < 3; form++) {  // fused, fused swapped, split
                    struct p_glu p = {GGML_GLU_OP_SWIGLU, types[t], {0}, v, form == 1, form == 2};
                    memcpy(p.ne, shapes[i], sizeof p.ne);
                    run_case(s, &fam_glu, &p);
                }
            }
        }
    }
}

static void gen_flash_attn_ext(struct suite * s) {
    static const int64_t        hs[][2] = {{64, 64}, {80, 80}, {96, 96}, {128, 128}, {256, 256}, {192, 128}};
    static const enum ggml_type tkv[]   = {GGML_TYPE_F16, GGML_TYPE_F32};
    // head sizes x KV types x shapes (permuted as llama.cpp builds them)
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++) {
        for (int t = 0; t < 2; t++) {
            for (int64_t kv = 113; kv <= 512; kv = kv == 113 ? 512 : 1024) {
                static const int64_t nbs[] = {1, 3, 35};
                for (int i = 0; i < 3; i++) {
                    for (int64_t nr2 = 1; nr2 <= 4; nr2 *= 4) {
                        struct p_fa p = {hs[h][0], hs[h][1], 2,    nr2,    1, kv, nbs[i],       1,
                                         0,        0.0f,     0.0f, tkv[t], 1, 0,  GGML_TYPE_F32};
                        run_case(s, &fam_fa, &p);
                    }
                }
            }
        }
    }
    // mask, sinks, ALiBi, softcap at two head sizes
    for (int h = 0; h < 2; h++) {
        for (int mask = 0; mask <= 2; mask++) {
            for (int sinks = 0; sinks <= 1; sinks++) {
                for (int ab = 0; ab <= (mask ? 1 : 0); ab++) {
                    for (int sc = 0; sc <= 1; sc++) {
                        for (int64_t nb = 1; nb <= 32; nb *= 32) {
                            for (int t = 0; t < 2; t++) {
                                struct p_fa p = {
                                    h ? 128 : 64,     h ? 128 : 64,      4,      1, 1, 200,          nb, mask, sinks,
                                    ab ? 8.0f : 0.0f, sc ? 10.0f : 0.0f, tkv[t], 1, 0, GGML_TYPE_F32};
                                run_case(s, &fam_fa, &p);
                            }
                        }
                    }
                }
            }
        }
    }
    // GQA ratios, dim-3 batches, unpermuted layout
    for (int64_t nr2 = 1; nr2 <= 8; nr2 *= 2) {
        for (int64_t nr3 = 1; nr3 <= 3; nr3 += 2) {
            for (int64_t nb = 1; nb <= 7; nb += 6) {
                for (int perm = 0; perm <= 1; perm++) {
                    struct p_fa p = {128,      128,  2,    nr2,           nr3,  97, nb,           1,
                                     nr2 == 2, 0.0f, 0.0f, GGML_TYPE_F16, perm, 0,  GGML_TYPE_F32};
                    run_case(s, &fam_fa, &p);
                }
            }
        }
    }
    // decode against long KV (the KV split), and a prefill long enough for several items per head
    static const int64_t kvs[] = {1024, 4096};
    for (int i = 0; i < 2; i++) {
        for (int64_t nr2 = 1; nr2 <= 8; nr2 *= 8) {
            for (int sinks = 0; sinks <= 1; sinks++) {
                struct p_fa p = {128,           128, 2, nr2,          1, kvs[i], 1, 1, sinks, 0.0f, 0.0f,
                                 GGML_TYPE_F16, 1,   0, GGML_TYPE_F32};
                run_case(s, &fam_fa, &p);
            }
        }
    }
    // one KV head: fewer items than workers even on two, so the KV split and merge run
    for (int64_t nr2 = 1; nr2 <= 4; nr2 *= 4) {
        for (int sinks = 0; sinks <= 1; sinks++) {
            for (int64_t kv = 300; kv <= 1024; kv = kv == 300 ? 1024 : 2048) {
                struct p_fa p = {128,           128, 1, nr2,          1, kv, 1, 1, sinks, 0.0f, sinks ? 10.0f : 0.0f,
                                 GGML_TYPE_F16, 1,   0, GGML_TYPE_F32};
                run_case(s, &fam_fa, &p);
            }
        }
    }
    struct p_fa pre = {64, 64, 1, 1, 1, 512, 512, 1, 0, 0.0f, 0.0f, GGML_TYPE_F16, 1, 0, GGML_TYPE_F32};
    run_case(s, &fam_fa, &pre);
}

// FLASH_ATTN_EXT over a quantized or BF16 KV cache (llama.cpp's type_k /
// type_v with flash attention), as test-backend-ops' type_KV sweep: block
// types need head sizes of whole blocks, BF16 takes the odd ones too. Every
// case must be claimed (a refusal fails).
static void run_fa_q(struct suite * s, const struct p_fa * p) {
    run_case(s, &fam_fa, p);
}

static void gen_flash_attn_ext_q(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1,
                                           GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL};
    const int                   nt      = (int)(sizeof types / sizeof types[0]);
    for (int t = 0; t < nt; t++) {
        // the main head sizes x KV lengths x tokens x GQA
        for (int64_t hs = 64; hs <= 128; hs *= 2) {
            for (int64_t kv = 113; kv <= 512; kv = kv == 113 ? 512 : 1024) {
                for (int64_t nb = 1; nb <= 35; nb = nb == 1 ? 35 : 36) {
                    for (int64_t nr2 = 1; nr2 <= 4; nr2 *= 4) {
                        struct p_fa p = {hs, hs, 2, nr2, 1, kv, nb, 1, 0, 0.0f, 0.0f, types[t], 1, 0, GGML_TYPE_F32};
                        run_fa_q(s, &p);
                    }
                }
            }
        }
        // other head sizes (K and V sizes differing as DeepSeek's), BF16's odd ones
        static const int64_t hs[][2] = {{96, 96}, {192, 128}, {256, 256}, {576, 512},
                                        {40, 40}, {72, 72},   {80, 80},   {112, 112}};
        for (int h = 0; h < (types[t] == GGML_TYPE_BF16 ? 8 : 4); h++) {
            for (int64_t nb = 1; nb <= 3; nb += 2) {
                struct p_fa p = {hs[h][0], hs[h][1], 2, 4, 1, 113, nb, 1, 0, 0.0f, 0.0f, types[t], 1, 0, GGML_TYPE_F32};
                run_fa_q(s, &p);
            }
        }
        // every option at once, once per type
        struct p_fa all = {64, 64, 2, 4, 1, 200, 3, 2, 1, 8.0f, 10.0f, types[t], 1, 0, GGML_TYPE_F32};
        run_fa_q(s, &all);
    }
    // K and V of different types
    static const enum ggml_type kvs[][2] = {
        {GGML_TYPE_Q8_0, GGML_TYPE_F16},  {GGML_TYPE_F16, GGML_TYPE_Q8_0},  {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0},
        {GGML_TYPE_Q8_0, GGML_TYPE_Q4_1}, {GGML_TYPE_Q5_1, GGML_TYPE_Q5_0}, {GGML_TYPE_IQ4_NL, GGML_TYPE_F32},
        {GGML_TYPE_BF16, GGML_TYPE_Q4_0}, {GGML_TYPE_Q4_1, GGML_TYPE_BF16}, {GGML_TYPE_F32, GGML_TYPE_IQ4_NL}};
    for (size_t i = 0; i < sizeof kvs / sizeof kvs[0]; i++) {
        for (int64_t nb = 1; nb <= 32; nb *= 32) {
            struct p_fa p = {128, 128, 2, 4, 1, 200, nb, 1, 0, 0.0f, 0.0f, kvs[i][0], 1, 1, kvs[i][1]};
            run_fa_q(s, &p);
        }
    }
    // mask, sinks, ALiBi, softcap: Q8_0 (q8_0 dot) and Q4_1 (q8_1 dot, the min term)
    static const enum ggml_type opt_types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_1};
    for (int t = 0; t < 2; t++) {
        for (int mask = 0; mask <= 2; mask++) {
            for (int sinks = 0; sinks <= 1; sinks++) {
                for (int ab = 0; ab <= (mask ? 1 : 0); ab++) {
                    for (int sc = 0; sc <= 1; sc++) {
                        for (int64_t nb = 1; nb <= 32; nb *= 32) {
                            struct p_fa p = {64,
                                             64,
                                             4,
                                             1,
                                             1,
                                             200,
                                             nb,
                                             mask,
                                             sinks,
                                             ab ? 8.0f : 0.0f,
                                             sc ? 10.0f : 0.0f,
                                             opt_types[t],
                                             1,
                                             0,
                                             GGML_TYPE_F32};
                            run_fa_q(s, &p);
                        }
                    }
                }
            }
        }
    }
    // GQA ratios, dim-3 batches, unpermuted layout
    for (int t = 0; t < 2; t++) {
        for (int64_t nr2 = 1; nr2 <= 8; nr2 *= 2) {
            for (int64_t nr3 = 1; nr3 <= 3; nr3 += 2) {
                for (int perm = 0; perm <= 1; perm++) {
                    struct p_fa p = {128,  128,  2,
                                     nr2,  nr3,  97,
                                     7,    1,    nr2 == 2,
                                     0.0f, 0.0f, t ? GGML_TYPE_Q5_1 : GGML_TYPE_Q8_0,
                                     perm, 0,    GGML_TYPE_F32};
                    run_fa_q(s, &p);
                }
            }
        }
    }
    // decode against long KV (the KV split and merge), one KV head as well
    static const enum ggml_type long_types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q5_0};
    for (int t = 0; t < 3; t++) {
        for (int64_t kv = 1024; kv <= 4096; kv *= 4) {
            for (int64_t nr2 = 1; nr2 <= 8; nr2 *= 8) {
                struct p_fa p = {128,           128, 2, nr2,          1, kv, 1, 1, nr2 == 8, 0.0f, 0.0f,
                                 long_types[t], 1,   0, GGML_TYPE_F32};
                run_fa_q(s, &p);
            }
        }
        struct p_fa one = {64, 64, 1, 4, 1, 1024, 1, 1, 1, 0.0f, 0.0f, long_types[t], 1, 0, GGML_TYPE_F32};
        run_fa_q(s, &one);
    }
}

static void gen_rope_multi(struct suite * s) {
    static const float fss[] = {1.0f, 1.4245f}, efs[] = {0.0f, 0.7465f}, afs[] = {1.0f, 1.4245f};
    static const struct {
        int64_t ne[4];
        int     n_dims, mode;
    } sh[] = {
        {{128, 12, 2, 1}, 128, GGML_ROPE_TYPE_MROPE},  {{128, 28, 2, 1}, 128, GGML_ROPE_TYPE_MROPE},
        {{128, 12, 2, 1}, 20, GGML_ROPE_TYPE_MROPE},   {{128, 28, 2, 1}, 32, GGML_ROPE_TYPE_MROPE},
        {{128, 12, 2, 1}, 128, GGML_ROPE_TYPE_IMROPE}, {{128, 28, 2, 1}, 128, GGML_ROPE_TYPE_IMROPE},
        {{128, 12, 2, 1}, 20, GGML_ROPE_TYPE_IMROPE},  {{128, 28, 2, 1}, 32, GGML_ROPE_TYPE_IMROPE},
        {{80, 16, 2, 1}, 80, GGML_ROPE_TYPE_VISION},   {{128, 16, 2, 1}, 128, GGML_ROPE_TYPE_VISION},
        {{64, 4, 9, 2}, 64, GGML_ROPE_TYPE_MROPE},     {{64, 4, 9, 2}, 64, GGML_ROPE_TYPE_VISION},
    };
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++) {
            for (int c = 0; c < 2; c++) {
                for (int ff = 0; ff <= 1; ff++) {
                    for (int v = 0; v <= 1; v++) {
                        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                            struct p_rope p = {.n_ctx     = 512,
                                               .fs        = fss[a],
                                               .ef        = efs[b],
                                               .af        = afs[c],
                                               .beta_fast = 1.0f,
                                               .beta_slow = 1.0f,
                                               .ff        = ff,
                                               .v         = v};
                            memcpy(p.ne, sh[i].ne, sizeof p.ne);
                            p.n_dims = sh[i].n_dims, p.mode = sh[i].mode;
                            run_case(s, &fam_rope_multi, &p);
                        }
                    }
                }
            }
        }
    }
}

// ggml-cpu computes F32 GELU (|x| < 10), GELU_QUICK and GEGLU through an fp16
// table: its own error is about 5e-8 NMSE on average (measured), half the
// threshold, so only a handful of elements can exceed it by chance against an
// exact fp32 result. As test-backend-ops, those ops are judged on whole
// tensors; the F16 forms (both sides round to fp16) keep every shape.
static int tiny_vs_table(int table_op, enum ggml_type type, const int64_t * ne) {
    return table_op && type == GGML_TYPE_F32 && ne[0] * ne[1] * ne[2] * ne[3] < 64;
}

static void gen_unary_more(struct suite * s) {
    static const enum ggml_unary_op ops[]       = {GGML_UNARY_OP_GELU, GGML_UNARY_OP_GELU_QUICK, GGML_UNARY_OP_SIGMOID,
                                                   GGML_UNARY_OP_NEG,  GGML_UNARY_OP_EXP,        GGML_UNARY_OP_SOFTPLUS,
                                                   GGML_UNARY_OP_TANH};
    static const int64_t            shapes[][4] = {{128, 2, 2, 2}, {5, 7, 11, 13}, {1, 1, 1, 1}, {4096, 3, 1, 1}};
    static const enum ggml_type     types[]     = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (int t = 0; t < 2; t++) {
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                for (int v = 0; v <= 1; v++) {
                    if (tiny_vs_table(ops[o] == GGML_UNARY_OP_GELU || ops[o] == GGML_UNARY_OP_GELU_QUICK, types[t],
                                      shapes[i])) {
                        continue;
                    }
                    struct p_unary p = {ops[o], types[t], {0}, v};
                    memcpy(p.ne, shapes[i], sizeof p.ne);
                    run_case(s, &fam_unary_more, &p);
                }
            }
        }
    }
}

static void gen_ew1(struct suite * s) {
    static const enum ggml_op   ops[]       = {GGML_OP_SQR, GGML_OP_SQRT, GGML_OP_CLAMP};
    static const enum ggml_type types[]     = {GGML_TYPE_F32, GGML_TYPE_F16};
    static const int64_t        shapes[][4] = {{10, 5, 4, 3}, {10, 3, 3, 2}, {1, 1, 1, 1}, {1000, 3, 1, 1}};
    static const float          mm[][2]     = {{-0.5f, 0.5f}, {-1e30f, 0.25f}, {0.0f, 1e30f}};
    for (int o = 0; o < 3; o++) {
        for (int t = 0; t < 2; t++) {
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                // ggml-cpu's CLAMP walks rows as if contiguous: views only for SQR, SQRT.
                for (int v = 0; v <= (ops[o] != GGML_OP_CLAMP); v++) {
                    for (int m = 0; m < (ops[o] == GGML_OP_CLAMP ? 3 : 1); m++) {
                        struct p_ew1 p = {ops[o], types[t], {0}, v, mm[m][0], mm[m][1]};
                        memcpy(p.ne, shapes[i], sizeof p.ne);
                        run_case(s, &fam_ew1, &p);
                    }
                }
            }
        }
    }
}

static void gen_glu_more(struct suite * s) {
    static const int64_t        shapes[][4] = {{128, 2, 2, 2}, {5, 7, 11, 13}, {2, 1, 1, 1}, {1024, 3, 1, 1}};
    static const enum ggml_type types[]     = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            for (int v = 0; v <= 1; v++) {
                for (int form = 0; form < 3; form++) {  // fused, fused swapped, split
                    if (tiny_vs_table(1, types[t], shapes[i])) {
                        continue;
                    }
                    struct p_glu p = {GGML_GLU_OP_GEGLU, types[t], {0}, v, form == 1, form == 2};
                    memcpy(p.ne, shapes[i], sizeof p.ne);
                    run_case(s, &fam_glu, &p);
                }
            }
        }
    }
    // SWIGLU_OAI (split only), gpt-oss's alpha and limit and others
    static const float al[][2] = {{1.702f, 7.0f}, {1.0f, 1.0f}, {0.5f, 200.0f}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int v = 0; v <= 1; v++) {
            for (int k = 0; k < 3; k++) {
                struct p_oai p = {{0}, v, al[k][0], al[k][1]};
                memcpy(p.ne, shapes[i], sizeof p.ne);
                run_case(s, &fam_oai, &p);
            }
        }
    }
}

static void gen_norm(struct suite * s) {
    static const enum ggml_op ops[]       = {GGML_OP_NORM, GGML_OP_L2_NORM};
    static const float        epss[2][3]  = {{1e-6f, 1e-5f, 1e-1f}, {1e-12f, 1e-6f, 10.0f}};
    static const int64_t      shapes[][4] = {{64, 5, 4, 3}, {1025, 5, 4, 3}, {2, 2, 2, 2},
                                             {33, 3, 2, 2}, {4096, 2, 1, 1}, {1, 3, 1, 1}};
    for (int o = 0; o < 2; o++) {
        for (int e = 0; e < 3; e++) {
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                for (int v = 0; v <= 1; v++) {
                    for (int nc = 0; nc <= 1; nc++) {
                        if ((e > 0 && i > 1) ||
                            (v && (shapes[i][0] < 2 || shapes[i][1] < 2 || shapes[i][2] < 2 || shapes[i][3] < 2))) {
                            continue;  // every eps on the main shapes; halving a 1 gives nothing
                        }
                        struct p_norm p = {ops[o], {0}, v, nc, epss[o][e]};
                        memcpy(p.ne, shapes[i], sizeof p.ne);
                        run_case(s, &fam_norm, &p);
                    }
                }
            }
        }
    }
}

static void gen_sum_rows(struct suite * s) {
    static const int64_t shapes[][4] = {{10, 5, 4, 3},   {11, 5, 6, 3}, {1, 1, 1, 1},
                                        {4096, 3, 2, 2}, {33, 1, 4, 5}, {1025, 2, 2, 3}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int perm = 0; perm <= 1; perm++) {
            for (int slice = 0; slice <= 1; slice++) {
                if (slice && (shapes[i][2] < 2 || shapes[i][3] < 2)) {
                    continue;
                }
                struct p_sum_rows p = {{0}, perm, slice};
                memcpy(p.ne, shapes[i], sizeof p.ne);
                run_case(s, &fam_sum_rows, &p);
            }
        }
    }
}

static void gen_cumsum(struct suite * s) {
    static const int64_t shapes[][4] = {{10, 5, 4, 3},   {1, 1, 1, 1},    {127, 3, 2, 1},
                                        {4096, 2, 1, 1}, {2049, 1, 1, 3}, {33, 7, 1, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int v = 0; v <= 1; v++) {
            struct p_cumsum p = {{0}, v};
            memcpy(p.ne, shapes[i], sizeof p.ne);
            run_case(s, &fam_cumsum, &p);
        }
    }
}

static void gen_argsort(struct suite * s) {
    static const int64_t shapes[][4] = {{16, 10, 10, 10}, {60, 10, 10, 10}, {1023, 2, 1, 3}, {1024, 4, 1, 1},
                                        {16384, 1, 1, 1}, {1, 1, 1, 1},     {3, 5, 1, 1},    {17, 1, 2, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int o = 0; o <= 1; o++) {
            struct p_argsort p = {{0}, o ? GGML_SORT_ORDER_DESC : GGML_SORT_ORDER_ASC};
            memcpy(p.ne, shapes[i], sizeof p.ne);
            run_case(s, &fam_argsort, &p);
        }
    }
}

static void gen_concat(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int t = 0; t < 2; t++) {
        for (int dim = 0; dim < 4; dim++) {
            for (int v = 0; v < 4; v++) {
                struct p_concat p = {types[t], {11, 12, 13, 14}, 7, dim, v};
                run_case(s, &fam_concat, &p);
            }
            struct p_concat q = {types[t], {1, 1, 1, 1}, 1, dim, 0};
            run_case(s, &fam_concat, &q);
            struct p_concat r = {types[t], {300, 2, 3, 1}, 5, dim, 3};
            run_case(s, &fam_concat, &r);
        }
    }
}

static void gen_repeat(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16};
    static const struct {
        int64_t ne[4];
        int     nr[4];
    } rc[] = {
        {{10, 5, 4, 3}, {2, 2, 2, 2}}, {{10, 5, 4, 3}, {1, 1, 1, 1}}, {{1, 1, 1, 1}, {7, 3, 2, 2}},
        {{7, 3, 1, 2}, {5, 1, 4, 1}},  {{64, 1, 8, 1}, {1, 9, 1, 3}}, {{1, 5, 1, 1}, {300, 1, 2, 1}},
    };
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++) {
            for (int v = 0; v <= 1; v++) {
                struct p_repeat p = {types[t], {0}, {0}, v};
                memcpy(p.ne, rc[i].ne, sizeof p.ne);
                memcpy(p.nr, rc[i].nr, sizeof p.nr);
                run_case(s, &fam_repeat, &p);
            }
        }
    }
}

static void gen_pad(struct suite * s) {
    static const struct {
        int64_t ne[4];
        int     lp[4], rp[4];
    } pc[] = {
        {{512, 34, 1, 1}, {0, 0, 0, 0}, {1, 1, 0, 0}},  // ggml_pad(a, 1, 1, 0, 0)
        {{33, 17, 3, 2}, {1, 1, 1, 1}, {1, 1, 1, 1}},  {{33, 17, 3, 2}, {3, 0, 2, 0}, {0, 4, 0, 1}},
        {{1, 1, 1, 1}, {2, 3, 1, 0}, {5, 0, 0, 2}},    {{64, 4, 5, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}},
        {{7, 6, 5, 4}, {9, 0, 0, 0}, {0, 0, 3, 0}},    {{16, 8, 6, 4}, {3, 2, 1, 0}, {5, 1, 0, 2}},
    };
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        // ggml-cpu wraps circular pads only up to one period: wider pads zero-padded only.
        int wide = 0;
        for (int k = 0; k < 4; k++) {
            wide |= pc[i].lp[k] > pc[i].ne[k] / 2 || pc[i].rp[k] > pc[i].ne[k] / 2;
        }
        for (int tfrm = 0; tfrm < 3; tfrm++) {
            for (int circ = 0; circ <= !wide; circ++) {
                struct p_pad p = {{0}, {0}, {0}, tfrm, circ};
                memcpy(p.ne, pc[i].ne, sizeof p.ne);
                memcpy(p.lp, pc[i].lp, sizeof p.lp);
                memcpy(p.rp, pc[i].rp, sizeof p.rp);
                run_case(s, &fam_pad, &p);
            }
        }
    }
}

static void gen_place(struct suite * s) {
    static const int64_t dshapes[][4] = {{10, 1, 4, 3}, {1, 1, 1, 1}, {33, 1, 2, 1}};
    for (size_t i = 0; i < 3; i++) {
        struct p_place p = {GGML_OP_DIAG, GGML_TYPE_F32, {0}, 0, 0.0f};
        memcpy(p.ne, dshapes[i], sizeof p.ne);
        run_case(s, &fam_place, &p);
    }
    static const int64_t            tshapes[][4] = {{10, 10, 4, 3}, {1, 1, 1, 1}, {33, 33, 2, 1}, {130, 130, 1, 1}};
    static const enum ggml_tri_type tris[] = {GGML_TRI_TYPE_UPPER_DIAG, GGML_TRI_TYPE_UPPER, GGML_TRI_TYPE_LOWER_DIAG,
                                              GGML_TRI_TYPE_LOWER};
    for (size_t i = 0; i < 4; i++) {
        for (int k = 0; k < 4; k++) {
            struct p_place p = {GGML_OP_TRI, GGML_TYPE_F32, {0}, tris[k], 0.0f};
            memcpy(p.ne, tshapes[i], sizeof p.ne);
            run_case(s, &fam_place, &p);
        }
    }
    static const int64_t        fshapes[][4] = {{10, 10, 4, 3}, {1, 1, 1, 1}, {303, 2, 1, 1}};
    static const float          cs[]         = {0.0f, -1.5f, 3.14159f};
    static const enum ggml_type types[]      = {GGML_TYPE_F32, GGML_TYPE_F16};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < 3; i++) {
            for (int k = 0; k < 3; k++) {
                struct p_place p = {GGML_OP_FILL, types[t], {0}, 0, cs[k]};
                memcpy(p.ne, fshapes[i], sizeof p.ne);
                run_case(s, &fam_place, &p);
            }
        }
    }
}

static void gen_add_id(struct suite * s) {
    static const struct p_add_id c[] = {
        {128, 16, 8, 10}, {129, 5, 5, 3}, {1, 4, 2, 1}, {2880, 32, 4, 7}, {33, 8, 1, 1}, {64, 2, 2, 40},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        run_case(s, &fam_add_id, &c[i]);
    }
}

// ---- K-quant weights (Q2_K .. Q6_K, IQ4_XS): MUL_MAT, MUL_MAT_ID, GET_ROWS -------
// Rows are whole super-blocks (k a multiple of 256); m and n odd and around
// the kernels' 16-row groups and 4-column blocks.

static const enum ggml_type kq_types[] = {GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
                                          GGML_TYPE_Q3_K, GGML_TYPE_Q2_K, GGML_TYPE_IQ4_XS};
#define KQ_NTYPES ((int)(sizeof kq_types / sizeof kq_types[0]))

struct p_mul_mat_id {
    enum ggml_type ta;
    int64_t        m, k, n_as, n_used, b_rows, t;  // b_rows: src1 rows per token (1 or n_used)
};

static struct ggml_tensor * build_mul_mat_id(struct tb * b, const void * pv) {
    const struct p_mul_mat_id * p   = pv;
    struct ggml_tensor *        as  = tb_new(b, p->ta, p->k, p->m, p->n_as, 1, "as");
    struct ggml_tensor *        x   = tb_new(b, GGML_TYPE_F32, p->k, p->b_rows, p->t, 1, "b");
    struct ggml_tensor *        ids = tb_new(b, GGML_TYPE_I32, p->n_used, p->t, 1, 1, "ids");
    return ggml_mul_mat_id(b->ctx, as, x, ids);
}

static void desc_mul_mat_id(const void * pv, char * s, size_t n) {
    const struct p_mul_mat_id * p = pv;
    cat(s, n,
        "type_a=%s,type_b=f32,m=%" PRId64 ",k=%" PRId64 ",n_as=%" PRId64 ",n_used=%" PRId64 ",b_rows=%" PRId64
        ",t=%" PRId64,
        tname(p->ta), p->m, p->k, p->n_as, p->n_used, p->b_rows, p->t);
}

static int init_mul_mat_id(const void * pv, const struct ggml_tensor * t, struct rng * r, float * v) {
    const struct p_mul_mat_id * p = pv;
    if (strcmp(t->name, "ids") != 0) {
        return 0;
    }
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        v[i] = (float)rng_below(r, p->n_as);
    }
    return 1;
}

static const struct op_family fam_mul_mat_id = {
    build_mul_mat_id, desc_mul_mat_id, init_mul_mat_id, max_err_mul_mat, -1.0f, 1.0f,
};

static void gen_mul_mat_kq(struct suite * s) {
    static const int64_t ms[]     = {1, 16, 17, 45};
    static const int64_t ns[]     = {1, 3, 4, 9};
    static const int64_t ks[]     = {256, 768};
    static const int64_t bss[][2] = {{1, 1}, {3, 2}};
    static const int64_t nrs[][2] = {{1, 1}, {2, 1}};
    for (int ti = 0; ti < KQ_NTYPES; ti++) {
        for (size_t a = 0; a < 4; a++) {
            for (size_t b = 0; b < 4; b++) {
                for (size_t c = 0; c < 2; c++) {
                    for (int bc = 0; bc < 2; bc++) {
                        struct p_mul_mat p = {
                            .ta = kq_types[ti], .m = ms[a], .n = ns[b], .k = ks[c], .per = {0, 1, 2, 3}};
                        memcpy(p.bs, bss[bc], sizeof p.bs);
                        memcpy(p.nr, nrs[bc], sizeof p.nr);
                        run_case(s, &fam_mul_mat, &p);
                    }
                }
            }
        }
        // prefill-like and decode-like shapes
        // (and decode of 1000 rows: many tiles a worker, the last of 3 row groups)
        static const int64_t big[][3] = {{64, 130, 1024}, {128, 1, 2048}, {33, 70, 512}, {1000, 1, 256}};
        for (size_t a = 0; a < 4; a++) {
            struct p_mul_mat p = {.ta  = kq_types[ti],
                                  .m   = big[a][0],
                                  .n   = big[a][1],
                                  .k   = big[a][2],
                                  .bs  = {1, 1},
                                  .nr  = {1, 1},
                                  .per = {0, 1, 2, 3}};
            run_case(s, &fam_mul_mat, &p);
        }
    }
}

static void gen_mul_mat_id_kq(struct suite * s) {
    static const struct p_mul_mat_id cs[] = {
        {0, 16, 256, 4, 2, 2, 1}, {0, 17, 256, 4, 2, 1, 5},   {0, 33, 512, 8, 4, 4, 7},
        {0, 5, 256, 3, 3, 1, 2},  {0, 64, 256, 16, 4, 4, 33},
    };
    for (int ti = 0; ti < KQ_NTYPES; ti++) {
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            struct p_mul_mat_id p = cs[i];
            p.ta                  = kq_types[ti];
            run_case(s, &fam_mul_mat_id, &p);
        }
    }
}

static void gen_get_rows_kq(struct suite * s) {
    static const int64_t ns[]    = {256, 768};
    static const int64_t ms[]    = {1, 5, 37};
    static const int64_t rs[]    = {1, 4, 9};
    static const int64_t be[][2] = {{1, 1}, {2, 3}};
    for (int t = 0; t < KQ_NTYPES; t++) {
        for (size_t a = 0; a < 2; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    for (size_t d = 0; d < 2; d++) {
                        struct p_get_rows p = {kq_types[t], ns[a], ms[b], rs[c], be[d][0], be[d][1], 0};
                        run_case(s, &fam_get_rows, &p);
                    }
                }
            }
        }
    }
}

// ---- IQ codebook weights (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M): MUL_MAT, MUL_MAT_ID,
// GET_ROWS, CPY into F32. One type list: an IQ type the NPU gets kernels for
// (contract/iq-tiles.h) is one more line here. Shapes as the K-quants'
// (k = 256 .. 4096, broadcast), plus permuted and non-contiguous operands
// (plain rows) and both buffers (tiled weights).

static const enum ggml_type iq_types[] = {GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS,
                                          GGML_TYPE_IQ3_S,   GGML_TYPE_IQ1_S,  GGML_TYPE_IQ1_M};
#define IQ_NTYPES ((int)(sizeof iq_types / sizeof iq_types[0]))

static void run_case_both(struct suite * s, const struct op_family * f, const void * p);

static void gen_mul_mat_iq(struct suite * s) {
    static const int64_t ms[]     = {1, 16, 17, 45};
    static const int64_t ns[]     = {1, 3, 4, 9};
    static const int64_t ks[]     = {256, 768};
    static const int64_t bss[][2] = {{1, 1}, {3, 2}};
    static const int64_t nrs[][2] = {{1, 1}, {2, 1}};
    for (int ti = 0; ti < IQ_NTYPES; ti++) {
        for (size_t a = 0; a < 4; a++) {
            for (size_t b = 0; b < 4; b++) {
                for (size_t c = 0; c < 2; c++) {
                    for (int bc = 0; bc < 2; bc++) {
                        struct p_mul_mat p = {
                            .ta = iq_types[ti], .m = ms[a], .n = ns[b], .k = ks[c], .per = {0, 1, 2, 3}};
                        memcpy(p.bs, bss[bc], sizeof p.bs);
                        memcpy(p.nr, nrs[bc], sizeof p.nr);
                        run_case(s, &fam_mul_mat, &p);
                    }
                }
            }
        }
        // prefill-like and decode-like shapes, in both buffers
        static const int64_t big[][3] = {{64, 130, 1024}, {128, 1, 2048}, {33, 70, 512}, {48, 1, 4096}, {20, 5, 4096}};
        for (size_t a = 0; a < 5; a++) {
            struct p_mul_mat p = {.ta  = iq_types[ti],
                                  .m   = big[a][0],
                                  .n   = big[a][1],
                                  .k   = big[a][2],
                                  .bs  = {1, 1},
                                  .nr  = {1, 1},
                                  .per = {0, 1, 2, 3}};
            run_case_both(s, &fam_mul_mat, &p);
        }
        // permuted operands (weights then plain rows with strides), and rows of a longer row (views)
        static const int pers[][4] = {{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}};
        for (size_t a = 0; a < 3; a++) {
            struct p_mul_mat p = {.ta = iq_types[ti], .m = 17, .n = 5, .k = 512, .bs = {2, 3}, .nr = {1, 1}};
            memcpy(p.per, pers[a], sizeof p.per);
            run_case(s, &fam_mul_mat, &p);
        }
        struct p_mul_mat v = {
            .ta = iq_types[ti], .m = 18, .n = 3, .k = 256, .bs = {1, 1}, .nr = {1, 1}, .per = {0, 1, 2, 3}, .k_v = 768};
        run_case(s, &fam_mul_mat, &v);  // (a view of a tiled weight is described as plain rows: every tiled type)
    }
}

static void gen_mul_mat_id_iq(struct suite * s) {
    static const struct p_mul_mat_id cs[] = {
        {0, 16, 256, 4, 2, 2, 1}, {0, 17, 256, 4, 2, 1, 5},   {0, 33, 512, 8, 4, 4, 7},
        {0, 5, 256, 3, 3, 1, 2},  {0, 64, 256, 16, 4, 4, 33},
    };
    for (int ti = 0; ti < IQ_NTYPES; ti++) {
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            struct p_mul_mat_id p = cs[i];
            p.ta                  = iq_types[ti];
            run_case_both(s, &fam_mul_mat_id, &p);
        }
    }
}

static void gen_get_rows_iq(struct suite * s) {
    static const int64_t ns[] = {256, 768};
    static const int64_t ms[] = {1, 5, 37};
    static const int64_t rs[] = {1, 4, 9};
    for (int t = 0; t < IQ_NTYPES; t++) {
        for (size_t a = 0; a < 2; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    struct p_get_rows p = {iq_types[t], ns[a], ms[b], rs[c], c == 2 ? 2 : 1, c == 2 ? 3 : 1, 0};
                    run_case_both(s, &fam_get_rows, &p);
                }
            }
        }
    }
}

static void gen_cpy_dequant_iq(struct suite * s) {
    for (int t = 0; t < IQ_NTYPES; t++) {
        struct p_cpy c[] = {
            {iq_types[t], GGML_TYPE_F32, {256, 4, 4, 4}, {0}, {0}, {0}, 0, {0}},
            {iq_types[t], GGML_TYPE_F32, {256, 2, 3, 4}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
            {iq_types[t], GGML_TYPE_F32, {512, 3, 1, 2}, {0}, {0}, {0}, 0, {768, 3, 1, 2}},  // into a view
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            run_case(s, &fam_cpy, &c[i]);
        }
    }
}

// ---- Quantized weights Q4_0, Q4_1, Q8_0, IQ4_NL, MXFP4, Q5_0, Q5_1 (and BF16): MUL_MAT,
// MUL_MAT_ID, GET_ROWS, each in a plain buffer and in a weight buffer (tiled);
// CPY and SET_ROWS from F32 into Q8_0 / Q4_0 (a quantized KV cache).

static const enum ggml_type q_types[] = {GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_NL,
                                         GGML_TYPE_MXFP4, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_BF16};

// Runs a case once in the default buffer and once in a weight buffer.
static void run_case_both(struct suite * s, const struct op_family * f, const void * p) {
    run_case(s, f, p);
    g_weights_buf = 1;
    run_case(s, f, p);
    g_weights_buf = 0;
}

static void gen_mul_mat_q(struct suite * s) {
    static const int64_t ms[]     = {1, 15, 16, 33, 50};
    static const int64_t ns[]     = {1, 3, 8, 9, 17};
    static const int64_t ks[]     = {32, 96, 256};
    static const int64_t bss[][2] = {{1, 1}, {2, 3}};
    static const int64_t nrs[][2] = {{1, 1}, {2, 1}};
    for (size_t ti = 0; ti < sizeof q_types / sizeof q_types[0]; ti++) {
        for (size_t a = 0; a < 5; a++) {
            for (size_t b = 0; b < 5; b++) {
                for (size_t c = 0; c < 3; c++) {
                    struct p_mul_mat p = {.ta  = q_types[ti],
                                          .m   = ms[a],
                                          .n   = ns[b],
                                          .k   = ks[c],
                                          .bs  = {1, 1},
                                          .nr  = {1, 1},
                                          .per = {0, 1, 2, 3}};
                    run_case_both(s, &fam_mul_mat, &p);
                }
            }
        }
        for (int bc = 0; bc < 2; bc++) {  // batched, broadcast
            struct p_mul_mat p = {.ta = q_types[ti], .m = 17, .n = 5, .k = 64, .per = {0, 1, 2, 3}};
            memcpy(p.bs, bss[bc], sizeof p.bs);
            memcpy(p.nr, nrs[1], sizeof p.nr);
            run_case_both(s, &fam_mul_mat, &p);
        }
        // both operands permuted (non-contiguous: plain layout only), decode and prefill
        for (int64_t n = 1; n <= 5; n += 4) {
            struct p_mul_mat pp = {
                .ta = q_types[ti], .m = 17, .n = n, .k = 96, .bs = {2, 3}, .nr = {2, 1}, .per = {0, 2, 1, 3}};
            run_case(s, &fam_mul_mat, &pp);
        }
        // a view with longer rows in memory (plain layout only), and larger shapes
        struct p_mul_mat pv = {
            .ta = q_types[ti], .m = 20, .n = 4, .k = 64, .bs = {1, 1}, .nr = {1, 1}, .per = {0, 1, 2, 3}, .k_v = 128};
        run_case(s, &fam_mul_mat, &pv);
        // (and decode of 1000 rows: many chunks a worker, the last of 3 row groups)
        static const int64_t big[][3] = {{128, 1, 2048}, {64, 130, 1024}, {300, 67, 512}, {1000, 1, 64}};
        for (size_t a = 0; a < 4; a++) {
            struct p_mul_mat p = {.ta  = q_types[ti],
                                  .m   = big[a][0],
                                  .n   = big[a][1],
                                  .k   = big[a][2],
                                  .bs  = {1, 1},
                                  .nr  = {1, 1},
                                  .per = {0, 1, 2, 3}};
            run_case_both(s, &fam_mul_mat, &p);
        }
    }
}

// Weight types no matmul kernel runs: refused by supports_op, or right.
static void gen_mul_mat_outside(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_TQ2_0};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        struct p_mul_mat p = {
            .ta = types[ti], .m = 16, .n = 3, .k = 256, .bs = {1, 1}, .nr = {1, 1}, .per = {0, 1, 2, 3}};
        run_case_outside(s, &fam_mul_mat, &p, OUTSIDE_TYPE);
        p.n = 1;
        run_case_outside(s, &fam_mul_mat, &p, OUTSIDE_TYPE);
    }
}

static void gen_mul_mat_id_q(struct suite * s) {
    static const enum ggml_type      types[] = {GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_NL,
                                                GGML_TYPE_MXFP4, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_BF16,
                                                GGML_TYPE_F32,   GGML_TYPE_F16};
    static const struct p_mul_mat_id cs[]    = {
           {0, 16, 64, 4, 2, 2, 1}, {0, 17, 32, 4, 2, 1, 5},    {0, 33, 128, 8, 4, 4, 7},
           {0, 5, 64, 3, 3, 1, 2},  {0, 64, 256, 16, 4, 4, 33}, {0, 40, 96, 32, 8, 1, 12},
    };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            struct p_mul_mat_id p = cs[i];
            p.ta                  = types[ti];
            run_case_both(s, &fam_mul_mat_id, &p);
        }
    }
}

static void gen_get_rows_q(struct suite * s) {
    static const int64_t ns[]    = {32, 96, 256};
    static const int64_t ms[]    = {1, 5, 37};
    static const int64_t rs[]    = {1, 4, 9};
    static const int64_t be[][2] = {{1, 1}, {2, 3}};
    for (size_t t = 0; t < sizeof q_types / sizeof q_types[0]; t++) {
        for (size_t a = 0; a < 3; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    for (size_t d = 0; d < 2; d++) {
                        struct p_get_rows p = {q_types[t], ns[a], ms[b], rs[c], be[d][0], be[d][1], 0};
                        run_case_both(s, &fam_get_rows, &p);
                    }
                }
            }
        }
    }
}

// Copies at the edge of the claims: quantizing into a type outside the
// KV-cache types (Q4_K, refused); dequantizing into F32 (refused once,
// claimed now, so they must pass; gen_cpy_dequant has the rest).
static void gen_cpy_outside(struct suite * s) {
    static const enum ggml_type pairs[][2] = {
        {GGML_TYPE_Q8_0, GGML_TYPE_F32}, {GGML_TYPE_Q4_0, GGML_TYPE_F32}, {GGML_TYPE_F32, GGML_TYPE_Q4_K}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        struct p_cpy p = {pairs[i][0], pairs[i][1], {256, 3, 2, 1}, {0}, {0}, {0}, 0, {0}};
        run_case_outside(s, &fam_cpy, &p, OUTSIDE_TYPE);
    }
}

static void gen_cpy_set_rows_q(struct suite * s) {
    static const enum ggml_type dts[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0};
    for (int t = 0; t < 2; t++) {
        static const int64_t shapes[][4] = {{32, 1, 1, 1}, {256, 4, 4, 4}, {64, 7, 3, 2}};
        for (int i = 0; i < 3; i++) {
            struct p_cpy p = {GGML_TYPE_F32, dts[t], {0}, {0}, {0}, {0}, 0, {0}};
            memcpy(p.ne, shapes[i], sizeof p.ne);
            run_case(s, &fam_cpy, &p);  // (ggml-cpu quantizes contiguous sources only)
        }
        static const int64_t sr[][4] = {{64, 5, 1, 1}, {256, 11, 1, 1}, {128, 16, 2, 3}};
        for (int i = 0; i < 3; i++) {
            for (int ti = 0; ti < 2; ti++) {
                struct p_set_rows p = {dts[t], ti ? GGML_TYPE_I32 : GGML_TYPE_I64, {0}, {1, 1}, 3, 0};
                memcpy(p.ne, sr[i], sizeof p.ne);
                run_case(s, &fam_set_rows, &p);
            }
        }
    }
}

// test-backend-ops' quantizing copies: each float source into each KV-cache
// quant type, contiguous and by rows of a permuted source.
static void gen_cpy_quant(struct suite * s) {
    static const enum ggml_type tss[] = {GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32};
    static const enum ggml_type tds[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                                         GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL};
    for (size_t a = 0; a < sizeof tss / sizeof tss[0]; a++) {
        for (size_t b = 0; b < sizeof tds / sizeof tds[0]; b++) {
            struct p_cpy c[] = {
                {tss[a], tds[b], {256, 4, 4, 4}, {0}, {0}, {0}, 0, {0}},
                {tss[a], tds[b], {256, 2, 3, 4}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
            };
            for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
                run_case(s, &fam_cpy, &c[i]);
            }
        }
    }
}

// SET_ROWS into the KV-cache quant types (Q8_0 and Q4_0 have theirs in
// gen_cpy_set_rows_q): a KV-cache-like scatter, broadcast indices, I64 and I32.
static void gen_set_rows_quant(struct suite * s) {
    static const enum ggml_type tds[] = {GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL};
    for (size_t t = 0; t < sizeof tds / sizeof tds[0]; t++) {
        for (int ti = 0; ti < 2; ti++) {
            const enum ggml_type i   = ti ? GGML_TYPE_I32 : GGML_TYPE_I64;
            struct p_set_rows    c[] = {
                   {tds[t], i, {256, 5, 1, 3}, {1, 1}, 1, 0},
                   {tds[t], i, {256, 11, 1, 7}, {2, 3}, 7, 0},
                   {tds[t], i, {64, 16, 2, 3}, {1, 1}, 3, 1},
                   {tds[t], i, {128, 64, 7, 1}, {1, 1}, 32, 0},
            };
            for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
                run_case(s, &fam_set_rows, &c[k]);
            }
        }
    }
}

// test-backend-ops' dequantizing copies: each quant type into F32,
// contiguous and by rows of a permuted source, and into a view. (ggml-cpu
// has no quantized -> F16 copy.)
static void gen_cpy_dequant(struct suite * s) {
    static const enum ggml_type tss[] = {GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1,   GGML_TYPE_Q5_0,  GGML_TYPE_Q5_1,
                                         GGML_TYPE_Q8_0,  GGML_TYPE_IQ4_NL, GGML_TYPE_MXFP4, GGML_TYPE_Q4_K,
                                         GGML_TYPE_Q5_K,  GGML_TYPE_Q6_K,   GGML_TYPE_Q2_K,  GGML_TYPE_Q3_K,
                                         GGML_TYPE_IQ4_XS};
    for (size_t a = 0; a < sizeof tss / sizeof tss[0]; a++) {
        struct p_cpy c[] = {
            {tss[a], GGML_TYPE_F32, {256, 4, 4, 4}, {0}, {0}, {0}, 0, {0}},
            {tss[a], GGML_TYPE_F32, {256, 2, 3, 4}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
            {tss[a], GGML_TYPE_F32, {512, 3, 1, 2}, {0}, {0}, {0}, 0, {768, 3, 1, 2}},  // into a view
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            run_case(s, &fam_cpy, &c[i]);
        }
    }
}

// GET_ROWS of Q5_0 / Q5_1 rows, in both buffers (the weight buffer may hold
// them tiled where tiled.h has a format), as gen_get_rows_q.
static void gen_get_rows_q5(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_Q5_0, GGML_TYPE_Q5_1};
    static const int64_t        ns[]    = {32, 96, 256};
    static const int64_t        ms[]    = {1, 5, 37};
    static const int64_t        rs[]    = {1, 4, 9};
    for (size_t t = 0; t < 2; t++) {
        for (size_t a = 0; a < 3; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    struct p_get_rows p = {types[t], ns[a], ms[b], rs[c], c == 2 ? 2 : 1, c == 2 ? 3 : 1, 0};
                    run_case_both(s, &fam_get_rows, &p);
                }
            }
        }
    }
}

// ---- Q1_0 (blocks of 128), Q2_0 and NVFP4 (64): the QUANT engine takes their
// blocks as 32-element units (tiled.h). MUL_MAT as gen_mul_mat_q's cases (k
// in whole blocks: 128 .. 2048, broadcast, permuted operands, a view with
// longer rows), MUL_MAT_ID, GET_ROWS in both buffers, CPY into F32.

static const enum ggml_type unit_types[] = {GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_NVFP4};

static void gen_mul_mat_unit(struct suite * s) {
    static const int64_t ms[]     = {1, 15, 16, 33, 50};
    static const int64_t ns[]     = {1, 3, 8, 9, 17};
    static const int64_t ks[]     = {128, 384, 512};  // 1..4 blocks of Q1_0, 2..8 of the others
    static const int64_t bss[][2] = {{1, 1}, {2, 3}};
    for (size_t ti = 0; ti < sizeof unit_types / sizeof unit_types[0]; ti++) {
        const enum ggml_type t  = unit_types[ti];
        const int64_t        bk = ggml_blck_size(t);
        for (size_t a = 0; a < 5; a++) {
            for (size_t b = 0; b < 5; b++) {
                for (size_t c = 0; c < 3; c++) {
                    struct p_mul_mat p = {
                        .ta = t, .m = ms[a], .n = ns[b], .k = ks[c], .bs = {1, 1}, .nr = {1, 1}, .per = {0, 1, 2, 3}};
                    run_case_both(s, &fam_mul_mat, &p);
                }
            }
        }
        // one block (64 for Q2_0 / NVFP4)
        struct p_mul_mat p1 = {.ta = t, .m = 17, .n = 3, .k = bk, .bs = {1, 1}, .nr = {1, 1}, .per = {0, 1, 2, 3}};
        run_case_both(s, &fam_mul_mat, &p1);
        for (int bc = 0; bc < 2; bc++) {  // batched, broadcast
            struct p_mul_mat p = {.ta = t, .m = 17, .n = 5, .k = 256, .nr = {2, 1}, .per = {0, 1, 2, 3}};
            memcpy(p.bs, bss[bc], sizeof p.bs);
            run_case_both(s, &fam_mul_mat, &p);
        }
        // both operands permuted (non-contiguous: plain layout only), decode and prefill
        for (int64_t n = 1; n <= 5; n += 4) {
            struct p_mul_mat pp = {.ta = t, .m = 17, .n = n, .k = 384, .bs = {2, 3}, .nr = {2, 1}, .per = {0, 2, 1, 3}};
            run_case(s, &fam_mul_mat, &pp);
        }
        // a view with longer rows in memory (plain layout only), and larger shapes
        struct p_mul_mat pv = {
            .ta = t, .m = 20, .n = 4, .k = 256, .bs = {1, 1}, .nr = {1, 1}, .per = {0, 1, 2, 3}, .k_v = 512};
        run_case(s, &fam_mul_mat, &pv);
        static const int64_t big[][3] = {{128, 1, 2048}, {64, 130, 1024}, {300, 67, 512}};
        for (size_t a = 0; a < 3; a++) {
            struct p_mul_mat p = {.ta  = t,
                                  .m   = big[a][0],
                                  .n   = big[a][1],
                                  .k   = big[a][2],
                                  .bs  = {1, 1},
                                  .nr  = {1, 1},
                                  .per = {0, 1, 2, 3}};
            run_case_both(s, &fam_mul_mat, &p);
        }
    }
}

static void gen_mul_mat_id_unit(struct suite * s) {
    static const struct p_mul_mat_id cs[] = {
        {0, 16, 128, 4, 2, 2, 1}, {0, 17, 256, 4, 2, 1, 5},   {0, 33, 128, 8, 4, 4, 7},
        {0, 5, 384, 3, 3, 1, 2},  {0, 64, 512, 16, 4, 4, 33}, {0, 40, 256, 32, 8, 1, 12},
    };
    for (size_t ti = 0; ti < sizeof unit_types / sizeof unit_types[0]; ti++) {
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            struct p_mul_mat_id p = cs[i];
            p.ta                  = unit_types[ti];
            run_case_both(s, &fam_mul_mat_id, &p);
        }
    }
}

static void gen_get_rows_unit(struct suite * s) {
    static const int64_t ns[]    = {128, 384, 1024};
    static const int64_t ms[]    = {1, 5, 37};
    static const int64_t rs[]    = {1, 4, 9};
    static const int64_t be[][2] = {{1, 1}, {2, 3}};
    for (size_t t = 0; t < sizeof unit_types / sizeof unit_types[0]; t++) {
        for (size_t a = 0; a < 3; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    for (size_t d = 0; d < 2; d++) {
                        struct p_get_rows p = {unit_types[t], ns[a], ms[b], rs[c], be[d][0], be[d][1], 0};
                        run_case_both(s, &fam_get_rows, &p);
                    }
                }
            }
        }
        struct p_get_rows pv = {unit_types[t], 256, 12, 8, 2, 1, 1};  // the index a view
        run_case_both(s, &fam_get_rows, &pv);
    }
}

static void gen_cpy_dequant_unit(struct suite * s) {
    for (size_t a = 0; a < sizeof unit_types / sizeof unit_types[0]; a++) {
        const enum ggml_type t   = unit_types[a];
        struct p_cpy         c[] = {
                    {t, GGML_TYPE_F32, {256, 4, 4, 4}, {0}, {0}, {0}, 0, {0}},
                    {t, GGML_TYPE_F32, {256, 2, 3, 4}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
                    {t, GGML_TYPE_F32, {512, 3, 1, 2}, {0}, {0}, {0}, 0, {768, 3, 1, 2}},  // into a view
                    {t, GGML_TYPE_F32, {128, 1, 1, 1}, {0}, {0}, {0}, 0, {0}},
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            run_case(s, &fam_cpy, &c[i]);
        }
    }
}

static const struct op_family fam_cpy_wide = {build_cpy, desc_cpy, NULL, max_err_cpy, -3e9f, 3e9f};

// CPY between F32 and I32 (ggml-cpu's only I32 conversions: toward zero
// into I32, rounded into F32): test-backend-ops' cases, a 4D one, odd rows
// and a permuted dst.
static void gen_cpy_i32(struct suite * s) {
    for (int dir = 0; dir < 2; dir++) {
        const enum ggml_type ts = dir ? GGML_TYPE_I32 : GGML_TYPE_F32, td = dir ? GGML_TYPE_F32 : GGML_TYPE_I32;
        struct p_cpy         c[] = {
                    {ts, td, {256, 2, 3, 4}, {0}, {0}, {0}, 0, {0}},
                    {ts, td, {256, 2, 3, 4}, {0}, {1, 0, 2, 3}, {0}, 0, {0}},
                    {ts, td, {256, 4, 4, 4}, {0}, {0}, {0}, 0, {0}},
                    {ts, td, {33, 5, 3, 1}, {0}, {0, 2, 1, 3}, {0}, 0, {0}},
                    {ts, td, {7, 2, 3, 4}, {0}, {0}, {1, 0, 2, 3}, 0, {0}},
                    {ts, td, {31, 5, 3, 1}, {31, 5, 3, 1}, {0}, {0}, 0, {40, 6, 4, 1}},
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            run_case(s, &fam_cpy, &c[i]);
        }
        // beyond 2^24 (I32 -> F32 rounds) and beyond the int32 range (F32 -> I32: INT32_MIN)
        run_case(s, &fam_cpy_wide, &c[0]);
        run_case(s, &fam_cpy_wide, &c[1]);
    }
}

// GET_ROWS of I32 rows (ggml_get_rows keeps I32): a copy, so wide values.
static const struct op_family fam_get_rows_i32 = {build_get_rows, desc_get_rows, init_get_rows,
                                                  NULL,           -100000.0f,    100000.0f};

static void gen_get_rows_i32(struct suite * s) {
    struct p_get_rows c[] = {
        {GGML_TYPE_I32, 1, 1, 1, 1, 1, 0},  {GGML_TYPE_I32, 33, 5, 4, 1, 1, 0},   {GGML_TYPE_I32, 256, 64, 9, 2, 3, 0},
        {GGML_TYPE_I32, 17, 8, 4, 7, 1, 1}, {GGML_TYPE_I32, 1024, 4, 3, 1, 2, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        run_case(s, &fam_get_rows_i32, &c[i]);
    }
}

// CONCAT of quantized tensors (whole blocks, as ggml-cpu copies them): along
// each dim, dim 0 in whole blocks, with a or b a view.
static void gen_concat_quant(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q5_1, GGML_TYPE_MXFP4,
                                           GGML_TYPE_Q4_K};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int64_t bs = ggml_blck_size(types[t]);
        for (int dim = 0; dim < 4; dim++) {
            for (int v = 0; v < 4; v++) {
                struct p_concat p = {types[t], {2 * bs, 3, 4, 2}, dim == 0 ? bs : 5, dim, v};
                run_case(s, &fam_concat, &p);
            }
        }
    }
}

// TOP_K as test-backend-ops has it (k from 1 to the whole row, rows of 2 to
// 65000), views with padded rows; a view whose matrices are not evenly
// spaced is outside (ggml-cpu reads its rows at i * nb1).
static void gen_top_k(struct suite * s) {
    static const struct p_top_k c[] = {
        {{1, 1, 1, 1}, 1, 0},      {{2, 1, 1, 1}, 1, 0},       {{2, 3, 1, 1}, 2, 0},       {{16, 10, 10, 1}, 1, 0},
        {{16, 10, 10, 1}, 3, 0},   {{16, 10, 10, 1}, 16, 0},   {{60, 10, 3, 2}, 7, 0},     {{1023, 2, 1, 3}, 1, 0},
        {{1023, 2, 1, 3}, 40, 0},  {{1023, 2, 1, 3}, 400, 0},  {{1023, 2, 1, 3}, 1023, 0}, {{1024, 4, 1, 1}, 10, 0},
        {{16384, 1, 1, 1}, 40, 0}, {{65000, 2, 1, 1}, 400, 0}, {{100, 7, 1, 1}, 9, 1},     {{100, 7, 2, 1}, 9, 1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        run_case(s, &fam_top_k, &c[i]);
    }
    struct p_top_k gap = {{100, 7, 2, 2}, 9, 2};
    run_case_outside(s, &fam_top_k, &gap, "rows not evenly spaced (ggml-cpu misreads them)");
}

// GET_ROWS of Q2_K, Q3_K and IQ4_XS rows (plain; K-quant rows of 256), in
// both buffers, as gen_get_rows_kq.
static void gen_get_rows_k256(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_IQ4_XS};
    static const int64_t        ns[]    = {256, 768};
    static const int64_t        ms[]    = {1, 5, 37};
    static const int64_t        rs[]    = {1, 4, 9};
    for (size_t t = 0; t < 3; t++) {
        for (size_t a = 0; a < 2; a++) {
            for (size_t b = 0; b < 3; b++) {
                for (size_t c = 0; c < 3; c++) {
                    struct p_get_rows p = {types[t], ns[a], ms[b], rs[c], c == 2 ? 2 : 1, c == 2 ? 3 : 1, 0};
                    run_case_both(s, &fam_get_rows, &p);
                }
            }
        }
    }
}

static void gen_ssm_conv(struct suite * s) {
    static const int64_t d_convs[] = {3, 4, 9}, n_ts[] = {1, 5, 32}, d_inners[] = {64, 1536};
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            for (int c = 0; c < 2; c++) {
                for (int64_t n_s = 1; n_s <= 4; n_s *= 4) {
                    struct p_ssm_conv p = {d_convs[a], n_ts[b], d_inners[c], n_s};
                    run_case(s, &fam_ssm_conv, &p);
                }
            }
        }
    }
}

static void gen_gdn(struct suite * s) {
    static const int64_t Ss[] = {32, 64, 128}, Ts[] = {1, 7, 64};
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            for (int64_t vr = 1; vr <= 2; vr++) {
                for (int kda = 0; kda <= 1; kda++) {
                    struct p_gdn p = {Ss[a], 2, vr, Ts[b], 1 + (b == 1), 1, kda, 0};
                    run_case(s, &fam_gdn, &p);
                }
            }
        }
    }
    // snapshots (K <= tokens: older slots are caller-owned, undefined in both), permuted inputs
    for (int64_t K = 2; K <= 4; K += 2) {
        for (int perm = 0; perm <= 1; perm++) {
            struct p_gdn p = {64, 4, 1, 5, 2, K, perm, perm};
            run_case(s, &fam_gdn, &p);
        }
    }
    struct p_gdn p = {128, 4, 2, 16, 1, 1, 0, 1};
    run_case(s, &fam_gdn, &p);
}

static void gen_solve_tri(struct suite * s) {
    static const int64_t ns[] = {1, 16, 64, 100}, ks[] = {1, 3, 64, 100};
    for (int a = 0; a < 4; a++) {
        for (int b = 0; b < 4; b++) {
            struct p_solve_tri p = {ns[a], ks[b], 1, 1};
            run_case(s, &fam_solve_tri, &p);
        }
        struct p_solve_tri p = {ns[a], 32, 2, 3};
        run_case(s, &fam_solve_tri, &p);
    }
}

static void gen_im2col(struct suite * s) {
    static const struct {
        enum ggml_type tsrc, tdst;
    } types[] = {{GGML_TYPE_F32, GGML_TYPE_F32}, {GGML_TYPE_F32, GGML_TYPE_F16}, {GGML_TYPE_F16, GGML_TYPE_F16}};
    for (int t = 0; t < 3; t++) {
        // 2D
        static const int64_t ins[][4] = {{10, 10, 3, 1}, {17, 13, 4, 2}, {32, 32, 3, 1}};
        static const int64_t ks[][2]  = {{3, 3}, {5, 2}};
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 2; k++) {
                for (int sp = 0; sp < 4; sp++) {
                    const int       st = 1 + (sp & 1), pd = sp >> 1;
                    struct p_im2col p = {types[t].tsrc,
                                         types[t].tdst,
                                         {0},
                                         {ks[k][0], ks[k][1], ins[i][2], 2},
                                         st,
                                         st,
                                         pd,
                                         pd,
                                         1 + (sp == 3),
                                         1,
                                         1};
                    memcpy(p.in, ins[i], sizeof p.in);
                    run_case(s, &fam_im2col, &p);
                }
            }
        }
        // 1D (whisper-like front end, small)
        for (int sp = 0; sp < 4; sp++) {
            const int       st = 1 + (sp & 1), pd = sp >> 1;
            struct p_im2col p = {
                types[t].tsrc, types[t].tdst, {100, 8, 2, 1}, {3, 8, 4, 1}, st, 0, pd, 0, 1 + (sp == 3), 0, 0};
            run_case(s, &fam_im2col, &p);
        }
    }
}

static void run_fuse(struct suite * s, const struct p_fuse * p) {
    static const char * const names[] = {"FUSE_RMS_NORM_MUL", "FUSE_MUL_MAT_ADD", "FUSE_MUL_MAT_QKV",
                                         "FUSE_MUL_MAT_FFN"};
    g_case_op                         = names[p->kind];
    g_expect_fused                    = p->fused;
    run_case(s, &fam_fuse, p);
    g_case_op      = NULL;
    g_expect_fused = -1;
}

static void gen_fuse_rms_norm_mul(struct suite * s) {
    static const int64_t ns[] = {1, 33, 64, 1025, 4096};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        const int64_t n = ns[i];
        for (int v = 0; v <= 1; v++) {
            // w a row (the model's norm weight), a row per dim-1 index, x's whole shape (either operand).
            struct p_fuse p = {FUSE_RMS_NORM_MUL, {n, 5, 4, 3}, {n, 1, 1, 1}, .v = v, .fused = 1};
            run_fuse(s, &p);
            p.wne[1] = 5;
            p.wne[3] = 3;
            run_fuse(s, &p);
            p.wne[2] = 4;
            p.swap   = 1;
            run_fuse(s, &p);
        }
    }
    // w repeating along dim 0 (a scalar, a divisor of the row).
    struct p_fuse p = {FUSE_RMS_NORM_MUL, {96, 3, 2, 1}, {1, 1, 1, 1}, .fused = 1};
    run_fuse(s, &p);
    p.wne[0] = 32;
    p.wne[1] = 3;
    run_fuse(s, &p);
    // Must not fuse: the norm also read by a SCALE; the norm broadcast into w.
    struct p_fuse shared = {FUSE_RMS_NORM_MUL, {64, 5, 1, 1}, {64, 1, 1, 1}, .shared = 1, .fused = 0};
    run_fuse(s, &shared);
    struct p_fuse small = {FUSE_RMS_NORM_MUL, {64, 1, 1, 1}, {64, 5, 2, 1}, .small = 1, .fused = 0};
    run_fuse(s, &small);
}

static void gen_fuse_mul_mat_add(struct suite * s) {
    static const enum ggml_type types[] = {GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_Q4_0,
                                           GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
    static const int64_t        ns[]    = {1, 2, 7, 33};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int64_t k = 256, m = 80;
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            // A bias (one row), a residual (the result's shape, either operand).
            struct p_fuse p = {FUSE_MUL_MAT_ADD, {k, m, ns[i], 1}, {m, 1, 1, 1}, types[t], .fused = 1};
            run_fuse(s, &p);
            p.wne[1] = ns[i];
            p.swap   = (int)(i & 1);
            run_fuse(s, &p);
        }
        // Batched activations over one weight, a bias per batch; a view of x.
        struct p_fuse p = {FUSE_MUL_MAT_ADD, {k, m, 3, 2}, {m, 1, 2, 1}, types[t], .v = 1, .fused = 1};
        run_fuse(s, &p);
        // A scalar addend; an addend repeating along the row.
        struct p_fuse q = {FUSE_MUL_MAT_ADD, {k, m, 4, 1}, {1, 1, 1, 1}, types[t], .fused = 1};
        run_fuse(s, &q);
        q.wne[0] = 16;
        q.wne[1] = 4;
        run_fuse(s, &q);
        // Weights in a weight buffer (quantized ones tiled at set_tensor): decode and a few columns.
        g_weights_buf = 1;
        for (int64_t n = 1; n <= 7; n += 6) {
            struct p_fuse w = {FUSE_MUL_MAT_ADD, {k, m, n, 1}, {m, 1, 1, 1}, types[t], .fused = 1};
            run_fuse(s, &w);
        }
        g_weights_buf = 0;
        // Must not fuse: the product also read by a SCALE; the product broadcast into c.
        struct p_fuse shared = {FUSE_MUL_MAT_ADD, {k, m, 2, 1}, {m, 2, 1, 1}, types[t], .shared = 1, .fused = 0};
        run_fuse(s, &shared);
        struct p_fuse small = {FUSE_MUL_MAT_ADD, {k, m, 1, 1}, {m, 3, 1, 1}, types[t], .small = 1, .fused = 0};
        run_fuse(s, &small);
    }
}

// MUL_MAT + ADD with IQ weights (the IQ types' matmul runs the K-quant
// driver, epilogue included): a bias and a residual, decode and a few columns,
// both buffers.
static void gen_fuse_mul_mat_add_iq(struct suite * s) {
    for (int t = 0; t < IQ_NTYPES; t++) {
        for (int64_t n = 1; n <= 7; n += 6) {
            for (int wb = 0; wb <= 1; wb++) {
                g_weights_buf      = wb;
                struct p_fuse bias = {FUSE_MUL_MAT_ADD, {256, 80, n, 1}, {80, 1, 1, 1}, iq_types[t], .fused = 1};
                run_fuse(s, &bias);
                struct p_fuse res = {FUSE_MUL_MAT_ADD, {512, 33, n, 1}, {33, n, 1, 1}, iq_types[t], .fused = 1};
                run_fuse(s, &res);
                g_weights_buf = 0;
            }
        }
    }
}

// Quantized weights outside a weight buffer are tiled at graph time unless
// GGML_HEXAGON_RT_REPACK is 0 (the FFN's SWIGLU fuses with tiled weights only).
static int rt_repack_enabled(void) {
    const char * e = getenv("GGML_HEXAGON_RT_REPACK");
    return !e || !*e || atoi(e) != 0;
}

static void gen_fuse_mul_mat_shared(struct suite * s) {
    // K-quant engine, then the QUANT engine's quantized types. The FFN's SWIGLU
    // fuses too wherever the weights are tiled: runtime-repacked or in a weight buffer.
    static const enum ggml_type types[] = {GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q4_0,
                                           GGML_TYPE_Q8_0,  GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_MXFP4,
                                           GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0};
    static const int64_t        ns[]    = {1, 3, 33};
    for (int kind = FUSE_MUL_MAT_QKV; kind <= FUSE_MUL_MAT_FFN; kind++) {
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
                for (int wb = 0; wb <= 1; wb++) {
                    g_weights_buf     = wb;
                    const int     glu = kind == FUSE_MUL_MAT_FFN && (wb || rt_repack_enabled());
                    struct p_fuse p   = {(enum fuse_kind)kind,
                                         {512, 96, ns[i], 1},
                                         {0},
                                         types[t],
                                         .fused = kind == FUSE_MUL_MAT_QKV || glu ? 2 : 1};
                    run_fuse(s, &p);
                    g_weights_buf = 0;
                }
            }
            // Batched activations (dim 2), K = 256.
            const int     glu = kind == FUSE_MUL_MAT_FFN && rt_repack_enabled();
            struct p_fuse p   = {
                  (enum fuse_kind)kind, {256, 32, 2, 3}, {0}, types[t], .fused = kind == FUSE_MUL_MAT_QKV || glu ? 2 : 1};
            run_fuse(s, &p);
        }
        // Must not fuse: the second matmul reads another view of x's bytes.
        // (QKV: Q and K read different tensors, K and V too.)
        struct p_fuse v = {(enum fuse_kind)kind, {256, 64, 2, 1}, {0}, GGML_TYPE_Q4_K, .xview = 1, .fused = 0};
        run_fuse(s, &v);
    }
    // Decode of taller weights, tiled: the fused SWIGLU over many row groups
    // a worker, the last chunk of 3.
    static const enum ggml_type tall[] = {GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0};
    for (size_t t = 0; t < sizeof tall / sizeof tall[0]; t++) {
        g_weights_buf   = 1;
        struct p_fuse p = {FUSE_MUL_MAT_FFN, {256, 1000, 1, 1}, {0}, tall[t], .fused = 2};
        run_fuse(s, &p);
        g_weights_buf = 0;
    }
    // FFN: the gate read elsewhere too: the pair fuses, the SWIGLU stays.
    struct p_fuse sh = {FUSE_MUL_MAT_FFN, {256, 64, 2, 1}, {0}, GGML_TYPE_Q4_K, .shared = 1, .fused = 1};
    run_fuse(s, &sh);
    // V's weights of another engine (F16, Q4_0 after Q4_K; F16, Q4_K after
    // Q4_0): Q and K alone fuse (as FFN's pair). Two QUANT types share the q8
    // activations: Q4_0 with a Q8_0 V fuses whole.
    // Two K-quant types (Q4_K_M's Q6_K V; an IQ4_XS V) fuse whole, and their
    // tiles, of other group sizes, share one dot pass (matmul-kquant.c).
    static const enum ggml_type qk[] = {GGML_TYPE_Q4_K, GGML_TYPE_Q4_K, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0,
                                        GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q4_K};
    static const enum ggml_type vt[] = {GGML_TYPE_F16,  GGML_TYPE_Q4_0, GGML_TYPE_F16,   GGML_TYPE_Q4_K,
                                        GGML_TYPE_Q8_0, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_XS};
    for (int i = 0; i < 7; i++) {
        for (int64_t n = 1; n <= 3; n += 2) {
            struct p_fuse p = {FUSE_MUL_MAT_QKV, {256, 64, n, 1}, {0}, qk[i], .tv = vt[i], .fused = i >= 4 ? 2 : 1};
            run_fuse(s, &p);
        }
    }
    // FFN with gate and up of two types that share the q8 activations (Q4_0,
    // Q8_0): the pair fuses, the SWIGLU not (its tiles meet in one layout).
    struct p_fuse mixed = {FUSE_MUL_MAT_FFN, {256, 64, 3, 1}, {0}, GGML_TYPE_Q4_0, .tv = GGML_TYPE_Q8_0, .fused = 1};
    run_fuse(s, &mixed);
    // Float or BF16 weights (activations not quantized): nothing fuses.
    static const enum ggml_type flt[] = {GGML_TYPE_F16, GGML_TYPE_BF16};
    for (int i = 0; i < 2; i++) {
        for (int kind = FUSE_MUL_MAT_QKV; kind <= FUSE_MUL_MAT_FFN; kind++) {
            struct p_fuse q = {(enum fuse_kind)kind, {256, 64, 3, 1}, {0}, flt[i], .fused = 0};
            run_fuse(s, &q);
        }
    }
}

// The op table: each generator and the ops (ggml_op_desc names) it produces,
// so that -o runs only the generators that can match.
static const struct generator {
    const char * ops;  // comma-separated
    void (*gen)(struct suite * s);
} generators[] = {
    {"MUL_MAT", gen_mul_mat},
    {"MUL_MAT", gen_mul_mat_kq},
    {"MUL_MAT_ID", gen_mul_mat_id_kq},
    {"GET_ROWS", gen_get_rows_kq},
    {"MUL_MAT", gen_mul_mat_q},
    {"MUL_MAT_ID", gen_mul_mat_id_q},
    {"GET_ROWS", gen_get_rows_q},
    {"CPY,SET_ROWS", gen_cpy_set_rows_q},
    {"ADD,SUB,MUL,DIV", gen_bin},
    {"SCALE", gen_scale},
    {"CPY,CONT,DUP", gen_cpy},
    {"GET_ROWS", gen_get_rows},
    {"SET_ROWS", gen_set_rows},
    {"RMS_NORM", gen_rms_norm},
    {"SOFT_MAX", gen_soft_max},
    {"ROPE", gen_rope},
    {"SILU", gen_unary},
    {"SWIGLU", gen_glu},
    {"GELU,GELU_QUICK,SIGMOID,NEG,EXP,SOFTPLUS,TANH", gen_unary_more},
    {"SQR,SQRT,CLAMP", gen_ew1},
    {"GEGLU,SWIGLU_OAI", gen_glu_more},
    {"NORM,L2_NORM", gen_norm},
    {"SUM_ROWS", gen_sum_rows},
    {"CUMSUM", gen_cumsum},
    {"ARGSORT", gen_argsort},
    {"CONCAT", gen_concat},
    {"REPEAT", gen_repeat},
    {"PAD", gen_pad},
    {"DIAG,TRI,FILL", gen_place},
    {"ADD_ID", gen_add_id},
    {"FLASH_ATTN_EXT", gen_flash_attn_ext},
    {"ROPE", gen_rope_multi},
    {"SSM_CONV", gen_ssm_conv},
    {"GATED_DELTA_NET", gen_gdn},
    {"SOLVE_TRI", gen_solve_tri},
    {"IM2COL", gen_im2col},
    // Last, so the cases above keep their numbers (and their seeded inputs).
    {"MUL_MAT", gen_mul_mat_outside},
    {"CPY", gen_cpy_outside},
    {"CPY", gen_cpy_quant},
    {"SET_ROWS", gen_set_rows_quant},
    {"CPY", gen_cpy_dequant},
    {"GET_ROWS", gen_get_rows_q5},
    {"CPY", gen_cpy_i32},
    {"GET_ROWS", gen_get_rows_i32},
    {"CONCAT", gen_concat_quant},
    {"TOP_K", gen_top_k},
    {"GET_ROWS", gen_get_rows_k256},
    {"FLASH_ATTN_EXT", gen_flash_attn_ext_q},
    {"FUSE_RMS_NORM_MUL", gen_fuse_rms_norm_mul},
    {"FUSE_MUL_MAT_ADD", gen_fuse_mul_mat_add},
    {"FUSE_MUL_MAT_QKV,FUSE_MUL_MAT_FFN", gen_fuse_mul_mat_shared},
    {"MUL_MAT", gen_mul_mat_unit},
    {"MUL_MAT_ID", gen_mul_mat_id_unit},
    {"GET_ROWS", gen_get_rows_unit},
    {"CPY", gen_cpy_dequant_unit},
    {"MUL_MAT", gen_mul_mat_iq},
    {"MUL_MAT_ID", gen_mul_mat_id_iq},
    {"GET_ROWS", gen_get_rows_iq},
    {"CPY", gen_cpy_dequant_iq},
    {"FUSE_MUL_MAT_ADD", gen_fuse_mul_mat_add_iq},
};

// True when the comma-separated lists a and b share an op name.
// Whether every op of list a is in list b.
static int lists_all(const char * a, const char * b) {
    char op[64];
    for (const char * p = a; *p;) {
        size_t len = strcspn(p, ",");
        snprintf(op, sizeof op, "%.*s", (int)len, p);
        if (!lists_op(b, op)) {
            return 0;
        }
        p += len + (p[len] == ',');
    }
    return 1;
}

static int lists_any(const char * a, const char * b) {
    char op[64];
    for (const char * p = b; *p;) {
        size_t len = strcspn(p, ",");
        snprintf(op, sizeof op, "%.*s", (int)len, p);
        if (lists_op(a, op)) {
            return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

// ---------------------------------------------------------------------------

static void usage(const char * argv0) {
    fprintf(
        stderr,
        "usage: %s [-b DEVICE] [-o OPNAME[,OPNAME...]] [-x OPNAME[,OPNAME...]] [-s SEED] [-v] [-t] [--inject-error]\n",
        argv0);
    fprintf(stderr, "  -o  only the cases of these ops; -x  all but these\n");
    fprintf(stderr, "  -t  print each generator's wall time and case count (where a slow run spends it)\n");
}

int main(int argc, char ** argv) {
    const char * dev_name = "HTP0";
    struct suite s        = {.seed = 1234};
    int          timed    = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-b") == 0 && i + 1 < argc) {
            dev_name = argv[++i];
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            s.filter = argv[++i];
        } else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc) {
            s.exclude = argv[++i];
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            s.seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "-v") == 0) {
            s.verbose = 1;
        } else if (strcmp(argv[i], "-t") == 0) {
            timed = 1;
        } else if (strcmp(argv[i], "--inject-error") == 0) {
            s.inject = 1;
        } else {
            usage(argv[0]);
            return 2;
        }
    }

    // The HTP registry is added only when the device is not already known
    // (so "-b CPU" does not start an NPU).
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(dev_name);
    if (!dev) {
        ggml_backend_reg_t reg = ggml_backend_htp_reg();
        if (reg) {
            ggml_backend_register(reg);
            dev = ggml_backend_dev_by_name(dev_name);
        }
    }
    if (!dev) {
        printf("device %s not available (HTP backend not registered or no such device): skipping\n", dev_name);
        return 77;
    }
    ggml_backend_dev_t cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    s.ref                      = cpu_dev ? ggml_backend_dev_init(cpu_dev, NULL) : NULL;
    s.dut                      = ggml_backend_dev_init(dev, NULL);
    if (!s.ref || !s.dut) {
        printf("cannot start the %s backend\n", s.ref ? dev_name : "CPU");
        if (s.ref) {
            ggml_backend_free(s.ref);
        }
        return s.ref ? 1 : 77;
    }
    s.dut_dev  = dev;
    s.ref_buft = ggml_backend_get_default_buffer_type(s.ref);
    s.dut_buft = ggml_backend_get_default_buffer_type(s.dut);
    // One thread for the reference: the cases are small and the machine shared.
    ggml_backend_cpu_set_n_threads(s.ref, 1);
    if (ggml_backend_is_cpu(s.dut)) {
        ggml_backend_cpu_set_n_threads(s.dut, 2);  // a different split of the work
    }
    printf("testing %s (%s) against CPU, seed %" PRIu64 "%s\n", dev_name, ggml_backend_dev_description(dev), s.seed,
           s.inject ? ", injecting errors" : "");

    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++) {
        if ((!s.filter || lists_any(generators[i].ops, s.filter)) &&
            (!s.exclude || !lists_all(generators[i].ops, s.exclude))) {
            const int64_t t0 = ggml_time_us();
            const int     n0 = s.n_pass + s.n_fail + s.n_skip;
            generators[i].gen(&s);
            if (timed) {
                printf("  time %8.2f s  %5d cases  generator %zu (%s)\n", (double)(ggml_time_us() - t0) * 1e-6,
                       s.n_pass + s.n_fail + s.n_skip - n0, i, generators[i].ops);
            }
        }
    }

    for (int i = 0; i < s.n_ops; i++) {
        printf("  %-10s pass %5d  fail %5d  skip %5d\n", s.ops[i].name, s.ops[i].pass, s.ops[i].fail, s.ops[i].skip);
    }
    printf("%d passed, %d failed, %d skipped", s.n_pass, s.n_fail, s.n_skip);
    for (int i = 0; i < s.n_skip_reasons; i++) {
        printf("%s%d %s", i == 0 ? " (" : "; ", s.skips[i].n, s.skips[i].why);
        free(s.skips[i].why);
    }
    printf("%s\n", s.n_skip_reasons ? ")" : "");
    ggml_backend_free(s.dut);
    ggml_backend_free(s.ref);
    return s.n_fail > 0 ? 1 : 0;
}
