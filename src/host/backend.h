// backend.h: ggml backends (streams) on HTP devices.

#ifndef HTP_BACKEND_H
#define HTP_BACKEND_H

#include "ggml-backend.h"

struct htp_device;

// A new stream on d, whose session is open. NULL if out of memory. The
// stream does not own d: ggml frees it with ggml_backend_free.
ggml_backend_t htp_backend_init(struct htp_device * d);

#endif  // HTP_BACKEND_H
