// test-host-batches: batches through a real htp-npu. NOP and CPY batches
// round-trip with their profile descriptors filled; a batch is replayed, in
// every slot of the queue, and refused for replay once anything it relied on
// moved; then every class of bad descriptor, pushed raw through the
// fault-injection hook, is refused with HTP_STATUS_INVAL_PARAMS and the next
// good batch on the same session runs.

#include <stdint.h>
#include <stdlib.h>

#include "test-host-util.h"

static struct htp_session * sess;
static struct htp_buffer *  buf;  // 1 MiB data buffer, mapped

// A raw slot image: bufs, tensors, ops, as the NPU reads them.
struct raw {
    struct htp_buf_desc bufs[HTP_OP_MAX_BUFS + 2];
    struct htp_tensor   tensors[8];
    struct htp_op_desc  ops[4];
    uint32_t            n_bufs, n_tensors, n_ops;
};

static struct htp_tensor raw_f32(uint16_t bi, uint64_t offset, int64_t n0, int64_t n1) {
    struct htp_tensor t = {0};
    t.data              = offset;
    t.type              = HTP_TYPE_F32;
    t.bi                = bi;
    t.ne[0]             = n0;
    t.ne[1]             = n1;
    t.ne[2]             = 1;
    t.ne[3]             = 1;
    t.nb[0]             = 4;
    t.nb[1]             = 4 * n0;
    t.nb[2]             = 4 * n0 * n1;
    t.nb[3]             = t.nb[2];
    t.size              = (uint64_t)t.nb[2];
    return t;
}

// A well-formed CPY of 256 floats from offset 0 to offset 4096 of buf.
static void raw_good(struct raw * r) {
    memset(r, 0, sizeof *r);
    r->n_bufs        = 1;
    r->bufs[0].base  = (uint64_t)(uintptr_t)htp_buffer_base(buf);
    r->bufs[0].size  = htp_buffer_size(buf);
    r->bufs[0].fd    = htp_buffer_fd(buf);
    r->n_tensors     = 2;
    r->tensors[0]    = raw_f32(0, 0, 256, 1);
    r->tensors[1]    = raw_f32(0, 4096, 256, 1);
    r->n_ops         = 1;
    r->ops[0].opcode = HTP_OP_CPY;
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        r->ops[0].src[i] = HTP_NO_TENSOR;
    }
    r->ops[0].src[0] = 0;
    r->ops[0].dst[0] = 1;
    r->ops[0].dst[1] = HTP_NO_TENSOR;
}

// Lay the tables out as a slot and push them raw, with the given counts.
static int raw_push(const struct raw * r, uint32_t n_bufs, uint32_t n_tensors, uint32_t n_ops,
                    struct htp_opbatch_rsp * rsp) {
    static uint8_t img[sizeof(struct raw)];
    uint64_t       n = 0;
    // Lay out the tables we have (never more than our arrays hold); the counts may claim more.
    uint32_t nb = r->n_bufs, nt = r->n_tensors, no = r->n_ops;
    memcpy(img + n, r->bufs, sizeof r->bufs[0] * nb);
    n += sizeof r->bufs[0] * nb;
    memcpy(img + n, r->tensors, sizeof r->tensors[0] * nt);
    n += sizeof r->tensors[0] * nt;
    memcpy(img + n, r->ops, sizeof r->ops[0] * no);
    n += sizeof r->ops[0] * no;
    return htp_session_push_raw(sess, img, n, n_bufs, n_tensors, n_ops, rsp);
}

// One good batch through the normal path: must run.
static int good_batch(void) {
    struct htp_op_tensor src = test_f32(buf, 8192, 64, 1);
    struct htp_op_tensor dst = test_f32(buf, 8192 + 4096, 64, 1);
    float *              s   = (float *)(htp_buffer_base(buf) + 8192);
    float *              d   = (float *)(htp_buffer_base(buf) + 8192 + 4096);
    static float         k   = 1.0f;
    k += 1.0f;
    for (int i = 0; i < 64; i++) {
        s[i] = k * (float)i;
        d[i] = -1.0f;
    }
    int rc = test_enqueue_cpy(sess, &src, &dst);
    if (rc == 0) {
        rc = htp_session_flush_sync(sess);
    }
    for (int i = 0; rc == 0 && i < 64; i++) {
        if (d[i] != k * (float)i) {
            return -1;
        }
    }
    return rc;
}

static void expect_refused(const char * what, const struct raw * r, uint32_t n_bufs, uint32_t n_tensors,
                           uint32_t n_ops) {
    struct htp_opbatch_rsp rsp = {0};
    int                    rc  = raw_push(r, n_bufs, n_tensors, n_ops, &rsp);
    CHECK(rc == 0, "%s: raw push failed: %s", what, htp_status_str(rc));
    CHECK(rsp.status == HTP_STATUS_INVAL_PARAMS, "%s: answered %s, want inval-params", what,
          htp_status_str((int)rsp.status));
    CHECK(rsp.n_done == 0, "%s: %u ops ran", what, rsp.n_done);
    int g = good_batch();
    CHECK(g == 0, "%s: the next good batch failed: %d (%s)", what, g, htp_session_error(sess));
    printf("  %-44s -> %s, next batch %s\n", what, htp_status_str((int)rsp.status), g == 0 ? "ok" : "FAILED");
}

static void test_round_trips(void) {
    printf("NOP batch round trip with profile\n");
    for (int i = 0; i < 3; i++) {
        struct htp_opnode op = test_op(HTP_OP_NOP);
        CHECK(htp_session_enqueue(sess, &op) == 0, "enqueue NOP");
    }
    CHECK(htp_session_flush_sync(sess) == 0, "NOP batch: %s", htp_session_error(sess));
    struct htp_opbatch_rsp       rsp;
    const struct htp_prof_desc * prof = NULL;
    uint32_t                     n    = 0;
    CHECK(htp_session_last_profile(sess, &rsp, &prof, &n) == 0, "no profile");
    CHECK(rsp.status == HTP_STATUS_OK && rsp.n_ops == 3 && rsp.n_done == 3 && rsp.seq == 1,
          "NOP rsp: status %u n_ops %u n_done %u seq %llu", rsp.status, rsp.n_ops, rsp.n_done,
          (unsigned long long)rsp.seq);
    CHECK(n == 3 && prof, "NOP profile entries %u", n);
    for (uint32_t i = 0; prof && i < n; i++) {
        CHECK(prof[i].opcode == HTP_OP_NOP && prof[i].status == HTP_STATUS_OK, "NOP prof %u: opcode %u status %u", i,
              prof[i].opcode, prof[i].status);
    }

    printf("CPY batch (1M floats) round trip with profile\n");
    const int64_t       n_el = 1 << 18;  // 1 MiB of f32: src at 0, dst at 1 MiB... within a 3 MiB buffer
    struct htp_buffer * big  = NULL;
    CHECK(htp_buffer_alloc(htp_session_map_target(sess), (size_t)n_el * 4 * 2, 0, &big) == 0, "alloc");
    float * s = (float *)htp_buffer_base(big);
    float * d = s + n_el;
    for (int64_t i = 0; i < n_el; i++) {
        s[i] = (float)(i % 1000) * 0.5f;
        d[i] = -1.0f;
    }
    struct htp_op_tensor src = test_f32(big, 0, 1024, n_el / 1024);
    struct htp_op_tensor dst = test_f32(big, (uint64_t)n_el * 4, 1024, n_el / 1024);
    struct htp_opnode    nop = test_op(HTP_OP_NOP);
    CHECK(test_enqueue_cpy(sess, &src, &dst) == 0, "enqueue CPY");
    CHECK(htp_session_enqueue(sess, &nop) == 0, "enqueue NOP");
    CHECK(htp_session_flush_sync(sess) == 0, "CPY batch: %s", htp_session_error(sess));
    int64_t bad = 0;
    for (int64_t i = 0; i < n_el; i++) {
        bad += d[i] != s[i];
    }
    CHECK(bad == 0, "CPY: %lld elements wrong", (long long)bad);
    CHECK(htp_session_last_profile(sess, &rsp, &prof, &n) == 0 && n == 2 && prof, "CPY profile");
    if (prof && n == 2) {
        CHECK(prof[0].opcode == HTP_OP_CPY && prof[0].status == HTP_STATUS_OK, "CPY prof: opcode %u status %u",
              prof[0].opcode, prof[0].status);
        CHECK(prof[0].usecs > 0, "CPY of 1 MiB took 0 us");
        CHECK(prof[0].n_threads >= 1, "CPY ran on %u threads", prof[0].n_threads);
        CHECK(prof[1].opcode == HTP_OP_NOP, "prof[1] opcode %u", prof[1].opcode);
        CHECK(rsp.usecs >= prof[0].usecs, "batch usecs %llu < op usecs %llu", (unsigned long long)rsp.usecs,
              (unsigned long long)prof[0].usecs);
        printf("  CPY 1 MiB: %llu us on %u threads, batch %llu us, %llu cycles\n", (unsigned long long)prof[0].usecs,
               prof[0].n_threads, (unsigned long long)rsp.usecs, (unsigned long long)prof[0].cycles);
    }
    htp_buffer_unref(big);
}

// Fill 64 floats at byte offset off of b with k * i, and 64 at dst_off with -1.
static void replay_fill(struct htp_buffer * b, uint64_t off, uint64_t dst_off, float k) {
    float * s = (float *)(htp_buffer_base(b) + off);
    float * d = (float *)(htp_buffer_base(b) + dst_off);
    for (int i = 0; i < 64; i++) {
        s[i] = k * (float)i;
        d[i] = -1.0f;
    }
}

static int replay_wrong(struct htp_buffer * b, uint64_t dst_off, float k) {
    const float * d = (const float *)(htp_buffer_base(b) + dst_off);
    int           n = 0;
    for (int i = 0; i < 64; i++) {
        n += d[i] != k * (float)i;
    }
    return n;
}

// A batch pushed again by name: it runs on whatever its operands hold now,
// in every slot (the queue's depth is 8: 20 replays go round twice and a
// half; after the first ten, when every slot holds its tables, a raw push
// rewrites one slot with other tables, which the replay landing there eight
// pushes later must not take for its own). Anything enqueued since, or any
// buffer unmapped or freed since, makes the name stale.
static void test_replay(void) {
    printf("replay: one batch pushed again, stale once its tables or buffers moved\n");
    const uint64_t       src_off = 16384, dst_off = 16384 + 4096;
    struct htp_op_tensor src = test_f32(buf, src_off, 64, 1), dst = test_f32(buf, dst_off, 64, 1);
    replay_fill(buf, src_off, dst_off, 3.0f);
    CHECK(test_enqueue_cpy(sess, &src, &dst) == 0 && htp_session_flush_sync(sess) == 0, "batch to replay: %s",
          htp_session_error(sess));
    const uint64_t name = htp_session_last_batch(sess);
    CHECK(name != 0 && replay_wrong(buf, dst_off, 3.0f) == 0, "batch to replay: name %llu, it ran",
          (unsigned long long)name);
    int bad = 0;
    for (int r = 0; r < 20; r++) {
        if (r == 10) {
            struct raw             raw;
            struct htp_opbatch_rsp rsp = {0};
            raw_good(&raw);  // another CPY, into another slot
            CHECK(raw_push(&raw, raw.n_bufs, raw.n_tensors, raw.n_ops, &rsp) == 0 && rsp.status == HTP_STATUS_OK,
                  "raw push between replays");
        }
        const float k = 10.0f + (float)r;
        replay_fill(buf, src_off, dst_off, k);
        int rc = htp_session_replay(sess, name);
        if (rc == 0) {
            rc = htp_session_flush_sync(sess);
        }
        bad += rc != 0 || replay_wrong(buf, dst_off, k) != 0;
    }
    CHECK(bad == 0, "%d of 20 replays did not copy what their operands held", bad);
    CHECK(htp_session_last_batch(sess) == name, "a replay keeps its name");

    // Enqueued since: the tables are another batch's.
    struct htp_opnode nop = test_op(HTP_OP_NOP);
    CHECK(htp_session_enqueue(sess, &nop) == 0 && htp_session_flush_sync(sess) == 0, "NOP batch");
    CHECK(htp_session_replay(sess, name) == HTP_SESSION_STALE, "replay after another batch is stale");
    CHECK(test_enqueue_cpy(sess, &src, &dst) == 0, "enqueue");
    CHECK(htp_session_replay(sess, htp_session_last_batch(sess)) == HTP_SESSION_STALE,
          "replay with ops enqueued is stale");
    CHECK(htp_session_flush_sync(sess) == 0, "flush");

    // A buffer it names is freed: its fd may name another buffer next.
    struct htp_buffer * b2 = NULL;
    CHECK_OR_RETURN(, htp_buffer_alloc(htp_session_map_target(sess), 1 << 16, 0, &b2) == 0, "alloc");
    struct htp_op_tensor s2 = test_f32(b2, 0, 64, 1), d2 = test_f32(b2, 4096, 64, 1);
    replay_fill(b2, 0, 4096, 5.0f);
    CHECK(test_enqueue_cpy(sess, &s2, &d2) == 0 && htp_session_flush_sync(sess) == 0, "batch on a second buffer");
    const uint64_t n2 = htp_session_last_batch(sess);
    replay_fill(b2, 0, 4096, 6.0f);
    CHECK(htp_session_replay(sess, n2) == 0 && htp_session_flush_sync(sess) == 0 && replay_wrong(b2, 4096, 6.0f) == 0,
          "replay on the second buffer");
    htp_buffer_unref(b2);
    CHECK(htp_session_replay(sess, n2) == HTP_SESSION_STALE, "replay after its buffer was freed is stale");
    CHECK(good_batch() == 0, "the session serves on: %s", htp_session_error(sess));
}

static int n_trace_lines;

static void count_traces(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    if (strstr(text, "trace-evt")) {
        n_trace_lines++;
    } else if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        fputs(text, stderr);
    }
}

// Profile mode 3: the slot has room for trace events, the NPU fills them, the host reads them back.
static void test_traces(void) {
    printf("profile mode 3: trace events read back\n");
    struct htp_session_params p;
    htp_session_params_default(&p, 0, 1);
    p.batch_ops             = 16;
    p.profile               = 3;
    p.n_traces              = 32;
    struct htp_session * s3 = NULL;
    int                  rc = htp_session_open(&p, &s3);
    CHECK(rc == 0, "open with tracing: %s", htp_status_str(rc));
    if (rc) {
        return;
    }
    ggml_log_set(count_traces, NULL);
    struct htp_op_tensor src = test_f32(buf, 0, 1024, 16), dst = test_f32(buf, 65536, 1024, 16);
    CHECK(test_enqueue_cpy(s3, &src, &dst) == 0 && htp_session_flush_sync(s3) == 0, "traced batch: %s",
          htp_session_error(s3));
    test_init();
    printf("  %d trace events logged\n", n_trace_lines);
    CHECK(n_trace_lines >= 2, "no trace events read back");
    htp_session_close(s3);
}

static void test_bad_descriptors(void) {
    printf("bad descriptors (raw pushes), each followed by a good batch\n");
    struct raw r;

    raw_good(&r);
    struct htp_opbatch_rsp rsp;
    CHECK(raw_push(&r, r.n_bufs, r.n_tensors, r.n_ops, &rsp) == 0 && rsp.status == HTP_STATUS_OK,
          "the well-formed raw batch was refused (%s)", htp_status_str((int)rsp.status));

    raw_good(&r);
    r.tensors[1].bi = 1;
    expect_refused("buffer index out of range", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.bufs[0].fd = 987654;
    expect_refused("buffer not mapped (unknown fd)", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.bufs[0].size += 1 << 20;
    expect_refused("buffer size larger than its mapping", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[1].data = htp_buffer_size(buf) + 4096;
    expect_refused("tensor past the buffer end", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[1].data = htp_buffer_usable(buf) - 512;  // 1 KiB tensor: half in the guard page
    expect_refused("tensor into the guard page", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[0]       = raw_f32(0, 65536, 256, 2);
    r.tensors[0].nb[1] = -1024;
    r.tensors[1]       = raw_f32(0, 4096, 256, 2);
    expect_refused("negative stride", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[0]       = raw_f32(0, 0, 256, 2);
    r.tensors[0].nb[1] = INT64_MAX / 2 + 1;  // (ne1 - 1) * nb1 fits, plus data overflows
    r.tensors[0].nb[2] = INT64_MAX;
    r.tensors[0].nb[3] = INT64_MAX;
    r.tensors[1]       = raw_f32(0, 4096, 256, 2);
    expect_refused("overflowing strides", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[0].ne[0] = (int64_t)1 << 61;
    r.tensors[0].ne[1] = 8;
    expect_refused("overflowing element count", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[0].ne[1] = -1;
    expect_refused("negative element count", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.tensors[0].type = 77;
    expect_refused("unknown type code", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.ops[0].opcode = HTP_OP_COUNT + 3;
    expect_refused("unknown op code", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.ops[0].opcode = HTP_OP_INVALID;
    expect_refused("op code 0 (INVALID)", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.ops[0].src[0] = 2;
    expect_refused("operand index past n_tensors", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    r.ops[0].dst[0] = HTP_NO_TENSOR;
    expect_refused("CPY without its destination", &r, r.n_bufs, r.n_tensors, r.n_ops);

    raw_good(&r);
    expect_refused("n_bufs over HTP_OP_MAX_BUFS", &r, HTP_OP_MAX_BUFS + 1, r.n_tensors, r.n_ops);
    expect_refused("n_tensors over HTP_OP_MAX_TENSORS", &r, r.n_bufs, HTP_OP_MAX_TENSORS + 1, r.n_ops);
    expect_refused("n_ops over HTP_OP_MAX_OPS", &r, r.n_bufs, r.n_tensors, HTP_OP_MAX_OPS + 1);

    // Within the limits, but the tables would run past the end of the slot.
    uint64_t slot  = htp_session_slot_size(sess);
    uint32_t n_ops = 1;
    while (htp_slot_layout(1, 2, n_ops, htp_session_n_threads(sess), 0).end <= slot) {
        n_ops *= 2;
    }
    CHECK(n_ops <= HTP_OP_MAX_OPS, "test setup: %u ops", n_ops);
    expect_refused("truncated payload (tables past the slot)", &r, r.n_bufs, r.n_tensors, n_ops);

    CHECK(htp_session_last_error(sess) == 0, "raw refusals were recorded as the session's error");
}

int main(void) {
    test_init();
    // A small batch size keeps the slot small, so "past the slot" is reachable within the limits.
    CHECK_OR_RETURN(1, test_open(&sess, 0, 0, 64, 1) == 0, "open HTP0");
    CHECK_OR_RETURN(
        1,
        htp_buffer_alloc(htp_session_map_target(sess), 1 << 20, 0, &buf) == 0 && htp_session_map_buffer(sess, buf) == 0,
        "cannot map a buffer");
    test_round_trips();
    test_traces();
    test_replay();
    test_bad_descriptors();
    htp_buffer_unref(buf);
    htp_session_close(sess);
    return test_exit_code("test-host-batches");
}
