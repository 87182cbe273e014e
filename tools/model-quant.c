// model-quant.c: a GGUF model's weights rewritten in another type (see
// model-quant.h).

#include "model-quant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "model-gen.h"

static int fail(char * why, size_t why_size, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_weight(const struct ggml_tensor * t) {
    const size_t n = strlen(t->name);
    return ggml_n_dims(t) >= 2 && n >= 6 && strcmp(t->name + n - 6, "weight") == 0;
}

// The type a tensor is written in: `type` where its rows fit, F16 for a
// weight whose rows do not, and its own type for anything that is not a
// weight.
static enum ggml_type target_type(const struct ggml_tensor * t, enum ggml_type type, struct htp_requant_stats * st) {
    if (!is_weight(t)) {
        st->n_kept++;
        return t->type;
    }
    if (t->ne[0] % ggml_blck_size(type) != 0) {
        st->n_fallback++;
        return GGML_TYPE_F16;
    }
    st->n_converted++;
    return type;
}

// src's data as F32 rows, into a new allocation (NULL when out of memory or
// the source type has no conversion to float).
static float * to_f32(const struct ggml_tensor * src) {
    const int64_t n = ggml_nelements(src);
    float *       f = malloc(sizeof(float) * (size_t)n);
    if (!f) {
        return NULL;
    }
    if (src->type == GGML_TYPE_F32) {
        memcpy(f, src->data, sizeof(float) * (size_t)n);
        return f;
    }
    const struct ggml_type_traits * tt = ggml_get_type_traits(src->type);
    if (!tt->to_float) {
        free(f);
        return NULL;
    }
    const int64_t row = src->ne[0], nrows = n / row;
    for (int64_t r = 0; r < nrows; r++) {
        tt->to_float((const char *)src->data + r * src->nb[1], f + r * row, row);
    }
    return f;
}

int htp_model_requantize(const char * in, const char * out, enum ggml_type type, struct htp_requant_stats * stats,
                         char * why, size_t why_size) {
    struct htp_requant_stats st = {0, 0, 0};
    if (type < 0 || type >= GGML_TYPE_COUNT || ggml_type_size(type) == 0 || ggml_quantize_requires_imatrix(type)) {
        return fail(why, why_size, "type %d cannot be written without an importance matrix", (int)type);
    }

    struct ggml_context *   meta = NULL;
    struct gguf_init_params ip   = {false, &meta};
    struct gguf_context *   src  = gguf_init_from_file(in, ip);
    if (!src) {
        return fail(why, why_size, "%s: not a readable GGUF file", in);
    }

    // The converted tensors live in one context sized for all of them.
    size_t bytes = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(src); i++) {
        const struct ggml_tensor * t = ggml_get_tensor(meta, gguf_get_tensor_name(src, i));
        struct htp_requant_stats   scratch;
        memset(&scratch, 0, sizeof scratch);
        const enum ggml_type tt = target_type(t, type, &scratch);
        bytes += ggml_row_size(tt, t->ne[0]) * (size_t)(ggml_nelements(t) / t->ne[0]) + ggml_tensor_overhead() + 64;
    }
    struct ggml_init_params cp  = {bytes + 1024, NULL, false};
    struct ggml_context *   dst = ggml_init(cp);
    struct gguf_context *   g   = gguf_init_empty();
    int                     rc  = 0;
    if (!dst || !g) {
        rc = fail(why, why_size, "out of memory for %zu bytes of tensors", bytes);
        goto done;
    }
    gguf_set_kv(g, src);
    gguf_set_val_u32(g, "general.file_type", (uint32_t)htp_model_ftype(type));

    for (int64_t i = 0; i < gguf_get_n_tensors(src) && rc == 0; i++) {
        const struct ggml_tensor * t  = ggml_get_tensor(meta, gguf_get_tensor_name(src, i));
        const enum ggml_type       tt = target_type(t, type, &st);
        struct ggml_tensor *       o  = ggml_new_tensor(dst, tt, GGML_MAX_DIMS, t->ne);
        ggml_set_name(o, t->name);
        if (tt == t->type) {
            memcpy(o->data, t->data, ggml_nbytes(t));
        } else {
            float * f = to_f32(t);
            if (!f) {
                rc = fail(why, why_size, "%s: cannot read %s as floats", t->name, ggml_type_name(t->type));
                break;
            }
            const int64_t row = t->ne[0];
            ggml_quantize_chunk(tt, f, o->data, 0, ggml_nelements(t) / row, row, NULL);
            free(f);
        }
        gguf_add_tensor(g, o);
    }
    if (rc == 0 && !gguf_write_to_file(g, out, false)) {
        rc = fail(why, why_size, "%s: cannot write the file", out);
    }
done:
    if (g) {
        gguf_free(g);
    }
    if (dst) {
        ggml_free(dst);
    }
    ggml_free(meta);
    gguf_free(src);
    if (rc == 0 && stats) {
        *stats = st;
    }
    return rc;
}
