// fuzz-shim.c: the one ggml function the host modules of the fuzz targets
// call (log.c asks for ggml's log callback). A silent sink: the fuzzers run
// millions of inputs, most of which are warned about; the message is still
// formatted by log.c (vsnprintf reads every argument), only not printed.

#include <stddef.h>

#include "ggml.h"

static void fuzz_log_sink(enum ggml_log_level level, const char * text, void * user_data) {
    (void)level;
    (void)text;
    (void)user_data;
}

void ggml_log_get(ggml_log_callback * log_callback, void ** user_data) {
    *log_callback = fuzz_log_sink;
    *user_data    = NULL;
}
