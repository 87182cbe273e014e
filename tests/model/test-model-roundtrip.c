// test-model-roundtrip: htp-model's generator (tools/model-common.c) against
// libllama, on the CPU.
//  - a tiny llama, qwen3 and qwen3moe model each load, and the hparams
//    libllama reads back are the ones written; the vocabulary is SPM with
//    <s>/</s>; UTF-8 text (accents, CJK, emoji, tabs, newlines, spaces)
//    tokenizes and detokenizes to exactly itself; a prompt and a few greedy
//    tokens decode to finite, non-constant logits;
//  - a file is a function of the spec: 1 and 3 generator threads give the same
//    bytes, another seed gives other bytes;
//  - every weight type writes the requested type (norms stay F32), loads and
//    decodes; files of one seed but different types hold the same weights, so
//    their logits correlate with the F32 model's;
//  - a bad spec is refused and leaves no file; a missing model fails to open.

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "llama.h"
#include "model-gen.h"
#include "model-load.h"
#include "test-check.h"

static char tmpdir[] = "/tmp/test-model-XXXXXX";

static void quiet_log(enum ggml_log_level level, const char * text, void * user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static long meta_long(const struct llama_model * m, const char * key) {
    char buf[64];
    if (llama_model_meta_val_str(m, key, buf, sizeof(buf)) < 0) {
        return -1;
    }
    return strtol(buf, NULL, 10);
}

static double meta_double(const struct llama_model * m, const char * key) {
    char buf[64];
    if (llama_model_meta_val_str(m, key, buf, sizeof(buf)) < 0) {
        return -1.0;
    }
    return strtod(buf, NULL);
}

// Decodes the prompt and n_gen greedy tokens; the last logits into out (n_vocab).
// 0 = every logit of every step finite and not all equal.
static int decode_some(struct llama_context * ctx, const struct llama_vocab * vocab, const char * prompt, int n_gen,
                       float * out) {
    llama_token toks[64];
    const int   n_vocab = llama_vocab_n_tokens(vocab);
    int         n       = llama_tokenize(vocab, prompt, (int)strlen(prompt), toks, 64, true, false);
    if (n <= 0) {
        return -1;
    }
    if (llama_decode(ctx, llama_batch_get_one(toks, n)) != 0) {
        return -1;
    }
    for (int step = 0; step <= n_gen; step++) {
        const float * l = llama_get_logits_ith(ctx, -1);
        if (!l) {
            return -1;
        }
        int   best = 0;
        float lo = l[0], hi = l[0];
        for (int i = 0; i < n_vocab; i++) {
            if (!isfinite(l[i])) {
                return -1;
            }
            lo   = l[i] < lo ? l[i] : lo;
            hi   = l[i] > hi ? l[i] : hi;
            best = l[i] > l[best] ? i : best;
        }
        if (!(hi > lo)) {
            return -1;
        }
        if (step == n_gen) {
            memcpy(out, l, sizeof(float) * (size_t)n_vocab);
            break;
        }
        llama_token t = best;
        if (llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0) {
            return -1;
        }
    }
    return 0;
}

static int open_cpu(const char * path, struct llama_model ** m, struct llama_context ** c) {
    struct htp_model_load_params lp = {0};
    lp.path                         = path;
    lp.n_ctx                        = 128;
    lp.n_threads                    = 1;
    return htp_model_open(&lp, m, c);
}

static const char * const text_cases[] = {
    "Hello, world!",
    " leading space and  two  spaces ",
    "caf\xc3\xa9 na\xc3\xafve \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x99\x82 tabs\tand\nnewlines\r\n",
    "<s> not a control token </s>",
    "\x01\x7f bytes",
};

static void test_arch(enum htp_model_arch arch) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%s.gguf", tmpdir, htp_model_arch_name(arch));
    printf("arch %s: write, load, hparams, tokenizer, decode\n", htp_model_arch_name(arch));

    struct htp_model_spec s;
    if (htp_model_spec_preset(&s, arch, "tiny") != 0) {
        CHECK(0, "no tiny preset");
        return;
    }
    s.seed  = 7;
    s.n_ctx = 384;  // differs from every default, so reading it back means something
    if (htp_model_write(&s, path, NULL, NULL) != 0) {
        CHECK(0, "htp_model_write failed");
        return;
    }
    struct llama_model *   m = NULL;
    struct llama_context * c = NULL;
    if (open_cpu(path, &m, &c) != 0) {
        CHECK(0, "libllama cannot load %s", path);
        return;
    }
    const struct llama_vocab * v = llama_model_get_vocab(m);
    const char *               a = htp_model_arch_name(arch);
    char                       key[128];

    CHECK(llama_model_n_embd(m) == s.n_embd, "n_embd %d != %d", llama_model_n_embd(m), s.n_embd);
    CHECK(llama_model_n_layer(m) == s.n_layer, "n_layer %d != %d", llama_model_n_layer(m), s.n_layer);
    CHECK(llama_model_n_head(m) == s.n_head, "n_head %d != %d", llama_model_n_head(m), s.n_head);
    CHECK(llama_model_n_head_kv(m) == s.n_head_kv, "n_head_kv %d != %d", llama_model_n_head_kv(m), s.n_head_kv);
    CHECK(llama_model_n_ctx_train(m) == s.n_ctx, "n_ctx_train %d != %d", llama_model_n_ctx_train(m), s.n_ctx);
    CHECK(llama_vocab_n_tokens(v) == s.n_vocab, "n_vocab %d != %d", llama_vocab_n_tokens(v), s.n_vocab);
    CHECK(llama_vocab_type(v) == LLAMA_VOCAB_TYPE_SPM, "vocab type %d", (int)llama_vocab_type(v));
    CHECK(llama_vocab_bos(v) == 1 && llama_vocab_eos(v) == 2, "bos %d eos %d", llama_vocab_bos(v), llama_vocab_eos(v));
    CHECK(llama_vocab_is_eog(v, 2), "</s> is not end-of-generation");
    CHECK(llama_model_has_encoder(m) == false && llama_model_has_decoder(m), "not a decoder-only model");
    char arch_read[32] = "";
    llama_model_meta_val_str(m, "general.architecture", arch_read, sizeof(arch_read));
    CHECK(strcmp(arch_read, a) == 0, "general.architecture '%s'", arch_read);
    CHECK(meta_long(m, "general.file_type") == LLAMA_FTYPE_MOSTLY_F16, "general.file_type %ld",
          meta_long(m, "general.file_type"));
    snprintf(key, sizeof(key), "%s.feed_forward_length", a);
    CHECK(meta_long(m, key) == s.n_ff, "%s = %ld", key, meta_long(m, key));
    snprintf(key, sizeof(key), "%s.rope.freq_base", a);
    CHECK(fabs(meta_double(m, key) - s.rope_freq_base) < 1e-3, "%s = %g", key, meta_double(m, key));
    snprintf(key, sizeof(key), "%s.attention.layer_norm_rms_epsilon", a);
    CHECK(fabs(meta_double(m, key) - s.rms_eps) < 1e-9, "%s = %g", key, meta_double(m, key));
    if (arch == HTP_MODEL_ARCH_QWEN3MOE) {
        snprintf(key, sizeof(key), "%s.expert_count", a);
        CHECK(meta_long(m, key) == s.n_expert, "%s = %ld", key, meta_long(m, key));
        snprintf(key, sizeof(key), "%s.expert_used_count", a);
        CHECK(meta_long(m, key) == s.n_expert_used, "%s = %ld", key, meta_long(m, key));
        snprintf(key, sizeof(key), "%s.expert_feed_forward_length", a);
        CHECK(meta_long(m, key) == s.n_ff_exp, "%s = %ld", key, meta_long(m, key));
    }
    // Every tensor libllama loaded was used (it refuses files with extra ones),
    // and the parameter count is the one the spec implies.
    const int64_t head = s.n_embd / s.n_head;
    int64_t       want = (int64_t)s.n_vocab * s.n_embd + s.n_embd;
    for (int il = 0; il < s.n_layer; il++) {
        want += 2 * s.n_embd + 2 * (int64_t)s.n_embd * s.n_embd + 2 * (int64_t)s.n_embd * head * s.n_head_kv;
        want += arch != HTP_MODEL_ARCH_LLAMA ? 2 * head : 0;
        want += arch == HTP_MODEL_ARCH_QWEN3MOE
                    ? (int64_t)s.n_embd * s.n_expert + 3 * (int64_t)s.n_embd * s.n_ff_exp * s.n_expert
                    : 3 * (int64_t)s.n_embd * s.n_ff;
    }
    CHECK((int64_t)llama_model_n_params(m) == want, "n_params %llu != %lld",
          (unsigned long long)llama_model_n_params(m), (long long)want);

    for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
        const char * t = text_cases[i];
        llama_token  toks[256];
        char         back[512];
        int          n  = llama_tokenize(v, t, (int)strlen(t), toks, 256, true, false);
        int          nb = n > 0 ? llama_detokenize(v, toks, n, back, sizeof(back) - 1, true, false) : -1;
        CHECK(n > 1 && toks[0] == 1, "case %zu: tokenize gave %d tokens", i, n);
        if (nb >= 0) {
            back[nb] = '\0';
        }
        CHECK(nb == (int)strlen(t) && memcmp(back, t, strlen(t)) == 0, "case %zu: detokenize gave '%s'", i,
              nb >= 0 ? back : "(error)");
        for (int k = 0; k < n; k++) {
            CHECK(toks[k] >= 0 && toks[k] < s.n_vocab, "case %zu: token %d out of range", i, toks[k]);
        }
    }
    // Words of the vocabulary are whole tokens, not bytes.
    {
        llama_token toks[16];
        int         n = llama_tokenize(v, "\xe2\x96\x81", 3, toks, 16, false, false);
        CHECK(n == 1 && toks[0] == 259, "\"\\u2581\" is not token 259 (%d tokens)", n);
    }

    float * logits = malloc(sizeof(float) * (size_t)s.n_vocab);
    CHECK(logits && decode_some(c, v, "Once upon a time", 4, logits) == 0, "decode: logits not finite or constant");
    free(logits);
    llama_free(c);
    llama_model_free(m);
}

static int file_equal(const char * a, const char * b) {
    FILE * fa = fopen(a, "rb");
    FILE * fb = fopen(b, "rb");
    int    eq = fa && fb;
    while (eq) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) {
            eq = 0;
        }
        if (ca == EOF || cb == EOF) {
            break;
        }
    }
    if (fa) {
        fclose(fa);
    }
    if (fb) {
        fclose(fb);
    }
    return eq;
}

static void test_determinism(void) {
    printf("determinism: threads do not change the file, the seed does\n");
    struct htp_model_spec s;
    htp_model_spec_preset(&s, HTP_MODEL_ARCH_QWEN3MOE, "tiny");
    s.wtype = GGML_TYPE_Q4_K;
    char p1[256], p3[256], ps[256];
    snprintf(p1, sizeof(p1), "%s/det1.gguf", tmpdir);
    snprintf(p3, sizeof(p3), "%s/det3.gguf", tmpdir);
    snprintf(ps, sizeof(ps), "%s/dets.gguf", tmpdir);
    s.n_threads = 1;
    CHECK(htp_model_write(&s, p1, NULL, NULL) == 0, "write (1 thread)");
    s.n_threads = 3;
    CHECK(htp_model_write(&s, p3, NULL, NULL) == 0, "write (3 threads)");
    s.seed++;
    CHECK(htp_model_write(&s, ps, NULL, NULL) == 0, "write (seed + 1)");
    CHECK(file_equal(p1, p3), "1 and 3 threads gave different files");
    CHECK(!file_equal(p1, ps), "seeds %llu and %llu gave the same file", (unsigned long long)s.seed - 1,
          (unsigned long long)s.seed);
    unlink(p1);
    unlink(p3);
    unlink(ps);
}

static double correlation(const float * a, const float * b, int n) {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (int i = 0; i < n; i++) {
        sa += a[i];
        sb += b[i];
        saa += (double)a[i] * a[i];
        sbb += (double)b[i] * b[i];
        sab += (double)a[i] * b[i];
    }
    const double va = saa - sa * sa / n, vb = sbb - sb * sb / n, cab = sab - sa * sb / n;
    return va > 0 && vb > 0 ? cab / sqrt(va * vb) : 0.0;
}

static void test_types(void) {
    static const struct {
        const char * name;
        double       min_corr;  // of the logits with the F32 model's
    } types[] = {
        {"f32", 0.9999}, {"f16", 0.999}, {"bf16", 0.99}, {"q8_0", 0.99},  {"q4_0", 0.8},  {"q4_1", 0.8},
        {"q4_k", 0.8},   {"q5_k", 0.9},  {"q6_k", 0.95}, {"iq4_nl", 0.8}, {"mxfp4", 0.7},
    };
    const int n_types = (int)(sizeof(types) / sizeof(types[0]));
    float *   ref     = NULL;
    float *   cur     = NULL;

    struct htp_model_spec s;
    htp_model_spec_preset(&s, HTP_MODEL_ARCH_LLAMA, "tiny");
    ref = malloc(sizeof(float) * (size_t)s.n_vocab);
    cur = malloc(sizeof(float) * (size_t)s.n_vocab);
    if (!ref || !cur) {
        CHECK(0, "out of memory");
        goto done;
    }
    for (int i = 0; i < n_types; i++) {
        char path[256];
        snprintf(path, sizeof(path), "%s/type-%s.gguf", tmpdir, types[i].name);
        if (htp_model_type_parse(types[i].name, &s.wtype) != 0) {
            CHECK(0, "type %s is not accepted", types[i].name);
            continue;
        }
        if (htp_model_write(&s, path, NULL, NULL) != 0) {
            CHECK(0, "%s: write failed", types[i].name);
            continue;
        }
        // Tensor types in the file.
        struct gguf_init_params gp = {true, NULL};
        struct gguf_context *   g  = gguf_init_from_file(path, gp);
        CHECK(g != NULL, "%s: gguf cannot read the file back", types[i].name);
        if (g) {
            static const char * const weights[] = {"token_embd.weight", "blk.0.attn_q.weight", "blk.1.ffn_down.weight",
                                                   "blk.1.attn_output.weight"};
            for (int k = 0; k < 4; k++) {
                int64_t id = gguf_find_tensor(g, weights[k]);
                CHECK(id >= 0 && gguf_get_tensor_type(g, id) == s.wtype, "%s: %s is %s", types[i].name, weights[k],
                      id >= 0 ? ggml_type_name(gguf_get_tensor_type(g, id)) : "missing");
            }
            int64_t id = gguf_find_tensor(g, "blk.0.attn_norm.weight");
            CHECK(id >= 0 && gguf_get_tensor_type(g, id) == GGML_TYPE_F32, "%s: attn_norm is not F32", types[i].name);
            CHECK(gguf_find_tensor(g, "output.weight") < 0, "%s: tied model has output.weight", types[i].name);
            gguf_free(g);
        }
        struct llama_model *   m = NULL;
        struct llama_context * c = NULL;
        if (open_cpu(path, &m, &c) != 0) {
            CHECK(0, "%s: libllama cannot load it", types[i].name);
            unlink(path);
            continue;
        }
        CHECK(meta_long(m, "general.file_type") == (long)htp_model_ftype(s.wtype), "%s: general.file_type %ld",
              types[i].name, meta_long(m, "general.file_type"));
        const int ok = decode_some(c, llama_model_get_vocab(m), "The quick brown fox", 0, i == 0 ? ref : cur);
        CHECK(ok == 0, "%s: logits not finite or constant", types[i].name);
        if (ok == 0 && i > 0) {
            const double r = correlation(ref, cur, s.n_vocab);
            printf("  %-6s logits vs f32: correlation %.5f\n", types[i].name, r);
            CHECK(r >= types[i].min_corr, "%s: correlation %.5f < %.4f: not the same weights?", types[i].name, r,
                  types[i].min_corr);
        }
        llama_free(c);
        llama_model_free(m);
        unlink(path);
    }
    // The control: another seed's weights do not correlate, so the check
    // above can tell same weights from different ones.
    {
        char path[256];
        snprintf(path, sizeof(path), "%s/type-other-seed.gguf", tmpdir);
        s.wtype = GGML_TYPE_F32;
        s.seed += 1;
        struct llama_model *   m = NULL;
        struct llama_context * c = NULL;
        if (htp_model_write(&s, path, NULL, NULL) != 0 || open_cpu(path, &m, &c) != 0) {
            CHECK(0, "other seed: write or load failed");
        } else {
            const int    ok = decode_some(c, llama_model_get_vocab(m), "The quick brown fox", 0, cur);
            const double r  = ok == 0 ? correlation(ref, cur, s.n_vocab) : 1.0;
            printf("  other seed logits vs f32: correlation %.5f\n", r);
            CHECK(ok == 0 && fabs(r) < 0.5, "another seed correlates %.5f with the first", r);
            llama_free(c);
            llama_model_free(m);
        }
        unlink(path);
    }
done:
    free(ref);
    free(cur);
}

static void test_errors(void) {
    printf("errors: a bad spec is refused, a missing model does not open\n");
    struct htp_model_spec s;
    char                  err[160] = "";
    char                  path[256];
    htp_model_spec_preset(&s, HTP_MODEL_ARCH_LLAMA, "tiny");
    s.n_head = 3;  // 256 is not a multiple of 3
    snprintf(path, sizeof(path), "%s/bad.gguf", tmpdir);
    CHECK(htp_model_spec_check(&s, err, sizeof(err)) != 0 && err[0], "n_head 3 with n_embd 256 accepted");
    CHECK(htp_model_write(&s, path, NULL, NULL) != 0, "a bad spec was written");
    CHECK(access(path, F_OK) != 0, "a bad spec left a file");
    htp_model_spec_preset(&s, HTP_MODEL_ARCH_LLAMA, "tiny");
    s.n_vocab = 100;
    CHECK(htp_model_spec_check(&s, err, sizeof(err)) != 0, "n_vocab below the byte vocabulary accepted");
    CHECK(htp_model_spec_preset(&s, HTP_MODEL_ARCH_LLAMA, "huge") != 0, "unknown preset accepted");
    enum ggml_type t;
    CHECK(htp_model_type_parse("tq1_0", &t) != 0 && htp_model_type_parse("q8_1", &t) != 0,
          "unsupported types tq1_0, q8_1 accepted");

    struct llama_model *   m = NULL;
    struct llama_context * c = NULL;
    snprintf(path, sizeof(path), "%s/missing.gguf", tmpdir);
    CHECK(open_cpu(path, &m, &c) != 0 && m == NULL && c == NULL, "a missing model opened");
    // Not a GGUF file.
    snprintf(path, sizeof(path), "%s/junk.gguf", tmpdir);
    FILE * f = fopen(path, "wb");
    if (f) {
        fputs("this is not a model\n", f);
        fclose(f);
    }
    CHECK(open_cpu(path, &m, &c) != 0 && m == NULL, "a junk file opened as a model");
    unlink(path);
}

int main(void) {
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    CHECK_OR_RETURN(1, mkdtemp(tmpdir) != NULL, "mkdtemp: %s", strerror(errno));
    test_arch(HTP_MODEL_ARCH_LLAMA);
    test_arch(HTP_MODEL_ARCH_QWEN3);
    test_arch(HTP_MODEL_ARCH_QWEN3MOE);
    test_determinism();
    test_types();
    test_errors();
    for (int i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s.gguf", tmpdir, htp_model_arch_name((enum htp_model_arch)i));
        unlink(path);
    }
    rmdir(tmpdir);
    llama_backend_free();
    return test_exit_code("test-model-roundtrip");
}
