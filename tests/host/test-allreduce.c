// test-allreduce: the tensor-split comm context (src/host/comm.c) over 2, 3 and
// 4 HTP streams on distinct NPU processes, reached as ggml's meta backend
// reaches it (get_proc_address "ggml_backend_comm_*"). Run once per
// GGML_HEXAGON_AR_SELECT / _AR_SCATTER combination (tests/host/CMakeLists.txt).
//
// Each rank's tensor is produced on its NPU by a SCALE graph pushed
// asynchronously just before the allreduce, so the entry fence must really
// wait for it. Values are small integers, so every sum is exact in F32 and
// F16 and every rank must hold exactly the expected sum. Sizes cover tiny
// tensors (fewer elements than ranks), uneven slices and the multi-worker path.
// With AR_SELECT=0 allreduce must answer false; the test then reduces the way
// the meta backend falls back (async copies between NPUs with fences, ADD
// graphs) and checks that path too.
//
//   test-allreduce <expect: fused-scatter | fused-full | unfused | fallback>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-htp.h"
#include "ggml.h"

#define MAX_RANKS 4
#define ITERS     3

static ggml_backend_comm_init_t             comm_init;
static ggml_backend_comm_free_t             comm_free;
static ggml_backend_comm_allreduce_tensor_t comm_allreduce;

#include "test-check.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Input of rank r, element i, iteration k: small integers in [-15, 15].
static float value(int r, int64_t i, int k) {
    return (float)((i * 7 + r * 13 + k * 5) % 31) - 15.0f;
}

struct rank {
    ggml_backend_t        backend;
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *  in;   // host-written input
    struct ggml_tensor *  out;  // SCALE(in, 2): the tensor reduced
    struct ggml_tensor *  tmp;  // fallback: a peer's tensor copied here
    struct ggml_cgraph *  scale;
    struct ggml_context * gctx;
};

static void rank_init(struct rank * rk, ggml_backend_t backend, enum ggml_type type, int64_t n) {
    rk->backend                = backend;
    struct ggml_init_params ip = {8 * ggml_tensor_overhead(), NULL, true};
    rk->ctx                    = ggml_init(ip);
    rk->in                     = ggml_new_tensor_1d(rk->ctx, type, n);
    rk->out                    = ggml_new_tensor_1d(rk->ctx, type, n);
    rk->tmp                    = ggml_new_tensor_1d(rk->ctx, type, n);
    rk->buf                    = ggml_backend_alloc_ctx_tensors(rk->ctx, backend);
    // The graph's node s = 2 * in is placed on out's bytes: it writes out.
    struct ggml_init_params gp = {16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    rk->gctx                   = ggml_init(gp);
    struct ggml_tensor * s     = ggml_scale(rk->gctx, rk->in, 2.0f);
    rk->scale                  = ggml_new_graph(rk->gctx);
    ggml_build_forward_expand(rk->scale, s);
    s->data   = rk->out->data;
    s->buffer = rk->buf;
}

static void rank_free(struct rank * rk) {
    ggml_free(rk->gctx);
    ggml_backend_buffer_free(rk->buf);
    ggml_free(rk->ctx);
}

static void set_input(struct rank * rk, int r, int64_t n, int k) {
    float * v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = value(r, i, k);
    }
    if (rk->in->type == GGML_TYPE_F16) {
        ggml_fp16_t * h = malloc(sizeof(ggml_fp16_t) * (size_t)n);
        ggml_fp32_to_fp16_row(v, h, n);
        ggml_backend_tensor_set(rk->in, h, 0, ggml_nbytes(rk->in));
        free(h);
    } else {
        ggml_backend_tensor_set(rk->in, v, 0, ggml_nbytes(rk->in));
    }
    free(v);
}

static void get_f32(const struct ggml_tensor * t, float * v, int64_t n) {
    if (t->type == GGML_TYPE_F16) {
        ggml_fp16_t * h = malloc(sizeof(ggml_fp16_t) * (size_t)n);
        ggml_backend_tensor_get(t, h, 0, ggml_nbytes(t));
        ggml_fp16_to_fp32_row(h, v, n);
        free(h);
    } else {
        ggml_backend_tensor_get(t, v, 0, ggml_nbytes(t));
    }
}

// One configuration: n ranks, type, n elements. Returns ms per allreduce.
static double run_case(ggml_backend_t * backends, int n_ranks, enum ggml_type type, int64_t n, bool expect_ok) {
    struct rank rk[MAX_RANKS];
    for (int r = 0; r < n_ranks; r++) {
        rank_init(&rk[r], backends[r], type, n);
    }
    void * comm = comm_init(backends, (size_t)n_ranks);
    CHECK(comm != NULL, "comm_init over %d NPUs", n_ranks);
    float * got = malloc(sizeof(float) * (size_t)n);
    double  ms  = 0;
    for (int k = 0; comm && k < ITERS; k++) {
        for (int r = 0; r < n_ranks; r++) {
            set_input(&rk[r], r, n, k);
        }
        double t0 = now_ms();
        for (int r = 0; r < n_ranks; r++) {
            CHECK(ggml_backend_graph_compute_async(rk[r].backend, rk[r].scale) == GGML_STATUS_SUCCESS, "scale");
        }
        struct ggml_tensor * ts[MAX_RANKS];
        for (int r = 0; r < n_ranks; r++) {
            ts[r] = rk[r].out;
        }
        bool ok = comm_allreduce(comm, ts);
        CHECK(ok == expect_ok, "allreduce answered %d, expected %d", ok, expect_ok);
        if (!ok) {
            // The fallback needs the scaled tensors first.
            for (int r = 0; r < n_ranks; r++) {
                ggml_backend_synchronize(rk[r].backend);
            }
            // The two-rank case of the meta backend's butterfly: each rank
            // copies its tensor into the other's tmp (CPY_FENCE between the
            // NPUs), then adds it (the fallback itself is ggml's; this checks
            // the copies and fences it relies on).
            if (n_ranks == 2) {
                ggml_backend_tensor_copy_async(rk[0].backend, rk[1].backend, rk[0].out, rk[1].tmp);
                ggml_backend_tensor_copy_async(rk[1].backend, rk[0].backend, rk[1].out, rk[0].tmp);
                for (int r = 0; r < n_ranks; r++) {
                    ggml_backend_synchronize(rk[r].backend);
                }
                for (int r = 0; r < n_ranks; r++) {
                    struct ggml_init_params gp  = {4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
                    struct ggml_context *   ctx = ggml_init(gp);
                    struct ggml_tensor *    a   = ggml_add(ctx, rk[r].out, rk[r].tmp);
                    struct ggml_cgraph *    g   = ggml_new_graph(ctx);
                    a->data                     = rk[r].out->data;  // in place
                    a->buffer                   = rk[r].buf;
                    ggml_build_forward_expand(g, a);
                    CHECK(ggml_backend_graph_compute(rk[r].backend, g) == GGML_STATUS_SUCCESS, "fallback add");
                    ggml_free(ctx);
                }
            } else {
                for (int r = 0; r < n_ranks; r++) {
                    ggml_backend_synchronize(rk[r].backend);
                }
                ms = -1;
                continue;
            }
        }
        for (int r = 0; r < n_ranks; r++) {
            ggml_backend_synchronize(rk[r].backend);
        }
        ms += now_ms() - t0;
        for (int r = 0; r < n_ranks; r++) {
            get_f32(rk[r].out, got, n);
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < n; i++) {
                float want = 0;
                for (int q = 0; q < n_ranks; q++) {
                    want += 2.0f * value(q, i, k);
                }
                if (got[i] != want) {
                    if (first < 0) {
                        first = i;
                    }
                    bad++;
                }
            }
            CHECK(bad == 0, "%d ranks %s n=%lld iter %d rank %d: %lld wrong sums (first at %lld)", n_ranks,
                  ggml_type_name(type), (long long)n, k, r, (long long)bad, (long long)first);
        }
    }
    free(got);
    comm_free(comm);
    for (int r = 0; r < n_ranks; r++) {
        rank_free(&rk[r]);
    }
    return ms > 0 ? ms / ITERS : ms;
}

int main(int argc, char ** argv) {
    const char * expect   = argc > 1 ? argv[1] : "fused-scatter";
    const bool   fallback = strcmp(expect, "fallback") == 0;

    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    comm_init              = (ggml_backend_comm_init_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_init");
    comm_free              = (ggml_backend_comm_free_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_free");
    comm_allreduce         = (ggml_backend_comm_allreduce_tensor_t)ggml_backend_reg_get_proc_address(
                reg, "ggml_backend_comm_allreduce_tensor");
    CHECK_OR_RETURN(1,
                    comm_init && comm_free && comm_allreduce &&
                        ggml_backend_reg_get_proc_address(reg, "ggml_backend_split_buffer_type"),
                    "comm entry points missing from get_proc_address");
    if (ggml_backend_reg_dev_count(reg) < MAX_RANKS) {
        printf("SKIP: need %d HTP devices on distinct NPUs (GGML_HEXAGON_DEVICES=HTP0,HTP1,HTP2,HTP3)\n", MAX_RANKS);
        return 77;
    }
    ggml_backend_t backends[MAX_RANKS];
    for (int r = 0; r < MAX_RANKS; r++) {
        backends[r] = ggml_backend_dev_init(ggml_backend_reg_dev_get(reg, (size_t)r), NULL);
        if (!backends[r]) {
            printf("SKIP: cannot start HTP%d\n", r);
            return 77;
        }
    }

    // Refusals: fewer than 2 ranks, the same NPU twice.
    CHECK(comm_init(backends, 1) == NULL, "comm_init over one backend must fail");
    {
        ggml_backend_t twice[2] = {backends[0], backends[0]};
        CHECK(comm_init(twice, 2) == NULL, "comm_init over one NPU twice must fail");
    }

    printf("mode %s\n", expect);
    static const int64_t sizes[] = {3, 1000, 70001};
    for (int n_ranks = 2; n_ranks <= MAX_RANKS; n_ranks++) {
        for (int t = 0; t < 2; t++) {
            enum ggml_type type = t == 0 ? GGML_TYPE_F32 : GGML_TYPE_F16;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                int    before = n_fail;
                double ms     = run_case(backends, n_ranks, type, sizes[s], !fallback);
                printf("%s %d ranks %s n=%-6lld %s", before == n_fail ? "ok  " : "FAIL", n_ranks, ggml_type_name(type),
                       (long long)sizes[s], ms < 0 ? "(fallback: 2 ranks only)\n" : "");
                if (ms >= 0) {
                    printf("%.3f ms per allreduce (incl. scale graph)\n", ms);
                }
            }
        }
    }
    // A larger tensor for the report: 1M F32 elements (4 MiB per rank).
    for (int n_ranks = 2; n_ranks <= MAX_RANKS; n_ranks += 2) {
        double ms = run_case(backends, n_ranks, GGML_TYPE_F32, 1 << 20, !fallback);
        if (ms >= 0) {
            printf("%d ranks F32 n=1048576: %.3f ms per allreduce (incl. scale graph)\n", n_ranks, ms);
        }
    }

    for (int r = 0; r < MAX_RANKS; r++) {
        ggml_backend_free(backends[r]);
    }
    return test_exit_code("test-allreduce");
}
