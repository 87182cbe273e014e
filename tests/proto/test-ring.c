// test-ring: the SPSC ring of htp-ring.h on its own, in one process over a
// shared mapping: full / empty, peek, 32-bit index wrap-around, corruption detection,
// back-pressure at depth, 1,000,000 stamped packets between two threads pinned
// to different cores, and both futex sleep / wake paths, each bounded in time.

#include "proto/htp-ring.h"
#include "test-ring-sys.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define N_PACKETS 1000000u
#define DEPTH     8u

#include "test-check.h"

// A 64-byte packet: its sequence number, a payload derived from it, and a
// checksum over both, so a torn or stale read is caught.
struct packet {
    uint64_t seq;
    uint64_t payload[6];
    uint64_t sum;
};
_Static_assert(sizeof(struct packet) == 64, "packet size");

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static void packet_stamp(struct packet * p, uint64_t seq) {
    p->seq = seq;
    p->sum = mix(seq);
    for (int i = 0; i < 6; i++) {
        p->payload[i] = mix(seq * 7 + (uint64_t)i);
        p->sum ^= mix(p->payload[i] + (uint64_t)i);
    }
}

static int packet_check(const struct packet * p, uint64_t want_seq) {
    if (p->seq != want_seq) {
        return 0;
    }
    uint64_t sum = mix(p->seq);
    for (int i = 0; i < 6; i++) {
        if (p->payload[i] != mix(p->seq * 7 + (uint64_t)i)) {
            return 0;
        }
        sum ^= mix(p->payload[i] + (uint64_t)i);
    }
    return sum == p->sum;
}

static struct htp_ring * ring_new(uint32_t depth) {
    void * mem = mmap(NULL, htp_ring_sizeof(depth, sizeof(struct packet)), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED, "mmap of a ring of %u", depth);
    if (mem == MAP_FAILED) {
        exit(1);  // no ring, no test
    }
    return htp_ring_init(mem);
}

static void ring_del(struct htp_ring * r, uint32_t depth) {
    munmap(r, htp_ring_sizeof(depth, sizeof(struct packet)));
}

// --- single-threaded checks ---

static void test_full_empty_wrap(void) {
    printf("full / empty / wrap-around of the 32-bit indices\n");
    struct htp_ring * r = ring_new(DEPTH);
    struct packet     p;

    // Start just below the 32-bit wrap so that head and tail cross it.
    atomic_store_explicit(&r->head, 0xfffffff0u, memory_order_relaxed);
    atomic_store_explicit(&r->tail, 0xfffffff0u, memory_order_relaxed);

    CHECK(htp_ring_pop(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_EMPTY, "new ring not empty");
    CHECK(htp_ring_peek(r, DEPTH, sizeof p, &p) == HTP_RING_EMPTY, "peek of a new ring found a packet");

    uint64_t pushed = 0, popped = 0;
    for (int round = 0; round < 10; round++) {
        // Fill to depth; the next push must be refused.
        for (uint32_t i = 0; i < DEPTH; i++) {
            packet_stamp(&p, pushed);
            CHECK(htp_ring_push(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_OK, "push %u of a non-full ring",
                  i);
            pushed++;
        }
        packet_stamp(&p, 9999);
        CHECK(htp_ring_push(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_FULL, "push into a full ring accepted");
        CHECK(htp_ring_wait_nonfull(r, DEPTH, 1000, 0, 1, &test_ring_sys) == HTP_RING_TIMEOUT,
              "full ring reported room");
        CHECK(htp_ring_wait_nonempty(r, 1000, 0, 1, &test_ring_sys) == HTP_RING_OK, "full ring reported empty");

        // Drain part of it (varying), so the fill level moves around the mask.
        uint32_t n_pop = round % 3 == 0 ? DEPTH : 3u + (uint32_t)round % 4u;
        for (uint32_t i = 0; i < n_pop; i++) {
            // Peek shows the packet pop then takes; twice, as it consumes nothing.
            for (int k = 0; k < 2; k++) {
                CHECK(htp_ring_peek(r, DEPTH, sizeof p, &p) == HTP_RING_OK && packet_check(&p, popped),
                      "peek %d at packet %llu", k, (unsigned long long)popped);
            }
            CHECK(htp_ring_pop(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_OK, "pop %u of a non-empty ring", i);
            CHECK(packet_check(&p, popped), "packet %llu read back wrong", (unsigned long long)popped);
            popped++;
        }
        // Drain the rest.
        while (htp_ring_pop(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_OK) {
            CHECK(packet_check(&p, popped), "packet %llu read back wrong", (unsigned long long)popped);
            popped++;
        }
        CHECK(popped == pushed, "popped %llu of %llu", (unsigned long long)popped, (unsigned long long)pushed);
        CHECK(htp_ring_wait_nonempty(r, 1000, 0, 1, &test_ring_sys) == HTP_RING_TIMEOUT,
              "empty ring reported a packet");
    }
    uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    CHECK(head < 0xfffffff0u, "head did not wrap (0x%x)", head);

    // An impossible fill level (peer wrote garbage) is reported, not read.
    atomic_store_explicit(&r->head, atomic_load_explicit(&r->tail, memory_order_relaxed) + DEPTH + 1,
                          memory_order_relaxed);
    CHECK(htp_ring_pop(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_CORRUPT, "corrupt ring not reported");
    CHECK(htp_ring_peek(r, DEPTH, sizeof p, &p) == HTP_RING_CORRUPT, "corrupt ring not reported by peek");
    ring_del(r, DEPTH);
}

// --- two threads ---

struct stream {
    struct htp_ring * r;
    uint64_t          n;
    int               cpu;       // core to pin to, -1 for none
    uint64_t          errors;    // consumer: packets that failed their check
    uint64_t          timeouts;  // waits that ran into their (generous) deadline
};

static void pin(int cpu) {
    if (cpu < 0) {
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
    }
}

static void * producer(void * arg) {
    struct stream * s = arg;
    pin(s->cpu);
    struct packet p;
    for (uint64_t i = 0; i < s->n; i++) {
        packet_stamp(&p, i);
        while (htp_ring_push(s->r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_FULL) {
            if (htp_ring_wait_nonfull(s->r, DEPTH, 2000000, 20, 0, &test_ring_sys) == HTP_RING_TIMEOUT) {
                s->timeouts++;
                return NULL;
            }
        }
    }
    return NULL;
}

static void * consumer(void * arg) {
    struct stream * s = arg;
    pin(s->cpu);
    struct packet p;
    for (uint64_t i = 0; i < s->n; i++) {
        int rc;
        while ((rc = htp_ring_pop(s->r, DEPTH, sizeof p, &p, &test_ring_sys)) == HTP_RING_EMPTY) {
            if (htp_ring_wait_nonempty(s->r, 2000000, 20, 0, &test_ring_sys) == HTP_RING_TIMEOUT) {
                s->timeouts++;
                return NULL;
            }
        }
        if (rc != HTP_RING_OK || !packet_check(&p, i)) {
            if (s->errors++ < 5) {
                printf("  packet %llu: rc %d seq %llu\n", (unsigned long long)i, rc, (unsigned long long)p.seq);
            }
        }
    }
    return NULL;
}

static void test_stream(void) {
    long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("%u packets, producer and consumer threads %s\n", N_PACKETS,
           n_cpu > 1 ? "pinned to cores 0 and 1" : "unpinned (1 CPU)");
    struct htp_ring * r    = ring_new(DEPTH);
    struct stream     prod = {r, N_PACKETS, n_cpu > 1 ? 0 : -1, 0, 0};
    struct stream     cons = {r, N_PACKETS, n_cpu > 1 ? 1 : -1, 0, 0};
    pthread_t         tp, tc;
    int64_t           t0 = test_ring_now_us();
    pthread_create(&tc, NULL, consumer, &cons);
    pthread_create(&tp, NULL, producer, &prod);
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    int64_t t1 = test_ring_now_us();
    CHECK(cons.errors == 0, "%llu packets out of order or corrupted", (unsigned long long)cons.errors);
    CHECK(prod.timeouts == 0 && cons.timeouts == 0, "a wait timed out (lost wake-up?)");
    CHECK(atomic_load_explicit(&r->head, memory_order_relaxed) == (uint32_t)N_PACKETS, "head != packets");
    CHECK(atomic_load_explicit(&r->tail, memory_order_relaxed) == (uint32_t)N_PACKETS, "tail != packets");
    printf("  %.1f ms, %.0f ns per packet\n", (t1 - t0) / 1e3, (t1 - t0) * 1e3 / N_PACKETS);
    ring_del(r, DEPTH);
}

// --- futex sleep / wake paths ---

struct sleeper {
    struct htp_ring * r;
    int               rc;
    int64_t           woke_us;  // when the wait returned
};

static void * sleep_nonempty(void * arg) {
    struct sleeper * s = arg;
    // spin_us 0: goes to sleep on the futex right away.
    s->rc      = htp_ring_wait_nonempty(s->r, 5000000, 0, 0, &test_ring_sys);
    s->woke_us = test_ring_now_us();
    return NULL;
}

static void * sleep_nonfull(void * arg) {
    struct sleeper * s = arg;
    s->rc              = htp_ring_wait_nonfull(s->r, DEPTH, 5000000, 0, 0, &test_ring_sys);
    s->woke_us         = test_ring_now_us();
    return NULL;
}

// Wait (bounded) until *flag reads 1: the other thread is asleep.
static int wait_flag(_Atomic uint32_t * flag) {
    int64_t t0 = test_ring_now_us();
    while (atomic_load_explicit(flag, memory_order_relaxed) == 0) {
        if (test_ring_now_us() - t0 > 2000000) {
            return 0;
        }
        usleep(100);
    }
    return 1;
}

static void test_futex(void) {
    printf("futex: consumer asleep on an empty ring, woken by a push\n");
    struct htp_ring * r = ring_new(DEPTH);
    struct packet     p;
    struct sleeper    s = {r, -99, 0};
    pthread_t         t;
    pthread_create(&t, NULL, sleep_nonempty, &s);
    int asleep = wait_flag(&r->consumer_sleeping);
    CHECK(asleep, "consumer never announced its sleep");
    usleep(20000);  // let it really block in the kernel
    packet_stamp(&p, 1);
    int64_t t_push = test_ring_now_us();
    CHECK(htp_ring_push(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_OK, "push");
    pthread_join(t, NULL);
    CHECK(s.rc == HTP_RING_OK, "consumer wait returned %d", s.rc);
    printf("  woken %lld us after the push\n", (long long)(s.woke_us - t_push));
    CHECK(s.woke_us - t_push < 1000000, "wake-up took %lld us", (long long)(s.woke_us - t_push));
    CHECK(atomic_load_explicit(&r->consumer_sleeping, memory_order_relaxed) == 0, "sleep flag left set");

    printf("futex: producer asleep on a full ring, woken by a pop\n");
    for (uint32_t i = 1; i < DEPTH; i++) {
        packet_stamp(&p, 1 + i);
        CHECK(htp_ring_push(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_OK, "fill");
    }
    struct sleeper s2 = {r, -99, 0};
    pthread_create(&t, NULL, sleep_nonfull, &s2);
    asleep = wait_flag(&r->producer_sleeping);
    CHECK(asleep, "producer never announced its sleep");
    usleep(20000);
    int64_t t_pop = test_ring_now_us();
    CHECK(htp_ring_pop(r, DEPTH, sizeof p, &p, &test_ring_sys) == HTP_RING_OK && packet_check(&p, 1), "pop");
    pthread_join(t, NULL);
    CHECK(s2.rc == HTP_RING_OK, "producer wait returned %d", s2.rc);
    printf("  woken %lld us after the pop\n", (long long)(s2.woke_us - t_pop));
    CHECK(s2.woke_us - t_pop < 1000000, "wake-up took %lld us", (long long)(s2.woke_us - t_pop));

    printf("futex: a sleep with nobody to wake it ends at its deadline\n");
    struct htp_ring * e  = ring_new(DEPTH);
    int64_t           t0 = test_ring_now_us();
    int               rc = htp_ring_wait_nonempty(e, 50000, 0, 0, &test_ring_sys);
    int64_t           dt = test_ring_now_us() - t0;
    CHECK(rc == HTP_RING_TIMEOUT, "wait on an empty ring returned %d", rc);
    CHECK(dt >= 50000 && dt < 1000000, "50 ms wait took %lld us", (long long)dt);
    ring_del(e, DEPTH);
    ring_del(r, DEPTH);
}

int main(void) {
    test_full_empty_wrap();
    test_futex();
    test_stream();
    return test_exit_code("test-ring");
}
