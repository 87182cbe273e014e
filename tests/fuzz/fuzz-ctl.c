// fuzz-ctl: the control channel, both ends, in-process: the NPU server's
// handling of control messages (src/npu/server.c, htp_server_message: the
// decode of struct htp_ctl_req and every request type down to the sessions,
// the VA window and the queue start) from one fake connection, and the
// host's check of each answer (src/host/npu-proc.c).
//
// Feeds: up to 16 messages per input. Each: a type (or none known), a size
// (64 bytes, shorter, longer: as the socket would deliver it), descriptors
// beside it (none, a memfd of fuzzed size and content, two, or one that is
// no memfd), and fields snapped to what a host would send (a session this
// connection opened, the key of a mapped buffer, a queue layout that fits the
// pinned buffer, a page-multiple size) or left raw. A MAP's memfd is real, so
// the window maps it; a QUEUE_START starts a real queue reader, which may
// find a request in the buffer (the input can put one there). At the end the
// connection hangs up, closing whatever it opened.
//
// Must never: crash, hit undefined behaviour or leak (sessions, mappings,
// descriptors, reader threads: all go at hang-up), hang, answer a
// well-sized request with a response the host refuses (wrong type), with a
// status outside enum htp_status, or say hello with hardware the host
// would refuse.

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu-proc.h"
#include "npu/ops/op-families.h"
#include "npu/server.h"
#include "proto/htp-proto.h"
#include "proto/htp-ring.h"
#include "fuzz-input.h"

#define MAX_MSGS    16
#define MAX_PAGES   16
#define MAX_TRACKED 16

// What this connection has: session ids it opened, keys it mapped (with sizes).
struct state {
    uint32_t sessions[MAX_TRACKED];
    int      n_sessions;
    int32_t  keys[MAX_TRACKED];
    uint64_t key_size[MAX_TRACKED];
    int      n_keys;
};

static uint32_t pick_session(struct rd * r, const struct state * st) {
    const uint8_t b = u8(r);
    if (b >= 0xf0 || st->n_sessions == 0) {
        return b >= 0xf8 ? u32(r) : b & 3;  // one nobody opened (0 included), or a raw id
    }
    return st->sessions[b % st->n_sessions];
}

static int32_t pick_key(struct rd * r, const struct state * st, uint64_t * size) {
    const uint8_t b = u8(r);
    *size           = 0;
    if (b >= 0xf0 || st->n_keys == 0) {
        return b >= 0xf8 ? (int32_t)u32(r) : 100 + (b & 7);
    }
    *size = st->key_size[b % st->n_keys];
    return st->keys[b % st->n_keys];
}

// A memfd of 1..MAX_PAGES pages (or an odd size); its content zeros, a
// pattern from the input, or one request in a ring at offset 0 (the layout
// the snapped QUEUE_START uses).
static int make_memfd(struct rd * r, uint64_t * size) {
    const uint8_t b  = u8(r);
    int           fd = memfd_create("fuzz-ctl", MFD_CLOEXEC);
    if (fd < 0) {
        abort();
    }
    *size = (1 + b % MAX_PAGES) * (uint64_t)HTP_PAGE_SIZE + ((b & 0x80) ? u8(r) : 0);
    if (ftruncate(fd, (off_t)*size) != 0) {
        abort();
    }
    const int fill = (b >> 5) & 3;
    if (fill != 0) {
        uint8_t * m = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            abort();
        }
        if (fill == 1) {
            const uint8_t k = 1 + u8(r) % 64;
            uint8_t       pat[64];
            for (int i = 0; i < k; i++) {
                pat[i] = u8(r);
            }
            for (uint64_t i = 0; i < *size; i++) {
                m[i] = pat[i % k];
            }
        } else {
            struct htp_opbatch_req q = {
                .seq = 1, .order = 1, .slot = u8(r) % 2, .n_bufs = u8(r) % 2, .n_ops = u8(r) % 3};
            memcpy(m + HTP_RING_HDR_SIZE, &q, sizeof q);
            const uint32_t head = 1;
            memcpy(m, &head, sizeof head);
        }
        munmap(m, *size);
    }
    return fd;
}

static uint64_t align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}

// The request fields, per type, mostly as a host would fill them.
static void fill_req(struct rd * r, struct htp_ctl_req * q, const struct state * st, uint64_t fd_size) {
    const uint8_t how = u8(r);
    q->session        = pick_session(r, st);
    if (how & 0x80) {
        for (size_t i = 0; i < sizeof q->u.raw; i++) {
            q->u.raw[i] = u8(r);
        }
        return;
    }
    uint64_t size = 0;
    switch (q->type) {
        case HTP_CTL_HELLO:
            q->u.hello.version = (how & 1) ? u32(r) : HTP_PROTO_VERSION;
            break;
        case HTP_CTL_SESSION_OPEN: {
            static const uint64_t vtcm[4] = {0, 4096, 1 << 20, 3};
            static const uint64_t vmem[4] = {0, 1 << 20, 64ull << 20, 1ull << 30};
            q->u.open.virt_idx            = u8(r) % 4;
            q->u.open.n_threads           = u8(r) % 4;
            q->u.open.vtcm_size           = (how & 2) ? u64(r) : vtcm[(how >> 2) & 3];
            q->u.open.vmem_size           = (how & 16) ? u64(r) : vmem[(how >> 5) & 3];
            q->u.open.options             = (how & 128) ? u32(r) : 0;  // HTP_SESSION_*, or junk
            break;
        }
        case HTP_CTL_MAP: {
            const int32_t key = pick_key(r, st, &size);
            q->u.map.fd       = (how & 1) ? key : 100 + (int32_t)(u8(r) % 8);
            q->u.map.flags    = (how & 2) ? u32(r) : (uint32_t)(how >> 2) & 7;  // EXTENDED, PINNED, EAGER
            // The memfd's whole pages, a page less or more, or anything.
            static const int64_t delta[4] = {0, 0, -HTP_PAGE_SIZE, HTP_PAGE_SIZE};
            const uint64_t       whole    = fd_size / HTP_PAGE_SIZE * HTP_PAGE_SIZE;
            q->u.map.size = (how & 0x40) ? u64(r) : whole + (uint64_t)delta[(how >> 5) & 1 ? 2 + (how & 1) : 0];
            break;
        }
        case HTP_CTL_UNMAP:
            q->u.map.fd = pick_key(r, st, &size);
            break;
        case HTP_CTL_QUEUE_START: {
            struct htp_queue_desc * d     = &q->u.queue;
            const int32_t           key   = pick_key(r, st, &size);
            const uint32_t          depth = 1u << (how & 3);
            d->fd                         = key;
            d->depth                      = (how & 4) ? u32(r) : depth;
            d->req_ring_off               = 0;
            d->rsp_ring_off               = align_up(htp_ring_sizeof(depth, sizeof(struct htp_opbatch_req)), 64);
            d->slots_off = align_up(d->rsp_ring_off + htp_ring_sizeof(depth, sizeof(struct htp_opbatch_rsp)), 4096);
            const uint64_t room = size > d->slots_off + HTP_PAGE_SIZE ? size - HTP_PAGE_SIZE - d->slots_off : 8;
            d->slot_size        = room / depth / 8 * 8;
            d->poll             = (how >> 3) & 1;
            if (how & 0x10) {  // one offset or size off
                const uint8_t  which = u8(r);
                const uint64_t v     = u64(r);
                switch (which % 5) {
                    case 0:
                        d->req_ring_off = v;
                        break;
                    case 1:
                        d->rsp_ring_off = v;
                        break;
                    case 2:
                        d->slots_off = v;
                        break;
                    case 3:  // the codebooks, wherever (their bytes are the buffer's: zeros or garbage)
                        d->codebooks_off = v;
                        break;
                    default:
                        d->slot_size = v;
                        break;
                }
            }
            break;
        }
        case HTP_CTL_PROFILER:
            q->u.profiler.mode = (how & 1) ? u32(r) : how % 5;
            break;
        default:  // SESSION_CLOSE, QUEUE_STOP, VMEM_INFO: the session only
            break;
    }
}

static void setup(void) {
    // A small NPU (two workers) whose fence waits give up at once.
    setenv("GGML_HEXAGON_NHVX", "2", 1);
    setenv("GGML_HEXAGON_FENCE_TIMEOUT_MS", "1", 1);
    if (htp_server_open(0) != 0) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static int  ready;
    static char owner;  // the fake connection
    if (!ready) {
        setup();
        ready = 1;
    }
    struct rd    r = {data, size};
    struct state st;
    memset(&st, 0, sizeof st);

    for (int m = 0; m < MAX_MSGS && r.n > 0; m++) {
        const uint8_t      kind = u8(&r), sz = u8(&r);
        struct htp_ctl_req q;
        memset(&q, 0, sizeof q);
        q.type = (kind & 15) % (HTP_CTL_COUNT + 1);

        // Descriptors beside it.
        int      fds[2], n_fds = 0;
        uint64_t fd_size = 0;
        switch ((kind >> 4) & 3) {
            case 1:
                fds[n_fds++] = make_memfd(&r, &fd_size);
                break;
            case 2:
                fds[n_fds++] = make_memfd(&r, &fd_size);
                fds[n_fds++] = make_memfd(&r, &fd_size);
                break;
            case 3:
                fds[n_fds] = open("/dev/null", O_RDONLY | O_CLOEXEC);  // not a buffer
                n_fds += fds[n_fds] >= 0;
                break;
            default:
                break;
        }
        fill_req(&r, &q, &st, fd_size);
        if (kind & 0x40) {
            q.type = u32(&r);  // anything at all
        }

        // As received: the whole request, or a cut or an overlong message (the
        // socket delivers at most one byte past a request, flagging the rest).
        uint8_t msg[sizeof q + 1];
        memset(msg, 0xa5, sizeof msg);
        memcpy(msg, &q, sizeof q);
        const int64_t len       = (kind & 0x80) ? sz % (sizeof q + 8) : (int64_t)sizeof q;
        const int64_t n         = len > (int64_t)sizeof msg ? (int64_t)sizeof msg : len;
        const int     truncated = len > (int64_t)sizeof msg;

        struct htp_ctl_rsp rsp;
        htp_server_message(&owner, msg, n, truncated, fds, n_fds, &rsp);

        if (getenv("FUZZ_TRACE") != NULL) {  // for reading a crash or checking a seed
            fprintf(stderr, "ctl: type %u, %lld bytes%s, %d fds -> status %u\n", q.type, (long long)n,
                    truncated ? " (truncated)" : "", n_fds, rsp.status);
        }
        // What the host makes of the answer.
        if (rsp.status > HTP_STATUS_VERSION) {
            abort();
        }
        if (n == (int64_t)sizeof q && !truncated) {
            if (htp_npu_rsp_check(0, q.type, &rsp, sizeof rsp) != 0) {
                abort();
            }
            struct htp_hw_info hw;
            if (q.type == HTP_CTL_HELLO && rsp.status == HTP_STATUS_OK && htp_npu_hello_decode(0, &rsp, &hw) != 0) {
                abort();
            }
        }
        if (rsp.status == HTP_STATUS_OK && n == (int64_t)sizeof q && !truncated) {
            if (q.type == HTP_CTL_SESSION_OPEN && st.n_sessions < MAX_TRACKED) {
                st.sessions[st.n_sessions++] = rsp.u.open.session;
            } else if (q.type == HTP_CTL_MAP && st.n_keys < MAX_TRACKED) {
                st.keys[st.n_keys]       = q.u.map.fd;
                st.key_size[st.n_keys++] = q.u.map.size;
            }
        }
    }
    htp_server_hang_up(&owner);
    return 0;
}
