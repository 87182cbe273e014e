// fence.c: fence slot allocator and host-side fence access (see fence.h).
//
// The slot words live in shared memory and are written by NPU processes, so
// they are accessed as atomics: seq with acquire / release (it publishes the
// status written before it), status relaxed (ordered by seq).

#include "fence.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "wait.h"

int htp_fence_pool_init(struct htp_fence_pool * pool, void * mem, uint32_t n_slots) {
    memset(pool, 0, sizeof *pool);
    pool->used = calloc((n_slots + 63) / 64 + 1, sizeof(uint64_t));
    if (!pool->used) {
        return HTP_STATUS_HOST_ERR;
    }
    pool->base    = mem;
    pool->n_slots = n_slots;
    return 0;
}

void htp_fence_pool_free(struct htp_fence_pool * pool) {
    free(pool->used);
    memset(pool, 0, sizeof *pool);
}

static bool slot_used(const struct htp_fence_pool * pool, uint32_t i) {
    return (pool->used[i / 64] >> (i % 64)) & 1;
}

static void mark(struct htp_fence_pool * pool, uint32_t first, uint32_t n, bool used) {
    for (uint32_t i = first; i < first + n; i++) {
        if (used) {
            pool->used[i / 64] |= 1ull << (i % 64);
        } else {
            pool->used[i / 64] &= ~(1ull << (i % 64));
        }
    }
}

struct htp_fence_slot * htp_fence_alloc(struct htp_fence_pool * pool, uint32_t n) {
    if (n == 0 || n > pool->n_slots - pool->n_used) {
        return NULL;
    }
    // First fit: find n free slots in a row.
    uint32_t run = 0;
    for (uint32_t i = 0; i < pool->n_slots; i++) {
        if (pool->used[i / 64] == ~0ull && i % 64 == 0) {
            run = 0;
            i += 63;
            continue;
        }
        run = slot_used(pool, i) ? 0 : run + 1;
        if (run == n) {
            uint32_t first = i + 1 - n;
            mark(pool, first, n, true);
            pool->n_used += n;
            uint8_t * p = pool->base + (size_t)first * HTP_FENCE_SLOT_SIZE;
            memset(p, 0, (size_t)n * HTP_FENCE_SLOT_SIZE);
            return (struct htp_fence_slot *)p;
        }
    }
    return NULL;
}

void htp_fence_release(struct htp_fence_pool * pool, struct htp_fence_slot * slot, uint32_t n) {
    if (!slot) {
        return;
    }
    size_t off = (size_t)((uint8_t *)slot - pool->base);
    // A slot not from this pool, or a double free, is our own bug.
    if (off % HTP_FENCE_SLOT_SIZE != 0 || off / HTP_FENCE_SLOT_SIZE + n > pool->n_slots) {
        abort();
    }
    uint32_t first = (uint32_t)(off / HTP_FENCE_SLOT_SIZE);
    for (uint32_t i = first; i < first + n; i++) {
        if (!slot_used(pool, i)) {
            abort();
        }
    }
    mark(pool, first, n, false);
    pool->n_used -= n;
}

bool htp_fence_reached(const struct htp_fence_slot * slot, uint32_t seq) {
    // Acquire: pairs with the signaller's release of seq; status is visible after.
    uint32_t cur = atomic_load_explicit((_Atomic uint32_t *)&slot->seq, memory_order_acquire);
    return (int32_t)(cur - seq) >= 0;
}

void htp_fence_signal(struct htp_fence_slot * slot, uint32_t seq, uint32_t status) {
    // Relaxed: published by the release store of seq below.
    atomic_store_explicit((_Atomic uint32_t *)&slot->status, status, memory_order_relaxed);
    atomic_store_explicit((_Atomic uint32_t *)&slot->seq, seq, memory_order_release);
    // Waiters (NPU ops, other host threads) may sleep on seq: wake them all.
    htp_wait_wake((_Atomic uint32_t *)&slot->seq, UINT32_MAX);
}

uint32_t htp_fence_status(const struct htp_fence_slot * slot) {
    // Relaxed: callers read it after an acquire load of seq (htp_fence_reached).
    return atomic_load_explicit((_Atomic uint32_t *)&slot->status, memory_order_relaxed);
}
