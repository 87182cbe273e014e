// config-devices.c: parsing the device list (see config-devices.h).
//
// The list keeps the reference's own repairs (a phys index read up to the
// first junk character, an empty group falling back to NPU 0, ...) and adds a
// warning to each; items the reference would turn into nonsense (negative or
// out-of-range indices, empty or overlong names, duplicates) are dropped.
//
// The parser walks (pointer, length) spans of the caller's string and never
// writes to it or reads past its NUL.

#include "config-devices.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-env.h"
#include "log.h"

// Offset of the first (or last) c in s, or -1.
static long span_find(struct htp_config_span s, char c) {
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] == c) {
            return (long)i;
        }
    }
    return -1;
}

static long span_rfind(struct htp_config_span s, char c) {
    for (size_t i = s.n; i > 0; i--) {
        if (s.p[i - 1] == c) {
            return (long)(i - 1);
        }
    }
    return -1;
}

static struct htp_config_span span_sub(struct htp_config_span s, size_t from, size_t to) {
    struct htp_config_span r = {s.p + from, to - from};
    return r;
}

// Read an int the way std::stoi does (the reference's device parser): leading
// white space, optional sign, at least one digit; anything after the digits is
// ignored. Returns -1 when there is no number or it overflows an int, else 0;
// *exact is 1 when the span held nothing but the digits (and a minus sign).
static int span_stoi(struct htp_config_span s, int * out, int * exact) {
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

// Quote a span in a warning: "%.*s%s" with HTP_CONFIG_QUOTE_MAX and an ellipsis.
#define SPAN_FMT "'%.*s%s'"
#define SPAN_ARG(s) \
    (int)((s).n > HTP_CONFIG_QUOTE_MAX ? HTP_CONFIG_QUOTE_MAX : (s).n), (s).p, (s).n > HTP_CONFIG_QUOTE_MAX ? "..." : ""

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
static void parse_phys_part(struct dev_parse * dp, struct htp_config_span part, uint32_t * list, uint32_t * n) {
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
static uint32_t parse_group_virt(struct dev_parse * dp, struct htp_config_span item, struct htp_config_span vs) {
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
static int parse_group(struct dev_parse * dp, struct htp_config_span item, size_t b_open, size_t b_close,
                       struct htp_device_config * dev) {
    struct htp_config_span name    = span_sub(item, 0, b_open);
    struct htp_config_span content = span_sub(item, b_open + 1, b_close);
    struct htp_config_span tail    = span_sub(item, b_close + 1, item.n);

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

    uint32_t               virt  = 0;
    struct htp_config_span plist = content;
    long                   colon = span_find(content, ':');
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
            struct htp_config_span part = htp_config_span_trim(span_sub(plist, start, i));
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
static int parse_htp(struct dev_parse * dp, struct htp_config_span item, struct htp_device_config * dev) {
    struct htp_config_span rest  = span_sub(item, 3, item.n);
    long                   colon = span_find(rest, ':');
    int                    phys = 0, virt = 0, exact_p = 1, exact_v = 1;

    struct htp_config_span ps = colon >= 0 ? span_sub(rest, 0, (size_t)colon) : rest;
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
        struct htp_config_span whole = {s, len};
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
    struct htp_config_span whole = {s, len};
    int                    depth = 0;
    size_t                 start = 0;
    int                    n     = 0;
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
        struct htp_config_span item = htp_config_span_trim(span_sub(whole, start, i));
        start                       = i + 1;
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

int htp_config_load_devices(struct htp_device_config * out, int * n_out) {
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
    parse_devices(&dp, s, out, HTP_CONFIG_MAX_DEVICES, n_out);
    return dp.problems;
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
