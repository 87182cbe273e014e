// npu-proc.c: starting, talking to and ending htp-npu processes (see
// npu-proc.h). The one idea: every wait is bounded and cut into slices, and
// between slices we look at the socket and the child, so a dead NPU is found
// within a slice and no call can hang.

#include "npu-proc.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "log.h"
#include "wait.h"

extern char ** environ;

struct htp_npu {
    uint32_t phys_idx;
    int      refs;  // guarded by htp_npu_registry_lock
    pid_t    pid;
    int      sock;  // our end of the control socketpair

    pthread_mutex_t call_lock;  // one control request at a time
    pthread_mutex_t reap_lock;  // guards reaped / death (waitpid must run once)
    bool            reaped;
    bool            closing;  // we hung up ourselves: an exit is expected, not an error
    _Atomic int     dead;     // set once; read without a lock on the queue paths
    char            death[96];

    struct htp_hw_info hw;

    _Atomic uint64_t orders_taken;  // htp_npu_next_order's counter
};

static pthread_mutex_t  htp_npu_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct htp_npu * htp_npu_registry[HTP_NPU_MAX_PHYS];

static int64_t now_ms(void) {
    return (int64_t)(htp_wait_now_us() / 1000u);
}

// Record the first death and its cause. Later causes are ignored.
static void mark_dead(struct htp_npu * npu, const char * why) {
    pthread_mutex_lock(&npu->reap_lock);
    if (!atomic_load_explicit(&npu->dead, memory_order_relaxed)) {
        snprintf(npu->death, sizeof npu->death, "%s", why);
        // Release: a thread that sees dead also sees death[] filled.
        atomic_store_explicit(&npu->dead, 1, memory_order_release);
        HTP_LOG_ERROR("ggml-htp: NPU %u (pid %d) is dead: %s\n", npu->phys_idx, (int)npu->pid, why);
    }
    pthread_mutex_unlock(&npu->reap_lock);
}

// waitpid(WNOHANG) once the child may have gone; true if it has exited.
static bool reap(struct htp_npu * npu, bool block) {
    bool exited = false;
    pthread_mutex_lock(&npu->reap_lock);
    if (npu->reaped) {
        exited = true;
    } else if (npu->pid > 0) {
        int   st = 0;
        pid_t r  = waitpid(npu->pid, &st, block ? 0 : WNOHANG);
        if (r == npu->pid || (r < 0 && errno == ECHILD)) {
            npu->reaped = true;
            exited      = true;
            if (!atomic_load_explicit(&npu->dead, memory_order_relaxed)) {
                if (r < 0) {
                    snprintf(npu->death, sizeof npu->death, "process vanished");
                } else if (WIFSIGNALED(st)) {
                    snprintf(npu->death, sizeof npu->death, "killed by signal %d", WTERMSIG(st));
                } else {
                    snprintf(npu->death, sizeof npu->death, "exited with status %d", WEXITSTATUS(st));
                }
                atomic_store_explicit(&npu->dead, 1, memory_order_release);
                if (!npu->closing) {
                    HTP_LOG_ERROR("ggml-htp: NPU %u (pid %d) is dead: %s\n", npu->phys_idx, (int)npu->pid, npu->death);
                }
            }
        }
    }
    pthread_mutex_unlock(&npu->reap_lock);
    return exited;
}

bool htp_npu_alive(struct htp_npu * npu) {
    // Acquire: pairs with the release in mark_dead / reap.
    if (atomic_load_explicit(&npu->dead, memory_order_acquire)) {
        return false;
    }
    struct pollfd pfd = {npu->sock, 0, 0};  // POLLHUP / POLLERR are always reported
    if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))) {
        if (!reap(npu, false)) {
            mark_dead(npu, "control socket hung up");
        }
        return false;
    }
    if (reap(npu, false)) {
        return false;
    }
    return true;
}

const char * htp_npu_death(const struct htp_npu * npu) {
    return atomic_load_explicit(&npu->dead, memory_order_acquire) ? npu->death : "";
}

const struct htp_hw_info * htp_npu_hw_info(const struct htp_npu * npu) {
    return &npu->hw;
}

pid_t htp_npu_pid(const struct htp_npu * npu) {
    return npu->pid;
}

uint32_t htp_npu_phys_idx(const struct htp_npu * npu) {
    return npu->phys_idx;
}

uint64_t htp_npu_next_order(struct htp_npu * npu) {
    // Relaxed is enough: the read-modify-writes of one atomic are totally
    // ordered consistently with happens-before, so a push that happens after
    // another draws a larger number; the ring push publishes it.
    return atomic_fetch_add_explicit(&npu->orders_taken, 1, memory_order_relaxed) + 1;
}

// Path of the NPU program: $GGML_HEXAGON_NPU, else htp-npu beside this library.
static int npu_program(char * path, size_t size) {
    const char * env = getenv("GGML_HEXAGON_NPU");
    if (env && *env) {
        if (strlen(env) >= size) {
            HTP_LOG_ERROR("ggml-htp: GGML_HEXAGON_NPU is too long\n");
            return HTP_STATUS_HOST_ERR;
        }
        snprintf(path, size, "%s", env);
        return 0;
    }
    Dl_info info;
    if (!dladdr((void *)htp_npu_get, &info) || !info.dli_fname) {
        HTP_LOG_ERROR("ggml-htp: cannot locate libggml-htp.so to find htp-npu; set GGML_HEXAGON_NPU\n");
        return HTP_STATUS_HOST_ERR;
    }
    const char * slash = strrchr(info.dli_fname, '/');
    int          n     = slash ? snprintf(path, size, "%.*s/htp-npu", (int)(slash - info.dli_fname), info.dli_fname)
                               : snprintf(path, size, "htp-npu");
    if (n < 0 || (size_t)n >= size) {
        return HTP_STATUS_HOST_ERR;
    }
    return 0;
}

#define NPU_EXEC_MAX_WORDS 16

// $GGML_HEXAGON_NPU_EXEC split at blanks into argv[0 .. n-1] (the words live
// in buf): a launcher the NPU program runs under, e.g. "qemu-hexagon -cpu v67"
// for the NPU built for Hexagon. Returns the word count (0: none), or -1 for a
// value that does not fit (warned; the program then runs directly).
static int npu_launcher(char * buf, size_t size, char ** argv) {
    const char * env = getenv("GGML_HEXAGON_NPU_EXEC");
    if (!env || !*env) {
        return 0;
    }
    if (strlen(env) >= size) {
        HTP_LOG_WARN("ggml-htp: GGML_HEXAGON_NPU_EXEC=\"%.40s...\" is too long; running the NPU program directly\n",
                     env);
        return -1;
    }
    snprintf(buf, size, "%s", env);
    int n = 0;
    for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == NPU_EXEC_MAX_WORDS) {
            HTP_LOG_WARN(
                "ggml-htp: GGML_HEXAGON_NPU_EXEC=\"%s\" has more than %d words; running the NPU program "
                "directly\n",
                env, NPU_EXEC_MAX_WORDS);
            return -1;
        }
        argv[n++] = w;
    }
    return n;
}

static int npu_spawn(struct htp_npu * npu) {
    char path[PATH_MAX];
    int  rc = npu_program(path, sizeof path);
    if (rc != 0) {
        return rc;
    }

    int sv[2];
    // CLOEXEC on both ends: no other child of ours inherits them; the NPU's
    // end is made inheritable by the dup2 file action below.
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        HTP_LOG_ERROR("ggml-htp: socketpair: %s\n", strerror(errno));
        return HTP_STATUS_HOST_ERR;
    }

    char fd_arg[16], phys_arg[16], launcher[PATH_MAX];
    snprintf(fd_arg, sizeof fd_arg, "%d", sv[1]);
    snprintf(phys_arg, sizeof phys_arg, "%u", npu->phys_idx);
    char * argv[NPU_EXEC_MAX_WORDS + 6];
    int    n           = npu_launcher(launcher, sizeof launcher, argv);
    n                  = n < 0 ? 0 : n;
    const int launched = n > 0;
    argv[n++]          = path;
    argv[n++]          = "--fd";
    argv[n++]          = fd_arg;
    argv[n++]          = "--phys";
    argv[n++]          = phys_arg;
    argv[n]            = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    // dup2 onto itself clears FD_CLOEXEC in the child (glibc >= 2.29).
    posix_spawn_file_actions_adddup2(&fa, sv[1], sv[1]);
    // A launcher is looked up on PATH, as a shell would; the program itself is a path.
    int err = launched ? posix_spawnp(&npu->pid, argv[0], &fa, NULL, argv, environ)
                       : posix_spawn(&npu->pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    if (err != 0) {
        HTP_LOG_ERROR("ggml-htp: cannot start NPU program %s%s%s: %s\n", launched ? argv[0] : "", launched ? " " : "",
                      path, strerror(err));
        close(sv[0]);
        npu->pid = -1;
        return HTP_STATUS_NPU_DEAD;
    }
    npu->sock = sv[0];
    HTP_VERBOSE("ggml-htp: started NPU %u: %s%s%s (pid %d)\n", npu->phys_idx, launched ? argv[0] : "",
                launched ? " ... " : "", path, (int)npu->pid);
    return 0;
}

int htp_npu_rsp_check(uint32_t phys_idx, uint32_t req_type, const struct htp_ctl_rsp * rsp, ssize_t n) {
    if (n != (ssize_t)sizeof *rsp || rsp->type != req_type) {
        HTP_LOG_ERROR("ggml-htp: NPU %u answered request %u with %zd bytes, type %u\n", phys_idx, req_type, n,
                      n >= 4 ? rsp->type : 0);
        return HTP_STATUS_PROTOCOL;
    }
    return 0;
}

int htp_npu_hello_decode(uint32_t phys_idx, const struct htp_ctl_rsp * rsp, struct htp_hw_info * hw) {
    if (rsp->status != HTP_STATUS_OK || rsp->u.hello.version != HTP_PROTO_VERSION) {
        HTP_LOG_ERROR("ggml-htp: NPU %u speaks protocol version %u, we speak %u (status %s)\n", phys_idx,
                      rsp->u.hello.version, HTP_PROTO_VERSION, htp_status_str((int)rsp->status));
        return HTP_STATUS_VERSION;
    }
    *hw                           = rsp->u.hello.hw;
    hw->name[sizeof hw->name - 1] = 0;  // from the wire: terminate it ourselves
    const uint32_t page           = hw->page_size;
    if (page < HTP_PAGE_SIZE || page > (1u << 24) || (page & (page - 1)) != 0 || hw->n_threads == 0 ||
        hw->n_threads > HTP_MAX_NTHREADS) {
        HTP_LOG_ERROR("ggml-htp: NPU %u describes itself impossibly (page size %u, %u threads)\n", phys_idx, page,
                      hw->n_threads);
        return HTP_STATUS_PROTOCOL;
    }
    return 0;
}

int htp_npu_call(struct htp_npu * npu, const struct htp_ctl_req * req, int send_fd, struct htp_ctl_rsp * rsp) {
    int rc = 0;
    pthread_mutex_lock(&npu->call_lock);
    if (atomic_load_explicit(&npu->dead, memory_order_acquire)) {
        rc = HTP_STATUS_NPU_DEAD;
        goto done;
    }

    struct iovec  iov = {(void *)req, sizeof *req};
    struct msghdr msg = {0};
    union {
        struct cmsghdr align;
        char           buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    msg.msg_iov    = &iov;
    msg.msg_iovlen = 1;
    if (send_fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        msg.msg_control    = ctl.buf;
        msg.msg_controllen = sizeof ctl.buf;
        struct cmsghdr * c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level      = SOL_SOCKET;
        c->cmsg_type       = SCM_RIGHTS;
        c->cmsg_len        = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
    }
    ssize_t n;
    do {
        // MSG_NOSIGNAL: a dead peer is an error code, not a SIGPIPE.
        n = sendmsg(npu->sock, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof *req) {
        if (!reap(npu, false)) {
            mark_dead(npu, n < 0 ? "control socket send failed" : "short send on the control socket");
        }
        rc = HTP_STATUS_NPU_DEAD;
        goto done;
    }

    int64_t deadline = now_ms() + HTP_NPU_CALL_TIMEOUT_MS;
    for (;;) {
        struct pollfd pfd = {npu->sock, POLLIN, 0};
        int           r   = poll(&pfd, 1, HTP_NPU_POLL_SLICE_MS);
        if (r < 0 && errno != EINTR) {
            mark_dead(npu, "poll on the control socket failed");
            rc = HTP_STATUS_NPU_DEAD;
            goto done;
        }
        if (r > 0 && (pfd.revents & POLLIN)) {
            // MSG_TRUNC: n is the real size, so an oversized answer is caught.
            do {
                n = recv(npu->sock, rsp, sizeof *rsp, MSG_TRUNC);
            } while (n < 0 && errno == EINTR);
            if (n == 0 || (n < 0 && errno != EAGAIN)) {
                if (!reap(npu, false)) {
                    mark_dead(npu, "control socket closed");
                }
                rc = HTP_STATUS_NPU_DEAD;
                goto done;
            }
            if (n < 0) {
                continue;
            }
            if (htp_npu_rsp_check(npu->phys_idx, req->type, rsp, n) != 0) {
                mark_dead(npu, "protocol violation on the control socket");
                kill(npu->pid, SIGKILL);
                rc = HTP_STATUS_PROTOCOL;
                goto done;
            }
            goto done;
        }
        if (r > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))) {
            if (!reap(npu, false)) {
                mark_dead(npu, "control socket hung up");
            }
            rc = HTP_STATUS_NPU_DEAD;
            goto done;
        }
        if (reap(npu, false)) {
            rc = HTP_STATUS_NPU_DEAD;
            goto done;
        }
        if (now_ms() > deadline) {
            char why[64];
            snprintf(why, sizeof why, "no answer to control request %u within %d ms", req->type,
                     HTP_NPU_CALL_TIMEOUT_MS);
            mark_dead(npu, why);
            // A hung NPU is ended: its state can no longer be trusted.
            kill(npu->pid, SIGKILL);
            rc = HTP_STATUS_NPU_DEAD;
            goto done;
        }
    }
done:
    pthread_mutex_unlock(&npu->call_lock);
    return rc;
}

// One request whose answer carries nothing we keep: its status or the call's.
static int call_status(struct htp_npu * npu, const struct htp_ctl_req * req, int send_fd) {
    struct htp_ctl_rsp rsp;
    int                rc = htp_npu_call(npu, req, send_fd, &rsp);
    return rc == 0 && rsp.status != HTP_STATUS_OK ? (int)rsp.status : rc;
}

int htp_npu_map_buffer(struct htp_npu * npu, uint32_t session_id, int fd, uint64_t size, uint32_t flags) {
    if (htp_fault(HTP_FAULT_MAP_REQUEST)) {
        return HTP_STATUS_NO_MEMORY;  // as if the NPU had refused it
    }
    struct htp_ctl_req req = {.type = HTP_CTL_MAP, .session = session_id};
    req.u.map.fd           = fd;
    req.u.map.flags        = flags;
    req.u.map.size         = size;
    return call_status(npu, &req, fd);
}

int htp_npu_unmap_buffer(struct htp_npu * npu, uint32_t session_id, int fd) {
    struct htp_ctl_req req = {.type = HTP_CTL_UNMAP, .session = session_id};
    req.u.map.fd           = fd;
    return call_status(npu, &req, -1);
}

static void npu_destroy(struct htp_npu * npu) {
    pthread_mutex_lock(&npu->reap_lock);
    npu->closing = true;
    pthread_mutex_unlock(&npu->reap_lock);
    if (npu->sock >= 0) {
        close(npu->sock);  // the NPU sees the hang-up and exits
        npu->sock = -1;
    }
    if (npu->pid > 0) {
        int64_t deadline = now_ms() + 2000;
        while (!reap(npu, false)) {
            if (now_ms() > deadline) {
                HTP_LOG_WARN("ggml-htp: NPU %u (pid %d) did not exit; killing it\n", npu->phys_idx, (int)npu->pid);
                kill(npu->pid, SIGKILL);
                reap(npu, true);
                break;
            }
            usleep(1000);
        }
    }
    pthread_mutex_destroy(&npu->call_lock);
    pthread_mutex_destroy(&npu->reap_lock);
    free(npu);
}

static int npu_start(uint32_t phys_idx, struct htp_npu ** out) {
    struct htp_npu * npu = calloc(1, sizeof *npu);
    if (!npu) {
        return HTP_STATUS_HOST_ERR;
    }
    npu->phys_idx = phys_idx;
    npu->sock     = -1;
    npu->pid      = -1;
    pthread_mutex_init(&npu->call_lock, NULL);
    pthread_mutex_init(&npu->reap_lock, NULL);
    atomic_init(&npu->dead, 0);

    int rc = npu_spawn(npu);
    if (rc != 0) {
        goto fail;
    }

    struct htp_ctl_req req = {.type = HTP_CTL_HELLO};
    struct htp_ctl_rsp rsp;
    req.u.hello.version = HTP_PROTO_VERSION;
    rc                  = htp_npu_call(npu, &req, -1, &rsp);
    if (rc != 0) {
        HTP_LOG_ERROR("ggml-htp: NPU %u: no hello: %s (%s)\n", phys_idx, htp_status_str(rc), htp_npu_death(npu));
        goto fail;
    }
    rc = htp_npu_hello_decode(phys_idx, &rsp, &npu->hw);
    if (rc != 0) {
        goto fail;
    }
    const uint32_t page = npu->hw.page_size;
    HTP_VERBOSE("ggml-htp: NPU %u: %s arch v%u threads %u hvx %u hmx %u vtcm %llu vmem %llu page %u\n", phys_idx,
                npu->hw.name, npu->hw.arch, npu->hw.n_threads, npu->hw.n_hvx, npu->hw.n_hmx,
                (unsigned long long)npu->hw.vtcm_size, (unsigned long long)npu->hw.vmem_size, page);
    *out = npu;
    return 0;
fail:
    npu_destroy(npu);
    return rc;
}

int htp_npu_get(uint32_t phys_idx, struct htp_npu ** out) {
    if (phys_idx >= HTP_NPU_MAX_PHYS) {
        HTP_LOG_ERROR("ggml-htp: physical NPU index %u out of range (max %d)\n", phys_idx, HTP_NPU_MAX_PHYS - 1);
        return HTP_STATUS_HOST_ERR;
    }
    int rc = 0;
    pthread_mutex_lock(&htp_npu_registry_lock);
    struct htp_npu * npu = htp_npu_registry[phys_idx];
    if (npu && !htp_npu_alive(npu)) {
        // A dead NPU stays with the sessions that used it (they fail and close);
        // new sessions get a new process.
        htp_npu_registry[phys_idx] = NULL;
        npu                        = NULL;
    }
    if (!npu) {
        rc = npu_start(phys_idx, &npu);
        if (rc == 0) {
            htp_npu_registry[phys_idx] = npu;
        }
    }
    if (rc == 0) {
        npu->refs++;
        *out = npu;
    }
    pthread_mutex_unlock(&htp_npu_registry_lock);
    return rc;
}

void htp_npu_put(struct htp_npu * npu) {
    if (!npu) {
        return;
    }
    pthread_mutex_lock(&htp_npu_registry_lock);
    bool last = --npu->refs == 0;
    if (last && htp_npu_registry[npu->phys_idx] == npu) {
        htp_npu_registry[npu->phys_idx] = NULL;
    }
    pthread_mutex_unlock(&htp_npu_registry_lock);
    if (last) {
        npu_destroy(npu);
    }
}
