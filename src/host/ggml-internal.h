// ggml-internal.h: ggml's internal header (struct ggml_cgraph's fields, a few
// tensor predicates), included with its unused static helpers silenced: they
// are ggml's code, not ours.

#ifndef HTP_GGML_INTERNAL_H
#define HTP_GGML_INTERNAL_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ggml-impl.h"
#pragma GCC diagnostic pop

#endif  // HTP_GGML_INTERNAL_H
