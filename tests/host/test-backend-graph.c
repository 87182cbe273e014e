// test-backend-graph: graph_compute's node cache and graph_optimize's reorder.
//  - the same graph (same uid) computed twice is translated once (cache hit)
//    and its batch pushed again (replay), a graph without uid never hits, and
//    results are identical either way;
//  - graph_optimize pulls a MUL_MAT sharing src1 up to the head of its stack,
//    but not past a node that writes what it reads; the reordered graph gives
//    exactly the results of the original order (and of the CPU);
//  - a MUL_MAT and the ADD of its result (a run the host fuses) move as one:
//    pulling the second matmul of a stack up brings its ADD along, and both
//    pairs still reach the NPU as fused ops with the CPU's results.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "host/ggml-internal.h"
#include "test-check.h"

enum { K = 64, M = 32, N = 3 };

struct net {
    struct ggml_context * ctx;
    struct ggml_cgraph *  gf;
    struct ggml_tensor *  in[5];   // W1 W2 W3 x y
    struct ggml_tensor *  out[5];  // n0..n4
    ggml_backend_buffer_t buf;
};

// n0 a = W1 x;  n1 c = a + y;  n2 d = W2 x;  n3 x *= 2 (in place);  n4 e = W3 x
static void net_build(struct net * t, ggml_backend_t backend) {
    struct ggml_init_params ip = {32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    t->ctx                     = ggml_init(ip);
    for (int i = 0; i < 3; i++) {
        t->in[i] = ggml_new_tensor_2d(t->ctx, GGML_TYPE_F32, K, M);
    }
    t->in[3]  = ggml_new_tensor_2d(t->ctx, GGML_TYPE_F32, K, N);
    t->in[4]  = ggml_new_tensor_2d(t->ctx, GGML_TYPE_F32, M, N);
    t->out[0] = ggml_mul_mat(t->ctx, t->in[0], t->in[3]);
    t->out[1] = ggml_add(t->ctx, t->out[0], t->in[4]);
    t->out[2] = ggml_mul_mat(t->ctx, t->in[1], t->in[3]);
    t->out[3] = ggml_scale_inplace(t->ctx, t->in[3], 2.0f);
    t->out[4] = ggml_mul_mat(t->ctx, t->in[2], t->in[3]);
    t->gf     = ggml_new_graph(t->ctx);
    for (int i = 0; i < 5; i++) {
        // Read back after compute: outputs, so no backend may fuse them away
        // (a = W1 x is read by c = a + y alone: GGML_HEXAGON_OPFUSION would).
        ggml_set_output(t->out[i]);
        ggml_build_forward_expand(t->gf, t->out[i]);
    }
    t->buf = ggml_backend_alloc_ctx_tensors(t->ctx, backend);
}

static void net_set_inputs(struct net * t) {
    srand(11);
    for (int i = 0; i < 5; i++) {
        int64_t n = ggml_nelements(t->in[i]);
        float * v = malloc(sizeof(float) * (size_t)n);
        for (int64_t j = 0; j < n; j++) {
            v[j] = (float)rand() / RAND_MAX * 2 - 1;
        }
        ggml_backend_tensor_set(t->in[i], v, 0, ggml_nbytes(t->in[i]));
        free(v);
    }
}

// Outputs n0 n1 n2 n4 (n3 is x itself) concatenated.
static void net_get(struct net * t, float * out) {
    int idx[4] = {0, 1, 2, 4};
    for (int i = 0; i < 4; i++) {
        ggml_backend_tensor_get(t->out[idx[i]], out + i * M * N, 0, sizeof(float) * M * N);
    }
}

static void net_free(struct net * t) {
    ggml_backend_buffer_free(t->buf);
    ggml_free(t->ctx);
}

static double nmse(const float * a, const float * b, int n) {
    double e = 0, r = 0;
    for (int i = 0; i < n; i++) {
        e += (double)(a[i] - b[i]) * (a[i] - b[i]);
        r += (double)a[i] * a[i];
    }
    return e / r;
}

// a = W1 x;  c = a + y;  z = 3 y2;  d = W2 x;  e = d + y.  a and d are read by
// their ADD alone (not outputs): each pair is a fusion run.
static void test_runs_move_whole(ggml_backend_t htp, ggml_backend_t cpu) {
    struct ggml_init_params ip = {32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    float                   res[2][3][M * N];
    struct ggml_tensor *    order[2][5];
    for (int b = 0; b < 2; b++) {
        ggml_backend_t        be      = b ? htp : cpu;
        struct ggml_context * ctx     = ggml_init(ip);
        struct ggml_tensor *  w1      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
        struct ggml_tensor *  w2      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
        struct ggml_tensor *  x       = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
        struct ggml_tensor *  y       = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, N);
        struct ggml_tensor *  y2      = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, N);
        struct ggml_tensor *  a       = ggml_mul_mat(ctx, w1, x);
        struct ggml_tensor *  c       = ggml_add(ctx, a, y);
        struct ggml_tensor *  z       = ggml_scale(ctx, y2, 3.0f);
        struct ggml_tensor *  d       = ggml_mul_mat(ctx, w2, x);
        struct ggml_tensor *  e       = ggml_add(ctx, d, y);
        struct ggml_cgraph *  gf      = ggml_new_graph(ctx);
        struct ggml_tensor *  outs[3] = {c, z, e};
        for (int i = 0; i < 3; i++) {
            ggml_set_output(outs[i]);
            ggml_build_forward_expand(gf, outs[i]);
        }
        CHECK(ggml_graph_n_nodes(gf) == 5 && ggml_graph_node(gf, 2) == z, "runs graph built in program order");
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
        srand(5);
        struct ggml_tensor * in[5] = {w1, w2, x, y, y2};
        for (int i = 0; i < 5; i++) {
            const int64_t n = ggml_nelements(in[i]);
            float *       v = malloc(sizeof(float) * (size_t)n);
            for (int64_t j = 0; j < n; j++) {
                v[j] = (float)rand() / RAND_MAX * 2 - 1;
            }
            ggml_backend_tensor_set(in[i], v, 0, ggml_nbytes(in[i]));
            free(v);
        }
        struct ggml_backend_htp_stats s0 = {0}, s1 = {0};
        if (b) {
            htp->iface.graph_optimize(htp, gf);
            ggml_backend_htp_get_stats(htp, &s0);
        }
        for (int i = 0; i < 5; i++) {
            order[b][i] = ggml_graph_node(gf, i);
        }
        CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS, "runs graph computes");
        ggml_backend_synchronize(be);
        if (b) {
            ggml_backend_htp_get_stats(htp, &s1);
            CHECK(order[1][0] == a && order[1][1] == c && order[1][2] == d && order[1][3] == e && order[1][4] == z,
                  "W2 x moved up with its ADD, past z (a c d e z)");
            CHECK(s1.fused - s0.fused == 2, "both MUL_MAT + ADD pairs fused: %llu nodes absorbed",
                  (unsigned long long)(s1.fused - s0.fused));
        }
        for (int i = 0; i < 3; i++) {
            ggml_backend_tensor_get(outs[i], res[b][i], 0, sizeof(float) * M * N);
        }
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }
    for (int i = 0; i < 3; i++) {
        CHECK(nmse(res[0][i], res[1][i], M * N) < 5e-4, "runs graph output %d matches CPU", i);
    }
}

int main(void) {
    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("HTP0");
    ggml_backend_t     htp = dev ? ggml_backend_dev_init(dev, NULL) : NULL;
    ggml_backend_t     cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    CHECK_OR_RETURN(1, htp && cpu, "cannot init HTP0 / CPU");
    enum { OUT = 4 * M * N };
    static float want[OUT], got1[OUT], got2[OUT], got3[OUT];

    struct net c;
    net_build(&c, cpu);
    net_set_inputs(&c);
    ggml_backend_graph_compute(cpu, c.gf);
    net_get(&c, want);
    net_free(&c);

    // --- node cache ---
    struct net                    t;
    struct ggml_backend_htp_stats s0, s1, s2, s3;
    net_build(&t, htp);
    t.gf->uid = ggml_graph_next_uid();
    ggml_backend_htp_get_stats(htp, &s0);
    net_set_inputs(&t);
    CHECK(ggml_backend_graph_compute(htp, t.gf) == GGML_STATUS_SUCCESS, "first compute succeeds");
    ggml_backend_synchronize(htp);
    net_get(&t, got1);
    ggml_backend_htp_get_stats(htp, &s1);
    CHECK(s1.cache_hits == s0.cache_hits && s1.graphs == s0.graphs + 1, "first compute of a graph translates it");

    net_set_inputs(&t);  // x was scaled in place: restore it
    ggml_backend_graph_compute(htp, t.gf);
    ggml_backend_synchronize(htp);
    net_get(&t, got2);
    ggml_backend_htp_get_stats(htp, &s2);
    CHECK(s2.cache_hits == s1.cache_hits + 1, "second compute of the same graph uses the node cache");
    CHECK(s1.replays == s0.replays && s2.replays == s1.replays + 1,
          "second compute of the same graph pushes the batch of the first again");
    CHECK(memcmp(got1, got2, sizeof got1) == 0, "cached compute gives identical results");

    t.gf->uid = 0;
    net_set_inputs(&t);
    ggml_backend_graph_compute(htp, t.gf);
    ggml_backend_synchronize(htp);
    ggml_backend_htp_get_stats(htp, &s3);
    CHECK(s3.cache_hits == s2.cache_hits && s3.replays == s2.replays,
          "a graph without uid is never served from the cache, nor its batch replayed");
    printf("  nmse vs CPU %.3e\n", nmse(want, got1, OUT));
    CHECK(nmse(want, got1, OUT) < 5e-4, "HTP0 matches CPU");

    // --- graph_optimize ---
    struct ggml_tensor * before[5];
    for (int i = 0; i < 5; i++) {
        before[i] = ggml_graph_node(t.gf, i);
    }
    CHECK(before[0] == t.out[0] && before[2] == t.out[2] && before[4] == t.out[4], "graph built in program order");
    htp->iface.graph_optimize(htp, t.gf);
    struct ggml_tensor * after[5];
    for (int i = 0; i < 5; i++) {
        after[i] = ggml_graph_node(t.gf, i);
    }
    CHECK(after[0] == t.out[0] && after[1] == t.out[2], "MUL_MAT sharing src1 moved up to its stack head");
    CHECK(after[2] == t.out[1], "the node it jumped over follows");
    CHECK(after[3] == t.out[3] && after[4] == t.out[4], "MUL_MAT reading x did not move past the write to x");

    t.gf->uid = ggml_graph_next_uid();
    net_set_inputs(&t);
    ggml_backend_graph_compute(htp, t.gf);
    ggml_backend_synchronize(htp);
    net_get(&t, got3);
    CHECK(memcmp(got1, got3, sizeof got1) == 0, "reordered graph gives identical results");

    net_free(&t);
    test_runs_move_whole(htp, cpu);
    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    return test_exit_code("test-backend-graph");
}
