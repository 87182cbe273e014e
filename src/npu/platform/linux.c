// linux.c: the NPU's platform seam (platform.h) on Linux and libc: pthreads,
// futex(2), clock_gettime, mmap(2) and a SOCK_SEQPACKET socket. This is the
// software NPU's OS on an ordinary machine; the only file of the NPU that
// includes a system header beyond the C library's own.

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "platform.h"

#include "proto/htp-proto.h"

#define MAX_FDS_PER_MSG 8

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

void htp_plat_init(void) {
    signal(SIGPIPE, SIG_IGN);
}

const char * htp_plat_getenv(const char * name) {
    return getenv(name);
}

// The processors this process may run on (taskset, cgroups' cpusets), else the online ones.
uint32_t htp_plat_cpu_count(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
        return (uint32_t)CPU_COUNT(&allowed);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (uint32_t)n;
}

// ---------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------

struct htp_plat_thread {
    pthread_t tid;
};

// What a new thread runs; it frees this once it has read it, so the handle
// (struct htp_plat_thread) and the thread's own state never alias.
struct thread_start {
    void (*fn)(void * arg);
    void * arg;
};

static void * thread_main(void * p) {
    struct thread_start st = *(struct thread_start *)p;
    free(p);
    st.fn(st.arg);
    return NULL;
}

int htp_plat_thread_start(void (*fn)(void * arg), void * arg, struct htp_plat_thread ** out) {
    struct htp_plat_thread * t  = malloc(sizeof(*t));
    struct thread_start *    st = malloc(sizeof(*st));
    if (t == NULL || st == NULL) {
        free(t);
        free(st);
        return -1;
    }
    st->fn  = fn;
    st->arg = arg;
    if (pthread_create(&t->tid, NULL, thread_main, st) != 0) {
        free(t);
        free(st);
        return -1;
    }
    *out = t;
    return 0;
}

void htp_plat_thread_join(struct htp_plat_thread * t) {
    pthread_join(t->tid, NULL);
    free(t);
}

void htp_plat_thread_detach(struct htp_plat_thread * t) {
    pthread_detach(t->tid);
    free(t);
}

// cpu counts the processors this process may run on (taskset, cgroups), not
// the machine's: the cpu-th of the allowed set, modulo its size.
int htp_plat_thread_pin(uint32_t cpu) {
    cpu_set_t allowed, set;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) == 0) {
        return -1;
    }
    uint32_t k = cpu % (uint32_t)CPU_COUNT(&allowed);
    CPU_ZERO(&set);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &allowed) && k-- == 0) {
            CPU_SET(c, &set);
            break;
        }
    }
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0 ? 0 : -1;
}

// ---------------------------------------------------------------------------
// Futex
// ---------------------------------------------------------------------------

void htp_plat_wait(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us, int shared) {
    const int       op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
    struct timespec ts = {(time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000};
    syscall(SYS_futex, (uint32_t *)word, op, expected, timeout_us < 0 ? NULL : &ts, NULL, 0);
}

int htp_plat_wait_either(_Atomic uint32_t * priv, uint32_t priv_expected, _Atomic uint32_t * shared,
                         uint32_t shared_expected) {
#if defined(SYS_futex_waitv)
    struct futex_waitv w[2] = {
        {.val = priv_expected, .uaddr = (uintptr_t)priv, .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG},
        {.val = shared_expected, .uaddr = (uintptr_t)shared, .flags = FUTEX_32},
    };
    // The index of the word woken, or -1: EAGAIN (a word had changed) and
    // EINTR end a wait; ENOSYS (before Linux 5.16) and EFAULT (a word no
    // longer mapped) mean there was none.
    if (syscall(SYS_futex_waitv, w, 2, 0, NULL, 0) < 0 && errno != EAGAIN && errno != EINTR) {
        return -1;
    }
    return 0;
#else
    (void)priv, (void)priv_expected, (void)shared, (void)shared_expected;
    return -1;
#endif
}

void htp_plat_wake(_Atomic uint32_t * word, uint32_t n, int shared) {
    const int op = shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
    syscall(SYS_futex, (uint32_t *)word, op, n > INT_MAX ? INT_MAX : (int)n, NULL, NULL, 0);
}

void htp_plat_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// ---------------------------------------------------------------------------
// Clocks
// ---------------------------------------------------------------------------

uint64_t htp_plat_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t htp_plat_cycles(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (uint64_t)__rdtsc();
#else
    return 0;
#endif
}

// ---------------------------------------------------------------------------
// Performance counters: perf_event_open(2) on the calling thread
// ---------------------------------------------------------------------------

struct htp_plat_pmu {
    uint32_t n;
    int      fd[HTP_PMU_SLOTS];  // -1: slot not open
};

// perf's type and config for counter c; 0 when c is none we know.
static int pmu_attr(uint32_t c, struct perf_event_attr * a) {
    static const struct {
        uint32_t type;
        uint64_t config;
    } map[HTP_PMU_COUNTER_COUNT] = {
        [HTP_PMU_INSTRUCTIONS]     = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
        [HTP_PMU_CYCLES]           = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
        [HTP_PMU_CACHE_REFS]       = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
        [HTP_PMU_CACHE_MISSES]     = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
        [HTP_PMU_BRANCHES]         = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
        [HTP_PMU_BRANCH_MISSES]    = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
        [HTP_PMU_STALLED_FRONTEND] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
        [HTP_PMU_STALLED_BACKEND]  = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
        [HTP_PMU_TASK_CLOCK_NS]    = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
        [HTP_PMU_CONTEXT_SWITCHES] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
        [HTP_PMU_CPU_MIGRATIONS]   = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
        [HTP_PMU_PAGE_FAULTS]      = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
        [HTP_PMU_MINOR_FAULTS]     = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
        [HTP_PMU_MAJOR_FAULTS]     = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    };
    if (c == HTP_PMU_OFF || c >= HTP_PMU_COUNTER_COUNT || c == HTP_PMU_HEXAGON_EVENT) {
        return 0;
    }
    memset(a, 0, sizeof(*a));
    a->size   = sizeof(*a);
    a->type   = map[c].type;
    a->config = map[c].config;
    // User-space counts only: what perf_event_paranoid 2 (the usual
    // default) allows an unprivileged process on its own threads.
    a->exclude_kernel = 1;
    a->exclude_hv     = 1;
    // With more events than the PMU has counters the kernel time-shares
    // them: read how long each was counting, to scale its count up.
    a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return 1;
}

static int pmu_reason(int err) {
    switch (err) {
        case ENOENT:
        case EOPNOTSUPP:
        case ENODEV:
            return HTP_PMU_REASON_NO_HARDWARE;
        case EACCES:
        case EPERM:
            return HTP_PMU_REASON_DENIED;
        default:
            return HTP_PMU_REASON_UNAVAILABLE;
    }
}

int htp_plat_pmu_open(const uint32_t * counters, const uint32_t * events, uint32_t n, struct htp_plat_pmu ** out,
                      uint32_t * mask) {
    (void)events;
    *out  = NULL;
    *mask = 0;
    if (n > HTP_PMU_SLOTS) {
        n = HTP_PMU_SLOTS;
    }
    struct htp_plat_pmu * p = malloc(sizeof(*p));
    if (p == NULL) {
        return HTP_PMU_REASON_UNAVAILABLE;
    }
    p->n       = n;
    int reason = HTP_PMU_REASON_OK;
    for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
        p->fd[k] = -1;
        if (k >= n || counters[k] == HTP_PMU_OFF) {
            continue;
        }
        struct perf_event_attr a;
        long                   fd  = -1;
        int                    err = EINVAL;
        if (pmu_attr(counters[k], &a)) {
            fd  = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
            err = errno;
        }
        if (fd < 0) {
            if (reason == HTP_PMU_REASON_OK) {
                reason = pmu_reason(err);
            }
            continue;
        }
        p->fd[k] = (int)fd;
        *mask |= 1u << k;
    }
    if (*mask == 0) {
        free(p);
    } else {
        *out = p;
    }
    return reason;
}

int htp_plat_pmu_read(struct htp_plat_pmu * p, uint64_t * values) {
    int rc = 0;
    for (uint32_t k = 0; k < p->n; k++) {
        uint64_t v[3];  // count, time enabled, time running (read_format above)
        values[k] = 0;
        if (p->fd[k] < 0) {
            continue;
        }
        if (read(p->fd[k], v, sizeof(v)) != (ssize_t)sizeof(v)) {
            rc = -1;
            continue;
        }
        // Multiplexed: the count scaled to the whole time enabled (an estimate).
        values[k] = v[2] > 0 && v[2] < v[1] ? (uint64_t)((double)v[0] * ((double)v[1] / (double)v[2])) : v[0];
    }
    return rc;
}

void htp_plat_pmu_close(struct htp_plat_pmu * p) {
    if (p == NULL) {
        return;
    }
    for (uint32_t k = 0; k < p->n; k++) {
        if (p->fd[k] >= 0) {
            close(p->fd[k]);
        }
    }
    free(p);
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

uint64_t htp_plat_page_size(void) {
    const long p = sysconf(_SC_PAGESIZE);
    return p < HTP_PAGE_SIZE ? HTP_PAGE_SIZE : (uint64_t)p;
}

// Anonymous, inaccessible, not backed by swap: address space only.
static void * reserve(void * addr, uint64_t size, int fixed) {
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (fixed ? MAP_FIXED : 0);
    return mmap(addr, (size_t)size, PROT_NONE, flags, -1, 0);
}

void * htp_plat_reserve(uint64_t size) {
    if (size == 0 || size > SIZE_MAX) {
        return NULL;
    }
    void * p = reserve(NULL, size, 0);
    return p == MAP_FAILED ? NULL : p;
}

int htp_plat_reserve_at(void * addr, uint64_t size) {
    return reserve(addr, size, 1) == MAP_FAILED ? -1 : 0;
}

void htp_plat_release(void * addr, uint64_t size) {
    munmap(addr, (size_t)size);
}

int64_t htp_plat_buffer_size(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
        return -1;
    }
    return (int64_t)st.st_size;
}

int htp_plat_map_buffer(void * addr, uint64_t size, int fd, int eager) {
    // Eager: fault every page in now (FastRPC's non-delayed map), so a mapping
    // that would fail later fails here, where the host can still react.
    const int flags = MAP_SHARED | MAP_FIXED | (eager ? MAP_POPULATE : 0);
    return mmap(addr, (size_t)size, PROT_READ | PROT_WRITE, flags, fd, 0) == MAP_FAILED ? -1 : 0;
}

int htp_plat_protect_none(void * addr, uint64_t size) {
    return mprotect(addr, (size_t)size, PROT_NONE) == 0 ? 0 : -1;
}

void htp_plat_buffer_close(int fd) {
    close(fd);
}

void * htp_plat_scratch_alloc(uint64_t size) {
    // Anonymous pages: only what kernels touch becomes resident.
    void * p = mmap(NULL, (size_t)(size ? size : 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void htp_plat_scratch_free(void * p, uint64_t size) {
    if (p != NULL) {
        munmap(p, (size_t)(size ? size : 1));
    }
}

// ---------------------------------------------------------------------------
// Control channel
// ---------------------------------------------------------------------------

int64_t htp_plat_ctl_recv(int ch, void * buf, size_t cap, int * fds, int max_fds, int * n_fds, int * truncated) {
    struct iovec iov = {buf, cap};
    union {
        struct cmsghdr h;
        uint8_t        b[CMSG_SPACE(sizeof(int) * MAX_FDS_PER_MSG)];
    } cbuf;
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov        = &iov;
    msg.msg_iovlen     = 1;
    msg.msg_control    = cbuf.b;
    msg.msg_controllen = sizeof(cbuf.b);

    ssize_t n;
    do {
        n = recvmsg(ch, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);

    *n_fds     = 0;
    *truncated = 0;
    if (n <= 0) {
        return n < 0 ? -1 : 0;
    }
    for (struct cmsghdr * c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        const int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*n_fds < max_fds) {
                fds[(*n_fds)++] = f;
            } else {
                close(f);
                *truncated = 1;
            }
        }
    }
    if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
        *truncated = 1;
    }
    return (int64_t)n;
}

int htp_plat_ctl_send(int ch, const void * buf, size_t len) {
    ssize_t n;
    do {
        n = send(ch, buf, len, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

// The directory of a listening socket must be ours alone: created here
// (mode 0700) when missing, else owned by our uid and closed to group and
// others. Whoever can enter it can connect; so only we can.
static int private_dir(const char * path) {
    char         dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const char * slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else {
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "htp-npu: cannot create the socket's directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        fprintf(stderr, "htp-npu: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        fprintf(stderr,
                "htp-npu: refusing to listen in %s: the socket's directory must be a directory of uid %u with mode "
                "0700 (it is %s, uid %u, mode %04o)\n",
                dir, (unsigned)geteuid(), S_ISDIR(st.st_mode) ? "a directory" : "not a directory", (unsigned)st.st_uid,
                (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

int htp_plat_ctl_listen(const char * path) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(addr.sun_path)) {
        fprintf(stderr, "htp-npu: socket path too long: %s\n", path);
        return -1;
    }
    strcpy(addr.sun_path, path);
    if (private_dir(path) != 0) {
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            fprintf(stderr, "htp-npu: %s exists and is not a socket; not replacing it\n", path);
            return -1;
        }
        unlink(path);  // a stale socket from an earlier run
    }
    int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (ls < 0) {
        fprintf(stderr, "htp-npu: socket: %s\n", strerror(errno));
        return -1;
    }
    const mode_t old_mask = umask(0177);  // the socket is born 0600
    const int    bound    = bind(ls, (struct sockaddr *)&addr, sizeof(addr));
    umask(old_mask);
    if (bound != 0 || chmod(path, 0600) != 0 || listen(ls, 16) != 0) {
        fprintf(stderr, "htp-npu: cannot listen on %s: %s\n", path, strerror(errno));
        close(ls);
        return -1;
    }
    return ls;
}

// A peer of another uid is refused: told nothing, its connection closed.
int htp_plat_ctl_accept(int listener) {
    for (;;) {
        int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno != EINTR && errno != ECONNABORTED) {
                fprintf(stderr, "htp-npu: accept: %s\n", strerror(errno));
                return -1;
            }
            continue;
        }
        struct ucred peer;
        socklen_t    len = sizeof(peer);
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || len != sizeof(peer)) {
            fprintf(stderr, "htp-npu: refusing a peer whose credentials are unknown: %s\n", strerror(errno));
            close(c);
            continue;
        }
        if (peer.uid != geteuid()) {
            fprintf(stderr, "htp-npu: refusing pid %d: uid %u is not ours (%u)\n", (int)peer.pid, (unsigned)peer.uid,
                    (unsigned)geteuid());
            close(c);
            continue;
        }
        return c;
    }
}

void htp_plat_ctl_close(int ch) {
    close(ch);
}

// ---------------------------------------------------------------------------
// Log and faults
// ---------------------------------------------------------------------------

void htp_plat_log_write(const char * line, size_t n) {
    while (n > 0) {
        ssize_t w = write(2, line, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR) {
                continue;
            }
            return;
        }
        line += w;
        n -= (size_t)w;
    }
}

_Noreturn void htp_plat_abort(const char * why) {
    fprintf(stderr, "htp-npu: fatal: %s\n", why);
    abort();
}

static void (*fault_report)(int is_bus_error, uintptr_t addr);

static void fault_handler(int sig, siginfo_t * si, void * uc) {
    (void)uc;
    fault_report(sig == SIGBUS, (uintptr_t)si->si_addr);
    // SA_RESETHAND restored the default action. Re-raise so that a signal
    // sent with kill() terminates too (it becomes pending while this handler
    // runs and is delivered on return); a real fault would also recur when
    // the faulting access is re-executed.
    raise(sig);
}

void htp_plat_on_fault(void (*report)(int is_bus_error, uintptr_t addr)) {
    fault_report = report;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fault_handler;
    sa.sa_flags     = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}
