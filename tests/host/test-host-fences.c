// test-host-fences: fences between sessions and with the host.
//  - two sessions of one NPU (HTP0:0 signals, then HTP0:1 waits: sessions of
//    one NPU run batches in FIFO order, so the signal is pushed first);
//  - two NPU processes (HTP0 and HTP1): the waiter is pushed first and stays
//    blocked until the other process copies data and signals (CPY_FENCE); the
//    waiter then copies that data on, which checks the fence orders memory;
//  - the host waiting on a fence the NPU signals, the NPU waiting on a fence
//    the host signals, and a host wait running into its deadline.

#include <unistd.h>

#include "test-host-util.h"

static void fill(float * p, int n, float k) {
    for (int i = 0; i < n; i++) {
        p[i] = k + (float)i;
    }
}

static int same(const float * a, const float * b, int n) {
    for (int i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            return 0;
        }
    }
    return 1;
}

static void test_same_npu(void) {
    printf("two sessions of one NPU: HTP0 signals, HTP0:1 waits\n");
    struct htp_session *a = NULL, *b = NULL;
    CHECK_OR_RETURN(, test_open(&a, 0, 0, 0, 0) == 0 && test_open(&b, 0, 1, 0, 0) == 0, "open HTP0 and HTP0:1");
    struct htp_buffer * buf = NULL;
    htp_buffer_alloc(htp_session_map_target(a), 1 << 16, 0, &buf);
    float * base = (float *)htp_buffer_base(buf);
    fill(base, 256, 7.0f);

    struct htp_fence_slot * slot = htp_session_fence_alloc(a, 1);
    uint32_t                seq  = htp_session_next_fence_seq(a);
    struct htp_op_tensor    ft, x0 = test_f32(buf, 0, 256, 1), x1 = test_f32(buf, 4096, 256, 1),
                             x2 = test_f32(buf, 8192, 256, 1);
    htp_session_fence_tensor(a, slot, 1, &ft);

    // a: copy x0 -> x1, signal. b: wait, copy x1 -> x2.
    CHECK(test_enqueue_cpy(a, &x0, &x1) == 0 && test_enqueue_fence(a, &ft, seq, 1) == 0, "enqueue a");
    CHECK(htp_session_flush_async(a) == 0, "flush a");
    CHECK(test_enqueue_fence(b, &ft, seq, 0) == 0 && test_enqueue_cpy(b, &x1, &x2) == 0, "enqueue b");
    CHECK(htp_session_flush_sync(b) == 0, "b: %s", htp_session_error(b));
    CHECK(htp_session_flush_sync(a) == 0, "a: %s", htp_session_error(a));
    CHECK(htp_fence_reached(slot, seq) && htp_fence_status(slot) == HTP_STATUS_OK, "fence state");
    CHECK(same(base + 2048, base, 256), "data did not flow a -> b");

    htp_session_fence_free(a, slot, 1);
    htp_buffer_unref(buf);
    htp_session_close(b);
    htp_session_close(a);
}

static void test_two_npus(void) {
    printf("two NPU processes: HTP1 waits (pushed first), HTP0 copies and signals\n");
    struct htp_session *p0 = NULL, *p1 = NULL;
    CHECK_OR_RETURN(, test_open(&p0, 0, 0, 0, 0) == 0 && test_open(&p1, 1, 0, 0, 0) == 0, "open HTP0 and HTP1");
    CHECK(htp_npu_pid(htp_session_npu(p0)) != htp_npu_pid(htp_session_npu(p1)), "one process for two indices");
    struct htp_buffer * buf = NULL;
    htp_buffer_alloc(htp_session_map_target(p0), 1 << 16, 0, &buf);
    float * base = (float *)htp_buffer_base(buf);
    fill(base, 256, 3.0f);
    for (int i = 256; i < 3 * 1024; i++) {
        base[i] = -1.0f;
    }

    struct htp_fence_slot * slot = htp_session_fence_alloc(p0, 1);
    uint32_t                seq  = htp_session_next_fence_seq(p0);
    struct htp_op_tensor    ft, x0 = test_f32(buf, 0, 256, 1), x1 = test_f32(buf, 4096, 256, 1),
                             x2 = test_f32(buf, 8192, 256, 1);
    htp_session_fence_tensor(p0, slot, 1, &ft);

    // p1 first: wait, then copy x1 -> x2.
    CHECK(test_enqueue_fence(p1, &ft, seq, 0) == 0 && test_enqueue_cpy(p1, &x1, &x2) == 0, "enqueue p1");
    CHECK(htp_session_flush_async(p1) == 0, "flush p1");
    usleep(100 * 1000);
    CHECK(htp_session_in_flight(p1) == 1, "p1's batch is not in flight");
    CHECK(base[2048] == -1.0f, "p1 ran before the fence was signalled");

    // p0: copy x0 -> x1 and signal, in one CPY_FENCE.
    struct htp_opnode op = test_op(HTP_OP_CPY_FENCE);
    op.src[0]            = &x0;
    op.src[1]            = &ft;
    op.dst[0]            = &x1;
    op.params[0]         = (int32_t)seq;
    int64_t t0           = test_now_us();
    CHECK(htp_session_enqueue(p0, &op) == 0 && htp_session_flush_async(p0) == 0, "p0 CPY_FENCE");
    CHECK(htp_session_flush_sync(p1) == 0, "p1: %s", htp_session_error(p1));
    int64_t dt = test_now_us() - t0;
    CHECK(htp_session_flush_sync(p0) == 0, "p0: %s", htp_session_error(p0));
    CHECK(same(base + 1024, base, 256), "CPY_FENCE copy wrong");
    CHECK(same(base + 2048, base, 256), "p1 copied before seeing p0's data");
    printf("  p1 released %lld us after p0's push\n", (long long)dt);

    htp_session_fence_free(p0, slot, 1);
    htp_buffer_unref(buf);
    htp_session_close(p1);
    htp_session_close(p0);
}

static void test_host(void) {
    printf("host waits on an NPU signal; NPU waits on a host signal; host wait deadline\n");
    struct htp_session * s = NULL;
    CHECK_OR_RETURN(, test_open(&s, 0, 0, 0, 0) == 0, "open HTP0");
    struct htp_fence_slot * run = htp_session_fence_alloc(s, 2);  // a run of two: one per direction
    struct htp_op_tensor    f0, f1;
    htp_session_fence_tensor(s, &run[0], 1, &f0);
    htp_session_fence_tensor(s, &run[1], 1, &f1);

    // NPU waits for the host's signal on run[1], then signals run[0].
    uint32_t to_npu = htp_session_next_fence_seq(s), to_host = htp_session_next_fence_seq(s);
    CHECK(test_enqueue_fence(s, &f1, to_npu, 0) == 0 && test_enqueue_fence(s, &f0, to_host, 1) == 0, "enqueue");
    CHECK(htp_session_flush_async(s) == 0, "flush");
    uint32_t st = 99;
    int      rc = htp_session_fence_wait(s, &run[0], to_host, 50000, &st);
    CHECK(rc == HTP_STATUS_TIMEOUT, "signalled before the host released the NPU: %s", htp_status_str(rc));
    int64_t t0 = test_now_us();
    htp_fence_signal(&run[1], to_npu, HTP_STATUS_OK);
    rc         = htp_session_fence_wait(s, &run[0], to_host, 2000000, &st);
    int64_t dt = test_now_us() - t0;
    CHECK(rc == 0 && st == HTP_STATUS_OK, "host wait: %s status %u", htp_status_str(rc), st);
    printf("  host signal -> NPU wait -> NPU signal -> host wait: %lld us\n", (long long)dt);
    CHECK(htp_session_flush_sync(s) == 0, "batch: %s", htp_session_error(s));

    // A failure status travels too: the host signals a failure, the NPU's wait fails with it.
    uint32_t bad = htp_session_next_fence_seq(s);
    htp_fence_signal(&run[1], bad, HTP_STATUS_INTERNAL_ERR);
    CHECK(test_enqueue_fence(s, &f1, bad, 0) == 0, "enqueue");
    rc = htp_session_flush_sync(s);
    CHECK(rc == HTP_STATUS_INTERNAL_ERR, "a failed fence was waited on with %s", htp_status_str(rc));

    htp_session_fence_free(s, run, 2);
    htp_session_close(s);
}

int main(void) {
    test_init();
    test_same_npu();
    test_two_npus();
    test_host();
    return test_exit_code("test-host-fences");
}
