// kernel-iface.h: the interface between the NPU core (batch execution) and
// its kernels. The core validates a batch, resolves each operand to a view in
// its own address space and runs the contract's check of every op
// (contract/op-check.h); once the whole batch passed, it runs each op's
// kernel. A kernel computes with the worker pool through ctx->run and
// allocates nothing on the hot path (scratch comes from ctx->vtcm).

#ifndef HTP_KERNEL_IFACE_H
#define HTP_KERNEL_IFACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "contract/codebooks.h"
#include "contract/op-call.h"

struct htp_iq_codes;  // iq-rows.h

// One slice of work: worker ith of nth.
typedef void (*htp_job_fn)(void * arg, uint32_t ith, uint32_t nth);

struct htp_op_ctx {
    struct htp_op_call op;  // descriptor, operand views, n_threads, vtcm_size: what the check passed

    uint32_t options;  // HTP_SESSION_* bits of the session (htp-proto.h): engines not to use, FA's KV split off
    uint32_t engine;   // set by the kernel: how it ran (HTP_ENGINE_*), reported in the op's profile descriptor

    // The session's IQ codebooks (contract/codebooks.h, checked), or NULL
    // when the host sent none: kernels of the IQ1/IQ2/IQ3 types then refuse.
    const struct htp_codebooks * codebooks;
    const struct htp_iq_codes *  iq_codes;  // the same as codes (iq-rows.h), or NULL with them

    uint8_t * vtcm;  // per-session scratch ("VTCM", op.vtcm_size bytes); kernels stage tiles here

    // Run job(arg, ith, op.n_threads) for ith = 0 .. n_threads-1 across the
    // workers and return when all are done. pool is the core's; kernels pass
    // it back untouched.
    void (*run)(void * pool, htp_job_fn job, void * arg);
    void * pool;

    // Once non-zero, ops that wait (fences) give up with
    // HTP_STATUS_INTERNAL_ERR: the session's queue is stopping. May be NULL.
    const _Atomic uint32_t * cancel;
};

// Run an op whose check passed. Returns enum htp_status.
int htp_kernel_run(struct htp_op_ctx * ctx);

#endif  // HTP_KERNEL_IFACE_H
