// iq-rows.h: IQ codebook rows against one activation column, straight from
// their blocks (no decoded tiles), 16 rows (one tile) at a time: the decode path of
// matmul-kquant.c for the IQ codebook weights (IQ1_S, IQ1_M, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S).
//
// Where the other paths decode a row group into int8 tiles first
// (iq-dot.h), these kernels look the points up in registers: every point
// of these codebooks has 8 (IQ2) or 4 (IQ3) coordinates from a set of at
// most 8 values, so a point fits in 16 bits as one small code per
// coordinate (struct htp_iq_codes). A lookup of 32 or 64 indices is a few
// byte or word permutes of the code tables, a code becomes its bytes by one
// bit-field shuffle and one value permute, the signs become a byte mask of
// the activations, and vpdpbusd sums the products. The codebooks of IQ1
// (2048 points) and IQ2_S (1024) are too large for registers: their tiles
// store the codes themselves (contract/iq-tiles.h, 3.), so these types' rows
// are read from tiles only.
//
// The result is the same float, bit for bit, as htp_iq_dot_group_ref on the
// rows' decoded tiles: the integer sum of each row and super-block is exact
// and the float step is iq-dot.h's, in its order.

#ifndef HTP_IQ_ROWS_H
#define HTP_IQ_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "contract/codebooks.h"
#include "kquant-dot.h"

// The codebooks of contract/codebooks.h as codes, built by the NPU from the
// checked codebooks once per session (htp_iq_codes_build). Point i's code
// holds, per coordinate, the coordinate's position in its type's value set:
//   IQ2 (8, 25, 43):                          2 bits, coordinate j in bits 2 j, 2 j + 1
//   IQ3_XXS (4, 12, 20, 28, 36, 44, 52, 62):  3 bits, coordinate j in bits 3 j .. 3 j + 2
//   IQ3_S (1, 3, 5, .., 15):                  3 bits, likewise
// The byte-indexed tables keep the code's low and high byte apart (the
// kernels look each up with byte permutes).
struct htp_iq_codes {
    uint8_t  iq2xxs_lo[256], iq2xxs_hi[256];
    uint8_t  iq3xxs_lo[256], iq3xxs_hi[256];
    uint8_t  iq3s_lo[512], iq3s_hi[512];
    uint16_t iq2xs[512];
    uint8_t  signs8[128];  // htp_iq_signs8 of every 7-bit sign field
};

// Fills codes from cb (htp_codebooks_ok has passed: every coordinate is in
// its type's value set).
void htp_iq_codes_build(const struct htp_codebooks * cb, struct htp_iq_codes * codes);

// out[r] = the dot product of row r (r < nrows <= 16) with the activations
// a[0 .. nsb-1], block b of row r at base + r * row_stride + b * blk_stride
// (ggml's block; for IQ1_S, IQ1_M and IQ2_S a tile's code block); codes are
// the session's codebooks as codes.
// Returns 0 (and does nothing) where the build (AVX-512 VBMI, VNNI, BITALG)
// or the type has no such kernel.
int htp_iq_dot_rows(uint32_t type, const struct htp_iq_codes * codes, const uint8_t * base, size_t row_stride,
                    size_t blk_stride, int nrows, int64_t nsb, const struct htp_q8k_block * a, float out[16]);

#endif  // HTP_IQ_ROWS_H
