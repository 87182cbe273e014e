// fence.h: fence slots. A fence is one HTP_FENCE_SLOT_SIZE-byte struct
// htp_fence_slot in a session's pinned buffer: the NPU signals it (status, then
// seq with release order) from an HTP_OP_FENCE / HTP_OP_CPY_FENCE op, and an op
// in another session (or the host) waits until seq reaches a value. Groups of
// NPUs use runs of n consecutive slots.
//
// struct htp_fence_pool hands out slots from the fence area (a bitmap, first
// fit, so freed slots and runs are reused). It is not thread-safe: it belongs
// to one session, which is used by one thread at a time.

#ifndef HTP_FENCE_H
#define HTP_FENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_fence_pool {
    uint8_t *  base;  // first slot (HTP_FENCE_SLOT_SIZE aligned)
    uint32_t   n_slots;
    uint32_t   n_used;
    uint64_t * used;  // bitmap, one bit per slot
};

// Manage the n_slots slots at mem. Returns 0 or HTP_STATUS_HOST_ERR.
int  htp_fence_pool_init(struct htp_fence_pool * pool, void * mem, uint32_t n_slots);
void htp_fence_pool_free(struct htp_fence_pool * pool);

// n consecutive free slots, zeroed (seq 0, status OK), or NULL if no run of n is free.
struct htp_fence_slot * htp_fence_alloc(struct htp_fence_pool * pool, uint32_t n);

// Give back a run from htp_fence_alloc (same n). NULL is ignored.
void htp_fence_release(struct htp_fence_pool * pool, struct htp_fence_slot * slot, uint32_t n);

// True if slot has been signalled with seq (or later; sequence numbers wrap).
bool htp_fence_reached(const struct htp_fence_slot * slot, uint32_t seq);

// Signal slot from the host: status, then seq (release), as the NPU does.
void htp_fence_signal(struct htp_fence_slot * slot, uint32_t seq, uint32_t status);

// The status word of the slot's last signal (read after htp_fence_reached).
uint32_t htp_fence_status(const struct htp_fence_slot * slot);

#endif  // HTP_FENCE_H
