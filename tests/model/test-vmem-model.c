// test-vmem-model: a model larger than the NPU's VA window (GGML_HEXAGON_VMEM
// = 32 MiB here) on HTP0.
//  - Weights larger than the window: the load fails with an error naming the
//    buffer (its size) and the window (its size, what it holds).
//  - Weights that fit, with a KV cache that does not fit beside them: the
//    context fails the same way.
//  - Neither leaves anything behind: descriptors, memfds and NPU processes
//    are those of the loaded-and-freed small model before, and the small
//    model still loads and decodes right after.
// The models are generated (F32 llama "small", ~67 MB, and "tiny", ~8 MB).

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama.h"
#include "model-gen.h"
#include "model-load.h"
#include "test-check.h"

static char errors[8192];  // the error lines logged

static void on_log(enum ggml_log_level level, const char * text, void * user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR && strlen(errors) + strlen(text) < sizeof errors) {
        strcat(errors, text);
    }
}

static void count(int * fds, int * memfds, int * children) {
    *fds = *memfds = *children = 0;
    DIR * d                    = opendir("/proc/self/fd");
    for (struct dirent * e; d && (e = readdir(d)) != NULL;) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        const ssize_t k = readlink(path, target, sizeof target - 1);
        if (e->d_name[0] != '.') {
            (*fds)++;
            *memfds += k > 0 && strncmp(target, "/memfd:", 7) == 0;
        }
    }
    if (d) {
        closedir(d);
        (*fds)--;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    FILE * f = fopen(path, "r");
    for (int pid; f && fscanf(f, "%d", &pid) == 1;) {
        (*children)++;
    }
    if (f) {
        fclose(f);
    }
}

// Load path with n_ctx on HTP0 and decode a few tokens; 0 when all of it works.
static int load_and_decode(const char * path, uint32_t n_ctx) {
    struct htp_model_load_params lp    = {.path = path, .device = "HTP0", .n_ctx = n_ctx, .n_batch = 64};
    struct llama_model *         model = NULL;
    struct llama_context *       ctx   = NULL;
    if (htp_model_open(&lp, &model, &ctx) != 0) {
        return -1;
    }
    llama_token toks[4] = {1, 20, 30, 40};
    int         rc      = llama_decode(ctx, llama_batch_get_one(toks, 4));
    llama_free(ctx);
    llama_model_free(model);
    return rc;
}

static int write_model(const char * preset, const char * path) {
    struct htp_model_spec spec;
    htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, preset);
    spec.wtype = GGML_TYPE_F32;
    return htp_model_write(&spec, path, NULL, NULL);
}

int main(void) {
    printf("test-vmem-model: models larger than GGML_HEXAGON_VMEM=32 on HTP0\n");
    setenv("GGML_HEXAGON_VMEM", "32", 1);
    char dir[] = "/tmp/test-vmem-model-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp");
    char big[256], small[256];
    snprintf(big, sizeof big, "%s/small-f32.gguf", dir);
    snprintf(small, sizeof small, "%s/tiny-f32.gguf", dir);
    CHECK_OR_RETURN(1, write_model("small", big) == 0 && write_model("tiny", small) == 0, "write the models");
    llama_log_set(on_log, NULL);
    llama_backend_init();

    // The steady state: the small model loaded, decoded and freed.
    CHECK_OR_RETURN(1, load_and_decode(small, 256) == 0, "the tiny model on a 32 MiB window: %s", errors);
    int fds0, memfds0, children0;
    count(&fds0, &memfds0, &children0);
    printf("after the tiny model: %d fds (%d memfds), %d NPU process(es)\n", fds0, memfds0, children0);

    // Weights larger than the window.
    errors[0] = '\0';
    CHECK(load_and_decode(big, 256) != 0, "a 67 MB model loaded into a 32 MiB window");
    const char * e = strstr(errors, "cannot allocate a buffer of");
    CHECK(e && strstr(e, "MiB: the NPU's VA window of") && strstr(e, "GGML_HEXAGON_VMEM"),
          "the error does not name the buffer and the window: \"%s\"", errors);
    printf("weights over the window: %.*s", e ? (int)(strchr(e, '\n') ? strchr(e, '\n') - e + 1 : 0) : 0, e ? e : "");
    int fds, memfds, children;
    count(&fds, &memfds, &children);
    CHECK(fds == fds0 && memfds == memfds0 && children == children0,
          "left behind: fds %d -> %d, memfds %d -> %d, NPUs %d -> %d", fds0, fds, memfds0, memfds, children0, children);

    // Weights that fit, a KV cache that does not (32 Ki positions, ~32 MiB).
    errors[0] = '\0';
    CHECK(load_and_decode(small, 32768) != 0, "a KV cache past the window was allocated");
    e = strstr(errors, "cannot allocate a buffer of");
    CHECK(e && strstr(e, "holds") && strstr(e, "buffer(s) already"),
          "the error does not say what the window holds: \"%s\"", errors);
    printf("KV cache over the window: %.*s", e ? (int)(strchr(e, '\n') ? strchr(e, '\n') - e + 1 : 0) : 0, e ? e : "");
    count(&fds, &memfds, &children);
    CHECK(fds == fds0 && memfds == memfds0 && children == children0,
          "left behind: fds %d -> %d, memfds %d -> %d, NPUs %d -> %d", fds0, fds, memfds0, memfds, children0, children);

    // The device is unharmed.
    errors[0] = '\0';
    CHECK(load_and_decode(small, 256) == 0, "the tiny model after the failures: %s", errors);
    count(&fds, &memfds, &children);
    CHECK(fds == fds0 && memfds == memfds0 && children == children0, "after the tiny model again: fds %d -> %d", fds0,
          fds);

    llama_backend_free();
    unlink(big);
    unlink(small);
    rmdir(dir);
    return test_exit_code("test-vmem-model");
}
