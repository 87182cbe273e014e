// htp-ring.h: single-producer single-consumer ring of fixed-size packets in
// shared memory, with futex wake-ups. Each session has two: requests (host ->
// NPU, struct htp_opbatch_req) and responses (NPU -> host, struct
// htp_opbatch_rsp), both inside the session's pinned buffer.
//
// Layout of a ring in shared memory (offsets in bytes):
//
//     0  head               producer's line: next index to write
//    64  tail               consumer's line: next index to read
//    68  consumer_sleeping  1 while the consumer sleeps on the head futex
//    72  producer_sleeping  1 while the producer sleeps on the tail futex
//   128  entries[depth]     packets, entry_size bytes each
//
// head and tail are free-running 32-bit counters, masked with depth - 1 on
// access, so head - tail is the fill level even across wrap-around. depth and
// entry_size are not stored here: each side holds them privately (the NPU got
// them from a validated control request), so a corrupted ring can at worst make
// head - tail exceed depth, which the consumer reports instead of reading.
//
// Wake-up protocol (a Dekker pair): the producer publishes head, then a full
// fence, then reads consumer_sleeping; the consumer sets consumer_sleeping, a
// full fence, then re-reads head before sleeping. One of them sees the other,
// so no wake-up is lost. The same holds for tail / producer_sleeping.
//
// The futexes are process-shared (no FUTEX_PRIVATE_FLAG): the two sides are
// different processes mapping the same memfd.

#ifndef HTP_RING_H
#define HTP_RING_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define htp_cpu_relax() _mm_pause()
#else
#define htp_cpu_relax() ((void)0)
#endif

#define HTP_RING_HDR_SIZE 128

struct htp_ring {
    _Atomic uint32_t head;  // written by the producer only
    uint32_t         pad0[15];
    _Atomic uint32_t tail;               // written by the consumer only
    _Atomic uint32_t consumer_sleeping;  // written by the consumer, read by the producer
    _Atomic uint32_t producer_sleeping;  // written by the producer, read by the consumer
    uint32_t         pad1[13];
    uint8_t          entries[];
};

_Static_assert(offsetof(struct htp_ring, tail) == 64, "htp_ring: tail on its own cache line");
_Static_assert(offsetof(struct htp_ring, entries) == HTP_RING_HDR_SIZE, "htp_ring header size");

// Return codes of the ring calls.
enum {
    HTP_RING_OK      = 0,
    HTP_RING_EMPTY   = 1,   // pop: nothing to read
    HTP_RING_FULL    = 2,   // push: no room
    HTP_RING_TIMEOUT = 3,   // wait: deadline passed
    HTP_RING_CORRUPT = -1,  // head - tail > depth: the peer wrote garbage
};

static inline size_t htp_ring_sizeof(uint32_t depth, uint32_t entry_size) {
    return HTP_RING_HDR_SIZE + (size_t)depth * entry_size;
}

// Initialise a ring in mem (htp_ring_sizeof bytes). Done by the host before the
// queue starts; nobody else touches the ring yet, so relaxed stores suffice.
static inline struct htp_ring * htp_ring_init(void * mem) {
    struct htp_ring * r = (struct htp_ring *)mem;
    memset(mem, 0, HTP_RING_HDR_SIZE);
    atomic_store_explicit(&r->head, 0, memory_order_relaxed);
    atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
    return r;
}

static inline void htp_futex_wake(_Atomic uint32_t * addr) {
#if defined(__linux__)
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, 1, NULL, NULL, 0);
#else
    (void)addr;
#endif
}

// Sleep while *addr == val, at most timeout_us. Spurious returns are fine: the
// callers loop.
static inline void htp_futex_wait(_Atomic uint32_t * addr, uint32_t val, int64_t timeout_us) {
#if defined(__linux__)
    struct timespec ts = {(time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &ts, NULL, 0);
#else
    (void)addr;
    (void)val;
    (void)timeout_us;
#endif
}

static inline int64_t htp_ring_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

// --- producer side ---

// Copy one packet in and publish it. Non-blocking: HTP_RING_FULL when depth
// packets are already unread.
static inline int htp_ring_push(struct htp_ring * r, uint32_t depth, uint32_t entry_size, const void * pkt) {
    // Only we write head, so a relaxed load reads our own last store.
    uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    // Acquire: the consumer's release of tail says it has finished reading the
    // entries before it, so we may overwrite them.
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail >= depth) {
        return HTP_RING_FULL;
    }
    memcpy(r->entries + (size_t)(head & (depth - 1)) * entry_size, pkt, entry_size);
    // Release: publishes the packet bytes written above together with head.
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    // Full fence between publishing head and reading consumer_sleeping (Dekker).
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->consumer_sleeping, memory_order_relaxed)) {
        htp_futex_wake(&r->head);
    }
    return HTP_RING_OK;
}

// --- consumer side ---

// Copy the oldest packet out without consuming it. HTP_RING_EMPTY when there
// is none, HTP_RING_CORRUPT when the indices are impossible. Consumer side: a
// thread other than the consumer may peek only if something serialises it
// with the consumer's pops.
static inline int htp_ring_peek(struct htp_ring * r, uint32_t depth, uint32_t entry_size, void * pkt) {
    // Relaxed: tail is written by the consumer only.
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    // Acquire: pairs with the producer's release of head; the packet is visible.
    uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head == tail) {
        return HTP_RING_EMPTY;
    }
    if (head - tail > depth) {
        return HTP_RING_CORRUPT;
    }
    memcpy(pkt, r->entries + (size_t)(tail & (depth - 1)) * entry_size, entry_size);
    return HTP_RING_OK;
}

// Copy the oldest packet out and consume it. HTP_RING_EMPTY when there is
// none, HTP_RING_CORRUPT when the indices are impossible.
static inline int htp_ring_pop(struct htp_ring * r, uint32_t depth, uint32_t entry_size, void * pkt) {
    int rc = htp_ring_peek(r, depth, entry_size, pkt);
    if (rc != HTP_RING_OK) {
        return rc;
    }
    // Only we write tail. Release: we are done reading this entry; the
    // producer may reuse it.
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->producer_sleeping, memory_order_relaxed)) {
        htp_futex_wake(&r->tail);
    }
    return HTP_RING_OK;
}

// Wait until the ring holds a packet or timeout_us passes. Spins for spin_us
// first (the common case on a busy queue); with poll set it never sleeps.
static inline int htp_ring_wait_nonempty(struct htp_ring * r, int64_t timeout_us, int64_t spin_us, int poll) {
    int64_t start = htp_ring_now_us();
    for (;;) {
        uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        if (head != tail) {
            return HTP_RING_OK;
        }
        int64_t waited = htp_ring_now_us() - start;
        if (waited >= timeout_us) {
            return HTP_RING_TIMEOUT;
        }
        if (poll || waited < spin_us) {
            for (int i = 0; i < 64; i++) {
                htp_cpu_relax();
            }
            continue;
        }
        atomic_store_explicit(&r->consumer_sleeping, 1, memory_order_relaxed);
        // Full fence between announcing the sleep and re-reading head (Dekker).
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&r->head, memory_order_relaxed) == head) {
            htp_futex_wait(&r->head, head, timeout_us - waited);
        }
        atomic_store_explicit(&r->consumer_sleeping, 0, memory_order_relaxed);
    }
}

// Wait until the ring has room or timeout_us passes (producer back-pressure).
static inline int htp_ring_wait_nonfull(struct htp_ring * r, uint32_t depth, int64_t timeout_us, int64_t spin_us,
                                        int poll) {
    int64_t start = htp_ring_now_us();
    for (;;) {
        uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
        uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (head - tail < depth) {
            return HTP_RING_OK;
        }
        int64_t waited = htp_ring_now_us() - start;
        if (waited >= timeout_us) {
            return HTP_RING_TIMEOUT;
        }
        if (poll || waited < spin_us) {
            for (int i = 0; i < 64; i++) {
                htp_cpu_relax();
            }
            continue;
        }
        atomic_store_explicit(&r->producer_sleeping, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&r->tail, memory_order_relaxed) == tail) {
            htp_futex_wait(&r->tail, tail, timeout_us - waited);
        }
        atomic_store_explicit(&r->producer_sleeping, 0, memory_order_relaxed);
    }
}

#endif  // HTP_RING_H
