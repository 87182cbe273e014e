// test-soak: a long run on HTP0 must not creep. 10,000 decode steps of one
// context (the KV cache cleared and the prompt fed again whenever it fills),
// then 1,000 cycles of creating a context, decoding a few tokens in it and
// freeing it. Before and after each phase (after a warm-up) it counts: the
// host's RSS, open descriptors, memfds and mappings, and each NPU process's
// RSS and mappings. Descriptors, memfds and NPU processes must be the same
// at the end, mappings too (within a few: allocator arenas), RSS within
// a bound.
//
// The model is a small generated llama (F16 weights).
// Usage: test-soak [STEPS [CYCLES]] (defaults 10000 and 1000)

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama.h"
#include "model-gen.h"
#include "model-load.h"
#include "test-check.h"

#define N_CTX 128

struct figures {
    long rss_kib, npu_rss_kib;
    int  fds, memfds, maps, npus, npu_maps;
};

static int lines_of(const char * path) {
    FILE * f = fopen(path, "r");
    int    n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;) {
        n += c == '\n';
    }
    if (f) {
        fclose(f);
    }
    return n;
}

static long rss_of(int pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", pid);
    FILE * f     = fopen(path, "r");
    long   pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2) {
            rss = 0;
        }
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void measure(struct figures * m) {
    memset(m, 0, sizeof *m);
    DIR * d = opendir("/proc/self/fd");
    for (struct dirent * e; d && (e = readdir(d)) != NULL;) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        const ssize_t k = readlink(path, target, sizeof target - 1);
        if (e->d_name[0] != '.') {
            m->fds++;
            m->memfds += k > 0 && strncmp(target, "/memfd:", 7) == 0;
        }
    }
    if (d) {
        closedir(d);
        m->fds--;
    }
    m->rss_kib = rss_of(getpid());
    m->maps    = lines_of("/proc/self/maps");
    char path[80];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    FILE * f = fopen(path, "r");
    for (int pid; f && fscanf(f, "%d", &pid) == 1;) {
        char maps[64];
        snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
        m->npus++;
        m->npu_maps += lines_of(maps);
        m->npu_rss_kib += rss_of(pid);
    }
    if (f) {
        fclose(f);
    }
}

static void show(const char * when, const struct figures * m) {
    printf("  %-28s RSS %6ld KiB, %2d fds (%d memfds), %4d mappings | %d NPU(s): RSS %6ld KiB, %4d mappings\n", when,
           m->rss_kib, m->fds, m->memfds, m->maps, m->npus, m->npu_rss_kib, m->npu_maps);
}

// The end against the start: the same descriptors, processes; mappings
// within a few; RSS within rss_slack_kib.
static void compare(const char * phase, const struct figures * a, const struct figures * b, long rss_slack_kib) {
    CHECK(b->fds == a->fds && b->memfds == a->memfds, "%s: descriptors %d -> %d, memfds %d -> %d", phase, a->fds,
          b->fds, a->memfds, b->memfds);
    CHECK(b->npus == a->npus, "%s: NPU processes %d -> %d", phase, a->npus, b->npus);
    CHECK(abs(b->maps - a->maps) <= 4 && abs(b->npu_maps - a->npu_maps) <= 4, "%s: mappings %d -> %d, NPU %d -> %d",
          phase, a->maps, b->maps, a->npu_maps, b->npu_maps);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // The sanitizers hold freed memory back (ASan's quarantine) or shadow
    // it: RSS says nothing there; LeakSanitizer checks for leaks instead.
    (void)rss_slack_kib;
    printf("  %s: RSS not compared under a sanitizer\n", phase);
#else
    CHECK(b->rss_kib - a->rss_kib <= rss_slack_kib && b->npu_rss_kib - a->npu_rss_kib <= rss_slack_kib,
          "%s: RSS grew %ld KiB, NPU %ld KiB", phase, b->rss_kib - a->rss_kib, b->npu_rss_kib - a->npu_rss_kib);
#endif
}

static void quiet(enum ggml_log_level level, const char * text, void * user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static llama_token greedy(struct llama_context * ctx, int n_vocab) {
    const float * l    = llama_get_logits_ith(ctx, -1);
    llama_token   best = 0;
    for (llama_token t = 1; t < n_vocab; t++) {
        best = l[t] > l[best] ? t : best;
    }
    return best;
}

int main(int argc, char ** argv) {
    const long steps  = argc > 1 ? atol(argv[1]) : 10000;
    const long cycles = argc > 2 ? atol(argv[2]) : 1000;
    printf("test-soak: %ld decode steps, %ld context create/free cycles on HTP0\n", steps, cycles);
    char dir[] = "/tmp/test-soak-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp");
    char path[256];
    snprintf(path, sizeof path, "%s/tiny.gguf", dir);
    struct htp_model_spec spec;
    htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, "tiny");
    spec.wtype = GGML_TYPE_F16;
    CHECK_OR_RETURN(1, htp_model_write(&spec, path, NULL, NULL) == 0, "model write");
    llama_log_set(quiet, NULL);
    llama_backend_init();

    struct htp_model_load_params lp    = {.path = path, .device = "HTP0", .n_ctx = N_CTX};
    struct llama_model *         model = NULL;
    struct llama_context *       ctx   = NULL;
    CHECK_OR_RETURN(1, htp_model_open(&lp, &model, &ctx) == 0, "load");
    const int   n_vocab   = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_token prompt[4] = {1, 20, 30, 40};

    // Decode steps: the KV cache refilled every N_CTX - 8 positions.
    struct figures start, end;
    int            failed = 0, pos = 0;
    for (long i = 0; i < steps + 100 && !failed; i++) {
        if (i == 100) {
            measure(&start);  // after the warm-up
            show("decode, after 100 steps", &start);
        }
        if (pos == 0 || pos >= N_CTX - 8) {
            llama_memory_clear(llama_get_memory(ctx), true);
            failed = llama_decode(ctx, llama_batch_get_one(prompt, 4)) != 0;
            pos    = 4;
            continue;
        }
        llama_token t = greedy(ctx, n_vocab);
        failed        = llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0;
        pos++;
    }
    CHECK(!failed, "a decode step failed");
    measure(&end);
    show("decode, at the end", &end);
    compare("decode", &start, &end, 2048);
    llama_free(ctx);

    // Context cycles: each decodes a prompt and two tokens, so its buffers
    // are mapped into the NPU and unmapped again when it goes.
    failed = 0;
    for (long i = 0; i < cycles + 10 && !failed; i++) {
        if (i == 10) {
            measure(&start);
            show("contexts, after 10 cycles", &start);
        }
        ctx    = htp_model_new_context(&lp, model);
        failed = !ctx || llama_decode(ctx, llama_batch_get_one(prompt, 4)) != 0;
        for (int k = 0; k < 2 && !failed; k++) {
            llama_token t = greedy(ctx, n_vocab);
            failed        = llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0;
        }
        llama_free(ctx);
    }
    CHECK(!failed, "a context cycle failed");
    measure(&end);
    show("contexts, at the end", &end);
    compare("contexts", &start, &end, 4096);

    llama_model_free(model);
    llama_backend_free();
    unlink(path);
    rmdir(dir);
    return test_exit_code("test-soak");
}
