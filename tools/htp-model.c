// htp-model: writes a llama / qwen3 / qwen3moe GGUF with seeded random
// weights, for running and measuring without downloading a model.
//
// A preset gives the shape, options override any dimension; the same options
// always give the same file (see model-common.c for how).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model-gen.h"

static void usage(FILE * f) {
    fprintf(f,
            "usage: htp-model [options]\n"
            "  --arch A          llama | qwen3 | qwen3moe (default llama)\n"
            "  --preset P        tiny | small | medium | 1b (default small; 1b = the Llama-3.2-1B shape)\n"
            "  --type T          weight type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl "
            "iq4_xs mxfp4 iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m (default f16)\n"
            "  --seed N          weight seed (default 42)\n"
            "  -o, --output F    output file (default model.gguf)\n"
            "  --n-embd N --n-layer N --n-head N --n-head-kv N --n-ff N --n-vocab N --n-ctx N\n"
            "  --n-expert N --n-expert-used N --n-ff-exp N   (qwen3moe)\n"
            "  --rope-freq-base F                            rope theta\n"
            "  --untied          write output.weight (default: tied to token_embd)\n"
            "  -t, --threads N   generator threads (default: all CPUs; the file does not depend on it)\n"
            "  -q, --quiet       no progress\n"
            "  -h, --help\n");
}

static int parse_i32(const char * opt, const char * s, int32_t * out) {
    char * end = NULL;
    long   v   = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > INT32_MAX) {
        fprintf(stderr, "htp-model: %s wants a non-negative integer, got '%s'\n", opt, s);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void progress_bar(uint64_t done, uint64_t total, void * user) {
    int * last = user;
    int   pct  = total ? (int)(done * 100 / total) : 100;
    if (pct != *last) {
        const int prev = *last;
        *last          = pct;
        if (isatty(2)) {  // a bar redrawn in place
            int fill = pct / 2;
            fprintf(stderr, "\r%s [%.*s%*s] %3d%%", "writing", fill,
                    "##################################################", 50 - fill, "", pct);
        } else {  // a log: the quarters passed, on one line
            if (prev < 0) {
                fprintf(stderr, "%s", "writing");
            }
            for (int q = prev < 0 ? 0 : prev / 25 + 1; q <= pct / 25; q++) {
                fprintf(stderr, " %d%%", q * 25);
            }
        }
        if (pct >= 100) {
            fprintf(stderr, "\n");
        }
    }
}

int main(int argc, char ** argv) {
    enum htp_model_arch arch   = HTP_MODEL_ARCH_LLAMA;
    const char *        preset = "small";
    const char *        out    = "model.gguf";
    bool                quiet  = false;

    // First pass: what the preset depends on; the second pass applies overrides.
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 < argc && strcmp(argv[i], "--arch") == 0) {
            if (htp_model_arch_parse(argv[i + 1], &arch) != 0) {
                fprintf(stderr, "htp-model: unknown architecture '%s' (llama, qwen3, qwen3moe)\n", argv[i + 1]);
                return 1;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--preset") == 0) {
            preset = argv[i + 1];
        }
    }
    struct htp_model_spec spec;
    if (htp_model_spec_preset(&spec, arch, preset) != 0) {
        fprintf(stderr, "htp-model: unknown preset '%s' (tiny, small, medium, 1b)\n", preset);
        return 1;
    }

    static const struct {
        const char * name;
        size_t       off;
    } dims[] = {
        {"--n-embd", offsetof(struct htp_model_spec, n_embd)},
        {"--n-layer", offsetof(struct htp_model_spec, n_layer)},
        {"--n-head", offsetof(struct htp_model_spec, n_head)},
        {"--n-head-kv", offsetof(struct htp_model_spec, n_head_kv)},
        {"--n-ff", offsetof(struct htp_model_spec, n_ff)},
        {"--n-vocab", offsetof(struct htp_model_spec, n_vocab)},
        {"--n-ctx", offsetof(struct htp_model_spec, n_ctx)},
        {"--n-expert", offsetof(struct htp_model_spec, n_expert)},
        {"--n-expert-used", offsetof(struct htp_model_spec, n_expert_used)},
        {"--n-ff-exp", offsetof(struct htp_model_spec, n_ff_exp)},
    };
    for (int i = 1; i < argc; i++) {
        const char * a   = argv[i];
        const char * val = i + 1 < argc ? argv[i + 1] : NULL;
        bool         dim = false;
        for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
            if (strcmp(a, dims[k].name) == 0) {
                if (!val || parse_i32(a, val, (int32_t *)((char *)&spec + dims[k].off)) != 0) {
                    if (!val) {
                        fprintf(stderr, "htp-model: %s wants a value\n", a);
                    }
                    return 1;
                }
                dim = true;
                i++;
                break;
            }
        }
        if (dim) {
            continue;
        }
        if (strcmp(a, "--untied") == 0) {
            spec.tied = false;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else if (!val) {
            fprintf(stderr, "htp-model: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 1;
        } else if (strcmp(a, "--arch") == 0 || strcmp(a, "--preset") == 0) {
            i++;  // done in the first pass
        } else if (strcmp(a, "--type") == 0) {
            if (htp_model_type_parse(val, &spec.wtype) != 0) {
                fprintf(stderr, "htp-model: unknown weight type '%s'\n", val);
                return 1;
            }
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            char * end = NULL;
            spec.seed  = strtoull(val, &end, 0);
            if (!*val || *end) {
                fprintf(stderr, "htp-model: --seed wants an integer, got '%s'\n", val);
                return 1;
            }
            i++;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            out = val;
            i++;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) {
            int32_t t = 0;
            if (parse_i32(a, val, &t) != 0) {
                return 1;
            }
            spec.n_threads = t;
            i++;
        } else if (strcmp(a, "--rope-freq-base") == 0) {
            char * end          = NULL;
            spec.rope_freq_base = strtof(val, &end);
            if (!*val || *end) {
                fprintf(stderr, "htp-model: --rope-freq-base wants a number, got '%s'\n", val);
                return 1;
            }
            i++;
        } else {
            fprintf(stderr, "htp-model: unknown option %s\n", a);
            usage(stderr);
            return 1;
        }
    }

    char err[160];
    if (htp_model_spec_check(&spec, err, sizeof(err)) != 0) {
        fprintf(stderr, "htp-model: %s\n", err);
        return 1;
    }
    char desc[160];
    htp_model_spec_describe(&spec, desc, sizeof(desc));
    const double mib = htp_model_data_size(&spec) / 1048576.0;
    if (!quiet) {
        fprintf(stderr, "writing %s: %s, %.1f MiB of weights\n", out, desc, mib);
    }
    int          last = -1;
    const double t0   = now_s();
    if (htp_model_write(&spec, out, quiet ? NULL : progress_bar, &last) != 0) {
        return 1;
    }
    if (!quiet) {
        const double dt = now_s() - t0;
        fprintf(stderr, "wrote %s in %.2f s (%.0f MiB/s)\n", out, dt, dt > 0 ? mib / dt : 0.0);
    }
    return 0;
}
