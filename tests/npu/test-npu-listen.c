// test-npu-listen: the local surface of `htp-npu --listen PATH`.
//  - The socket's missing directory is created 0700; the socket is 0600.
//  - A peer of our uid gets a hello answered.
//  - A directory open to others, one of another uid, or a non-socket file at
//    PATH makes htp-npu refuse to start, saying why, and loses nothing.
//  - As root: an NPU run as uid 65534 refuses root's connection (SO_PEERCRED)
//    and answers a peer of uid 65534.
// The NPU is argv[1], or GGML_HEXAGON_NPU run through GGML_HEXAGON_NPU_EXEC
// (the Hexagon build under qemu, from tests/run-on-hexagon.sh).
// Usage: test-npu-listen PATH-TO-htp-npu

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/htp-proto.h"
#include "test-check.h"

#define NOBODY 65534

static const char * npu_path;
static char         launcher[256];  // GGML_HEXAGON_NPU_EXEC (a child splits its copy into words)
static char         base[] = "/tmp/test-npu-listen-XXXXXX";

struct npu {
    pid_t pid;
    int   err;  // read end of its stderr
};

// Start htp-npu --listen path, as uid `as` when as >= 0.
static struct npu start(const char * path, int as) {
    struct npu n = {-1, -1};
    int        p[2];
    if (pipe(p) != 0) {
        return n;
    }
    n.pid = fork();
    if (n.pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        if (as >= 0 && (setgid((gid_t)as) != 0 || setuid((uid_t)as) != 0)) {
            _exit(126);
        }
        char * argv[16];
        int    argc = 0;
        for (char * w = strtok(launcher, " "); w && argc < 10; w = strtok(NULL, " ")) {
            argv[argc++] = w;
        }
        argv[argc++] = (char *)npu_path;
        argv[argc++] = "--listen";
        argv[argc++] = (char *)path;
        argv[argc]   = NULL;
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    n.err = p[0];
    return n;
}

// Everything the NPU wrote to stderr until it exits or `ms` pass.
static void read_err(struct npu * n, char * buf, size_t cap, int ms) {
    size_t len = 0;
    for (struct pollfd p = {n->err, POLLIN, 0}; len + 1 < cap && poll(&p, 1, ms) == 1;) {
        const ssize_t k = read(n->err, buf + len, cap - 1 - len);
        if (k <= 0) {
            break;
        }
        len += (size_t)k;
    }
    buf[len] = '\0';
}

// The NPU's exit status, waiting up to 60 s (qemu starts slowly); -1 if it
// is still running (it is then killed).
static int stop(struct npu * n, int expect_exit) {
    int status = 0;
    for (int i = 0; expect_exit && i < 6000; i++) {
        if (waitpid(n->pid, &status, WNOHANG) == n->pid) {
            close(n->err);
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(10000);
    }
    kill(n->pid, SIGKILL);
    waitpid(n->pid, &status, 0);
    close(n->err);
    return -1;
}

// Connect to path, retrying while the NPU starts (up to 60 s).
static int connect_to(const char * path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    for (int i = 0; i < 6000; i++) {
        const int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (s >= 0 && connect(s, (struct sockaddr *)&addr, sizeof addr) == 0) {
            return s;
        }
        close(s);
        usleep(10000);
    }
    return -1;
}

// 1 when a hello on s is answered with our protocol version, 0 when the
// connection is closed without an answer, -1 on anything else.
static int hello(int s) {
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    memset(&req, 0, sizeof req);
    req.type            = HTP_CTL_HELLO;
    req.u.hello.version = HTP_PROTO_VERSION;
    if (send(s, &req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req) {
        return errno == EPIPE || errno == ECONNRESET ? 0 : -1;
    }
    struct pollfd p = {s, POLLIN, 0};
    if (poll(&p, 1, 60000) != 1) {
        return -1;
    }
    const ssize_t k = recv(s, &rsp, sizeof rsp, 0);
    if (k == 0 || (k < 0 && errno == ECONNRESET)) {
        return 0;
    }
    return k == (ssize_t)sizeof rsp && rsp.type == HTP_CTL_HELLO && rsp.status == HTP_STATUS_OK &&
                   rsp.u.hello.version == HTP_PROTO_VERSION ?
               1 :
               -1;
}

static int hello_at(const char * path) {
    const int s = connect_to(path);
    const int r = s >= 0 ? hello(s) : -1;
    close(s);
    return r;
}

// htp-npu must refuse to listen at path, exit 1 and say `why`.
static void expect_refusal(const char * what, const char * path, const char * why) {
    struct npu n = start(path, -1);
    char       err[2048];
    read_err(&n, err, sizeof err, 60000);
    const int rc = stop(&n, 1);
    CHECK(rc == 1 && strstr(err, why) != NULL, "%s: exit %d, stderr \"%s\"", what, rc, err);
}

static void own_uid(void) {
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/private", base);
    snprintf(path, sizeof path, "%s/npu.sock", dir);
    struct npu n = start(path, -1);
    CHECK(hello_at(path) == 1, "a peer of our uid: no hello");
    struct stat d, s;
    CHECK(stat(dir, &d) == 0 && S_ISDIR(d.st_mode) && (d.st_mode & 0777) == 0700, "the directory: mode %04o",
          (unsigned)(d.st_mode & 07777));
    CHECK(stat(path, &s) == 0 && S_ISSOCK(s.st_mode) && (s.st_mode & 0777) == 0600, "the socket: mode %04o",
          (unsigned)(s.st_mode & 07777));
    stop(&n, 0);

    // Started again over the stale socket of the killed one: replaced.
    n = start(path, -1);
    CHECK(hello_at(path) == 1, "over a stale socket: no hello");
    stop(&n, 0);
    printf("own uid: directory 0700, socket 0600, hello answered (twice, the stale socket replaced)\n");
}

static void refusals(void) {
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/open", base);
    CHECK(mkdir(dir, 0755) == 0 && chmod(dir, 0755) == 0, "mkdir %s", dir);
    snprintf(path, sizeof path, "%s/npu.sock", dir);
    expect_refusal("a directory open to others", path, "mode 0700");

    // A file that is not a socket stays as it was.
    snprintf(dir, sizeof dir, "%s/file", base);
    CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    snprintf(path, sizeof path, "%s/npu.sock", dir);
    FILE * f = fopen(path, "w");
    CHECK(f && fputs("keep me\n", f) >= 0 && fclose(f) == 0, "write %s", path);
    expect_refusal("a regular file at the path", path, "not a socket");
    char  buf[16] = {0};
    FILE *g       = fopen(path, "r");
    CHECK(g && fgets(buf, sizeof buf, g) && strcmp(buf, "keep me\n") == 0, "the file was changed");
    if (g) {
        fclose(g);
    }

    // /tmp itself is shared: no socket there.
    expect_refusal("the shared /tmp", "/tmp/htp-npu-test-listen.sock", "mode 0700");
    printf("refused: a directory of mode 0755, a regular file at the path (kept), /tmp\n");
}

// As root: an NPU of uid NOBODY in its own private directory.
static void other_uid(void) {
    if (geteuid() != 0) {
        printf("SKIP (part): a peer of another uid needs root to run one; the checks above ran\n");
        return;
    }
    char dir[128], path[160], bin[160];
    // The NPU binary copied where uid NOBODY can run it (the build tree may
    // sit under a directory it cannot enter).
    snprintf(bin, sizeof bin, "%s/htp-npu", base);
    {
        const int in = open(npu_path, O_RDONLY), out = open(bin, O_WRONLY | O_CREAT | O_TRUNC, 0755);
        char      b[1 << 16];
        ssize_t   k;
        while (in >= 0 && out >= 0 && (k = read(in, b, sizeof b)) > 0) {
            CHECK(write(out, b, (size_t)k) == k, "copy the NPU");
        }
        close(in);
        close(out);
    }
    snprintf(dir, sizeof dir, "%s/nobody", base);
    CHECK(chmod(base, 0711) == 0 && mkdir(dir, 0700) == 0 && chown(dir, NOBODY, NOBODY) == 0, "prepare %s", dir);
    snprintf(path, sizeof path, "%s/npu.sock", dir);
    const char * saved = npu_path;
    npu_path           = bin;
    struct npu n       = start(path, NOBODY);
    npu_path           = saved;

    // Root may enter the directory, but is not the NPU's uid: refused.
    const int r = hello_at(path);
    CHECK(r == 0, "a root peer of a uid-%d NPU: hello gave %d, want the connection closed", NOBODY, r);

    // A peer of the NPU's own uid is served.
    const pid_t c = fork();
    if (c == 0) {
        _exit(setgid(NOBODY) == 0 && setuid(NOBODY) == 0 && hello_at(path) == 1 ? 0 : 1);
    }
    int status = 0;
    waitpid(c, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a peer of uid %d: no hello", NOBODY);
    char err[2048];
    read_err(&n, err, sizeof err, 200);
    CHECK(strstr(err, "refusing pid") != NULL && strstr(err, "uid 0 is not ours") != NULL,
          "the NPU did not say whom it refused: \"%s\"", err);
    stop(&n, 0);
    chmod(base, 0700);
    printf("uid %d NPU: root's connection closed unanswered (\"refusing pid ... uid 0 is not ours\"), uid %d "
           "served\n",
           NOBODY, NOBODY);
}

int main(int argc, char ** argv) {
    printf("test-npu-listen: htp-npu --listen: a private directory, a 0600 socket, peers of our uid only\n");
    const char * hex = getenv("GGML_HEXAGON_NPU");
    npu_path         = hex && *hex ? hex : argc > 1 ? argv[1] : "";
    if (access(npu_path, X_OK) != 0) {
        fprintf(stderr, "usage: %s PATH-TO-htp-npu\n", argv[0]);
        return 77;
    }
    const char * exec = getenv("GGML_HEXAGON_NPU_EXEC");
    snprintf(launcher, sizeof launcher, "%s", hex && *hex && exec ? exec : "");
    printf("the NPU: %s%s%s\n", launcher, *launcher ? " " : "", npu_path);
    signal(SIGPIPE, SIG_IGN);
    CHECK_OR_RETURN(1, mkdtemp(base) != NULL, "mkdtemp: %s", strerror(errno));

    own_uid();
    refusals();
    other_uid();

    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    if (system(cmd) != 0) {
        printf("could not remove %s\n", base);
    }
    return test_exit_code("test-npu-listen");
}
