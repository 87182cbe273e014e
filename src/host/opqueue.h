// opqueue.h: a session's op queue: depth slots in its pinned buffer plus the
// request and response rings (the counterpart of the reference's
// ggml_hexagon_opqueue and dspqueue).
//
// Batch k (seq k = 1, 2, ...) lives in slot (k - 1) % depth from its push until
// its response is popped; at most depth batches are in flight, so a slot is
// never rewritten while the NPU may read it. Push copies the descriptor tables
// into the slot and publishes a struct htp_opbatch_req; pop reads a struct
// htp_opbatch_rsp, checks it answers the oldest batch in flight and finds that
// batch's profile descriptors from the counts we pushed (not from the NPU's
// echo). Not thread-safe: one per session, used by one thread at a time.

#ifndef HTP_OPQUEUE_H
#define HTP_OPQUEUE_H

#include <stdint.h>

#include "proto/htp-proto.h"
#include "proto/htp-ring.h"

// Non-status outcomes of push / pop (negative: never confused with a status).
enum {
    HTP_OPQUEUE_BUSY  = -1,  // push: depth batches in flight, pop one first
    HTP_OPQUEUE_EMPTY = -2,  // pop: no answer yet
};

#define HTP_OPQUEUE_REQ_SIZE ((uint32_t)sizeof(struct htp_opbatch_req))
#define HTP_OPQUEUE_RSP_SIZE ((uint32_t)sizeof(struct htp_opbatch_rsp))

struct htp_opqueue_counts {
    uint32_t n_bufs, n_tensors, n_ops, n_traces;
};

struct htp_npu;

struct htp_opqueue {
    struct htp_npu *          npu;        // numbers each request (htp_npu_next_order)
    struct htp_ring *         req;        // host -> NPU
    struct htp_ring *         rsp;        // NPU -> host
    uint8_t *                 slots;      // slot 0
    uint64_t                  slot_size;  // bytes per slot
    uint32_t                  depth;      // power of two
    uint32_t                  n_threads;  // trace area per slot: n_threads * n_traces events
    uint32_t                  n_traces;
    int                       poll;                         // spin on the response ring instead of sleeping
    uint64_t                  req_seq;                      // last batch pushed
    uint64_t                  rsp_seq;                      // last batch answered
    struct htp_opqueue_counts pushed[HTP_QUEUE_MAX_DEPTH];  // per slot: what the batch in it holds
    uint64_t                  tables[HTP_QUEUE_MAX_DEPTH];  // per slot: the caller's name for the tables it
                                                            // holds (htp_opqueue_push), 0: unnamed
};

// Bytes of the rings and slots for a queue of this shape.
uint64_t htp_opqueue_ring_size(uint32_t depth, uint32_t entry_size);

// Set up a queue over rings and slots already placed in the pinned buffer
// (rings are initialised here). Returns 0 or HTP_STATUS_HOST_ERR.
int htp_opqueue_init(struct htp_opqueue * q, struct htp_npu * npu, void * req_ring, void * rsp_ring, void * slots,
                     uint64_t slot_size, uint32_t depth, uint32_t n_threads, uint32_t n_traces, int poll);

static inline uint32_t htp_opqueue_in_flight(const struct htp_opqueue * q) {
    return (uint32_t)(q->req_seq - q->rsp_seq);
}

// Copy a batch's tables into the next slot and publish its request. name,
// if not 0, names these exact tables (the same name, the same bytes): a slot
// that already holds tables of that name is not rewritten (the NPU only
// writes a slot's profile and trace areas, and the host nothing but this).
// Returns 0, HTP_OPQUEUE_BUSY when depth batches are in flight (pop one
// first), HTP_STATUS_HOST_ERR when the batch does not fit a slot, or
// HTP_STATUS_PROTOCOL when the request ring is corrupt.
int htp_opqueue_push(struct htp_opqueue * q, const struct htp_buf_desc * bufs, uint32_t n_bufs,
                     const struct htp_tensor * tensors, uint32_t n_tensors, const struct htp_op_desc * ops,
                     uint32_t n_ops, uint64_t name);

// Fault-injection hook: copy n bytes verbatim into the next slot (at most
// slot_size) and publish a request with the given counts, however wrong.
int htp_opqueue_push_raw(struct htp_opqueue * q, const void * bytes, uint64_t n,
                         const struct htp_opqueue_counts * counts);

// Wait up to timeout_us for a response: 0 when one is there, else HTP_STATUS_TIMEOUT.
int htp_opqueue_wait(struct htp_opqueue * q, int64_t timeout_us);

// Where a popped batch's profile and trace descriptors are, in its slot
// (valid until the next push). Counted from what we pushed, not from the
// NPU's echo; NULL / 0 when there are none.
struct htp_opqueue_prof {
    const struct htp_prof_desc *  prof;  // [n_prof]
    uint32_t                      n_prof;
    const struct htp_trace_desc * trace;  // [n_threads][n_traces]: thread t's events at t * n_traces
    uint32_t                      n_threads, n_traces;
    const struct htp_op_desc *    ops;      // [n_prof]: the batch's op descriptors as we pushed them
    const struct htp_tensor *     tensors;  // [n_tensors]: and its tensors (for profiles and traces)
    uint32_t                      n_tensors;
};

// Pop the response of the oldest batch in flight into *rsp and locate its
// profile in *prof. Returns 0, HTP_OPQUEUE_EMPTY, or HTP_STATUS_PROTOCOL
// (wrong seq, corrupt ring).
int htp_opqueue_pop(struct htp_opqueue * q, struct htp_opbatch_rsp * rsp, struct htp_opqueue_prof * prof);

// Name of an op code, for logs and profiles ("?" if unknown).
const char * htp_opqueue_op_name(uint32_t opcode);

#endif  // HTP_OPQUEUE_H
