// test-hvx.c: the NPU kernels' HVX paths (Hexagon v67) against their
// portable C, bit for bit. Built by `make hexagon` (build-hexagon/bin/test-hvx)
// and run under qemu-hexagon -cpu v67 (ctest -L hexagon: test-hvx-hexagon).
//
// Every kernel that has an HVX path runs on the same inputs twice, with
// htp_kernels_set_portable(0) (HVX) and (1) (portable C, what GGML_HTP_SCALAR=1
// selects), into buffers pre-filled with different bytes, and the outputs must
// be equal bytes (memcmp); where the kernel has a separate _ref entry that is
// compared as well. Inputs are random blocks mixed with edge cases: zero blocks,
// the largest and smallest quants, every nibble value, fp16 scales that are
// zero, subnormal, the largest finite, inf or NaN, activations with -0, NaN,
// inf, ties and subnormals, padded row groups and block counts that are not a
// multiple of the kernels' batches. One line per kernel with its case count;
// exit 0 only if all are equal.

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/iq-tiles.h"
#include "contract/kquant-tiles.h"
#include "contract/tiled.h"
#include "contract/type-traits.h"
#include "fp16.h"
#include "hexagon/syscall.h"
#include "hvx.h"
#include "iq-dot.h"
#include "kernels.h"
#include "kquant-dot.h"
#include "platform/platform.h"
#include "proto/htp-proto.h"
#include "quant.h"

#if !defined(__HVX__)
#error "test-hvx is built for Hexagon with HVX (make hexagon)"
#endif

static int n_fail = 0;

static void say(const char * fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char * fmt, ...) {
    char    line[300];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2) {
        n = (int)sizeof(line) - 2;
    }
    line[n++] = '\n';
    htp_sys_call3(HTP_NR_WRITE, 1, (long)line, (long)n);
}

// One kernel's tally: cases run, the first mismatch described.
struct tally {
    const char * name;
    int          cases, bad;
    char         first[160];
};

static void tally_case(struct tally * t, int equal, const char * fmt, ...) __attribute__((format(printf, 3, 4)));

static void tally_case(struct tally * t, int equal, const char * fmt, ...) {
    t->cases++;
    if (!equal && t->bad++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->first, sizeof t->first, fmt, ap);
        va_end(ap);
    }
}

static void tally_report(const struct tally * t) {
    if (t->bad) {
        say("FAIL %-26s %d of %d cases differ; first: %s", t->name, t->bad, t->cases, t->first);
        n_fail++;
    } else {
        say("ok   %-26s %d cases bit-identical", t->name, t->cases);
    }
}

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void) {  // splitmix64
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) >> 16);
}

static int rnd_n(int n) {
    return (int)(rnd() % (uint32_t)n);
}

static float rnd_unit(void) {  // [-1, 1)
    return (float)((int32_t)(rnd() & 0xffffff) - 0x800000) / 8388608.0f;
}

static void * xalloc(size_t n) {
    void * p = malloc(n + 128);
    if (p == NULL) {
        say("FAIL out of memory (%zu bytes)", n);
        exit(1);
    }
    return p;
}

// n bytes that end where an inaccessible page begins, so a kernel reading
// past its input faults here (as it would at the end of an NPU mapping).
// The start is 128-byte aligned when n is a multiple of 128. Freed with
// guarded_free(p, n).
static void * guarded(size_t n) {
    const uint64_t pg    = htp_plat_page_size();
    const uint64_t pages = (n + pg - 1) / pg;
    uint8_t *      base  = htp_plat_scratch_alloc((pages + 1) * pg);
    if (base == NULL || htp_plat_protect_none(base + pages * pg, pg) != 0) {
        say("FAIL cannot map a guarded buffer of %zu bytes", n);
        exit(1);
    }
    return base + pages * pg - n;
}

// A fault (a kernel read past its input into the guard page) says where.
static void on_fault(int is_bus_error, uintptr_t addr) {
    static const char hex[]    = "0123456789abcdef";
    char              line[64] = "FAIL fault at 0x";
    int               n        = 16;
    for (int sh = 28; sh >= 0; sh -= 4) {
        line[n++] = hex[(addr >> sh) & 15];
    }
    memcpy(line + n, is_bus_error ? " (bus)\n" : "\n", is_bus_error ? 7 : 1);
    htp_plat_log_write(line, (size_t)n + (is_bus_error ? 7 : 1));
}

static void guarded_free(void * p, size_t n) {
    const uint64_t pg    = htp_plat_page_size();
    const uint64_t pages = (n + pg - 1) / pg;
    htp_plat_scratch_free((uint8_t *)p + n - pages * pg, (pages + 1) * pg);
}

static const uint16_t fp16_edges[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00,
                                      0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x0200, 0x1400};

// An fp16 scale: mostly an ordinary value, sometimes an edge (incl. inf and NaN).
static uint16_t rnd_fp16(int edges) {
    if (edges && rnd_n(4) == 0) {
        return fp16_edges[rnd_n((int)(sizeof fp16_edges / sizeof fp16_edges[0]))];
    }
    const uint16_t e = (uint16_t)(5 + rnd_n(12));  // 2^-10 .. 2^1
    return (uint16_t)((rnd() & 0x8000) | (e << 10) | (rnd() & 0x3ff));
}

static void put16(uint8_t * p, uint16_t v) {
    memcpy(p, &v, 2);
}

struct qtype {
    uint32_t     type;
    const char * name;
    int          bytes;  // ggml block bytes
    int          qk;     // elements per block
};

static const struct qtype q32_types[] = {
    {HTP_TYPE_Q4_0, "q4_0", 18, 32},     {HTP_TYPE_Q4_1, "q4_1", 20, 32},   {HTP_TYPE_Q8_0, "q8_0", 34, 32},
    {HTP_TYPE_IQ4_NL, "iq4_nl", 18, 32}, {HTP_TYPE_MXFP4, "mxfp4", 17, 32},
};

// The 32-element types with a fifth bit (Q5_0, Q5_1): their matmul kernels and
// their row dequantization, plain and tiled.
static const struct qtype q5_types[] = {
    {HTP_TYPE_Q5_0, "q5_0", 22, 32},
    {HTP_TYPE_Q5_1, "q5_1", 24, 32},
};

// Blocks of several 32-element units (tiled.h): their matmul kernels.
static const struct qtype unit_types[] = {
    {HTP_TYPE_Q1_0, "q1_0", 18, 128},
    {HTP_TYPE_Q2_0, "q2_0", 18, 64},
    {HTP_TYPE_NVFP4, "nvfp4", 36, 64},
};

static const struct qtype kq_types[] = {
    {HTP_TYPE_Q4_K, "q4_K", 144, 256}, {HTP_TYPE_Q5_K, "q5_K", 176, 256}, {HTP_TYPE_Q6_K, "q6_K", 210, 256},
    {HTP_TYPE_Q3_K, "q3_K", 110, 256}, {HTP_TYPE_Q2_K, "q2_K", 84, 256},  {HTP_TYPE_IQ4_XS, "iq4_xs", 136, 256},
};

// Byte offset of a block's quants (for Q5_0 / Q5_1 their high bits qh, then
// the nibbles) after the scale fields (fp16 unless MXFP4's e8m0).
static int quant_offset(uint32_t type) {
    switch (type) {
        case HTP_TYPE_Q4_1:
        case HTP_TYPE_Q5_1:
            return 4;
        case HTP_TYPE_MXFP4:
            return 1;
        case HTP_TYPE_NVFP4:
            return 4;
        default:
            return 2;
    }
}

// One ggml block of a 32-element type: kind 0 random, 1 all zero, 2 largest
// quants, 3 smallest quants, 4 every nibble value (both nibbles), 5 random
// with an edge scale.
static void gen_block32(const struct qtype * t, uint8_t * b, int kind) {
    const int off = quant_offset(t->type), nq = t->bytes - off;
    memset(b, 0, (size_t)t->bytes);
    if (kind == 1) {
        return;
    }
    for (int i = 0; i < nq; i++) {
        uint8_t v = (uint8_t)rnd();
        if (kind == 2) {
            v = t->type == HTP_TYPE_Q8_0 ? 0x7f : 0xff;
        } else if (kind == 3) {
            v = t->type == HTP_TYPE_Q8_0 ? 0x80 : 0x00;
        } else if (kind == 4) {
            v = t->type == HTP_TYPE_Q8_0 ? (uint8_t)(i * 8 - 128) : (uint8_t)((i & 15) | ((15 - (i & 15)) << 4));
        }
        b[off + i] = v;
    }
    if (t->type == HTP_TYPE_NVFP4) {  // 4 ue4m3 scales: any byte, or edges (0, the 0x7f NaN, subnormals, bit 7)
        static const uint8_t s_edges[] = {0, 1, 7, 8, 0x38, 0x7e, 0x7f, 0x80, 0xff};
        for (int i = 0; i < 4; i++) {
            b[i] = kind == 5 ? s_edges[rnd_n(9)] : (uint8_t)(0x20 + rnd_n(0x30));
        }
        return;
    }
    if (t->type == HTP_TYPE_MXFP4) {
        static const uint8_t e_edges[] = {0, 1, 2, 3, 127, 128, 200, 254, 255};
        b[0]                           = kind == 5 ? e_edges[rnd_n(9)] : (uint8_t)(110 + rnd_n(30));
        return;
    }
    put16(b, rnd_fp16(kind == 5));
    if (t->type == HTP_TYPE_Q4_1 || t->type == HTP_TYPE_Q5_1) {
        put16(b + 2, rnd_fp16(kind == 5));
    }
}

// One K-quant block: kind 0 random bits, 1 all zero, 2 all quant bits set,
// 3 random with edge d / dmin.
static void gen_blockk(const struct qtype * t, uint8_t * b, int kind) {
    for (int i = 0; i < t->bytes; i++) {
        b[i] = kind == 1 ? 0 : kind == 2 ? 0xff : (uint8_t)rnd();
    }
    if (kind == 1) {
        return;
    }
    switch (t->type) {
        case HTP_TYPE_Q6_K:
            put16(b + 208, rnd_fp16(kind == 3));
            break;
        case HTP_TYPE_Q3_K:
            put16(b + 108, rnd_fp16(kind == 3));
            break;
        case HTP_TYPE_Q2_K:
            put16(b + 80, rnd_fp16(kind == 3));
            put16(b + 82, rnd_fp16(kind == 3));
            break;
        case HTP_TYPE_IQ4_XS:
            put16(b, rnd_fp16(kind == 3));
            break;
        default:
            put16(b, rnd_fp16(kind == 3));
            put16(b + 2, rnd_fp16(kind == 3));
            break;
    }
}

static int rnd_kind(int n_kinds) {
    return rnd_n(3) == 0 ? rnd_n(n_kinds) : 0;
}

// nrows rows of nblk random blocks (row-major, ggml layout).
static uint8_t * gen_rows(const struct qtype * t, int nrows, int64_t nblk, int k_quant) {
    uint8_t * rows = guarded((size_t)nrows * (size_t)nblk * (size_t)t->bytes);
    for (int r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < nblk; b++) {
            uint8_t * blk = rows + ((size_t)r * (size_t)nblk + (size_t)b) * (size_t)t->bytes;
            if (k_quant) {
                gen_blockk(t, blk, rnd_kind(4));
            } else {
                gen_block32(t, blk, rnd_kind(6));
            }
        }
    }
    return rows;
}

// The rows packed into ngroups tiled row groups (rows past nrows: padding).
static uint8_t * pack_groups(const struct qtype * t, const uint8_t * rows, int nrows, int64_t nblk, size_t * gbytes) {
    const struct htp_tile_format * f = htp_tile_format(t->type);
    *gbytes                          = (size_t)htp_tiled_group_bytes(f, nblk * t->qk);
    const int    ngroups             = (nrows + 15) / 16;
    uint8_t *    g                   = guarded(*gbytes * (size_t)ngroups);
    const size_t row_bytes           = (size_t)nblk * (size_t)t->bytes;
    for (int i = 0; i < ngroups; i++) {
        const int n = nrows - 16 * i < 16 ? nrows - 16 * i : 16;
        htp_tiled_pack_group(f, NULL, rows + (size_t)i * 16 * row_bytes, row_bytes, n, nblk, g + (size_t)i * *gbytes);
    }
    return g;
}

// n activation floats: kind 0 random of one magnitude, 1 zeros with some -0,
// 2 a wide spread of magnitudes, 3 a few equal largest values of both signs,
// 4 subnormals, 5 halves (ties after scaling), 6 one NaN, 7 one inf.
static void gen_floats(float * x, int n, int kind) {
    const float scale = htp_bits_f32((uint32_t)(100 + rnd_n(50)) << 23);
    for (int i = 0; i < n; i++) {
        float v = rnd_unit() * scale;
        switch (kind) {
            case 1:
                v = rnd_n(3) == 0 ? -0.0f : 0.0f;
                break;
            case 2:
                v = rnd_unit() * htp_bits_f32((uint32_t)(90 + rnd_n(70)) << 23);
                break;
            case 3:
                v = rnd_n(4) == 0 ? (rnd_n(2) ? scale : -scale) : rnd_unit() * scale;
                break;
            case 4:
                v = htp_bits_f32((rnd() & 0x807fffffu));
                break;
            case 5:
                v = (float)(rnd_n(255) - 127) * 0.5f * scale;
                break;
            default:
                break;
        }
        x[i] = v;
    }
    if (kind == 6) {
        x[rnd_n(n)] = htp_bits_f32(0x7fc00000u | (rnd() & 0xffff));
    } else if (kind == 7) {
        x[rnd_n(n)] = rnd_n(2) ? htp_bits_f32(0x7f800000u) : htp_bits_f32(0xff800000u);
    }
}

// ---------------------------------------------------------------------------
// hvx.h's fp16 -> fp32 (the scales of every kernel): all 65536 inputs
// ---------------------------------------------------------------------------

static void test_fp16(void) {
    struct tally t = {.name = "fp16->fp32 (hvx.h)"};
    uint16_t     h[64] HVX_ALIGN;
    float        got[64] HVX_ALIGN;
    for (uint32_t h0 = 0; h0 < 65536; h0 += 64) {
        for (int i = 0; i < 64; i++) {
            h[i] = (uint16_t)(h0 + (uint32_t)i);
        }
        hvx_fp16_to_fp32_64(h, got);
        for (int i = 0; i < 64; i++) {
            const float want = htp_fp16_to_fp32_soft(h[i]);
            tally_case(&t, memcmp(&want, &got[i], 4) == 0, "0x%04x: 0x%08x, want 0x%08x", h[i],
                       (unsigned)htp_f32_bits(got[i]), (unsigned)htp_f32_bits(want));
        }
    }
    tally_report(&t);
}

// ---------------------------------------------------------------------------
// Activation quantizers
// ---------------------------------------------------------------------------

static void test_qmm_quantize(void) {
    struct tally t = {.name = "qmm_quantize_blocks"};
    enum { NB = 13 };
    uint8_t a[NB * 40], b[NB * 40], c[NB * 40];
    for (int it = 0; it < 400; it++) {
        const int nb = 1 + rnd_n(NB);
        float *   x  = guarded(sizeof(float) * 32 * (size_t)nb);
        for (int i = 0; i < nb; i++) {
            gen_floats(x + 32 * i, 32, rnd_n(8));
        }
        memset(a, 0xa5, sizeof a);
        memset(b, 0x5a, sizeof b);
        memset(c, 0x33, sizeof c);
        htp_kernels_set_portable(0);
        htp_qmm_quantize_blocks(x, nb, a);
        htp_kernels_set_portable(1);
        htp_qmm_quantize_blocks(x, nb, b);
        htp_qmm_quantize_blocks_ref(x, nb, c);
        const size_t n = (size_t)nb * 40;
        tally_case(&t, memcmp(a, b, n) == 0 && memcmp(a, c, n) == 0, "case %d (%d blocks)", it, nb);
        guarded_free(x, sizeof(float) * 32 * (size_t)nb);
    }
    tally_report(&t);
}

static void test_q8k_quantize(void) {
    struct tally t = {.name = "kq_quantize_q8k"};
    enum { NSB = 3 };
    struct htp_q8k_block a[NSB], b[NSB], c[NSB];
    for (int it = 0; it < 300; it++) {
        const int nsb = 1 + rnd_n(NSB);
        float *   x   = guarded(sizeof(float) * 256 * (size_t)nsb);
        for (int i = 0; i < nsb * 8; i++) {  // kinds mixed within a super-block (NaN, inf: rarely)
            gen_floats(x + 32 * i, 32, rnd_n(3) == 0 ? rnd_n(rnd_n(8) == 0 ? 8 : 6) : 0);
        }
        if (rnd_n(4) == 0) {  // a whole super-block of one kind (all zero, all ties ...)
            gen_floats(x, 256, rnd_n(8));
        }
        memset(a, 0xa5, sizeof a);
        memset(b, 0x5a, sizeof b);
        memset(c, 0x33, sizeof c);
        htp_kernels_set_portable(0);
        htp_kq_quantize_q8k(a, x, 256 * nsb);
        htp_kernels_set_portable(1);
        htp_kq_quantize_q8k(b, x, 256 * nsb);
        htp_kq_quantize_q8k_ref(c, x, 256 * nsb);
        const size_t n = sizeof(a[0]) * (size_t)nsb;
        tally_case(&t, memcmp(a, b, n) == 0 && memcmp(a, c, n) == 0, "case %d (%d super-blocks)", it, nsb);
        guarded_free(x, sizeof(float) * 256 * (size_t)nsb);
    }
    tally_report(&t);
}

// ---------------------------------------------------------------------------
// Q4_0-family matmul micro-kernels (matmul-quant.c)
// ---------------------------------------------------------------------------

static void test_qmm_dot(const struct qtype * qt) {
    static const int64_t nblks[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 33};
    char                 name_tile[40], name_pair[40];
    snprintf(name_tile, sizeof name_tile, "qmm tile %s", qt->name);
    snprintf(name_pair, sizeof name_pair, "qmm pair %s", qt->name);
    struct tally tt = {.name = name_tile}, tp = {.name = name_pair};
    for (size_t si = 0; si < sizeof nblks / sizeof nblks[0]; si++) {
        for (int rep = 0; rep < 3; rep++) {
            const int64_t nblk  = nblks[si];
            const int     nrows = rep == 0 ? 32 : 17 + rnd_n(15);  // two groups, the second padded or full
            uint8_t *     rows  = gen_rows(qt, nrows, nblk, 0);
            size_t        gb;
            uint8_t *     g = pack_groups(qt, rows, nrows, nblk, &gb);
            // 8 columns of activations, quantized as the op does (blocks of 32:
            // qk / 32 of them a weight block).
            const int64_t nact   = nblk * (qt->qk / 32);
            const size_t  stride = ((size_t)nact * 40 + 63) / 64 * 64;
            uint8_t *     acts   = guarded(stride * 8);
            float *       x      = xalloc(sizeof(float) * 32 * (size_t)nact);
            for (int c = 0; c < 8; c++) {
                for (int64_t b = 0; b < nact; b++) {
                    gen_floats(x + 32 * b, 32, rnd_n(4) == 0 ? rnd_n(6) : 0);
                }
                htp_qmm_quantize_blocks_ref(x, nact, acts + (size_t)c * stride);
            }
            const uint8_t * act[8];
            for (int c = 0; c < 8; c++) {
                act[c] = acts + (size_t)c * stride;
            }
            for (int nc = 1; nc <= 8; nc++) {
                for (int grp = 0; grp < 2; grp++) {
                    float o1[8][16], o2[8][16];
                    memset(o1, 0xa5, sizeof o1);
                    memset(o2, 0x5a, sizeof o2);
                    htp_kernels_set_portable(0);
                    htp_qmm_dot_tile(qt->type, g + (size_t)grp * gb, nblk, act, nc, o1);
                    htp_kernels_set_portable(1);
                    htp_qmm_dot_tile(qt->type, g + (size_t)grp * gb, nblk, act, nc, o2);
                    tally_case(&tt, memcmp(o1, o2, sizeof(o1[0]) * (size_t)nc) == 0, "nblk %lld nc %d group %d",
                               (long long)nblk, nc, grp);
                }
            }
            for (int c = 0; c < 8; c++) {
                float o1[2][16], o2[2][16];
                memset(o1, 0xa5, sizeof o1);
                memset(o2, 0x5a, sizeof o2);
                htp_kernels_set_portable(0);
                htp_qmm_dot_pair(qt->type, g, g + gb, nblk, act[c], o1);
                htp_kernels_set_portable(1);
                htp_qmm_dot_pair(qt->type, g, g + gb, nblk, act[c], o2);
                tally_case(&tp, memcmp(o1, o2, sizeof o1) == 0, "nblk %lld column %d", (long long)nblk, c);
            }
            free(x);
            guarded_free(acts, stride * 8);
            guarded_free(g, gb * 2);
            guarded_free(rows, (size_t)nrows * (size_t)nblk * (size_t)qt->bytes);
        }
    }
    tally_report(&tt);
    tally_report(&tp);
}

// ---------------------------------------------------------------------------
// K-quant dot products (kquant-dot.c)
// ---------------------------------------------------------------------------

static void test_kq_dot(const struct qtype * qt) {
    char name_group[40], name_multi[40];
    snprintf(name_group, sizeof name_group, "kq_dot_group %s", qt->name);
    snprintf(name_multi, sizeof name_multi, "kq_dot_multi %s", qt->name);
    struct tally tg = {.name = name_group}, tm = {.name = name_multi};
    for (int it = 0; it < 10; it++) {
        const int64_t          nsb   = 1 + it % 4;
        const int              nrows = it < 2 ? 64 : 49 + rnd_n(16);  // four groups, the last padded or full
        uint8_t *              rows  = gen_rows(qt, nrows, nsb, 1);
        size_t                 gb;
        uint8_t *              g   = pack_groups(qt, rows, nrows, nsb, &gb);
        struct htp_q8k_block * act = guarded(sizeof(struct htp_q8k_block) * 4 * (size_t)nsb);
        float *                x   = xalloc(sizeof(float) * 256 * (size_t)nsb);
        for (int c = 0; c < 4; c++) {
            for (int64_t i = 0; i < nsb * 8; i++) {
                gen_floats(x + 32 * i, 32, rnd_n(4) == 0 ? rnd_n(6) : 0);
            }
            htp_kq_quantize_q8k_ref(act + c * nsb, x, 256 * nsb);
        }
        const struct htp_q8k_block * a[4] = {act, act + nsb, act + 2 * nsb, act + 3 * nsb};
        for (int grp = 0; grp < 4; grp++) {
            for (int nc = 1; nc <= 4; nc++) {
                float o1[4][16], o2[4][16], o3[4][16];
                memset(o1, 0xa5, sizeof o1);
                memset(o2, 0x5a, sizeof o2);
                memset(o3, 0x33, sizeof o3);
                htp_kernels_set_portable(0);
                htp_kq_dot_group(qt->type, o1, g + (size_t)grp * gb, nsb, a, nc);
                htp_kernels_set_portable(1);
                htp_kq_dot_group(qt->type, o2, g + (size_t)grp * gb, nsb, a, nc);
                htp_kq_dot_group_ref(qt->type, o3, g + (size_t)grp * gb, nsb, a, nc);
                const size_t n = sizeof(o1[0]) * (size_t)nc;
                tally_case(&tg, memcmp(o1, o2, n) == 0 && memcmp(o1, o3, n) == 0, "nsb %lld group %d nc %d",
                           (long long)nsb, grp, nc);
            }
        }
        for (int c = 0; c < 4; c++) {
            for (int ng = 2; ng <= 4; ng += 2) {
                for (int g0 = 0; g0 + ng <= 4; g0 += 2) {
                    float o1[4][16], o2[4][16];
                    memset(o1, 0xa5, sizeof o1);
                    memset(o2, 0x5a, sizeof o2);
                    htp_kernels_set_portable(0);
                    htp_kq_dot_multi(qt->type, o1, g + (size_t)g0 * gb, gb, ng, nsb, a[c]);
                    htp_kernels_set_portable(1);
                    htp_kq_dot_multi(qt->type, o2, g + (size_t)g0 * gb, gb, ng, nsb, a[c]);
                    tally_case(&tm, memcmp(o1, o2, sizeof(o1[0]) * (size_t)ng) == 0, "nsb %lld ng %d from %d col %d",
                               (long long)nsb, ng, g0, c);
                }
            }
        }
        free(x);
        guarded_free(act, sizeof(struct htp_q8k_block) * 4 * (size_t)nsb);
        guarded_free(g, gb * 4);
        guarded_free(rows, (size_t)nrows * (size_t)nsb * (size_t)qt->bytes);
    }
    tally_report(&tg);
    tally_report(&tm);
}

// ---------------------------------------------------------------------------
// IQ codebook dot products (iq-dot.c) over decoded tiles
// ---------------------------------------------------------------------------

// Codebooks of valid random values (qemu has no host to derive ggml's): the
// dot products read only the decoded tiles, so any valid points will do.
static void gen_codebooks(struct htp_codebooks * cb) {
    static const uint8_t iq2[3]    = {8, 25, 43};
    static const uint8_t iq3xxs[8] = {4, 12, 20, 28, 36, 44, 52, 62};
    memset(cb, 0, sizeof *cb);
    cb->magic = HTP_CODEBOOKS_MAGIC;
    cb->bytes = sizeof *cb;
    for (int i = 0; i < 1024 * 8; i++) {
        (&cb->iq2s[0][0])[i] = iq2[rnd_n(3)];
        if (i < 512 * 8) {
            (&cb->iq2xs[0][0])[i] = iq2[rnd_n(3)];
        }
        if (i < 256 * 8) {
            (&cb->iq2xxs[0][0])[i] = iq2[rnd_n(3)];
        }
    }
    for (int i = 0; i < 256 * 4; i++) {
        (&cb->iq3xxs[0][0])[i] = iq3xxs[rnd_n(8)];
    }
    for (int i = 0; i < 512 * 4; i++) {
        (&cb->iq3s[0][0])[i] = (uint8_t)(1 + 2 * rnd_n(8));
    }
    for (int i = 0; i < 2048 * 8; i++) {
        (&cb->iq1s[0][0])[i] = (int8_t)(rnd_n(3) - 1);
    }
}

static void test_iq_dot(uint32_t type, const struct htp_codebooks * cb) {
    const struct htp_tile_format * f      = htp_tile_format(type);
    const htp_iq_decode_fn         decode = htp_iq_decoder(type);
    char                           name[40];
    snprintf(name, sizeof name, "iq_dot_group %s", htp_type_traits(type)->name);
    struct tally t = {.name = name};
    if (!f || !decode) {
        tally_case(&t, 0, "no tile format or decoder");
        tally_report(&t);
        return;
    }
    for (int it = 0; it < 10; it++) {
        const int64_t nsb   = 1 + it % 4;
        const int     nrows = it < 2 ? 16 : 1 + rnd_n(16);
        const size_t  rb    = (size_t)nsb * f->blck_bytes;
        uint8_t *     rows  = guarded(rb * (size_t)nrows);
        for (size_t i = 0; i < rb * (size_t)nrows; i++) {
            rows[i] = (uint8_t)rnd();
        }
        for (int r = 0; r < nrows; r++) {
            for (int64_t b = 0; b < nsb; b++) {
                put16(rows + (size_t)r * rb + (size_t)b * f->blck_bytes, rnd_fp16(it > 1));  // d (IQ2, IQ3)
            }
        }
        struct htp_iq_dtile *  dg  = guarded(htp_iq_dgroup_bytes(256 * nsb));
        struct htp_q8k_block * act = guarded(sizeof(struct htp_q8k_block) * 4 * (size_t)nsb);
        float *                x   = xalloc(sizeof(float) * 256 * (size_t)nsb);
        htp_iq_decode_group(decode, cb, rows, rb, f->blck_bytes, nrows, nsb, dg);
        for (int c = 0; c < 4; c++) {
            for (int64_t i = 0; i < nsb * 8; i++) {
                gen_floats(x + 32 * i, 32, rnd_n(4) == 0 ? rnd_n(6) : 0);
            }
            htp_kq_quantize_q8k_ref(act + c * nsb, x, 256 * nsb);
        }
        const struct htp_q8k_block * a[4] = {act, act + nsb, act + 2 * nsb, act + 3 * nsb};
        for (int nc = 1; nc <= 4; nc++) {
            float o1[4][16], o2[4][16], o3[4][16];
            memset(o1, 0xa5, sizeof o1);
            memset(o2, 0x5a, sizeof o2);
            memset(o3, 0x33, sizeof o3);
            htp_kernels_set_portable(0);
            htp_iq_dot_group(o1, dg, nsb, a, nc);
            htp_kernels_set_portable(1);
            htp_iq_dot_group(o2, dg, nsb, a, nc);
            htp_iq_dot_group_ref(o3, dg, nsb, a, nc);
            const size_t n = sizeof(o1[0]) * (size_t)nc;
            tally_case(&t, memcmp(o1, o2, n) == 0 && memcmp(o1, o3, n) == 0, "nsb %lld rows %d nc %d", (long long)nsb,
                       nrows, nc);
        }
        free(x);
        guarded_free(act, sizeof(struct htp_q8k_block) * 4 * (size_t)nsb);
        guarded_free(dg, htp_iq_dgroup_bytes(256 * nsb));
        guarded_free(rows, rb * (size_t)nrows);
    }
    tally_report(&t);
}

// ---------------------------------------------------------------------------
// Dequantization (GET_ROWS): quant-ops.c, kquant-dot.c
// ---------------------------------------------------------------------------

static void test_dequant32(const struct qtype * qt) {
    char name_row[40], name_tiled[40];
    snprintf(name_row, sizeof name_row, "dequant_row %s", qt->name);
    snprintf(name_tiled, sizeof name_tiled, "dequant_tiled_row %s", qt->name);
    struct tally tr = {.name = name_row}, tt = {.name = name_tiled};
    for (int it = 0; it < 12; it++) {
        const int64_t nblk  = 1 + it + (it > 8 ? 20 : 0);
        const int     nrows = 1 + rnd_n(40);
        uint8_t *     rows  = gen_rows(qt, nrows, nblk, 0);
        const int     tiled = htp_tile_format(qt->type) != NULL;
        size_t        gb    = 0;
        uint8_t *     g     = tiled ? pack_groups(qt, rows, nrows, nblk, &gb) : NULL;
        const int64_t n     = nblk * qt->qk;
        float *       y1    = xalloc(sizeof(float) * (size_t)n);
        float *       y2    = xalloc(sizeof(float) * (size_t)n);
        const size_t  rowb  = (size_t)nblk * (size_t)qt->bytes;
        // A tiled view of the rows: [n, nrows], one slice.
        struct htp_tensor_view v;
        memset(&v, 0, sizeof v);
        v.data  = g;
        v.type  = qt->type;
        v.flags = HTP_TENSOR_TILED;
        v.ne[0] = n;
        v.ne[1] = nrows;
        v.ne[2] = v.ne[3] = 1;
        if (tiled) {
            htp_tiled_strides(htp_tile_format(qt->type), v.ne, v.nb);
        }
        for (int r = 0; r < nrows; r++) {
            memset(y1, 0xa5, sizeof(float) * (size_t)n);
            memset(y2, 0x5a, sizeof(float) * (size_t)n);
            htp_kernels_set_portable(0);
            htp_quant_dequant_row(qt->type, rows + (size_t)r * rowb, y1, n);
            htp_kernels_set_portable(1);
            htp_quant_dequant_row(qt->type, rows + (size_t)r * rowb, y2, n);
            tally_case(&tr, memcmp(y1, y2, sizeof(float) * (size_t)n) == 0, "nblk %lld row %d", (long long)nblk, r);
            if (!tiled) {
                continue;
            }
            // a window of whole blocks [k0, k0 + k)
            const int64_t b0 = rnd_n((int)nblk), nb = 1 + rnd_n((int)(nblk - b0));
            memset(y1, 0xa5, sizeof(float) * (size_t)n);
            memset(y2, 0x5a, sizeof(float) * (size_t)n);
            htp_kernels_set_portable(0);
            htp_quant_dequant_tiled_row(&v, r, 0, 0, b0 * qt->qk, nb * qt->qk, y1);
            htp_kernels_set_portable(1);
            htp_quant_dequant_tiled_row(&v, r, 0, 0, b0 * qt->qk, nb * qt->qk, y2);
            tally_case(&tt, memcmp(y1, y2, sizeof(float) * (size_t)(nb * qt->qk)) == 0,
                       "nblk %lld row %d blocks %lld+%lld", (long long)nblk, r, (long long)b0, (long long)nb);
        }
        free(y1);
        free(y2);
        if (tiled) {
            guarded_free(g, gb * (size_t)((nrows + 15) / 16));
        }
        guarded_free(rows, rowb * (size_t)nrows);
    }
    tally_report(&tr);
    if (htp_tile_format(qt->type) != NULL) {
        tally_report(&tt);
    }
}

// (htp_kq_dequant_tiled_row has no HVX path: GET_ROWS unpacks tiled rows to
// ggml blocks and takes htp_kq_dequant_row, tested here on the same rows.)
static void test_dequantk(const struct qtype * qt) {
    char name_row[40], name_tiled[40];
    snprintf(name_row, sizeof name_row, "kq_dequant_row %s", qt->name);
    snprintf(name_tiled, sizeof name_tiled, "kq_dequant_row %s (tiled)", qt->name);
    struct tally tr = {.name = name_row}, tt = {.name = name_tiled};
    for (int it = 0; it < 6; it++) {
        const int64_t nsb   = 1 + it % 3;
        const int     nrows = 1 + rnd_n(24);
        uint8_t *     rows  = gen_rows(qt, nrows, nsb, 1);
        size_t        gb;
        uint8_t *     g    = pack_groups(qt, rows, nrows, nsb, &gb);
        const int64_t n    = nsb * 256;
        float *       y1   = xalloc(sizeof(float) * (size_t)n);
        float *       y2   = xalloc(sizeof(float) * (size_t)n);
        const size_t  rowb = (size_t)nsb * (size_t)qt->bytes;
        for (int r = 0; r < nrows; r++) {
            memset(y1, 0xa5, sizeof(float) * (size_t)n);
            memset(y2, 0x5a, sizeof(float) * (size_t)n);
            htp_kernels_set_portable(0);
            htp_kq_dequant_row(qt->type, y1, rows + (size_t)r * rowb, nsb);
            htp_kernels_set_portable(1);
            htp_kq_dequant_row(qt->type, y2, rows + (size_t)r * rowb, nsb);
            tally_case(&tr, memcmp(y1, y2, sizeof(float) * (size_t)n) == 0, "nsb %lld row %d", (long long)nsb, r);
            // the way GET_ROWS reads a tiled row: each tile row unpacked to its block
            const struct htp_tile_format * f   = htp_tile_format(qt->type);
            uint8_t *                      blk = xalloc(rowb);
            for (int64_t b = 0; b < nsb; b++) {
                htp_tiled_unpack_block(f, NULL, g + (size_t)(r / 16) * gb, nsb, r % 16, b, blk + (size_t)b * qt->bytes);
            }
            memset(y1, 0xa5, sizeof(float) * (size_t)n);
            memset(y2, 0x5a, sizeof(float) * (size_t)n);
            htp_kernels_set_portable(0);
            htp_kq_dequant_row(qt->type, y1, blk, nsb);
            htp_kernels_set_portable(1);
            htp_kq_dequant_tiled_row(qt->type, y2, g + (size_t)(r / 16) * gb, r % 16, nsb);
            tally_case(&tt, memcmp(y1, y2, sizeof(float) * (size_t)n) == 0, "nsb %lld row %d", (long long)nsb, r);
            free(blk);
        }
        free(y1);
        free(y2);
        guarded_free(g, gb * (size_t)((nrows + 15) / 16));
        guarded_free(rows, rowb * (size_t)nrows);
    }
    tally_report(&tr);
    tally_report(&tt);
}

// ---------------------------------------------------------------------------
// FLASH_ATTN_EXT's block-K integer dot (flash-attn-ops.c)
// ---------------------------------------------------------------------------

// Rows that end at a guard page (the HVX path must not read past a partial
// last vector), quants random or at the int8 extremes (-128 is a K quant
// ggml's q8_0 never writes, but a cache may hold it).
static void test_fa_isums(void) {
    static const int64_t nbks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 18, 32};
    struct tally         t      = {.name = "fa_block_isums"};
    for (size_t si = 0; si < sizeof nbks / sizeof nbks[0]; si++) {
        for (int rep = 0; rep < 4; rep++) {
            const int64_t nbk = nbks[si];
            const size_t  n   = 32 * (size_t)nbk;
            int8_t *      k   = guarded(n);
            int8_t *      q   = guarded(n);
            for (size_t i = 0; i < n; i++) {
                k[i] = rep == 0 ? (int8_t)(rnd_n(2) ? -128 : 127) : (int8_t)(rnd() & 0xff);
                q[i] = rep == 0 ? (int8_t)(rnd_n(2) ? -127 : 127) : (int8_t)(rnd() & 0xff);
            }
            int32_t s1[32], s2[32];
            memset(s1, 0xa5, sizeof s1);
            memset(s2, 0x5a, sizeof s2);
            htp_kernels_set_portable(0);
            htp_fa_block_isums(k, q, nbk, s1);
            htp_kernels_set_portable(1);
            htp_fa_block_isums(k, q, nbk, s2);
            tally_case(&t, memcmp(s1, s2, sizeof(int32_t) * (size_t)nbk) == 0, "nbk %lld rep %d", (long long)nbk, rep);
            guarded_free(k, n);
            guarded_free(q, n);
        }
    }
    tally_report(&t);
}

int main(void) {
    htp_plat_on_fault(on_fault);
    test_fp16();
    test_qmm_quantize();
    test_q8k_quantize();
    for (size_t i = 0; i < sizeof q32_types / sizeof q32_types[0]; i++) {
        test_qmm_dot(&q32_types[i]);
    }
    for (size_t i = 0; i < sizeof q5_types / sizeof q5_types[0]; i++) {
        test_qmm_dot(&q5_types[i]);
    }
    for (size_t i = 0; i < sizeof unit_types / sizeof unit_types[0]; i++) {
        test_qmm_dot(&unit_types[i]);
    }
    for (size_t i = 0; i < sizeof kq_types / sizeof kq_types[0]; i++) {
        test_kq_dot(&kq_types[i]);
    }
    {
        static struct htp_codebooks cb;
        gen_codebooks(&cb);
        if (!htp_codebooks_ok(&cb)) {
            say("iq codebooks: the generated set fails htp_codebooks_ok");
            n_fail++;
        }
        static const uint32_t iq[] = {HTP_TYPE_IQ2_XXS, HTP_TYPE_IQ2_XS, HTP_TYPE_IQ2_S, HTP_TYPE_IQ3_XXS,
                                      HTP_TYPE_IQ3_S,   HTP_TYPE_IQ1_S,  HTP_TYPE_IQ1_M};
        for (size_t i = 0; i < sizeof iq / sizeof iq[0]; i++) {
            if (htp_iq_type_ok(iq[i])) {  // the types with kernels (contract/iq-tiles.h)
                test_iq_dot(iq[i], &cb);
            }
        }
    }
    for (size_t i = 0; i < sizeof q32_types / sizeof q32_types[0]; i++) {
        if (q32_types[i].type != HTP_TYPE_Q8_0) {  // int8 already: no HVX path to compare
            test_dequant32(&q32_types[i]);
        }
    }
    for (size_t i = 0; i < sizeof q5_types / sizeof q5_types[0]; i++) {
        test_dequant32(&q5_types[i]);
    }
    test_dequant32(&unit_types[2]);  // NVFP4 (Q1_0's and Q2_0's rows have no HVX path)
    for (size_t i = 0; i < sizeof kq_types / sizeof kq_types[0]; i++) {
        test_dequantk(&kq_types[i]);
    }
    test_fa_isums();
    say("%s", n_fail ? "test-hvx: FAILED" : "test-hvx: all HVX paths equal their portable C");
    return n_fail ? 1 : 0;
}
