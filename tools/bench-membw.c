// bench-membw: this machine's read bandwidth with all cores, the ceiling of
// decode speed (a generated token reads every weight once).
//
//   htp-bench membw [--mib N] [--reps N] [--threads N] [--json]
//
// Each thread sums its slice of a buffer far larger than the caches with
// wide vector loads; the median over repetitions of the slowest thread's
// time gives bytes per second.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef float vf32 __attribute__((vector_size(64)));

struct membw_job {
    const vf32 *        data;
    size_t              n;  // vectors
    pthread_barrier_t * start;
    int64_t             ns;
    float               sink;
};

static void * membw_thread(void * arg) {
    struct membw_job * j = arg;
    pthread_barrier_wait(j->start);
    int64_t t0 = bench_now_ns();
    vf32    a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    size_t  i = 0;
    for (; i + 4 <= j->n; i += 4) {
        a0 += j->data[i];
        a1 += j->data[i + 1];
        a2 += j->data[i + 2];
        a3 += j->data[i + 3];
    }
    vf32 s  = a0 + a1 + a2 + a3;
    j->ns   = bench_now_ns() - t0;
    j->sink = s[0] + s[15];
    return NULL;
}

double bench_membw_measure(int n_threads, size_t bytes, int reps) {
    size_t n   = bytes / sizeof(vf32);
    vf32 * buf = aligned_alloc(4096, n * sizeof(vf32));
    if (!buf) {
        return 0;
    }
    memset(buf, 1, n * sizeof(vf32));  // fault every page in first

    int64_t * best = calloc((size_t)reps, sizeof(int64_t));
    for (int r = 0; r < reps; r++) {
        pthread_t         th[64];
        struct membw_job  jobs[64];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)n_threads);
        size_t per = n / (size_t)n_threads / 4 * 4;
        for (int t = 0; t < n_threads; t++) {
            jobs[t] = (struct membw_job){buf + per * (size_t)t, per, &start, 0, 0};
            pthread_create(&th[t], NULL, membw_thread, &jobs[t]);
        }
        int64_t slowest = 0;
        for (int t = 0; t < n_threads; t++) {
            pthread_join(th[t], NULL);
            slowest = jobs[t].ns > slowest ? jobs[t].ns : slowest;
        }
        pthread_barrier_destroy(&start);
        best[r] = slowest;
    }
    int64_t med = bench_median_i64(best, reps);
    free(best);
    free(buf);
    return (double)(n / (size_t)n_threads / 4 * 4 * (size_t)n_threads) * sizeof(vf32) / (med * 1e-9);
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
    double bw = bench_membw_measure(threads, (size_t)mib << 20, reps);
    if (bw <= 0) {
        fprintf(stderr, "membw: cannot allocate %d MiB\n", mib);
        return 1;
    }
    if (json) {
        printf("{\"threads\": %d, \"mib\": %d, \"read_gbps\": %.2f}\n", threads, mib, bw / 1e9);
    } else {
        printf("read bandwidth, %d thread(s), %d MiB: %.2f GB/s\n", threads, mib, bw / 1e9);
    }
    return 0;
}
