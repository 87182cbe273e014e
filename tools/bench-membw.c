// bench-membw: this machine's read bandwidth with all cores, the ceiling of
// decode speed (a generated token reads every weight once).
//
//   htp-bench membw [--mib N] [--reps N] [--threads N] [--json]
//
// The threads sum a buffer far larger than the caches with wide vector
// loads (see membw_read_*), in chunks of 1 MiB they claim from a shared counter, so a thread on
// a slower core (a busy sibling hyperthread, a neighbour) leaves more chunks
// to the others and the figure is the machine's, not its slowest core's
// (with fixed halves it swung between 43 and 63 GB/s within a minute here,
// against 57-60 shared). The time runs from the threads' common start to the
// last one's end; the median over repetitions gives bytes per second.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef float vf32 __attribute__((vector_size(64)));

#define MEMBW_CHUNK ((size_t)(1 << 20) / sizeof(vf32))  // vectors a claim covers

struct membw_run {
    const vf32 *        data;
    size_t              n;           // vectors, a multiple of MEMBW_CHUNK
    _Atomic size_t      next_chunk;  // the next chunk to claim
    pthread_barrier_t * start;
};

struct membw_job {
    struct membw_run * run;
    int64_t            t_start, t_end;
    float              sink;
};

// The read loop: each 1 MiB chunk as MEMBW_STREAMS streams read side by
// side (the way a decode kernel reads several row groups at once), 64-byte
// vector loads, and a software prefetch MEMBW_AHEAD bytes ahead in every
// stream. Built for AVX-512 when the CPU has it (the tools are otherwise
// compiled for the baseline x86-64, whose 16-byte loads under-read a DDR5
// machine), so the ceiling is measured with a loop at least as good as the
// best decode kernel's.
#define MEMBW_STREAMS 4
#define MEMBW_AHEAD   1024

// Inlined into each of the two functions below, so compiled for each one's target.
static inline __attribute__((always_inline)) float membw_read(struct membw_run * r, size_t n_chunks) {
    vf32   acc[MEMBW_STREAMS][2] = {{{0}}};
    size_t c;
    while ((c = atomic_fetch_add_explicit(&r->next_chunk, 1, memory_order_relaxed)) < n_chunks) {
        const vf32 * d = r->data + c * MEMBW_CHUNK;
        for (size_t i = 0; i < MEMBW_CHUNK / MEMBW_STREAMS; i += 2) {
            for (int s = 0; s < MEMBW_STREAMS; s++) {
                const vf32 * p = d + s * (MEMBW_CHUNK / MEMBW_STREAMS) + i;
                __builtin_prefetch((const char *)p + MEMBW_AHEAD);
                acc[s][0] += p[0];
                acc[s][1] += p[1];
            }
        }
    }
    vf32 sum = {0};
    for (int s = 0; s < MEMBW_STREAMS; s++) {
        sum += acc[s][0] + acc[s][1];
    }
    return sum[0] + sum[15];
}

static float membw_read_base(struct membw_run * r, size_t n_chunks) {
    return membw_read(r, n_chunks);
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static float membw_read_avx512(struct membw_run * r, size_t n_chunks) {
    return membw_read(r, n_chunks);
}
#endif

static void * membw_thread(void * arg) {
    struct membw_job * j = arg;
    struct membw_run * r = j->run;
    pthread_barrier_wait(r->start);
    j->t_start = bench_now_ns();
#if defined(__x86_64__)
    j->sink = __builtin_cpu_supports("avx512f") ? membw_read_avx512(r, r->n / MEMBW_CHUNK)
                                                : membw_read_base(r, r->n / MEMBW_CHUNK);
#else
    j->sink = membw_read_base(r, r->n / MEMBW_CHUNK);
#endif
    j->t_end = bench_now_ns();
    return NULL;
}

struct bench_membw {
    vf32 * data;
    size_t n;  // vectors, a multiple of MEMBW_CHUNK
};

struct bench_membw * bench_membw_open(size_t bytes) {
    const size_t         n = bytes / sizeof(vf32) / MEMBW_CHUNK * MEMBW_CHUNK;
    struct bench_membw * m = n ? malloc(sizeof *m) : NULL;
    if (!m) {
        return NULL;
    }
    m->n    = n;
    m->data = aligned_alloc(4096, n * sizeof(vf32));
    if (!m->data) {
        free(m);
        return NULL;
    }
    memset(m->data, 1, n * sizeof(vf32));  // fault every page in first
    return m;
}

void bench_membw_close(struct bench_membw * m) {
    if (m) {
        free(m->data);
        free(m);
    }
}

double bench_membw_measure(struct bench_membw * m, int n_threads, int reps) {
    if (!m || n_threads < 1 || n_threads > 64 || reps < 1) {
        return 0;
    }
    int64_t * times = calloc((size_t)reps, sizeof(int64_t));
    for (int r = 0; r < reps && times; r++) {
        pthread_t         th[64];
        struct membw_job  jobs[64];
        pthread_barrier_t start;
        struct membw_run  run = {.data = m->data, .n = m->n, .start = &start};
        atomic_init(&run.next_chunk, 0);
        pthread_barrier_init(&start, NULL, (unsigned)n_threads);
        for (int t = 0; t < n_threads; t++) {
            jobs[t] = (struct membw_job){.run = &run};
            pthread_create(&th[t], NULL, membw_thread, &jobs[t]);
        }
        int64_t first = INT64_MAX, last = 0;
        for (int t = 0; t < n_threads; t++) {
            pthread_join(th[t], NULL);
            first = jobs[t].t_start < first ? jobs[t].t_start : first;
            last  = jobs[t].t_end > last ? jobs[t].t_end : last;
        }
        pthread_barrier_destroy(&start);
        times[r] = last - first;
    }
    const int64_t med = times ? bench_median_i64(times, reps) : 0;
    free(times);
    return med > 0 ? (double)(m->n * sizeof(vf32)) / (med * 1e-9) : 0;
}

int bench_mode_membw(int argc, char ** argv) {
    int mib = 1024, reps = 5, json = 0;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc) {
            mib = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "membw: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (mib < 16 || reps < 1 || threads < 1 || threads > 64) {
        fprintf(stderr, "membw: --mib >= 16, --reps >= 1, 1 <= --threads <= 64\n");
        return 2;
    }
    struct bench_membw * m = bench_membw_open((size_t)mib << 20);
    if (!m) {
        fprintf(stderr, "membw: cannot allocate %d MiB\n", mib);
        return 1;
    }
    const double bw = bench_membw_measure(m, threads, reps);
    bench_membw_close(m);
    if (bw <= 0) {
        fprintf(stderr, "membw: the measurement failed\n");
        return 1;
    }
    if (json) {
        printf("{\"threads\": %d, \"mib\": %d, \"read_gbps\": %.2f}\n", threads, mib, bw / 1e9);
    } else {
        printf("read bandwidth, %d thread(s), %d MiB: %.2f GB/s\n", threads, mib, bw / 1e9);
    }
    return 0;
}
