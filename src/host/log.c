// log.c: format a message and hand it to ggml's current log callback.

#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int htp_log_verbose = 0;

void htp_log(enum ggml_log_level level, const char * fmt, ...) {
    char    msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    ggml_log_callback cb = NULL;
    void *            ud = NULL;
    ggml_log_get(&cb, &ud);
    if (cb) {
        cb(level, msg, ud);
    } else {
        fputs(msg, stderr);
    }
}
