// opqueue.c: pushing batches into op-queue slots and popping their answers
// (see opqueue.h). A slot holds, in this order (htp-proto.h):
//
//   struct htp_buf_desc   bufs[n_bufs];                -- we write
//   struct htp_tensor     tensors[n_tensors];          -- we write
//   struct htp_op_desc    ops[n_ops];                  -- we write
//   struct htp_prof_desc  prof[n_ops];                 -- the NPU writes
//   struct htp_trace_desc trace[n_threads * n_traces]; -- the NPU writes
//
// The tables are published by the release store of the request ring's head
// (htp_ring_push) and the NPU's writes by that of the response ring's head, so
// the slot itself needs no atomics.

#include "opqueue.h"

#include <string.h>

#include "fault.h"
#include "log.h"
#include "contract/op-names.h"
#include "npu-proc.h"
#include "status.h"
#include "wait.h"

uint64_t htp_opqueue_ring_size(uint32_t depth, uint32_t entry_size) {
    return htp_ring_sizeof(depth, entry_size);
}

int htp_opqueue_init(struct htp_opqueue * q, struct htp_npu * npu, void * req_ring, void * rsp_ring, void * slots,
                     uint64_t slot_size, uint32_t depth, uint32_t n_threads, uint32_t n_traces, int poll) {
    memset(q, 0, sizeof *q);
    if (depth == 0 || depth > HTP_QUEUE_MAX_DEPTH || (depth & (depth - 1)) != 0) {
        return HTP_STATUS_HOST_ERR;
    }
    q->npu       = npu;
    q->req       = htp_ring_init(req_ring);
    q->rsp       = htp_ring_init(rsp_ring);
    q->slots     = slots;
    q->slot_size = slot_size;
    q->depth     = depth;
    q->n_threads = n_threads;
    q->n_traces  = n_traces;
    q->poll      = poll;
    return 0;
}

static int publish(struct htp_opqueue * q, const struct htp_opqueue_counts * c) {
    uint64_t               seq  = q->req_seq + 1;
    uint32_t               slot = (uint32_t)((seq - 1) & (q->depth - 1));
    struct htp_opbatch_req req  = {
         .seq       = seq,
         .order     = htp_npu_next_order(q->npu),
         .slot      = slot,
         .n_bufs    = c->n_bufs,
         .n_tensors = c->n_tensors,
         .n_ops     = c->n_ops,
         .n_traces  = c->n_traces,
    };
    // The ring has depth entries and at most depth - 1 batches are in flight
    // here, so it has room; FULL would mean the NPU corrupted the tail.
    if (htp_fault(HTP_FAULT_RING_PUSH)) {
        return HTP_STATUS_PROTOCOL;
    }
    if (htp_ring_push(q->req, q->depth, HTP_OPQUEUE_REQ_SIZE, &req, &htp_wait_ring_sys) != HTP_RING_OK) {
        return HTP_STATUS_PROTOCOL;
    }
    q->pushed[slot] = *c;
    q->req_seq      = seq;
    return 0;
}

int htp_opqueue_push(struct htp_opqueue * q, const struct htp_buf_desc * bufs, uint32_t n_bufs,
                     const struct htp_tensor * tensors, uint32_t n_tensors, const struct htp_op_desc * ops,
                     uint32_t n_ops, uint64_t name) {
    if (htp_opqueue_in_flight(q) >= q->depth) {
        return HTP_OPQUEUE_BUSY;
    }
    struct htp_slot_layout l = htp_slot_layout(n_bufs, n_tensors, n_ops, q->n_threads, q->n_traces);
    if (l.end > q->slot_size) {
        HTP_LOG_ERROR("ggml-htp: batch of %u bufs %u tensors %u ops needs %llu bytes, slot has %llu\n", n_bufs,
                      n_tensors, n_ops, (unsigned long long)l.end, (unsigned long long)q->slot_size);
        return HTP_STATUS_HOST_ERR;
    }
    uint32_t  slot = (uint32_t)(q->req_seq & (q->depth - 1));  // slot of seq req_seq + 1
    uint8_t * m    = q->slots + (uint64_t)slot * q->slot_size;
    if (name == 0 || q->tables[slot] != name) {
        q->tables[slot] = 0;  // until the copy is whole
        memcpy(m + l.bufs, bufs, sizeof *bufs * n_bufs);
        memcpy(m + l.tensors, tensors, sizeof *tensors * n_tensors);
        memcpy(m + l.ops, ops, sizeof *ops * n_ops);
        q->tables[slot] = name;
    }
    // Profile and trace areas start zeroed: an op the NPU did not run reads as status 0, 0 us.
    memset(m + l.prof, 0, l.end - l.prof);

    struct htp_opqueue_counts c = {n_bufs, n_tensors, n_ops, q->n_traces};
    return publish(q, &c);
}

int htp_opqueue_push_raw(struct htp_opqueue * q, const void * bytes, uint64_t n,
                         const struct htp_opqueue_counts * counts) {
    if (htp_opqueue_in_flight(q) >= q->depth) {
        return HTP_OPQUEUE_BUSY;
    }
    if (n > q->slot_size) {
        return HTP_STATUS_HOST_ERR;
    }
    uint32_t  slot  = (uint32_t)(q->req_seq & (q->depth - 1));
    uint8_t * m     = q->slots + (uint64_t)slot * q->slot_size;
    q->tables[slot] = 0;
    memcpy(m, bytes, n);
    memset(m + n, 0, q->slot_size - n);
    return publish(q, counts);
}

int htp_opqueue_wait(struct htp_opqueue * q, int64_t timeout_us) {
    return htp_ring_wait_nonempty(q->rsp, timeout_us, 0, q->poll, &htp_wait_ring_sys) == HTP_RING_OK
               ? 0
               : HTP_STATUS_TIMEOUT;
}

int htp_opqueue_pop(struct htp_opqueue * q, struct htp_opbatch_rsp * rsp, struct htp_opqueue_prof * prof) {
    int rc = htp_ring_pop(q->rsp, q->depth, HTP_OPQUEUE_RSP_SIZE, rsp, &htp_wait_ring_sys);
    if (rc == HTP_RING_EMPTY) {
        return HTP_OPQUEUE_EMPTY;
    }
    if (rc != HTP_RING_OK) {
        HTP_LOG_ERROR("ggml-htp: response ring corrupt\n");
        return HTP_STATUS_PROTOCOL;
    }
    if (q->rsp_seq == q->req_seq || rsp->seq != q->rsp_seq + 1) {
        HTP_LOG_ERROR("ggml-htp: response for batch %llu, expected %llu\n", (unsigned long long)rsp->seq,
                      (unsigned long long)(q->rsp_seq + 1));
        return HTP_STATUS_PROTOCOL;
    }
    q->rsp_seq++;
    uint32_t                        slot = (uint32_t)((rsp->seq - 1) & (q->depth - 1));
    const struct htp_opqueue_counts c    = q->pushed[slot];
    struct htp_slot_layout          l    = htp_slot_layout(c.n_bufs, c.n_tensors, c.n_ops, q->n_threads, c.n_traces);
    memset(prof, 0, sizeof *prof);
    if (l.end <= q->slot_size) {  // else a raw push with counts larger than the slot
        const uint8_t * m = q->slots + (uint64_t)slot * q->slot_size;
        if (c.n_ops > 0) {
            prof->prof      = (const struct htp_prof_desc *)(m + l.prof);
            prof->n_prof    = c.n_ops;
            prof->ops       = (const struct htp_op_desc *)(m + l.ops);
            prof->tensors   = (const struct htp_tensor *)(m + l.tensors);
            prof->n_tensors = c.n_tensors;
        }
        if (c.n_traces > 0) {
            prof->trace     = (const struct htp_trace_desc *)(m + l.trace);
            prof->n_threads = q->n_threads;
            prof->n_traces  = c.n_traces;
        }
    }
    return 0;
}

const char * htp_opqueue_op_name(uint32_t opcode) {
    // One table of names for both sides: the NPU's (the host links its op library).
    return htp_op_name(opcode);
}
