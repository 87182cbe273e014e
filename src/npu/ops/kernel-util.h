// kernel-util.h: small helpers shared by the kernel families (beside the
// contract's predicates on views, contract/op-call.h): splitting work between workers,
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

#include "kernel-iface.h"

// Elements per chunk that kernels stage on the stack when converting types
// or gathering strided data (3 such buffers stay under 8 KiB).
#define HTP_CHUNK 512

// v as an integer in [lo, hi]. For the quantizers: tensor data is the host's,
// so NaN and inf reach them, and a C cast of NaN or of a value out of the
// target's range is undefined (the fuzzer found that). NaN becomes 0, the
// rest saturates; a finite value already in range converts as a cast would
// (toward zero), so results on ordinary data are unchanged.
static inline int32_t htp_f2i_sat(float v, int32_t lo, int32_t hi) {
    if (v != v) {
        return 0;
    }
    if (v <= (float)lo) {
        return lo;
    }
    if (v >= (float)hi) {
        return hi;
    }
    return (int32_t)v;
}

// Worker ith's share [*i0, *i1) of n items, in contiguous blocks.
static inline void htp_split(int64_t n, uint32_t ith, uint32_t nth, int64_t * i0, int64_t * i1) {
    const int64_t per = (n + nth - 1) / nth;
    *i0               = htp_min64(n, per * ith);
    *i1               = htp_min64(n, *i0 + per);
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
