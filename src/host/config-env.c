// config-env.c: validated readers of one environment variable (see
// config-env.h). Where ggml-hexagon reads a value with atoi/strtoul and
// silently takes garbage as 0 (or throws), these warn instead; the grammar of
// each value is the reference's.

#include "config-env.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define MiB (1024ull * 1024ull)

void htp_config_env_warn(const char * var, const char * val, size_t n, const char * why, const char * used_fmt, ...) {
    char    used[160];
    va_list ap;
    va_start(ap, used_fmt);
    vsnprintf(used, sizeof used, used_fmt, ap);
    va_end(ap);
    const int shown = (int)(n > HTP_CONFIG_QUOTE_MAX ? HTP_CONFIG_QUOTE_MAX : n);
    HTP_LOG_WARN("ggml-htp: %s='%.*s%s' %s, using %s\n", var, shown, val, n > HTP_CONFIG_QUOTE_MAX ? "..." : "", why,
                 used);
}

static int is_blank(const char * s) {
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return *s == '\0';
}

int htp_config_parse_long(const char * s, int base, long long * out, int * erange) {
    char * end  = NULL;
    *erange     = 0;
    errno       = 0;
    long long v = strtoll(s, &end, base);
    if (end == s) {
        return -1;
    }
    // strtoll skips leading white space and a sign; end moved past s only if
    // at least one digit followed them.
    if (!is_blank(end)) {
        return -2;
    }
    if (errno == ERANGE) {
        *erange = 1;
    }
    *out = v;
    return 0;
}

// An integer option. Unset or empty: def. Returns the number of problems (0/1).
static int env_long(const char * var, int base, long long lo, long long hi, long long def, enum htp_config_range policy,
                    long long * out) {
    const char * s = getenv(var);
    *out           = def;
    if (!s || s[0] == '\0') {
        return 0;
    }

    long long v      = 0;
    int       erange = 0;
    int       rc     = htp_config_parse_long(s, base, &v, &erange);
    if (rc != 0) {
        htp_config_env_warn(var, s, strlen(s), rc == -2 ? "has junk after the number" : "is not a number", "%lld", def);
        return 1;
    }
    if (v < 0) {
        htp_config_env_warn(var, s, strlen(s), "is negative", "%lld", def);
        return 1;
    }
    if (v < lo) {
        htp_config_env_warn(var, s, strlen(s), "is below the minimum", "%lld", def);
        return 1;
    }
    if (erange || v > hi) {
        long long used = policy == HTP_CONFIG_RANGE_CLAMP ? hi : def;
        char      why[64];
        snprintf(why, sizeof why, "is out of range [%lld, %lld]", lo, hi);
        htp_config_env_warn(var, s, strlen(s), why, "%lld", used);
        *out = used;
        return 1;
    }
    *out = v;
    return 0;
}

int htp_config_env_bool(const char * var, int def, int * out) {
    const char * s = getenv(var);
    *out           = def;
    if (!s || s[0] == '\0') {
        return 0;
    }
    long long v      = 0;
    int       erange = 0;
    int       rc     = htp_config_parse_long(s, 10, &v, &erange);
    if (rc != 0) {
        htp_config_env_warn(var, s, strlen(s), rc == -2 ? "has junk after the number" : "is not a number", "%d", def);
        return 1;
    }
    *out = v != 0 || erange;
    return 0;
}

int htp_config_env_int(const char * var, int base, int lo, int hi, int def, enum htp_config_range policy, int * out) {
    long long v = 0;
    int       n = env_long(var, base, lo, hi, def, policy, &v);
    *out        = (int)v;
    return n;
}

int htp_config_env_u32(const char * var, int base, uint32_t lo, uint32_t hi, uint32_t def, enum htp_config_range policy,
                       uint32_t * out) {
    long long v = 0;
    int       n = env_long(var, base, lo, hi, def, policy, &v);
    *out        = (uint32_t)v;
    return n;
}

// Size grammar of GGML_HEXAGON_VMEM and friends: "<number>[ ][k|m|g[i][b]]",
// the number in MiB when no unit is given.
int htp_config_parse_size_n(const char * s, size_t n, uint64_t * out) {
    // Copy: strtod needs a terminated string and the token may be a piece of
    // a longer list (GGML_HEXAGON_MBUF). A size longer than this is junk.
    char   buf[64];
    size_t len = strnlen(s, n);
    if (len >= sizeof buf) {
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';

    const char * p = buf;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    // Plain decimal numbers only: no sign, no "inf"/"nan", no hex floats.
    if (!isdigit((unsigned char)p[0]) && !(p[0] == '.' && isdigit((unsigned char)p[1]))) {
        return -1;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        return -1;
    }
    char * end = NULL;
    double v   = strtod(p, &end);
    if (end == p || !isfinite(v) || v < 0) {
        return -1;
    }

    double unit     = (double)MiB;
    int    has_unit = 1;
    while (*end == ' ') {
        end++;
    }
    switch (*end) {
        case 'k':
        case 'K':
            unit = 1024.0;
            break;
        case 'm':
        case 'M':
            unit = (double)MiB;
            break;
        case 'g':
        case 'G':
            unit = (double)MiB * 1024.0;
            break;
        default:
            has_unit = 0;
            break;
    }
    if (has_unit) {
        end++;
        // "k", "kb", "KiB", "MB", ... all name the same binary unit
        if (*end == 'i') {
            end++;
        }
        if (*end == 'B' || *end == 'b') {
            end++;
        }
    }
    if (!is_blank(end)) {
        return -1;
    }

    double bytes = v * unit;
    if (bytes >= 18446744073709551616.0) {  // 2^64
        return -1;
    }
    *out = (uint64_t)bytes;
    return 0;
}

int htp_config_parse_size(const char * s, uint64_t * out) {
    if (!s || !out) {
        return -1;
    }
    return htp_config_parse_size_n(s, SIZE_MAX, out);
}

void htp_config_format_size(char * buf, size_t size, uint64_t v) {
    if (v != 0 && v % (1024 * MiB) == 0) {
        snprintf(buf, size, "%llu GiB", (unsigned long long)(v / (1024 * MiB)));
    } else if (v != 0 && v % MiB == 0) {
        snprintf(buf, size, "%llu MiB", (unsigned long long)(v / MiB));
    } else if (v != 0 && v % 1024 == 0) {
        snprintf(buf, size, "%llu KiB", (unsigned long long)(v / 1024));
    } else {
        snprintf(buf, size, "%llu bytes", (unsigned long long)v);
    }
}

int htp_config_env_size(const char * var, uint64_t def, uint64_t min_ok, uint64_t * out, int * set) {
    const char * s = getenv(var);
    *out           = def;
    if (set) {
        *set = 0;
    }
    if (!s || s[0] == '\0') {
        return 0;
    }
    char     used[48];
    uint64_t v = 0;
    htp_config_format_size(used, sizeof used, def);
    if (htp_config_parse_size_n(s, SIZE_MAX, &v) != 0) {
        htp_config_env_warn(var, s, strlen(s), "is not a size (number in MiB, or with a k/m/g suffix)", "%s", used);
        return 1;
    }
    if (v < min_ok) {
        htp_config_env_warn(var, s, strlen(s), "is too small", "%s", used);
        return 1;
    }
    *out = v;
    if (set) {
        *set = 1;
    }
    return 0;
}

static int is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

struct htp_config_span htp_config_span_trim(struct htp_config_span s) {
    while (s.n > 0 && is_ws(s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n > 0 && is_ws(s.p[s.n - 1])) {
        s.n--;
    }
    return s;
}
