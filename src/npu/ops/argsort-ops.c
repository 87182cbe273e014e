// argsort-ops.c: ARGSORT, the permutation that sorts each row; TOP_K, the
// first k of it in descending order (below).
//
//   src0 [ne0, ne1, ne2, ne3] F32, any strides
//   dst  [ne0, ne1, ne2, ne3] I32, elements packed (nb[0] = 4), 4-byte aligned
//   params[0] = order (0 ascending, 1 descending, as enum ggml_sort_order)
//
// dst[:, i1, i2, i3] holds the indices i0 of row (i1, i2, i3) of src0 in the
// order their values sort. Ties are broken by index (the smaller first) and
// NaNs sort after every number in either order, so the result is one total
// order, independent of how rows are split across workers.
//
// Each row is sorted in place in its dst row: no scratch. Short rows by
// insertion sort, longer ones by heapsort (O(n log n) worst case, no stack).

#include <math.h>

#include "kernels.h"
#include "kernel-util.h"

struct argsort_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * dst;
    int                            desc;  // descending order
};

// One row's values as the comparator sees them.
struct argsort_row {
    const uint8_t * x;    // element 0
    int64_t         nb0;  // bytes between elements
    int             desc;
};

static inline float argsort_val(const struct argsort_row * r, int32_t i) {
    float v;
    memcpy(&v, r->x + (int64_t)i * r->nb0, sizeof v);
    return v;
}

// a sorts before b.
static inline int argsort_before(const struct argsort_row * r, int32_t a, int32_t b) {
    const float va = argsort_val(r, a), vb = argsort_val(r, b);
    const int   na = isnan(va), nbn = isnan(vb);
    if (na || nbn) {
        return na == nbn ? a < b : nbn;  // NaN last; NaNs among themselves by index
    }
    if (va != vb) {
        return r->desc ? va > vb : va < vb;
    }
    return a < b;
}

static void argsort_insertion(const struct argsort_row * r, int32_t * idx, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        const int32_t v = idx[i];
        int64_t       j = i;
        while (j > 0 && argsort_before(r, v, idx[j - 1])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

// Restore the max-heap (by "sorts later") below node i of heap idx[0, n).
static void argsort_sift(const struct argsort_row * r, int32_t * idx, int64_t i, int64_t n) {
    const int32_t v = idx[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) {
            break;
        }
        if (c + 1 < n && argsort_before(r, idx[c], idx[c + 1])) {
            c++;
        }
        if (!argsort_before(r, v, idx[c])) {
            break;
        }
        idx[i] = idx[c];
        i      = c;
    }
    idx[i] = v;
}

static void argsort_heap(const struct argsort_row * r, int32_t * idx, int64_t n) {
    for (int64_t i = n / 2 - 1; i >= 0; i--) {
        argsort_sift(r, idx, i, n);
    }
    for (int64_t end = n - 1; end > 0; end--) {
        const int32_t t = idx[0];
        idx[0]          = idx[end];
        idx[end]        = t;
        argsort_sift(r, idx, 0, end);
    }
}

static void argsort_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct argsort_args *   a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    const int64_t                 ne0 = src0->ne[0];

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        const struct argsort_row row = {htp_view_row(src0, i1, i2, i3), src0->nb[0], a->desc};
        int32_t *                idx = (int32_t *)(void *)htp_view_row(dst, i1, i2, i3);
        for (int64_t i = 0; i < ne0; i++) {
            idx[i] = (int32_t)i;
        }
        if (ne0 <= 16) {
            argsort_insertion(&row, idx, ne0);
        } else {
            argsort_heap(&row, idx, ne0);
        }
    }
}

int htp_op_argsort_run(struct htp_op_ctx * ctx) {
    struct argsort_args a = {ctx->op.src[0], ctx->op.dst[0], ctx->op.desc->params[0] == HTP_SORT_DESC};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, argsort_job, &a);
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// TOP_K
//
//   src0 [n, ne1, ne2, ne3] F32, elements packed
//   dst  [k, ne1, ne2, ne3] I32, k <= n, elements packed, 4-byte aligned
//
// dst[:, i1, i2, i3] holds the indices of the k values of row (i1, i2, i3)
// that sort first in ARGSORT's descending order (larger first, ties by the
// smaller index, NaN last), in that order, and then, as ggml-cpu does (to
// say the order is not part of the result), with elements 0 and 1 swapped.
// For rows without ties that is ggml-cpu's output exactly (its partial sort
// leaves ties in an order of its heap's making).
//
// The dst row is the working heap: its k slots keep the best k seen so far
// as a heap whose root sorts last; each later element that sorts before the
// root replaces it. O(n log k), no scratch. Then a heapsort of the k slots.
// ---------------------------------------------------------------------------

static void top_k_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct argsort_args *   a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *dst = a->dst;
    const int64_t                 n = src0->ne[0], k = dst->ne[0];

    int64_t r0, r1;
    htp_split(htp_view_nrows(dst), ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        const struct argsort_row row = {htp_view_row(src0, i1, i2, i3), src0->nb[0], 1};
        int32_t *                idx = (int32_t *)(void *)htp_view_row(dst, i1, i2, i3);
        for (int64_t i = 0; i < k; i++) {
            idx[i] = (int32_t)i;
        }
        for (int64_t i = k / 2 - 1; i >= 0; i--) {
            argsort_sift(&row, idx, i, k);
        }
        for (int64_t i = k; i < n; i++) {
            if (argsort_before(&row, (int32_t)i, idx[0])) {
                idx[0] = (int32_t)i;
                argsort_sift(&row, idx, 0, k);
            }
        }
        for (int64_t end = k - 1; end > 0; end--) {
            const int32_t t = idx[0];
            idx[0]          = idx[end];
            idx[end]        = t;
            argsort_sift(&row, idx, 0, end);
        }
        if (k > 1) {
            const int32_t t = idx[0];
            idx[0]          = idx[1];
            idx[1]          = t;
        }
    }
}

int htp_op_top_k_run(struct htp_op_ctx * ctx) {
    struct argsort_args a = {ctx->op.src[0], ctx->op.dst[0], 1};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, top_k_job, &a);
    return HTP_STATUS_OK;
}
