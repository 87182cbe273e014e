// stream-prefetch.h: whether the x86 matmul kernels prefetch their weight
// streams in software: the F16/F32 decode, the block-quant kernels of
// matmul-quant.c and the Q4_K decode. stream-prefetch.c says where that
// helps and where it does not.

#ifndef HTP_STREAM_PREFETCH_H
#define HTP_STREAM_PREFETCH_H

// 1: prefetch (the value until the server sets it). Set once at start,
// before any batch runs; the kernels only read it.
extern int htp_mm_stream_prefetch;

// The default for the CPU this runs on: 0 on AMD family 25, else 1.
int htp_mm_stream_prefetch_default(void);

#endif  // HTP_STREAM_PREFETCH_H
