// op-families.h: the op families of the NPU core (control ops, CPY,
// ALLREDUCE) and multi-NPU group execution. Kernel families written elsewhere
// declare theirs in kernels.h; ops.c holds the run table of both.

#ifndef HTP_OP_FAMILIES_H
#define HTP_OP_FAMILIES_H

#include <stdatomic.h>
#include <stdint.h>

#include "kernel-iface.h"

// Control ops (control-ops.c).
int htp_op_nop_run(struct htp_op_ctx * ctx);
int htp_op_fence_run(struct htp_op_ctx * ctx);
int htp_op_cpy_fence_run(struct htp_op_ctx * ctx);
int htp_op_mdev_group_run(struct htp_op_ctx * ctx);

// CPY / CONT / DUP (cpy-ops.c).
int htp_op_cpy_run(struct htp_op_ctx * ctx);

// Fence waits (FENCE with params[1] == 0) give up after this many ms with
// HTP_STATUS_INTERNAL_ERR. Default 30000; the server sets it from
// GGML_HEXAGON_FENCE_TIMEOUT_MS at start.
void htp_ops_set_fence_timeout_ms(uint64_t ms);

// Fence words, as FENCE does them: signal = status (relaxed) then seq
// (release) and wake the waiters; wait = until seq is reached (acquire),
// answering the status found there, HTP_STATUS_INTERNAL_ERR on timeout or
// once *cancel (if given) is non-zero. v is a checked fence operand (its first
// slot is used).
void htp_op_fence_signal(const struct htp_tensor_view * v, uint32_t seq, uint32_t status);
int  htp_op_fence_wait(const struct htp_tensor_view * v, uint32_t want, const _Atomic uint32_t * cancel);

// ALLREDUCE (allreduce-ops.c).
int htp_op_allreduce_run(struct htp_op_ctx * ctx);

#endif  // HTP_OP_FAMILIES_H
