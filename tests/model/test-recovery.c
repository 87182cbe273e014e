// test-recovery: kill -9 of the NPU at random moments of a libllama run on
// HTP0, fifty times. A run loads a model, creates a context, prefills a
// prompt and decodes greedily with idle pauses, feeding every batch through
// tools/model-feed.c; a killer thread sends SIGKILL to the NPU process at a
// random delay, and the phase it lands in (load, prefill, decode, idle) is
// recorded. Every kill must surface as an error (the feed recovered at least
// once, or the device replaced the dead session when the context was
// created), every run must give the tokens of an uninterrupted run, and across
// the runs no file descriptor, memfd, child process or unbounded memory may
// be left behind.
//
// The model is a small generated llama (F16 weights), so the test needs
// nothing outside the checkout. Usage: test-recovery [KILLS] (default 50).

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "llama.h"
#include "model-feed.h"
#include "model-gen.h"
#include "model-load.h"
#include "test-check.h"

#define N_GEN      48
#define IDLE_EVERY 12    // decodes between idle pauses
#define IDLE_US    3000  // an idle pause
#define MAX_TRIALS 400   // runs tried for the kills wanted (a delay may outlast its run)

enum phase { PHASE_NONE, PHASE_LOAD, PHASE_PREFILL, PHASE_DECODE, PHASE_IDLE, PHASE_DONE, N_PHASES };
static const char * const phase_names[N_PHASES] = {"none", "load", "prefill", "decode", "idle", "done"};

// What the run is doing. The killer kills under phase_lock, and the run
// enters PHASE_DONE under it before its last decode: so every kill happens
// before a decode that will notice it.
static _Atomic int     phase;
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_phase(int p) {
    pthread_mutex_lock(&phase_lock);
    atomic_store(&phase, p);
    pthread_mutex_unlock(&phase_lock);
}

static const char * const prompt = "The little robot looked at the stars and";

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

// The pids of our children running htp-npu (the NPU processes of this run).
static int npu_children(pid_t * out, int cap) {
    DIR * d = opendir("/proc");
    int   n = 0;
    if (!d) {
        return 0;
    }
    for (struct dirent * e; (e = readdir(d)) != NULL && n < cap;) {
        const pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0) {
            continue;
        }
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE * f = fopen(path, "r");
        if (!f) {
            continue;
        }
        const size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len]           = '\0';
        const char * close = strrchr(buf, ')');  // comm may hold spaces; fields follow its ')'
        char         state;
        int          ppid;
        if (close && strstr(buf, "(htp-npu)") && sscanf(close + 1, " %c %d", &state, &ppid) == 2 &&
            ppid == (int)getpid() && state != 'Z') {
            out[n++] = pid;
        }
    }
    closedir(d);
    return n;
}

static int count_children(void) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    FILE * f = fopen(path, "r");
    int    n = 0, pid;
    if (f) {
        while (fscanf(f, "%d", &pid) == 1) {
            n++;
        }
        fclose(f);
    }
    return n;
}

// Open descriptors and, of them, memfds.
static void count_fds(int * fds, int * memfds) {
    *fds = *memfds = 0;
    DIR * d        = opendir("/proc/self/fd");
    if (!d) {
        return;
    }
    for (struct dirent * e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        const ssize_t k = readlink(path, target, sizeof target - 1);
        (*fds)++;
        if (k > 0 && strncmp(target, "/memfd:", 7) == 0) {
            (*memfds)++;
        }
    }
    closedir(d);
    (*fds)--;  // the directory's own descriptor
}

static long rss_kib(void) {
    FILE * f     = fopen("/proc/self/statm", "r");
    long   pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2) {
            rss = 0;
        }
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

// ---------------------------------------------------------------- the killer

struct killer {
    int64_t delay_us;  // after the run starts
    int     killed;    // 1 when a kill landed ...
    int     at;        // ... in this phase
};

static void * killer_main(void * p) {
    struct killer * k  = p;
    const int64_t   t0 = now_us();
    while (now_us() - t0 < k->delay_us) {
        if (atomic_load(&phase) == PHASE_DONE) {
            return NULL;
        }
        usleep(200);
    }
    pthread_mutex_lock(&phase_lock);
    const int ph = atomic_load(&phase);
    pid_t     pids[4];
    const int n = ph == PHASE_DONE || ph == PHASE_NONE ? 0 : npu_children(pids, 4);
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
    }
    if (n > 0) {
        k->killed = 1;
        k->at     = ph;
    }
    pthread_mutex_unlock(&phase_lock);
    return NULL;
}

// ---------------------------------------------------------------- one run

static int n_failures;  // failures the feed reported in this run

static void on_failure(void * user, int n_fed, const char * what) {
    (void)user;
    (void)n_fed;
    (void)what;
    n_failures++;
}

// A kill during load is found when the context is created: the device
// replaces its dead session there and says so. Count those warnings; print
// nothing else.
static int n_replaced;

static void quiet(enum ggml_log_level level, const char * text, void * user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_WARN && strstr(text, "replacing the failed session")) {
        n_replaced++;
    }
}

// Load, prefill and decode N_GEN tokens greedily; 0 with out[] filled.
static int run(const char * path, llama_token * out, int * recoveries) {
    struct htp_model_load_params lp    = {.path = path, .device = "HTP0", .n_ctx = 256};
    struct llama_model *         model = NULL;
    struct llama_context *       ctx   = NULL;
    set_phase(PHASE_LOAD);
    if (htp_model_open(&lp, &model, &ctx) != 0) {
        return -1;
    }
    const struct llama_vocab * vocab   = llama_model_get_vocab(model);
    const int                  n_vocab = llama_vocab_n_tokens(vocab);
    llama_token                toks[64];
    const int                  n = llama_tokenize(vocab, prompt, (int32_t)strlen(prompt), toks, 64, true, false);
    struct htp_feed            feed;
    htp_feed_init(&feed, &lp, model, ctx);
    feed.on_failure = on_failure;
    int rc          = n > 0 ? 0 : -1;
    set_phase(PHASE_PREFILL);
    if (rc == 0) {
        rc = htp_feed_decode(&feed, toks, n);
    }
    for (int i = 0; rc == 0 && i < N_GEN; i++) {
        set_phase(i + 1 < N_GEN ? PHASE_DECODE : PHASE_DONE);  // no kill after the last decode starts
        const float * l    = llama_get_logits_ith(feed.ctx, -1);
        llama_token   best = 0;
        for (llama_token t = 1; t < n_vocab; t++) {
            best = l[t] > l[best] ? t : best;
        }
        out[i] = best;
        rc     = htp_feed_decode(&feed, &out[i], 1);
        if (i % IDLE_EVERY == IDLE_EVERY - 1 && i + 1 < N_GEN) {  // idle between decodes, not after the last
            set_phase(PHASE_IDLE);
            usleep(IDLE_US);
        }
    }
    *recoveries = feed.recoveries;
    htp_feed_free(&feed);
    llama_model_free(model);
    return rc;
}

int main(int argc, char ** argv) {
    const int kills_wanted = argc > 1 ? atoi(argv[1]) : 50;
    char      dir[]        = "/tmp/test-recovery-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp");
    char path[256];
    snprintf(path, sizeof path, "%s/small.gguf", dir);
    struct htp_model_spec spec;
    htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, "tiny");
    spec.wtype = GGML_TYPE_F16;
    CHECK_OR_RETURN(1, htp_model_write(&spec, path, NULL, NULL) == 0, "model write");
    llama_log_set(quiet, NULL);
    llama_backend_init();

    // The uninterrupted run, twice: the reference, and the state to hold the
    // later runs against (the first run warms caches and allocators up).
    llama_token ref[N_GEN], got[N_GEN];
    int         rec = 0;
    CHECK_OR_RETURN(1, run(path, ref, &rec) == 0 && rec == 0, "reference run");
    const int64_t t0 = now_us();
    CHECK_OR_RETURN(1, run(path, got, &rec) == 0 && rec == 0, "second run");
    const int64_t run_us = now_us() - t0;
    CHECK(memcmp(ref, got, sizeof ref) == 0, "two uninterrupted runs differ");
    // The device keeps its session (and so its NPU process and pinned
    // buffer) between runs: those are part of the baseline.
    int fds0, memfds0;
    count_fds(&fds0, &memfds0);
    const long rss0      = rss_kib();
    const int  children0 = count_children();
    printf("an uninterrupted run: %.1f ms; %d fds (%d memfds), %d child(ren), RSS %ld KiB\n", run_us / 1000.0, fds0,
           memfds0, children0, rss0);

    srand(12345);
    int           kills = 0, surfaced = 0, identical = 0, trials = 0;
    int           per_phase[N_PHASES] = {0};
    long          rss_max             = rss0;
    const int64_t span                = run_us * 11 / 10;  // delays over the run and a little beyond
    while (kills < kills_wanted && trials < MAX_TRIALS) {
        trials++;
        struct killer k = {.delay_us = (int64_t)((double)rand() / RAND_MAX * (double)span)};
        pthread_t     th;
        set_phase(PHASE_NONE);
        CHECK_OR_RETURN(1, pthread_create(&th, NULL, killer_main, &k) == 0, "killer thread");
        n_failures   = 0;
        n_replaced   = 0;
        int       r  = 0;
        const int rc = run(path, got, &r);
        set_phase(PHASE_DONE);
        pthread_join(th, NULL);
        if (!k.killed) {
            CHECK(rc == 0 && memcmp(ref, got, sizeof ref) == 0, "trial %d (no kill): output differs", trials);
            continue;
        }
        kills++;
        per_phase[k.at]++;
        const int seen = (n_failures > 0 && r > 0) || n_replaced > 0;
        surfaced += seen;
        identical += rc == 0 && memcmp(ref, got, sizeof ref) == 0;
        CHECK(rc == 0, "kill %d (%s, %.1f ms): the run failed", kills, phase_names[k.at], k.delay_us / 1000.0);
        CHECK(seen, "kill %d (%s): no error surfaced (%d failures, %d recoveries, %d sessions replaced)", kills,
              phase_names[k.at], n_failures, r, n_replaced);
        CHECK(memcmp(ref, got, sizeof ref) == 0, "kill %d (%s): output differs from the uninterrupted run", kills,
              phase_names[k.at]);
        const long rss = rss_kib();
        rss_max        = rss > rss_max ? rss : rss_max;
    }
    usleep(100000);  // let the last NPU process be reaped
    int fds1, memfds1;
    count_fds(&fds1, &memfds1);
    const int children = count_children();
    if (children != children0) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "ps -o pid,stat,comm --ppid %d", (int)getpid());
        if (system(cmd) != 0) {
            printf("(ps failed)\n");
        }
    }
    printf(
        "kills %d in %d runs (load %d, prefill %d, decode %d, idle %d); errors surfaced %d, recovered and "
        "identical %d\n",
        kills, trials, per_phase[PHASE_LOAD], per_phase[PHASE_PREFILL], per_phase[PHASE_DECODE], per_phase[PHASE_IDLE],
        surfaced, identical);
    printf("fds %d -> %d, memfds %d -> %d, children %d -> %d, RSS %ld -> max %ld KiB\n", fds0, fds1, memfds0, memfds1,
           children0, children, rss0, rss_max);
    CHECK(kills == kills_wanted, "only %d kills landed in %d runs", kills, trials);
    CHECK(fds1 == fds0 && memfds1 == memfds0, "descriptors leaked: %d -> %d (memfds %d -> %d)", fds0, fds1, memfds0,
          memfds1);
    CHECK(children == children0, "child processes %d -> %d", children0, children);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("RSS not compared under a sanitizer (it holds freed memory back); LeakSanitizer checks leaks\n");
#else
    CHECK(rss_max - rss0 < 64 * 1024, "RSS grew by %ld KiB", rss_max - rss0);
#endif

    llama_backend_free();
    unlink(path);
    rmdir(dir);
    return test_exit_code("test-recovery");
}
