// op-families.h: the op dispatch table's row type and the op families of the
// NPU core (control ops and CPY). Kernel families written elsewhere declare
// theirs in kernels.h and splice their rows into the table in ops.c through
// HTP_KERNEL_TABLE_ROWS.

#ifndef HTP_OP_FAMILIES_H
#define HTP_OP_FAMILIES_H

#include <stdatomic.h>
#include <stdint.h>

#include "htp-ops.h"

// One row of the dispatch table, indexed by op code. A code without a row (or
// with NULL functions) is answered HTP_STATUS_NO_SUPPORT.
struct htp_op_row {
    const char * name;
    int (*check)(const struct htp_op_ctx * ctx);  // operands and params, before anything runs
    int (*run)(struct htp_op_ctx * ctx);          // the computation
};

// Control ops (control-ops.c).
int htp_op_nop_check(const struct htp_op_ctx * ctx);
int htp_op_nop_run(struct htp_op_ctx * ctx);
int htp_op_fence_check(const struct htp_op_ctx * ctx);
int htp_op_fence_run(struct htp_op_ctx * ctx);
int htp_op_cpy_fence_check(const struct htp_op_ctx * ctx);
int htp_op_cpy_fence_run(struct htp_op_ctx * ctx);
int htp_op_mdev_group_check(const struct htp_op_ctx * ctx);
int htp_op_mdev_group_run(struct htp_op_ctx * ctx);

// CPY / CONT / DUP (cpy-ops.c).
int htp_op_cpy_check(const struct htp_op_ctx * ctx);
int htp_op_cpy_run(struct htp_op_ctx * ctx);

// Fence waits (FENCE with params[1] == 0) give up after this many ms with
// HTP_STATUS_INTERNAL_ERR. Default 30000; the server sets it from
// GGML_HEXAGON_FENCE_TIMEOUT_MS at start.
void htp_ops_set_fence_timeout_ms(uint64_t ms);

// Check that v is a fence operand: flag HTP_TENSOR_FENCE, type I8, ne[0] ==
// HTP_FENCE_SLOT_SIZE, contiguous slots of HTP_FENCE_SLOT_SIZE bytes, 4-byte
// aligned (futex words), at least min_slots slots. Returns enum htp_status.
int htp_op_fence_operand_check(const struct htp_tensor_view * v, int64_t min_slots);

// Fence words, as FENCE does them: signal = status (relaxed) then seq
// (release) and wake the waiters; wait = until seq is reached (acquire),
// answering the status found there, HTP_STATUS_INTERNAL_ERR on timeout or
// once *cancel (if given) is non-zero. v is a checked fence operand (its first
// slot is used).
void htp_op_fence_signal(const struct htp_tensor_view * v, uint32_t seq, uint32_t status);
int  htp_op_fence_wait(const struct htp_tensor_view * v, uint32_t want, const _Atomic uint32_t * cancel);

// Multi-NPU group execution of one batch (control-ops.c): the batch core
// calls begin at the batch's leading MDEV_GROUP op, then run_op for every
// other op (this member's share of it, then the group barrier), and fail if
// it stops early for another reason.
#define HTP_GROUP_MAX_MEMBERS 16
struct htp_group {
    struct htp_tensor_view   slots;   // the group's fence slots, one per member
    uint32_t                 member;  // this NPU's index in the group
    uint32_t                 count;   // members
    uint32_t                 base;    // own slot's seq at batch start
    uint32_t                 k;       // barriers passed in this batch
    uint32_t                 n_ops;   // ops of the batch (bounds the barriers)
    const _Atomic uint32_t * cancel;  // the op context's (fence waits give up once it is set)
};
int  htp_group_begin(struct htp_group * g, const struct htp_op_ctx * ctx, uint32_t n_ops);
int  htp_group_run_op(struct htp_group * g, struct htp_op_ctx * ctx);
void htp_group_fail(struct htp_group * g, int status);

// ALLREDUCE (allreduce-ops.c).
int htp_op_allreduce_check(const struct htp_op_ctx * ctx);
int htp_op_allreduce_run(struct htp_op_ctx * ctx);

#endif  // HTP_OP_FAMILIES_H
