// htp-prof: read a trace-event file written with GGML_HTP_TRACE (see
// src/host/trace.h), print a summary per op family and per host span, and
// draw the timeline as a self-contained SVG.
//
//   htp-prof [--check] [-o out.svg] TRACE.json
//
// The summary counts each NPU op once per NPU, by its span on worker 0 (the
// session's thread, which brackets the whole op; helpers' spans are their
// slices): time, share of all ops' time, count, mean, and GFLOPS / GB/s from
// the "flops" and "bytes" args. --check exits 1 unless the file holds op
// spans of at least two NPU threads and at least one host span (the tests'
// use). The JSON reader below takes any JSON text; only the trace-event
// fields are looked at.

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// A small JSON reader: the whole text into a tree of nodes.
// ---------------------------------------------------------------------------

enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
    enum json_kind kind;
    double         number;  // JSON_NUMBER, JSON_BOOL (0 / 1)
    char *         string;  // JSON_STRING (NUL terminated, escapes decoded)
    struct json *  items;   // JSON_ARRAY / JSON_OBJECT: n values
    char **        keys;    // JSON_OBJECT: n keys
    size_t         n;
};

struct json_parser {
    const char * p;
    const char * end;
    const char * error;  // first problem, NULL while fine
    int          depth;
};

#define JSON_MAX_DEPTH 64

static void json_fail(struct json_parser * j, const char * why) {
    if (!j->error) {
        j->error = why;
    }
}

static void json_skip_ws(struct json_parser * j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        j->p++;
    }
}

static int json_literal(struct json_parser * j, const char * word) {
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) >= n && memcmp(j->p, word, n) == 0) {
        j->p += n;
        return 1;
    }
    return 0;
}

// UTF-8 bytes of code point c into out (at least 4 bytes); their count.
static int utf8_put(char * out, unsigned c) {
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

static int hex4(const char * s, unsigned * out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= (unsigned)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            v |= (unsigned)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            v |= (unsigned)(c - 'A' + 10);
        } else {
            return 0;
        }
    }
    *out = v;
    return 1;
}

// A string at j->p (its opening quote); NULL on error.
static char * json_string(struct json_parser * j) {
    j->p++;
    // Decoded text is never longer than the source.
    const char * q = j->p;
    while (q < j->end && *q != '"') {
        q += *q == '\\' && q + 1 < j->end ? 2 : 1;
    }
    if (q >= j->end) {
        json_fail(j, "unterminated string");
        return NULL;
    }
    char * out = malloc((size_t)(q - j->p) + 1);
    if (!out) {
        json_fail(j, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (j->p < q) {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20) {
            json_fail(j, "control character in string");
            free(out);
            return NULL;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        char e = *j->p++;
        switch (e) {
            case '"':
            case '\\':
            case '/':
                out[n++] = e;
                break;
            case 'b':
                out[n++] = '\b';
                break;
            case 'f':
                out[n++] = '\f';
                break;
            case 'n':
                out[n++] = '\n';
                break;
            case 'r':
                out[n++] = '\r';
                break;
            case 't':
                out[n++] = '\t';
                break;
            case 'u': {
                unsigned cp;
                if (q - j->p < 4 || !hex4(j->p, &cp)) {
                    json_fail(j, "bad \\u escape");
                    free(out);
                    return NULL;
                }
                j->p += 4;
                if (cp >= 0xd800 && cp < 0xdc00 && q - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                    unsigned lo;
                    if (hex4(j->p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        j->p += 6;
                    }
                }
                // 6 source bytes (\uXXXX) give at most 4: it fits.
                n += (size_t)utf8_put(out + n, cp);
                break;
            }
            default:
                json_fail(j, "bad escape");
                free(out);
                return NULL;
        }
    }
    out[n] = '\0';
    j->p   = q + 1;
    return out;
}

static void json_free(struct json * v) {
    if (v->kind == JSON_STRING) {
        free(v->string);
    }
    if (v->kind == JSON_ARRAY || v->kind == JSON_OBJECT) {
        for (size_t i = 0; i < v->n; i++) {
            json_free(&v->items[i]);
            if (v->keys) {
                free(v->keys[i]);
            }
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static int json_value(struct json_parser * j, struct json * out);

// Append a value (and key) to an array or object.
static struct json * json_push(struct json_parser * j, struct json * v, size_t * cap, char * key) {
    if (v->n == *cap) {
        size_t        nc    = *cap ? *cap * 2 : 8;
        struct json * items = realloc(v->items, nc * sizeof *items);
        if (!items) {
            json_fail(j, "out of memory");
            free(key);
            return NULL;
        }
        v->items = items;
        if (v->kind == JSON_OBJECT) {
            char ** keys = realloc(v->keys, nc * sizeof *keys);
            if (!keys) {
                json_fail(j, "out of memory");
                free(key);
                return NULL;
            }
            v->keys = keys;
        }
        *cap = nc;
    }
    if (v->kind == JSON_OBJECT) {
        v->keys[v->n] = key;
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    return &v->items[v->n++];
}

static int json_container(struct json_parser * j, struct json * out, int object) {
    const char close = object ? '}' : ']';
    out->kind        = object ? JSON_OBJECT : JSON_ARRAY;
    size_t cap       = 0;
    if (++j->depth > JSON_MAX_DEPTH) {
        json_fail(j, "nested too deep");
        return -1;
    }
    j->p++;
    json_skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    for (;;) {
        char * key = NULL;
        json_skip_ws(j);
        if (object) {
            if (j->p >= j->end || *j->p != '"') {
                json_fail(j, "expected a key");
                return -1;
            }
            key = json_string(j);
            if (!key) {
                return -1;
            }
            json_skip_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                json_fail(j, "expected ':'");
                return -1;
            }
            j->p++;
        }
        struct json * item = json_push(j, out, &cap, key);
        if (!item || json_value(j, item) != 0) {
            return -1;
        }
        json_skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            j->depth--;
            return 0;
        }
        json_fail(j, object ? "expected ',' or '}'" : "expected ',' or ']'");
        return -1;
    }
}

static int json_value(struct json_parser * j, struct json * out) {
    memset(out, 0, sizeof *out);
    json_skip_ws(j);
    if (j->p >= j->end) {
        json_fail(j, "unexpected end");
        return -1;
    }
    char c = *j->p;
    if (c == '{' || c == '[') {
        return json_container(j, out, c == '{');
    }
    if (c == '"') {
        out->kind   = JSON_STRING;
        out->string = json_string(j);
        return out->string ? 0 : -1;
    }
    if (json_literal(j, "true") || json_literal(j, "false")) {
        out->kind   = JSON_BOOL;
        out->number = j->p[-1] == 'e' && j->p[-2] == 'u';
        return 0;
    }
    if (json_literal(j, "null")) {
        out->kind = JSON_NULL;
        return 0;
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        // strtod needs a NUL: numbers are short, copy one.
        char   buf[64];
        size_t n = 0;
        while (j->p + n < j->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", j->p[n])) {
            buf[n] = j->p[n];
            n++;
        }
        buf[n]      = '\0';
        char * e    = NULL;
        errno       = 0;
        out->kind   = JSON_NUMBER;
        out->number = strtod(buf, &e);
        if (e != buf + n || n == 0) {
            json_fail(j, "bad number");
            return -1;
        }
        j->p += n;
        return 0;
    }
    json_fail(j, "unexpected character");
    return -1;
}

// Parse text[0..len) as one JSON value. 0, or -1 with *why and *at (byte offset).
static int json_parse(const char * text, size_t len, struct json * out, const char ** why, size_t * at) {
    struct json_parser j  = {text, text + len, NULL, 0};
    int                rc = json_value(&j, out);
    if (rc == 0) {
        json_skip_ws(&j);
        if (j.p != j.end) {
            json_fail(&j, "text after the value");
            rc = -1;
        }
    }
    if (rc != 0) {
        *why = j.error ? j.error : "malformed";
        *at  = (size_t)(j.p - text);
        json_free(out);
    }
    return rc;
}

static const struct json * json_get(const struct json * obj, const char * key) {
    if (!obj || obj->kind != JSON_OBJECT) {
        return NULL;
    }
    for (size_t i = 0; i < obj->n; i++) {
        if (strcmp(obj->keys[i], key) == 0) {
            return &obj->items[i];
        }
    }
    return NULL;
}

static const char * json_str(const struct json * obj, const char * key) {
    const struct json * v = json_get(obj, key);
    return v && v->kind == JSON_STRING ? v->string : NULL;
}

static double json_num(const struct json * obj, const char * key, double def) {
    const struct json * v = json_get(obj, key);
    return v && v->kind == JSON_NUMBER ? v->number : def;
}

// An integer field (pid, tid): def when absent or not an int's value.
static int json_int(const struct json * obj, const char * key, int def) {
    double v = json_num(obj, key, NAN);
    return v >= -2147483648.0 && v <= 2147483647.0 ? (int)v : def;
}

// ---------------------------------------------------------------------------
// Trace events
// ---------------------------------------------------------------------------

struct span {
    const char * name;
    int          npu;  // cat "npu"
    int          pid, tid;
    double       ts, dur, flops, bytes;
    int          lane;
};

struct counter_pt {
    const char * name;
    double       ts, value;
};

struct lane {
    int  pid, tid, npu;
    char label[96];
};

struct trace {
    struct json         root;
    struct span *       spans;
    size_t              n_spans;
    struct counter_pt * counters;
    size_t              n_counters;
    size_t              n_events;
    struct lane         lanes[64];
    int                 n_lanes;
    double              t0, t1;
};

static const char * meta_name(const struct json * events, int pid, int tid, const char * which) {
    for (size_t i = 0; i < events->n; i++) {
        const struct json * e  = &events->items[i];
        const char *        ph = json_str(e, "ph");
        const char *        nm = json_str(e, "name");
        if (ph && nm && strcmp(ph, "M") == 0 && strcmp(nm, which) == 0 && json_int(e, "pid", -1) == pid &&
            (strcmp(which, "process_name") == 0 || json_int(e, "tid", -1) == tid)) {
            return json_str(json_get(e, "args"), "name");
        }
    }
    return NULL;
}

static int lane_of(struct trace * t, const struct json * events, int pid, int tid, int npu) {
    for (int i = 0; i < t->n_lanes; i++) {
        if (t->lanes[i].pid == pid && t->lanes[i].tid == tid) {
            return i;
        }
    }
    if (t->n_lanes == (int)(sizeof t->lanes / sizeof t->lanes[0])) {
        return -1;
    }
    struct lane * l = &t->lanes[t->n_lanes];
    l->pid          = pid;
    l->tid          = tid;
    l->npu          = npu;
    const char * tn = meta_name(events, pid, tid, "thread_name");
    const char * pn = meta_name(events, pid, tid, "process_name");
    snprintf(l->label, sizeof l->label, "%s: %s", pn ? pn : npu ? "npu" : "host", tn ? tn : "thread");
    return t->n_lanes++;
}

static int lane_cmp(const void * a, const void * b) {
    const struct lane * x = a;
    const struct lane * y = b;
    if (x->npu != y->npu) {
        return x->npu - y->npu;  // host lanes first
    }
    if (x->pid != y->pid) {
        return x->pid < y->pid ? -1 : 1;
    }
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int trace_load(const char * path, struct trace * t) {
    memset(t, 0, sizeof *t);
    FILE * f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "htp-prof: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char * text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char * nt = realloc(text, cap * 2);
            if (!nt) {
                free(text);
                text = NULL;
                break;
            }
            text = nt;
            cap *= 2;
        }
    }
    fclose(f);
    if (!text) {
        fprintf(stderr, "htp-prof: %s: out of memory\n", path);
        return -1;
    }
    const char * why;
    size_t       at;
    int          rc = json_parse(text, len, &t->root, &why, &at);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "htp-prof: %s: not JSON: %s at byte %zu\n", path, why, at);
        return -1;
    }
    const struct json * events = json_get(&t->root, "traceEvents");
    if (!events || events->kind != JSON_ARRAY) {
        fprintf(stderr, "htp-prof: %s: no \"traceEvents\" array\n", path);
        return -1;
    }
    t->n_events = events->n;
    t->spans    = calloc(events->n ? events->n : 1, sizeof *t->spans);
    t->counters = calloc(events->n ? events->n : 1, sizeof *t->counters);
    if (!t->spans || !t->counters) {
        fprintf(stderr, "htp-prof: out of memory\n");
        return -1;
    }
    t->t0 = INFINITY;
    t->t1 = -INFINITY;
    for (size_t i = 0; i < events->n; i++) {
        const struct json * e    = &events->items[i];
        const char *        ph   = json_str(e, "ph");
        const char *        name = json_str(e, "name");
        if (!ph || !name) {
            continue;
        }
        double ts = json_num(e, "ts", NAN);
        if (strcmp(ph, "X") == 0 && !isnan(ts)) {
            struct span * s = &t->spans[t->n_spans++];
            const char *  c = json_str(e, "cat");
            s->name         = name;
            s->npu          = c && strcmp(c, "npu") == 0;
            s->pid          = json_int(e, "pid", 0);
            s->tid          = json_int(e, "tid", 0);
            s->ts           = ts;
            s->dur          = json_num(e, "dur", 0);
            s->flops        = json_num(json_get(e, "args"), "flops", 0);
            s->bytes        = json_num(json_get(e, "args"), "bytes", 0);
        } else if (strcmp(ph, "C") == 0 && !isnan(ts)) {
            const struct json * a = json_get(e, "args");
            struct counter_pt * c = &t->counters[t->n_counters++];
            c->name               = name;
            c->ts                 = ts;
            c->value =
                a && a->kind == JSON_OBJECT && a->n > 0 && a->items[0].kind == JSON_NUMBER ? a->items[0].number : 0;
        } else {
            continue;
        }
        t->t0      = ts < t->t0 ? ts : t->t0;
        double end = strcmp(ph, "X") == 0 ? ts + json_num(e, "dur", 0) : ts;
        t->t1      = end > t->t1 ? end : t->t1;
    }
    for (size_t i = 0; i < t->n_spans; i++) {
        lane_of(t, events, t->spans[i].pid, t->spans[i].tid, t->spans[i].npu);
    }
    qsort(t->lanes, (size_t)t->n_lanes, sizeof t->lanes[0], lane_cmp);
    for (size_t i = 0; i < t->n_spans; i++) {
        t->spans[i].lane = lane_of(t, events, t->spans[i].pid, t->spans[i].tid, t->spans[i].npu);
    }
    if (t->n_spans == 0 && t->n_counters == 0) {
        t->t0 = t->t1 = 0;
    }
    // Microseconds of a monotonic clock: anything past ~30 years is not a trace of ours.
    if (!isfinite(t->t0) || !isfinite(t->t1) || fabs(t->t0) > 1e15 || fabs(t->t1) > 1e15) {
        fprintf(stderr, "htp-prof: %s: timestamps out of range\n", path);
        return -1;
    }
    return 0;
}

static void trace_free(struct trace * t) {
    json_free(&t->root);
    free(t->spans);
    free(t->counters);
}

// ---------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------

struct family {
    const char * name;
    size_t       count;
    double       us, flops, bytes;
};

static int family_cmp(const void * a, const void * b) {
    const struct family * x = a;
    const struct family * y = b;
    return x->us < y->us ? 1 : x->us > y->us ? -1 : strcmp(x->name, y->name);
}

// Group spans (npu = which, on worker 0 only for NPU spans) by name.
static size_t group(const struct trace * t, int npu, struct family * fam, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        const struct span * s = &t->spans[i];
        if (s->npu != npu || (npu && s->tid != 0)) {
            continue;
        }
        size_t k = 0;
        while (k < n && strcmp(fam[k].name, s->name) != 0) {
            k++;
        }
        if (k == n) {
            if (n == cap) {
                continue;
            }
            memset(&fam[n], 0, sizeof fam[n]);
            fam[n++].name = s->name;
        }
        fam[k].count++;
        fam[k].us += s->dur;
        fam[k].flops += s->flops;
        fam[k].bytes += s->bytes;
    }
    qsort(fam, n, sizeof fam[0], family_cmp);
    return n;
}

static void print_summary(const char * path, const struct trace * t) {
    int n_npu_lanes = 0;
    for (int i = 0; i < t->n_lanes; i++) {
        n_npu_lanes += t->lanes[i].npu;
    }
    printf("htp-prof: %s: %zu events, %zu spans, %zu counter samples, %d host and %d NPU threads, %.3f ms\n", path,
           t->n_events, t->n_spans, t->n_counters, t->n_lanes - n_npu_lanes, n_npu_lanes, (t->t1 - t->t0) / 1000.0);

    struct family fam[128];
    size_t        n     = group(t, 1, fam, 128);
    double        total = 0;
    for (size_t i = 0; i < n; i++) {
        total += fam[i].us;
    }
    printf("\nNPU ops (each op once per NPU, by its span on worker 0): %.3f ms\n", total / 1000.0);
    printf("%-16s %7s %11s %7s %10s %9s %9s\n", "family", "count", "time us", "share", "mean us", "GFLOPS", "GB/s");
    for (size_t i = 0; i < n; i++) {
        const struct family * f      = &fam[i];
        char                  gf[32] = "-", gb[32] = "-";
        if (f->flops > 0 && f->us > 0) {
            snprintf(gf, sizeof gf, "%.2f", f->flops / f->us / 1e3);
        }
        if (f->bytes > 0 && f->us > 0) {
            snprintf(gb, sizeof gb, "%.2f", f->bytes / f->us / 1e3);
        }
        printf("%-16s %7zu %11.0f %6.1f%% %10.1f %9s %9s\n", f->name, f->count, f->us,
               total > 0 ? 100.0 * f->us / total : 0.0, f->us / (double)f->count, gf, gb);
    }

    n = group(t, 0, fam, 128);
    printf("\nhost spans\n%-16s %7s %11s %10s\n", "span", "count", "time us", "mean us");
    for (size_t i = 0; i < n; i++) {
        printf("%-16s %7zu %11.0f %10.1f\n", fam[i].name, fam[i].count, fam[i].us, fam[i].us / (double)fam[i].count);
    }

    // Counter tracks: samples, least and most, in first-seen order.
    const char * seen[32];
    size_t       n_seen = 0;
    for (size_t i = 0; i < t->n_counters && n_seen < 32; i++) {
        size_t k = 0;
        while (k < n_seen && strcmp(seen[k], t->counters[i].name) != 0) {
            k++;
        }
        if (k == n_seen) {
            seen[n_seen++] = t->counters[i].name;
        }
    }
    if (n_seen) {
        printf("\ncounters\n%-16s %7s %11s %11s\n", "track", "samples", "min", "max");
    }
    for (size_t k = 0; k < n_seen; k++) {
        size_t count = 0;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < t->n_counters; i++) {
            if (strcmp(t->counters[i].name, seen[k]) == 0) {
                count++;
                lo = t->counters[i].value < lo ? t->counters[i].value : lo;
                hi = t->counters[i].value > hi ? t->counters[i].value : hi;
            }
        }
        printf("%-16s %7zu %11.3f %11.3f\n", seen[k], count, lo, hi);
    }
}

// ---------------------------------------------------------------------------
// SVG timeline
// ---------------------------------------------------------------------------

#define SVG_WIDTH   1600
#define SVG_LABEL_W 230
#define SVG_LANE_H  26
#define SVG_TOP     40

static const char * const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                       "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c",
                                       "#393b79", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
#define N_PALETTE (sizeof palette / sizeof palette[0])

// Colour of a family: its rank in first-seen order.
static int colour_index(const char ** names, int * n, const char * name) {
    for (int i = 0; i < *n; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    if (*n < 128) {
        names[(*n)++] = name;
    }
    return *n - 1;
}

static void xml_text(FILE * f, const char * s) {
    for (; *s; s++) {
        switch (*s) {
            case '<':
                fputs("&lt;", f);
                break;
            case '>':
                fputs("&gt;", f);
                break;
            case '&':
                fputs("&amp;", f);
                break;
            case '"':
                fputs("&quot;", f);
                break;
            default:
                fputc(*s, f);
        }
    }
}

static const struct span * sort_spans;  // qsort has no context argument

static int longest_first(const void * a, const void * b) {
    const struct span * x = &sort_spans[*(const size_t *)a];
    const struct span * y = &sort_spans[*(const size_t *)b];
    return x->dur < y->dur ? 1 : x->dur > y->dur ? -1 : 0;
}

static int write_svg(const char * path, const struct trace * t) {
    FILE * f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "htp-prof: %s: %s\n", path, strerror(errno));
        return -1;
    }
    // Families (NPU ops and host spans alike) in first-seen order.
    const char * names[128];
    int          n_names = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        colour_index(names, &n_names, t->spans[i].name);
    }
    int    has_queue = 0;
    double queue_max = 1;
    for (size_t i = 0; i < t->n_counters; i++) {
        if (strcmp(t->counters[i].name, "queue") == 0) {
            has_queue = 1;
            queue_max = t->counters[i].value > queue_max ? t->counters[i].value : queue_max;
        }
    }
    const int    n_rows   = t->n_lanes + has_queue;
    const int    legend_y = SVG_TOP + n_rows * SVG_LANE_H + 40;
    const int    legend_r = (n_names + 5) / 6;
    const int    height   = legend_y + legend_r * 20 + 20;
    const double span     = t->t1 > t->t0 ? t->t1 - t->t0 : 1;
    const double plot_w   = SVG_WIDTH - SVG_LABEL_W - 20;
#define X(ts) (SVG_LABEL_W + ((ts)-t->t0) / span * plot_w)

    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n",
            SVG_WIDTH, height, SVG_WIDTH, height);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_WIDTH, height);
    fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\">htp-prof timeline: %zu spans, %.3f ms</text>\n", t->n_spans,
            span / 1000.0);

    // Lanes: background and label.
    for (int l = 0; l < n_rows; l++) {
        int y = SVG_TOP + l * SVG_LANE_H;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%d\" fill=\"%s\"/>\n", SVG_LABEL_W, y, plot_w,
                SVG_LANE_H, l % 2 ? "#f4f4f4" : "#eaeaea");
        fprintf(f, "<text x=\"6\" y=\"%d\">", y + SVG_LANE_H / 2 + 4);
        xml_text(f, l < t->n_lanes ? t->lanes[l].label : "queue depth (batches in flight)");
        fputs("</text>\n", f);
    }
    // Spans: longest first, so that nested ones (a host span inside
    // graph_compute, a helper's slice) are drawn over their parent.
    size_t * order = malloc((t->n_spans ? t->n_spans : 1) * sizeof *order);
    if (!order) {
        fclose(f);
        return -1;
    }
    for (size_t i = 0; i < t->n_spans; i++) {
        order[i] = i;
    }
    sort_spans = t->spans;
    qsort(order, t->n_spans, sizeof *order, longest_first);
    for (size_t i = 0; i < t->n_spans; i++) {
        const struct span * s = &t->spans[order[i]];
        if (s->lane < 0) {
            continue;
        }
        double x = X(s->ts);
        double w = s->dur / span * plot_w;
        w        = w < 0.5 ? 0.5 : w;
        int y    = SVG_TOP + s->lane * SVG_LANE_H + 3;
        fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>", x, y, w,
                SVG_LANE_H - 6, palette[colour_index(names, &n_names, s->name) % N_PALETTE]);
        xml_text(f, s->name);
        fprintf(f, " %.0f us</title></rect>\n", s->dur);
    }
    free(order);
    // Queue depth as a step line.
    if (has_queue) {
        int y0 = SVG_TOP + t->n_lanes * SVG_LANE_H + SVG_LANE_H - 3;
        fputs("<polyline fill=\"none\" stroke=\"#333\" stroke-width=\"1\" points=\"", f);
        double prev = 0;
        fprintf(f, "%d,%d", SVG_LABEL_W, y0);
        for (size_t i = 0; i < t->n_counters; i++) {
            const struct counter_pt * c = &t->counters[i];
            if (strcmp(c->name, "queue") != 0) {
                continue;
            }
            double x = X(c->ts);
            fprintf(f, " %.2f,%.1f %.2f,%.1f", x, y0 - prev / queue_max * (SVG_LANE_H - 6), x,
                    y0 - c->value / queue_max * (SVG_LANE_H - 6));
            prev = c->value;
        }
        fputs("\"/>\n", f);
    }
    // Time axis: about ten ticks at a round step.
    int    axis_y = SVG_TOP + n_rows * SVG_LANE_H + 4;
    double step   = pow(10, floor(log10(span / 10)));
    while (span / step > 12) {
        step *= 2;
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"black\"/>\n", SVG_LABEL_W, axis_y,
            SVG_LABEL_W + plot_w, axis_y);
    for (double v = 0; v <= span + 1e-9; v += step) {
        double x = SVG_LABEL_W + v / span * plot_w;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"black\"/>\n", x, axis_y, x, axis_y + 5);
        fprintf(f, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%.*f ms</text>\n", x, axis_y + 17,
                step >= 1000  ? 0
                : step >= 100 ? 1
                              : 2,
                v / 1000.0);
    }
    // Legend.
    for (int i = 0; i < n_names; i++) {
        int x = 10 + (i % 6) * 260;
        int y = legend_y + (i / 6) * 20;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/>", x, y, palette[i % N_PALETTE]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">", x + 20, y + 10);
        xml_text(f, names[i]);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
#undef X
    return fclose(f) == 0 ? 0 : -1;
}

// ---------------------------------------------------------------------------

static int usage(void) {
    fprintf(stderr,
            "usage: htp-prof [--check] [-o out.svg] TRACE.json\n"
            "  summary per op family and per host span of a GGML_HTP_TRACE file;\n"
            "  -o       also draw the timeline as SVG\n"
            "  --check  exit 1 unless the trace has op spans of >= 2 NPU threads and host spans\n");
    return 2;
}

int main(int argc, char ** argv) {
    const char * in    = NULL;
    const char * svg   = NULL;
    int          check = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            svg = argv[++i];
        } else if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage();
            return 0;
        } else if (argv[i][0] == '-' || in) {
            return usage();
        } else {
            in = argv[i];
        }
    }
    if (!in) {
        return usage();
    }
    struct trace t;
    if (trace_load(in, &t) != 0) {
        trace_free(&t);
        return 1;
    }
    print_summary(in, &t);
    int rc = 0;
    if (svg) {
        if (write_svg(svg, &t) != 0) {
            rc = 1;
        } else {
            printf("\nhtp-prof: timeline written to %s\n", svg);
        }
    }
    if (check) {
        int npu_threads = 0, host = 0;
        for (int l = 0; l < t.n_lanes; l++) {
            npu_threads += t.lanes[l].npu;
            host += !t.lanes[l].npu;
        }
        if (npu_threads < 2 || host < 1) {
            fprintf(stderr,
                    "htp-prof: check failed: op spans on %d NPU threads (want >= 2), %d host threads (want >= 1)\n",
                    npu_threads, host);
            rc = 1;
        }
    }
    trace_free(&t);
    return rc;
}
