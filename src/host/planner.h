// planner.h: layer-grouped allocation planning for static buffers (weights,
// KV cache), the counterpart of the reference's alloc_buffer_n planner.
//
// The one idea: a layer's tensors belong together. Tensors are grouped into
// UNITS: the consecutive tensors of one layer's weights ("blk.<N>.*") or of
// one layer's KV cache ("cache_*_l<N>"), every other tensor a unit of its own.
// A unit grows only while it stays within the buffer limit (so a layer larger
// than the limit is cut, as the reference cuts it). Units are packed FIRST-FIT
// into buffers of at most max_size bytes, in tensor order, and the buffers
// are then ordered largest first (stable), so that the largest one is
// allocated, and mapped, first. Units of size 0 go to the largest buffer.
//
// Why: each buffer is one NPU mapping. Never splitting a layer keeps a
// layer's ops on few mappings, and a few large, evenly filled buffers stack
// into the VA window with less waste than ggml's cut at every max_size.
//
// The core (htp_planner_plan) knows nothing of ggml: it takes names and
// sizes, so it can be tested and used for what-if sizing. The ggml wrapper
// (htp_planner_alloc_ctx_tensors) allocates a context's tensors by the plan;
// it backs the ggml_backend_htp_alloc_ctx_tensors extension (ggml-htp.h).

#ifndef HTP_PLANNER_H
#define HTP_PLANNER_H

#include <stdbool.h>
#include <stddef.h>

#include "ggml-backend.h"
#include "ggml.h"

// One tensor as the planner sees it.
struct htp_plan_tensor {
    const char * name;  // ggml name ("blk.3.attn_q.weight", "cache_k_l3", ...)
    size_t       size;  // bytes it needs in the buffer (the buffer type's alloc size)
    bool         skip;  // already placed (has data) or a view: takes no room, breaks no unit
};

// A run of tensors [first, last) (skipped ones included) placed together.
struct htp_plan_unit {
    size_t size;   // sum of the non-skipped tensors' sizes, each padded to the alignment
    int    first;  // index of its first tensor
    int    last;   // one past its last tensor
    int    kind;   // 0 weights of a layer, 1 KV of a layer, -1 no layer
    int    layer;  // the layer number, -1 if none
};

// One buffer of the plan: units[unit0 .. unit0 + n_units) of plan->order.
struct htp_plan_buffer {
    size_t size;     // bytes (sum of its units' sizes)
    int    unit0;    // first entry in plan->order
    int    n_units;  // entries in plan->order
};

struct htp_plan {
    struct htp_plan_unit *   units;  // [n_units] in tensor order
    int                      n_units;
    int *                    order;  // [n_units] unit indices, grouped by buffer
    struct htp_plan_buffer * bufs;   // [n_bufs] largest first
    int                      n_bufs;
};

// Which layer a tensor belongs to: kind 0 for "blk.<N>.<...>" (weights), 1 for
// "cache_<...>_l<N>" (KV cache); returns false (kind = layer = -1) otherwise.
bool htp_planner_layer(const char * name, int * kind, int * layer);

// Plan n tensors: each non-skipped size padded to alignment (a power of two),
// buffers of at most max_size bytes (0 = unlimited) unless one unit alone is
// larger. Returns 0 with *plan filled (free it with htp_planner_free), or -1
// (out of memory, bad arguments). An empty plan (n_bufs = 0) means nothing
// needs room.
int  htp_planner_plan(const struct htp_plan_tensor * tensors, int n, size_t alignment, size_t max_size,
                      struct htp_plan * plan);
void htp_planner_free(struct htp_plan * plan);

// Allocate every tensor of ctx without data in buffers of buft laid out by the
// plan (limit max_size, 0 = unlimited), then initialise views. Returns one
// buffer (a ggml multi-buffer when the plan has several), or NULL when there
// is nothing to allocate or an allocation failed (then nothing is left
// allocated and no tensor keeps an address in a freed buffer).
ggml_backend_buffer_t htp_planner_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_buffer_type_t buft,
                                                    size_t max_size);

#endif  // HTP_PLANNER_H
