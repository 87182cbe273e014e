// test-host-mapping: map / unmap / clone / free sequences keep the NPU's VA
// window accounting exact (htp_vmem_info compared after every step with the
// bytes and mappings we expect), freeing a buffer unmaps it from every session
// that cloned it, closing a session unmaps its pinned buffer from the sessions
// that used its fences, and a descriptor overrunning into a guard page comes
// back as an NPU error (no hang).

#include "test-host-util.h"

static struct htp_session *s0, *s1;  // HTP0 and HTP0:1 (one NPU process)

struct expect {
    uint64_t used;
    uint32_t maps;
};

static struct expect state(struct htp_session * s) {
    struct htp_vmem_info v  = {0};
    int                  rc = htp_session_vmem_info(s, &v);
    CHECK(rc == 0, "%s vmem info: %s", htp_session_name(s), htp_status_str(rc));
    return (struct expect){v.used, v.n_maps};
}

static void expect_state(const char * step, struct htp_session * s, struct expect want) {
    struct expect got = state(s);
    CHECK(got.used == want.used && got.maps == want.maps, "%s: %s window used %llu maps %u, want %llu / %u", step,
          htp_session_name(s), (unsigned long long)got.used, got.maps, (unsigned long long)want.used, want.maps);
}

static int flush_cpy(struct htp_session * s, struct htp_buffer * from, struct htp_buffer * to) {
    struct htp_op_tensor a  = test_f32(from, 0, 256, 1);
    struct htp_op_tensor b  = test_f32(to, 4096, 256, 1);
    int                  rc = test_enqueue_cpy(s, &a, &b);
    return rc ? rc : htp_session_flush_sync(s);
}

int main(void) {
    test_init();
    CHECK_OR_RETURN(1, test_open(&s0, 0, 0, 0, 0) == 0 && test_open(&s1, 0, 1, 0, 0) == 0, "open HTP0 and HTP0:1");
    CHECK(htp_npu_pid(htp_session_npu(s0)) == htp_npu_pid(htp_session_npu(s1)), "HTP0 and HTP0:1 on two processes");
    struct expect e0 = state(s0), e1 = state(s1);
    printf("baseline: %s used %llu maps %u, %s used %llu maps %u\n", htp_session_name(s0), (unsigned long long)e0.used,
           e0.maps, htp_session_name(s1), (unsigned long long)e1.used, e1.maps);
    const struct expect base0 = e0, base1 = e1;

    struct htp_buffer *a = NULL, *b = NULL, *c = NULL;
    CHECK(htp_buffer_alloc(htp_session_map_target(s0), 3 << 20, 0, &a) == 0, "alloc a");
    CHECK(htp_buffer_alloc(htp_session_map_target(s0), 1 << 20, 0, &b) == 0, "alloc b");
    CHECK(htp_buffer_alloc(htp_session_map_target(s0), 200000, 0, &c) == 0, "alloc c");
    const uint64_t sa = test_window_bytes(s0, a), sb = test_window_bytes(s0, b), sc = test_window_bytes(s0, c);

    printf("lazy registration maps nothing\n");
    CHECK(htp_session_use_buffer(s0, a) == 0, "use a");
    expect_state("after use", s0, e0);

    printf("explicit map / unmap\n");
    CHECK(htp_session_map_buffer(s0, a) == 0, "map a");
    e0.used += sa, e0.maps++;
    expect_state("map a", s0, e0);
    CHECK(htp_session_map_buffer(s0, a) == 0, "map a again");
    expect_state("map a again (no-op)", s0, e0);
    CHECK(htp_session_unmap_buffer(s0, a) == 0, "unmap a");
    e0.used -= sa, e0.maps--;
    expect_state("unmap a", s0, e0);
    CHECK(!htp_buffer_is_mapped(a, htp_session_map_target(s0)), "a still marked mapped");

    printf("lazy mapping at flush (two buffers at once)\n");
    CHECK(flush_cpy(s0, b, c) == 0, "cpy b -> c in %s: %s", htp_session_name(s0), htp_session_error(s0));
    e0.used += sb + sc, e0.maps += 2;
    expect_state("flush b,c", s0, e0);
    CHECK(flush_cpy(s0, b, c) == 0, "second cpy");
    expect_state("second flush maps nothing new", s0, e0);

    printf("clone into a second session of the same NPU\n");
    CHECK(flush_cpy(s1, b, a) == 0, "cpy b -> a in %s: %s", htp_session_name(s1), htp_session_error(s1));
    e1.used += sb + sa, e1.maps += 2;
    expect_state("clone b,a into s1", s1, e1);
    expect_state("s0 unchanged by s1's clones", s0, e0);

    printf("free unmaps from the owner and every clone\n");
    htp_buffer_unref(b);
    e0.used -= sb, e0.maps--;
    e1.used -= sb, e1.maps--;
    expect_state("free b (s0)", s0, e0);
    expect_state("free b (s1)", s1, e1);
    htp_buffer_unref(a);  // mapped in s1 only
    e1.used -= sa, e1.maps--;
    expect_state("free a (s0)", s0, e0);
    expect_state("free a (s1)", s1, e1);

    printf("a fence of s1 used by s0 clones s1's pinned buffer; closing s1 unmaps it\n");
    struct htp_fence_slot * slot = htp_session_fence_alloc(s1, 1);
    struct htp_op_tensor    ft;
    htp_session_fence_tensor(s1, slot, 1, &ft);
    CHECK(test_enqueue_fence(s0, &ft, 1, 1) == 0 && htp_session_flush_sync(s0) == 0, "signal s1's fence from s0: %s",
          htp_session_error(s0));
    CHECK(htp_fence_reached(slot, 1), "fence not signalled");
    uint64_t sp = test_window_bytes(s0, htp_session_pinned(s1));
    e0.used += sp, e0.maps++;
    expect_state("s1's pinned buffer cloned into s0", s0, e0);
    htp_session_close(s1);
    s1 = NULL;
    e0.used -= sp, e0.maps--;
    expect_state("s1 closed", s0, e0);

    printf("a descriptor overrunning into the guard page is refused\n");
    struct htp_op_tensor src = test_f32(c, 0, 256, 1);
    struct htp_op_tensor dst = test_f32(c, htp_buffer_usable(c) - 512, 256, 1);  // 1 KiB: half in the guard page
    int64_t              t0  = test_now_us();
    int                  rc  = test_enqueue_cpy(s0, &src, &dst);
    if (rc == 0) {
        rc = htp_session_flush_sync(s0);
    }
    int64_t dt = test_now_us() - t0;
    CHECK(rc == HTP_STATUS_INVAL_PARAMS, "overrun answered %s", htp_status_str(rc));
    CHECK(dt < 1000000, "took %lld us", (long long)dt);
    CHECK(strstr(htp_session_error(s0), "HTP0") != NULL, "error does not name the session: '%s'",
          htp_session_error(s0));
    CHECK(htp_session_enqueue(s0, &(struct htp_opnode){.opcode = HTP_OP_NOP}) == HTP_STATUS_INVAL_PARAMS,
          "later enqueue not refused with the first error");
    printf("  refused in %lld us: %s\n", (long long)dt, htp_session_error(s0));
    expect_state("after the refusal", s0, e0);

    htp_buffer_unref(c);
    e0.used -= sc, e0.maps--;
    expect_state("free c", s0, e0);
    expect_state("back to the baseline", s0, base0);
    (void)base1;
    htp_session_close(s0);

    size_t n_bufs = 0, n_bytes = 0;
    htp_buffer_stats(&n_bufs, &n_bytes);
    CHECK(n_bufs == 0 && n_bytes == 0, "%zu buffers (%zu bytes) left", n_bufs, n_bytes);
    return test_exit_code("test-host-mapping");
}
