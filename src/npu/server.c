// server.c: htp-npu's control server. Each connection is a host process (or a
// debugging client); each request gets exactly one response of the same type.
// Sessions belong to the connection that opened them and are closed when it
// hangs up. Nothing a client sends may crash the server: wrong sizes, unknown
// types or sessions, missing or extra fds are all answered with a status.
//
// Faults: a kernel that touches a guard page or an unmapped address faults
// (SIGSEGV/SIGBUS on Linux). We do not try to recover (a DSP does not either):
// the platform's handler has us write one line naming the session whose batch
// was running and the faulting address, then the process dies and the host
// sees its connection hang up.

#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "lock.h"
#include "npu-util.h"
#include "ops/op-families.h"
#include "ops/stream-prefetch.h"
#include "platform/platform.h"
#include "session.h"

#define MAX_FDS_PER_MSG 8

struct server {
    struct htp_npu_device    dev;
    uint32_t                 phys;
    struct htp_lock          lock;  // sessions[], owners[], next_id
    struct htp_npu_session * sessions[HTP_MAX_SESSIONS];
    const void *             owners[HTP_MAX_SESSIONS];  // the connection that opened each
    uint32_t                 next_id;
};

static struct server srv;

// ---------------------------------------------------------------------------
// Hardware info and start-up
// ---------------------------------------------------------------------------

static uint32_t env_arch(void) {
    const char * s = htp_plat_getenv("GGML_HEXAGON_ARCH");
    if (s == NULL || *s == '\0') {
        return 79;
    }
    const char *  p = (*s == 'v' || *s == 'V') ? s + 1 : s;
    char *        end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || *end != '\0' || v < 68 || v > 85) {
        htp_npu_log("warning: GGML_HEXAGON_ARCH=\"%s\" is not an architecture in v68..v85; using 79", s);
        return 79;
    }
    return (uint32_t)v;
}

void htp_server_hw_info(struct htp_hw_info * hw) {
    memset(hw, 0, sizeof(*hw));
    hw->arch                   = env_arch();
    const uint32_t cpus        = htp_plat_cpu_count();
    uint32_t       def_threads = cpus < HTP_MAX_NTHREADS ? cpus : HTP_MAX_NTHREADS;
    uint64_t       nhvx        = htp_npu_env_u64("GGML_HEXAGON_NHVX", 0, 0, HTP_MAX_NTHREADS);
    hw->n_threads              = nhvx ? (uint32_t)nhvx : def_threads;
    hw->n_hvx                  = hw->n_threads;
    hw->n_hmx                  = 1;
    hw->vtcm_size              = htp_npu_env_size("GGML_HEXAGON_VTCM_SIZE", 8ull << 20, 1ull << 30);
    // As ggml-hexagon: older architectures have a smaller default window.
    uint64_t vmem_def = hw->arch >= 75 ? HTP_VMEM_DEFAULT : 3000ull << 20;
    // A 32-bit NPU (Hexagon) has 4 GiB of address space in all, shared by
    // every session's window, its code, heap and stacks: 1 GiB a session.
    if (UINTPTR_MAX == 0xffffffffu && vmem_def > (1ull << 30)) {
        vmem_def = 1ull << 30;
    }
    hw->vmem_size = htp_npu_env_size("GGML_HEXAGON_VMEM", vmem_def, 1ull << 40);
    hw->page_size = (uint32_t)htp_plat_page_size();
    snprintf(hw->name, sizeof(hw->name), "htp-npu");
}

// Async-signal-safe: only htp_plat_log_write and our own formatting.
static void report_fault(int is_bus_error, uintptr_t a) {
    char         buf[160];
    size_t       n   = 0;
    const char * msg = is_bus_error ? "htp-npu: SIGBUS at 0x" : "htp-npu: SIGSEGV at 0x";
    while (*msg) {
        buf[n++] = *msg++;
    }
    for (int shift = (int)sizeof(a) * 8 - 4; shift >= 0; shift -= 4) {
        buf[n++] = "0123456789abcdef"[(a >> shift) & 0xf];
    }
    // Relaxed: a lock-free atomic load is async-signal-safe; the value is only printed.
    uint32_t     sess = atomic_load_explicit(&htp_npu_device_running_session, memory_order_relaxed);
    const char * s2   = sess ? " in a batch of session " : " outside batch execution";
    while (*s2) {
        buf[n++] = *s2++;
    }
    if (sess) {
        char d[12];
        int  k = 0;
        do {
            d[k++] = (char)('0' + sess % 10);
            sess /= 10;
        } while (sess);
        while (k) {
            buf[n++] = d[--k];
        }
    }
    buf[n++] = '\n';
    htp_plat_log_write(buf, n);
}

int htp_server_open(uint32_t phys) {
    memset(&srv, 0, sizeof(srv));
    srv.phys    = phys;
    srv.next_id = 1;
    htp_lock_init(&srv.lock);
    htp_plat_init();

    const char * v  = htp_plat_getenv("GGML_HEXAGON_VERBOSE");
    htp_npu_verbose = v != NULL && atoi(v) > 0;

    htp_npu_fault_init();
    htp_ops_set_fence_timeout_ms(htp_npu_env_u64("GGML_HEXAGON_FENCE_TIMEOUT_MS", 30000, 1, 24ull * 3600 * 1000));
    htp_mm_stream_prefetch =
        (int)htp_npu_env_u64("GGML_HEXAGON_STREAM_PREFETCH", (uint64_t)htp_mm_stream_prefetch_default(), 0, 1);

    struct htp_hw_info hw;
    htp_server_hw_info(&hw);
    if (htp_npu_device_init(&srv.dev, &hw) != HTP_STATUS_OK) {
        htp_npu_log("cannot start %u worker threads", hw.n_threads);
        return -1;
    }

    HTP_NPU_VERBOSE("phys %u: arch v%u, %u threads, vtcm %llu, vmem %llu", phys, hw.arch, hw.n_threads,
                    (unsigned long long)hw.vtcm_size, (unsigned long long)hw.vmem_size);
    return 0;
}

void htp_server_close(void) {
    htp_npu_device_free(&srv.dev);
}

// The process's server: the state, then the fault report (last, so a fault
// during start-up is the platform's default death).
static int server_init(uint32_t phys) {
    if (htp_server_open(phys) != 0) {
        return -1;
    }
    htp_plat_on_fault(report_fault);
    return 0;
}

// ---------------------------------------------------------------------------
// Sessions by id, per connection
// ---------------------------------------------------------------------------

static struct htp_npu_session * find_session(const void * owner, uint32_t id) {
    struct htp_npu_session * s = NULL;
    htp_lock_acquire(&srv.lock);
    for (int i = 0; i < HTP_MAX_SESSIONS; i++) {
        if (srv.sessions[i] && srv.owners[i] == owner && htp_npu_session_id(srv.sessions[i]) == id) {
            s = srv.sessions[i];
        }
    }
    htp_lock_release(&srv.lock);
    return s;
}

// Take the session out of the table (the caller closes it).
static void remove_session(struct htp_npu_session * s) {
    htp_lock_acquire(&srv.lock);
    for (int i = 0; i < HTP_MAX_SESSIONS; i++) {
        if (srv.sessions[i] == s) {
            srv.sessions[i] = NULL;
            srv.owners[i]   = NULL;
        }
    }
    htp_lock_release(&srv.lock);
}

static int open_session(const void * owner, const struct htp_ctl_req * req, uint32_t * id) {
    htp_lock_acquire(&srv.lock);
    int slot = -1;
    for (int i = 0; i < HTP_MAX_SESSIONS && slot < 0; i++) {
        if (srv.sessions[i] == NULL) {
            slot = i;
        }
    }
    if (slot < 0) {
        htp_lock_release(&srv.lock);
        return HTP_STATUS_NO_MEMORY;
    }
    // Ids are never reused while the process lives (0 is "no session").
    uint32_t new_id = srv.next_id++;
    if (srv.next_id == 0) {
        srv.next_id = 1;
    }
    srv.owners[slot] = owner;  // reserve the slot while the session opens
    htp_lock_release(&srv.lock);

    struct htp_npu_session_params p = {
        .id        = new_id,
        .virt_idx  = req->u.open.virt_idx,
        .n_threads = req->u.open.n_threads,
        .vtcm_size = req->u.open.vtcm_size,
        .vmem_size = req->u.open.vmem_size,
        .options   = req->u.open.options,
    };
    struct htp_npu_session * s  = NULL;
    int                      rc = htp_npu_session_open(&srv.dev, &p, &s);

    htp_lock_acquire(&srv.lock);
    srv.sessions[slot] = rc == HTP_STATUS_OK ? s : NULL;
    srv.owners[slot]   = rc == HTP_STATUS_OK ? owner : NULL;
    htp_lock_release(&srv.lock);
    *id = new_id;
    return rc;
}

void htp_server_hang_up(const void * owner) {
    for (;;) {
        struct htp_npu_session * s = NULL;
        htp_lock_acquire(&srv.lock);
        for (int i = 0; i < HTP_MAX_SESSIONS && s == NULL; i++) {
            if (srv.sessions[i] && srv.owners[i] == owner) {
                s               = srv.sessions[i];
                srv.sessions[i] = NULL;
                srv.owners[i]   = NULL;
            }
        }
        htp_lock_release(&srv.lock);
        if (s == NULL) {
            return;
        }
        HTP_NPU_VERBOSE("closing session %u (host hung up)", htp_npu_session_id(s));
        htp_npu_session_close(s);
    }
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

static const char * ctl_name(uint32_t type) {
    static const char * const names[HTP_CTL_COUNT] = {
        [HTP_CTL_HELLO]         = "HELLO",
        [HTP_CTL_SESSION_OPEN]  = "SESSION_OPEN",
        [HTP_CTL_SESSION_CLOSE] = "SESSION_CLOSE",
        [HTP_CTL_MAP]           = "MAP",
        [HTP_CTL_UNMAP]         = "UNMAP",
        [HTP_CTL_QUEUE_START]   = "QUEUE_START",
        [HTP_CTL_QUEUE_STOP]    = "QUEUE_STOP",
        [HTP_CTL_PROFILER]      = "PROFILER",
        [HTP_CTL_VMEM_INFO]     = "VMEM_INFO",
    };
    return type < HTP_CTL_COUNT && names[type] ? names[type] : "?";
}

// Handle one well-sized request. fd: the SCM_RIGHTS descriptor that came with
// it (-1 if none); this function closes it.
static void handle(const void * owner, const struct htp_ctl_req * req, int fd, struct htp_ctl_rsp * rsp) {
    rsp->status                 = HTP_STATUS_OK;
    struct htp_npu_session * s  = NULL;
    int                      rc = HTP_STATUS_OK;

    if (req->type != HTP_CTL_MAP && fd >= 0) {
        htp_plat_buffer_close(fd);  // no request but MAP carries a descriptor
        fd = -1;
        if (req->type != HTP_CTL_HELLO) {
            rsp->status = HTP_STATUS_INVAL_PARAMS;
            return;
        }
    }
    if (req->type >= HTP_CTL_SESSION_CLOSE && req->type < HTP_CTL_COUNT) {
        s = find_session(owner, req->session);
        if (s == NULL) {
            if (fd >= 0) {
                htp_plat_buffer_close(fd);
            }
            rsp->status = HTP_STATUS_NO_SESSION;
            return;
        }
    }

    switch (req->type) {
        case HTP_CTL_HELLO:
            rsp->u.hello.version = HTP_PROTO_VERSION;
            rsp->u.hello.hw      = srv.dev.hw;
            rc                   = req->u.hello.version == HTP_PROTO_VERSION ? HTP_STATUS_OK : HTP_STATUS_VERSION;
            break;
        case HTP_CTL_SESSION_OPEN: {
            uint32_t id = 0;
            rc          = open_session(owner, req, &id);
            if (rc == HTP_STATUS_OK) {
                rsp->u.open.session = id;
            }
            break;
        }
        case HTP_CTL_SESSION_CLOSE:
            remove_session(s);
            htp_npu_session_close(s);
            break;
        case HTP_CTL_MAP:
            if (fd < 0) {
                rc = HTP_STATUS_INVAL_PARAMS;
                htp_npu_session_vmem_info(s, &rsp->u.vmem);
                break;
            }
            rc = htp_npu_session_map(s, req->u.map.fd, fd, req->u.map.size, req->u.map.flags, &rsp->u.vmem);
            htp_plat_buffer_close(fd);  // the mapping keeps the memory; the descriptor is not needed
            break;
        case HTP_CTL_UNMAP:
            rc = htp_npu_session_unmap(s, req->u.map.fd, &rsp->u.vmem);
            break;
        case HTP_CTL_QUEUE_START:
            rc = htp_npu_session_queue_start(s, &req->u.queue);
            break;
        case HTP_CTL_QUEUE_STOP:
            rc = htp_npu_session_queue_stop(s);
            break;
        case HTP_CTL_PROFILER:
            rc = htp_npu_session_set_profiler(s, req->u.profiler.mode, req->u.profiler.events, req->u.profiler.n_events,
                                              &rsp->u.pmu);
            break;
        case HTP_CTL_VMEM_INFO:
            htp_npu_session_vmem_info(s, &rsp->u.vmem);
            break;
        default:
            rc = HTP_STATUS_INVAL_PARAMS;
            break;
    }
    rsp->status = (uint32_t)rc;
}

void htp_server_message(const void * owner, const void * msg, int64_t n, int truncated, const int * fds, int n_fds,
                        struct htp_ctl_rsp * rsp) {
    struct htp_ctl_req req;
    // A short message reads as zeros past its end.
    memset(&req, 0, sizeof(req));
    memcpy(&req, msg, n < 0 ? 0 : (size_t)n < sizeof(req) ? (size_t)n : sizeof(req));
    memset(rsp, 0, sizeof(*rsp));
    rsp->type = req.type;

    if (truncated || n != (int64_t)sizeof(req) || n_fds > 1) {
        for (int i = 0; i < n_fds; i++) {
            htp_plat_buffer_close(fds[i]);
        }
        rsp->status = HTP_STATUS_INVAL_PARAMS;
        HTP_NPU_VERBOSE("malformed request (%lld bytes, %d fds)", (long long)n, n_fds);
        return;
    }
    handle(owner, &req, n_fds ? fds[0] : -1, rsp);
    if (htp_npu_verbose) {
        htp_npu_log("%s session %u -> status %u", ctl_name(req.type),
                    req.type == HTP_CTL_SESSION_OPEN ? rsp->u.open.session : req.session, rsp->status);
    }
}

// Serve one connection until it hangs up; close its sessions.
static void serve(int sock) {
    const void * owner = &sock;  // unique while this call runs
    for (;;) {
        // One byte more than a request, to tell an oversized message from a good one.
        uint8_t buf[sizeof(struct htp_ctl_req) + 1];
        int     fds[MAX_FDS_PER_MSG];
        int     n_fds = 0, truncated = 0;
        int64_t n = htp_plat_ctl_recv(sock, buf, sizeof(buf), fds, MAX_FDS_PER_MSG, &n_fds, &truncated);
        if (n <= 0) {
            break;  // hang-up or a broken socket: same outcome
        }
        struct htp_ctl_rsp rsp;
        htp_server_message(owner, buf, n, truncated, fds, n_fds, &rsp);
        if (htp_plat_ctl_send(sock, &rsp, sizeof(rsp)) != 0) {
            break;
        }
    }
    htp_server_hang_up(owner);
}

int htp_server_run_fd(int fd, uint32_t phys) {
    if (server_init(phys) != 0) {
        return 1;
    }
    serve(fd);
    htp_plat_ctl_close(fd);
    htp_server_close();
    return 0;
}

static void conn_main(void * arg) {
    int sock = (int)(intptr_t)arg;
    serve(sock);
    htp_plat_ctl_close(sock);
}

int htp_server_run_listen(const char * path, uint32_t phys) {
    if (server_init(phys) != 0) {
        return 1;
    }
    int ls = htp_plat_ctl_listen(path);
    if (ls < 0) {
        return 1;
    }
    htp_npu_log("phys %u listening on %s", phys, path);
    for (;;) {
        int c = htp_plat_ctl_accept(ls);
        if (c < 0) {
            break;
        }
        struct htp_plat_thread * t;
        if (htp_plat_thread_start(conn_main, (void *)(intptr_t)c, &t) != 0) {
            htp_plat_ctl_close(c);
            continue;
        }
        htp_plat_thread_detach(t);
    }
    htp_plat_ctl_close(ls);
    return 1;
}
