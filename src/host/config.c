// config.c: read the GGML_HEXAGON_* environment into struct htp_config.
//
// Every option has ggml-hexagon's name, grammar and default, and where the
// reference derives one option from another (vmem and dma64 from the arch,
// the trace depth from the batch size) so do we. Where the reference reads a
// value with atoi/strtoul and silently takes garbage as 0 (or throws), we warn
// instead, naming the variable, the value and what is used in its place:
//
//   not a number, trailing junk, negative   -> the option's default
//   above the option's range                -> clamped to the top (counts) or
//                                              the default (modes)
//   below the option's range                -> the option's default
//   empty string                            -> as if unset
//
// The device list keeps the reference's own repairs (a phys index read up to
// the first junk character, an empty group falling back to NPU 0, ...) and adds
// a warning to each; items the reference would turn into nonsense (negative or
// out-of-range indices, empty or overlong names, duplicates) are dropped.
//
// The device parser walks (pointer, length) spans of the caller's string and
// never writes to it or reads past its NUL.

#include "config.h"

#include "log.h"
#include "proto/htp-proto.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MiB (1024ull * 1024ull)

// Defaults (ggml-hexagon's).
#define DEF_OPBATCH     HTP_OP_DEFAULT_OPS
#define DEF_OPQUEUE     HTP_QUEUE_DEPTH
#define DEF_MBUF_DYN    (512ull * MiB)
#define DEF_MBUF_STATIC (1024ull * MiB)
#define DEF_VMEM_OLD    (3000ull * MiB)  // arch < v75: smaller IOVA space
#define DEF_SELECT      2
#define DEF_POWER_MODE  HTP_POWER_MODE_BURST

// The reference sizes a thread's trace buffer for 256 events per op of a full
// batch plus slack; our NPU takes at most HTP_MAX_TRACES, so this is capped.
#define TRACE_EVENTS_PER_OP 256u
#define TRACE_SLACK         131072u

static const uint32_t default_pmu_events[HTP_CONFIG_N_PMU] = {0x3, 0x111, 0x100, 0x105, 0x240, 0x256, 0x7D, 0x8C};

static const struct {
    const char * name;
    int          mode;
} power_modes[] = {
    {"low_power_saver", HTP_POWER_MODE_LOW_POWER_SAVER},
    {"power_saver", HTP_POWER_MODE_POWER_SAVER},
    {"high_power_saver", HTP_POWER_MODE_HIGH_POWER_SAVER},
    {"low_balanced", HTP_POWER_MODE_LOW_BALANCED},
    {"balanced", HTP_POWER_MODE_BALANCED},
    {"high_performance", HTP_POWER_MODE_HIGH_PERFORMANCE},
    {"sustained_high_performance", HTP_POWER_MODE_SUSTAINED_HIGH_PERFORMANCE},
    {"burst", HTP_POWER_MODE_BURST},
    {"default", DEF_POWER_MODE},
};

// ---------------------------------------------------------------------------
// Warnings
// ---------------------------------------------------------------------------

// Longest piece of a user's value quoted in a warning.
#define QUOTE_MAX 96

// "ggml-htp: VAR='value' <why>, using <used>". `val` is shown up to n bytes.
static void warn_value(const char * var, const char * val, size_t n, const char * why, const char * used_fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void warn_value(const char * var, const char * val, size_t n, const char * why, const char * used_fmt, ...) {
    char    used[160];
    va_list ap;
    va_start(ap, used_fmt);
    vsnprintf(used, sizeof used, used_fmt, ap);
    va_end(ap);
    const int shown = (int)(n > QUOTE_MAX ? QUOTE_MAX : n);
    HTP_LOG_WARN("ggml-htp: %s='%.*s%s' %s, using %s\n", var, shown, val, n > QUOTE_MAX ? "..." : "", why, used);
}

// ---------------------------------------------------------------------------
// Numbers and sizes from the environment
// ---------------------------------------------------------------------------

static int is_blank(const char * s) {
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return *s == '\0';
}

// Parse a whole string as an integer in `base` (0: C prefixes, as strtoul).
// Leading and trailing blanks are allowed. Returns 0, -1 when the string is
// not a number, -2 when a number is followed by junk; *erange is set when it
// overflowed.
static int parse_long(const char * s, int base, long long * out, int * erange) {
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

// How a number outside [lo, hi] is answered.
enum range_policy {
    RANGE_CLAMP,    // above hi: hi (a count asked "as large as possible")
    RANGE_DEFAULT,  // above hi: the default (a mode number that does not exist)
};

// An integer option. Unset or empty: def. Returns the number of problems (0/1).
static int env_long(const char * var, int base, long long lo, long long hi, long long def, enum range_policy policy,
                    long long * out) {
    const char * s = getenv(var);
    *out           = def;
    if (!s || s[0] == '\0') {
        return 0;
    }

    long long v      = 0;
    int       erange = 0;
    int       rc     = parse_long(s, base, &v, &erange);
    if (rc != 0) {
        warn_value(var, s, strlen(s), rc == -2 ? "has junk after the number" : "is not a number", "%lld", def);
        return 1;
    }
    if (v < 0) {
        warn_value(var, s, strlen(s), "is negative", "%lld", def);
        return 1;
    }
    if (v < lo) {
        warn_value(var, s, strlen(s), "is below the minimum", "%lld", def);
        return 1;
    }
    if (erange || v > hi) {
        long long used = policy == RANGE_CLAMP ? hi : def;
        char      why[64];
        snprintf(why, sizeof why, "is out of range [%lld, %lld]", lo, hi);
        warn_value(var, s, strlen(s), why, "%lld", used);
        *out = used;
        return 1;
    }
    *out = v;
    return 0;
}

// A yes/no option: any integer, nonzero meaning yes (as atoi(...) != 0).
static int env_bool(const char * var, int def, int * out) {
    const char * s = getenv(var);
    *out           = def;
    if (!s || s[0] == '\0') {
        return 0;
    }
    long long v      = 0;
    int       erange = 0;
    int       rc     = parse_long(s, 10, &v, &erange);
    if (rc != 0) {
        warn_value(var, s, strlen(s), rc == -2 ? "has junk after the number" : "is not a number", "%d", def);
        return 1;
    }
    *out = v != 0 || erange;
    return 0;
}

static int env_int(const char * var, int base, int lo, int hi, int def, enum range_policy policy, int * out) {
    long long v = 0;
    int       n = env_long(var, base, lo, hi, def, policy, &v);
    *out        = (int)v;
    return n;
}

static int env_u32(const char * var, int base, uint32_t lo, uint32_t hi, uint32_t def, enum range_policy policy,
                   uint32_t * out) {
    long long v = 0;
    int       n = env_long(var, base, lo, hi, def, policy, &v);
    *out        = (uint32_t)v;
    return n;
}

// Size grammar of GGML_HEXAGON_VMEM and friends: "<number>[ ][k|m|g[i][b]]",
// the number in MiB when no unit is given. Reads s up to n bytes or its NUL.
static int parse_size_n(const char * s, size_t n, uint64_t * out) {
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
    return parse_size_n(s, SIZE_MAX, out);
}

static void format_size(char * buf, size_t size, uint64_t v) {
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

// A size option. Unset or empty: def. A value below min_ok is refused.
static int env_size(const char * var, uint64_t def, uint64_t min_ok, uint64_t * out, int * set) {
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
    format_size(used, sizeof used, def);
    if (parse_size_n(s, SIZE_MAX, &v) != 0) {
        warn_value(var, s, strlen(s), "is not a size (number in MiB, or with a k/m/g suffix)", "%s", used);
        return 1;
    }
    if (v < min_ok) {
        warn_value(var, s, strlen(s), "is too small", "%s", used);
        return 1;
    }
    *out = v;
    if (set) {
        *set = 1;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// Device list
// ---------------------------------------------------------------------------

struct span {
    const char * p;
    size_t       n;
};

static int is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static struct span span_trim(struct span s) {
    while (s.n > 0 && is_ws(s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n > 0 && is_ws(s.p[s.n - 1])) {
        s.n--;
    }
    return s;
}

// Offset of the first (or last) c in s, or -1.
static long span_find(struct span s, char c) {
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] == c) {
            return (long)i;
        }
    }
    return -1;
}

static long span_rfind(struct span s, char c) {
    for (size_t i = s.n; i > 0; i--) {
        if (s.p[i - 1] == c) {
            return (long)(i - 1);
        }
    }
    return -1;
}

static struct span span_sub(struct span s, size_t from, size_t to) {
    struct span r = {s.p + from, to - from};
    return r;
}

// Read an int the way std::stoi does (the reference's device parser): leading
// white space, optional sign, at least one digit; anything after the digits is
// ignored. Returns -1 when there is no number or it overflows an int, else 0;
// *exact is 1 when the span held nothing but the digits (and a minus sign).
static int span_stoi(struct span s, int * out, int * exact) {
    size_t i = 0;
    while (i < s.n && isspace((unsigned char)s.p[i])) {
        i++;
    }
    const size_t lead = i;
    int          neg  = 0;
    if (i < s.n && (s.p[i] == '+' || s.p[i] == '-')) {
        neg = s.p[i] == '-';
        i++;
    }
    const size_t digits = i;
    long long    v      = 0;
    while (i < s.n && isdigit((unsigned char)s.p[i])) {
        v = v * 10 + (s.p[i] - '0');
        if (v > (long long)INT_MAX + 1) {
            return -1;
        }
        i++;
    }
    if (i == digits) {
        return -1;
    }
    if (neg) {
        v = -v;
    }
    if (v > INT_MAX || v < INT_MIN) {
        return -1;
    }
    *out   = (int)v;
    *exact = lead == 0 && (digits == 0 || neg) && i == s.n;
    return 0;
}

// Context of one parse: where warnings point and how many there were.
struct dev_parse {
    const char * var;
    int          problems;
};

static void dev_warn(struct dev_parse * dp, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

static void dev_warn(struct dev_parse * dp, const char * fmt, ...) {
    char    msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    HTP_LOG_WARN("ggml-htp: %s: %s\n", dp->var, msg);
    dp->problems++;
}

// Quote a span in a warning: "%.*s%s" with QUOTE_MAX and an ellipsis.
#define SPAN_FMT    "'%.*s%s'"
#define SPAN_ARG(s) (int)((s).n > QUOTE_MAX ? QUOTE_MAX : (s).n), (s).p, (s).n > QUOTE_MAX ? "..." : ""

// Add physical index p to a group's list unless present (the reference keeps
// the first occurrence of each, in order).
static void phys_add(uint32_t * list, uint32_t * n, int p) {
    for (uint32_t i = 0; i < *n; i++) {
        if (list[i] == (uint32_t)p) {
            return;
        }
    }
    list[(*n)++] = (uint32_t)p;
}

// One element of a group's physical list: "p" or "a-b".
static void parse_phys_part(struct dev_parse * dp, struct span part, uint32_t * list, uint32_t * n) {
    long dash    = span_find(part, '-');
    int  exact_a = 1, exact_b = 1;
    if (dash >= 0) {
        int a = 0, b = 0;
        if (span_stoi(span_sub(part, 0, (size_t)dash), &a, &exact_a) != 0 ||
            span_stoi(span_sub(part, (size_t)dash + 1, part.n), &b, &exact_b) != 0) {
            dev_warn(dp, "failed to parse physical range in " SPAN_FMT, SPAN_ARG(part));
            return;
        }
        if (!exact_a || !exact_b) {
            dev_warn(dp, "junk in physical range " SPAN_FMT ", read as %d-%d", SPAN_ARG(part), a, b);
        }
        if (a > b) {
            dev_warn(dp, "empty physical range " SPAN_FMT, SPAN_ARG(part));
            return;
        }
        if (b >= HTP_CONFIG_MAX_PHYS) {
            dev_warn(dp, "physical range " SPAN_FMT " exceeds NPU %d, ignored", SPAN_ARG(part),
                     HTP_CONFIG_MAX_PHYS - 1);
            return;
        }
        for (int p = a; p <= b; p++) {
            phys_add(list, n, p);
        }
        return;
    }

    int p = 0;
    if (span_stoi(part, &p, &exact_a) != 0) {
        dev_warn(dp, "failed to parse physical index in " SPAN_FMT, SPAN_ARG(part));
        return;
    }
    if (!exact_a) {
        dev_warn(dp, "junk in physical index " SPAN_FMT ", read as %d", SPAN_ARG(part), p);
    }
    if (p < 0 || p >= HTP_CONFIG_MAX_PHYS) {
        dev_warn(dp, "physical index " SPAN_FMT " out of range [0, %d], ignored", SPAN_ARG(part),
                 HTP_CONFIG_MAX_PHYS - 1);
        return;
    }
    phys_add(list, n, p);
}

// Virtual index of a group, from the text after its colon. The reference uses
// 0 when it cannot read one.
static uint32_t parse_group_virt(struct dev_parse * dp, struct span item, struct span vs) {
    int v = 0, exact = 1;
    if (span_stoi(vs, &v, &exact) != 0) {
        dev_warn(dp, "failed to parse virtual index in " SPAN_FMT ", using 0", SPAN_ARG(item));
        return 0;
    }
    if (!exact) {
        dev_warn(dp, "junk in virtual index of " SPAN_FMT ", read as %d", SPAN_ARG(item), v);
    }
    if (v < 0 || v >= HTP_CONFIG_MAX_VIRT) {
        dev_warn(dp, "virtual index %d of " SPAN_FMT " out of range [0, %d], using 0", v, SPAN_ARG(item),
                 HTP_CONFIG_MAX_VIRT - 1);
        return 0;
    }
    return (uint32_t)v;
}

// "Name[<plist>[:<v>]]" (or "Name:<v>[<plist>]"), brackets at b_open / b_close.
// Returns 0 with *dev filled, -1 to skip the item.
static int parse_group(struct dev_parse * dp, struct span item, size_t b_open, size_t b_close,
                       struct htp_device_config * dev) {
    struct span name    = span_sub(item, 0, b_open);
    struct span content = span_sub(item, b_open + 1, b_close);
    struct span tail    = span_sub(item, b_close + 1, item.n);

    if (name.n == 0) {
        dev_warn(dp, "device group " SPAN_FMT " has no name, ignored", SPAN_ARG(item));
        return -1;
    }
    if (name.n >= HTP_CONFIG_NAME_MAX) {
        dev_warn(dp, "device name " SPAN_FMT " longer than %d bytes, ignored", SPAN_ARG(name), HTP_CONFIG_NAME_MAX - 1);
        return -1;
    }
    if (tail.n > 0) {
        dev_warn(dp, "junk " SPAN_FMT " after the group " SPAN_FMT ", ignored", SPAN_ARG(tail), SPAN_ARG(item));
    }

    uint32_t    virt  = 0;
    struct span plist = content;
    long        colon = span_find(content, ':');
    if (colon >= 0) {
        plist = span_sub(content, 0, (size_t)colon);
        virt  = parse_group_virt(dp, item, span_sub(content, (size_t)colon + 1, content.n));
    } else {
        long ncolon = span_find(name, ':');
        if (ncolon >= 0) {
            virt = parse_group_virt(dp, item, span_sub(name, (size_t)ncolon + 1, name.n));
        }
    }

    memset(dev, 0, sizeof *dev);
    size_t start = 0;
    for (size_t i = 0; i <= plist.n; i++) {
        if (i == plist.n || plist.p[i] == ',') {
            struct span part = span_trim(span_sub(plist, start, i));
            if (part.n > 0) {
                parse_phys_part(dp, part, dev->phys, &dev->n_members);
            }
            start = i + 1;
        }
    }
    if (dev->n_members == 0) {
        dev_warn(dp, "group " SPAN_FMT " names no physical NPU, using NPU 0", SPAN_ARG(item));
        dev->phys[0]   = 0;
        dev->n_members = 1;
    }

    memcpy(dev->name, name.p, name.n);
    dev->name[name.n] = '\0';
    dev->virt         = virt;
    return 0;
}

// "HTP<p>" or "HTP<p>:<v>". Returns 0 with *dev filled, -1 to skip the item.
static int parse_htp(struct dev_parse * dp, struct span item, struct htp_device_config * dev) {
    struct span rest  = span_sub(item, 3, item.n);
    long        colon = span_find(rest, ':');
    int         phys = 0, virt = 0, exact_p = 1, exact_v = 1;

    struct span ps = colon >= 0 ? span_sub(rest, 0, (size_t)colon) : rest;
    if (span_stoi(ps, &phys, &exact_p) != 0 ||
        (colon >= 0 && span_stoi(span_sub(rest, (size_t)colon + 1, rest.n), &virt, &exact_v) != 0)) {
        dev_warn(dp, "failed to parse device index in " SPAN_FMT ", ignored", SPAN_ARG(item));
        return -1;
    }
    if (phys < 0 || phys >= HTP_CONFIG_MAX_PHYS) {
        dev_warn(dp, "physical index %d of " SPAN_FMT " out of range [0, %d], ignored", phys, SPAN_ARG(item),
                 HTP_CONFIG_MAX_PHYS - 1);
        return -1;
    }
    if (virt < 0 || virt >= HTP_CONFIG_MAX_VIRT) {
        dev_warn(dp, "virtual index %d of " SPAN_FMT " out of range [0, %d], ignored", virt, SPAN_ARG(item),
                 HTP_CONFIG_MAX_VIRT - 1);
        return -1;
    }

    memset(dev, 0, sizeof *dev);
    dev->n_members = 1;
    dev->phys[0]   = (uint32_t)phys;
    dev->virt      = (uint32_t)virt;
    if (colon >= 0) {
        snprintf(dev->name, sizeof dev->name, "HTP%d:%d", phys, virt);
    } else {
        snprintf(dev->name, sizeof dev->name, "HTP%d", phys);
    }
    if (!exact_p || !exact_v) {
        dev_warn(dp, "junk in device " SPAN_FMT ", read as %s", SPAN_ARG(item), dev->name);
    }
    return 0;
}

// A device clashing with one already configured: same name, or a session
// (physical, virtual) another device owns.
static int dev_clash(struct dev_parse * dp, const struct htp_device_config * devs, int n,
                     const struct htp_device_config * d) {
    for (int i = 0; i < n; i++) {
        if (strcmp(devs[i].name, d->name) == 0) {
            dev_warn(dp, "duplicate device name '%s', ignored", d->name);
            return 1;
        }
        if (devs[i].virt != d->virt) {
            continue;
        }
        for (uint32_t a = 0; a < devs[i].n_members; a++) {
            for (uint32_t b = 0; b < d->n_members; b++) {
                if (devs[i].phys[a] == d->phys[b]) {
                    dev_warn(dp, "device '%s' uses session HTP%u:%u of device '%s', ignored", d->name, d->phys[b],
                             d->virt, devs[i].name);
                    return 1;
                }
            }
        }
    }
    return 0;
}

static void dev_default(struct htp_device_config * d, uint32_t virt) {
    memset(d, 0, sizeof *d);
    d->n_members = 1;
    d->phys[0]   = 0;
    d->virt      = virt;
    snprintf(d->name, sizeof d->name, "HTP%u", virt);
}

static int parse_devices(struct dev_parse * dp, const char * s, struct htp_device_config * out, int max, int * n_out) {
    const int limit = max < HTP_CONFIG_MAX_DEVICES ? max : HTP_CONFIG_MAX_DEVICES;
    *n_out          = 0;

    if (!s || s[0] == '\0') {
        dev_default(&out[0], 0);
        *n_out = 1;
        return dp->problems;
    }

    // A plain count: N devices on NPU 0, one virtual session each.
    size_t len       = 0;
    int    all_digit = 1;
    for (; s[len] != '\0'; len++) {
        if (!isdigit((unsigned char)s[len])) {
            all_digit = 0;
        }
    }
    if (all_digit) {
        long long n = 0;
        for (size_t i = 0; i < len && n <= HTP_CONFIG_MAX_DEVICES; i++) {
            n = n * 10 + (s[i] - '0');
        }
        struct span whole = {s, len};
        if (n < 1) {
            dev_warn(dp, "device count " SPAN_FMT " below 1, using 1", SPAN_ARG(whole));
            n = 1;
        } else if (n > limit) {
            dev_warn(dp, "device count " SPAN_FMT " above the limit, using %d", SPAN_ARG(whole), limit);
            n = limit;
        }
        for (int i = 0; i < (int)n; i++) {
            dev_default(&out[i], (uint32_t)i);
        }
        *n_out = (int)n;
        return dp->problems;
    }

    // A list: items split at commas outside brackets.
    struct span whole = {s, len};
    int         depth = 0;
    size_t      start = 0;
    int         n     = 0;
    for (size_t i = 0; i <= len; i++) {
        const char c = i < len ? s[i] : ',';
        if (c == '[') {
            depth++;
            continue;
        }
        if (c == ']') {
            if (depth > 0) {
                depth--;
            }
            continue;
        }
        if (c != ',' || (depth > 0 && i < len)) {
            continue;
        }
        struct span item = span_trim(span_sub(whole, start, i));
        start            = i + 1;
        if (item.n == 0) {
            continue;
        }

        struct htp_device_config dev;
        long                     b_open  = span_find(item, '[');
        long                     b_close = span_rfind(item, ']');
        int                      rc      = -1;
        if (b_open >= 0 && b_close > b_open) {
            rc = parse_group(dp, item, (size_t)b_open, (size_t)b_close, &dev);
        } else if (item.n >= 3 && memcmp(item.p, "HTP", 3) == 0) {
            rc = parse_htp(dp, item, &dev);
        } else {
            dev_warn(dp, "invalid device name format " SPAN_FMT ", must start with HTP", SPAN_ARG(item));
        }
        if (rc != 0) {
            continue;
        }
        if (n >= limit) {
            dev_warn(dp, "max sessions limit reached (%d), ignoring device " SPAN_FMT, limit, SPAN_ARG(item));
            continue;
        }
        if (dev_clash(dp, out, n, &dev)) {
            continue;
        }
        out[n++] = dev;
    }
    if (n == 0) {
        dev_warn(dp, "no valid device in " SPAN_FMT ", no HTP device configured", SPAN_ARG(whole));
    }
    *n_out = n;
    return dp->problems;
}

int htp_config_parse_devices(const char * s, struct htp_device_config * out, int max, int * n_out) {
    if (!out || !n_out || max < 1) {
        return -1;
    }
    struct dev_parse dp = {"GGML_HEXAGON_DEVICES", 0};
    return parse_devices(&dp, s, out, max, n_out);
}

void htp_config_member_name(const struct htp_device_config * dev, uint32_t i, char * buf, size_t size) {
    if (size == 0) {
        return;
    }
    if (i == 0 || i >= dev->n_members) {
        snprintf(buf, size, "%s", dev->name);
    } else {
        snprintf(buf, size, "HTP%u:%u", dev->phys[i], dev->virt);
    }
}

// ---------------------------------------------------------------------------
// Options with their own grammar
// ---------------------------------------------------------------------------

const char * htp_config_power_mode_name(int mode) {
    for (size_t i = 0; i < sizeof power_modes / sizeof power_modes[0]; i++) {
        if (power_modes[i].mode == mode) {
            return power_modes[i].name;
        }
    }
    return "unknown";
}

static int load_power_mode(struct htp_config * cfg) {
    const char * s  = getenv("GGML_HEXAGON_POWER_MODE");
    cfg->power_mode = DEF_POWER_MODE;
    if (!s) {
        return 0;
    }
    for (size_t i = 0; i < sizeof power_modes / sizeof power_modes[0]; i++) {
        if (strcasecmp(s, power_modes[i].name) == 0) {
            cfg->power_mode = power_modes[i].mode;
            return 0;
        }
    }
    warn_value("GGML_HEXAGON_POWER_MODE", s, strlen(s), "is not a known power mode", "'%s'",
               htp_config_power_mode_name(DEF_POWER_MODE));
    return 1;
}

// GGML_HEXAGON_ARCH: "v79", "79". Unset or unreadable: assume the default
// until the NPU says (arch_auto).
static int load_arch(struct htp_config * cfg) {
    const char * s = getenv("GGML_HEXAGON_ARCH");
    cfg->arch      = HTP_CONFIG_ARCH_DEFAULT;
    cfg->arch_auto = 1;
    if (!s || s[0] == '\0') {
        return 0;
    }
    const char * num    = (s[0] == 'v' || s[0] == 'V') ? s + 1 : s;
    long long    v      = 0;
    int          erange = 0;
    if (num[0] == '\0' || isspace((unsigned char)num[0]) || parse_long(num, 0, &v, &erange) != 0 || v < 0) {
        warn_value("GGML_HEXAGON_ARCH", s, strlen(s), "is not an arch version",
                   "the NPU's own (assumed v%d until it reports)", HTP_CONFIG_ARCH_DEFAULT);
        return 1;
    }
    cfg->arch_auto = 0;
    if (erange || v > HTP_CONFIG_ARCH_MAX) {
        warn_value("GGML_HEXAGON_ARCH", s, strlen(s), "is over the supported range", "v%d", HTP_CONFIG_ARCH_MAX);
        cfg->arch = HTP_CONFIG_ARCH_MAX;
        return 1;
    }
    if (v < HTP_CONFIG_ARCH_MIN) {
        warn_value("GGML_HEXAGON_ARCH", s, strlen(s), "is under the supported range", "v%d", HTP_CONFIG_ARCH_MIN);
        cfg->arch = HTP_CONFIG_ARCH_MIN;
        return 1;
    }
    cfg->arch = (int)v;
    return 0;
}

// Defaults that follow the arch: a v75+ NPU has the larger IOVA space, and
// weights are mapped extended (DMA64) past v79 unless GGML_HEXAGON_DMA64=0.
static void derive_from_arch(struct htp_config * cfg) {
    if (!cfg->vmem_set) {
        cfg->vmem = cfg->arch >= 75 ? HTP_VMEM_DEFAULT : DEF_VMEM_OLD;
    }
    cfg->dma64 = cfg->arch > 79 && !cfg->dma64_disabled;
}

void htp_config_set_arch(struct htp_config * cfg, int arch) {
    if (!cfg->arch_auto) {
        return;
    }
    if (arch < HTP_CONFIG_ARCH_MIN) {
        HTP_LOG_WARN("ggml-htp: Hexagon arch v%d is under supported range, capping at v%d\n", arch,
                     HTP_CONFIG_ARCH_MIN);
        arch = HTP_CONFIG_ARCH_MIN;
    } else if (arch > HTP_CONFIG_ARCH_MAX) {
        HTP_LOG_WARN("ggml-htp: Hexagon arch v%d is over supported range, capping at v%d\n", arch, HTP_CONFIG_ARCH_MAX);
        arch = HTP_CONFIG_ARCH_MAX;
    }
    cfg->arch = arch;
    derive_from_arch(cfg);
}

// GGML_HEXAGON_MBUF: "dyn[,static[,total]]", each a size; an empty field keeps
// its default.
static int load_mbuf(struct htp_config * cfg) {
    const char * s   = getenv("GGML_HEXAGON_MBUF");
    cfg->mbuf_dyn    = DEF_MBUF_DYN;
    cfg->mbuf_static = DEF_MBUF_STATIC;
    cfg->mbuf_total  = 0;
    if (!s) {
        return 0;
    }

    static const char * const field[3] = {"dynamic", "static", "total"};
    uint64_t * const          dst[3]   = {&cfg->mbuf_dyn, &cfg->mbuf_static, &cfg->mbuf_total};
    int                       problems = 0;
    const char *              p        = s;
    for (int idx = 0; *p != '\0'; idx++) {
        const char * comma = strchr(p, ',');
        size_t       n     = comma ? (size_t)(comma - p) : strlen(p);
        struct span  tok   = span_trim((struct span){p, n});
        if (idx >= 3) {
            warn_value("GGML_HEXAGON_MBUF", s, strlen(s), "has more than 3 fields", "the first 3");
            problems++;
            break;
        }
        if (tok.n > 0) {
            uint64_t v = 0;
            char     used[48];
            format_size(used, sizeof used, *dst[idx]);
            if (parse_size_n(tok.p, tok.n, &v) != 0) {
                char why[96];
                snprintf(why, sizeof why, "has a bad %s size '%.*s'", field[idx], (int)(tok.n > 32 ? 32 : tok.n),
                         tok.p);
                warn_value("GGML_HEXAGON_MBUF", s, strlen(s), why, "%s", used);
                problems++;
            } else if (idx == 0 && v == 0) {
                warn_value("GGML_HEXAGON_MBUF", s, strlen(s), "has a zero dynamic size", "%s", used);
                problems++;
            } else {
                *dst[idx] = v;
            }
        }
        if (!comma) {
            break;
        }
        p = comma + 1;
    }
    return problems;
}

// GGML_HEXAGON_PROFILE: "<mode>" (0 off, 1 basic, 2 PMU, 3 trace), or eight
// comma-separated PMU event numbers (mode 2 with those events).
static int load_profile(struct htp_config * cfg) {
    const char * s    = getenv("GGML_HEXAGON_PROFILE");
    cfg->profile      = 0;
    cfg->n_pmu_events = HTP_CONFIG_N_PMU;
    memcpy(cfg->pmu_events, default_pmu_events, sizeof cfg->pmu_events);
    if (!s || s[0] == '\0') {
        return 0;
    }

    uint32_t     v[HTP_CONFIG_N_PMU + 1];
    int          n  = 0;
    int          ok = 1;
    const char * p  = s;
    for (;;) {
        const char * comma = strchr(p, ',');
        size_t       len   = comma ? (size_t)(comma - p) : strlen(p);
        char         tok[32];
        long long    x      = 0;
        int          erange = 0;
        if (len >= sizeof tok || n > HTP_CONFIG_N_PMU) {
            ok = 0;
            break;
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (parse_long(tok, 0, &x, &erange) != 0 || erange || x < 0 || x > (long long)UINT32_MAX) {
            ok = 0;
            break;
        }
        v[n++] = (uint32_t)x;
        if (!comma) {
            break;
        }
        p = comma + 1;
    }

    if (ok && n == 1 && v[0] <= 3) {
        cfg->profile = (int)v[0];
        if (cfg->profile == 1) {
            cfg->n_pmu_events = 0;
        }
        return 0;
    }
    if (ok && n == HTP_CONFIG_N_PMU) {
        cfg->profile = 2;
        memcpy(cfg->pmu_events, v, sizeof cfg->pmu_events);
        return 0;
    }
    warn_value("GGML_HEXAGON_PROFILE", s, strlen(s), "is neither a mode 0-3 nor 8 PMU event numbers",
               "0 (profiling off)");
    cfg->n_pmu_events = 0;
    return 1;
}

// GGML_HEXAGON_OPFILTER: ops whose description the regex matches as a whole
// (as std::regex_match, case-insensitive) are not claimed.
static int load_opfilter(struct htp_config * cfg) {
    const char * s       = getenv("GGML_HEXAGON_OPFILTER");
    cfg->has_opfilter    = 0;
    cfg->opfilter_src[0] = '\0';
    if (!s || s[0] == '\0') {
        return 0;
    }

    size_t len = strlen(s);
    char * pat = malloc(len + 5);
    if (!pat) {
        warn_value("GGML_HEXAGON_OPFILTER", s, len, "cannot be stored (out of memory)", "no filter");
        return 1;
    }
    // Anchored so that a match means the whole description, like regex_match.
    snprintf(pat, len + 5, "^(%s)$", s);
    int rc = regcomp(&cfg->opfilter, pat, REG_EXTENDED | REG_NOSUB | REG_ICASE);
    free(pat);
    if (rc != 0) {
        char err[128];
        regerror(rc, &cfg->opfilter, err, sizeof err);
        char why[160];
        snprintf(why, sizeof why, "is not a valid extended regex (%s)", err);
        warn_value("GGML_HEXAGON_OPFILTER", s, len, why, "no filter");
        return 1;
    }
    cfg->has_opfilter = 1;
    snprintf(cfg->opfilter_src, sizeof cfg->opfilter_src, "%s", s);
    return 0;
}

int htp_config_op_filtered(const struct htp_config * cfg, const char * op_desc) {
    if (!cfg->has_opfilter || !op_desc) {
        return 0;
    }
    return regexec(&cfg->opfilter, op_desc, 0, NULL, 0) == 0;
}

static int load_npu_path(struct htp_config * cfg) {
    const char * s   = getenv("GGML_HEXAGON_NPU");
    cfg->npu_path[0] = '\0';
    if (!s || s[0] == '\0') {
        return 0;
    }
    size_t len = strnlen(s, HTP_CONFIG_PATH_MAX);
    if (len >= HTP_CONFIG_PATH_MAX) {
        warn_value("GGML_HEXAGON_NPU", s, len, "is longer than a path", "htp-npu next to the library");
        return 1;
    }
    memcpy(cfg->npu_path, s, len + 1);
    return 0;
}

static int load_devices(struct htp_config * cfg) {
    const char *     s  = getenv("GGML_HEXAGON_DEVICES");
    struct dev_parse dp = {"GGML_HEXAGON_DEVICES", 0};
    if (!s) {
        const char * ndev = getenv("GGML_HEXAGON_NDEV");
        if (ndev && ndev[0] != '\0') {
            HTP_LOG_WARN("ggml-htp: DEPRECATED: GGML_HEXAGON_NDEV is deprecated, use GGML_HEXAGON_DEVICES instead\n");
            s      = ndev;
            dp.var = "GGML_HEXAGON_NDEV";
        }
    }
    int n = 0;
    parse_devices(&dp, s, cfg->devices, HTP_CONFIG_MAX_DEVICES, &n);
    cfg->n_devices = n;
    return dp.problems;
}

// ---------------------------------------------------------------------------
// Load, free, print
// ---------------------------------------------------------------------------

int htp_config_load(struct htp_config * cfg) {
    int p = 0;
    memset(cfg, 0, sizeof *cfg);

    // Verbosity first so the rest can log with it.
    p += env_int("GGML_HEXAGON_VERBOSE", 10, 0, 9, 0, RANGE_CLAMP, &cfg->verbose);
    htp_log_verbose = cfg->verbose;

    // The arch first: vmem and dma64 defaults follow it.
    p += load_arch(cfg);
    int dma64_allowed = 1;
    p += env_bool("GGML_HEXAGON_DMA64", 1, &dma64_allowed);
    cfg->dma64_disabled = !dma64_allowed;
    derive_from_arch(cfg);
    p += env_size("GGML_HEXAGON_VMEM", cfg->vmem, 0, &cfg->vmem, &cfg->vmem_set);

    p += env_u32("GGML_HEXAGON_NHVX", 0, 0, HTP_MAX_NTHREADS, 0, RANGE_CLAMP, &cfg->nhvx);
    p += env_bool("GGML_HEXAGON_NHMX", 1, &cfg->nhmx);
    p += env_size("GGML_HEXAGON_VTCM_SIZE", 0, 0, &cfg->vtcm_size, NULL);
    p += load_power_mode(cfg);

    p += load_mbuf(cfg);
    p += env_bool("GGML_HEXAGON_HOSTBUF", 0, &cfg->hostbuf);

    p += env_u32("GGML_HEXAGON_OPBATCH", 0, 1, HTP_OP_MAX_OPS, DEF_OPBATCH, RANGE_CLAMP, &cfg->opbatch);
    p += env_u32("GGML_HEXAGON_OPQUEUE", 0, 1, HTP_QUEUE_MAX_DEPTH, DEF_OPQUEUE, RANGE_CLAMP, &cfg->opqueue);
    p += env_bool("GGML_HEXAGON_OPPOLL", 0, &cfg->oppoll);
    p += env_bool("GGML_HEXAGON_OPFUSION", 1, &cfg->opfusion);
    p += env_int("GGML_HEXAGON_RT_REPACK", 10, 0, 2, 1, RANGE_DEFAULT, &cfg->rt_repack);
    p += load_opfilter(cfg);

    p += env_int("GGML_HEXAGON_MM_SELECT", 10, 0, 2, DEF_SELECT, RANGE_DEFAULT, &cfg->mm_select);
    p += env_int("GGML_HEXAGON_FA_SELECT", 10, 0, 2, DEF_SELECT, RANGE_DEFAULT, &cfg->fa_select);
    p += env_bool("GGML_HEXAGON_FA_SPLIT", 1, &cfg->fa_split);
    p += env_int("GGML_HEXAGON_GDN_SELECT", 10, 0, 2, DEF_SELECT, RANGE_DEFAULT, &cfg->gdn_select);
    p += env_int("GGML_HEXAGON_AR_SELECT", 10, 0, 2, DEF_SELECT, RANGE_DEFAULT, &cfg->ar_select);
    p += env_bool("GGML_HEXAGON_AR_SCATTER", 1, &cfg->ar_scatter);

    p += load_profile(cfg);
    // Trace depth follows the batch size unless given.
    uint64_t trace_def = (uint64_t)cfg->opbatch * TRACE_EVENTS_PER_OP + TRACE_SLACK;
    if (trace_def > HTP_MAX_TRACES) {
        trace_def = HTP_MAX_TRACES;
    }
    p += env_u32("GGML_HEXAGON_OPTRACE", 0, 0, HTP_MAX_TRACES, (uint32_t)trace_def, RANGE_CLAMP, &cfg->optrace);
    p += env_bool("GGML_HEXAGON_ETM", 0, &cfg->etm);

    p += load_npu_path(cfg);
    p += load_devices(cfg);
    return p;
}

void htp_config_free(struct htp_config * cfg) {
    if (cfg->has_opfilter) {
        regfree(&cfg->opfilter);
        cfg->has_opfilter = 0;
    }
}

static const char * select_name(int v, int has_cpu) {
    switch (v) {
        case 2:
            return has_cpu ? "HMX -> HVX -> CPU" : "HMX -> HVX";
        case 1:
            return has_cpu ? "HVX -> CPU" : "HVX";
        default:
            return "CPU";
    }
}

void htp_config_print(const struct htp_config * cfg, FILE * f) {
    char a[48], b[48], c[48];

    fprintf(f, "devices (%d):\n", cfg->n_devices);
    for (int i = 0; i < cfg->n_devices; i++) {
        const struct htp_device_config * d = &cfg->devices[i];
        fprintf(f, "  %-12s phys %u virt %u", d->name, d->phys[0], d->virt);
        if (d->n_members > 1) {
            fprintf(f, "  group:");
            for (uint32_t m = 0; m < d->n_members; m++) {
                char name[HTP_CONFIG_NAME_MAX + 16];
                htp_config_member_name(d, m, name, sizeof name);
                fprintf(f, " %s(phys %u)", name, d->phys[m]);
            }
        }
        fputc('\n', f);
    }

    fprintf(f, "arch          v%d%s\n", cfg->arch, cfg->arch_auto ? " (until the NPU reports its own)" : "");
    fprintf(f, "nhvx          %u%s\n", cfg->nhvx, cfg->nhvx == 0 ? " (all)" : "");
    fprintf(f, "nhmx          %d\n", cfg->nhmx);
    format_size(a, sizeof a, cfg->vtcm_size);
    fprintf(f, "vtcm_size     %s\n", cfg->vtcm_size ? a : "auto");
    format_size(a, sizeof a, cfg->vmem);
    fprintf(f, "vmem          %s%s\n", cfg->vmem ? a : "measure", cfg->vmem_set ? "" : " (from arch)");
    fprintf(f, "dma64         %d\n", cfg->dma64);
    fprintf(f, "power_mode    %s\n", htp_config_power_mode_name(cfg->power_mode));
    format_size(a, sizeof a, cfg->mbuf_dyn);
    format_size(b, sizeof b, cfg->mbuf_static);
    format_size(c, sizeof c, cfg->mbuf_total);
    fprintf(f, "mbuf          dynamic %s, static %s, total %s\n", a, cfg->mbuf_static ? b : "unlimited",
            cfg->mbuf_total ? c : "unconstrained");
    fprintf(f, "hostbuf       %d\n", cfg->hostbuf);
    fprintf(f, "opbatch       %u\n", cfg->opbatch);
    fprintf(f, "opqueue       %u\n", cfg->opqueue);
    fprintf(f, "oppoll        %d\n", cfg->oppoll);
    fprintf(f, "opfusion      %d\n", cfg->opfusion);
    fprintf(f, "rt_repack     %d\n", cfg->rt_repack);
    fprintf(f, "opfilter      %s\n", cfg->has_opfilter ? cfg->opfilter_src : "(none)");
    fprintf(f, "mm_select     %d (%s)\n", cfg->mm_select, select_name(cfg->mm_select, 1));
    fprintf(f, "fa_select     %d (%s)\n", cfg->fa_select, select_name(cfg->fa_select, 1));
    fprintf(f, "fa_split      %d\n", cfg->fa_split);
    fprintf(f, "gdn_select    %d (%s)\n", cfg->gdn_select, select_name(cfg->gdn_select, 0));
    fprintf(f, "ar_select     %d\n", cfg->ar_select);
    fprintf(f, "ar_scatter    %d\n", cfg->ar_scatter);
    fprintf(f, "verbose       %d\n", cfg->verbose);
    fprintf(f, "profile       %d", cfg->profile);
    if (cfg->profile >= 2 && cfg->n_pmu_events) {
        fprintf(f, " pmu-evt");
        for (uint32_t i = 0; i < cfg->n_pmu_events; i++) {
            fprintf(f, "%s%#x", i ? "," : " ", cfg->pmu_events[i]);
        }
    }
    fputc('\n', f);
    fprintf(f, "optrace       %u\n", cfg->optrace);
    fprintf(f, "etm           %d\n", cfg->etm);
    fprintf(f, "npu           %s\n", cfg->npu_path[0] ? cfg->npu_path : "(htp-npu next to libggml-htp.so)");
}
