// test-host-units: the host pieces that need no NPU process, in one process:
// buffer sizing and guard page, op batch tensor dedup (by key and by buffer +
// offset + shape), buffer table and largest-first sort, fit checks (buffers,
// tensors, vmem budget), O(1) reset, and the fence slot allocator.

#include <stdio.h>
#include <string.h>

#include "host/buffer.h"
#include "host/fence.h"
#include "host/opbatch.h"

#include "test-check.h"

static struct htp_op_tensor f32(const void * key, struct htp_buffer * buf, uint64_t offset, int64_t n0, int64_t n1) {
    struct htp_op_tensor t = {0};
    t.key                  = key;
    t.buf                  = buf;
    t.offset               = offset;
    t.type                 = HTP_TYPE_F32;
    t.ne[0]                = n0;
    t.ne[1]                = n1;
    t.ne[2]                = 1;
    t.ne[3]                = 1;
    t.nb[0]                = 4;
    t.nb[1]                = 4 * n0;
    t.nb[2]                = 4 * n0 * n1;
    t.nb[3]                = t.nb[2];
    t.size                 = (uint64_t)t.nb[2];
    return t;
}

static struct htp_opnode op2(uint32_t code, const struct htp_op_tensor * a, const struct htp_op_tensor * d) {
    struct htp_opnode op = {0};
    op.opcode            = code;
    op.src[0]            = a;
    op.dst[0]            = d;
    return op;
}

static void test_buffer(void) {
    printf("buffer: size rounding, guard page, zero fill, stats\n");
    size_t n0, b0;
    htp_buffer_stats(&n0, &b0);
    struct htp_buffer * b = NULL;
    CHECK(htp_buffer_alloc(NULL, 5000, 0, &b) == 0, "alloc");
    CHECK(htp_buffer_usable(b) == 8192, "usable %zu", htp_buffer_usable(b));
    CHECK(htp_buffer_size(b) == 8192 + HTP_PAGE_SIZE, "size %zu", htp_buffer_size(b));
    CHECK(htp_buffer_fd(b) >= 0, "fd");
    uint8_t * p = htp_buffer_base(b);
    int       z = 1;
    for (size_t i = 0; i < htp_buffer_usable(b); i++) {
        z &= p[i] == 0;
    }
    CHECK(z, "not zero-filled");
    memset(p, 0xab, htp_buffer_usable(b));
    size_t n1, b1;
    htp_buffer_stats(&n1, &b1);
    CHECK(n1 == n0 + 1 && b1 == b0 + htp_buffer_size(b), "stats");
    CHECK(htp_buffer_set_extended(b, true) == 0 && (htp_buffer_flags(b) & HTP_BUFFER_EXTENDED), "set extended");
    CHECK(htp_buffer_desc_flags(b, NULL) == HTP_BUF_EXTENDED, "extended desc flags");
    htp_buffer_ref(b);
    htp_buffer_unref(b);
    htp_buffer_stats(&n1, &b1);
    CHECK(n1 == n0 + 1, "unref of a second reference freed it");
    htp_buffer_unref(b);
    htp_buffer_stats(&n1, &b1);
    CHECK(n1 == n0 && b1 == b0, "last unref did not free");
    CHECK(htp_buffer_alloc(NULL, 0, 0, &b) != 0, "zero-size alloc accepted");
    CHECK(htp_buffer_alloc(NULL, 10, HTP_BUFFER_PINNED | HTP_BUFFER_EXTENDED, &b) != 0, "pinned+extended accepted");
}

static void test_opbatch(void) {
    printf("opbatch: dedup, buffer table, sort, fits, reset\n");
    struct htp_buffer *small = NULL, *big = NULL, *mid = NULL;
    htp_buffer_alloc(NULL, 1 << 16, 0, &small);
    htp_buffer_alloc(NULL, 1 << 20, 0, &big);
    htp_buffer_alloc(NULL, 1 << 18, 0, &mid);

    struct htp_opbatch b;
    // vmem budget: small + big fit, all three do not.
    uint64_t budget = htp_buffer_size(small) + htp_buffer_size(big);
    CHECK(htp_opbatch_init(&b, NULL, 4, budget, HTP_PAGE_SIZE) == 0, "init");
    CHECK(b.max_tensors == 4 * 4 + HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS, "max tensors %u", b.max_tensors);

    int                  k1, k2, k3;
    struct htp_op_tensor a  = f32(&k1, small, 0, 16, 4);
    struct htp_op_tensor a2 = f32(&k2, small, 0, 16, 4);    // other key, same bytes and shape: dedup by data
    struct htp_op_tensor a3 = f32(&k3, small, 0, 64, 1);    // same bytes, other shape: its own descriptor
    struct htp_op_tensor d  = f32(NULL, big, 4096, 16, 4);  // no key: dedup by data only
    struct htp_op_tensor d2 = f32(NULL, big, 4096, 16, 4);

    struct htp_opnode o1 = op2(HTP_OP_CPY, &a, &d);
    struct htp_opnode o2 = op2(HTP_OP_CPY, &a2, &d2);
    struct htp_opnode o3 = op2(HTP_OP_CPY, &a3, &d);
    CHECK(htp_opbatch_fits(&b, &o1), "o1 fits");
    CHECK(htp_opbatch_add(&b, &o1) == 0, "add o1");
    CHECK(htp_opbatch_add(&b, &o2) == 0, "add o2");
    CHECK(htp_opbatch_add(&b, &o3) == 0, "add o3");
    CHECK(b.n_ops == 3, "n_ops %u", b.n_ops);
    CHECK(b.n_tensors == 3, "n_tensors %u (want 3: a, d, a3)", b.n_tensors);
    CHECK(b.n_bufs == 2, "n_bufs %u", b.n_bufs);
    CHECK(b.ops[0].src[0] == b.ops[1].src[0] && b.ops[0].dst[0] == b.ops[1].dst[0], "dedup by data");
    CHECK(b.ops[2].src[0] != b.ops[0].src[0] && b.ops[2].dst[0] == b.ops[0].dst[0], "shape decides");
    CHECK(b.ops[0].src[1] == HTP_NO_TENSOR && b.ops[0].dst[1] == HTP_NO_TENSOR, "unused operands");
    CHECK(b.vmem == budget, "vmem %llu", (unsigned long long)b.vmem);

    // A third buffer busts the vmem budget.
    struct htp_op_tensor m  = f32(NULL, mid, 0, 8, 8);
    struct htp_opnode    o4 = op2(HTP_OP_CPY, &a, &m);
    CHECK(!htp_opbatch_fits(&b, &o4), "vmem budget not enforced");
    // An op on buffers already in the batch fits.
    CHECK(htp_opbatch_fits(&b, &o2), "known buffers refused");

    // Sort: small was added first, big second; after sorting big is bi 0.
    uint16_t ti_a = b.ops[0].src[0], ti_d = b.ops[0].dst[0];
    CHECK(b.tensors[ti_a].bi == 0 && b.tensors[ti_d].bi == 1, "insertion order");
    htp_opbatch_sort_buffers(&b);
    CHECK(b.bufs[0].size == htp_buffer_size(big) && b.bufs[1].size == htp_buffer_size(small), "sorted largest first");
    CHECK(b.buf_ptrs[0] == big && b.buf_ptrs[1] == small, "buffer pointers follow");
    CHECK(b.tensors[ti_a].bi == 1 && b.tensors[ti_d].bi == 0, "tensor bi remapped");
    CHECK(b.tensors[ti_d].data == 4096, "offset kept");

    // Fill up the op count.
    CHECK(htp_opbatch_add(&b, &o1) == 0 && htp_opbatch_full(&b), "full at 4");

    // Reset forgets everything, including dedup entries.
    htp_opbatch_reset(&b);
    CHECK(htp_opbatch_empty(&b) && b.n_tensors == 0 && b.n_bufs == 0 && b.vmem == 0, "reset");
    CHECK(htp_opbatch_add(&b, &o4) == 0, "add after reset");
    CHECK(b.n_tensors == 2 && b.n_bufs == 2, "fresh tables after reset: %u tensors %u bufs", b.n_tensors, b.n_bufs);

    // Buffer count limit: HTP_OP_MAX_BUFS distinct buffers, then no more.
    htp_opbatch_free(&b);
    CHECK(htp_opbatch_init(&b, NULL, 64, ~0ull, HTP_PAGE_SIZE) == 0, "init 2");
    struct htp_buffer *  many[HTP_OP_MAX_BUFS + 1];
    struct htp_op_tensor mt[HTP_OP_MAX_BUFS + 1];
    for (int i = 0; i <= HTP_OP_MAX_BUFS; i++) {
        htp_buffer_alloc(NULL, 4096, 0, &many[i]);
        mt[i] = f32(NULL, many[i], 0, 4, 1);
    }
    for (int i = 0; i < HTP_OP_MAX_BUFS; i += 2) {
        struct htp_opnode o = op2(HTP_OP_CPY, &mt[i], &mt[i + 1]);
        CHECK(htp_opbatch_fits(&b, &o), "buffers %d,%d fit", i, i + 1);
        htp_opbatch_add(&b, &o);
    }
    struct htp_opnode ox = op2(HTP_OP_CPY, &mt[0], &mt[HTP_OP_MAX_BUFS]);
    CHECK(!htp_opbatch_fits(&b, &ox), "17th buffer accepted");
    struct htp_opnode oy = op2(HTP_OP_CPY, &mt[0], &mt[1]);
    CHECK(htp_opbatch_fits(&b, &oy), "known buffers refused at the limit");
    struct htp_op_tensor nobuf = f32(NULL, NULL, 0, 4, 1);
    struct htp_opnode    oz    = op2(HTP_OP_CPY, &nobuf, &mt[0]);
    CHECK(htp_opbatch_add(&b, &oz) != 0, "operand without buffer accepted");
    for (int i = 0; i <= HTP_OP_MAX_BUFS; i++) {
        htp_buffer_unref(many[i]);
    }
    htp_opbatch_free(&b);

    // Tensor table limit: 1 op -> 16 tensors max; 10 distinct inputs + 2 outputs fit once.
    CHECK(htp_opbatch_init(&b, NULL, 1, ~0ull, HTP_PAGE_SIZE) == 0, "init 3");
    struct htp_op_tensor ts[16];
    struct htp_opnode    big_op = {.opcode = HTP_OP_ADD};
    for (int i = 0; i < 12; i++) {
        ts[i] = f32(NULL, big, (uint64_t)i * 4096, 4, 1);
    }
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        big_op.src[i] = &ts[i];
    }
    big_op.dst[0] = &ts[10];
    big_op.dst[1] = &ts[11];
    CHECK(htp_opbatch_fits(&b, &big_op), "12 operands fit an empty 1-op batch");
    htp_opbatch_add(&b, &big_op);
    CHECK(b.n_tensors == 12, "12 tensors");
    htp_opbatch_free(&b);

    htp_buffer_unref(small);
    htp_buffer_unref(big);
    htp_buffer_unref(mid);
}

static void test_fences(void) {
    printf("fence pool: runs, reuse, exhaustion, signal / reached with wrap\n");
    static uint8_t        mem[200 * HTP_FENCE_SLOT_SIZE] __attribute__((aligned(64)));
    struct htp_fence_pool pool;
    CHECK(htp_fence_pool_init(&pool, mem, 200) == 0, "init");
    memset(mem, 0xff, sizeof mem);
    struct htp_fence_slot * s1 = htp_fence_alloc(&pool, 1);
    struct htp_fence_slot * s4 = htp_fence_alloc(&pool, 4);
    CHECK(s1 == (void *)mem && s4 == (void *)(mem + 64), "first fit %p %p", (void *)s1, (void *)s4);
    CHECK(s4[3].seq == 0 && s4[3].status == 0, "run not zeroed");
    htp_fence_release(&pool, s1, 1);
    struct htp_fence_slot * s2 = htp_fence_alloc(&pool, 2);
    CHECK(s2 == (void *)(mem + 5 * 64), "a 2-run must skip the 1-slot hole, got slot %ld",
          (long)(((uint8_t *)s2 - mem) / 64));
    struct htp_fence_slot * s1b = htp_fence_alloc(&pool, 1);
    CHECK(s1b == (void *)mem, "freed slot reused");
    CHECK(htp_fence_alloc(&pool, 194) == NULL, "more than free accepted");
    struct htp_fence_slot * rest = htp_fence_alloc(&pool, 193);
    CHECK(rest != NULL && pool.n_used == 200, "exact fill");
    CHECK(htp_fence_alloc(&pool, 1) == NULL, "alloc from a full pool");
    htp_fence_release(&pool, s4, 4);
    CHECK(htp_fence_alloc(&pool, 4) == s4, "run reused");

    CHECK(!htp_fence_reached(s1b, 1), "zeroed slot reached 1");
    htp_fence_signal(s1b, 5, HTP_STATUS_INTERNAL_ERR);
    CHECK(htp_fence_reached(s1b, 5) && htp_fence_reached(s1b, 4) && !htp_fence_reached(s1b, 6), "reached");
    CHECK(htp_fence_status(s1b) == HTP_STATUS_INTERNAL_ERR, "status");
    htp_fence_signal(s1b, 2, 0);  // after wrap: 0xfffffffe < 2
    CHECK(htp_fence_reached(s1b, 0xfffffffeu), "wrap-around compare");
    htp_fence_pool_free(&pool);
}

int main(void) {
    test_buffer();
    test_opbatch();
    test_fences();
    return test_exit_code("test-host-units");
}
