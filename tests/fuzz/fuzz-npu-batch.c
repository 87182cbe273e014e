// fuzz-npu-batch: one op batch through the NPU's validation and execution
// (htp_batch_process, src/npu/batch.c), in-process, the way a session's queue
// reader runs it, over buffers that each end in a PROT_NONE guard page.
//
// Feeds: the request's counts, slot and traces; the buffer table (sizes,
// sometimes a wrong fd or size); tensors (every type, shapes, contiguous,
// permuted, padded, broadcast, tiled or raw strides, placed inside their
// buffer or not); ops (every op code, fences and MDEV_GROUP included, operand
// indices, params); then tensor data. Fields are mostly snapped to valid
// values (an index in range, a tensor that fits its buffer) so that inputs
// reach the op checks and kernels rather than dying in the first loop of
// validation; a few encodings keep the raw value so the refusals stay covered.
//
// Must never: touch memory outside a mapped buffer, the slot, the scratch
// area or its own tables (the guard pages fault, ASan sees the heap), hit
// undefined behaviour, leak, hang (fence waits are bounded by a 0 or 1 ms
// timeout), or answer inconsistently (seq and counts echoed, n_done <= n_ops,
// all ops done when the batch succeeded, a status of the protocol's enum).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "contract/op-call.h"
#include "contract/tiled.h"
#include "contract/type-traits.h"
#include "npu/batch.h"
#include "npu/ops/op-families.h"
#include "npu/pool.h"
#include "fuzz-input.h"

#define PAGE      ((uint64_t)HTP_PAGE_SIZE)
#define N_BUFS    4   // buffers mapped in the fake session
#define MAX_PAGES 16  // usable pages of one buffer
#define MAX_T     24  // tensors of one batch
#define MAX_O     12  // ops of one batch
#define MAX_TR    8   // trace events per thread
#define DEPTH     2
#define POOL_N    3  // workers of the real pool some inputs run on
#define VTCM_MAX  (256 * 1024)

// --- the fake session: buffers, map table, slots, scratch ---

struct region {
    uint8_t * base;  // [guard][MAX_PAGES usable][guard]: the buffer is the tail of the usable part
    uint8_t * addr;  // this input's buffer start
    uint64_t  pages;
};

static struct region        bufs[N_BUFS];
static struct htp_map_entry maps[N_BUFS];
static uint8_t *            slot_area;  // ends at a guard page
static uint64_t             slot_area_size;
static uint8_t *            vtcm_area;  // ends at a guard page
static struct htp_batch     batch;
static struct htp_pool      pool;
static _Atomic uint32_t     cancel;

static int lookup(void * arg, int32_t fd, struct htp_map_entry * out) {
    (void)arg;
    for (int i = 0; i < N_BUFS; i++) {
        if (maps[i].fd == fd && maps[i].addr != NULL) {
            *out = maps[i];
            return HTP_STATUS_OK;
        }
    }
    return HTP_STATUS_INVAL_PARAMS;
}

// Anonymous memory whose last page is inaccessible; returns the usable start.
static uint8_t * guarded(uint64_t usable) {
    uint8_t * p = mmap(NULL, usable + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + usable, PAGE, PROT_NONE) != 0) {
        abort();
    }
    return p;
}

static void setup(void) {
    for (int i = 0; i < N_BUFS; i++) {
        // A leading guard too: the unused head of a region is made
        // inaccessible per input, so a buffer has a guard on both sides.
        bufs[i].base = guarded((MAX_PAGES + 1) * PAGE) + PAGE;
        mprotect(bufs[i].base - PAGE, PAGE, PROT_NONE);
    }
    slot_area_size = htp_slot_size(MAX_O, HTP_MAX_NTHREADS, MAX_TR) * DEPTH + PAGE;
    slot_area_size = (slot_area_size + PAGE - 1) / PAGE * PAGE;
    slot_area      = guarded(slot_area_size);
    vtcm_area      = guarded(VTCM_MAX);
    if (htp_batch_init(&batch) != HTP_STATUS_OK || htp_pool_init(&pool, POOL_N) != HTP_STATUS_OK) {
        abort();
    }
}

// Buffer i gets `pages` usable pages ending at its region's trailing guard
// page (the map entry counts that page, as the real window does); the pages
// before it in the region become inaccessible.
static void place_buffer(int i, uint64_t pages) {
    struct region * g = &bufs[i];
    uint8_t *       a = g->base + (MAX_PAGES - pages) * PAGE;
    if (g->addr != a) {
        mprotect(g->base, (MAX_PAGES - pages) * PAGE, PROT_NONE);
        mprotect(a, pages * PAGE, PROT_READ | PROT_WRITE);
    }
    memset(a, 0, pages * PAGE);
    g->addr  = a;
    g->pages = pages;
    maps[i]  = (struct htp_map_entry){.fd = 100 + i, .flags = 0, .size = (pages + 1) * PAGE, .addr = a};
}

// --- descriptor decoding ---

static const uint32_t types[] = {
    HTP_TYPE_F32,  HTP_TYPE_F32,  HTP_TYPE_F16,  HTP_TYPE_F16,    HTP_TYPE_BF16,      HTP_TYPE_Q4_0,  HTP_TYPE_Q4_1,
    HTP_TYPE_Q8_0, HTP_TYPE_Q4_K, HTP_TYPE_Q5_K, HTP_TYPE_Q6_K,   HTP_TYPE_IQ4_NL,    HTP_TYPE_MXFP4, HTP_TYPE_I8,
    HTP_TYPE_I16,  HTP_TYPE_I32,  HTP_TYPE_I64,  5 /* unknown */, 1000 /* unknown */,
};
#define N_TYPES (sizeof types / sizeof types[0])

static int64_t dim0(uint8_t b, int64_t blck) {
    static const int64_t big[8] = {0, 128, 256, 512, 1024, 96, 1, 2};
    if (b >= 0xf8) {
        return blck > 1 ? blck * (b & 3) : big[b & 7];
    }
    return blck > 1 ? blck * (1 + b % 4) : 1 + b % 64;
}

static int64_t dim1(uint8_t b) {
    static const int64_t big[8] = {0, 32, 64, 128, 256, 17, 33, 1};
    return b >= 0xf0 ? big[b & 7] : 1 + b % 16;
}

static int64_t dim23(uint8_t b) {
    return b >= 0xfc ? (b & 1 ? 0 : 7) : 1 + b % 4;
}

static void contiguous(struct htp_tensor * t, int64_t tsz, int64_t blck) {
    t->nb[0] = tsz;
    t->nb[1] = tsz * (t->ne[0] / blck);
    t->nb[2] = t->nb[1] * t->ne[1];
    t->nb[3] = t->nb[2] * t->ne[2];
}

// Tensor i of the batch; earlier tensors lend their shapes (ops want related shapes).
static void decode_tensor(struct rd * r, struct htp_tensor * ts, uint32_t i, uint32_t n_bufs) {
    struct htp_tensor * t = &ts[i];
    memset(t, 0, sizeof(*t));
    const uint8_t tb = u8(r), fb = u8(r), pb = u8(r);
    t->type                           = types[tb % N_TYPES];
    const struct htp_type_traits * tt = htp_type_traits(t->type);
    const int64_t                  bs = tt ? tt->blck_size : 1, tsz = tt ? tt->type_size : 4;

    if (fb & 0x80) {
        // A run of fence slots.
        t->type  = HTP_TYPE_I8;
        t->flags = HTP_TENSOR_FENCE;
        t->ne[0] = HTP_FENCE_SLOT_SIZE;
        t->ne[1] = 1 + (fb & 3);
        t->ne[2] = t->ne[3] = 1;
        contiguous(t, 1, 1);
    } else {
        // Shape: fresh, or another tensor's (as is, transposed, one dim changed).
        const int mode = fb & 3;
        if (mode == 0 || i == 0) {
            t->ne[0] = dim0(u8(r), bs);
            t->ne[1] = dim1(u8(r));
            t->ne[2] = dim23(u8(r));
            t->ne[3] = dim23(u8(r));
        } else {
            memcpy(t->ne, ts[u8(r) % i].ne, sizeof(t->ne));
            if (mode == 2) {
                int64_t x = t->ne[0];
                t->ne[0]  = t->ne[1];
                t->ne[1]  = x;
            } else if (mode == 3) {
                const uint8_t d = u8(r);
                t->ne[d & 3]    = (d & 3) == 0 ? dim0(u8(r), bs) : (d & 3) == 1 ? dim1(u8(r)) : dim23(u8(r));
            }
        }
        // Strides.
        contiguous(t, tsz, bs);
        const int smode = (fb >> 2) & 7;
        if (smode == 3) {
            // A permuted view of contiguous storage (ggml_permute / transpose).
            static const int pairs[4][2] = {{0, 1}, {1, 2}, {2, 3}, {1, 3}};
            const int *      pr          = pairs[u8(r) & 3];
            int64_t          x           = t->ne[pr[0]];
            t->ne[pr[0]]                 = t->ne[pr[1]];
            t->ne[pr[1]]                 = x;
            x                            = t->nb[pr[0]];
            t->nb[pr[0]]                 = t->nb[pr[1]];
            t->nb[pr[1]]                 = x;
        } else if (smode == 4) {
            // Padded rows.
            t->nb[1] += tsz * (1 + u8(r) % 8);
            t->nb[2] = t->nb[1] * t->ne[1];
            t->nb[3] = t->nb[2] * t->ne[2];
        } else if (smode == 5) {
            // Repacked weights, with tiled.h's strides.
            const struct htp_tile_format * f = htp_tile_format(t->type);
            if (f != NULL && t->ne[0] % f->blck_size == 0) {
                htp_tiled_strides(f, t->ne, t->nb);
                t->flags |= HTP_TENSOR_TILED;
            }
        } else if (smode == 6) {
            t->nb[1 + u8(r) % 3] = 0;  // broadcast along a dimension
        } else if (smode == 7) {
            for (int k = 0; k < HTP_OP_MAX_DIMS; k++) {
                t->nb[k] = (int16_t)u16(r);
            }
        }
        if (fb & 0x40) {
            t->flags |= HTP_TENSOR_WEIGHT;
        }
        if ((fb & 0x60) == 0x60) {
            t->flags |= 1u << (u8(r) & 7);  // any flag bit, known or not
        }
    }

    // Placement: a buffer in range, an offset that keeps the tensor inside it
    // (aligned as asked), or a raw offset.
    t->bi                 = n_bufs ? (uint16_t)((pb & 15) % n_bufs) : 0;
    const uint16_t off    = u16(r);
    uint64_t       extent = 0;
    const uint64_t usable = t->bi < N_BUFS && bufs[t->bi].addr ? bufs[t->bi].pages * PAGE : 0;
    if (pb & 0x80) {
        t->data = (pb & 0x40) ? (uint64_t)off * PAGE : off;
        if ((pb & 0x60) == 0x60) {
            t->bi = (uint16_t)(n_bufs + (pb & 1));  // past the table
        }
    } else if (htp_tensor_extent(t, &extent) == HTP_STATUS_OK && extent <= usable) {
        static const uint64_t align[4] = {1, 4, 64, 128};
        const uint64_t        a        = (t->flags & HTP_TENSOR_FENCE) ? 64 : align[(pb >> 4) & 3];
        const uint64_t        room     = usable - extent;
        uint64_t              o        = (pb & 0x40) ? room : off % (room + 1);  // against the guard page, or anywhere
        t->data                        = o / a * a;
    }
    t->size = extent;
}

static uint16_t operand(struct rd * r, uint32_t n_tensors) {
    const uint8_t b = u8(r);
    if (b == 0xff) {
        return HTP_NO_TENSOR;
    }
    if (b == 0xfe || n_tensors == 0) {
        return (uint16_t)(n_tensors + (u8(r) & 3));  // out of range
    }
    return (uint16_t)(b % n_tensors);
}

static const float fparams[16] = {0.0f,   1.0f,  -1.0f, 0.5f,  2.0f,   1e-5f, 1e-6f, 10000.0f,
                                  0.125f, -0.5f, 3.0f,  1e30f, -1e30f, 8.0f,  64.0f, 0.0625f};

static void decode_op(struct rd * r, struct htp_op_desc * op, uint32_t n_tensors) {
    memset(op, 0, sizeof(*op));
    const uint8_t ob = u8(r);
    op->opcode       = ob == 0xff ? u32(r) : ob % (HTP_OP_COUNT + 1);
    const uint8_t cb = u8(r);
    op->flags        = cb == 0xff ? 1 : 0;
    for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
        op->src[k] = HTP_NO_TENSOR;
    }
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) {
        op->dst[k] = HTP_NO_TENSOR;
    }
    const int n_src = (cb & 15) % (HTP_OP_MAX_INPUTS + 1), n_dst = (cb >> 4) % (HTP_OP_MAX_OUTPUTS + 1);
    for (int k = 0; k < n_src; k++) {
        op->src[k] = operand(r, n_tensors);
    }
    for (int k = 0; k < n_dst; k++) {
        op->dst[k] = operand(r, n_tensors);
    }
    // Params: small integers (modes, op ids, dims), floats of interest, raw words.
    const int n_par = u8(r) % (HTP_OP_PARAMS_SIZE / 4 + 1);
    for (int k = 0; k < n_par; k++) {
        const uint8_t kind = u8(r);
        switch (kind & 3) {
            case 0:
                op->params[k] = (int8_t)u8(r);
                break;
            case 1:
                memcpy(&op->params[k], &fparams[u8(r) & 15], sizeof(float));
                break;
            case 2:
                op->params[k] = (int32_t)u32(r);
                break;
            default:
                op->params[k] = u8(r);
                break;
        }
    }
}

// The slot layout's thread count, as batch.c derives it from the environment.
static uint32_t layout_threads(const struct htp_batch_env * env) {
    uint32_t n = env->n_threads;
    if (env->pool != NULL && n > env->pool->n_threads) {
        n = env->pool->n_threads;
    }
    n = n > HTP_MAX_NTHREADS ? HTP_MAX_NTHREADS : n;
    return n == 0 ? 1 : n;
}

// FUZZ_TRACE=1 prints each batch and its answer: for reading a crash or
// checking that a seed runs.
static void trace_batch(const struct htp_opbatch_req * q, const struct htp_buf_desc * bd, const struct htp_tensor * ts,
                        const struct htp_op_desc * ops) {
    fprintf(stderr, "batch: slot %u, %u bufs, %u tensors, %u ops, %u traces\n", q->slot, q->n_bufs, q->n_tensors,
            q->n_ops, q->n_traces);
    for (uint32_t i = 0; i < q->n_bufs; i++) {
        fprintf(stderr, "  buf %u: fd %d size %llu\n", i, bd[i].fd, (unsigned long long)bd[i].size);
    }
    for (uint32_t i = 0; i < q->n_tensors; i++) {
        const struct htp_tensor * t = &ts[i];
        fprintf(stderr, "  t%u: type %u flags %#x buf %u +%llu ne [%lld %lld %lld %lld] nb [%lld %lld %lld %lld]\n", i,
                t->type, t->flags, t->bi, (unsigned long long)t->data, (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], (long long)t->nb[0], (long long)t->nb[1], (long long)t->nb[2],
                (long long)t->nb[3]);
    }
    for (uint32_t i = 0; i < q->n_ops; i++) {
        const struct htp_op_desc * o = &ops[i];
        fprintf(stderr, "  op%u: %u flags %u src", i, o->opcode, o->flags);
        for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
            fprintf(stderr, " %d", o->src[k] == HTP_NO_TENSOR ? -1 : o->src[k]);
        }
        fprintf(stderr, " dst %d %d params", o->dst[0] == HTP_NO_TENSOR ? -1 : o->dst[0],
                o->dst[1] == HTP_NO_TENSOR ? -1 : o->dst[1]);
        for (int k = 0; k < 6; k++) {
            fprintf(stderr, " %d", o->params[k]);
        }
        fprintf(stderr, "\n");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    struct rd r = {data, size};

    // Header: counts, threads, slot, profile, fences.
    const uint8_t h0 = u8(&r), h1 = u8(&r), h2 = u8(&r), h3 = u8(&r), h4 = u8(&r), h5 = u8(&r);
    uint32_t      n_bufs    = (h0 & 0xe0) == 0xe0 ? (h0 & 0x1f) : h0 % (N_BUFS + 1);
    uint32_t      n_tensors = h1 % (MAX_T + 1);
    uint32_t      n_ops     = h2 % (MAX_O + 1);
    uint32_t      n_traces  = h3 % (MAX_TR + 1);

    struct htp_batch_env env = {
        .lookup    = lookup,
        .depth     = DEPTH,
        .n_threads = 1 + h4 % 4,
        .pool      = (h4 & 0x80) ? &pool : NULL,
        .prof_mode = (h3 >> 4) & 3,
        .cancel    = &cancel,
    };
    const uint32_t slot = ((h4 >> 4) & 7) == 7 ? DEPTH : (h4 >> 4) & 1;
    atomic_store(&cancel, (h5 & 0x80) ? 1 : 0);
    htp_ops_set_fence_timeout_ms(h5 & 1);

    // Scratch: the op's budget ends at a guard page.
    static const size_t vtcm_sizes[4] = {VTCM_MAX, 64 * 1024, 4096, 0};
    env.vtcm_size                     = vtcm_sizes[(h5 >> 1) & 3];
    env.vtcm                          = vtcm_area + VTCM_MAX - env.vtcm_size;

    // Slot size: room for this batch (rounded as the host does, or exact), one entry short, or the largest.
    const uint32_t         nth = layout_threads(&env);
    struct htp_slot_layout need =
        htp_slot_layout(n_bufs > HTP_OP_MAX_BUFS ? 0 : n_bufs, n_tensors, n_ops, nth, n_traces);
    const uint64_t most = (slot_area_size - PAGE) / DEPTH / 8 * 8;
    switch ((h5 >> 3) & 3) {
        case 0:
            env.slot_size = (need.end + 63) / 64 * 64;
            break;
        case 1:
            env.slot_size = need.end;
            break;
        case 2:
            env.slot_size = need.end >= 8 ? need.end - 8 : 0;
            break;
        default:
            env.slot_size = most;
            break;
    }
    if (env.slot_size > most) {
        env.slot_size = most;
    }
    env.slots = slot_area + (slot_area_size - PAGE) - env.slot_size * DEPTH;

    // Buffers: sizes, and descriptors that sometimes disagree with the mapping.
    struct htp_buf_desc bd[32];
    memset(maps, 0, sizeof(maps));
    for (uint32_t i = 0; i < N_BUFS; i++) {
        bufs[i].pages = 0;
    }
    for (uint32_t i = 0; i < n_bufs; i++) {
        const uint8_t b = u8(&r);
        const int     m = (int)(i % N_BUFS);
        if (i < N_BUFS) {
            place_buffer(m, 1 + b % MAX_PAGES);
        }
        bd[i] = (struct htp_buf_desc){.base = 0, .size = maps[m].size, .fd = maps[m].fd, .flags = 0};
        if (b & 0x80) {
            if (b & 0x10) {
                bd[i].fd = 999;
            } else {
                bd[i].size += PAGE;
            }
        }
    }

    static struct htp_tensor  tensors[MAX_T];
    static struct htp_op_desc ops[MAX_O];
    for (uint32_t i = 0; i < n_tensors; i++) {
        decode_tensor(&r, tensors, i, n_bufs < N_BUFS ? n_bufs : N_BUFS);
    }
    for (uint32_t i = 0; i < n_ops; i++) {
        decode_op(&r, &ops[i], n_tensors);
    }

    // The rest is tensor data, buffer after buffer.
    for (uint32_t i = 0; i < N_BUFS && r.n > 0; i++) {
        if (bufs[i].pages == 0) {
            continue;
        }
        const size_t n = r.n < bufs[i].pages * PAGE ? r.n : bufs[i].pages * PAGE;
        memcpy(bufs[i].addr, r.p, n);
        r.p += n;
        r.n -= n;
    }

    // Write the tables into the slot as the host would, the rest of it stale.
    const uint32_t wslot = slot < DEPTH ? slot : 0;
    uint8_t *      s     = env.slots + (uint64_t)wslot * env.slot_size;
    memset(s, 0xee, env.slot_size);
    struct htp_slot_layout l = htp_slot_layout(n_bufs, n_tensors, n_ops, nth, n_traces);
    if (n_bufs <= HTP_OP_MAX_BUFS && l.ops + sizeof(ops[0]) * n_ops <= env.slot_size) {
        memcpy(s + l.bufs, bd, sizeof(bd[0]) * n_bufs);
        memcpy(s + l.tensors, tensors, sizeof(tensors[0]) * n_tensors);
        memcpy(s + l.ops, ops, sizeof(ops[0]) * n_ops);
    }

    static uint64_t seq;
    seq++;
    const struct htp_opbatch_req req = {
        .seq       = seq,
        .order     = seq,
        .slot      = slot,
        .n_bufs    = n_bufs,
        .n_tensors = n_tensors,
        .n_ops     = n_ops,
        .n_traces  = n_traces,
    };
    if (getenv("FUZZ_TRACE") != NULL) {
        trace_batch(&req, bd, tensors, ops);
    }
    struct htp_opbatch_rsp rsp;
    const int              st = htp_batch_process(&batch, &env, &req, &rsp);
    if (getenv("FUZZ_TRACE") != NULL) {
        fprintf(stderr, "-> status %u, %u of %u ops done\n", rsp.status, rsp.n_done, rsp.n_ops);
    }

    // The answer must be one a host can trust.
    if (st != (int)rsp.status || rsp.seq != req.seq || rsp.n_ops != n_ops || rsp.n_done > rsp.n_ops ||
        rsp.status > HTP_STATUS_VERSION || (rsp.status == HTP_STATUS_OK && rsp.n_done != n_ops) ||
        rsp.n_traces > n_traces) {
        abort();
    }
    return 0;
}
