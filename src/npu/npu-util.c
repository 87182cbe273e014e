// npu-util.c: logging, validated environment parsing and clocks for htp-npu.

#include "npu-util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

int htp_npu_verbose = 0;

void htp_npu_log(const char * fmt, ...) {
    char    line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    // One fprintf per line so lines from different threads do not interleave.
    fprintf(stderr, "htp-npu: %s\n", line);
}

uint64_t htp_npu_env_u64(const char * name, uint64_t def, uint64_t min, uint64_t max) {
    const char * s = getenv(name);
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
    const char * s = getenv(name);
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

uint64_t htp_npu_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t htp_npu_cycles(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (uint64_t)__rdtsc();
#else
    return 0;
#endif
}
