// ggml-htp.h: public API of the HTP backend (ggml's Hexagon NPU backend in C).
//
// Load it like any ggml backend: link it and call ggml_backend_htp_reg(), or
// load it at run time with ggml_backend_load("libggml-htp.so"). Its registry
// is named "HTP"; its devices are HTP0, HTP1, ... as GGML_HEXAGON_DEVICES says.
// Extension entry points are reached with ggml_backend_reg_get_proc_address().

#ifndef GGML_HTP_H
#define GGML_HTP_H

#include "ggml-backend.h"
#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// The backend registry "HTP".
GGML_BACKEND_API ggml_backend_reg_t ggml_backend_htp_reg(void);

// True when backend is an HTP backend (a stream on an HTP device).
GGML_BACKEND_API bool ggml_backend_is_htp(ggml_backend_t backend);

// Counters of an HTP device (all its streams), since it was created.
struct ggml_backend_htp_stats {
    uint64_t graphs;      // graph_compute calls
    uint64_t cache_hits;  // ... whose node translation came from the cache (same graph uid)
    uint64_t ops;         // ops enqueued to the NPU
    uint64_t host_usecs;  // time spent in graph_compute on the host (translation, batching, pushing), less its waits
                          // for the NPU
    uint64_t copies;      // async copies from another HTP device done on the NPUs
    uint64_t events;      // events recorded on this device's streams
    uint64_t fused;       // graph nodes absorbed into fused ops (GGML_HEXAGON_OPFUSION), not enqueued themselves
    uint64_t replays;     // cache hits whose batch was the one built from the graph last time, pushed again as it was
};

// Also reachable as get_proc_address("ggml_backend_htp_get_stats") when the
// library is loaded with ggml_backend_load().
typedef void (*ggml_backend_htp_get_stats_t)(ggml_backend_t backend, struct ggml_backend_htp_stats * stats);
GGML_BACKEND_API void ggml_backend_htp_get_stats(ggml_backend_t backend, struct ggml_backend_htp_stats * stats);

// Allocate the tensors of ctx (created with no_alloc) in buffers of buft the
// way the reference backend's alloc_buffer_n does, which this ggml version's
// buffer-type interface cannot express: tensors are grouped into units of one
// layer's weights ("blk.N.*") or one layer's KV cache ("cache_*_lN"), units
// are packed first-fit into buffers of at most GGML_HEXAGON_MBUF's static
// limit (default 1 GiB; a single larger unit gets a buffer of its own) and the
// buffers are allocated largest first. No layer is split across buffers
// unless it alone exceeds the limit. Views are initialised after. Returns one
// buffer (a ggml multi-buffer when there are several; free it with
// ggml_backend_buffer_free) or NULL when ctx has nothing to allocate or an
// allocation failed. Any buffer type works; it pays for HTP buffer types,
// where each buffer is one NPU mapping.
//
// A drop-in for ggml_backend_alloc_ctx_tensors_from_buft (which cuts wherever
// the running size reaches get_max_size). libllama of this ggml version
// allocates model weights and its KV cache itself, with that function, and
// has no hook for another allocator, so a libllama user does not get the
// planner; programs that build their own weight contexts (our tools, ggml
// users) get it with
//   ggml_backend_htp_alloc_ctx_tensors_t f = (ggml_backend_htp_alloc_ctx_tensors_t)
//       ggml_backend_reg_get_proc_address(reg, "ggml_backend_htp_alloc_ctx_tensors");
typedef ggml_backend_buffer_t (*ggml_backend_htp_alloc_ctx_tensors_t)(struct ggml_context *      ctx,
                                                                      ggml_backend_buffer_type_t buft);
GGML_BACKEND_API ggml_backend_buffer_t ggml_backend_htp_alloc_ctx_tensors(struct ggml_context *      ctx,
                                                                          ggml_backend_buffer_type_t buft);

#ifdef __cplusplus
}
#endif

#endif  // GGML_HTP_H
