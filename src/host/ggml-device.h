// ggml-device.h: the ggml device interface of an HTP device (names, memory,
// properties, supported ops and buffer types, streams, events). The
// registry gives it to every device it creates, with the struct htp_device
// as the context.

#ifndef HTP_GGML_DEVICE_H
#define HTP_GGML_DEVICE_H

#include "ggml-backend-impl.h"

extern const struct ggml_backend_device_i htp_ggml_device_iface;

#endif  // HTP_GGML_DEVICE_H
