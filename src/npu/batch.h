// batch.h: validation and execution of one op batch.
//
// A batch lives in an op-queue slot of the session's pinned buffer, which the
// host can keep writing while we read it. So the batch is processed in two
// steps over PRIVATE copies:
//
//   htp_batch_validate  checks the request's counts and the slot layout, copies
//                       the buffer, tensor and op tables out of the slot, then
//                       checks every copied entry (buffers against the map
//                       table, tensor extents against their buffers, op codes,
//                       operand indices, each op's own check). Nothing runs
//                       unless all of it passes.
//   htp_batch_execute   runs the validated ops in order, writes one profile
//                       descriptor per op (with PMU counts in mode 2, trace
//                       events in mode 3) back into the slot and fills the
//                       response. Trace events are filed under the worker
//                       that ran the slice (the pool's slice_worker), a
//                       helper's PMU counts likewise.
//
// htp_batch_process does both and is what the queue reader calls; tests call
// the steps directly. The private tables are allocated once, at the limits,
// by htp_batch_init: no allocation per batch.

#ifndef HTP_BATCH_H
#define HTP_BATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "proto/htp-proto.h"
#include "ops/kernel-iface.h"
#include "pmu.h"
#include "pool.h"

// A mapped buffer as the session's map table knows it.
struct htp_map_entry {
    int32_t   fd;     // host fd number (the key)
    uint32_t  flags;  // HTP_BUF_*
    uint64_t  size;   // bytes mapped, guard page included
    uint8_t * addr;   // NPU address of byte 0
};

// Look fd up in the session's map table: HTP_STATUS_OK with *out filled, or
// anything else when fd is not mapped.
typedef int (*htp_map_lookup_fn)(void * arg, int32_t fd, struct htp_map_entry * out);

// What a batch runs against: the session's state, read-only here.
struct htp_batch_env {
    htp_map_lookup_fn            lookup;
    void *                       lookup_arg;
    uint8_t *                    slots;      // first op-queue slot (NPU address)
    uint32_t                     depth;      // slots
    uint64_t                     slot_size;  // bytes per slot
    uint32_t                     n_threads;  // workers per op; also the slot layout's thread count
    uint8_t *                    vtcm;       // scratch
    size_t                       vtcm_size;
    uint32_t                     options;     // HTP_SESSION_* bits: engines the kernels must not use (0: all allowed)
    const struct htp_codebooks * codebooks;   // the session's IQ codebooks (NULL: none)
    const struct htp_iq_codes *  iq_codes;    // ... as codes (ops/iq-rows.h; NULL with them)
    struct htp_pool *            pool;        // NULL: jobs run serially on the caller (tests)
    uint32_t                     prof_mode;   // 0 off, 1 basic, 2 pmu, 3 trace (trace events written)
    uint32_t                     pmu_packed;  // mode 2: what the slots count (htp_pmu_pack; 0 = nothing)
    struct htp_pmu_thread *      pmu_caller;  // mode 2: the calling thread's counters (NULL: none)
    const _Atomic uint32_t *     cancel;      // the queue's stop flag: ops that wait give up once set (NULL: none)
    const _Atomic uint64_t *     maps_moved;  // moves with every change to the map table (NULL: unknown, so
                                              // every batch is copied and checked afresh)
};

struct htp_batch {
    struct htp_opbatch_req   req;  // the request being processed (private copy)
    uint8_t *                slot;
    struct htp_slot_layout   layout;
    struct htp_buf_desc      bufs[HTP_OP_MAX_BUFS];
    struct htp_map_entry     maps[HTP_OP_MAX_BUFS];
    struct htp_tensor *      tensors;                    // [HTP_OP_MAX_TENSORS]
    struct htp_op_desc *     ops;                        // [HTP_OP_MAX_OPS]
    struct htp_tensor_view * views;                      // [HTP_OP_MAX_TENSORS]
    uint32_t                 n_trace[HTP_MAX_NTHREADS];  // trace events written per thread
    // Mode 2: counts of the current op's slices run by helper w (written by w only).
    uint64_t pmu_acc[HTP_MAX_NTHREADS][HTP_PMU_SLOTS];
    uint64_t t_start;  // batch start (trace timestamps are relative to it)
    uint32_t bad_op;   // validate: index of the op whose check failed (or n_ops)

    // The tables above passed every check, with these counts, against the
    // map table as it was at maps_moved == checked_maps (htp_batch_validate's
    // shortcut). checked 0: they did not, or they are being rewritten.
    int      checked;
    uint32_t checked_bufs, checked_tensors, checked_ops;
    uint64_t checked_maps;
};

// Allocate the private tables. HTP_STATUS_OK or HTP_STATUS_NO_MEMORY.
int  htp_batch_init(struct htp_batch * b);
void htp_batch_free(struct htp_batch * b);

// Validate req against env and copy the slot's tables into b. Returns
// HTP_STATUS_OK, HTP_STATUS_INVAL_PARAMS (a malformed request or descriptor)
// or whatever an op's check answered (e.g. HTP_STATUS_NO_SUPPORT). A slot
// whose tables equal, byte for byte, those of the last batch that passed,
// with the map table unchanged since, is taken without copy or check: the
// copies and their views still stand (a decode pushes the same batch every
// token; host/session-submit.h).
int htp_batch_validate(struct htp_batch * b, const struct htp_batch_env * env, const struct htp_opbatch_req * req);

// Run the ops validated by the last htp_batch_validate, write profile (and
// trace) descriptors into the slot and fill rsp (usecs/cycles cover this call
// only). Returns the batch status (that of the first failing op).
int htp_batch_execute(struct htp_batch * b, const struct htp_batch_env * env, struct htp_opbatch_rsp * rsp);

// Validate, then execute if valid. rsp is always filled (n_done = 0 when
// validation failed; usecs/cycles cover validation too). Returns rsp->status.
int htp_batch_process(struct htp_batch * b, const struct htp_batch_env * env, const struct htp_opbatch_req * req,
                      struct htp_opbatch_rsp * rsp);

#endif  // HTP_BATCH_H
