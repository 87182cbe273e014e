// hexagon-linux.c: the NPU's platform (platform.h) for Hexagon Linux user
// space, on the freestanding runtime in hexagon/ and raw system calls; what
// the NPU runs on under qemu-hexagon.
//
// The one idea: every call is one or two system calls with the structures of
// the 32-bit asm-generic ABI spelled out here (Hexagon has no uapi of its
// own), because there is no libc to provide them:
//
//   struct stat64     st_mode at byte 16, st_size (int64) at 48
//   struct msghdr     seven 4-byte fields: name, namelen, iov, iovlen,
//                     control, controllen, flags; struct iovec {base, len}
//   struct cmsghdr    {len, level, type}, 12 bytes; data at 12, items padded
//                     to 4 bytes; one fd: len 16, SOL_SOCKET 1, SCM_RIGHTS 1
//   struct sigaction  {handler, flags, mask[2 words]}: no sa_restorer on
//                     Hexagon (the kernel, and qemu, supply the return path)
//   siginfo_t         si_signo, si_errno, si_code, then si_addr at byte 12
//   sockaddr_un       {u16 family, char path[108]}
//
// Page size: mmap, MAP_FIXED and mprotect work in the kernel's pages, which
// under qemu-hexagon are 64 KiB (AT_PAGESZ), not 4 KiB: addresses and sizes
// passed to reserve_at, map_buffer and protect_none must be multiples of
// htp_rt_start_page_size() there, or the call fails.
//
// Threads come from the runtime (hexagon/thread.h) with 1 MiB stacks.
// htp_plat_cycles reads the UPCYCLE register pair, readable in user mode;
// qemu-hexagon does not count it, so there it reads 0.

#include "platform.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon/futex.h"
#include "hexagon/start.h"
#include "hexagon/syscall.h"
#include "hexagon/thread.h"
#include "../../proto/htp-proto.h"  // HTP_PMU_REASON_* (this library has no src/ on its include path)

#define HTP_PLAT_STACK_BYTES (1u << 20)

#define E_INTR        4
#define E_EXIST       17
#define E_CONNABORTED 103

#define SIGBUS       7
#define SIGSEGV      11
#define SIGPIPE      13
#define SIG_IGN      1
#define SA_SIGINFO   0x00000004u
#define SA_NODEFER   0x40000000u
#define SA_RESETHAND 0x80000000u

#define PROT_NONE     0
#define PROT_READ     1
#define PROT_WRITE    2
#define MAP_SHARED    0x01
#define MAP_PRIVATE   0x02
#define MAP_FIXED     0x10
#define MAP_ANONYMOUS 0x20
#define MAP_NORESERVE 0x4000
#define MAP_POPULATE  0x8000

#define AF_UNIX             1
#define SOCK_SEQPACKET      5
#define SOCK_CLOEXEC        0x80000
#define SOL_SOCKET          1
#define SCM_RIGHTS          1
#define SO_PEERCRED         17
#define MSG_CTRUNC          0x8
#define MSG_TRUNC           0x20
#define MSG_NOSIGNAL        0x4000
#define MSG_CMSG_CLOEXEC    0x40000000
#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100

#define S_IFMT   0170000u
#define S_IFDIR  0040000u
#define S_IFSOCK 0140000u

#define CLOCK_MONOTONIC 1

struct kernel_sigaction {
    uintptr_t handler;
    uint32_t  flags;
    uint32_t  mask[2];
};

struct kernel_stat64 {
    uint64_t dev;
    uint64_t ino;
    uint32_t mode;
    uint32_t nlink;
    uint32_t uid;
    uint32_t gid;
    uint64_t rdev;
    uint64_t pad1;
    int64_t  size;
    int32_t  blksize;
    int32_t  pad2;
    int64_t  blocks;
    uint32_t times[6];
    uint32_t unused[2];
};

struct kernel_iovec {
    void * base;
    size_t len;
};

struct kernel_msghdr {
    void *                name;
    uint32_t              namelen;
    struct kernel_iovec * iov;
    size_t                iovlen;
    void *                control;
    size_t                controllen;
    int32_t               flags;
};

struct kernel_cmsghdr {
    size_t  len;
    int32_t level;
    int32_t type;
};

struct kernel_sockaddr_un {
    uint16_t family;
    char     path[108];
};

_Static_assert(offsetof(struct kernel_stat64, mode) == 16, "asm-generic stat64");
_Static_assert(offsetof(struct kernel_stat64, size) == 48, "asm-generic stat64");
_Static_assert(sizeof(struct kernel_cmsghdr) == 12, "32-bit cmsghdr");
_Static_assert(sizeof(struct kernel_msghdr) == 28, "32-bit msghdr");
_Static_assert(sizeof(void *) == 4, "the Hexagon Linux ABI is 32-bit");

// A log line of our own, "htp-npu: ...\n", in one write.
static void plat_log(const char * fmt, ...) __attribute__((format(printf, 1, 2)));

static void plat_log(const char * fmt, ...) {
    char    line[256];
    int     n = snprintf(line, sizeof(line), "htp-npu: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2) {
        n = (int)sizeof(line) - 2;
    }
    line[n++] = '\n';
    htp_plat_log_write(line, (size_t)n);
}

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

void htp_plat_init(void) {
    struct kernel_sigaction ign = {SIG_IGN, 0, {0, 0}};
    htp_sys_call4(HTP_NR_RT_SIGACTION, SIGPIPE, (long)&ign, 0, sizeof(ign.mask));
}

const char * htp_plat_getenv(const char * name) {
    return getenv(name);
}

uint32_t htp_plat_cpu_count(void) {
    uint32_t mask[32];  // 1024 CPUs
    memset(mask, 0, sizeof(mask));
    long n = htp_sys_call3(HTP_NR_SCHED_GETAFFINITY, 0, sizeof(mask), (long)mask);
    if (HTP_SYS_FAILED(n)) {
        return 1;
    }
    uint32_t count = 0;
    for (long i = 0; i < n / 4; i++) {
        count += (uint32_t)__builtin_popcount(mask[i]);
    }
    return count > 0 ? count : 1;
}

// ---------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------

// The platform's thread is the runtime's thread record itself.
static struct htp_rt_thread * rt_thread(struct htp_plat_thread * t) {
    return (struct htp_rt_thread *)(void *)t;
}

int htp_plat_thread_start(void (*fn)(void * arg), void * arg, struct htp_plat_thread ** out) {
    struct htp_rt_thread * t;
    if (htp_rt_thread_start(fn, arg, HTP_PLAT_STACK_BYTES, &t) != 0) {
        return -1;
    }
    *out = (struct htp_plat_thread *)(void *)t;
    return 0;
}

void htp_plat_thread_join(struct htp_plat_thread * t) {
    htp_rt_thread_join(rt_thread(t));
}

void htp_plat_thread_detach(struct htp_plat_thread * t) {
    htp_rt_thread_detach(rt_thread(t));
}

int htp_plat_thread_pin(uint32_t cpu) {
    uint32_t mask[32];
    if (cpu >= 32 * 32) {
        return -1;
    }
    memset(mask, 0, sizeof(mask));
    mask[cpu / 32] = 1u << (cpu % 32);
    long r         = htp_sys_call3(HTP_NR_SCHED_SETAFFINITY, 0, sizeof(mask), (long)mask);
    return HTP_SYS_FAILED(r) ? -1 : 0;
}

// ---------------------------------------------------------------------------
// Futex
// ---------------------------------------------------------------------------

void htp_plat_wait(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us, int shared) {
    int64_t ns = -1;
    if (timeout_us >= 0) {
        ns = timeout_us > INT64_MAX / 1000 ? -1 : timeout_us * 1000;
    }
    htp_rt_futex_wait(word, expected, ns, shared);
}

int htp_plat_wait_either(_Atomic uint32_t * priv, uint32_t priv_expected, _Atomic uint32_t * shared,
                         uint32_t shared_expected) {
    (void)priv, (void)priv_expected, (void)shared, (void)shared_expected;
    return -1;  // the runtime's futex calls take one word (futex.h)
}

void htp_plat_wake(_Atomic uint32_t * word, uint32_t n, int shared) {
    htp_rt_futex_wake(word, n, shared);
}

void htp_plat_relax(void) {
    // pause(#1): give the other hardware threads of the core the cycles.
    __asm__ volatile("pause(#1)" ::: "memory");
}

// ---------------------------------------------------------------------------
// Clocks
// ---------------------------------------------------------------------------

uint64_t htp_plat_now_us(void) {
    struct htp_rt_timespec64 ts = {0, 0};
    htp_sys_call2(HTP_NR_CLOCK_GETTIME64, CLOCK_MONOTONIC, (long)&ts);
    return (uint64_t)ts.sec * 1000000u + (uint64_t)ts.nsec / 1000u;
}

uint64_t htp_plat_cycles(void) {
    uint64_t c;
    __asm__ volatile("%0 = upcycle" : "=r"(c));
    return c;
}

// No PMU reaches user space here: qemu-hexagon emulates none, and a cDSP's
// is programmed through QuRT, not through Linux. Mode 2 falls back to 1.
int htp_plat_pmu_open(const uint32_t * counters, const uint32_t * events, uint32_t n, struct htp_plat_pmu ** out,
                      uint32_t * mask) {
    (void)counters;
    (void)events;
    (void)n;
    *out  = NULL;
    *mask = 0;
    return HTP_PMU_REASON_UNAVAILABLE;
}

int htp_plat_pmu_read(struct htp_plat_pmu * p, uint64_t * values) {
    (void)p;
    (void)values;
    return -1;
}

void htp_plat_pmu_close(struct htp_plat_pmu * p) {
    (void)p;
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

static long map(void * addr, uint64_t size, int prot, int flags, int fd) {
    if (size == 0 || size > SIZE_MAX) {
        return -22;  // EINVAL
    }
    return htp_sys_call6(HTP_NR_MMAP2, (long)addr, (long)(size_t)size, prot, flags, fd, 0);
}

void * htp_plat_reserve(uint64_t size) {
    long r = map(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
    return HTP_SYS_FAILED(r) ? NULL : (void *)r;
}

int htp_plat_reserve_at(void * addr, uint64_t size) {
    long r = map(addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1);
    return HTP_SYS_FAILED(r) ? -1 : 0;
}

void htp_plat_release(void * addr, uint64_t size) {
    htp_sys_call2(HTP_NR_MUNMAP, (long)addr, (long)(size_t)size);
}

int64_t htp_plat_buffer_size(int fd) {
    struct kernel_stat64 st;
    long                 r = htp_sys_call2(HTP_NR_FSTAT64, fd, (long)&st);
    if (HTP_SYS_FAILED(r) || (st.mode & 0170000u) != 0100000u || st.size < 0) {
        return -1;  // only a regular file (memfd) maps without surprises
    }
    return st.size;
}

uint64_t htp_plat_page_size(void) {
    return htp_rt_start_page_size();
}

int htp_plat_map_buffer(void * addr, uint64_t size, int fd, int eager) {
    // The host sizes buffers in 4 KiB pages, ours may be 64 KiB: a mapping's
    // last page can reach past the buffer's end, and qemu refuses to map a
    // file past its end. Grow the buffer with zeros to cover the page (the
    // host's own mapping, and its idea of the size, stay as they are).
    const int64_t have = htp_plat_buffer_size(fd);
    if (have >= 0 && (uint64_t)have < size &&
        HTP_SYS_FAILED(htp_sys_call4(HTP_NR_FTRUNCATE64, fd, 0, (long)(uint32_t)size, (long)(uint32_t)(size >> 32)))) {
        return -1;
    }
    int  flags = MAP_SHARED | MAP_FIXED | (eager ? MAP_POPULATE : 0);
    long r     = map(addr, size, PROT_READ | PROT_WRITE, flags, fd);
    if (HTP_SYS_FAILED(r)) {
        // A failed MAP_FIXED may have unmapped the range: make it a
        // reservation again so no other mapping can land there.
        htp_plat_reserve_at(addr, size);
        return -1;
    }
    return 0;
}

int htp_plat_protect_none(void * addr, uint64_t size) {
    long r = htp_sys_call3(HTP_NR_MPROTECT, (long)addr, (long)(size_t)size, PROT_NONE);
    return HTP_SYS_FAILED(r) ? -1 : 0;
}

void htp_plat_buffer_close(int fd) {
    htp_sys_call1(HTP_NR_CLOSE, fd);
}

void * htp_plat_scratch_alloc(uint64_t size) {
    long r = map(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    return HTP_SYS_FAILED(r) ? NULL : (void *)r;
}

void htp_plat_scratch_free(void * p, uint64_t size) {
    if (p != NULL) {
        htp_sys_call2(HTP_NR_MUNMAP, (long)p, (long)(size_t)size);
    }
}

// ---------------------------------------------------------------------------
// Control channel
// ---------------------------------------------------------------------------

#define CTL_EXTRA_FDS 16  // room to receive (and close) descriptors beyond max_fds

int64_t htp_plat_ctl_recv(int ch, void * buf, size_t cap, int * fds, int max_fds, int * n_fds, int * truncated) {
    if (max_fds < 0) {
        max_fds = 0;
    }
    // The control buffer as whole words, so the cmsghdr in it is aligned.
    uint32_t control[(sizeof(struct kernel_cmsghdr) + 4 * (64 + CTL_EXTRA_FDS)) / 4];
    int      room = max_fds + CTL_EXTRA_FDS;
    if (room > 64 + CTL_EXTRA_FDS) {
        room = 64 + CTL_EXTRA_FDS;
    }
    struct kernel_iovec  iov = {buf, cap};
    struct kernel_msghdr msg = {NULL, 0, &iov, 1, control, sizeof(struct kernel_cmsghdr) + 4 * (size_t)room, 0};

    long n;
    do {
        n = htp_sys_call3(HTP_NR_RECVMSG, ch, (long)&msg, MSG_CMSG_CLOEXEC);
    } while (n == -E_INTR);

    *n_fds     = 0;
    *truncated = 0;
    if (HTP_SYS_FAILED(n)) {
        return -1;
    }
    // Every SCM_RIGHTS item: keep the first max_fds descriptors, close the rest.
    uint8_t * p   = (uint8_t *)control;
    uint8_t * end = p + msg.controllen;
    while (p + sizeof(struct kernel_cmsghdr) <= end) {
        struct kernel_cmsghdr h;
        memcpy(&h, p, sizeof(h));
        if (h.len < sizeof(h) || h.len > (size_t)(end - p)) {
            break;
        }
        if (h.level == SOL_SOCKET && h.type == SCM_RIGHTS) {
            size_t k = (h.len - sizeof(h)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, p + sizeof(h) + i * sizeof(int), sizeof(fd));
                if (*n_fds < max_fds) {
                    fds[(*n_fds)++] = fd;
                } else {
                    htp_sys_call1(HTP_NR_CLOSE, fd);
                    *truncated = 1;
                }
            }
        }
        p += (h.len + 3) & ~(size_t)3;
    }
    if (msg.flags & (MSG_TRUNC | MSG_CTRUNC)) {
        *truncated = 1;
    }
    return n;
}

int htp_plat_ctl_send(int ch, const void * buf, size_t len) {
    struct kernel_iovec  iov = {(void *)buf, len};
    struct kernel_msghdr msg = {NULL, 0, &iov, 1, NULL, 0, 0};
    long                 n;
    do {
        n = htp_sys_call3(HTP_NR_SENDMSG, ch, (long)&msg, MSG_NOSIGNAL);
    } while (n == -E_INTR);
    return !HTP_SYS_FAILED(n) && (size_t)n == len ? 0 : -1;
}

struct kernel_ucred {
    int32_t  pid;
    uint32_t uid;
    uint32_t gid;
};

// The socket's directory must be ours alone (as on linux.c): created 0700
// when missing, else a directory of our uid closed to group and others.
static int private_dir(const char * path) {
    char         dir[108];
    const char * slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else {
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    }
    long r = htp_sys_call3(HTP_NR_MKDIRAT, AT_FDCWD, (long)dir, 0700);
    if (HTP_SYS_FAILED(r) && r != -E_EXIST) {
        plat_log("cannot create the socket's directory %s: error %ld", dir, -r);
        return -1;
    }
    struct kernel_stat64 st;
    r = htp_sys_call4(HTP_NR_FSTATAT64, AT_FDCWD, (long)dir, (long)&st, AT_SYMLINK_NOFOLLOW);
    if (HTP_SYS_FAILED(r)) {
        plat_log("%s: error %ld", dir, -r);
        return -1;
    }
    const uint32_t me = (uint32_t)htp_sys_call0(HTP_NR_GETEUID);
    if ((st.mode & S_IFMT) != S_IFDIR || st.uid != me || (st.mode & 077) != 0) {
        plat_log(
            "refusing to listen in %s: the socket's directory must be a directory of uid %u with mode 0700 (it "
            "is %s, uid %u, mode %04o)",
            dir, (unsigned)me, (st.mode & S_IFMT) == S_IFDIR ? "a directory" : "not a directory", (unsigned)st.uid,
            (unsigned)(st.mode & 07777));
        return -1;
    }
    return 0;
}

int htp_plat_ctl_listen(const char * path) {
    struct kernel_sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.family = AF_UNIX;
    if (strlen(path) >= sizeof(addr.path)) {
        plat_log("socket path too long: %s", path);
        return -1;
    }
    strcpy(addr.path, path);
    if (private_dir(path) != 0) {
        return -1;
    }
    struct kernel_stat64 st;
    if (!HTP_SYS_FAILED(htp_sys_call4(HTP_NR_FSTATAT64, AT_FDCWD, (long)path, (long)&st, AT_SYMLINK_NOFOLLOW))) {
        if ((st.mode & S_IFMT) != S_IFSOCK) {
            plat_log("%s exists and is not a socket; not replacing it", path);
            return -1;
        }
        htp_sys_call3(HTP_NR_UNLINKAT, AT_FDCWD, (long)path, 0);  // a stale socket from an earlier run
    }
    long s = htp_sys_call3(HTP_NR_SOCKET, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (HTP_SYS_FAILED(s)) {
        plat_log("socket: error %ld", -s);
        return -1;
    }
    const long old_mask = htp_sys_call1(HTP_NR_UMASK, 0177);  // the socket is born 0600
    long       r        = htp_sys_call3(HTP_NR_BIND, s, (long)&addr, sizeof(addr));
    htp_sys_call1(HTP_NR_UMASK, old_mask);
    if (!HTP_SYS_FAILED(r)) {
        r = htp_sys_call3(HTP_NR_FCHMODAT, AT_FDCWD, (long)path, 0600);
    }
    if (!HTP_SYS_FAILED(r)) {
        r = htp_sys_call2(HTP_NR_LISTEN, s, 16);
    }
    if (HTP_SYS_FAILED(r)) {
        plat_log("cannot listen on %s: error %ld", path, -r);
        htp_sys_call1(HTP_NR_CLOSE, s);
        return -1;
    }
    return (int)s;
}

// A peer of another uid is refused: told nothing, its connection closed.
int htp_plat_ctl_accept(int listener) {
    const uint32_t me = (uint32_t)htp_sys_call0(HTP_NR_GETEUID);
    for (;;) {
        long c = htp_sys_call4(HTP_NR_ACCEPT4, listener, 0, 0, SOCK_CLOEXEC);
        if (HTP_SYS_FAILED(c)) {
            if (c != -E_INTR && c != -E_CONNABORTED) {
                plat_log("accept: error %ld", -c);
                return -1;
            }
            continue;
        }
        struct kernel_ucred peer;
        uint32_t            len = sizeof(peer);
        long                r   = htp_sys_call5(HTP_NR_GETSOCKOPT, c, SOL_SOCKET, SO_PEERCRED, (long)&peer, (long)&len);
        if (HTP_SYS_FAILED(r) || len != sizeof(peer)) {
            plat_log("refusing a peer whose credentials are unknown: error %ld", -r);
            htp_sys_call1(HTP_NR_CLOSE, c);
            continue;
        }
        if (peer.uid != me) {
            plat_log("refusing pid %d: uid %u is not ours (%u)", (int)peer.pid, (unsigned)peer.uid, (unsigned)me);
            htp_sys_call1(HTP_NR_CLOSE, c);
            continue;
        }
        return (int)c;
    }
}

void htp_plat_ctl_close(int ch) {
    htp_sys_call1(HTP_NR_CLOSE, ch);
}

// ---------------------------------------------------------------------------
// Log and faults
// ---------------------------------------------------------------------------

void htp_plat_log_write(const char * line, size_t n) {
    while (n > 0) {
        long w = htp_sys_call3(HTP_NR_WRITE, 2, (long)line, (long)n);
        if (w == -E_INTR) {
            continue;
        }
        if (HTP_SYS_FAILED(w) || w == 0) {
            return;
        }
        line += w;
        n -= (size_t)w;
    }
}

_Noreturn void htp_plat_abort(const char * why) {
    plat_log("fatal: %s", why);
    abort();
}

static void (*_Atomic fault_report)(int is_bus_error, uintptr_t addr);

// SA_RESETHAND has put the default action back and SA_NODEFER leaves the
// signal unblocked, so re-sending it ends the process by it at once.
static void fault_handler(int sig, void * info, void * uc) {
    (void)uc;
    uintptr_t addr;
    memcpy(&addr, (uint8_t *)info + 12, sizeof(addr));  // si_addr
    void (*report)(int, uintptr_t) = atomic_load(&fault_report);
    if (report != NULL) {
        report(sig == SIGBUS, addr);
    }
    htp_sys_call3(HTP_NR_TGKILL, htp_sys_call0(HTP_NR_GETPID), htp_sys_call0(HTP_NR_GETTID), sig);
}

void htp_plat_on_fault(void (*report)(int is_bus_error, uintptr_t addr)) {
    atomic_store(&fault_report, report);
    struct kernel_sigaction sa = {(uintptr_t)fault_handler, SA_SIGINFO | SA_RESETHAND | SA_NODEFER, {0, 0}};
    htp_sys_call4(HTP_NR_RT_SIGACTION, SIGSEGV, (long)&sa, 0, sizeof(sa.mask));
    htp_sys_call4(HTP_NR_RT_SIGACTION, SIGBUS, (long)&sa, 0, sizeof(sa.mask));
}
