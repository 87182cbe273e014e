// fused-check.h: what the fused matmuls' kernels share with their check
// (fused-check.c; layouts in proto/htp-proto.h).

#ifndef HTP_CONTRACT_FUSED_CHECK_H
#define HTP_CONTRACT_FUSED_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "contract/op-call.h"
#include "contract/ops/matmul-check.h"

// MUL_MAT_QKV / MUL_MAT_FFN's operands: the n weights w[], the shared
// activations *x and the n results out[] (any may be NULL in a malformed
// call). Returns n (3 or 2), or 0 for another op code.
int htp_mm_shared_operands(const struct htp_op_call * call, const struct htp_tensor_view ** w,
                           const struct htp_tensor_view ** x, const struct htp_tensor_view ** out);

// The K-quant kernel's scratch plan for n weights sharing one quantized
// activation chunk: *fixed = bytes before the activations (the largest of the
// weights' own plans); returns the columns a chunk holds (0: not one fits).
int64_t htp_kq_shared_plan(const struct htp_tensor_view * const * w, int n, int64_t ncols, uint32_t n_threads,
                           size_t vtcm_size, size_t * fixed);

// The QUANT kernel's scratch plan for n weights (one K) sharing one
// quantized activation chunk: their activation blocks are the same whatever
// the weight type, so the plan of the weight with the largest worker slice
// (a plain one packs its row groups there) holds for all, with one column
// list per weight (their dot passes run as one job).
struct htp_qmm_plan htp_qmm_shared_plan(const struct htp_tensor_view * const * w, int n, uint32_t n_threads,
                                        size_t vtcm_size);

#endif  // HTP_CONTRACT_FUSED_CHECK_H
