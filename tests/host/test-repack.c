// test-repack: quantized weights in an HTP weight buffer are stored in the
// NPU's tiled layout, and get_tensor gives back exactly what set_tensor got.
//
// For every tiled type and odd shapes (rows not a multiple of 16, a single
// row, 3-D and 4-D), with random bytes as the "quantized" data:
//   - whole upload: the buffer bytes differ from the input (it was repacked)
//     and get_tensor, whole, in random ranges and 2-D, returns the input;
//   - upload in random pieces (some overlapping) in random order: reads in
//     between return what was staged, and after the last byte it is tiled;
//   - 2-D upload (even rows, then odd rows);
//   - a patch into a tiled tensor and memset ranges are read back;
//   - the same tensor in a buffer that is not for weights stays plain;
//   - clearing the buffer reads back as zeros;
//   - a view of a tiled tensor reads and writes the root's raw bytes through
//     get/set_tensor, and HTP0 refuses a MUL_MAT whose weights are such a
//     view (the buffer holds the root's tiles, not the view's rows).
// Exit 0 pass, 1 fail, 77 no HTP device.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "test-check.h"

// Types with a tiled layout (src/npu/ops/tiled.c); add new ones here.
static const enum ggml_type types[] = {
    GGML_TYPE_Q4_0,   GGML_TYPE_Q4_1,    GGML_TYPE_Q8_0,  GGML_TYPE_IQ4_NL, GGML_TYPE_MXFP4,   GGML_TYPE_Q5_0,
    GGML_TYPE_Q5_1,   GGML_TYPE_Q4_K,    GGML_TYPE_Q5_K,  GGML_TYPE_Q6_K,   GGML_TYPE_Q3_K,    GGML_TYPE_Q2_K,
    GGML_TYPE_IQ4_XS, GGML_TYPE_Q1_0,    GGML_TYPE_Q2_0,  GGML_TYPE_NVFP4,  GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS,
    GGML_TYPE_IQ2_S,  GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ1_S,  GGML_TYPE_IQ1_M};

// Shapes in blocks along ne0 (times the block size), then ne1..ne3.
static const int64_t shapes[][4] = {
    {1, 1, 1, 1}, {2, 17, 1, 1}, {3, 33, 2, 1}, {1, 5, 3, 2}, {8, 16, 1, 1}, {5, 47, 1, 1},
};

// The IQ types' tiles are their rows' blocks verbatim (contract/iq-tiles.h):
// a tensor of one block is its own tiled layout.
static int tiled_like_plain(enum ggml_type type, const struct ggml_tensor * t) {
    const int iq = type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ2_S ||
                   type == GGML_TYPE_IQ3_XXS || type == GGML_TYPE_IQ3_S || type == GGML_TYPE_IQ1_S ||
                   type == GGML_TYPE_IQ1_M;
    return iq && ggml_nelements(t) == ggml_blck_size(type);
}

static uint64_t rng_state = 0x1234567ull;

static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// get_tensor of t equals want: whole, random ranges, and 2-D runs of rows.
static void check_reads(struct ggml_tensor * t, const uint8_t * want, const char * what) {
    const size_t n   = ggml_nbytes(t);
    uint8_t *    got = malloc(n);
    ggml_backend_tensor_get(t, got, 0, n);
    CHECK(memcmp(got, want, n) == 0, "%s %s %s: whole read differs", what, ggml_type_name(t->type), t->name);
    for (int i = 0; i < 20; i++) {
        size_t off = (size_t)(rnd() % n), len = 1 + (size_t)(rnd() % (n - off));
        memset(got, 0xcd, len);
        ggml_backend_tensor_get(t, got, off, len);
        CHECK(memcmp(got, want + off, len) == 0, "%s %s %s: range [%zu, +%zu) differs", what, ggml_type_name(t->type),
              t->name, off, len);
    }
    const size_t row = t->nb[1];
    if (ggml_nrows(t) >= 2) {  // every other row, in a packed destination
        const size_t copies = (size_t)ggml_nrows(t) / 2;
        memset(got, 0xcd, n);
        ggml_backend_tensor_get_2d(t, got, row, row, copies, 2 * row, row);
        int ok = 1;
        for (size_t i = 0; i < copies; i++) {
            ok &= memcmp(got + i * row, want + (2 * i + 1) * row, row) == 0;
        }
        CHECK(ok, "%s %s %s: 2-D read differs", what, ggml_type_name(t->type), t->name);
    }
    free(got);
}

// Views of the tiled tensor t (raw bytes raw): its second half of rows (or
// the part past one block), read whole, written and read back, then put back.
static void check_view(ggml_backend_dev_t dev, struct ggml_tensor * t, const uint8_t * raw) {
    struct ggml_init_params ip  = {ggml_tensor_overhead() * 8, NULL, true};
    struct ggml_context *   ctx = ggml_init(ip);
    const size_t            n   = ggml_nbytes(t);
    const size_t            off = t->ne[1] > 1 ? (size_t)(t->ne[1] / 2) * t->nb[1] : ggml_type_size(t->type);
    if (off >= n) {
        ggml_free(ctx);
        return;
    }
    struct ggml_tensor * v =
        ggml_view_1d(ctx, t, (int64_t)((n - off) / ggml_type_size(t->type)) * ggml_blck_size(t->type), off);
    ggml_backend_view_init(v);
    const size_t len = ggml_nbytes(v);
    uint8_t *    got = malloc(len);
    uint8_t *    put = malloc(len);
    ggml_backend_tensor_get(v, got, 0, len);
    CHECK(memcmp(got, raw + off, len) == 0, "%s: a view's get_tensor gives the root's raw bytes",
          ggml_type_name(t->type));
    for (size_t i = 0; i < len; i++) {
        put[i] = (uint8_t)rnd();
    }
    ggml_backend_tensor_set(v, put, 0, len);
    uint8_t * whole = malloc(n);
    ggml_backend_tensor_get(t, whole, 0, n);
    CHECK(memcmp(whole, raw, off) == 0 && memcmp(whole + off, put, len) == 0,
          "%s: a set_tensor through a view lands in the root's raw bytes", ggml_type_name(t->type));
    ggml_backend_tensor_set(v, raw + off, 0, len);  // as it was

    if (t->ne[1] >= 2 && t->ne[2] == 1 && t->ne[3] == 1) {
        struct ggml_tensor * w  = ggml_view_2d(ctx, t, t->ne[0], t->ne[1] / 2, t->nb[1], off);
        struct ggml_tensor * x  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, t->ne[0], 1);
        struct ggml_tensor * mm = ggml_mul_mat(ctx, w, x);
        ggml_backend_view_init(w);
        CHECK(!ggml_backend_dev_supports_op(dev, mm), "%s: MUL_MAT over a view of tiled weights is claimed",
              ggml_type_name(t->type));
        CHECK(ggml_backend_dev_supports_op(dev, ggml_mul_mat(ctx, t, x)),
              "%s: MUL_MAT over the tiled weights is refused", ggml_type_name(t->type));
    }
    free(got);
    free(put);
    free(whole);
    ggml_free(ctx);
}

static void run_type(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft, enum ggml_type type, const int64_t sh[4],
                     int * n_checked) {
    struct ggml_init_params ip  = {ggml_tensor_overhead() * 8, NULL, true};
    struct ggml_context *   ctx = ggml_init(ip);
    const int64_t           ne0 = sh[0] * ggml_blck_size(type);
    struct ggml_tensor *    t[4];
    static const char *     names[4] = {"whole", "pieces", "twod", "plain"};
    for (int i = 0; i < 4; i++) {
        t[i] = ggml_new_tensor_4d(ctx, type, ne0, sh[1], sh[2], sh[3]);
        ggml_set_name(t[i], names[i]);
    }
    // t[0..2] in a weight buffer, t[3] in a buffer of the default kind.
    struct ggml_context * ctx2 = ggml_init(ip);
    struct ggml_tensor *  tp   = ggml_dup_tensor(ctx2, t[3]);
    ggml_set_name(tp, "plain");
    t[3]                     = NULL;
    ggml_backend_buffer_t bw = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    ggml_backend_buffer_t bp = ggml_backend_alloc_ctx_tensors_from_buft(ctx2, buft);
    if (!bw || !bp) {
        CHECK(0, "cannot allocate buffers");
        goto done;
    }
    ggml_backend_buffer_set_usage(bw, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    const size_t n   = ggml_nbytes(t[0]);
    uint8_t *    raw = malloc(n);
    uint8_t *    cur = malloc(n);
    for (size_t i = 0; i < n; i++) {
        raw[i] = (uint8_t)rnd();
    }

    // Whole upload: repacked, reads give back the input.
    ggml_backend_tensor_set(t[0], raw, 0, n);
    CHECK(memcmp(t[0]->data, raw, n) != 0 || n < 64 || tiled_like_plain(type, t[0]),
          "%s whole: buffer bytes equal the input (not tiled)", ggml_type_name(type));
    check_reads(t[0], raw, "whole");
    check_view(dev, t[0], raw);

    // Pieces in random order, one repeated; reads in between see the staged bytes.
    {
        size_t cuts[9];
        int    nc  = 0;
        cuts[nc++] = 0;
        for (int i = 0; i < 7; i++) {
            cuts[nc++] = (size_t)(rnd() % n);
        }
        cuts[nc++] = n;
        for (int i = 1; i < nc; i++) {  // sort
            for (int j = i; j > 0 && cuts[j] < cuts[j - 1]; j--) {
                size_t x    = cuts[j];
                cuts[j]     = cuts[j - 1];
                cuts[j - 1] = x;
            }
        }
        int order[8];
        for (int i = 0; i < nc - 1; i++) {
            order[i] = i;
        }
        for (int i = nc - 2; i > 0; i--) {
            int j = (int)(rnd() % (uint64_t)(i + 1)), x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        memset(cur, 0, n);
        for (int i = 0; i < nc - 1; i++) {
            const size_t a = cuts[order[i]], b = cuts[order[i] + 1];
            if (b == a) {
                continue;
            }
            ggml_backend_tensor_set(t[1], raw + a, a, b - a);
            memcpy(cur + a, raw + a, b - a);
            if (i == 0) {
                ggml_backend_tensor_set(t[1], raw + a, a, b - a);  // the same piece again
            }
            if (i + 1 < nc - 1) {
                uint8_t * got = malloc(n);
                ggml_backend_tensor_get(t[1], got, 0, n);
                CHECK(memcmp(got, cur, n) == 0, "%s pieces: staged read differs", ggml_type_name(type));
                free(got);
            }
        }
        CHECK(memcmp(t[1]->data, raw, n) != 0 || n < 64 || tiled_like_plain(type, t[1]),
              "%s pieces: not tiled after the last piece", ggml_type_name(type));
        check_reads(t[1], raw, "pieces");
    }

    // 2-D upload: even rows, then odd rows.
    {
        const size_t row = t[2]->nb[1], nrows = (size_t)ggml_nrows(t[2]);
        ggml_backend_tensor_set_2d(t[2], raw, 0, row, (nrows + 1) / 2, 2 * row, 2 * row);
        if (nrows >= 2) {
            ggml_backend_tensor_set_2d(t[2], raw + row, row, row, nrows / 2, 2 * row, 2 * row);
        }
        check_reads(t[2], raw, "twod");
    }

    // A patch into a tiled tensor, then memsets.
    {
        memcpy(cur, raw, n);
        size_t off = (size_t)(rnd() % n), len = 1 + (size_t)(rnd() % (n - off));
        for (size_t i = 0; i < len; i++) {
            cur[off + i] = (uint8_t)rnd();
        }
        ggml_backend_tensor_set(t[0], cur + off, off, len);
        check_reads(t[0], cur, "patched");
        off = (size_t)(rnd() % n);
        len = 1 + (size_t)(rnd() % (n - off));
        memset(cur + off, 0x5a, len);
        ggml_backend_tensor_memset(t[0], 0x5a, off, len);
        check_reads(t[0], cur, "memset");
    }

    // Not a weight buffer: stays plain.
    ggml_backend_tensor_set(tp, raw, 0, n);
    CHECK(memcmp(tp->data, raw, n) == 0, "%s: tensor of a non-weight buffer was changed", ggml_type_name(type));
    check_reads(tp, raw, "plain");

    // Clear: every tensor reads as zeros.
    ggml_backend_buffer_clear(bw, 0);
    memset(cur, 0, n);
    check_reads(t[0], cur, "cleared");

    *n_checked += 1;
    free(raw);
    free(cur);
done:
    ggml_backend_buffer_free(bw);
    ggml_backend_buffer_free(bp);
    ggml_free(ctx);
    ggml_free(ctx2);
}

int main(void) {
    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("HTP0");
    if (!dev) {
        fprintf(stderr, "no HTP0 device: skipped\n");
        return 77;
    }
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
    int                        n    = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            run_type(dev, buft, types[ti], shapes[si], &n);
        }
    }
    printf("test-repack: %d type/shape combinations checked (whole, pieces, 2-D, patch, memset, plain, clear)\n", n);
    return test_exit_code("test-repack");
}
