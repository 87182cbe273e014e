// log.h: the host library's logging, through ggml's log callback so that a
// program that redirects ggml's logs (llama.cpp does) gets ours too.

#ifndef HTP_LOG_H
#define HTP_LOG_H

#include "ggml.h"

// Verbosity from GGML_HEXAGON_VERBOSE (0 quiet, 1 verbose, 2 per-descriptor).
extern int htp_log_verbose;

void htp_log(enum ggml_log_level level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

#define HTP_LOG_ERROR(...) htp_log(GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define HTP_LOG_WARN(...)  htp_log(GGML_LOG_LEVEL_WARN, __VA_ARGS__)
#define HTP_LOG_INFO(...)  htp_log(GGML_LOG_LEVEL_INFO, __VA_ARGS__)
#define HTP_LOG_DEBUG(...) htp_log(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define HTP_VERBOSE(...)                                \
    do {                                                \
        if (htp_log_verbose) {                          \
            htp_log(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__); \
        }                                               \
    } while (0)

#endif  // HTP_LOG_H
