// htp-ops.h: the interface between the NPU core (batch execution) and the
// kernels. The core validates a batch, resolves each operand to a tensor view
// in its own address space and calls the op's check, then (once the whole
// batch passed) its run. A kernel computes with the worker pool through
// ctx->run; it allocates nothing on the hot path (scratch comes from ctx->vtcm).
//
// Conventions (as in ggml): ne[0] is the innermost dimension; element
// (i0, i1, i2, i3) of a tensor lives at data + i0*nb[0] + i1*nb[1] + i2*nb[2] +
// i3*nb[3] (for block types i0 counts blocks in nb[0]).

#ifndef HTP_OPS_H
#define HTP_OPS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../../proto/htp-proto.h"

// A validated tensor: its bytes lie inside a mapped buffer of this session.
struct htp_tensor_view {
    uint8_t * data;  // element 0, in the NPU's address space
    int64_t   ne[HTP_OP_MAX_DIMS];
    int64_t   nb[HTP_OP_MAX_DIMS];
    uint32_t  type;    // enum htp_type
    uint32_t  flags;   // HTP_TENSOR_*
    uint64_t  extent;  // bytes from data to one past the last byte the tensor spans
};

// One slice of work: worker ith of nth.
typedef void (*htp_job_fn)(void * arg, uint32_t ith, uint32_t nth);

struct htp_op_ctx {
    const struct htp_op_desc *     desc;                     // private copy of the op descriptor
    const struct htp_tensor_view * src[HTP_OP_MAX_INPUTS];   // NULL where desc->src is HTP_NO_TENSOR
    const struct htp_tensor_view * dst[HTP_OP_MAX_OUTPUTS];  // NULL where desc->dst is HTP_NO_TENSOR

    uint32_t  n_threads;  // workers available to this op
    uint8_t * vtcm;       // per-session scratch ("VTCM"); kernels stage tiles here
    size_t    vtcm_size;

    // Run job(arg, ith, n_threads) for ith = 0 .. n_threads-1 across the
    // workers and return when all are done. pool is the core's; kernels pass
    // it back untouched.
    void (*run)(void * pool, htp_job_fn job, void * arg);
    void * pool;

    // Once non-zero, ops that wait (fences) give up with
    // HTP_STATUS_INTERNAL_ERR: the session's queue is stopping. May be NULL.
    const _Atomic uint32_t * cancel;
};

// Check an op's operands (presence, types, shapes relative to each other,
// params) before anything in the batch runs. Returns enum htp_status:
// HTP_STATUS_OK, HTP_STATUS_INVAL_PARAMS (malformed) or HTP_STATUS_NO_SUPPORT
// (well formed but not something these kernels do). Must not touch tensor data.
int htp_ops_check(const struct htp_op_ctx * ctx);

// Run an op whose check passed. Returns enum htp_status.
int htp_ops_run(struct htp_op_ctx * ctx);

// Name of an op code, for logs and profiles ("?" if unknown).
const char * htp_op_name(uint32_t opcode);

#endif  // HTP_OPS_H
