// codebooks.h (host): the IQ codebooks read back from the pinned ggml's
// dequantizers, for the NPU (contract/codebooks.h says what they are and how
// they travel).

#ifndef HTP_HOST_CODEBOOKS_H
#define HTP_HOST_CODEBOOKS_H

#include "contract/codebooks.h"
#include "contract/iq-tiles.h"

// The process's codebooks, derived on first use; NULL (and an error logged)
// if ggml's dequantizers gave something outside the format's value sets.
const struct htp_codebooks * htp_host_codebooks(void);

// The codebooks of the code blocks both ways (contract/iq-tiles.h: IQ1_S,
// IQ1_M, IQ2_S), built from those codebooks, for packing and unpacking such
// tiles; NULL where they failed.
const struct htp_iq_coder * htp_host_iq_coder(void);

#endif  // HTP_HOST_CODEBOOKS_H
