// test-host-util.h: small helpers shared by the host runtime tests
// (test-host-*.c): operand and op builders, session opening, time; the checks
// are test-check.h's.

#ifndef TEST_HOST_UTIL_H
#define TEST_HOST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract/window.h"
#include "ggml.h"
#include "host/session-fence.h"
#include "host/session-submit.h"
#include "host/session-vmem.h"
#include "host/session.h"

#include "test-check.h"

// Quiet logger: errors and warnings only (profiles are logged at debug level).
static inline void test_log(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN || getenv("TEST_VERBOSE")) {
        fputs(text, stderr);
    }
}

static inline void test_init(void) {
    ggml_log_set(test_log, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline int64_t test_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

// A contiguous f32 operand of n0 x n1 elements at offset in buf.
// Window bytes buffer b takes in session s's VA window (the NPU's pages may
// be larger than the buffer's: contract/window.h).
static inline uint64_t test_window_bytes(const struct htp_session * s, const struct htp_buffer * b) {
    return htp_window_bytes(htp_buffer_size(b), htp_session_hw_info(s)->page_size);
}

static inline struct htp_op_tensor test_f32(struct htp_buffer * buf, uint64_t offset, int64_t n0, int64_t n1) {
    struct htp_op_tensor t = {0};
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

static inline struct htp_opnode test_op(uint32_t opcode) {
    struct htp_opnode op = {0};
    op.opcode            = opcode;
    return op;
}

static inline int test_enqueue_cpy(struct htp_session * s, const struct htp_op_tensor * src,
                                   const struct htp_op_tensor * dst) {
    struct htp_opnode op = test_op(HTP_OP_CPY);
    op.src[0]            = src;
    op.dst[0]            = dst;
    return htp_session_enqueue(s, &op);
}

// FENCE op on n = 1 slot: signal (1) or wait (0) for seq.
static inline int test_enqueue_fence(struct htp_session * s, const struct htp_op_tensor * fence, uint32_t seq,
                                     int signal) {
    struct htp_opnode op = test_op(HTP_OP_FENCE);
    op.src[0]            = fence;
    op.params[0]         = (int32_t)seq;
    op.params[1]         = signal;
    return htp_session_enqueue(s, &op);
}

static inline int test_open(struct htp_session ** s, uint32_t phys, uint32_t virt, uint32_t batch_ops,
                            uint32_t profile) {
    struct htp_session_params p;
    htp_session_params_default(&p, phys, virt);
    if (batch_ops) {
        p.batch_ops = batch_ops;
    }
    p.profile = profile;
    int rc    = htp_session_open(&p, s);
    if (rc) {
        printf("cannot open session HTP%u:%u: %s\n", phys, virt, htp_status_str(rc));
    }
    return rc;
}

// Open file descriptors of this process (leak checks).
static inline int test_count_fds(void) {
    DIR * d = opendir("/proc/self/fd");
    if (!d) {
        return -1;
    }
    int n = 0;
    while (readdir(d)) {
        n++;
    }
    closedir(d);
    return n;
}

#endif  // TEST_HOST_UTIL_H
