// bench-matmul: one MUL_MAT, weights [k, m] of a given type times F32
// activations [k, n], on an HTP device and on ggml-cpu in the same run.
//
//   htp-bench matmul [-m 4096] [-k 14336] [-n 1,8,512] [--types f16,q8_0,q4_0,q4_k]
//                    [--reps N] [-d HTP0] [--json]
//
// Both sides hold the weights the way a llama.cpp user's model does: in a
// weight buffer of the device (HTP: repacked into its tiled layout), and on the
// CPU in its repack buffer type when it has one for the type (the SIMD GEMM
// layout), with all cores. GFLOPS = 2 m n k / median time.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-htp.h"
#include "ggml.h"

struct mm_case {
    enum ggml_type        type;
    ggml_backend_t        backend;
    struct ggml_context * wctx, *xctx;
    ggml_backend_buffer_t wbuf, xbuf;
    struct ggml_tensor *  w, *x, *y;
    struct ggml_cgraph *  gf;
};

// Allocate the weights where a llama.cpp user's CPU backend puts them: the
// first extra (repack) buffer type whose buffers make the CPU take the op,
// else the plain CPU buffer type, as llama.cpp's weight placement does.
static ggml_backend_buffer_t cpu_weight_alloc(struct ggml_context * wctx, struct ggml_tensor * op) {
    ggml_backend_dev_t                 dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_reg_t                 reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_dev_get_extra_bufts_t get =
        (ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    for (ggml_backend_buffer_type_t * b = get ? get(dev) : NULL; b && *b; b++) {
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, *b);
        if (!buf) {
            continue;
        }
        ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        if (ggml_backend_dev_supports_op(dev, op)) {
            return buf;
        }
        ggml_backend_buffer_free(buf);
        op->src[0]->buffer = NULL;
        op->src[0]->data   = NULL;
    }
    return ggml_backend_alloc_ctx_tensors_from_buft(wctx, ggml_backend_cpu_buffer_type());
}

static int mm_setup(struct mm_case * c, ggml_backend_t backend, int is_cpu, enum ggml_type type, int64_t m, int64_t k,
                    int64_t n, const float * wf, const float * xf) {
    memset(c, 0, sizeof *c);
    c->type                    = type;
    c->backend                 = backend;
    struct ggml_init_params ip = {8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    c->wctx                    = ggml_init(ip);
    c->xctx                    = ggml_init(ip);
    c->w                       = ggml_new_tensor_2d(c->wctx, type, k, m);
    c->x                       = ggml_new_tensor_2d(c->xctx, GGML_TYPE_F32, k, n);
    c->y                       = ggml_mul_mat(c->xctx, c->w, c->x);
    c->gf                      = ggml_new_graph(c->xctx);
    ggml_build_forward_expand(c->gf, c->y);

    c->wbuf = is_cpu ? cpu_weight_alloc(c->wctx, c->y)
                     : ggml_backend_alloc_ctx_tensors_from_buft(c->wctx, ggml_backend_get_default_buffer_type(backend));
    c->xbuf = ggml_backend_alloc_ctx_tensors(c->xctx, backend);
    if (!c->wbuf || !c->xbuf) {
        return -1;
    }
    ggml_backend_buffer_set_usage(c->wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    size_t wsize = ggml_row_size(type, k) * (size_t)m;
    void * wq    = malloc(wsize);
    if (!wq) {
        return -1;
    }
    ggml_quantize_chunk(type, wf, wq, 0, m, k, NULL);
    ggml_backend_tensor_set(c->w, wq, 0, wsize);
    free(wq);
    ggml_backend_tensor_set(c->x, xf, 0, sizeof(float) * (size_t)(k * n));
    return 0;
}

static void mm_free(struct mm_case * c) {
    ggml_backend_buffer_free(c->wbuf);
    ggml_backend_buffer_free(c->xbuf);
    ggml_free(c->wctx);
    ggml_free(c->xctx);
}

static double mm_time(struct mm_case * c, int reps) {
    int64_t * t = malloc(sizeof(int64_t) * (size_t)reps);
    ggml_backend_graph_compute(c->backend, c->gf);  // warm-up: first touch, caches
    ggml_backend_synchronize(c->backend);
    for (int r = 0; r < reps; r++) {
        int64_t t0 = bench_now_ns();
        ggml_backend_graph_compute(c->backend, c->gf);
        ggml_backend_synchronize(c->backend);
        t[r] = bench_now_ns() - t0;
    }
    double med = (double)bench_median_i64(t, reps);
    free(t);
    return med;
}

static int parse_list(const char * s, int64_t * out, int max) {
    int n = 0;
    while (*s && n < max) {
        char * end;
        long   v = strtol(s, &end, 10);
        if (end == s || v < 1) {
            return -1;
        }
        out[n++] = v;
        s        = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            return -1;
        }
    }
    return n;
}

static enum ggml_type type_by_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * tn = ggml_type_name((enum ggml_type)t);
        if (tn && !strcasecmp(tn, name)) {
            return (enum ggml_type)t;
        }
    }
    return GGML_TYPE_COUNT;
}

int bench_mode_matmul(int argc, char ** argv) {
    int64_t     m = 4096, k = 14336, ns[8] = {1, 8, 512};
    int         n_ns = 3, reps = 5, json = 0;
    const char *types = "f16,q8_0,q4_0,q4_K", *devname = "HTP0";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            m = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            k = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            n_ns = parse_list(argv[++i], ns, 8);
        } else if (!strcmp(argv[i], "--types") && i + 1 < argc) {
            types = argv[++i];
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            devname = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "matmul: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (m < 1 || k < 1 || n_ns < 1 || reps < 1) {
        fprintf(stderr, "matmul: bad -m / -k / -n / --reps\n");
        return 2;
    }

    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_dev_t hdev = ggml_backend_dev_by_name(devname);
    ggml_backend_t     htp  = hdev ? ggml_backend_dev_init(hdev, NULL) : NULL;
    ggml_backend_t     cpu  = ggml_backend_cpu_init();
    if (!htp || !cpu) {
        fprintf(stderr, "matmul: cannot initialise %s and CPU\n", devname);
        return 1;
    }
    int n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ggml_backend_cpu_set_n_threads(cpu, n_threads);

    int64_t n_max = 0;
    for (int i = 0; i < n_ns; i++) {
        n_max = ns[i] > n_max ? ns[i] : n_max;
    }
    float * wf = malloc(sizeof(float) * (size_t)(m * k));
    float * xf = malloc(sizeof(float) * (size_t)(k * n_max));
    if (!wf || !xf) {
        fprintf(stderr, "matmul: out of memory\n");
        return 1;
    }
    srand(1);
    for (int64_t i = 0; i < m * k; i++) {
        wf[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    for (int64_t i = 0; i < k * n_max; i++) {
        xf[i] = (float)rand() / RAND_MAX * 2 - 1;
    }

    if (json) {
        printf("{\"m\": %lld, \"k\": %lld, \"threads\": %d, \"results\": [", (long long)m, (long long)k, n_threads);
    } else {
        printf("MUL_MAT m=%lld k=%lld, %s vs CPU (%d threads), GFLOPS (median of %d)\n", (long long)m, (long long)k,
               devname, n_threads, reps);
        printf("%-6s %6s %10s %10s %8s\n", "type", "n", devname, "CPU", "ratio");
    }
    int  first = 1, rc = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", types);
    for (char * tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        enum ggml_type type = type_by_name(tok);
        if (type == GGML_TYPE_COUNT || k % ggml_blck_size(type) != 0) {
            fprintf(stderr, "matmul: unknown type '%s' or k not a multiple of its block\n", tok);
            rc = 2;
            continue;
        }
        for (int i = 0; i < n_ns; i++) {
            struct mm_case hc, cc;
            double         flop = 2.0 * (double)m * (double)ns[i] * (double)k;
            double         th = 0, tc = 0;
            int h_ok = mm_setup(&hc, htp, 0, type, m, k, ns[i], wf, xf) == 0 && ggml_backend_supports_op(htp, hc.y);
            if (h_ok) {
                th = mm_time(&hc, reps);
            }
            mm_free(&hc);
            if (mm_setup(&cc, cpu, 1, type, m, k, ns[i], wf, xf) == 0) {
                tc = mm_time(&cc, reps);
            }
            mm_free(&cc);
            double gh = th > 0 ? flop / th : 0, gc = tc > 0 ? flop / tc : 0;
            if (json) {
                printf("%s{\"type\": \"%s\", \"n\": %lld, \"htp_gflops\": %.2f, \"cpu_gflops\": %.2f, \"ratio\": %.3f}",
                       first ? "" : ", ", ggml_type_name(type), (long long)ns[i], gh, gc, gc > 0 ? gh / gc : 0);
                first = 0;
            } else if (h_ok) {
                printf("%-6s %6lld %10.2f %10.2f %7.2fx\n", ggml_type_name(type), (long long)ns[i], gh, gc,
                       gc > 0 ? gh / gc : 0);
            } else {
                printf("%-6s %6lld %10s %10.2f %8s\n", ggml_type_name(type), (long long)ns[i], "unsupported", gc, "-");
            }
            fflush(stdout);
        }
    }
    if (json) {
        printf("]}\n");
    }
    free(wf);
    free(xf);
    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    return rc;
}
