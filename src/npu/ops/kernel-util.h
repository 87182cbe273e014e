// kernel-util.h: small helpers shared by the kernel families: reading float
// op params, shape predicates on tensor views, splitting work between workers,
// and the "element plan" that elementwise kernels use to cut a tensor into
// (row, column range) items so that few long rows still spread over all
// workers.
//
// Views come from the NPU core, which has already checked that every element
// (i0 < ne0, ..., i3 < ne3) of each view lies inside its mapped buffer. So a
// kernel stays in bounds as long as it only forms indices below the ne of the
// view it reads; the checks here make sure the shapes of an op's operands
// agree so that holds.

#ifndef HTP_KERNEL_UTIL_H
#define HTP_KERNEL_UTIL_H

#include <stdint.h>
#include <string.h>

#include "htp-ops.h"

// Elements per chunk that kernels stage on the stack when converting types
// or gathering strided data (3 such buffers stay under 8 KiB).
#define HTP_CHUNK 512

static inline float htp_param_f32(const struct htp_op_desc * desc, int i) {
    float f;
    memcpy(&f, &desc->params[i], sizeof f);
    return f;
}

static inline int64_t htp_min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

static inline int64_t htp_max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

// Worker ith's share [*i0, *i1) of n items, in contiguous blocks.
static inline void htp_split(int64_t n, uint32_t ith, uint32_t nth, int64_t * i0, int64_t * i1) {
    const int64_t per = (n + nth - 1) / nth;
    *i0               = htp_min64(n, per * ith);
    *i1               = htp_min64(n, *i0 + per);
}

static inline int64_t htp_view_nrows(const struct htp_tensor_view * v) {
    return v->ne[1] * v->ne[2] * v->ne[3];
}

static inline int64_t htp_view_nelements(const struct htp_tensor_view * v) {
    return v->ne[0] * v->ne[1] * v->ne[2] * v->ne[3];
}

static inline int htp_view_same_shape(const struct htp_tensor_view * a, const struct htp_tensor_view * b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

// Every ne in [0, 2^31) and at most 2^48 elements in all, so no product of
// ne's that a kernel forms can overflow. (The core checks extents, but a view
// with zero strides may span few bytes and still claim huge ne's.)
static inline int htp_view_shape_ok(const struct htp_tensor_view * v) {
    int64_t n = 1;
    for (int i = 0; i < HTP_OP_MAX_DIMS; i++) {
        if (v->ne[i] < 0 || v->ne[i] >= ((int64_t)1 << 31)) {
            return 0;
        }
        if (v->ne[i] > 0 && n > ((int64_t)1 << 48) / v->ne[i]) {
            return 0;
        }
        n *= v->ne[i] > 0 ? v->ne[i] : 1;
    }
    return 1;
}

// small can be tiled to fill big (each ne of big a multiple of small's, small
// not empty unless big is); ggml_can_repeat(small, big).
static inline int htp_view_can_repeat(const struct htp_tensor_view * small, const struct htp_tensor_view * big) {
    if (htp_view_nelements(big) == 0) {
        return 1;
    }
    for (int i = 0; i < HTP_OP_MAX_DIMS; i++) {
        if (small->ne[i] <= 0 || big->ne[i] % small->ne[i] != 0) {
            return 0;
        }
    }
    return 1;
}

static inline int htp_type_is_float(uint32_t type) {
    return type == HTP_TYPE_F32 || type == HTP_TYPE_F16 || type == HTP_TYPE_BF16;
}

static inline int64_t htp_float_type_size(uint32_t type) {
    return type == HTP_TYPE_F32 ? 4 : 2;
}

// Elements of dim 0 are packed (nb[0] equals the element size).
static inline int htp_view_rows_packed(const struct htp_tensor_view * v) {
    return v->nb[0] == htp_float_type_size(v->type);
}

// F32 with packed rows, element 0 and every row 4-byte aligned: rows can be
// used as float arrays in place.
static inline int htp_view_is_f32_packed(const struct htp_tensor_view * v) {
    return v->type == HTP_TYPE_F32 && v->nb[0] == 4 && ((uintptr_t)v->data & 3) == 0 && v->nb[1] % 4 == 0 &&
           v->nb[2] % 4 == 0 && v->nb[3] % 4 == 0;
}

// Row (i1, i2, i3) of a view.
static inline uint8_t * htp_view_row(const struct htp_tensor_view * v, int64_t i1, int64_t i2, int64_t i3) {
    return v->data + i1 * v->nb[1] + i2 * v->nb[2] + i3 * v->nb[3];
}

// Flat row index -> (i1, i2, i3) for a view of shape ne.
static inline void htp_row_index(const int64_t * ne, int64_t ir, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = ir % ne[1];
    *i2 = (ir / ne[1]) % ne[2];
    *i3 = ir / (ne[1] * ne[2]);
}

// Elementwise work: nrows rows of ncols each, every row cut into nsplit
// segments of seg columns when there are fewer rows than workers.
struct htp_ew_plan {
    int64_t nrows;
    int64_t ncols;
    int64_t nsplit;  // segments per row
    int64_t seg;     // columns per segment (a multiple of a vector)
};

static inline struct htp_ew_plan htp_ew_plan_make(int64_t nrows, int64_t ncols, uint32_t nth) {
    struct htp_ew_plan p = {nrows, ncols, 1, ncols};
    if (nrows < (int64_t)nth && ncols >= 512) {
        const int64_t want = ((int64_t)nth + nrows - 1) / nrows;
        p.nsplit           = htp_min64(want, ncols / 256);
        p.seg              = (ncols + p.nsplit - 1) / p.nsplit;
        p.seg              = (p.seg + 31) / 32 * 32;
        p.nsplit           = (ncols + p.seg - 1) / p.seg;
    }
    return p;
}

static inline int64_t htp_ew_plan_items(const struct htp_ew_plan * p) {
    return p->nrows * p->nsplit;
}

// Item -> row and column range [*c0, *c1).
static inline void htp_ew_plan_item(const struct htp_ew_plan * p, int64_t item, int64_t * row, int64_t * c0,
                                    int64_t * c1) {
    *row = item / p->nsplit;
    *c0  = (item % p->nsplit) * p->seg;
    *c1  = htp_min64(p->ncols, *c0 + p->seg);
}

#endif  // HTP_KERNEL_UTIL_H
