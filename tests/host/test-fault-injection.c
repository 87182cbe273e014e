// test-fault-injection: every fault-injection site (contract/fault-plan.h),
// walked SQLite style. For each site, and for a fault of one call and a
// persistent one, the N-th call fails for N = 1, 2, ... until a run makes
// fewer than N calls there. Each run is a child process doing, twice over,
// the same work on two sessions of one NPU (HTP0 and HTP0:1): a backend,
// a buffer, a matrix product, an event recorded and waited for, the result
// read back. Of every run:
//  - it ends normally (no crash, no abort);
//  - the failure is reported by a warning or error naming what failed;
//  - a result is either right or untouched (the failed call left it), never
//    wrong;
//  - a one-call fault costs at most the work it hit: the other session's work
//    of that round succeeds, and the second round succeeds on both (a new
//    backend replaces a failed session);
//  - it leaves no more descriptors, memfds or NPU processes than a run
//    without faults (memory leaks: the ASan build's LeakSanitizer).
// A malformed GGML_HTP_FAULT is refused as a whole, with a warning.
//
// Usage: test-fault-injection            (walks every site)
//        test-fault-injection --run      (one run, under GGML_HTP_FAULT)

#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "test-check.h"

enum { K = 64, M = 48, N = 8 };

// ---------------------------------------------------------------- one run

static void log_all(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        fprintf(stderr, "%s", text);
    }
}

static void count_fds(int * fds, int * memfds) {
    *fds = *memfds = 0;
    DIR * d        = opendir("/proc/self/fd");
    for (struct dirent * e; d && (e = readdir(d)) != NULL;) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        const ssize_t k = readlink(path, target, sizeof target - 1);
        if (e->d_name[0] == '.') {
            continue;
        }
        (*fds)++;
        *memfds += k > 0 && strncmp(target, "/memfd:", 7) == 0;
    }
    if (d) {
        closedir(d);
        (*fds)--;  // the directory's own
    }
}

// Live (not zombie) and zombie children.
static void count_children(int * live, int * zombies) {
    *live = *zombies = 0;
    DIR * d          = opendir("/proc");
    for (struct dirent * e; d && (e = readdir(d)) != NULL;) {
        const int pid = atoi(e->d_name);
        char      path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE * f = pid > 0 ? fopen(path, "r") : NULL;
        if (!f) {
            continue;
        }
        const size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len]           = '\0';
        const char * close = strrchr(buf, ')');
        char         state;
        int          ppid;
        if (close && sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == (int)getpid()) {
            *zombies += state == 'Z';
            *live += state != 'Z';
        }
    }
    if (d) {
        closedir(d);
    }
}

enum outcome { OK, FAILED, WRONG };
static const char * const outcome_names[] = {"ok", "failed", "WRONG"};

// The work on one device: W (M x K) times X (N x K), read back.
static enum outcome work(ggml_backend_dev_t dev) {
    ggml_backend_t be = ggml_backend_dev_init(dev, NULL);
    if (!be) {
        return FAILED;
    }
    struct ggml_init_params ip  = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true};
    struct ggml_context *   ctx = ggml_init(ip);
    struct ggml_tensor *    w   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *    x   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor *    y   = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph *    gf  = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    enum outcome          r   = FAILED;
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (buf) {
        static float wv[M * K], xv[N * K], yv[N * M];
        for (int i = 0; i < M * K; i++) {
            wv[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        }
        for (int i = 0; i < N * K; i++) {
            xv[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        }
        ggml_backend_tensor_set(w, wv, 0, sizeof wv);
        ggml_backend_tensor_set(x, xv, 0, sizeof xv);
        const enum ggml_status st = ggml_backend_graph_compute_async(be, gf);
        ggml_backend_event_t   ev = ggml_backend_event_new(dev);
        if (ev) {
            ggml_backend_event_record(ev, be);
            ggml_backend_event_synchronize(ev);
            ggml_backend_event_free(ev);
        }
        for (int i = 0; i < N * M; i++) {
            yv[i] = NAN;  // what an untouched result reads as
        }
        ggml_backend_tensor_get_async(be, y, yv, 0, sizeof yv);
        ggml_backend_synchronize(be);
        int right = 0, untouched = 0;
        for (int n = 0; n < N; n++) {
            for (int m = 0; m < M; m++) {
                double want = 0;
                for (int k = 0; k < K; k++) {
                    want += (double)wv[m * K + k] * xv[n * K + k];
                }
                const float got = yv[n * M + m];
                untouched += isnan(got);
                right += fabs(got - want) <= 1e-4 * (1 + fabs(want));
            }
        }
        // Right, or failed (an error status, or the read left the result
        // untouched); anything else is a wrong result passed off as one.
        if (right == N * M && st == GGML_STATUS_SUCCESS) {
            r = OK;
        } else if (untouched == N * M) {
            r = FAILED;
        } else {
            r = WRONG;
        }
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
    ggml_backend_free(be);
    return r;
}

// Prints "round R DEV: outcome" lines, then the descriptor and child counts.
static int run_child(void) {
    ggml_log_set(log_all, NULL);
    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    if (ggml_backend_reg_dev_count(reg) != 2) {
        printf("want the devices HTP0 and HTP0:1 (GGML_HEXAGON_DEVICES)\n");
        return 2;
    }
    ggml_backend_dev_t devs[2] = {ggml_backend_reg_dev_get(reg, 0), ggml_backend_reg_dev_get(reg, 1)};
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            const enum outcome r = work(devs[i]);
            printf("round %d %s: %s\n", round, ggml_backend_dev_name(devs[i]), outcome_names[r]);
            fflush(stdout);
        }
    }
    int fds, memfds, live, zombies;
    count_fds(&fds, &memfds);
    count_children(&live, &zombies);
    printf("end: fds %d memfds %d npus %d zombies %d\n", fds, memfds, live, zombies);
    return 0;
}

// ---------------------------------------------------------------- the walk

struct run {
    int  exit_code;  // 128 + signal when killed
    char out[16384];
    int  outcome[2][2];  // [round][device], -1 when missing
    int  fds, memfds, npus, zombies;
};

static const char * self;

// Run a child under GGML_HTP_FAULT=spec (NULL: unset), stdout and stderr together.
static void spawn(const char * spec, struct run * r) {
    memset(r, 0, sizeof *r);
    int p[2];
    if (pipe(p) != 0) {
        r->exit_code = -1;
        return;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        if (spec) {
            setenv("GGML_HTP_FAULT", spec, 1);
        } else {
            unsetenv("GGML_HTP_FAULT");
        }
        execl(self, self, "--run", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    size_t len = 0;
    for (;;) {
        const ssize_t k = read(p[0], r->out + len, sizeof r->out - 1 - len);
        if (k <= 0) {
            break;
        }
        len += (size_t)k;
        if (len == sizeof r->out - 1) {  // keep draining, keep the head
            char sink[4096];
            while (read(p[0], sink, sizeof sink) > 0) {
            }
            break;
        }
    }
    r->out[len] = '\0';
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            char key[32];
            snprintf(key, sizeof key, "round %d %s: ", round, i ? "HTP0:1" : "HTP0");
            const char * at      = strstr(r->out, key);
            r->outcome[round][i] = -1;
            for (int o = 0; at && o < 3; o++) {
                if (strncmp(at + strlen(key), outcome_names[o], strlen(outcome_names[o])) == 0) {
                    r->outcome[round][i] = o;
                }
            }
        }
    }
    const char * end = strstr(r->out, "end: ");
    if (!end ||
        sscanf(end, "end: fds %d memfds %d npus %d zombies %d", &r->fds, &r->memfds, &r->npus, &r->zombies) != 4) {
        r->fds = -1;
    }
}

// A warning or error line (not the injection's own) that contains `what`.
static int reported(const char * out, const char * what) {
    for (const char * line = out; *line;) {
        const char * nl  = strchr(line, '\n');
        const size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char         buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        if (!strstr(buf, "GGML_HTP_FAULT: failing call") && strstr(buf, what)) {
            return 1;
        }
        line += len + (nl != NULL);
    }
    return 0;
}

// The site, and what its failure's report must say.
static const struct {
    const char * site;
    const char * names;
} sites[] = {
    {"memfd", "memfd_create"},         {"ftruncate", "ftruncate"},     {"mmap", "into the host: mmap"},
    {"map-request", "mapping buffer"}, {"ring-push", "pushing batch"}, {"fence-wait", "event's fence"},
    {"npu-map", "mapping buffer"},
};

static void show(const char * spec, const struct run * r) {
    fprintf(stderr, "---- GGML_HTP_FAULT=%s: exit %d\n%s----\n", spec, r->exit_code, r->out);
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "--run") == 0) {
        return run_child();
    }
    self = argv[0];
    setenv("GGML_HEXAGON_DEVICES", "HTP0,HTP0:1", 1);
    printf("test-fault-injection: every site's N-th call fails, N = 1, 2, ...; once and from N on\n");

    struct run * base = malloc(sizeof *base);
    struct run * r    = malloc(sizeof *r);
    spawn(NULL, base);
    CHECK_OR_RETURN(1, base->exit_code == 0 && base->fds > 0, "the run without faults: exit %d", base->exit_code);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            CHECK(base->outcome[round][i] == OK, "without faults, round %d device %d: %d", round, i,
                  base->outcome[round][i]);
        }
    }
    printf("without faults: fds %d, memfds %d, NPU processes %d\n", base->fds, base->memfds, base->npus);

    // A malformed value injects nothing and says so.
    spawn("memfd:0", r);
    CHECK(r->exit_code == 0 && r->outcome[1][1] == OK && strstr(r->out, "GGML_HTP_FAULT='memfd:0'") &&
              !strstr(r->out, "failing call"),
          "a malformed GGML_HTP_FAULT");

    printf("%-12s %-8s %5s  %s\n", "site", "fault", "runs", "first report");
    int total = 0;
    for (size_t s = 0; s < sizeof sites / sizeof sites[0]; s++) {
        for (int persistent = 0; persistent < 2; persistent++) {
            char first[200] = "";
            int  n          = 1;
            for (;; n++) {
                char spec[64];
                snprintf(spec, sizeof spec, "%s:%d%s", sites[s].site, n, persistent ? "+" : "");
                spawn(spec, r);
                total++;
                if (!strstr(r->out, "GGML_HTP_FAULT: failing call")) {
                    CHECK(r->exit_code == 0, "%s: exit %d without a fault", spec, r->exit_code);
                    break;  // fewer than n calls at the site: walked
                }
                const int fails0 = n_fail;
                CHECK(r->exit_code == 0 && r->fds >= 0, "%s: the run ended with exit %d", spec, r->exit_code);
                CHECK(reported(r->out, sites[s].names), "%s: no warning or error says \"%s\"", spec, sites[s].names);
                for (int round = 0; round < 2; round++) {
                    for (int i = 0; i < 2; i++) {
                        CHECK(r->outcome[round][i] != WRONG && r->outcome[round][i] >= 0, "%s: round %d device %d: %s",
                              spec, round, i,
                              r->outcome[round][i] < 0 ? "missing" : outcome_names[r->outcome[round][i]]);
                    }
                }
                if (!persistent) {
                    // One failing call costs at most the work it hit; the
                    // works after it (a new backend each) succeed.
                    int n_failed = 0;
                    for (int round = 0; round < 2; round++) {
                        for (int i = 0; i < 2; i++) {
                            n_failed += r->outcome[round][i] != OK;
                        }
                    }
                    CHECK(n_failed <= 1, "%s: %d works failed, want at most the one the fault hit", spec, n_failed);
                }
                CHECK(r->fds <= base->fds && r->memfds <= base->memfds && r->npus <= base->npus && r->zombies == 0,
                      "%s: leaked: fds %d memfds %d NPUs %d zombies %d (without faults: %d %d %d)", spec, r->fds,
                      r->memfds, r->npus, r->zombies, base->fds, base->memfds, base->npus);
                if (n_fail > fails0) {
                    show(spec, r);
                }
                if (!first[0]) {
                    // The first report line naming the failure, for the table.
                    for (const char * at = strstr(r->out, sites[s].names); at && !first[0];
                         at              = strstr(at + 1, sites[s].names)) {
                        const char * bol = at;
                        while (bol > r->out && bol[-1] != '\n') {
                            bol--;
                        }
                        const char * eol = strchr(at, '\n');
                        const int    len = (int)(eol ? eol - bol : (long)strlen(bol));
                        if (!memmem(bol, (size_t)len, "GGML_HTP_FAULT", 14)) {
                            snprintf(first, sizeof first, "%.*s", len, bol);
                        }
                    }
                }
            }
            printf("%-12s %-8s %5d  %s\n", sites[s].site, persistent ? "from N" : "once", n - 1, first);
            CHECK(n > 1, "%s: no call at the site was ever made", sites[s].site);
        }
    }
    printf("%d runs\n", total);
    free(base);
    free(r);
    return test_exit_code("test-fault-injection");
}
