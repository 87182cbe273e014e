// repack.h: quantized weights in the NPU's tiled layout (contract/tiled.h),
// as seen from the ggml side.
//
// Which tensors are tiled: a type with a tile format, a tensor that owns its
// memory (not a view) and is contiguous, in a device (not host) buffer, and
// either (a) written by set_tensor into a buffer whose usage is WEIGHTS, or
// (b) met as src0 of MUL_MAT / MUL_MAT_ID / GET_ROWS at graph time with
// GGML_HEXAGON_RT_REPACK on and an allocation big enough (runtime repack).
//
// A tiled tensor's bytes in the buffer are the tiled layout; set_tensor and
// get_tensor translate, so ggml sees the original bytes. A partial first upload
// is staged in a host-side shadow copy until every byte arrived, then repacked
// at once. The per-tensor state lives in tensor->extra (struct
// htp_repack_extra), created by the buffer's init_tensor for tensors that could
// become tiled and freed with the buffer (or its reset).

#ifndef HTP_REPACK_H
#define HTP_REPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml-backend.h"
#include "ggml.h"

struct htp_repack_extra;

// t is a view of a tensor whose buffer bytes are (or are to become) tiled:
// the NPU cannot read the view's rows from them (supports_op refuses it;
// get/set through the view go to the root's raw bytes).
bool htp_repack_view_of_tiled(const struct ggml_tensor * t);

// The type has a tiled layout.
bool htp_repack_type_tiled(enum ggml_type type);

// t could be stored tiled: tiled type, not a view, contiguous.
bool htp_repack_tensor_tileable(const struct ggml_tensor * t);

// Bytes the tiled layout of t takes (0 if t is not tileable).
size_t htp_repack_tiled_size(const struct ggml_tensor * t);

// Operand strides of t in the tiled layout.
void htp_repack_tiled_strides(const struct ggml_tensor * t, int64_t nb[4]);

// Whole tensor: raw (ggml_nbytes(t) bytes, ggml layout) -> tiled at dst
// (htp_repack_tiled_size(t) bytes). Returns 0, or -1 if t is not tileable.
int htp_repack_pack(const struct ggml_tensor * t, const void * raw, void * dst);

// Bytes [offset, offset + size) of t's ggml layout, read from its tiled copy at
// src, into out. Returns 0, or -1 if t is not tileable or the range is out of bounds.
int htp_repack_unpack(const struct ggml_tensor * t, const void * src, void * out, size_t offset, size_t size);

// --- per-tensor state (tensor->extra) ---

// Attach state to t if it is tileable (init_tensor). Returns 0 or -1 (out of memory).
int htp_repack_extra_init(ggml_backend_buffer_t buffer, struct ggml_tensor * t);

// Free the state of every tensor of buffer (buffer free or reset).
void htp_repack_extra_release(ggml_backend_buffer_t buffer);

// The whole buffer was overwritten (clear): no tensor of it is tiled any more.
void htp_repack_extra_cleared(ggml_backend_buffer_t buffer);

// t's state, or NULL if it has none.
struct htp_repack_extra * htp_repack_extra_get(const struct ggml_tensor * t);

// t's bytes in its buffer are in the tiled layout.
bool htp_repack_is_tiled(const struct ggml_tensor * t);

// The tensor operations of a device buffer, tiled or not. set/get_2d copy
// n_copies runs of size bytes, stride_tensor apart in t and stride_data apart
// in data. All return 0, or -1 on an error already logged (out of memory).
int htp_repack_set(struct ggml_tensor * t, const void * data, size_t offset, size_t size, size_t n_copies,
                   size_t stride_tensor, size_t stride_data);
int htp_repack_get(const struct ggml_tensor * t, void * data, size_t offset, size_t size, size_t n_copies,
                   size_t stride_tensor, size_t stride_data);
int htp_repack_memset(struct ggml_tensor * t, uint8_t value, size_t offset, size_t size);

// Runtime repack (GGML_HEXAGON_RT_REPACK): turn the plain bytes of t, a
// weight met at graph time, into the tiled layout in place. Does nothing and
// returns false unless t is tileable, not tiled yet, not in a weight buffer
// already handled, and its allocation holds the tiled size.
bool htp_repack_runtime(struct ggml_tensor * t);

#endif  // HTP_REPACK_H
