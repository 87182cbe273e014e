// ggml-buffer.h: a struct htp_buffer as a ggml buffer (the ggml buffer
// interface of HTP devices), whichever buffer type allocated it.

#ifndef HTP_GGML_BUFFER_H
#define HTP_GGML_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

#include "buffer.h"
#include "ggml-backend.h"

// A ggml buffer of buft, size bytes, over buf, or NULL if ggml cannot make
// one. The ggml buffer takes over the caller's reference to buf and drops it
// when it is freed; on NULL the reference stays with the caller.
ggml_backend_buffer_t htp_ggml_buffer_init(ggml_backend_buffer_type_t buft, struct htp_buffer * buf, size_t size);

// buffer is a ggml buffer over a struct htp_buffer (NULL is not).
bool htp_ggml_buffer_is_htp(ggml_backend_buffer_t buffer);

// The struct htp_buffer under a buffer for which htp_ggml_buffer_is_htp holds.
struct htp_buffer * htp_ggml_buffer_get(ggml_backend_buffer_t buffer);

#endif  // HTP_GGML_BUFFER_H
