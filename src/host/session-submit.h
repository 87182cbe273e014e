// session-submit.h: a session's batches: enqueue ops, push batches to the
// NPU, collect the answers; a group leader fans each batch out to the
// sessions of its group and gathers their answers.

#ifndef HTP_SESSION_SUBMIT_H
#define HTP_SESSION_SUBMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "opbatch.h"
#include "proto/htp-proto.h"

struct htp_session;

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

// --- replay ---
//
// A graph computed again (backend.c: the node cache's hit) enqueues the same
// ops on the same operands, so the batch built from it the first time can be
// pushed again as it was: no registration, deduplication or copy. A batch's
// tables stay in the session after its push; replaying pushes them again, as
// long as nothing was enqueued since, and no buffer was unmapped or freed
// since they were built (htp_buffer_epoch), so each buffer they name is still
// mapped, with the flags they give. The op-queue slot the replay lands in
// is not even rewritten when it holds those tables already (a decode pushes
// one batch a token into slots that go round).

// The name of the batch pushed last, for htp_session_replay, or 0 if there is
// none to replay (a group's batches are not replayed: each member's copy
// carries its own index).
uint64_t htp_session_last_batch(const struct htp_session * sess);

// Push batch `name` (htp_session_last_batch) again. Returns 0 when pushed,
// HTP_SESSION_STALE when it can no longer be replayed (the caller enqueues its
// ops as usual then; nothing was changed), or a status.
int htp_session_replay(struct htp_session * sess, uint64_t name);

#define HTP_SESSION_STALE (-1)  // never a status: those are >= 0

// Ops enqueued and not pushed yet.
uint32_t htp_session_queued_ops(const struct htp_session * sess);

// Batches pushed so far (to this session's own queue).
uint64_t htp_session_pushes(const struct htp_session * sess);

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

// --- multi-NPU groups (of at most HTP_SESSION_MAX_MEMBERS sessions) ---

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

#endif  // HTP_SESSION_SUBMIT_H
