// test-cpu-graph: the pinned ggml builds and computes. A small graph (matrix
// multiply with F32 and Q4_0 weights, RMS norm, softmax) runs on the CPU backend
// through ggml-backend; every output is checked against a plain C reference
// computed here. Exit 0 pass, 1 fail.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "test-check.h"

enum { K = 256, M = 48, N = 7 };  // weights [K, M], activations [K, N]

static uint32_t rng_state = 12345;

static float frand(void) {  // uniform in [-1, 1)
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

// fp16 bits -> float, written out so the reference does not lean on ggml.
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {  // subnormal: renormalise
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) {
                man <<= 1;
                exp--;
            }
            bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

// Q4_0 block: fp16 scale, then 16 bytes holding 32 4-bit values; element j < 16
// is the low nibble of byte j, element j + 16 its high nibble; value (q - 8) * d.
static void dequant_q4_0(const uint8_t * src, float * dst, int n) {
    for (int b = 0; b < n / 32; b++, src += 18) {
        uint16_t dh;
        memcpy(&dh, src, 2);
        float d = half_to_float(dh);
        for (int j = 0; j < 16; j++) {
            dst[b * 32 + j]      = ((src[2 + j] & 0x0f) - 8) * d;
            dst[b * 32 + j + 16] = ((src[2 + j] >> 4) - 8) * d;
        }
    }
}

static double nmse(const float * want, const float * got, int n) {
    double err = 0, ref = 0;
    for (int i = 0; i < n; i++) {
        err += (double)(want[i] - got[i]) * (want[i] - got[i]);
        ref += (double)want[i] * want[i];
    }
    return ref > 0 ? err / ref : err;
}

// Prints every output's error, not only the failing ones: the margins are
// worth seeing when the pinned ggml moves.
static void check_nmse(const char * what, const float * want, const float * got, int n, double max_err) {
    double e = nmse(want, got, n);
    printf("%-18s nmse %.3e (max %.0e)\n", what, e, max_err);
    CHECK(e <= max_err && !isnan(e), "%s: nmse %.3e (max %.0e)", what, e, max_err);
}

// ref[n][m] = sum_k w[m][k] * x[n][k], the ggml_mul_mat convention.
static void ref_matmul(const float * w, const float * x, float * out) {
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)w[m * K + k] * x[n * K + k];
            out[n * M + m] = (float)s;
        }
}

int main(void) {
    static float w[M * K], x[N * K];
    for (int i = 0; i < M * K; i++)
        w[i] = frand();
    for (int i = 0; i < N * K; i++)
        x[i] = frand();

    // Quantize the weights with ggml, dequantize them with our own code: the
    // reference then multiplies exactly the values the backend sees.
    size_t    q_size = ggml_row_size(GGML_TYPE_Q4_0, K) * M;
    uint8_t * wq     = malloc(q_size);
    float *   wdq    = malloc(sizeof(float) * M * K);
    ggml_quantize_chunk(GGML_TYPE_Q4_0, w, wq, 0, M, K, NULL);
    dequant_q4_0(wq, wdq, M * K);

    struct ggml_init_params ip  = {.mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead(), .no_alloc = true};
    struct ggml_context *   ctx = ggml_init(ip);

    struct ggml_tensor * tw   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * twq  = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, K, M);
    struct ggml_tensor * tx   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * mm   = ggml_mul_mat(ctx, tw, tx);   // [M, N]
    struct ggml_tensor * mmq  = ggml_mul_mat(ctx, twq, tx);  // [M, N]
    struct ggml_tensor * norm = ggml_rms_norm(ctx, tx, 1e-6f);
    struct ggml_tensor * sm   = ggml_soft_max(ctx, mm);

    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, mmq);
    ggml_build_forward_expand(gf, norm);
    ggml_build_forward_expand(gf, sm);

    ggml_backend_t        cpu = ggml_backend_cpu_init();
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    CHECK_OR_RETURN(1, cpu && buf, "cannot create the CPU backend");
    ggml_backend_tensor_set(tw, w, 0, sizeof w);
    ggml_backend_tensor_set(twq, wq, 0, q_size);
    ggml_backend_tensor_set(tx, x, 0, sizeof x);
    CHECK_OR_RETURN(1, ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS, "graph_compute failed");

    static float got[M * N], want[M * N], logits[M * N];

    ref_matmul(w, x, want);
    ggml_backend_tensor_get(mm, got, 0, sizeof got);
    check_nmse("mul_mat f32", want, got, M * N, 1e-7);
    memcpy(logits, want, sizeof logits);

    // ggml-cpu multiplies Q4_0 by activations it quantizes to Q8_0, hence the looser bound.
    ref_matmul(wdq, x, want);
    ggml_backend_tensor_get(mmq, got, 0, sizeof got);
    check_nmse("mul_mat q4_0", want, got, M * N, 5e-4);

    static float norm_want[N * K], norm_got[N * K];
    for (int n = 0; n < N; n++) {
        double ss = 0;
        for (int k = 0; k < K; k++)
            ss += (double)x[n * K + k] * x[n * K + k];
        float scale = (float)(1.0 / sqrt(ss / K + 1e-6));
        for (int k = 0; k < K; k++)
            norm_want[n * K + k] = x[n * K + k] * scale;
    }
    ggml_backend_tensor_get(norm, norm_got, 0, sizeof norm_got);
    check_nmse("rms_norm", norm_want, norm_got, N * K, 1e-7);

    for (int n = 0; n < N; n++) {
        float *row = logits + n * M, mx = row[0];
        for (int m = 1; m < M; m++)
            mx = row[m] > mx ? row[m] : mx;
        double sum = 0;
        for (int m = 0; m < M; m++)
            sum += exp(row[m] - mx);
        for (int m = 0; m < M; m++)
            want[n * M + m] = (float)(exp(row[m] - mx) / sum);
    }
    ggml_backend_tensor_get(sm, got, 0, sizeof got);
    check_nmse("soft_max", want, got, M * N, 1e-7);

    ggml_backend_buffer_free(buf);
    ggml_backend_free(cpu);
    ggml_free(ctx);
    free(wq);
    free(wdq);
    return test_exit_code("test-cpu-graph");
}
