// session.h: a session on an NPU (the counterpart of the reference's
// ggml_hexagon_session): its queue, its current batch, its fences.
//
// A session lives on one physical NPU process (shared by the sessions of that
// index, HTP0 and HTP0:1 say) and owns one pinned buffer holding its request
// and response rings, its op-queue slots and its fence slots (layout in
// session.c). Ops are enqueued into the current batch, which is pushed to the
// NPU (flush_async) when it is full, when an op does not fit, or when the
// caller flushes. Buffers are mapped lazily, at flush, largest first.
//
// Errors: every fallible call returns 0 or a status (enum htp_status from the
// NPU, or enum htp_host_status). The FIRST failure of a batch, a mapping or the
// NPU itself is recorded; from then on enqueue and flush calls fail at once
// with it, naming the session in the log (htp_session_error says what
// happened). Close always works, dead NPU or not.
//
// Threads: a session is used by one thread at a time; different sessions may
// be used from different threads.

#ifndef HTP_SESSION_H
#define HTP_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer.h"
#include "fence.h"
#include "npu-proc.h"
#include "opbatch.h"
#include "proto/htp-proto.h"

struct htp_session_params {
    uint32_t phys_idx;       // physical NPU (one htp-npu process per index)
    uint32_t virt_idx;       // virtual session on it (HTP<p>:<v>)
    char     name[32];       // "HTP0", "HTP0:1", ...
    uint32_t n_threads;      // NPU workers for this session (0 = all the NPU has)
    uint64_t vtcm_size;      // scratch bytes (0 = the NPU's default)
    uint64_t vmem_size;      // VA window bytes (0 = the NPU's default, GGML_HEXAGON_VMEM)
    uint32_t batch_ops;      // ops per batch (GGML_HEXAGON_OPBATCH; default HTP_OP_DEFAULT_OPS)
    uint32_t queue_depth;    // batches in flight (GGML_HEXAGON_OPQUEUE; default HTP_QUEUE_DEPTH, power of two)
    uint32_t poll;           // 1: both sides poll their rings instead of sleeping (GGML_HEXAGON_OPPOLL)
    uint32_t profile;        // 0 off, 1 basic, 2 pmu, 3 trace (GGML_HEXAGON_PROFILE)
    uint32_t n_traces;       // trace events per thread per batch when profile == 3 (GGML_HEXAGON_OPTRACE)
    uint32_t n_fences;       // fence slots in the pinned buffer (default 512)
    bool     measure_vmem;   // measure the usable VA window at open by mapping until failure (GGML_HEXAGON_VMEM=0)
    bool     dma64;          // map buffers of weight operands extended, outside the window (GGML_HEXAGON_DMA64)
    bool     mmap_stacking;  // map all pending buffers at flush, largest first (default; GGML_HTP_MMAP_STACKING=0
                             // maps each batch's buffers in the order the batch met them: the naive order, for
                             // measurements)
};

// Defaults for session phys:virt ("HTP<phys>" or "HTP<phys>:<virt>"); the
// one setting read from the environment here is GGML_HTP_MMAP_STACKING.
void htp_session_params_default(struct htp_session_params * p, uint32_t phys_idx, uint32_t virt_idx);

struct htp_session;

// Open a session: start / share the NPU process, SESSION_OPEN, allocate and map
// the pinned buffer, QUEUE_START, set the profiler. Returns 0 with *out set,
// or a status (nothing is left behind on failure).
int htp_session_open(const struct htp_session_params * params, struct htp_session ** out);

// Close a session in the reverse order of open: stop its queue, unmap every
// buffer from it, free its pinned buffer (unmapping it from the sessions that
// cloned it), close it on the NPU and let go of the NPU process. Batches still
// in flight are abandoned (flush_sync first to wait for them). Works when the
// NPU is dead. NULL is ignored; sess is invalid afterwards.
void htp_session_close(struct htp_session * sess);

// --- accessors ---
const char *               htp_session_name(const struct htp_session * sess);
const struct htp_hw_info * htp_session_hw_info(const struct htp_session * sess);
uint32_t                   htp_session_phys_idx(const struct htp_session * sess);
uint32_t                   htp_session_virt_idx(const struct htp_session * sess);
uint32_t                   htp_session_id(const struct htp_session * sess);         // the NPU's session id
uint32_t                   htp_session_n_threads(const struct htp_session * sess);  // workers in force
uint64_t                   htp_session_max_vmem(const struct htp_session * sess);   // batch vmem budget
struct htp_npu *           htp_session_npu(const struct htp_session * sess);
struct htp_buffer *        htp_session_pinned(const struct htp_session * sess);

// The session's mapping identity: what buffers register it under (buffer.h).
// Valid, at the same address, until the session is closed.
const struct htp_map_target * htp_session_map_target(const struct htp_session * sess);

// The first recorded error (0 if none) and a message naming the session.
int          htp_session_last_error(const struct htp_session * sess);
const char * htp_session_error(const struct htp_session * sess);

// --- batching ---

// Add op to the current batch, registering its operands' buffers with the
// session (clones for buffers of other sessions). Pushes the batch first
// (flush_async) if it is full or op does not fit. Returns 0 or a status
// (HTP_STATUS_NO_MEMORY if op alone exceeds an empty batch's limits).
int htp_session_enqueue(struct htp_session * sess, const struct htp_opnode * op);

// Push the current batch if it has at least min_ops ops (0 pushes even an
// empty batch: round-trip benchmarks). Maps every buffer registered with the
// session and not mapped yet, largest first (mmap stacking), waits (bounded, checking the NPU) for a free slot when
// depth batches are in flight. Returns 0 or a status.
int htp_session_flush_batch(struct htp_session * sess, uint32_t min_ops);

// Push the current batch if it is not empty (flush_batch(sess, 1)).
int htp_session_flush_async(struct htp_session * sess);

// Collect responses: every batch in flight (all) or just the oldest. Returns
// 0 or the recorded error.
int htp_session_flush_pending(struct htp_session * sess, bool all);

// flush_async, then flush_pending(all = true): everything enqueued has run.
int htp_session_flush_sync(struct htp_session * sess);

// Batches pushed and not yet answered.
uint32_t htp_session_in_flight(const struct htp_session * sess);

// The answer to the last batch collected, and its per-op profile
// (*n_prof entries; NULL / 0 when profiling is off). Valid until the next
// flush call. Returns 0, or HTP_STATUS_HOST_ERR if no batch was answered yet.
int htp_session_last_profile(const struct htp_session * sess, struct htp_opbatch_rsp * rsp,
                             const struct htp_prof_desc ** prof, uint32_t * n_prof);

// Fault-injection hook for tests (never used by the backend): push n bytes
// verbatim as the next batch's slot contents with the given counts, however
// malformed, and wait for the answer. Flushes what is pending first. The
// answer's status is returned in *rsp and NOT recorded as the session's error
// (the point is to show the NPU refuses the batch and keeps serving); NPU
// death is recorded as usual. Returns 0 when an answer arrived, or a status.
int htp_session_push_raw(struct htp_session * sess, const void * bytes, uint64_t n, uint32_t n_bufs, uint32_t n_tensors,
                         uint32_t n_ops, struct htp_opbatch_rsp * rsp);

// Slot size of this session's op queue (bytes a raw push may fill).
uint64_t htp_session_slot_size(const struct htp_session * sess);

// --- buffers ---

// Register buf for use by sess (a clone if another session owns it); it is
// mapped when a batch using it is flushed. Returns 0 or a status.
int htp_session_use_buffer(struct htp_session * sess, struct htp_buffer * buf);

// Map / unmap now. Returns 0 or a status (recorded as the session's error
// only if the NPU died).
int htp_session_map_buffer(struct htp_session * sess, struct htp_buffer * buf);
int htp_session_unmap_buffer(struct htp_session * sess, struct htp_buffer * buf);

// Measure the usable VA window the way the reference does: map buffers of
// 1 GiB (three at most), then of 256 MiB, until a map fails; unmap them all
// and answer the bytes mapped less one 256 MiB step (a margin for the NPU's
// own mappings). Done at open when params.measure_vmem is set. Returns 0 with
// *bytes set, or a status.
int htp_session_measure_vmem(struct htp_session * sess, uint64_t * bytes);

// State of the session's VA window on the NPU (HTP_CTL_VMEM_INFO).
int htp_session_vmem_info(struct htp_session * sess, struct htp_vmem_info * info);

// --- fences ---

// n consecutive fence slots of this session (zeroed), or NULL if none is free.
struct htp_fence_slot * htp_session_fence_alloc(struct htp_session * sess, uint32_t n);
void                    htp_session_fence_free(struct htp_session * sess, struct htp_fence_slot * slot, uint32_t n);

// Describe n fence slots starting at slot (from sess's pool) as an operand:
// buffer = the pinned buffer, type I8, ne = {64, n, 1, 1}, flag HTP_TENSOR_FENCE.
void htp_session_fence_tensor(const struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t n,
                              struct htp_op_tensor * out);

// Next fence sequence number of this session (never 0).
uint32_t htp_session_next_fence_seq(struct htp_session * sess);

// Wait on the host until slot reaches seq, checking sess's NPU between
// slices. Returns 0 (then *status, if given, is the slot's status word),
// HTP_STATUS_TIMEOUT after timeout_us, or HTP_STATUS_NPU_DEAD.
int htp_session_fence_wait(struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t seq,
                           int64_t timeout_us, uint32_t * status);

// --- multi-NPU groups ---

#define HTP_SESSION_MAX_MEMBERS 16  // sessions in one group, the leader included

// Make sess the leader of a group with the n sessions members[] (on physical
// NPUs distinct from each other and from sess's; none of them batching yet,
// with batches at least as large as sess's). From now on every batch of sess
// is headed by MDEV_GROUP and pushed to each member too (the members split
// its work, see the NPU's control-ops.c), buffers used by sess are used by
// the members, and flush_pending collects the members' answers: an error of
// any member becomes sess's error. sess owns the members from now on and
// closes them in htp_session_close. Returns 0 or HTP_STATUS_HOST_ERR (then
// ownership stays with the caller).
int htp_session_group_init(struct htp_session * sess, struct htp_session * const * members, uint32_t n);

// Sessions in sess's group, sess included (1 if it leads none).
uint32_t htp_session_group_size(const struct htp_session * sess);

#endif  // HTP_SESSION_H
