// test-hexagon-driver.c: runs the Hexagon smoke test (test-hexagon-rt) under
// qemu-hexagon from the build machine, and plays the host's side where the
// test needs one:
//
//   smoke   the runtime and platform checks; exit status 0 wanted
//   ipc     fd 3 of the Hexagon process is one end of a SOCK_SEQPACKET
//           socketpair: a memfd goes over by SCM_RIGHTS (htp_plat_ctl_recv,
//           htp_plat_buffer_size, htp_plat_map_buffer on the other side), both
//           processes write into it, each wakes the other by a process-shared
//           futex on a word in it, and truncated and over-full messages must
//           be flagged (the exchange is listed at run_ipc in test-hexagon-rt.c)
//   fault   the fault report must name the address touched, then the
//           process must die of SIGSEGV
//   bus     the same for SIGBUS (qemu-hexagon 7.2 reports a SIGBUS address one
//           64 KiB guest page above the one touched, so the address is only
//           checked to within a page)
//   abort   htp_plat_abort's line on stderr, then death by SIGABRT
//   cross   the digests of rt-crosscheck.h from the Hexagon build must equal
//           those of the same runtime sources built for this machine
//
// Usage: test-hexagon-driver MODE QEMU BINARY [WHY-NOT-BUILT]. Exit 0 pass,
// 1 fail, 77 skip (qemu-hexagon missing, or the binary was not built because
// clang's Hexagon target or ld.lld is missing: WHY-NOT-BUILT says which).

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// The runtime's portable sources, built here under test names (rt-name.h).
float              htp_rt_test_expf(float);
float              htp_rt_test_logf(float);
float              htp_rt_test_powf(float, float);
float              htp_rt_test_sinf(float);
float              htp_rt_test_cosf(float);
float              htp_rt_test_sqrtf(float);
float              htp_rt_test_tanhf(float);
float              htp_rt_test_erff(float);
float              htp_rt_test_floorf(float);
float              htp_rt_test_roundf(float);
float              htp_rt_test_nearbyintf(float);
double             htp_rt_test_exp(double);
double             htp_rt_test_log(double);
double             htp_rt_test_tanh(double);
double             htp_rt_test_sqrt(double);
double             htp_rt_test_floor(double);
double             htp_rt_test_pow(double, double);
int                htp_rt_test_snprintf(char * buf, size_t size, const char * fmt, ...);
double             htp_rt_test_strtod(const char * s, char ** end);
unsigned long long htp_rt_test_strtoull(const char * s, char ** end, int base);
float              __hexagon_divsf3(float, float);
double             __hexagon_divdf3(double, double);

#define RT(name)      htp_rt_test_##name
#define RT_FDIV(a, b) __hexagon_divsf3((a), (b))
#define RT_DDIV(a, b) __hexagon_divdf3((a), (b))
#include "rt-crosscheck.h"

static int   n_fail = 0;
static pid_t child  = -1;

static void check(int ok, const char * what, const char * detail) {
    printf("%s driver: %-22s %s\n", ok ? "ok  " : "FAIL", what, detail);
    fflush(stdout);
    if (!ok) {
        n_fail++;
    }
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "FAIL driver: timed out\n";
    if (child > 0) {
        kill(child, SIGKILL);
    }
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

// qemu-hexagon -cpu v67 BINARY [arg], with sock as its fd 3 and its stderr
// (stdout when out) into err_fd when those are given.
static pid_t spawn(const char * qemu, const char * bin, const char * arg, int sock, int err_fd, int out) {
    pid_t p = fork();
    if (p != 0) {
        return p;
    }
    // dup2 clears close-on-exec on the copy, but does nothing when sock is
    // already 3: clear it by hand then.
    if (sock >= 0 && (sock == 3 ? fcntl(3, F_SETFD, 0) : dup2(sock, 3)) < 0) {
        _exit(126);
    }
    if (err_fd >= 0 && dup2(err_fd, out ? 1 : 2) < 0) {
        _exit(126);
    }
    setenv("HTP_RT_SMOKE", "1", 1);
    char * argv[] = {(char *)qemu, "-cpu", "v67", (char *)bin, (char *)arg, NULL};
    execvp(qemu, argv);
    _exit(127);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int futex(_Atomic uint32_t * w, int op, uint32_t val, const struct timespec * ts) {
    return (int)syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static int send_with_fds(int s, const void * buf, size_t len, const int * fds, int n) {
    union {
        struct cmsghdr h;
        char           b[CMSG_SPACE(sizeof(int) * 4)];
    } c;
    struct iovec  iov = {(void *)buf, len};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov    = &iov;
    m.msg_iovlen = 1;
    if (n > 0) {
        m.msg_control      = c.b;
        m.msg_controllen   = CMSG_SPACE(sizeof(int) * (size_t)n);
        struct cmsghdr * h = CMSG_FIRSTHDR(&m);
        h->cmsg_level      = SOL_SOCKET;
        h->cmsg_type       = SCM_RIGHTS;
        h->cmsg_len        = CMSG_LEN(sizeof(int) * (size_t)n);
        memcpy(CMSG_DATA(h), fds, sizeof(int) * (size_t)n);
    }
    return sendmsg(s, &m, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static int wait_exit(pid_t p, int * status) {
    while (waitpid(p, status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

static int run_ipc(const char * qemu, const char * bin) {
    int sv[2];
    // CLOEXEC: the child must hold only its end (dup2 onto fd 3 keeps that one),
    // or it would never see the hang-up.
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        check(0, "socketpair", strerror(errno));
        return 1;
    }
    const size_t size = 131072;  // two qemu-hexagon pages
    int          fd   = memfd_create("htp-ipc", MFD_CLOEXEC);
    uint8_t *    mem  = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)size) == 0) {
        mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (mem == MAP_FAILED) {
        check(0, "memfd", strerror(errno));
        return 1;
    }
    for (int i = 64; i < 4096; i++) {
        mem[i] = (uint8_t)(i * 7);
    }
    _Atomic uint32_t * words = (_Atomic uint32_t *)mem;

    child = spawn(qemu, bin, "ipc", sv[1], -1, 0);
    close(sv[1]);
    int s = sv[0];
    check(send_with_fds(s, "map", 4, &fd, 1) == 0, "send memfd", "SCM_RIGHTS, one fd");

    // The child sets word 0 200 ms after mapping and wakes it by its shared
    // futex: with 5 s timeouts, done within 3 s only if the wake arrived.
    double t0 = now_s();
    while (atomic_load(&words[0]) == 0 && now_s() - t0 < 3) {
        struct timespec ts = {5, 0};
        futex(&words[0], FUTEX_WAIT, 0, &ts);
    }
    int bad = 0;
    for (int i = 0; i < 256; i++) {
        bad += mem[8192 + i] != (uint8_t)(255 - i);
    }
    char d[96];
    snprintf(d, sizeof d, "woken after %.0f ms; word and bytes seen through the memfd", (now_s() - t0) * 1000);
    check(atomic_load(&words[0]) == 1 && now_s() - t0 < 3 && bad == 0, "child's wake, writes", d);

    char    buf[64];
    ssize_t n = recv(s, buf, sizeof buf, 0);
    check(n == 7 && strcmp(buf, "mapped") == 0, "recv reply", "\"mapped\"");

    struct timespec nap = {0, 200000000};
    nanosleep(&nap, NULL);  // the child is asleep on word 1 by now
    atomic_store(&words[1], 1);
    int woken = futex(&words[1], FUTEX_WAKE, 1, NULL);
    snprintf(d, sizeof d, "word 1: %d waiter woken (want 1)", woken);
    check(woken == 1, "futex wake", d);

    char big[100];
    memset(big, 'y', sizeof big);
    check(send_with_fds(s, big, sizeof big, NULL, 0) == 0, "send 100 bytes", "into the child's 10");
    int three[3] = {fd, fd, fd};
    check(send_with_fds(s, "fds", 4, three, 3) == 0, "send 3 fds", "into the child's room for 1");

    n = recv(s, buf, sizeof buf, 0);
    check(n == 5 && strcmp(buf, "done") == 0, "recv done", "\"done\"");
    close(s);

    int status = 0;
    wait_exit(child, &status);
    snprintf(d, sizeof d, "status 0x%x", status);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit", d);
    return n_fail ? 1 : 0;
}

// Runs the child with its stderr (or stdout) captured; returns its wait status.
static int run_capture(const char * qemu, const char * bin, const char * mode, char * err, size_t cap, int out) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        return -1;
    }
    child = spawn(qemu, bin, mode, -1, p[1], out);
    close(p[1]);
    size_t len = 0;
    for (;;) {
        ssize_t r = read(p[0], err + len, cap - 1 - len);
        if (r > 0) {
            len += (size_t)r;
        } else if (r == 0 || errno != EINTR || len >= cap - 1) {
            break;
        }
    }
    err[len] = '\0';
    close(p[0]);
    fputs(err, stderr);
    int status = 0;
    wait_exit(child, &status);
    return status;
}

static unsigned long after(const char * text, const char * key) {
    const char * p = strstr(text, key);
    return p ? strtoul(p + strlen(key), NULL, 16) : 0;
}

static int run_fault(const char * qemu, const char * bin, int bus) {
    char err[4096];
    int  status = run_capture(qemu, bin, bus ? "bus" : "fault", err, sizeof err, 0);
    int  sig    = bus ? SIGBUS : SIGSEGV;
    char d[160];
    snprintf(d, sizeof d, "status 0x%x (want signal %d)", status, sig);
    check(WIFSIGNALED(status) && WTERMSIG(status) == sig, bus ? "death by SIGBUS" : "death by SIGSEGV", d);

    unsigned long target = after(err, "fault target: ");
    unsigned long seen   = after(err, bus ? "fault report: bus 1 at " : "fault report: bus 0 at ");
    snprintf(d, sizeof d, "target 0x%lx, reported 0x%lx", target, seen);
    int ok =
        target != 0 && seen != 0 && (bus ? (seen > target ? seen - target : target - seen) <= 0x10000 : seen == target);
    check(ok, "fault report", d);
    return n_fail ? 1 : 0;
}

static int run_abort(const char * qemu, const char * bin) {
    char err[4096];
    int  status = run_capture(qemu, bin, "abort", err, sizeof err, 0);
    char d[64];
    snprintf(d, sizeof d, "status 0x%x", status);
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "death by SIGABRT", d);
    check(strstr(err, "htp-npu: fatal: smoke abort\n") != NULL, "abort message", "on stderr");
    return n_fail ? 1 : 0;
}

static int run_cross(const char * qemu, const char * bin) {
    static char      text[8192];
    int              status = run_capture(qemu, bin, "cross", text, sizeof text, 1);
    struct htp_cross d[40];
    int              n = htp_cross_run(d);
    char             d_msg[160];
    snprintf(d_msg, sizeof d_msg, "status 0x%x", status);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "cross run", d_msg);
    for (int i = 0; i < n; i++) {
        char want[96];
        snprintf(want, sizeof want, "digest %s = %016llx\n", d[i].name, (unsigned long long)d[i].digest);
        snprintf(d_msg, sizeof d_msg, "host %016llx: %s", (unsigned long long)d[i].digest,
                 strstr(text, want) ? "same on Hexagon" : "Hexagon differs");
        char what[40];
        snprintf(what, sizeof what, "cross %s", d[i].name);
        check(strstr(text, want) != NULL, what, d_msg);
    }
    return n_fail ? 1 : 0;
}

int main(int argc, char ** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s smoke|ipc|fault|bus|abort|cross QEMU BINARY [WHY-NOT-BUILT]\n", argv[0]);
        return 1;
    }
    const char * mode = argv[1];
    const char * qemu = argv[2];
    const char * bin  = argv[3];
    if (argc > 4 && argv[4][0] != '\0') {
        printf("SKIP: test-hexagon-rt not built: %s\n", argv[4]);
        return 77;
    }
    // QEMU is a path, or a name looked up on PATH (run-on-hexagon.sh has
    // already checked that qemu-hexagon is there).
    if (qemu[0] == '\0' || (strchr(qemu, '/') != NULL && access(qemu, X_OK) != 0)) {
        printf("SKIP: no qemu-hexagon (%s)\n", qemu[0] ? qemu : "not found");
        return 77;
    }
    if (access(bin, R_OK) != 0) {
        printf("SKIP: %s: %s\n", bin, strerror(errno));
        return 77;
    }
    signal(SIGALRM, on_alarm);
    alarm(120);
    if (strcmp(mode, "ipc") == 0) {
        return run_ipc(qemu, bin);
    }
    if (strcmp(mode, "fault") == 0 || strcmp(mode, "bus") == 0) {
        return run_fault(qemu, bin, strcmp(mode, "bus") == 0);
    }
    if (strcmp(mode, "abort") == 0) {
        return run_abort(qemu, bin);
    }
    if (strcmp(mode, "cross") == 0) {
        return run_cross(qemu, bin);
    }
    child      = spawn(qemu, bin, NULL, -1, -1, 0);
    int status = 0;
    wait_exit(child, &status);
    char d[64];
    snprintf(d, sizeof d, "status 0x%x", status);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "smoke exit", d);
    return n_fail ? 1 : 0;
}
