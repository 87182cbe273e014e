// bench-opcost: the fixed cost of an op on an HTP device, the part of every
// op that is not its arithmetic: descriptor, dispatch to the worker pool,
// the workers' wake-up and the barrier at its end.
//
//   htp-bench opcost [--ops add,mul_mat] [-N 256] [--type q4_0] [--reps 9]
//                    [--gap-us 500] [-d HTP0] [--json]
//
// Each op kind runs as one graph of N independent ops (all reading the same
// inputs, each writing its own output) and as a graph of 1, on HTP and on
// ggml-cpu, alternated. The cost of an op is (t(N) - t(1)) / (N - 1): the
// graph's own round trip cancels out. The kinds are tiny on purpose:
//   add      a one-row ADD of 2048 floats (the residual adds of a 1B decode)
//   mul_mat  a 64 x 64 matmul of --type weights by one column
// Between graphs the bench idles --gap-us, as a decode does between tokens
// (sampling, the host's graph build), so that the first op of a graph meets
// whatever state an idle pool is in. The NPU's own per-op times then give the
// first op of each N-op graph against the median of the others: the first
// must be no slower.
//
// Those times come from the profiler (GGML_HEXAGON_PROFILE=1), whose host
// side logs a line per op inside graph_compute: about 0.5-1 us an op on this
// project's machines, which the per-op cost must not count. The profiler is
// fixed for the life of the backend registry, so the timings run in this
// process with it off, and this program runs itself once more, profiler on
// (--npu-times), for the NPU's per-op times alone. A user who sets
// GGML_HEXAGON_PROFILE gets one run with it, the timings then including it.
//
// A profile-op line gives an op's time in whole microseconds, and its cycles.
// The ops here take well under a microsecond, so whole microseconds would
// read 1 against 0 for a difference of a few hundred nanoseconds. Where the
// cycles are the time-stamp counter (an x86 NPU: rdtsc, invariant, the same
// counter in every process of the machine), the times are the cycles at the
// counter's rate, measured here against CLOCK_MONOTONIC; elsewhere (an NPU
// under qemu-hexagon counts no cycles) the microseconds.

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "bench.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "model-load.h"

#define OC_MAX_PROF 4096  // per-op NPU times kept from one graph

// The NPU's per-op times, from the profile-op lines of the log
// ("ggml-htp: <dev> profile-op #<i> <OP>: usec <n> ...", src/host/profile.c).
struct oc_log {
    struct htp_log_lines lines;
    int                  collect;  // keep profile-op times now
    int                  n;
    double               us[OC_MAX_PROF];      // whole microseconds
    double               cycles[OC_MAX_PROF];  // 0 where the line had none
};

static struct oc_log g_oc_log;

static void oc_parse_line(void * user, const char * s) {
    struct oc_log * l  = user;
    const char *    at = strstr(s, " profile-op #");
    if (!at || !l->collect || l->n >= OC_MAX_PROF) {
        return;
    }
    const char *       u = strstr(at, ": usec ");
    unsigned long long us, cycles = 0;
    if (u && sscanf(u, ": usec %llu cycles %llu", &us, &cycles) >= 1) {
        l->us[l->n]     = (double)us;
        l->cycles[l->n] = (double)cycles;
        l->n++;
    }
}

// Time-stamp counter ticks per microsecond (0 where there is none): the
// ticks over 20 ms of CLOCK_MONOTONIC.
static double oc_tsc_per_us(void) {
#if defined(__x86_64__)
    const struct timespec pause = {0, 20 * 1000 * 1000};
    const int64_t         t0    = bench_now_ns();
    const uint64_t        c0    = __rdtsc();
    nanosleep(&pause, NULL);
    const int64_t  t1 = bench_now_ns();
    const uint64_t c1 = __rdtsc();
    return t1 > t0 ? (double)(c1 - c0) * 1e3 / (double)(t1 - t0) : 0;
#else
    return 0;
#endif
}

// Whether every op of the last graph has cycles to read its time from.
static int oc_log_has_cycles(const struct oc_log * l, double tsc_per_us) {
    int all = tsc_per_us > 0;
    for (int k = 0; k < l->n && all; k++) {
        all = l->cycles[k] > 0;
    }
    return all;
}

// Op i of the last graph in microseconds: its cycles at the counter's rate
// when the graph has them (oc_log_has_cycles), else its whole microseconds.
static double oc_op_us(const struct oc_log * l, int i, int cycles, double tsc_per_us) {
    return cycles ? l->cycles[i] / tsc_per_us : l->us[i];
}

static void oc_log_cb(enum ggml_log_level level, const char * text, void * user) {
    struct oc_log * l = user;
    level             = htp_log_lines_feed(&l->lines, level, text, oc_parse_line, l);
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        fputs(text, stderr);
    }
}

enum oc_kind { OC_ADD, OC_MUL_MAT };

struct oc_graph {
    ggml_backend_t        backend;
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_cgraph *  gf;
};

// n ops of kind on backend: inputs in one buffer of the backend, set once.
static int oc_build(struct oc_graph * g, ggml_backend_t backend, enum oc_kind kind, enum ggml_type wtype, int n) {
    memset(g, 0, sizeof *g);
    g->backend                 = backend;
    struct ggml_init_params ip = {(size_t)(n + 8) * ggml_tensor_overhead() + ggml_graph_overhead_custom(n + 8, false),
                                  NULL, true};
    g->ctx                     = ggml_init(ip);
    if (!g->ctx) {
        return -1;
    }
    g->gf = ggml_new_graph_custom(g->ctx, n + 8, false);
    struct ggml_tensor *a, *b;
    if (kind == OC_ADD) {
        a = ggml_new_tensor_1d(g->ctx, GGML_TYPE_F32, 2048);
        b = ggml_new_tensor_1d(g->ctx, GGML_TYPE_F32, 2048);
    } else {
        a = ggml_new_tensor_2d(g->ctx, wtype, 64, 64);
        b = ggml_new_tensor_1d(g->ctx, GGML_TYPE_F32, 64);
    }
    for (int i = 0; i < n; i++) {
        ggml_build_forward_expand(g->gf, kind == OC_ADD ? ggml_add(g->ctx, a, b) : ggml_mul_mat(g->ctx, a, b));
    }
    g->buf = ggml_backend_alloc_ctx_tensors(g->ctx, backend);
    if (!g->buf) {
        return -1;
    }
    // Inputs: values in [-1, 1]; the weights quantized to their type.
    const int64_t na = ggml_nelements(a), nb = ggml_nelements(b);
    float *       f = malloc(sizeof(float) * (size_t)(na > nb ? na : nb));
    void *        q = malloc(ggml_nbytes(a));
    if (!f || !q) {
        free(f);
        free(q);
        return -1;
    }
    for (int64_t i = 0; i < na; i++) {
        f[i] = (float)((i * 7919) % 2001) / 1000.0f - 1.0f;
    }
    if (a->type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(a, f, 0, ggml_nbytes(a));
    } else {
        ggml_quantize_chunk(a->type, f, q, 0, a->ne[1], a->ne[0], NULL);
        ggml_backend_tensor_set(a, q, 0, ggml_nbytes(a));
    }
    for (int64_t i = 0; i < nb; i++) {
        f[i] = (float)((i * 104729) % 2001) / 1000.0f - 1.0f;
    }
    ggml_backend_tensor_set(b, f, 0, ggml_nbytes(b));
    free(f);
    free(q);
    return 0;
}

static void oc_free(struct oc_graph * g) {
    ggml_backend_buffer_free(g->buf);
    ggml_free(g->ctx);
}

static void oc_idle(int gap_us) {
    if (gap_us > 0) {
        struct timespec ts = {gap_us / 1000000, (long)(gap_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

// One compute of g after an idle gap, in ns.
static int64_t oc_once(struct oc_graph * g, int gap_us) {
    oc_idle(gap_us);
    const int64_t t0 = bench_now_ns();
    ggml_backend_graph_compute(g->backend, g->gf);
    ggml_backend_synchronize(g->backend);
    return bench_now_ns() - t0;
}

struct oc_result {
    double htp_op_us, cpu_op_us;          // per op, from t(N) - t(1)
    double htp_graph1_us, cpu_graph1_us;  // a graph of one op
    double npu_first_us, npu_rest_us;     // the NPU's profile: first op, median of the others
    int    npu_from_cycles;               // 1: those from the ops' cycles (oc_op_us), 0: whole microseconds
};

static int oc_measure(ggml_backend_t htp, ggml_backend_t cpu, enum oc_kind kind, enum ggml_type wtype, int n, int reps,
                      int gap_us, struct oc_result * r) {
    struct oc_graph g[2][2];  // [htp, cpu][1 op, n ops]
    ggml_backend_t  be[2] = {htp, cpu};
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 2; k++) {
            if (oc_build(&g[s][k], be[s], kind, wtype, k ? n : 1) != 0) {
                fprintf(stderr, "opcost: cannot build the graphs\n");
                return -1;
            }
        }
    }
    int64_t * t[2][2];
    double *  first  = malloc(sizeof(double) * (size_t)reps);
    double *  rest   = malloc(sizeof(double) * (size_t)reps);
    int       n_prof = 0;
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 2; k++) {
            t[s][k] = malloc(sizeof(int64_t) * (size_t)reps);
            oc_once(&g[s][k], gap_us);  // warm-up: first touch, repack, caches
        }
    }
    double *     others      = malloc(sizeof(double) * (size_t)n);
    const double tsc_per_us  = oc_tsc_per_us();
    int          from_cycles = 1;  // every profiled graph's times from its cycles
    for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < 2; k++) {
            for (int s = 0; s < 2; s++) {  // HTP, then CPU, alternated
                g_oc_log.collect = s == 0 && k == 1;
                g_oc_log.n       = 0;
                t[s][k][rep]     = oc_once(&g[s][k], gap_us);
                g_oc_log.collect = 0;
                if (s == 0 && k == 1 && g_oc_log.n >= 2 && g_oc_log.n <= n) {
                    const int cycles = oc_log_has_cycles(&g_oc_log, tsc_per_us);
                    for (int i = 1; i < g_oc_log.n; i++) {
                        others[i - 1] = oc_op_us(&g_oc_log, i, cycles, tsc_per_us);
                    }
                    first[n_prof] = oc_op_us(&g_oc_log, 0, cycles, tsc_per_us);
                    rest[n_prof]  = bench_median_f64(others, g_oc_log.n - 1);
                    from_cycles &= cycles;
                    n_prof++;
                }
            }
        }
    }
    double med[2][2];
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 2; k++) {
            med[s][k] = (double)bench_median_i64(t[s][k], reps) / 1e3;
            free(t[s][k]);
            oc_free(&g[s][k]);
        }
    }
    r->htp_graph1_us   = med[0][0];
    r->cpu_graph1_us   = med[1][0];
    r->htp_op_us       = (med[0][1] - med[0][0]) / (n - 1);
    r->cpu_op_us       = (med[1][1] - med[1][0]) / (n - 1);
    r->npu_first_us    = n_prof ? bench_median_f64(first, n_prof) : -1;
    r->npu_rest_us     = n_prof ? bench_median_f64(rest, n_prof) : -1;
    r->npu_from_cycles = n_prof && from_cycles;
    free(first);
    free(rest);
    free(others);
    return 0;
}

extern char ** environ;

// The NPU's per-op times from a run of this program with the profiler on:
// argv (the mode's arguments) plus --npu-times, whose output is one line
// "<first> <others> <from cycles>" per op kind, in --ops order. Fills first[i], rest[i], from_cycles[i]
// for up to max kinds; the number of kinds read, or -1.
static int oc_npu_times_run(int argc, char ** argv, int max, double * first, double * rest, int * from_cycles) {
    char ** av = calloc((size_t)argc + 4, sizeof *av);
    int     fd[2];
    if (!av || pipe(fd) != 0) {
        free(av);
        return -1;
    }
    int na   = 0;
    av[na++] = "htp-bench";
    av[na++] = "opcost";
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") != 0) {
            av[na++] = argv[i];
        }
    }
    av[na++] = "--npu-times";
    av[na]   = NULL;
    // This process's profiler setting was read when the registry loaded: changing the variable now only affects the
    // child.
    setenv("GGML_HEXAGON_PROFILE", "1", 1);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    int   rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    unsetenv("GGML_HEXAGON_PROFILE");
    free(av);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        fprintf(stderr, "opcost: cannot run the profiled pass: %s\n", strerror(rc));
        return -1;
    }
    FILE * f = fdopen(fd[0], "r");
    int    n = 0;
    if (f) {
        while (n < max && fscanf(f, "%lf %lf %d", &first[n], &rest[n], &from_cycles[n]) == 3) {
            n++;
        }
        fclose(f);
    } else {
        close(fd[0]);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(
            stderr,
            "opcost: the profiled pass failed after %d op kind(s): the NPU's per-op times of the rest are missing\n",
            n);
    }
    return n;
}

int bench_mode_opcost(int argc, char ** argv) {
    int         n = 256, reps = 9, gap_us = 500, json = 0, npu_times = 0;
    const char *ops = "add,mul_mat", *devname = "HTP0", *tname = "q4_0";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
            ops = argv[++i];
        } else if (!strcmp(argv[i], "-N") && i + 1 < argc) {
            n = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--type") && i + 1 < argc) {
            tname = argv[++i];
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--gap-us") && i + 1 < argc) {
            gap_us = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            devname = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--npu-times")) {
            npu_times = 1;  // the profiled pass (oc_npu_times_run)
        } else {
            fprintf(stderr, "opcost: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (n < 2 || n > 4096 || reps < 1 || gap_us < 0 || gap_us > 1000000) {
        fprintf(stderr, "opcost: -N in 2..4096, --reps >= 1, --gap-us in 0..1000000\n");
        return 2;
    }
    const enum ggml_type wtype = bench_type_by_name(tname);
    if (wtype == GGML_TYPE_COUNT || 64 % ggml_blck_size(wtype) != 0) {
        fprintf(stderr, "opcost: --type '%s' is not a type whose blocks divide 64\n", tname);
        return 2;
    }

    // The profiler: on in the profiled pass; else as the user set it, and
    // when it is off, the NPU's per-op times come from a profiled pass.
    if (npu_times) {
        setenv("GGML_HEXAGON_PROFILE", "1", 1);
    }
    const char * prof_env  = getenv("GGML_HEXAGON_PROFILE");
    const int    user_prof = prof_env && prof_env[0] != '\0' && strcmp(prof_env, "0") != 0;
    double       npu_first[16], npu_rest[16];
    int          npu_from_cycles[16];
    int          n_npu = -1;
    if (!user_prof) {
        n_npu = oc_npu_times_run(argc, argv, 16, npu_first, npu_rest, npu_from_cycles);
    }
    ggml_log_set(oc_log_cb, &g_oc_log);
    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_dev_t hdev = ggml_backend_dev_by_name(devname);
    ggml_backend_t     htp  = hdev ? ggml_backend_dev_init(hdev, NULL) : NULL;
    ggml_backend_t     cpu  = ggml_backend_cpu_init();
    if (!htp || !cpu) {
        fprintf(stderr, "opcost: cannot initialise %s and CPU\n", devname);
        return 1;
    }
    const int n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ggml_backend_cpu_set_n_threads(cpu, n_threads);

    if (npu_times) {
        // one line a kind below
    } else if (json) {
        printf("{\"n_ops\": %d, \"gap_us\": %d, \"threads\": %d, \"profiler_in_timings\": %d, \"results\": [", n,
               gap_us, n_threads, user_prof);
    } else {
        printf(
            "fixed cost per op: graphs of %d and of 1 op, %s vs CPU (%d threads), median of %d, %d us idle "
            "between graphs\n",
            n, devname, n_threads, reps, gap_us);
        if (user_prof) {
            printf("(GGML_HEXAGON_PROFILE is set: the timings include the profiler's host work)\n");
        }
        printf("%-16s %10s %10s %12s %12s %12s %12s\n", "op", "HTP us/op", "CPU us/op", "HTP 1-op us", "CPU 1-op us",
               "NPU first", "NPU others");
    }
    int  rc = 0, first = 1, k = 0;
    char list[128];
    snprintf(list, sizeof list, "%s", ops);
    for (char * tok = strtok(list, ","); tok; tok = strtok(NULL, ","), k++) {
        enum oc_kind kind;
        char         label[40];
        if (!strcmp(tok, "add")) {
            kind = OC_ADD;
            snprintf(label, sizeof label, "add 1x2048");
        } else if (!strcmp(tok, "mul_mat")) {
            kind = OC_MUL_MAT;
            snprintf(label, sizeof label, "mul_mat 64x64 %s", ggml_type_name(wtype));
        } else {
            fprintf(stderr, "opcost: unknown op '%s' (add, mul_mat)\n", tok);
            rc = 2;
            if (npu_times) {
                printf("-1 -1 0\n");  // keeps the lines in --ops order
            }
            continue;
        }
        struct oc_result r;
        if (oc_measure(htp, cpu, kind, wtype, n, reps, gap_us, &r) != 0) {
            rc = 1;
            if (npu_times) {
                printf("-1 -1 0\n");
            }
            continue;
        }
        if (k < n_npu) {
            r.npu_first_us    = npu_first[k];
            r.npu_rest_us     = npu_rest[k];
            r.npu_from_cycles = npu_from_cycles[k];
        }
        if (npu_times) {
            printf("%.3f %.3f %d\n", r.npu_first_us, r.npu_rest_us, r.npu_from_cycles);
        } else if (json) {
            printf(
                "%s{\"op\": \"%s\", \"htp_us_per_op\": %.3f, \"cpu_us_per_op\": %.3f, \"htp_graph1_us\": %.1f, "
                "\"cpu_graph1_us\": %.1f, \"npu_first_op_us\": %.3f, \"npu_other_op_us\": %.3f, "
                "\"npu_op_times_from\": \"%s\"}",
                first ? "" : ", ", label, r.htp_op_us, r.cpu_op_us, r.htp_graph1_us, r.cpu_graph1_us, r.npu_first_us,
                r.npu_rest_us, r.npu_from_cycles ? "cycles" : "usec");
            first = 0;
        } else {
            printf("%-16s %10.2f %10.2f %12.1f %12.1f %12.2f %12.2f\n", label, r.htp_op_us, r.cpu_op_us,
                   r.htp_graph1_us, r.cpu_graph1_us, r.npu_first_us, r.npu_rest_us);
        }
        fflush(stdout);
    }
    if (json && !npu_times) {
        printf("]}\n");
    }
    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    return rc;
}
