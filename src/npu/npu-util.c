// npu-util.c: logging and validated environment parsing for htp-npu, over
// the platform seam (the log line is formatted here, written there).

#include "npu-util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

int htp_npu_verbose = 0;

void htp_npu_log(const char * fmt, ...) {
    static const char prefix[] = "htp-npu: ";
    char              line[512];
    memcpy(line, prefix, sizeof(prefix) - 1);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + sizeof(prefix) - 1, sizeof(line) - sizeof(prefix), fmt, ap);
    va_end(ap);
    size_t len = sizeof(prefix) - 1 + (n < 0 ? 0 : (size_t)n);
    if (len > sizeof(line) - 2) {
        len = sizeof(line) - 2;  // truncated: vsnprintf stopped there
    }
    line[len++] = '\n';
    // One write per line so lines from different threads do not interleave.
    htp_plat_log_write(line, len);
}

uint64_t htp_npu_env_u64(const char * name, uint64_t def, uint64_t min, uint64_t max) {
    const char * s = htp_plat_getenv(name);
    if (s == NULL || *s == '\0') {
        return def;
    }
    char * end           = NULL;
    errno                = 0;
    unsigned long long v = strtoull(s, &end, 0);
    // strtoull accepts a leading '-' and negates: refuse it explicitly.
    if (errno != 0 || end == s || *end != '\0' || *s == '-' || v < min || v > max) {
        htp_npu_log("warning: %s=\"%s\" is not a number in [%llu, %llu]; using %llu", name, s, (unsigned long long)min,
                    (unsigned long long)max, (unsigned long long)def);
        return def;
    }
    return (uint64_t)v;
}

uint64_t htp_npu_env_size(const char * name, uint64_t def, uint64_t max) {
    const char * s = htp_plat_getenv(name);
    if (s == NULL || *s == '\0') {
        return def;
    }
    char * end = NULL;
    errno      = 0;
    double v   = strtod(s, &end);
    double mul = 1024.0 * 1024.0;
    if (errno == 0 && end != s) {
        while (*end == ' ') {
            end++;
        }
        switch (*end) {
            case 'k':
            case 'K':
                mul = 1024.0;
                end++;
                break;
            case 'm':
            case 'M':
                mul = 1024.0 * 1024.0;
                end++;
                break;
            case 'g':
            case 'G':
                mul = 1024.0 * 1024.0 * 1024.0;
                end++;
                break;
            default:
                break;
        }
        // Allow "8M", "8 MiB", "8MB".
        if ((*end == 'i' || *end == 'I') && (end[1] == 'b' || end[1] == 'B')) {
            end += 2;
        } else if (*end == 'b' || *end == 'B') {
            end++;
        }
    }
    double bytes = v * mul;
    if (errno != 0 || end == s || *end != '\0' || !(bytes >= 1.0) || bytes > (double)max) {
        htp_npu_log("warning: %s=\"%s\" is not a size in (0, %llu] bytes; using %llu", name, s, (unsigned long long)max,
                    (unsigned long long)def);
        return def;
    }
    return (uint64_t)bytes;
}
