// test-backend-dl: libggml-htp.so loads into a ggml build that does not link
// it, through ggml_backend_load() (GGML_BACKEND_DL), and computes a graph on
// HTP0 that matches the CPU backend. argv[1]: path of libggml-htp.so.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"
#include "test-check.h"

enum { K = 96, M = 40, N = 5 };

// Build the same graph in ctx: y = soft_max(rms_norm(W x) * x2 + b).
static struct ggml_tensor * build(struct ggml_context * ctx, struct ggml_tensor ** in) {
    in[0]                  = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, K, M);  // W
    in[1]                  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);  // x
    in[2]                  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, N);  // x2
    in[3]                  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, M);     // b
    struct ggml_tensor * y = ggml_mul_mat(ctx, in[0], in[1]);
    y                      = ggml_rms_norm(ctx, y, 1e-5f);
    y                      = ggml_mul(ctx, y, in[2]);
    y                      = ggml_add(ctx, y, in[3]);
    return ggml_soft_max(ctx, y);
}

static int run(ggml_backend_t backend, float * out) {
    struct ggml_init_params ip  = {32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx = ggml_init(ip);
    struct ggml_tensor *    in[4];
    struct ggml_tensor *    y  = build(ctx, in);
    struct ggml_cgraph *    gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (!buf) {
        return 1;
    }
    srand(7);
    for (int i = 0; i < 4; i++) {
        int64_t n = ggml_nelements(in[i]);
        float * v = malloc(sizeof(float) * (size_t)n);
        for (int64_t j = 0; j < n; j++) {
            v[j] = (float)rand() / RAND_MAX * 2 - 1;
        }
        if (in[i]->type == GGML_TYPE_F16) {
            ggml_fp16_t * h = malloc(sizeof(ggml_fp16_t) * (size_t)n);
            ggml_fp32_to_fp16_row(v, h, n);
            ggml_backend_tensor_set(in[i], h, 0, ggml_nbytes(in[i]));
            free(h);
        } else {
            ggml_backend_tensor_set(in[i], v, 0, ggml_nbytes(in[i]));
        }
        free(v);
    }
    int rc = ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS ? 0 : 1;
    ggml_backend_synchronize(backend);
    ggml_backend_tensor_get(y, out, 0, ggml_nbytes(y));
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return rc;
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/libggml-htp.so\n", argv[0]);
        return 1;
    }
    ggml_backend_reg_t reg = ggml_backend_load(argv[1]);
    CHECK_OR_RETURN(1, reg != NULL, "ggml_backend_load(%s) failed", argv[1]);
    printf("loaded backend %s with %zu device(s)\n", ggml_backend_reg_name(reg), ggml_backend_reg_dev_count(reg));
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("HTP0");
    CHECK_OR_RETURN(1, dev && ggml_backend_reg_dev_count(reg) >= 1, "no HTP0 after loading");
    ggml_backend_t htp = ggml_backend_dev_init(dev, NULL);
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    CHECK_OR_RETURN(1, htp && cpu, "cannot init backends");
    static float want[M * N], got[M * N];
    CHECK_OR_RETURN(1, run(cpu, want) == 0 && run(htp, got) == 0, "compute failed");
    double err = 0, ref = 0;
    for (int i = 0; i < M * N; i++) {
        err += (double)(want[i] - got[i]) * (want[i] - got[i]);
        ref += (double)want[i] * want[i];
    }
    double nmse = err / ref;
    printf("HTP0 vs CPU: nmse %.3e\n", nmse);
    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    CHECK(nmse < 5e-4 && !isnan(nmse), "HTP0 vs CPU: nmse %.3e", nmse);
    return test_exit_code("test-backend-dl");
}
