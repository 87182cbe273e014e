// buffer-type.h: the ggml buffer types of an HTP device: device memory and,
// with GGML_HEXAGON_HOSTBUF, the same memory offered as host memory.

#ifndef HTP_BUFFER_TYPE_H
#define HTP_BUFFER_TYPE_H

#include <stdbool.h>

#include "ggml-backend.h"

struct htp_device;

// Fill in d's buffer types (d->buft, d->host_buft) and their names.
void htp_buffer_types_init(struct htp_device * d);

// buft is one of the buffer types of an HTP device.
bool htp_buft_is_htp(ggml_backend_buffer_type_t buft);

#endif  // HTP_BUFFER_TYPE_H
