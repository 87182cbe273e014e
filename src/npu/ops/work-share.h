// work-share.h: a job's items shared between its workers with stealing.
//
// The items are cut into chunks, and the chunks into one contiguous range per
// worker, as htp_split would. A worker claims chunks from the front of its own
// range; once that is empty it claims them from the back of the other
// workers' ranges. So each worker streams through memory in order for most of
// the job, and a worker whose core runs slower (a busy sibling hyperthread,
// interrupts, a neighbour on the host) hands the tail of its range to the
// others instead of keeping them waiting at the end of the op.
//
// Why it matters: decode matmuls are bound by memory bandwidth, and one core
// alone reads at about half the bandwidth of two. With a static split, the
// trace of a Llama 1B Q4_K token on this project's VMs showed the second
// worker idle for 1.2-2.8 ms of a 16-24 ms token, waiting at the end of each
// large matmul for the first one to finish its half; with this share, 0.2 ms.
//
// Each range is one 64-bit word, [front, end) in chunk units (front in the
// high half), changed only by compare-and-swap; so owner and thieves never
// claim the same chunk. Each word has a cache line of its own: the owners
// claim often, and a shared line would bounce between the cores on every
// claim. Claims are relaxed atomics: the items' results are published by the
// pool's join, not by the claims.

#ifndef HTP_WORK_SHARE_H
#define HTP_WORK_SHARE_H

#include <stdatomic.h>
#include <stdint.h>

#include "kernel-util.h"  // htp_split, htp_min64; HTP_MAX_NTHREADS through htp-ops.h

struct htp_share {
    struct {
        _Alignas(64) _Atomic uint64_t span;  // (front << 32) | end, in chunks
    } range[HTP_MAX_NTHREADS];
    int64_t  n_items;
    int64_t  chunk;  // items per chunk (the last chunk may be shorter)
    uint32_t nth;
};

// Share n_items (< 2^31 chunks of `chunk` items) between nth workers. Call
// before the job runs; the pool's dispatch publishes it to the workers.
static inline void htp_share_init(struct htp_share * s, int64_t n_items, int64_t chunk, uint32_t nth) {
    s->n_items             = n_items;
    s->chunk               = chunk > 0 ? chunk : 1;
    s->nth                 = nth < 1 ? 1 : nth > HTP_MAX_NTHREADS ? HTP_MAX_NTHREADS : nth;
    const int64_t n_chunks = (n_items + s->chunk - 1) / s->chunk;
    for (uint32_t i = 0; i < s->nth; i++) {
        int64_t c0, c1;
        htp_split(n_chunks, i, s->nth, &c0, &c1);
        atomic_init(&s->range[i].span, (uint64_t)c0 << 32 | (uint64_t)c1);
    }
}

// Claim worker ith's next chunk [*i0, *i1): 1, or 0 when no chunk is left.
static inline int htp_share_claim(struct htp_share * s, uint32_t ith, int64_t * i0, int64_t * i1) {
    for (uint32_t k = 0; k < s->nth; k++) {
        _Atomic uint64_t * span = &s->range[(ith + k) % s->nth].span;
        uint64_t           v    = atomic_load_explicit(span, memory_order_relaxed);
        for (;;) {
            const uint32_t front = (uint32_t)(v >> 32), end = (uint32_t)v;
            if (front >= end) {
                break;
            }
            const int      own  = k == 0;  // own range: from the front; others': from the back
            const uint64_t next = own ? v + ((uint64_t)1 << 32) : v - 1;
            if (atomic_compare_exchange_weak_explicit(span, &v, next, memory_order_relaxed, memory_order_relaxed)) {
                const int64_t c = own ? front : end - 1;
                *i0             = c * s->chunk;
                *i1             = htp_min64(s->n_items, *i0 + s->chunk);
                return 1;
            }
        }
    }
    return 0;
}

#endif  // HTP_WORK_SHARE_H
