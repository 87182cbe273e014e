// fuzz-host-rsp: the host reading what an NPU writes back, with the NPU's
// side played by the input: a rogue or corrupted NPU.
//
// Feeds: the shape of a session's queue (depth, threads, trace room, batch
// size), then a sequence of actions: the host pushes batches (and raw
// fault-injection pushes with counts of any size); the "NPU" writes response
// packets (seq right, stale, future or raw; any status and counts), writes
// anything into the batch's slot (profile and trace areas included), moves
// the ring indices it owns to any value; the host pops and logs the profile
// and trace as the session does (session-submit.c's collect_one); and
// control answers of any size, type and content go through the host's checks
// (htp_npu_rsp_check, htp_npu_hello_decode) and are used as npu-proc.c uses them.
//
// Must never: read or write outside the rings, the slots and the host's own
// profile copy (the slots and that copy are exact-size heap blocks, so ASan
// sees a byte past either), hand out profile or trace pointers outside the
// popped batch's slot, accept a response for a batch not in flight, print an
// unterminated hardware name, hit undefined behaviour or leak.

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu-proc.h"
#include "opqueue.h"
#include "profile.h"
#include "proto/htp-proto.h"
#include "proto/htp-ring.h"
#include "status.h"
#include "fuzz-input.h"

#define MAX_DEPTH   8
#define MAX_OPS     32  // batch size (GGML_HEXAGON_OPBATCH) at most
#define MAX_TRACES  8
#define MAX_ACTIONS 64

// opqueue.c numbers each push with htp_npu_next_order(q->npu); there is no NPU
// process here, so the link redirects that one call (-Wl,--wrap) to a counter.
uint64_t __wrap_htp_npu_next_order(struct htp_npu * npu);

uint64_t __wrap_htp_npu_next_order(struct htp_npu * npu) {
    static uint64_t order;
    (void)npu;
    return ++order;
}

// A small count, sometimes a raw 32-bit one.
static uint32_t count(struct rd * r, uint32_t small) {
    const uint8_t b = u8(r);
    return b == 0xff ? u32(r) : b % (small + 1);
}

// The rings, allocated at the largest depth; the slots per input, exact size.
static _Alignas(64) uint8_t req_ring[HTP_RING_HDR_SIZE + MAX_DEPTH * sizeof(struct htp_opbatch_req)];
static _Alignas(64) uint8_t rsp_ring[HTP_RING_HDR_SIZE + MAX_DEPTH * sizeof(struct htp_opbatch_rsp)];

// The pop and the profile read-back of session-submit.c's collect_one.
static void host_pop(struct htp_opqueue * q, struct htp_prof_desc * last_prof, uint32_t batch_ops) {
    const uint64_t          in_flight_before = htp_opqueue_in_flight(q);
    const uint64_t          expect           = q->rsp_seq + 1;
    struct htp_opbatch_rsp  rsp;
    struct htp_opqueue_prof p;
    const int               rc = htp_opqueue_pop(q, &rsp, &p);
    if (getenv("FUZZ_TRACE") != NULL) {  // for reading a crash or checking a seed
        fprintf(stderr, "pop: rc %d, seq %llu, %u profile entries, %u x %u trace events\n", rc,
                (unsigned long long)rsp.seq, rc == 0 ? p.n_prof : 0, rc == 0 ? p.n_threads : 0,
                rc == 0 ? p.n_traces : 0);
    }
    if (rc != 0) {
        return;
    }
    // Only the oldest batch in flight may be answered.
    if (in_flight_before == 0 || rsp.seq != expect) {
        abort();
    }
    // Whatever the NPU says, the descriptors handed out lie in that batch's slot.
    const uint8_t * slot = q->slots + ((rsp.seq - 1) & (q->depth - 1)) * q->slot_size;
    const uint8_t * end  = slot + q->slot_size;
    if (p.prof != NULL && ((const uint8_t *)p.prof < slot || (const uint8_t *)(p.prof + p.n_prof) > end)) {
        abort();
    }
    if (p.trace != NULL &&
        ((const uint8_t *)p.trace < slot || (const uint8_t *)(p.trace + (uint64_t)p.n_threads * p.n_traces) > end)) {
        abort();
    }
    if (p.ops != NULL && ((const uint8_t *)p.ops < slot || (const uint8_t *)(p.ops + p.n_prof) > end ||
                          (const uint8_t *)p.tensors < slot || (const uint8_t *)(p.tensors + p.n_tensors) > end)) {
        abort();
    }
    if (p.prof) {
        const uint32_t n = p.n_prof < batch_ops ? p.n_prof : batch_ops;
        memcpy(last_prof, p.prof, sizeof *p.prof * n);
        // As the session does: the read-back checked (here against a mode 2
        // answer with software events), printed with its counters if sound.
        struct htp_pmu_info pmu = {.mode = 2, .mask = 0x3f, .reason = HTP_PMU_REASON_NO_HARDWARE};
        for (uint32_t k = 0; k < 6; k++) {
            pmu.counter[k] = HTP_PMU_TASK_CLOCK_NS + k;
        }
        char why[128];
        if (htp_profile_check(&rsp, last_prof, n, p.ops, 4, &pmu, why, sizeof why) == 0) {
            htp_profile_log_ops("HTP0", &rsp, last_prof, n, &pmu);
        } else {
            htp_profile_log_ops("HTP0", &rsp, last_prof, n, NULL);
        }
    }
    if (p.trace) {
        htp_profile_log_trace("HTP0", &rsp, &p);
    }
    (void)htp_status_str((int)rsp.status);
}

// The NPU's answer to the oldest batch in flight (or to none): a packet, and
// whatever it likes in the batch's slot.
static void npu_answer(struct rd * r, struct htp_opqueue * q) {
    struct htp_ring *      ring = (struct htp_ring *)(void *)rsp_ring;
    struct htp_opbatch_rsp rsp;
    memset(&rsp, 0, sizeof rsp);
    const uint8_t mode = u8(r);
    switch (mode & 3) {
        case 0:
            rsp.seq = q->rsp_seq + 1;  // the right one
            break;
        case 1:
            rsp.seq = q->rsp_seq;  // stale
            break;
        case 2:
            rsp.seq = q->req_seq + 1;  // not pushed yet
            break;
        default:
            rsp.seq = u64(r);
            break;
    }
    rsp.status    = (mode & 4) ? u32(r) : u8(r) % 8;
    rsp.n_bufs    = count(r, HTP_OP_MAX_BUFS);
    rsp.n_tensors = count(r, 64);
    rsp.n_ops     = count(r, MAX_OPS);
    rsp.n_done    = count(r, MAX_OPS);
    rsp.n_traces  = count(r, MAX_TRACES + 1);
    rsp.usecs     = u64(r);
    rsp.cycles    = u64(r);

    // The slot of that batch, overwritten with a pattern from the input.
    const uint8_t k = u8(r);
    if (k > 0) {
        uint8_t pat[255];
        for (int i = 0; i < k; i++) {
            pat[i] = u8(r);
        }
        uint8_t * slot = q->slots + (rsp.seq - 1) % q->depth * q->slot_size;
        for (uint64_t i = 0; i < q->slot_size; i++) {
            slot[i] = pat[i % k];
        }
    }

    uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    memcpy(ring->entries + (size_t)(head & (q->depth - 1)) * sizeof rsp, &rsp, sizeof rsp);
    // Publish, or jump the index anywhere.
    atomic_store_explicit(&ring->head, (mode & 0x80) ? u32(r) : head + 1, memory_order_release);
}

// A control answer off the wire: n bytes (the size the host's recv saw) of
// a message, read for a request of type req_type.
static void ctl_answer(struct rd * r) {
    const uint8_t      t = u8(r), sz = u8(r);
    struct htp_ctl_rsp rsp;
    memset(&rsp, 0, sizeof rsp);
    const uint32_t req_type = t % (HTP_CTL_COUNT + 1);
    const ssize_t  n        = sz == 0 ? (ssize_t)sizeof rsp : (ssize_t)(sz - 1);  // larger ones arrive truncated
    uint8_t *      bytes    = (uint8_t *)&rsp;
    for (size_t i = 0; i < sizeof rsp && i < (size_t)n; i++) {
        bytes[i] = u8(r);
    }
    if (t & 0x80) {
        rsp.type = req_type;  // the right type, the rest as it came
    }
    if (htp_npu_rsp_check(0, req_type, &rsp, n) != 0) {
        return;
    }
    if (req_type == HTP_CTL_HELLO) {
        struct htp_hw_info hw;
        if (htp_npu_hello_decode(0, &rsp, &hw) == 0) {
            // What npu_start then prints of it.
            char line[256];
            snprintf(line, sizeof line, "%s arch v%u threads %u hvx %u hmx %u vtcm %llu vmem %llu page %u", hw.name,
                     hw.arch, hw.n_threads, hw.n_hvx, hw.n_hmx, (unsigned long long)hw.vtcm_size,
                     (unsigned long long)hw.vmem_size, hw.page_size);
            if (hw.n_threads == 0 || hw.n_threads > HTP_MAX_NTHREADS || hw.page_size < HTP_PAGE_SIZE) {
                abort();  // accepted an impossible NPU
            }
        }
    }
    (void)htp_status_str((int)rsp.status);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    struct rd     r  = {data, size};
    const uint8_t h0 = u8(&r), h1 = u8(&r);
    const int     depth     = 1 << (h0 & 3);  // 1..8
    uint32_t      n_threads = 1 + (h0 >> 2) % HTP_MAX_NTHREADS;
    uint32_t      n_traces  = (h1 & 15) % (MAX_TRACES + 1);
    uint32_t      batch_ops = 1 + (h1 >> 4) % MAX_OPS;

    const uint64_t         slot_size = (htp_slot_size(batch_ops, n_threads, n_traces) + 63) / 64 * 64;
    uint8_t *              slots     = calloc(depth, slot_size);
    struct htp_prof_desc * last_prof = calloc(batch_ops, sizeof *last_prof);
    if (!slots || !last_prof) {
        abort();
    }
    struct htp_opqueue q;
    if (htp_opqueue_init(&q, NULL, req_ring, rsp_ring, slots, slot_size, depth, n_threads, n_traces, 0) != 0) {
        abort();
    }

    static struct htp_buf_desc bufs[HTP_OP_MAX_BUFS];
    static struct htp_tensor   tensors[MAX_OPS * 4];
    static struct htp_op_desc  ops[MAX_OPS];
    for (int a = 0; a < MAX_ACTIONS && r.n > 0; a++) {
        const uint8_t act = u8(&r);
        switch (act % 6) {
            case 0: {  // the host pushes a batch
                const uint32_t nb = u8(&r) % (HTP_OP_MAX_BUFS + 1), nt = u8(&r) % (MAX_OPS * 4 + 1),
                               no = 1 + u8(&r) % batch_ops;
                htp_opqueue_push(&q, bufs, nb, tensors, nt, ops, no, 0);
                break;
            }
            case 1: {  // a fault-injection push: any counts, the bytes as given
                struct htp_opqueue_counts c = {count(&r, 32), count(&r, 64), count(&r, MAX_OPS * 2),
                                               count(&r, MAX_TRACES * 2)};
                uint8_t                   raw[64];
                const uint8_t             n = u8(&r) % sizeof raw;
                for (int i = 0; i < n; i++) {
                    raw[i] = u8(&r);
                }
                htp_opqueue_push_raw(&q, raw, n, &c);
                break;
            }
            case 2:
                npu_answer(&r, &q);
                break;
            case 3:
                host_pop(&q, last_prof, batch_ops);
                break;
            case 4: {  // the NPU moves the request ring's tail (its index) anywhere
                struct htp_ring * ring = (struct htp_ring *)(void *)req_ring;
                atomic_store_explicit(&ring->tail, u32(&r), memory_order_release);
                break;
            }
            default:
                ctl_answer(&r);
                break;
        }
        (void)htp_opqueue_wait(&q, 0);
    }
    free(slots);
    free(last_prof);
    return 0;
}
