// op-call.c: a wire tensor's extent and view, computed one way for both sides
// (the NPU validates batches with it, the host describes supports_op's
// operands with it).

#include "op-call.h"

#include "type-traits.h"

int htp_tensor_extent(const struct htp_tensor * t, uint64_t * extent) {
    const struct htp_type_traits * tt = htp_type_traits(t->type);
    if (tt == NULL) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    int empty = 0;
    for (int i = 0; i < HTP_OP_MAX_DIMS; i++) {
        if (t->ne[i] < 0 || t->nb[i] < 0) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        empty |= t->ne[i] == 0;
    }
    if (t->ne[0] % tt->blck_size != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (empty) {
        *extent = 0;  // ggml allows zero-sized tensors: they touch no byte
        return HTP_STATUS_OK;
    }
    // Last byte = sum over dims of (count - 1) * stride, plus one unit.
    uint64_t end = tt->type_size;
    for (int i = 0; i < HTP_OP_MAX_DIMS; i++) {
        uint64_t n = (uint64_t)(i == 0 ? t->ne[0] / tt->blck_size : t->ne[i]) - 1;
        uint64_t d;
        if (__builtin_mul_overflow(n, (uint64_t)t->nb[i], &d) || __builtin_add_overflow(end, d, &end)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    if (t->flags & HTP_TENSOR_TILED) {
        // Tiled weights (tiled.h): rows padded to whole groups, so the
        // tensor spans ne[3] slabs of nb[3] bytes.
        uint64_t all;
        if (__builtin_mul_overflow((uint64_t)t->ne[3], (uint64_t)t->nb[3], &all)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        end = all > end ? all : end;
    }
    *extent = end;
    return HTP_STATUS_OK;
}

int htp_tensor_view_init(struct htp_tensor_view * v, const struct htp_tensor * t, uint8_t * data) {
    uint64_t extent;
    int      rc = htp_tensor_extent(t, &extent);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    v->data = data;
    memcpy(v->ne, t->ne, sizeof(v->ne));
    memcpy(v->nb, t->nb, sizeof(v->nb));
    v->type   = t->type;
    v->flags  = t->flags;
    v->extent = extent;
    return HTP_STATUS_OK;
}
