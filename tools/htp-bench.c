// htp-bench: benchmarks of ggml-htp. One program, one mode per measurement:
//
//   htp-bench rtt [--iters N] [--json]   queue round trip: push + response of an
//                                         empty batch and of a 2048-NOP batch,
//                                         with futex wake-ups and with polling
//   htp-bench matmul ...                  MUL_MAT, HTP vs ggml-cpu, hot and cold weights (bench-matmul.c)
//   htp-bench fa ...                      FLASH_ATTN_EXT by KV-cache type, HTP vs ggml-cpu (bench-fa.c)
//   htp-bench opcost ...                  the fixed cost of an op, HTP vs ggml-cpu (bench-opcost.c)
//   htp-bench membw ...                   read bandwidth with all cores (bench-membw.c)
//   htp-bench model ...                   a whole model, HTP vs ggml-cpu (bench-model.c)
//   htp-bench vmem ...                    largest model a VA window takes, stacked vs naive (bench-vmem.c)
//
// main() dispatches on the mode name through the table at the bottom; a new
// mode is a function and a row.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bench.h"
#include "ggml.h"
#include "host/session-submit.h"
#include "host/session.h"

int64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int bench_cmp_i64(const void * a, const void * b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t bench_median_i64(int64_t * v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_f64(const void * a, const void * b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median_f64(double * v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_f64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum ggml_type bench_type_by_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * tn = ggml_type_name((enum ggml_type)t);
        if (tn && !strcasecmp(tn, name)) {
            return (enum ggml_type)t;
        }
    }
    return GGML_TYPE_COUNT;
}

static void quiet_log(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        fputs(text, stderr);
    }
}

// ---------------------------------------------------------------------------
// rtt
// ---------------------------------------------------------------------------

struct rtt_stat {
    double median_us, p99_us;
};

// Round trips of batches of n_ops NOPs on s: the time from the push to the
// collected response; building the batch is not timed.
static int rtt_measure(struct htp_session * s, uint32_t n_ops, int iters, struct rtt_stat * out) {
    int64_t * t = malloc(sizeof *t * (size_t)iters);
    if (!t) {
        return 1;
    }
    const int warmup = iters / 10 + 5;
    for (int i = -warmup; i < iters; i++) {
        struct htp_opnode nop = {.opcode = HTP_OP_NOP};
        for (uint32_t k = 0; k < n_ops; k++) {
            if (htp_session_enqueue(s, &nop) != 0) {
                goto fail;
            }
        }
        int64_t t0 = bench_now_ns();
        if (htp_session_flush_batch(s, 0) != 0 || htp_session_flush_pending(s, true) != 0) {
            goto fail;
        }
        int64_t dt = bench_now_ns() - t0;
        if (i >= 0) {
            t[i] = dt;
        }
    }
    qsort(t, (size_t)iters, sizeof *t, bench_cmp_i64);
    out->median_us = t[iters / 2] / 1e3;
    out->p99_us    = t[(int)((iters - 1) * 0.99)] / 1e3;
    free(t);
    return 0;
fail:
    fprintf(stderr, "htp-bench: rtt: %s\n", htp_session_error(s));
    free(t);
    return 1;
}

static int mode_rtt(int argc, char ** argv) {
    int iters = 1000, json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "usage: htp-bench rtt [--iters N] [--json]\n");
            return 2;
        }
    }
    if (iters < 1 || iters > 10000000) {
        fprintf(stderr, "htp-bench: --iters must be in 1..10000000\n");
        return 2;
    }

    // [batch][wake]: batch 0 empty, 1 nop2048; wake 0 futex, 1 poll.
    struct rtt_stat st[2][2];
    const uint32_t  n_ops[2] = {0, 2048};
    for (int w = 0; w < 2; w++) {
        struct htp_session_params p;
        htp_session_params_default(&p, 0, 0);
        p.batch_ops             = 2048;
        p.poll                  = (uint32_t)w;
        struct htp_session * s  = NULL;
        int                  rc = htp_session_open(&p, &s);
        if (rc != 0) {
            fprintf(stderr, "htp-bench: cannot open %s: %s\n", p.name, htp_status_str(rc));
            return 1;
        }
        for (int b = 0; b < 2; b++) {
            if (rtt_measure(s, n_ops[b], iters, &st[b][w]) != 0) {
                htp_session_close(s);
                return 1;
            }
        }
        htp_session_close(s);
    }

    if (json) {
        printf(
            "{\"empty\": {\"futex\": {\"median_us\": %.1f, \"p99_us\": %.1f}, "
            "\"poll\": {\"median_us\": %.1f, \"p99_us\": %.1f}}, "
            "\"nop2048\": {\"futex\": {\"median_us\": %.1f, \"p99_us\": %.1f}, "
            "\"poll\": {\"median_us\": %.1f, \"p99_us\": %.1f}}}\n",
            st[0][0].median_us, st[0][0].p99_us, st[0][1].median_us, st[0][1].p99_us, st[1][0].median_us,
            st[1][0].p99_us, st[1][1].median_us, st[1][1].p99_us);
    } else {
        printf("queue round trip (push + response), %d iterations each\n", iters);
        printf("%-10s %-6s %12s %12s\n", "batch", "wake", "median us", "p99 us");
        const char * bn[2] = {"empty", "nop2048"};
        const char * wn[2] = {"futex", "poll"};
        for (int b = 0; b < 2; b++) {
            for (int w = 0; w < 2; w++) {
                printf("%-10s %-6s %12.1f %12.1f\n", bn[b], wn[w], st[b][w].median_us, st[b][w].p99_us);
            }
        }
    }
    return 0;
}

// ---------------------------------------------------------------------------
// mode dispatch
// ---------------------------------------------------------------------------

struct bench_mode {
    const char * name;
    int (*run)(int argc, char ** argv);  // arguments after the mode name
    const char * help;
};

static const struct bench_mode modes[] = {
    {"rtt", mode_rtt, "rtt [--iters N] [--json]   queue round-trip latency (empty and 2048-NOP batches)"},
    {"matmul", bench_mode_matmul,
     "matmul [-m M -k K | --model 1b] [-n 1,8,512] [--types f16,q8_0,q4_0,q4_K] [--cache hot|cold|both] [--reps N]\n"
     "        [-d HTP0] [--json]   MUL_MAT on the HTP device and on ggml-cpu (all cores), graphs of many matmuls"},
    {"fa", bench_mode_fa,
     "fa [--kv 512,1024,2048,4096] [--types f16,q8_0,q4_0] [-n 1] [--head 64] [--heads 32] [--kv-heads 8]\n"
     "        [--layers 16] [--reps N] [-d HTP0] [--json]   FLASH_ATTN_EXT by KV-cache type, HTP and ggml-cpu"},
    {"opcost", bench_mode_opcost,
     "opcost [--ops add,mul_mat] [-N 256] [--type q4_0] [--reps N] [--gap-us 500] [-d HTP0] [--json]\n"
     "        the fixed cost of an op: graphs of N and of 1 tiny op, HTP and ggml-cpu"},
    {"membw", bench_mode_membw, "membw [--mib N] [--reps N] [--threads N] [--json]   read bandwidth, all cores"},
    {"model", bench_mode_model,
     "model [-m model.gguf | --preset 1b --type q4_0 [--arch llama]] [-p 512] [-n 128] [--reps N] [-d HTP0] [--json]\n"
     "        a whole model on the HTP device and on ggml-cpu: pp/tg tokens/s, splits, host time per token"},
    {"vmem", bench_mode_vmem,
     "vmem [--window MiB] [--ctx N] [--c1 MiB] [--c2 MiB] [--type q4_0|q8_0|f16] [--json]\n"
     "        largest model a VA window takes, mmap stacking vs the naive mapping order"},
};

static void usage(void) {
    fprintf(stderr, "usage: htp-bench <mode> [options]\nmodes:\n");
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        fprintf(stderr, "  %s\n", modes[i].help);
    }
}

int main(int argc, char ** argv) {
    ggml_log_set(quiet_log, NULL);
    if (argc < 2) {
        usage();
        return 2;
    }
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (!strcmp(argv[1], modes[i].name)) {
            return modes[i].run(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "htp-bench: unknown mode '%s'\n", argv[1]);
    usage();
    return 2;
}
