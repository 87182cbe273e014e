// buffer.h: shared-memory buffers ("rpcmem blocks") and their mappings into
// NPU sessions.
//
// A buffer is a memfd of its size rounded up to HTP_PAGE_SIZE plus one guard
// page, mapped shared in the host (the guard page PROT_NONE here too). Its
// owner is the session that allocated it; any other session that uses it gets
// a clone: the same memfd mapped into that session as well (the reference's
// clone_buffer). A buffer knows every session it is registered with and
// whether it is mapped there yet: mapping is lazy (htp_buffer_use registers,
// htp_buffer_map maps; the session maps at flush time, largest first).
// Dropping the last reference unmaps it from every session (HTP_CTL_UNMAP to
// each), then frees the memory.
//
// Buffers know a session only by its mapping identity, struct htp_map_target:
// which NPU process and session id to send a mapping to, and a name for logs.
// The session layer sits above this one and owns the targets.
//
// All registration state is guarded by one library-wide lock, so buffers may be
// used by sessions on different threads. A buffer must not be freed while a
// batch that uses it is in flight (flush the sessions first).

#ifndef HTP_BUFFER_H
#define HTP_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_npu;

// A session as its buffers see it. The session keeps its target at one
// address for its whole life: registrations are keyed on that address, until
// htp_buffer_forget_target drops them.
struct htp_map_target {
    struct htp_npu * npu;         // the NPU process the session lives on
    uint32_t         session_id;  // the NPU's id of the session
    uint32_t         phys_idx;    // its physical NPU (orders mmap stacking)
    char             name[32];    // "HTP0", "HTP0:1", ...: for logs
};

enum htp_buffer_flags {
    HTP_BUFFER_PINNED   = 1 << 0,  // a session's pinned buffer (rings, op-queue slots, fences)
    HTP_BUFFER_EXTENDED = 1 << 1,  // map outside the VA window (DMA64 weights)
};

#define HTP_BUFFER_MAX_MAPS 64  // targets one buffer can be registered with

struct htp_buffer;

// Allocate a buffer of at least size bytes for owner (NULL: no owner; every
// session using it clones it). Returns 0 with *out holding one reference,
// or HTP_STATUS_HOST_ERR / HTP_STATUS_NO_MEMORY. The memory is zero-filled.
int htp_buffer_alloc(const struct htp_map_target * owner, size_t size, uint32_t flags, struct htp_buffer ** out);

void htp_buffer_ref(struct htp_buffer * buf);

// Drop a reference. The last one unmaps buf from every session it is mapped
// into and frees it; buf is invalid afterwards. NULL is ignored.
void htp_buffer_unref(struct htp_buffer * buf);

uint8_t * htp_buffer_base(const struct htp_buffer * buf);    // host address of byte 0
size_t    htp_buffer_size(const struct htp_buffer * buf);    // bytes including the guard page
size_t    htp_buffer_usable(const struct htp_buffer * buf);  // bytes before the guard page
int       htp_buffer_fd(const struct htp_buffer * buf);      // memfd: the key it is mapped under
uint32_t  htp_buffer_flags(const struct htp_buffer * buf);   // HTP_BUFFER_*

// Mark a buffer extended (or not) before it is first mapped anywhere (the
// backend knows a buffer holds weights only when its usage is set). Returns
// HTP_STATUS_HOST_ERR if it is mapped somewhere already or is pinned.
int htp_buffer_set_extended(struct htp_buffer * buf, bool extended);

// HTP_BUF_* flags of buf's descriptor in a batch of the session of target t.
uint32_t htp_buffer_desc_flags(const struct htp_buffer * buf, const struct htp_map_target * t);

// Register buf with t (idempotent): the session will map it when a batch
// that uses it is flushed. Returns 0 or HTP_STATUS_HOST_ERR (too many targets).
int htp_buffer_use(struct htp_buffer * buf, const struct htp_map_target * t);

// Map buf into t now (registers it first). Idempotent. A failed map is
// retried once after 100 ms (the reference's answer to spurious failures); an
// extended map is retried in eager mode (HTP_BUF_EAGER). Returns 0 or the
// NPU's / host's status.
int htp_buffer_map(struct htp_buffer * buf, const struct htp_map_target * t);

// One attempt to map buf into t, without the retry and without logging a
// failure: probing how much fits (the VA-window measurement).
int htp_buffer_try_map(struct htp_buffer * buf, const struct htp_map_target * t);

// Which mapping failed in htp_buffer_map_pending().
struct htp_buffer_map_failure {
    const struct htp_map_target * target;
    int                           fd;
    size_t                        size;
};

// mmap stacking (the reference's mmap_buffers): map every buffer registered
// with any of the n targets (a session and the members of its group) and not
// mapped there yet, all together, largest first (ties by fd, then physical
// NPU, then session id), so that the big buffers are stacked at the bottom of
// each VA window and small, short-lived ones above them, where freeing them
// does not leave holes between large mappings. Each map is retried as
// htp_buffer_map does. Stops at the first failure (described in *failed, if
// given). Returns 0 or the status of that failure.
int htp_buffer_map_pending(const struct htp_map_target * const * targets, uint32_t n_targets,
                           struct htp_buffer_map_failure * failed);

// Unmap buf from t (HTP_CTL_UNMAP if mapped) and forget the registration.
// Returns 0, or the NPU's status (the registration is dropped regardless).
int htp_buffer_unmap(struct htp_buffer * buf, const struct htp_map_target * t);

bool htp_buffer_is_mapped(struct htp_buffer * buf, const struct htp_map_target * t);

// Session teardown: unmap every buffer from t (HTP_CTL_UNMAP unless
// send_unmap is false, e.g. when the NPU is dead) and drop every registration
// of t, so no buffer refers to it any more. The session's own pinned buffer
// is not special here: unmap it first if it must go last.
void htp_buffer_forget_target(const struct htp_map_target * t, bool send_unmap);

// Bytes (and buffers) that take room in t's VA window: those it owns or has
// mapped, pinned and extended ones aside.
uint64_t htp_buffer_window_bytes(const struct htp_map_target * t, uint32_t * n_buffers);

// A count that moves whenever a buffer loses a registration with a session
// (unmapped, freed, or its session gone) or its extended flag changes. While
// it stands still, every buffer a session has mapped is still mapped there,
// with the flags it was mapped with, and no buffer has been freed (so no fd
// names another buffer): what a replayed batch relies on (session-submit.h).
uint64_t htp_buffer_epoch(void);

// Bytes of live buffers and their count (tests: leak checks).
void htp_buffer_stats(size_t * n_buffers, size_t * n_bytes);

#endif  // HTP_BUFFER_H
