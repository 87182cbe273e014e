// npu-util.h: small helpers shared by the htp-npu modules: logging and
// environment variables parsed with validation. (Clocks are the platform's.)
//
// Environment values are untrusted input: a malformed or out-of-range value is
// never fatal; it is reported once on stderr, naming the variable and the value
// used instead.

#ifndef HTP_NPU_UTIL_H
#define HTP_NPU_UTIL_H

#include <stdint.h>

// 1 when GGML_HEXAGON_VERBOSE asks for control-request logging (set by the server).
extern int htp_npu_verbose;

// printf-style line to the log (stderr here), prefixed "htp-npu: ".
void htp_npu_log(const char * fmt, ...) __attribute__((format(printf, 1, 2)));

#define HTP_NPU_VERBOSE(...)          \
    do {                              \
        if (htp_npu_verbose) {        \
            htp_npu_log(__VA_ARGS__); \
        }                             \
    } while (0)

// Parse env var `name` as an unsigned integer in [min, max] (decimal, or 0x hex).
// Unset or empty: returns def silently. Malformed or out of range: warns and
// returns def.
uint64_t htp_npu_env_u64(const char * name, uint64_t def, uint64_t min, uint64_t max);

// Parse env var `name` as a size the way ggml-hexagon does: a number (may be
// fractional) with an optional k/m/g suffix (KiB, MiB, GiB); a plain number
// means MiB. Unset or empty: def. Malformed, zero or above max: warns, def.
uint64_t htp_npu_env_size(const char * name, uint64_t def, uint64_t max);

#endif  // HTP_NPU_UTIL_H
