// model-gen.c: the GGUF model generator behind htp-model (and htp-run's
// default model, the benches' models and the parity tests').
//
// The one idea: a weight is a pure function of (seed, shape, tensor name,
// row, column), never of the weight type or the thread that made it. Rows use
// counter-based random streams, so any thread may make any row in any order
// and the file is the same; and two files of one seed and shape but different
// weight types hold quantizations of the same real-valued weights (a Q8_0
// model can be compared with its F16 twin). Large weights are assembled from
// pre-quantized 256-wide pieces (see "pieces") so a 1B model of any type is
// written in seconds.
//
// File layout (GGUF, written streaming so a 1B model never sits in memory):
//   header + metadata + tensor infos  gguf_write_to_file_ptr(only_meta), padded to the alignment
//   tensor data, in tensor-info order, each padded to the alignment
// Tensor data is made in chunks of rows: the worker threads fill one chunk
// (rows assembled from quantized pieces, or made as random floats and
// quantized with ggml_quantize_chunk), the main thread writes it.

#include "model-gen.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"

// ---------------------------------------------------------------- names

static const char * const arch_names[] = {
    [HTP_MODEL_ARCH_LLAMA]    = "llama",
    [HTP_MODEL_ARCH_QWEN3]    = "qwen3",
    [HTP_MODEL_ARCH_QWEN3MOE] = "qwen3moe",
};

const char * htp_model_arch_name(enum htp_model_arch arch) {
    if ((unsigned)arch >= sizeof(arch_names) / sizeof(arch_names[0])) {
        return "?";
    }
    return arch_names[arch];
}

int htp_model_arch_parse(const char * name, enum htp_model_arch * arch) {
    for (unsigned i = 0; i < sizeof(arch_names) / sizeof(arch_names[0]); i++) {
        if (strcmp(name, arch_names[i]) == 0) {
            *arch = (enum htp_model_arch)i;
            return 0;
        }
    }
    return -1;
}

// The weight types we write and what general.file_type says of a file made
// entirely of them (pure K-quant files are the "_S" variants).
static const struct {
    const char *     name;
    enum ggml_type   type;
    enum llama_ftype ftype;
} weight_types[] = {
    {"f32", GGML_TYPE_F32, LLAMA_FTYPE_ALL_F32},
    {"f16", GGML_TYPE_F16, LLAMA_FTYPE_MOSTLY_F16},
    {"bf16", GGML_TYPE_BF16, LLAMA_FTYPE_MOSTLY_BF16},
    {"q8_0", GGML_TYPE_Q8_0, LLAMA_FTYPE_MOSTLY_Q8_0},
    {"q4_0", GGML_TYPE_Q4_0, LLAMA_FTYPE_MOSTLY_Q4_0},
    {"q4_1", GGML_TYPE_Q4_1, LLAMA_FTYPE_MOSTLY_Q4_1},
    {"q5_0", GGML_TYPE_Q5_0, LLAMA_FTYPE_MOSTLY_Q5_0},
    {"q5_1", GGML_TYPE_Q5_1, LLAMA_FTYPE_MOSTLY_Q5_1},
    {"q2_k", GGML_TYPE_Q2_K, LLAMA_FTYPE_MOSTLY_Q2_K_S},
    {"q3_k", GGML_TYPE_Q3_K, LLAMA_FTYPE_MOSTLY_Q3_K_S},
    {"q4_k", GGML_TYPE_Q4_K, LLAMA_FTYPE_MOSTLY_Q4_K_S},
    {"q5_k", GGML_TYPE_Q5_K, LLAMA_FTYPE_MOSTLY_Q5_K_S},
    {"q6_k", GGML_TYPE_Q6_K, LLAMA_FTYPE_MOSTLY_Q6_K},
    {"iq4_nl", GGML_TYPE_IQ4_NL, LLAMA_FTYPE_MOSTLY_IQ4_NL},
    {"iq4_xs", GGML_TYPE_IQ4_XS, LLAMA_FTYPE_MOSTLY_IQ4_XS},
    {"mxfp4", GGML_TYPE_MXFP4, LLAMA_FTYPE_MOSTLY_MXFP4_MOE},
    {"iq2_xxs", GGML_TYPE_IQ2_XXS, LLAMA_FTYPE_MOSTLY_IQ2_XXS},
    {"iq2_xs", GGML_TYPE_IQ2_XS, LLAMA_FTYPE_MOSTLY_IQ2_XS},
    {"iq2_s", GGML_TYPE_IQ2_S, LLAMA_FTYPE_MOSTLY_IQ2_S},
    {"iq3_xxs", GGML_TYPE_IQ3_XXS, LLAMA_FTYPE_MOSTLY_IQ3_XXS},
    {"iq3_s", GGML_TYPE_IQ3_S, LLAMA_FTYPE_MOSTLY_IQ3_S},
    {"iq1_s", GGML_TYPE_IQ1_S, LLAMA_FTYPE_MOSTLY_IQ1_S},
    {"iq1_m", GGML_TYPE_IQ1_M, LLAMA_FTYPE_MOSTLY_IQ1_M},
};

#define N_WEIGHT_TYPES (sizeof(weight_types) / sizeof(weight_types[0]))

int htp_model_type_parse(const char * name, enum ggml_type * type) {
    for (unsigned i = 0; i < N_WEIGHT_TYPES; i++) {
        if (strcasecmp(name, weight_types[i].name) == 0) {
            *type = weight_types[i].type;
            return 0;
        }
    }
    return -1;
}

enum llama_ftype htp_model_ftype(enum ggml_type wtype) {
    for (unsigned i = 0; i < N_WEIGHT_TYPES; i++) {
        if (weight_types[i].type == wtype) {
            return weight_types[i].ftype;
        }
    }
    return LLAMA_FTYPE_GUESSED;
}

// ---------------------------------------------------------------- presets

// Dimensions are multiples of 256 wherever a matmul row runs along them, so
// every weight type (K-quants have 256-wide blocks) fits every preset.
static const struct {
    const char * name;
    int32_t      n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
    int32_t      n_expert, n_expert_used, n_ff_exp;
    float        rope_freq_base;
} presets[] = {
    // name      embd layer head kv   ff     vocab   ctx     exp used ff_exp  rope base
    {"tiny", 256, 2, 4, 2, 768, 512, 512, 4, 2, 256, 10000.0f},
    {"small", 512, 4, 8, 4, 1536, 4096, 2048, 8, 2, 512, 10000.0f},
    {"medium", 1024, 8, 16, 4, 3072, 32000, 4096, 8, 2, 768, 500000.0f},
    {"1b", 2048, 16, 32, 8, 8192, 128256, 131072, 16, 4, 1024, 500000.0f},
};

int htp_model_spec_preset(struct htp_model_spec * spec, enum htp_model_arch arch, const char * preset) {
    for (unsigned i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        if (strcmp(preset, presets[i].name) != 0) {
            continue;
        }
        memset(spec, 0, sizeof(*spec));
        spec->arch           = arch;
        spec->wtype          = GGML_TYPE_F16;
        spec->seed           = 42;
        spec->n_embd         = presets[i].n_embd;
        spec->n_layer        = presets[i].n_layer;
        spec->n_head         = presets[i].n_head;
        spec->n_head_kv      = presets[i].n_head_kv;
        spec->n_ff           = presets[i].n_ff;
        spec->n_vocab        = presets[i].n_vocab;
        spec->n_ctx          = presets[i].n_ctx;
        spec->rope_freq_base = presets[i].rope_freq_base;
        spec->rms_eps        = 1e-5f;
        spec->tied           = true;
        if (arch == HTP_MODEL_ARCH_QWEN3MOE) {
            spec->n_expert      = presets[i].n_expert;
            spec->n_expert_used = presets[i].n_expert_used;
            spec->n_ff_exp      = presets[i].n_ff_exp;
        }
        if (arch != HTP_MODEL_ARCH_LLAMA) {
            spec->rms_eps = 1e-6f;
        }
        return 0;
    }
    return -1;
}

#define MAX_LAYERS  512  // libllama's LLAMA_MAX_LAYERS
#define MAX_EXPERTS 512  // libllama's LLAMA_MAX_EXPERTS

int htp_model_spec_check(const struct htp_model_spec * s, char * err, size_t err_size) {
    const char * why = NULL;
    if (s->arch != HTP_MODEL_ARCH_LLAMA && s->arch != HTP_MODEL_ARCH_QWEN3 && s->arch != HTP_MODEL_ARCH_QWEN3MOE) {
        why = "unknown architecture";
    } else if (htp_model_ftype(s->wtype) == LLAMA_FTYPE_GUESSED) {
        why = "unsupported weight type";
    } else if (s->n_embd <= 0 || s->n_layer <= 0 || s->n_head <= 0 || s->n_head_kv <= 0 || s->n_ff <= 0 ||
               s->n_ctx <= 0) {
        why = "dimensions must be positive";
    } else if (s->n_layer > MAX_LAYERS) {
        why = "too many layers (libllama allows 512)";
    } else if (s->n_embd % s->n_head != 0) {
        why = "n_embd must be a multiple of n_head";
    } else if ((s->n_embd / s->n_head) % 2 != 0) {
        why = "the head size (n_embd / n_head) must be even for rope";
    } else if (s->n_head % s->n_head_kv != 0) {
        why = "n_head must be a multiple of n_head_kv";
    } else if (s->n_vocab < HTP_MODEL_MIN_VOCAB) {
        why = "n_vocab is below the fixed vocabulary (260 tokens)";
    } else if (!(s->rope_freq_base > 0.0f) || !(s->rms_eps > 0.0f)) {
        why = "rope freq base and rms eps must be positive";
    } else if (s->arch == HTP_MODEL_ARCH_QWEN3MOE &&
               (s->n_expert < 2 || s->n_expert > MAX_EXPERTS || s->n_expert_used < 1 ||
                s->n_expert_used > s->n_expert || s->n_ff_exp <= 0)) {
        why = "qwen3moe needs 2 <= n_expert <= 512, 1 <= n_expert_used <= n_expert, n_ff_exp > 0";
    } else if (s->arch != HTP_MODEL_ARCH_QWEN3MOE && (s->n_expert != 0 || s->n_expert_used != 0)) {
        why = "experts are only for qwen3moe";
    } else if (s->n_threads < 0) {
        why = "n_threads must be >= 0";
    }
    if (why) {
        snprintf(err, err_size, "%s", why);
        return -1;
    }
    return 0;
}

static const char * type_short_name(enum ggml_type type) {
    for (unsigned i = 0; i < N_WEIGHT_TYPES; i++) {
        if (weight_types[i].type == type) {
            return weight_types[i].name;
        }
    }
    return ggml_type_name(type);
}

void htp_model_spec_describe(const struct htp_model_spec * s, char * buf, size_t size) {
    int n = snprintf(buf, size, "htp-model/%d %s %dx%d h%d/%d ff%d v%d", HTP_MODEL_VERSION,
                     htp_model_arch_name(s->arch), s->n_embd, s->n_layer, s->n_head, s->n_head_kv, s->n_ff, s->n_vocab);
    if (n >= 0 && (size_t)n < size && s->arch == HTP_MODEL_ARCH_QWEN3MOE) {
        n += snprintf(buf + n, size - n, " e%d/%d ffe%d", s->n_expert_used, s->n_expert, s->n_ff_exp);
    }
    if (n >= 0 && (size_t)n < size) {
        snprintf(buf + n, size - n, " %s%s seed %llu", type_short_name(s->wtype), s->tied ? "" : " untied",
                 (unsigned long long)s->seed);
    }
}

// ---------------------------------------------------------------- vocabulary
//
// An SPM ("llama") vocabulary that tokenizes any UTF-8 text through byte
// fallback and gives it back exactly:
//   0 <unk> (UNKNOWN)  1 <s> (CONTROL, bos)  2 </s> (CONTROL, eos)
//   3..258   <0x00>..<0xFF> (BYTE)
//   259      "▁" (NORMAL: the escaped space)
//   260..    printable ASCII '!'..'~' (NORMAL), as many as fit
//   then     synthetic words (NORMAL) up to n_vocab, alternately "▁word" and
//            "word", words made of consonant-vowel syllables, so a random
//            model's output reads like text and every id is a real token.
// add_space_prefix is off, so detokenize(tokenize(s)) == s for every s.

enum { VOCAB_BYTE0 = 3, VOCAB_SPACE = 259, VOCAB_ASCII0 = 260 };

struct vocab {
    int32_t       n;
    const char ** text;   // [n], into arena
    float *       score;  // [n]
    int32_t *     type;   // [n] llama_token_type
    char *        arena;
};

static void vocab_free(struct vocab * v) {
    free(v->text);
    free(v->score);
    free(v->type);
    free(v->arena);
    memset(v, 0, sizeof(*v));
}

// Word j (j >= 0) in bijective base 100 over the syllables: distinct j give
// distinct words. Writes at most 2 * 5 + 1 bytes.
static int vocab_word(uint32_t j, char * out) {
    static const char cons[] = "bcdfghjklmnprstvwxyz";
    static const char vows[] = "aeiou";
    char              rev[16];
    int               n = 0;
    for (uint32_t k = j + 1; k > 0;) {
        uint32_t d = (k - 1) % 100;
        k          = (k - 1) / 100;
        rev[n++]   = vows[d % 5];
        rev[n++]   = cons[d / 5];
    }
    for (int i = 0; i < n; i++) {
        out[i] = rev[n - 1 - i];
    }
    out[n] = '\0';
    return n;
}

static int vocab_build(struct vocab * v, int32_t n) {
    memset(v, 0, sizeof(*v));
    v->n     = n;
    v->text  = calloc((size_t)n, sizeof(*v->text));
    v->score = calloc((size_t)n, sizeof(*v->score));
    v->type  = calloc((size_t)n, sizeof(*v->type));
    v->arena = malloc((size_t)n * 16);  // longest token: "▁" + 5 syllables + NUL = 14 bytes
    if (!v->text || !v->score || !v->type || !v->arena) {
        vocab_free(v);
        return -1;
    }
    char * p = v->arena;
    for (int32_t i = 0; i < n; i++) {
        v->text[i] = p;
        if (i == 0) {
            p += sprintf(p, "<unk>") + 1;
            v->type[i] = LLAMA_TOKEN_TYPE_UNKNOWN;
        } else if (i == 1 || i == 2) {
            p += sprintf(p, i == 1 ? "<s>" : "</s>") + 1;
            v->type[i] = LLAMA_TOKEN_TYPE_CONTROL;
        } else if (i < VOCAB_SPACE) {
            p += sprintf(p, "<0x%02X>", i - VOCAB_BYTE0) + 1;
            v->type[i] = LLAMA_TOKEN_TYPE_BYTE;
        } else if (i == VOCAB_SPACE) {
            p += sprintf(p, "\xe2\x96\x81") + 1;
            v->type[i] = LLAMA_TOKEN_TYPE_NORMAL;
        } else if (i < VOCAB_ASCII0 + ('~' - '!' + 1)) {
            p += sprintf(p, "%c", '!' + (i - VOCAB_ASCII0)) + 1;
            v->type[i] = LLAMA_TOKEN_TYPE_NORMAL;
        } else {
            uint32_t k = (uint32_t)(i - (VOCAB_ASCII0 + ('~' - '!' + 1)));
            if (k % 2 == 0) {
                p += sprintf(p, "\xe2\x96\x81");
            }
            p += vocab_word(k / 2, p) + 1;
            v->type[i] = LLAMA_TOKEN_TYPE_NORMAL;
        }
        // SPM merges the highest-scoring pair first: prefer earlier (shorter) tokens.
        v->score[i] = v->type[i] == LLAMA_TOKEN_TYPE_NORMAL ? -(float)(i - VOCAB_SPACE) : 0.0f;
    }
    return 0;
}

// ---------------------------------------------------------------- tensors

enum tensor_kind {
    TENSOR_WEIGHT,  // N(0, 1/fan_in), fan_in = ne[0] (the row length), in the weight type
    TENSOR_ROUTER,  // the same, always F32 and made row by row (the MoE router)
    TENSOR_NORM,    // 1 + N(0, 0.02^2), F32
};

struct tensor_desc {
    char             name[GGML_MAX_NAME];
    int              n_dims;
    int64_t          ne[3];
    enum ggml_type   type;
    enum tensor_kind kind;
    int64_t          n_quiet;  // rows 0..n_quiet-1 get a quarter of the scale (see tensor_list)
};

// The type a weight of row length ne0 is written in: the requested type when
// its block fits the row, else Q8_0, else F16 (as llama-quantize falls back).
static enum ggml_type weight_type_for(enum ggml_type want, int64_t ne0) {
    if (ne0 % ggml_blck_size(want) == 0) {
        return want;
    }
    if (ne0 % ggml_blck_size(GGML_TYPE_Q8_0) == 0 && ggml_is_quantized(want)) {
        return GGML_TYPE_Q8_0;
    }
    return GGML_TYPE_F16;
}

// Fills out[] (capacity cap) with the tensors the spec's architecture loads,
// in file order; returns the count or -1 if cap is too small.
static int tensor_list(const struct htp_model_spec * s, struct tensor_desc * out, int cap) {
    const int64_t head  = s->n_embd / s->n_head;
    const int64_t n_q   = head * s->n_head;
    const int64_t n_kv  = head * s->n_head_kv;
    const bool    qwen3 = s->arch != HTP_MODEL_ARCH_LLAMA;
    const bool    moe   = s->arch == HTP_MODEL_ARCH_QWEN3MOE;
    int           n     = 0;

#define ADD(kind_, type_, nd_, a_, b_, c_, ...)                                                 \
    do {                                                                                        \
        if (n == cap) {                                                                         \
            return -1;                                                                          \
        }                                                                                       \
        struct tensor_desc * t = &out[n++];                                                     \
        snprintf(t->name, sizeof(t->name), __VA_ARGS__);                                        \
        t->n_dims  = (nd_);                                                                     \
        t->ne[0]   = (a_);                                                                      \
        t->ne[1]   = (b_);                                                                      \
        t->ne[2]   = (c_);                                                                      \
        t->kind    = (kind_);                                                                   \
        t->n_quiet = 0;                                                                         \
        t->type    = (kind_) == TENSOR_WEIGHT ? weight_type_for((type_), (a_)) : GGML_TYPE_F32; \
    } while (0)

    // token_embd is read by GET_ROWS on the CPU: every type we write converts
    // to float there (ggml type traits have to_float for all of them).
    // The special and byte tokens' rows are made small, so their logits are:
    // a random model then rarely ends its text with </s> or emits stray bytes
    // (invalid UTF-8), and greedy output reads as words.
    ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, s->n_vocab, 1, "token_embd.weight");
    out[n - 1].n_quiet = VOCAB_SPACE;
    ADD(TENSOR_NORM, GGML_TYPE_F32, 1, s->n_embd, 1, 1, "output_norm.weight");
    if (!s->tied) {
        ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, s->n_vocab, 1, "output.weight");
        out[n - 1].n_quiet = VOCAB_SPACE;
    }
    for (int il = 0; il < s->n_layer; il++) {
        ADD(TENSOR_NORM, GGML_TYPE_F32, 1, s->n_embd, 1, 1, "blk.%d.attn_norm.weight", il);
        ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, n_q, 1, "blk.%d.attn_q.weight", il);
        ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, n_kv, 1, "blk.%d.attn_k.weight", il);
        ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, n_kv, 1, "blk.%d.attn_v.weight", il);
        ADD(TENSOR_WEIGHT, s->wtype, 2, n_q, s->n_embd, 1, "blk.%d.attn_output.weight", il);
        if (qwen3) {
            ADD(TENSOR_NORM, GGML_TYPE_F32, 1, head, 1, 1, "blk.%d.attn_q_norm.weight", il);
            ADD(TENSOR_NORM, GGML_TYPE_F32, 1, head, 1, 1, "blk.%d.attn_k_norm.weight", il);
        }
        ADD(TENSOR_NORM, GGML_TYPE_F32, 1, s->n_embd, 1, 1, "blk.%d.ffn_norm.weight", il);
        if (moe) {
            // The router stays F32, as in converted MoE models.
            ADD(TENSOR_ROUTER, GGML_TYPE_F32, 2, s->n_embd, s->n_expert, 1, "blk.%d.ffn_gate_inp.weight", il);
            ADD(TENSOR_WEIGHT, s->wtype, 3, s->n_embd, s->n_ff_exp, s->n_expert, "blk.%d.ffn_gate_exps.weight", il);
            ADD(TENSOR_WEIGHT, s->wtype, 3, s->n_ff_exp, s->n_embd, s->n_expert, "blk.%d.ffn_down_exps.weight", il);
            ADD(TENSOR_WEIGHT, s->wtype, 3, s->n_embd, s->n_ff_exp, s->n_expert, "blk.%d.ffn_up_exps.weight", il);
        } else {
            ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, s->n_ff, 1, "blk.%d.ffn_gate.weight", il);
            ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_ff, s->n_embd, 1, "blk.%d.ffn_down.weight", il);
            ADD(TENSOR_WEIGHT, s->wtype, 2, s->n_embd, s->n_ff, 1, "blk.%d.ffn_up.weight", il);
        }
    }
#undef ADD
    return n;
}

static int tensor_count(const struct htp_model_spec * s) {
    return 3 + s->n_layer * 12;  // an upper bound for every architecture
}

static size_t tensor_nbytes(const struct tensor_desc * t) {
    return ggml_row_size(t->type, t->ne[0]) * (size_t)(t->ne[1] * t->ne[2]);
}

uint64_t htp_model_data_size(const struct htp_model_spec * spec) {
    int                  cap = tensor_count(spec);
    struct tensor_desc * ts  = calloc((size_t)cap, sizeof(*ts));
    uint64_t             sum = 0;
    int                  n   = ts ? tensor_list(spec, ts, cap) : -1;
    for (int i = 0; i < n; i++) {
        sum += tensor_nbytes(&ts[i]);
    }
    free(ts);
    return sum;
}

// ---------------------------------------------------------------- random rows
//
// splitmix64: a 64-bit counter run through a strong mixer. Each row's stream
// starts at a key made from (seed, tensor name, row), so rows are independent
// of one another and of the order they are made in.

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#define GOLDEN 0x9e3779b97f4a7c15ull

static uint64_t name_hash(const char * s) {  // FNV-1a
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    }
    return h;
}

// n values ~ mean + sd * N(0, 1). The normal is Irwin-Hall: the sum of four
// 16-bit uniforms of one 64-bit draw, centred and scaled to unit variance
// (within +-3.46 sd; plenty for weights, and ~1 ns a value, which a 1B model
// needs).
static void random_row(uint64_t key, float * out, int64_t n, float mean, float sd) {
    const float scale = sd / (65536.0f * 0.57735027f);  // sd of the sum = 65536 * sqrt(4/12)
    uint64_t    state = key;
    for (int64_t i = 0; i < n; i++) {
        state += GOLDEN;
        const uint64_t u = mix64(state);
        const uint32_t s = (uint32_t)(u & 0xffff) + (uint32_t)((u >> 16) & 0xffff) + (uint32_t)((u >> 32) & 0xffff) +
                           (uint32_t)(u >> 48);
        out[i] = mean + ((float)s - 131070.0f) * scale;
    }
}

// ---------------------------------------------------------------- pieces
//
// Quantizing 1.2 G weights with the reference K-quant / IQ4_NL quantizers
// takes minutes, so large weights are built from pieces: a matmul weight row
// whose length L is a multiple of 256 is the concatenation of 256-wide
// pieces, each picked (by a hash of seed, tensor, row and position) from a
// pool of random pieces shared by every tensor of row length L. The pool is
// quantized once and rows are assembled by copying bytes. Every block size
// we write divides 256 and every quantizer we call treats blocks
// independently, so the assembled bytes are exactly the quantization of the
// assembled floats, and the float weights do not depend on the weight type.
// Other rows (norms, the router, the quiet rows, rows of other lengths) are
// made directly, row by row.

#define PIECE     256
#define POOL_MAX  16384  // pieces per pool: rows of 8 pieces from 16384 do not repeat
#define MAX_POOLS 8

struct pool {
    int64_t        len;    // row length L of the tensors it serves
    int64_t        n;      // pieces: min(POOL_MAX, pieces all those tensors hold), a power of two
    enum ggml_type type;   // the weight type
    size_t         bytes;  // bytes of one quantized piece
    uint8_t *      q;      // [n][bytes]
};

struct pools {
    int         n;
    struct pool p[MAX_POOLS];
};

// Not a function of the weight type: the floats must not be either. (A row
// length that is a multiple of 256 gets the weight type itself.)
static bool tensor_pooled(const struct tensor_desc * t) {
    return t->kind == TENSOR_WEIGHT && t->ne[0] % PIECE == 0;
}

static bool row_pooled(const struct tensor_desc * t, const struct pool * pool, int64_t row) {
    return pool != NULL && row >= t->n_quiet;
}

static struct pool * pool_find(struct pools * ps, int64_t len) {
    for (int i = 0; i < ps->n; i++) {
        if (ps->p[i].len == len) {
            return &ps->p[i];
        }
    }
    return NULL;
}

static float weight_sd(const struct tensor_desc * t, int64_t row) {
    if (t->kind == TENSOR_NORM) {
        return 0.02f;
    }
    const float sd = 1.0f / sqrtf((float)t->ne[0]);
    return row < t->n_quiet ? sd * 0.25f : sd;
}

static uint64_t row_key(uint64_t tkey, int64_t row) {
    return mix64(tkey ^ mix64((uint64_t)row + GOLDEN));
}

// ---------------------------------------------------------------- parallel work

#define MAX_WORKERS 64

static int n_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > MAX_WORKERS ? MAX_WORKERS : (int)n);
}

// fn(arg, i0, i1, scratch) for [0, n) split over n_workers threads (the
// caller's thread is one of them); scratch is scratch_floats floats of the
// worker's own. 0 = success, -1 = out of memory.
typedef void (*range_fn)(void * arg, int64_t i0, int64_t i1, float * scratch);

struct range_job {
    range_fn fn;
    void *   arg;
    int64_t  i0, i1;
    size_t   scratch_floats;
    int      status;
};

static void * range_worker(void * p) {
    struct range_job * j = p;
    float *            s = malloc(sizeof(float) * (j->scratch_floats ? j->scratch_floats : 1));
    if (!s) {
        j->status = -1;
        return NULL;
    }
    j->fn(j->arg, j->i0, j->i1, s);
    free(s);
    j->status = 0;
    return NULL;
}

static int parallel_for(int n_workers, int64_t n, range_fn fn, void * arg, size_t scratch_floats) {
    int w = n < n_workers ? (int)n : n_workers;
    if (w < 1) {
        return 0;
    }
    pthread_t        th[MAX_WORKERS];
    bool             started[MAX_WORKERS];
    struct range_job jobs[MAX_WORKERS];
    const int64_t    per = (n + w - 1) / w;
    for (int i = 0; i < w; i++) {
        const int64_t i0 = i * per < n ? i * per : n;
        const int64_t i1 = i0 + per < n ? i0 + per : n;
        jobs[i]          = (struct range_job){fn, arg, i0, i1, scratch_floats, -1};
    }
    // A worker whose thread cannot start runs on this thread.
    for (int i = 1; i < w; i++) {
        started[i] = pthread_create(&th[i], NULL, range_worker, &jobs[i]) == 0;
        if (!started[i]) {
            range_worker(&jobs[i]);
        }
    }
    range_worker(&jobs[0]);
    int rc = 0;
    for (int i = 0; i < w; i++) {
        if (i > 0 && started[i]) {
            pthread_join(th[i], NULL);
        }
        rc |= jobs[i].status;
    }
    return rc;
}

// ---------------------------------------------------------------- writer

// One row of n floats into type. The types that need an importance matrix
// (IQ2_XXS, IQ2_XS, IQ1_S) get one of ones: random weights have no preferred
// elements.
static void quantize_row(enum ggml_type type, const float * src, void * dst, int64_t n) {
    if (!ggml_quantize_requires_imatrix(type)) {
        ggml_quantize_chunk(type, src, dst, 0, 1, n, NULL);
        return;
    }
    float * ones = malloc(sizeof(float) * (size_t)n);
    if (!ones) {
        fprintf(stderr, "htp-model: out of memory for an importance matrix\n");
        abort();  // a row's worth of floats: the rows themselves are bigger
    }
    for (int64_t i = 0; i < n; i++) {
        ones[i] = 1.0f;
    }
    ggml_quantize_chunk(type, src, dst, 0, 1, n, ones);
    free(ones);
}

struct pool_job {
    struct pool * pool;
    uint64_t      key;
};

static void pool_fill(void * arg, int64_t i0, int64_t i1, float * piece) {
    const struct pool_job * j  = arg;
    const float             sd = 1.0f / sqrtf((float)j->pool->len);
    for (int64_t i = i0; i < i1; i++) {
        random_row(mix64(j->key ^ mix64((uint64_t)i + GOLDEN)), piece, PIECE, 0.0f, sd);
        quantize_row(j->pool->type, piece, j->pool->q + (size_t)i * j->pool->bytes, PIECE);
    }
}

static void pools_free(struct pools * ps) {
    for (int i = 0; i < ps->n; i++) {
        free(ps->p[i].q);
    }
    ps->n = 0;
}

// One pool per row length of the pooled tensors, filled in parallel.
static int pools_init(struct pools * ps, const struct tensor_desc * ts, int n, enum ggml_type wtype, uint64_t seed,
                      int n_workers) {
    int64_t want[MAX_POOLS] = {0};
    ps->n                   = 0;
    for (int i = 0; i < n; i++) {
        if (!tensor_pooled(&ts[i])) {
            continue;
        }
        struct pool * p = pool_find(ps, ts[i].ne[0]);
        if (!p) {
            if (ps->n == MAX_POOLS) {
                continue;  // rows of this length are made directly
            }
            p = &ps->p[ps->n++];
            memset(p, 0, sizeof(*p));
            p->len   = ts[i].ne[0];
            p->type  = wtype;
            p->bytes = ggml_row_size(wtype, PIECE);
        }
        want[p - ps->p] += (ts[i].ne[0] / PIECE) * ts[i].ne[1] * ts[i].ne[2];
    }
    for (int i = 0; i < ps->n; i++) {
        struct pool * p = &ps->p[i];
        p->n            = 1;
        while (p->n < want[i] && p->n < POOL_MAX) {
            p->n *= 2;
        }
        p->q = malloc((size_t)p->n * p->bytes);
        if (!p->q) {
            goto fail;
        }
        struct pool_job j = {p, mix64(seed ^ mix64(0x706f6f6cull + (uint64_t)p->len * GOLDEN))};
        if (parallel_for(n_workers, p->n, pool_fill, &j, PIECE) != 0) {
            goto fail;
        }
    }
    return 0;
fail:
    pools_free(ps);
    return -1;
}

struct rows_job {
    const struct tensor_desc * t;
    const struct pool *        pool;  // NULL: every row made directly
    uint64_t                   tkey;  // the tensor's key (seed and name)
    int64_t                    row0;  // first row of the chunk
    uint8_t *                  dst;   // the chunk's bytes (row row0 first)
};

// Rows [row0 + i0, row0 + i1) of the tensor into the chunk.
static void rows_fill(void * arg, int64_t i0, int64_t i1, float * row) {
    const struct rows_job *    j   = arg;
    const struct tensor_desc * t   = j->t;
    const size_t               rsz = ggml_row_size(t->type, t->ne[0]);
    for (int64_t i = i0; i < i1; i++) {
        const int64_t  r   = j->row0 + i;
        const uint64_t key = row_key(j->tkey, r);
        uint8_t *      out = j->dst + (size_t)i * rsz;
        if (row_pooled(t, j->pool, r)) {
            for (int64_t b = 0; b < t->ne[0] / PIECE; b++) {
                const uint64_t k = mix64(key + (uint64_t)(b + 1) * GOLDEN) & (uint64_t)(j->pool->n - 1);
                memcpy(out + (size_t)b * j->pool->bytes, j->pool->q + (size_t)k * j->pool->bytes, j->pool->bytes);
            }
        } else {
            random_row(key, row, t->ne[0], t->kind == TENSOR_NORM ? 1.0f : 0.0f, weight_sd(t, r));
            quantize_row(t->type, row, out, t->ne[0]);
        }
    }
}

#define CHUNK_BYTES (32u << 20)

// Makes one tensor's data chunk by chunk and writes it, then pads it to align.
static int write_tensor(FILE * f, const struct tensor_desc * t, const struct pool * pool, uint64_t seed, int n_workers,
                        uint8_t * buf, size_t align, uint64_t * done, uint64_t total, htp_model_progress_fn progress,
                        void * user) {
    const size_t    rsz   = ggml_row_size(t->type, t->ne[0]);
    const int64_t   nrows = t->ne[1] * t->ne[2];
    const int64_t   step  = CHUNK_BYTES / rsz > 0 ? (int64_t)(CHUNK_BYTES / rsz) : 1;
    struct rows_job j     = {t, pool, mix64(seed ^ name_hash(t->name)), 0, buf};
    for (; j.row0 < nrows; j.row0 += step) {
        const int64_t n = nrows - j.row0 < step ? nrows - j.row0 : step;
        if (parallel_for(n_workers, n, rows_fill, &j, (size_t)t->ne[0]) != 0) {
            fprintf(stderr, "htp-model: out of memory making %s\n", t->name);
            return -1;
        }
        if (fwrite(buf, rsz, (size_t)n, f) != (size_t)n) {
            fprintf(stderr, "htp-model: write failed: %s\n", strerror(errno));
            return -1;
        }
        *done += rsz * (size_t)n;
        if (progress) {
            progress(*done, total, user);
        }
    }
    static const uint8_t zeros[64] = {0};
    size_t               pad       = (align - tensor_nbytes(t) % align) % align;
    while (pad > 0) {
        size_t k = pad < sizeof(zeros) ? pad : sizeof(zeros);
        if (fwrite(zeros, 1, k, f) != k) {
            fprintf(stderr, "htp-model: write failed: %s\n", strerror(errno));
            return -1;
        }
        pad -= k;
    }
    return 0;
}

// The metadata of the spec: hyperparameters under the architecture's names,
// then the vocabulary.
static void set_metadata(struct gguf_context * g, const struct htp_model_spec * s, const struct vocab * v) {
    const char * a = htp_model_arch_name(s->arch);
    char         key[128];
    char         desc[160];
    htp_model_spec_describe(s, desc, sizeof(desc));

#define KEY(suffix) (snprintf(key, sizeof(key), "%s.%s", a, suffix), key)
    gguf_set_val_str(g, "general.architecture", a);
    gguf_set_val_str(g, "general.name", desc);
    gguf_set_val_u32(g, "general.file_type", (uint32_t)htp_model_ftype(s->wtype));
    gguf_set_val_u32(g, "general.quantization_version", GGML_QNT_VERSION);
    gguf_set_val_u32(g, KEY("context_length"), (uint32_t)s->n_ctx);
    gguf_set_val_u32(g, KEY("embedding_length"), (uint32_t)s->n_embd);
    gguf_set_val_u32(g, KEY("block_count"), (uint32_t)s->n_layer);
    gguf_set_val_u32(g, KEY("feed_forward_length"), (uint32_t)s->n_ff);
    gguf_set_val_u32(g, KEY("attention.head_count"), (uint32_t)s->n_head);
    gguf_set_val_u32(g, KEY("attention.head_count_kv"), (uint32_t)s->n_head_kv);
    gguf_set_val_f32(g, KEY("attention.layer_norm_rms_epsilon"), s->rms_eps);
    gguf_set_val_f32(g, KEY("rope.freq_base"), s->rope_freq_base);
    gguf_set_val_u32(g, KEY("rope.dimension_count"), (uint32_t)(s->n_embd / s->n_head));
    gguf_set_val_u32(g, KEY("vocab_size"), (uint32_t)s->n_vocab);
    if (s->arch != HTP_MODEL_ARCH_LLAMA) {
        gguf_set_val_u32(g, KEY("attention.key_length"), (uint32_t)(s->n_embd / s->n_head));
        gguf_set_val_u32(g, KEY("attention.value_length"), (uint32_t)(s->n_embd / s->n_head));
    }
    if (s->arch == HTP_MODEL_ARCH_QWEN3MOE) {
        gguf_set_val_u32(g, KEY("expert_count"), (uint32_t)s->n_expert);
        gguf_set_val_u32(g, KEY("expert_used_count"), (uint32_t)s->n_expert_used);
        gguf_set_val_u32(g, KEY("expert_feed_forward_length"), (uint32_t)s->n_ff_exp);
    }
#undef KEY

    gguf_set_val_str(g, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", v->text, (size_t)v->n);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, v->score, (size_t)v->n);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, v->type, (size_t)v->n);
    gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", 0);
    gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", true);
    gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", false);
    gguf_set_val_bool(g, "tokenizer.ggml.add_space_prefix", false);
}

int htp_model_write(const struct htp_model_spec * spec, const char * path, htp_model_progress_fn progress,
                    void * user) {
    char                  err[160];
    struct vocab          v     = {0};
    struct tensor_desc *  ts    = NULL;
    struct gguf_context * g     = NULL;
    struct ggml_context * gctx  = NULL;
    FILE *                f     = NULL;
    uint8_t *             buf   = NULL;
    char *                tmp   = NULL;
    struct pools          pools = {0};
    int                   rc    = -1;

    if (htp_model_spec_check(spec, err, sizeof(err)) != 0) {
        fprintf(stderr, "htp-model: bad model spec: %s\n", err);
        return -1;
    }
    const int cap = tensor_count(spec);
    ts            = calloc((size_t)cap, sizeof(*ts));
    if (!ts || vocab_build(&v, spec->n_vocab) != 0) {
        fprintf(stderr, "htp-model: out of memory\n");
        goto fail;
    }
    const int n = tensor_list(spec, ts, cap);
    if (n < 0) {
        fprintf(stderr, "htp-model: internal error: tensor list overflow\n");
        goto fail;
    }

    g = gguf_init_empty();
    set_metadata(g, spec, &v);
    struct ggml_init_params ip = {(size_t)n * ggml_tensor_overhead(), NULL, true};
    gctx                       = ggml_init(ip);
    if (!g || !gctx) {
        fprintf(stderr, "htp-model: out of memory\n");
        goto fail;
    }
    int n_fallback = 0;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * t = ggml_new_tensor(gctx, ts[i].type, ts[i].n_dims, ts[i].ne);
        ggml_set_name(t, ts[i].name);
        gguf_add_tensor(g, t);
        n_fallback += ts[i].kind == TENSOR_WEIGHT && ts[i].type != spec->wtype;
    }
    if (n_fallback > 0) {
        fprintf(stderr, "htp-model: note: %d tensor(s) written as Q8_0/F16: rows not a multiple of %s's block (%lld)\n",
                n_fallback, ggml_type_name(spec->wtype), (long long)ggml_blck_size(spec->wtype));
    }

    size_t plen = strlen(path) + 5;
    tmp         = malloc(plen);
    size_t bsz  = CHUNK_BYTES;  // a chunk is whole rows, at least one, at most CHUNK_BYTES unless a row is larger
    for (int i = 0; i < n; i++) {
        const size_t rsz = ggml_row_size(ts[i].type, ts[i].ne[0]);
        bsz              = rsz > bsz ? rsz : bsz;
    }
    buf = malloc(bsz);
    if (!tmp || !buf) {
        fprintf(stderr, "htp-model: out of memory\n");
        goto fail;
    }
    snprintf(tmp, plen, "%s.tmp", path);
    f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "htp-model: cannot create %s: %s\n", tmp, strerror(errno));
        goto fail;
    }
    if (!gguf_write_to_file_ptr(g, f, true)) {
        fprintf(stderr, "htp-model: cannot write the metadata to %s\n", tmp);
        goto fail;
    }

    ggml_quantize_init(spec->wtype);  // its tables, once, before the workers run
    const int workers =
        spec->n_threads > 0 ? (spec->n_threads < MAX_WORKERS ? spec->n_threads : MAX_WORKERS) : n_cpus();
    if (pools_init(&pools, ts, n, spec->wtype, spec->seed, workers) != 0) {
        fprintf(stderr, "htp-model: out of memory\n");
        goto fail;
    }
    const size_t   align = gguf_get_alignment(g);
    const size_t   base  = (size_t)ftell(f);  // the metadata ends padded to the alignment
    const uint64_t total = htp_model_data_size(spec);
    uint64_t       done  = 0;
    for (int i = 0; i < n; i++) {
        // The data must land where the tensor info says it is.
        if ((uint64_t)ftell(f) != base + gguf_get_tensor_offset(g, i)) {
            fprintf(stderr, "htp-model: internal error: %s at %ld, expected %zu\n", ts[i].name, ftell(f),
                    base + gguf_get_tensor_offset(g, i));
            goto fail;
        }
        const struct pool * pool = tensor_pooled(&ts[i]) ? pool_find(&pools, ts[i].ne[0]) : NULL;
        if (write_tensor(f, &ts[i], pool, spec->seed, workers, buf, align, &done, total, progress, user) != 0) {
            goto fail;
        }
    }
    if (fflush(f) != 0 || ferror(f)) {
        fprintf(stderr, "htp-model: write failed: %s\n", strerror(errno));
        goto fail;
    }
    int cr = fclose(f);
    f      = NULL;
    if (cr != 0) {
        fprintf(stderr, "htp-model: write failed: %s\n", strerror(errno));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "htp-model: cannot rename %s to %s: %s\n", tmp, path, strerror(errno));
        goto fail;
    }
    rc = 0;

fail:
    if (f) {
        fclose(f);
    }
    if (rc != 0 && tmp) {
        unlink(tmp);
    }
    free(tmp);
    free(buf);
    if (gctx) {
        ggml_free(gctx);
    }
    if (g) {
        gguf_free(g);
    }
    pools_free(&pools);
    vocab_free(&v);
    free(ts);
    return rc;
}

int htp_model_gguf_name(const char * path, char * buf, size_t size) {
    struct gguf_init_params ip = {true, NULL};
    struct gguf_context *   g  = gguf_init_from_file(path, ip);
    if (!g) {
        return -1;
    }
    int64_t k  = gguf_find_key(g, "general.name");
    int     rc = -1;
    if (k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_STRING) {
        snprintf(buf, size, "%s", gguf_get_val_str(g, k));
        rc = 0;
    }
    gguf_free(g);
    return rc;
}

// ---------------------------------------------------------------- libllama's log
