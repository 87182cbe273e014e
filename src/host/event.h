// event.h: ggml events on HTP devices: the event entries of the ggml device
// interface (new, free, synchronize) and of the stream interface (record,
// wait).

#ifndef HTP_EVENT_H
#define HTP_EVENT_H

#include "ggml-backend.h"

ggml_backend_event_t htp_event_new(ggml_backend_dev_t dev);
void                 htp_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event);
void                 htp_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event);
void                 htp_event_record(ggml_backend_t backend, ggml_backend_event_t event);
void                 htp_event_wait(ggml_backend_t backend, ggml_backend_event_t event);

#endif  // HTP_EVENT_H
