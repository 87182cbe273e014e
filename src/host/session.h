// session.h: a session on an NPU (the counterpart of the reference's
// ggml_hexagon_session): its queue, its current batch, its fences. This
// header opens and closes sessions; the rest of their interface is in
// session-submit.h (batches), session-fence.h (fences) and session-vmem.h
// (the VA-window probe).
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
#include "npu-proc.h"
#include "proto/htp-proto.h"
#include "session-params.h"
#include "status.h"

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
// Microseconds this session (and its group's members) has spent waiting for
// the NPU's answers, since it opened: the host's idle part of a call.
uint64_t            htp_session_wait_usecs(const struct htp_session * sess);
uint64_t            htp_session_max_vmem(const struct htp_session * sess);  // batch vmem budget
struct htp_npu *    htp_session_npu(const struct htp_session * sess);
struct htp_buffer * htp_session_pinned(const struct htp_session * sess);

// The session's mapping identity: what buffers register it under (buffer.h).
// Valid, at the same address, until the session is closed.
const struct htp_map_target * htp_session_map_target(const struct htp_session * sess);

// The first recorded error (0 if none) and a message naming the session.
int          htp_session_last_error(const struct htp_session * sess);
const char * htp_session_error(const struct htp_session * sess);

// --- buffers ---

// Register buf for use by sess (a clone if another session owns it); it is
// mapped when a batch using it is flushed. Returns 0 or a status.
int htp_session_use_buffer(struct htp_session * sess, struct htp_buffer * buf);

// Map / unmap now. Returns 0 or a status (recorded as the session's error
// only if the NPU died).
int htp_session_map_buffer(struct htp_session * sess, struct htp_buffer * buf);
int htp_session_unmap_buffer(struct htp_session * sess, struct htp_buffer * buf);

// State of the session's VA window on the NPU (HTP_CTL_VMEM_INFO).
int htp_session_vmem_info(struct htp_session * sess, struct htp_vmem_info * info);

#endif  // HTP_SESSION_H
