// comm.h: the communication context of ggml's tensor split (the meta
// backend's "comm" entry points): an in-place allreduce of one tensor over 2
// to 4 HTP streams on distinct physical NPUs, done by the NPUs themselves.
//
// ggml's meta backend (LLAMA_SPLIT_MODE_TENSOR) finds these through the
// registry's get_proc_address ("ggml_backend_comm_init", "..._free",
// "..._allreduce_tensor"). When init answers NULL or allreduce answers false,
// it falls back to its own reduction: async copies (CPY_FENCE between NPUs)
// and ADD graphs. GGML_HEXAGON_AR_SELECT / _AR_SCATTER choose:
//
//   AR_SELECT 2, AR_SCATTER 1  fused, reduce-scatter: one ALLREDUCE op per rank;
//                              rank r sums the r-th slice and stores it to all
//   AR_SELECT 2, AR_SCATTER 0  fused, full reduction: one ALLREDUCE op per rank;
//                              rank 0 sums everything, the others only sync
//   AR_SELECT 1                unfused: the same reduce-scatter out of plain
//                              ops: FENCE signal/waits, ADD of slices, CPY of
//                              the sums into the peers' tensors
//   AR_SELECT 0                allreduce answers false: the meta backend's
//                              copy + fence fallback
//
// Every variant syncs through one fence slot per rank (in that rank's pinned
// buffer) with two sequence numbers per call: entry (every rank's tensor is
// complete) and exit (every rank's sums are written).

#ifndef HTP_COMM_H
#define HTP_COMM_H

#include <stdbool.h>
#include <stddef.h>

#include "ggml-backend.h"

#define HTP_COMM_MAX_RANKS 4

// A context for the n streams backends[] (NULL unless 2 <= n <= 4, all are
// HTP streams on single-NPU devices with distinct physical NPUs, and each
// has a free fence slot). The caller keeps the streams alive while it lives.
void * htp_comm_init(ggml_backend_t * backends, size_t n);

// Give back the fence slots. NULL is ignored; ctx is invalid afterwards.
void htp_comm_free(void * ctx);

// Enqueue the in-place sum of tensors[0..n-1] (one per stream, in the order
// of init) on the streams, asynchronously. False (nothing enqueued) when
// AR_SELECT is 0 or the tensors do not qualify: F32 or F16, one type, packed,
// equal element counts, in HTP buffers.
bool htp_comm_allreduce_tensor(void * ctx, struct ggml_tensor ** tensors);

// The buffer type of a tensor-split weight: the main device's (as the
// reference: its NPUs read weights from ordinary device buffers).
ggml_backend_buffer_type_t htp_comm_split_buffer_type(int main_device, const float * tensor_split);

#endif  // HTP_COMM_H
