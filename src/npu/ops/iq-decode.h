// iq-decode.h: the IQ codebook types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S) decoded into the integers their dot products run on.
//
// One idea: every one of these formats is, per weight, an odd integer scale
// of its 16 or 32 weights times a small signed integer (a codebook point's
// coordinate with its sign; for IQ1 eight times the coordinate plus the
// sub-block's +-1 delta), times one float per super-block. So
//
//   weight e  =  (d * sc[e / 16]) * q[e]
//
// is exactly the float ggml's dequantizer gives (d * sc is formed first; the
// powers of two of each type's unit are folded into d), and the dot product
// with ggml's Q8_K activations is d * a.d * sum_s sc[s] * sum_{e in s} q[e] a[e]
// in integers, as ggml-cpu forms it. Codebooks: contract/codebooks.h.

#ifndef HTP_IQ_DECODE_H
#define HTP_IQ_DECODE_H

#include <stdint.h>

#include "contract/codebooks.h"

#define HTP_IQ_QK 256  // weights per super-block

struct htp_iq_superblock {
    int8_t  q[HTP_IQ_QK];  // IQ2: +-8, 25, 43; IQ3_XXS: +-4 .. 62; IQ3_S: +-1 .. 15; IQ1: 8 x (-1, 0, 1) +- 1
    uint8_t sc[16];        // 2 l + 1 (l the stored 3- or 4-bit scale) per 16 weights; a scale of 32
                           // weights appears twice
    float d;               // the block's fp16 scale times the type's unit: IQ2 and IQ1 1/8, IQ3_XXS 1/4, IQ3_S 1
};

// Decode one ggml block of the type into x.
typedef void (*htp_iq_decode_fn)(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

// The decoder of type (enum htp_type), or NULL for a type that is not an IQ
// codebook type (or whose decoder is not built).
htp_iq_decode_fn htp_iq_decoder(uint32_t type);

// The decoder of a row's block in a tile of type (contract/iq-tiles.h: IQ1's
// and IQ2_S's hold codes; the others ggml's block, so htp_iq_decoder's), or
// NULL likewise.
htp_iq_decode_fn htp_iq_tile_decoder(uint32_t type);

// The decoders (iq2-decode.c).
void htp_iq2xxs_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq2xs_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq2s_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq2s_code_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
// The portable IQ2_S code decoder, which htp_iq2s_code_decode is where the
// build has no vector one (tested against each other by test-iq).
void htp_iq2s_code_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

#endif  // HTP_IQ_DECODE_H
