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
// The sleeping itself is each side's own: the ring knows no operating system.
// A side passes its struct htp_ring_sys (the host's from its wait module, the
// NPU's from its platform seam); the waits and wakes must be process-shared
// (a futex without FUTEX_PRIVATE_FLAG on Linux): the two sides are different
// processes mapping the same memfd.

#ifndef HTP_RING_H
#define HTP_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

// How one side sleeps and wakes on a ring word. wait sleeps while *word ==
// expected, at most timeout_us (spurious returns are fine: the callers loop);
// wake wakes one sleeper. Both process-shared.
struct htp_ring_sys {
    uint64_t (*now_us)(void);
    void (*wait)(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us);
    void (*wake)(_Atomic uint32_t * word);
    void (*relax)(void);  // a pause inside a spin loop
};

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

// --- producer side ---

// Copy one packet in and publish it. Non-blocking: HTP_RING_FULL when depth
// packets are already unread.
static inline int htp_ring_push(struct htp_ring * r, uint32_t depth, uint32_t entry_size, const void * pkt,
                                const struct htp_ring_sys * sys) {
    // Only we write head, so a relaxed load reads our own last store.
    uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    // Acquire: the consumer's release of tail says it has finished reading the
    // entries before it, so we may overwrite them.
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail >= depth) {
        return HTP_RING_FULL;
    }
    memcpy(r->entries + (size_t)(head & (depth - 1)) * entry_size, pkt, entry_size);
    // Publishes the packet bytes written above together with head (release),
    // and, seq_cst with the read after it, is ordered before that read: the
    // consumer's seq_cst announce-then-read is the other half (Dekker). No
    // standalone fence: the pair of seq_cst accesses says the same, and
    // ThreadSanitizer models it.
    atomic_store_explicit(&r->head, head + 1, memory_order_seq_cst);
    if (atomic_load_explicit(&r->consumer_sleeping, memory_order_seq_cst)) {
        sys->wake(&r->head);
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
static inline int htp_ring_pop(struct htp_ring * r, uint32_t depth, uint32_t entry_size, void * pkt,
                               const struct htp_ring_sys * sys) {
    int rc = htp_ring_peek(r, depth, entry_size, pkt);
    if (rc != HTP_RING_OK) {
        return rc;
    }
    // Only we write tail. Its store releases the entry to the producer, and
    // is ordered before the read of producer_sleeping (Dekker, as in push).
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, tail + 1, memory_order_seq_cst);
    if (atomic_load_explicit(&r->producer_sleeping, memory_order_seq_cst)) {
        sys->wake(&r->tail);
    }
    return HTP_RING_OK;
}

// The wait both sides share: until ready(r, depth) or timeout_us passes.
// Spins for spin_us first (the common case on a busy queue); with poll set it
// never sleeps. Otherwise it announces the sleep in *sleeping, then re-reads
// *word (Dekker with the peer's publish-fence-read), and sleeps on it.
static inline int htp_ring_wait_for(struct htp_ring * r, uint32_t depth, int (*ready)(struct htp_ring *, uint32_t),
                                    _Atomic uint32_t * word, _Atomic uint32_t * sleeping, int64_t timeout_us,
                                    int64_t spin_us, int poll, const struct htp_ring_sys * sys) {
    const uint64_t start = sys->now_us();
    for (;;) {
        // Relaxed: the peer's index is re-read with acquire by ready().
        const uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
        if (ready(r, depth)) {
            return HTP_RING_OK;
        }
        const int64_t waited = (int64_t)(sys->now_us() - start);
        if (waited >= timeout_us) {
            return HTP_RING_TIMEOUT;
        }
        if (poll || waited < spin_us) {
            // The clock once per 64 pauses, the peer's index at every one:
            // a pause takes about 140 cycles on recent Intel cores, so
            // looking only once per 64 left a packet unseen 2-6 us.
            for (int i = 0; i < 64 && !ready(r, depth); i++) {
                sys->relax();
            }
            continue;
        }
        // Announce the sleep, then re-read the word: both seq_cst, so one of
        // us sees the other (the peer's publish-then-read is seq_cst too).
        atomic_store_explicit(sleeping, 1, memory_order_seq_cst);
        if (atomic_load_explicit(word, memory_order_seq_cst) == seen) {
            sys->wait(word, seen, timeout_us - waited);
        }
        atomic_store_explicit(sleeping, 0, memory_order_relaxed);
    }
}

static inline int htp_ring_has_packet(struct htp_ring * r, uint32_t depth) {
    (void)depth;
    // Relaxed: tail is ours. Acquire: pairs with the producer's release of head.
    const uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return atomic_load_explicit(&r->head, memory_order_acquire) != tail;
}

static inline int htp_ring_has_room(struct htp_ring * r, uint32_t depth) {
    // Relaxed: head is ours. Acquire: the consumer is done with older entries.
    const uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    return head - atomic_load_explicit(&r->tail, memory_order_acquire) < depth;
}

// Consumer: wait until the ring holds a packet or timeout_us passes.
static inline int htp_ring_wait_nonempty(struct htp_ring * r, int64_t timeout_us, int64_t spin_us, int poll,
                                         const struct htp_ring_sys * sys) {
    return htp_ring_wait_for(r, 0, htp_ring_has_packet, &r->head, &r->consumer_sleeping, timeout_us, spin_us, poll,
                             sys);
}

// Producer: wait until the ring has room or timeout_us passes (back-pressure).
static inline int htp_ring_wait_nonfull(struct htp_ring * r, uint32_t depth, int64_t timeout_us, int64_t spin_us,
                                        int poll, const struct htp_ring_sys * sys) {
    return htp_ring_wait_for(r, depth, htp_ring_has_room, &r->tail, &r->producer_sleeping, timeout_us, spin_us, poll,
                             sys);
}

#endif  // HTP_RING_H
