// op-call.h: an op as its support check sees it, the same on both sides of
// the wire. The NPU builds a struct htp_op_call from a validated batch (views
// into its mapped buffers); the host builds one from the descriptor it is
// about to send, to answer ggml's supports_op with the very check the NPU
// will run. So the two can only disagree if the descriptors do.
//
// Conventions (as in ggml): ne[0] is the innermost dimension; element
// (i0, i1, i2, i3) of a tensor lives at data + i0*nb[0] + i1*nb[1] + i2*nb[2] +
// i3*nb[3] (for block types i0 counts blocks in nb[0]).

#ifndef HTP_CONTRACT_OP_CALL_H
#define HTP_CONTRACT_OP_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/htp-proto.h"

// Scratch slices a plan hands out start on this boundary (one HVX vector).
#define HTP_SCRATCH_ALIGN 128

static inline size_t htp_scratch_round(size_t bytes) {
    return (bytes + HTP_SCRATCH_ALIGN - 1) / HTP_SCRATCH_ALIGN * HTP_SCRATCH_ALIGN;
}

// A tensor operand. On the NPU, data is element 0 in its address space and
// every byte of [data, data + extent) lies in a mapped buffer. On the host
// (checks only), data is the operand's offset within its buffer: buffers are
// page aligned on both sides, so the alignment a check may test is the same.
// Checks never read through data.
struct htp_tensor_view {
    uint8_t * data;
    int64_t   ne[HTP_OP_MAX_DIMS];
    int64_t   nb[HTP_OP_MAX_DIMS];
    uint32_t  type;    // enum htp_type
    uint32_t  flags;   // HTP_TENSOR_*
    uint64_t  extent;  // bytes from data to one past the last byte the tensor spans
};

// One op: its descriptor, its operands and the resources it will run with.
struct htp_op_call {
    const struct htp_op_desc *     desc;                     // op code and params
    const struct htp_tensor_view * src[HTP_OP_MAX_INPUTS];   // NULL where desc->src is HTP_NO_TENSOR
    const struct htp_tensor_view * dst[HTP_OP_MAX_OUTPUTS];  // NULL where desc->dst is HTP_NO_TENSOR
    uint32_t                       n_threads;                // workers the op is split across
    size_t                         vtcm_size;                // scratch bytes ("VTCM") it may use
};

// Bytes a wire tensor spans from its element 0 (ne, nb, type, and for tiled
// weights the whole padded slabs). HTP_STATUS_OK with *extent, or
// HTP_STATUS_INVAL_PARAMS for an unknown type, negative sizes or strides, a
// row that is not whole blocks, or an overflow.
int htp_tensor_extent(const struct htp_tensor * t, uint64_t * extent);

// The view of wire tensor t whose element 0 is at data. HTP_STATUS_OK, or
// htp_tensor_extent's error.
int htp_tensor_view_init(struct htp_tensor_view * v, const struct htp_tensor * t, uint8_t * data);

// --- predicates the checks (and kernels) share ---

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
// ne's that a kernel forms can overflow. (Extents are checked too, but a view
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

// Whether the kernel may read v wherever the op has work. An operand read at
// indices another operand's shape gives (expert ids, positions, sinks,
// frequency factors) is tied to that shape in some dimensions only; if it is
// empty in another, it spans no byte, so batch validation lets it sit anywhere
// in its buffer, even against the guard page. Checks refuse such an operand
// unless the op has nothing to compute (out is empty).
static inline int htp_view_readable_for(const struct htp_tensor_view * v, const struct htp_tensor_view * out) {
    return htp_view_nelements(out) == 0 || htp_view_nelements(v) > 0;
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

#endif  // HTP_CONTRACT_OP_CALL_H
