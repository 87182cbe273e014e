// test-host-faults: the NPU process dies or hangs under a session.
//  - kill -9 while a batch is blocked in a FENCE wait that is never signalled:
//    the pending flush returns an error within 1 s (measured), later calls
//    fail at once with an error naming the session, close releases
//    everything (open fds and buffers counted before and after; the ASan
//    build checks memory), and a new session starts a new NPU process;
//  - kill -9 of an idle NPU: the next control call fails at once;
//  - a stopped (hung) NPU: the control call gives up after its timeout and
//    the NPU is killed.

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-host-util.h"

static void test_kill_mid_batch(void) {
    printf("kill -9 of the NPU while a batch waits on a fence\n");
    int fds0 = test_count_fds();

    struct htp_session * s = NULL;
    CHECK_OR_RETURN(, test_open(&s, 0, 0, 0, 0) == 0, "open HTP0");
    struct htp_buffer * buf = NULL;
    htp_buffer_alloc(htp_session_map_target(s), 1 << 20, 0, &buf);
    struct htp_op_tensor x0 = test_f32(buf, 0, 256, 1), x1 = test_f32(buf, 4096, 256, 1);

    struct htp_fence_slot * slot = htp_session_fence_alloc(s, 1);
    struct htp_op_tensor    ft;
    htp_session_fence_tensor(s, slot, 1, &ft);
    CHECK(test_enqueue_cpy(s, &x0, &x1) == 0, "enqueue cpy");
    CHECK(test_enqueue_fence(s, &ft, htp_session_next_fence_seq(s), 0) == 0, "enqueue wait");
    CHECK(htp_session_flush_async(s) == 0, "flush");
    // A second batch behind it: two in flight when the NPU dies.
    CHECK(test_enqueue_cpy(s, &x1, &x0) == 0 && htp_session_flush_async(s) == 0, "flush 2");
    usleep(100 * 1000);  // let the NPU block in the wait
    CHECK(htp_session_in_flight(s) == 2, "%u batches in flight", htp_session_in_flight(s));

    pid_t pid = htp_npu_pid(htp_session_npu(s));
    kill(pid, SIGKILL);
    int64_t t0 = test_now_us();
    int     rc = htp_session_flush_sync(s);
    int64_t dt = test_now_us() - t0;
    printf("  pending flush failed after %lld us: %s\n", (long long)dt, htp_session_error(s));
    CHECK(rc == HTP_STATUS_NPU_DEAD, "pending flush returned %s", htp_status_str(rc));
    CHECK(dt < 1000000, "death noticed after %lld us", (long long)dt);
    CHECK(strstr(htp_session_error(s), "HTP0") != NULL, "error does not name the session: '%s'", htp_session_error(s));

    printf("  later calls fail at once\n");
    t0 = test_now_us();
    CHECK(test_enqueue_cpy(s, &x0, &x1) == HTP_STATUS_NPU_DEAD, "enqueue after death");
    CHECK(htp_session_flush_sync(s) == HTP_STATUS_NPU_DEAD, "flush after death");
    struct htp_vmem_info v;
    CHECK(htp_session_vmem_info(s, &v) == HTP_STATUS_NPU_DEAD, "vmem info after death");
    struct htp_buffer * other = NULL;
    htp_buffer_alloc(htp_session_map_target(s), 4096, 0, &other);
    CHECK(htp_session_map_buffer(s, other) == HTP_STATUS_NPU_DEAD, "map after death");
    CHECK(htp_session_fence_wait(s, slot, 1, 1000000, NULL) == HTP_STATUS_NPU_DEAD, "fence wait after death");
    dt = test_now_us() - t0;
    CHECK(dt < 100000, "calls on a dead NPU took %lld us", (long long)dt);

    printf("  close releases everything\n");
    htp_buffer_unref(other);
    htp_buffer_unref(buf);
    htp_session_close(s);
    int fds1 = test_count_fds();
    CHECK(fds1 == fds0, "open fds %d before, %d after", fds0, fds1);
    size_t n_bufs = 1, n_bytes = 1;
    htp_buffer_stats(&n_bufs, &n_bytes);
    CHECK(n_bufs == 0 && n_bytes == 0, "%zu buffers left", n_bufs);
    CHECK(kill(pid, 0) != 0 && errno == ESRCH, "NPU process %d not reaped", (int)pid);

    printf("  a new session starts a new NPU\n");
    CHECK(test_open(&s, 0, 0, 0, 0) == 0, "reopen");
    if (s) {
        CHECK(htp_npu_pid(htp_session_npu(s)) != pid, "same pid as the dead NPU");
        struct htp_opnode nop = test_op(HTP_OP_NOP);
        CHECK(htp_session_enqueue(s, &nop) == 0 && htp_session_flush_sync(s) == 0, "batch on the new NPU: %s",
              htp_session_error(s));
        htp_session_close(s);
    }
    CHECK(test_count_fds() == fds0, "fds after reopen / close");
}

static void test_kill_idle(void) {
    printf("kill -9 of an idle NPU: the next control call fails\n");
    struct htp_session * s = NULL;
    CHECK_OR_RETURN(, test_open(&s, 0, 0, 0, 0) == 0, "open HTP0");
    pid_t pid = htp_npu_pid(htp_session_npu(s));
    kill(pid, SIGKILL);
    usleep(20 * 1000);
    struct htp_vmem_info v;
    int64_t              t0 = test_now_us();
    int                  rc = htp_session_vmem_info(s, &v);
    int64_t              dt = test_now_us() - t0;
    CHECK(rc == HTP_STATUS_NPU_DEAD, "vmem info on a killed NPU: %s", htp_status_str(rc));
    CHECK(dt < 1000000, "took %lld us", (long long)dt);
    printf("  failed after %lld us: %s\n", (long long)dt, htp_session_error(s));
    htp_session_close(s);
}

static void test_hung(void) {
    printf("a stopped NPU: control call times out, the NPU is killed\n");
    struct htp_session * s = NULL;
    CHECK_OR_RETURN(, test_open(&s, 0, 0, 0, 0) == 0, "open HTP0");
    pid_t pid = htp_npu_pid(htp_session_npu(s));
    kill(pid, SIGSTOP);
    struct htp_vmem_info v;
    int64_t              t0 = test_now_us();
    int                  rc = htp_session_vmem_info(s, &v);
    int64_t              dt = test_now_us() - t0;
    CHECK(rc == HTP_STATUS_NPU_DEAD, "call to a stopped NPU: %s", htp_status_str(rc));
    CHECK(dt >= HTP_NPU_CALL_TIMEOUT_MS * 1000 && dt < (HTP_NPU_CALL_TIMEOUT_MS + 1000) * 1000, "gave up after %lld us",
          (long long)dt);
    printf("  gave up after %lld ms: %s\n", (long long)dt / 1000, htp_session_error(s));
    htp_session_close(s);
    CHECK(kill(pid, 0) != 0 && errno == ESRCH, "hung NPU %d not killed and reaped", (int)pid);
}

int main(void) {
    test_init();
    test_kill_mid_batch();
    test_kill_idle();
    test_hung();
    return test_exit_code("test-host-faults");
}
