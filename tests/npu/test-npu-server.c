// test-npu-server: htp-npu as a process, over its control socket (--fd) and
// queue rings: malformed control requests are answered and the server keeps
// serving; queue descriptors are validated; NOP batches round-trip; a bad
// batch is refused and the next one runs; a fence signalled by one session is
// waited on by another (in FIFO order; the reverse order times out, then the
// signal runs); batches of two sessions run in their submission numbers'
// order, not in the order the NPU's readers took them; hanging up makes the
// process exit cleanly.
// Usage: test-npu-server PATH-TO-htp-npu

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contract/codebooks.h"
#include "proto/htp-proto.h"
#include "proto/htp-ring.h"
#include "test-ring-sys.h"
#include "test-check.h"

#define PAGE 4096

static int      sock = -1;
static pid_t    child;
static uint64_t orders_pushed;  // the device-wide submission numbers handed out so far

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int send_raw(const void * buf, size_t len, int fd) {
    struct iovec  iov = {(void *)buf, len};
    struct msghdr msg;
    union {
        struct cmsghdr h;
        char           b[CMSG_SPACE(sizeof(int))];
    } c;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov    = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        msg.msg_control    = c.b;
        msg.msg_controllen = sizeof(c.b);
        struct cmsghdr * h = CMSG_FIRSTHDR(&msg);
        h->cmsg_level      = SOL_SOCKET;
        h->cmsg_type       = SCM_RIGHTS;
        h->cmsg_len        = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &fd, sizeof(int));
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

// Response to whatever was sent; -1 on timeout (5 s) or hang-up.
static int recv_rsp(struct htp_ctl_rsp * rsp) {
    struct pollfd p = {sock, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) {
        return -1;
    }
    return recv(sock, rsp, sizeof(*rsp), 0) == (ssize_t)sizeof(*rsp) ? 0 : -1;
}

static uint32_t call(struct htp_ctl_req * req, int fd, struct htp_ctl_rsp * rsp) {
    if (send_raw(req, sizeof(*req), fd) != 0 || recv_rsp(rsp) != 0) {
        return 0xffffffffu;
    }
    return rsp->type == req->type ? rsp->status : 0xfffffffeu;
}

static uint32_t simple(uint32_t type, uint32_t session) {
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    memset(&req, 0, sizeof(req));
    req.type    = type;
    req.session = session;
    return call(&req, -1, &rsp);
}

// --- a session with a pinned buffer: rings, fences, slots ---

#define DEPTH     4
#define N_FENCES  8
#define MAX_OPS   2048
#define REQ_OFF   0
#define RSP_OFF   4096
#define FENCE_OFF 8192
#define SLOTS_OFF 12288

struct sess {
    uint32_t         id;
    int              fd;  // memfd of the pinned buffer
    uint64_t         size;
    uint8_t *        mem;
    uint64_t         slot_size;
    uint64_t         codebooks_off;  // room for a struct htp_codebooks after the slots
    struct htp_ring *req, *rsp;
    uint64_t         seq;
};

static uint32_t open_session(struct sess * s, uint32_t n_threads) {
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    memset(&req, 0, sizeof(req));
    memset(s, 0, sizeof(*s));
    req.type             = HTP_CTL_SESSION_OPEN;
    req.u.open.vmem_size = 64 << 20;
    uint32_t st          = call(&req, -1, &rsp);
    s->id                = rsp.u.open.session;
    s->slot_size         = (htp_slot_size(MAX_OPS, n_threads, 0) + 7) & ~7ull;
    s->codebooks_off     = SLOTS_OFF + DEPTH * s->slot_size;
    s->size = ((s->codebooks_off + sizeof(struct htp_codebooks) + PAGE - 1) & ~(uint64_t)(PAGE - 1)) + PAGE;
    s->fd   = memfd_create("pinned", MFD_CLOEXEC);
    if (ftruncate(s->fd, (off_t)s->size) != 0) {
        return 0xffffffffu;
    }
    s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    s->req = htp_ring_init(s->mem + REQ_OFF);
    s->rsp = htp_ring_init(s->mem + RSP_OFF);
    return st;
}

static uint32_t map_buf(struct sess * s, int fd, uint64_t size, uint32_t flags, struct htp_vmem_info * info) {
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    memset(&req, 0, sizeof(req));
    req.type        = HTP_CTL_MAP;
    req.session     = s->id;
    req.u.map.fd    = fd;
    req.u.map.size  = size;
    req.u.map.flags = flags;
    uint32_t st     = call(&req, fd, &rsp);
    if (info) {
        *info = rsp.u.vmem;
    }
    return st;
}

static struct htp_queue_desc queue_desc(const struct sess * s) {
    return (struct htp_queue_desc){.fd           = s->fd,
                                   .depth        = DEPTH,
                                   .req_ring_off = REQ_OFF,
                                   .rsp_ring_off = RSP_OFF,
                                   .slots_off    = SLOTS_OFF,
                                   .slot_size    = s->slot_size};
}

static uint32_t queue_start(struct sess * s, const struct htp_queue_desc * q) {
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    memset(&req, 0, sizeof(req));
    req.type    = HTP_CTL_QUEUE_START;
    req.session = s->id;
    req.u.queue = *q;
    return call(&req, -1, &rsp);
}

// Batch of n_ops ops (claiming n_ops_claimed) in slot (seq % DEPTH), stamped
// `order`. Its one buffer is owner's pinned buffer (mapped into s under the
// same fd number, as the host clones it); its one tensor, unless fence < 0,
// is fence slot `fence` of that buffer.
static void push_batch(struct sess * s, const struct sess * owner, int fence, const struct htp_op_desc * ops,
                       uint32_t n_ops, uint32_t n_ops_claimed, uint64_t order) {
    uint32_t               slot = (uint32_t)(s->seq % DEPTH);
    uint8_t *              p    = s->mem + SLOTS_OFF + slot * s->slot_size;
    uint32_t               nt   = fence >= 0 ? 1 : 0;
    struct htp_slot_layout l    = htp_slot_layout(1, nt, n_ops, 0, 0);
    struct htp_buf_desc    b    = {0, owner->size, owner->fd, owner == s ? HTP_BUF_PINNED : 0};
    memcpy(p + l.bufs, &b, sizeof(b));
    if (fence >= 0) {
        struct htp_tensor t = {.data  = FENCE_OFF + (uint64_t)fence * HTP_FENCE_SLOT_SIZE,
                               .type  = HTP_TYPE_I8,
                               .flags = HTP_TENSOR_FENCE,
                               .bi    = 0};
        t.ne[0] = HTP_FENCE_SLOT_SIZE, t.ne[1] = t.ne[2] = t.ne[3] = 1;
        t.nb[0] = 1, t.nb[1] = t.nb[2] = t.nb[3] = HTP_FENCE_SLOT_SIZE;
        memcpy(p + l.tensors, &t, sizeof(t));
    }
    memcpy(p + l.ops, ops, sizeof(*ops) * n_ops);
    struct htp_opbatch_req r = {
        .seq = ++s->seq, .order = order, .slot = slot, .n_bufs = 1, .n_tensors = nt, .n_ops = n_ops_claimed};
    htp_ring_push(s->req, DEPTH, sizeof(r), &r, &test_ring_sys);
}

// Batch of ops on s's own pinned buffer, next in submission order; tensors:
// optional fence slot 0.
static void push(struct sess * s, const struct htp_op_desc * ops, uint32_t n_ops, int with_fence,
                 uint32_t n_ops_claimed) {
    push_batch(s, s, with_fence ? 0 : -1, ops, n_ops, n_ops_claimed, ++orders_pushed);
}

// Batch of one fence op on fence slot `fence` of owner's pinned buffer, stamped `order`.
static void push_fence_op(struct sess * s, const struct sess * owner, uint32_t fence, struct htp_op_desc op,
                          uint64_t order) {
    op.src[0] = 0;
    push_batch(s, owner, (int)fence, &op, 1, 1, order);
}

// Wait until s's reader has taken every request pushed so far.
static int all_taken(struct sess * s, double timeout_s) {
    double t0 = now_s();
    while (atomic_load_explicit(&s->req->tail, memory_order_acquire) !=
           atomic_load_explicit(&s->req->head, memory_order_relaxed)) {
        if (now_s() - t0 > timeout_s) {
            return 0;
        }
        usleep(1000);
    }
    return 1;
}

static int pop(struct sess * s, struct htp_opbatch_rsp * rsp, double timeout_s) {
    if (htp_ring_wait_nonempty(s->rsp, (int64_t)(timeout_s * 1e6), 50, 0, &test_ring_sys) != HTP_RING_OK) {
        return -1;
    }
    return htp_ring_pop(s->rsp, DEPTH, sizeof(*rsp), rsp, &test_ring_sys) == HTP_RING_OK ? 0 : -1;
}

static struct htp_op_desc op_of(uint32_t opcode, int fence, int32_t p0, int32_t p1) {
    struct htp_op_desc op;
    memset(&op, 0, sizeof(op));
    op.opcode = opcode;
    for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
        op.src[k] = HTP_NO_TENSOR;
    }
    op.dst[0] = op.dst[1] = HTP_NO_TENSOR;
    if (fence) {
        op.src[0] = 0;
    }
    op.params[0] = p0;
    op.params[1] = p1;
    return op;
}

int main(int argc, char ** argv) {
    printf("test-npu-server: htp-npu control protocol, queues and fences through a real process\n");
    if (argc < 2 || access(argv[1], X_OK) != 0) {
        fprintf(stderr, "usage: %s PATH-TO-htp-npu\n", argv[0]);
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    int sv[2];
    CHECK_OR_RETURN(1, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
                    strerror(errno));
    setenv("GGML_HEXAGON_FENCE_TIMEOUT_MS", "400", 1);
    setenv("GGML_HEXAGON_NHVX", "2", 1);
    child = fork();
    if (child == 0) {
        int  fd = dup(sv[1]);  // dup clears CLOEXEC
        char fds[16];
        snprintf(fds, sizeof(fds), "%d", fd);
        execl(argv[1], argv[1], "--fd", fds, "--phys", "0", (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    sock = sv[0];

    // --- control requests, good and malformed ---
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    memset(&req, 0, sizeof(req));
    req.type            = HTP_CTL_HELLO;
    req.u.hello.version = HTP_PROTO_VERSION;
    uint32_t st         = call(&req, -1, &rsp);
    CHECK(st == HTP_STATUS_OK && rsp.u.hello.version == HTP_PROTO_VERSION && rsp.u.hello.hw.n_threads == 2 &&
              rsp.u.hello.hw.arch == 79 && strcmp(rsp.u.hello.hw.name, "htp-npu") == 0 &&
              rsp.u.hello.hw.vtcm_size == 8u << 20 && rsp.u.hello.hw.vmem_size == HTP_VMEM_DEFAULT,
          "hello: st %u threads %u", st, rsp.u.hello.hw.n_threads);
    req.u.hello.version = HTP_PROTO_VERSION + 1;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_VERSION, "hello with another version");

    uint8_t junk[100];
    memset(junk, 0x5a, sizeof(junk));
    CHECK(send_raw(junk, 4, -1) == 0 && recv_rsp(&rsp) == 0 && rsp.status == HTP_STATUS_INVAL_PARAMS, "short request");
    CHECK(send_raw(junk, sizeof(junk), -1) == 0 && recv_rsp(&rsp) == 0 && rsp.status == HTP_STATUS_INVAL_PARAMS,
          "oversized request");
    CHECK(simple(99, 1) == HTP_STATUS_INVAL_PARAMS, "unknown request type");
    CHECK(simple(0, 1) == HTP_STATUS_INVAL_PARAMS, "request type 0");
    CHECK(simple(HTP_CTL_SESSION_CLOSE, 12345) == HTP_STATUS_NO_SESSION, "close of an unknown session");
    CHECK(simple(HTP_CTL_VMEM_INFO, 0) == HTP_STATUS_NO_SESSION, "vmem info of session 0");

    // Session options: the known bits are taken, anything else refused.
    memset(&req, 0, sizeof(req));
    req.type             = HTP_CTL_SESSION_OPEN;
    req.u.open.vmem_size = 64 << 20;
    req.u.open.options   = HTP_SESSION_OPTIONS_ALL + 1;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_INVAL_PARAMS, "open with an unknown session option");
    req.u.open.options = 1u << 31;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_INVAL_PARAMS, "open with session option bit 31");
    req.u.open.options = HTP_SESSION_OPTIONS_ALL;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_OK && rsp.u.open.session != 0, "open with every session option");
    CHECK(simple(HTP_CTL_SESSION_CLOSE, rsp.u.open.session) == HTP_STATUS_OK, "close it");

    struct sess a, b;
    CHECK(open_session(&a, 2) == HTP_STATUS_OK && a.id != 0, "open session a");
    CHECK(open_session(&b, 2) == HTP_STATUS_OK && b.id != 0 && b.id != a.id, "open session b");

    memset(&req, 0, sizeof(req));
    req.type       = HTP_CTL_MAP;
    req.session    = a.id;
    req.u.map.fd   = a.fd;
    req.u.map.size = a.size;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_INVAL_PARAMS, "MAP without a descriptor");
    req.session = 777;
    CHECK(call(&req, a.fd, &rsp) == HTP_STATUS_NO_SESSION, "MAP into an unknown session");
    req.type    = HTP_CTL_VMEM_INFO;
    req.session = a.id;
    CHECK(call(&req, a.fd, &rsp) == HTP_STATUS_INVAL_PARAMS, "descriptor sent with a non-MAP request");
    CHECK(map_buf(&a, a.fd, a.size + PAGE, HTP_BUF_PINNED, NULL) == HTP_STATUS_INVAL_PARAMS,
          "MAP larger than the memfd");
    CHECK(map_buf(&a, a.fd, a.size, 1u << 7, NULL) == HTP_STATUS_INVAL_PARAMS, "MAP with an unknown flag");

    struct htp_vmem_info vi;
    CHECK(map_buf(&a, a.fd, a.size, HTP_BUF_PINNED, &vi) == HTP_STATUS_OK && vi.used == a.size && vi.n_maps == 1 &&
              vi.size == 64 << 20,
          "MAP pinned a: used %llu maps %u", (unsigned long long)vi.used, vi.n_maps);
    CHECK(map_buf(&a, a.fd, a.size, HTP_BUF_PINNED, NULL) == HTP_STATUS_INVAL_PARAMS, "MAP of a key already mapped");
    CHECK(map_buf(&b, b.fd, b.size, HTP_BUF_PINNED, NULL) == HTP_STATUS_OK, "MAP pinned b");
    // a's pinned buffer (fences) is also mapped into b, as the host clones it.
    CHECK(map_buf(&b, a.fd, a.size, 0, &vi) == HTP_STATUS_OK && vi.n_maps == 2, "clone a's buffer into b");

    // --- queue descriptors ---
    struct htp_queue_desc q = queue_desc(&a);
    q.depth                 = 3;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "depth 3");
    q       = queue_desc(&a);
    q.depth = 128;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "depth 128");
    q              = queue_desc(&a);
    q.rsp_ring_off = 64;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "overlapping rings");
    q           = queue_desc(&a);
    q.slot_size = a.size;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "slots past the buffer");
    q           = queue_desc(&a);
    q.slots_off = UINT64_MAX - 8;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "slots offset wraps");
    q    = queue_desc(&b);
    q.fd = a.fd;  // mapped into b, but not as b's pinned buffer
    CHECK(queue_start(&b, &q) == HTP_STATUS_INVAL_PARAMS, "queue in a buffer not mapped pinned");
    // Codebooks: misplaced or malformed ones stop the queue start; well-formed
    // ones (any points of the right value sets) are taken.
    q               = queue_desc(&a);
    q.codebooks_off = a.codebooks_off;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "codebooks of zeros (no magic)");
    q.codebooks_off = a.codebooks_off + 4;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "codebooks misaligned");
    q.codebooks_off = SLOTS_OFF;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "codebooks over the slots");
    q.codebooks_off = a.size - PAGE - 8;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "codebooks past the buffer");
    struct htp_codebooks * cb = (struct htp_codebooks *)(void *)(a.mem + a.codebooks_off);
    cb->magic                 = HTP_CODEBOOKS_MAGIC;
    cb->bytes                 = sizeof(*cb);
    memset(cb->iq2xxs, 25, sizeof cb->iq2xxs);
    memset(cb->iq2xs, 43, sizeof cb->iq2xs);
    memset(cb->iq2s, 8, sizeof cb->iq2s);
    memset(cb->iq3xxs, 62, sizeof cb->iq3xxs);
    memset(cb->iq3s, 14, sizeof cb->iq3s);  // even: not an IQ3_S coordinate
    q.codebooks_off = a.codebooks_off;
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "codebooks with a point outside its value set");
    memset(cb->iq3s, 15, sizeof cb->iq3s);
    q               = queue_desc(&a);
    q.codebooks_off = a.codebooks_off;
    CHECK(queue_start(&a, &q) == HTP_STATUS_OK, "queue a (with codebooks)");
    CHECK(queue_start(&a, &q) == HTP_STATUS_INVAL_PARAMS, "queue a started twice");
    q = queue_desc(&b);
    CHECK(queue_start(&b, &q) == HTP_STATUS_OK, "queue b");

    // --- batches ---
    struct htp_op_desc     ops[MAX_OPS];
    struct htp_opbatch_rsp r;
    for (int i = 0; i < MAX_OPS; i++) {
        ops[i] = op_of(HTP_OP_NOP, 0, 0, 0);
    }
    push(&a, ops, MAX_OPS, 0, MAX_OPS);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK && r.n_done == MAX_OPS && r.seq == 1, "NOP batch");
    push(&a, ops, MAX_OPS, 0, HTP_OP_MAX_OPS + 1);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_INVAL_PARAMS && r.n_done == 0 && r.seq == 2,
          "batch with too many ops");
    push(&a, ops, MAX_OPS, 0, MAX_OPS + 1);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_INVAL_PARAMS, "batch longer than its slot");
    ops[3].opcode = 0x1234;
    push(&a, ops, MAX_OPS, 0, MAX_OPS);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_INVAL_PARAMS, "unknown op code");
    ops[3].opcode = HTP_OP_NOP;
    push(&a, ops, 4, 0, 4);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK && r.seq == 5, "good batch after bad ones");

    // Round trip of a 2048-NOP batch (futex wake-ups), median of 31.
    double rt[31];
    int    ok_rt = 1;
    for (int i = 0; i < 31; i++) {
        double t0 = now_s();
        push(&a, ops, MAX_OPS, 0, MAX_OPS);
        ok_rt &= pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK && r.n_done == MAX_OPS;
        rt[i] = (now_s() - t0) * 1e6;
    }
    for (int i = 1; i < 31; i++) {  // insertion sort
        for (int j = i; j > 0 && rt[j] < rt[j - 1]; j--) {
            double x  = rt[j];
            rt[j]     = rt[j - 1];
            rt[j - 1] = x;
        }
    }
    CHECK(ok_rt, "2048-NOP batches");
    printf("  2048-NOP batch round trip: median %.1f us, max %.1f us (NPU-side batch time %llu us)\n", rt[15], rt[30],
           (unsigned long long)r.usecs);

    // Fence: a signals, then b waits (FIFO order: the signal was queued first).
    struct htp_fence_slot * fence = (struct htp_fence_slot *)(void *)(a.mem + FENCE_OFF);
    struct htp_op_desc      sig   = op_of(HTP_OP_FENCE, 1, 1, 1);
    struct htp_op_desc      wt    = op_of(HTP_OP_FENCE, 1, 1, 0);
    push(&a, &sig, 1, 1, 1);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK, "signal fence 1 from a");
    // b's batch names a's buffer under b's key for it (the same fd number here).
    push_fence_op(&b, &a, 0, wt, ++orders_pushed);
    CHECK(pop(&b, &r, 5) == 0 && r.status == HTP_STATUS_OK, "b waits on a's fence 1: status %u", r.status);

    // Reverse order: b waits for 2 first; a's signal queues behind it, so the
    // wait times out (400 ms here), then the signal runs.
    wt.params[0]  = 2;
    double t_wait = now_s();
    push_fence_op(&b, &a, 0, wt, ++orders_pushed);
    usleep(20000);  // let b's batch start first
    sig.params[0] = 2;
    push(&a, &sig, 1, 1, 1);
    int    got_b  = pop(&b, &r, 5) == 0;
    double waited = now_s() - t_wait;
    CHECK(got_b && r.status == HTP_STATUS_INTERNAL_ERR && waited > 0.3 && waited < 3,
          "wait queued before the signal times out: status %u after %.3f s", r.status, waited);
    CHECK(pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK, "the signal runs after the timed-out wait");
    CHECK(__atomic_load_n(&fence->seq, __ATOMIC_ACQUIRE) == 2, "host sees fence seq 2");

    // Submission order, not pick-up order: while a's first batch holds the
    // device (waiting for the host on fence slot 1), b's reader takes a batch
    // numbered n + 2, then a batch numbered n + 1 lands in a's ring. Released,
    // the device must run a's (signal 3) before b's (signal 4) although b's
    // reader had its batch first; the other way round would leave seq 3.
    {
        struct htp_fence_slot * gate = (struct htp_fence_slot *)(void *)(a.mem + FENCE_OFF + HTP_FENCE_SLOT_SIZE);
        uint64_t                n    = orders_pushed;
        orders_pushed += 3;
        push_fence_op(&a, &a, 1, op_of(HTP_OP_FENCE, 1, 1, 0), n);  // wait for the host's gate seq 1
        CHECK(all_taken(&a, 5), "a's reader took the gated batch");
        push_fence_op(&b, &a, 0, op_of(HTP_OP_FENCE, 1, 4, 1), n + 2);
        CHECK(all_taken(&b, 5), "b's reader took its batch");
        usleep(20000);  // b's reader is now waiting for its turn
        push_fence_op(&a, &a, 0, op_of(HTP_OP_FENCE, 1, 3, 1), n + 1);
        __atomic_store_n(&gate->status, HTP_STATUS_OK, __ATOMIC_RELAXED);
        __atomic_store_n(&gate->seq, 1, __ATOMIC_RELEASE);
        test_ring_wake_all((_Atomic uint32_t *)(void *)&gate->seq);
        int ok_a = pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK;
        ok_a &= pop(&a, &r, 5) == 0 && r.status == HTP_STATUS_OK;
        int ok_b = pop(&b, &r, 5) == 0 && r.status == HTP_STATUS_OK;
        CHECK(ok_a && ok_b, "the three ordered batches ran");
        CHECK(__atomic_load_n(&fence->seq, __ATOMIC_ACQUIRE) == 4,
              "the lower-numbered batch ran first: fence seq %u, want 4", fence->seq);
    }

    // Unmap refusals and accounting.
    memset(&req, 0, sizeof(req));
    req.type     = HTP_CTL_UNMAP;
    req.session  = a.id;
    req.u.map.fd = a.fd;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_INVAL_PARAMS, "unmap of the running queue's pinned buffer");
    req.u.map.fd = 4242;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_INVAL_PARAMS, "unmap of an unknown key");
    req.session  = b.id;
    req.u.map.fd = a.fd;
    CHECK(call(&req, -1, &rsp) == HTP_STATUS_OK && rsp.u.vmem.n_maps == 1 && rsp.u.vmem.used == b.size,
          "unmap the clone from b");
    CHECK(simple(HTP_CTL_QUEUE_STOP, a.id) == HTP_STATUS_OK, "queue stop a");
    CHECK(simple(HTP_CTL_SESSION_CLOSE, a.id) == HTP_STATUS_OK, "close a");
    CHECK(simple(HTP_CTL_VMEM_INFO, a.id) == HTP_STATUS_NO_SESSION, "a is gone");
    CHECK(simple(HTP_CTL_VMEM_INFO, b.id) == HTP_STATUS_OK, "b still serves");

    // Hang up with b still open and its queue running: htp-npu closes b and exits 0.
    close(sock);
    double t0     = now_s();
    int    status = -1;
    while (now_s() - t0 < 5) {
        if (waitpid(child, &status, WNOHANG) == child) {
            break;
        }
        usleep(10000);
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "htp-npu exits 0 after hang-up (status 0x%x, %.3f s)", status,
          now_s() - t0);
    if (!(WIFEXITED(status) || WIFSIGNALED(status))) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    return test_exit_code("test-npu-server");
}
