// iq-dot.h: the NPU's arithmetic on IQ codebook weights (IQ2_XXS, IQ2_XS,
// IQ2_S, and the other types of contract/iq-tiles.h's list): a row group's
// super-blocks decoded (iq-decode.h) into the decoded tile of
// contract/iq-tiles.h, the 16-row dot products of decoded tiles with ggml's
// Q8_K activation blocks (kquant-dot.h's struct htp_q8k_block), and the
// dequantization of single blocks (GET_ROWS, CPY).
//
// The dot product is ggml-cpu's integer form: per row and activation block,
//   d * a.d * sum_s sc[s] * (sum_{e in s} (q[e] + 64) * a[e] - 64 * bsum16[s])
// with the integer sum exact in int32 (|q| <= 62, sc <= 31: 16 * 31 * 16 *
// 126 * 127 < 2^27) and the float step (d * a.d) * sum added to the row's
// sum, in that order on every path, so the paths agree bit for bit.

#ifndef HTP_IQ_DOT_H
#define HTP_IQ_DOT_H

#include <stddef.h>
#include <stdint.h>

#include "contract/iq-tiles.h"
#include "iq-decode.h"
#include "kquant-dot.h"

// Decodes nsb super-blocks of nrows (<= 16) rows into dg[0 .. nsb-1]: block b
// of row r at base + r * row_stride + b * blk_stride (plain rows: the row
// stride and the block bytes; a tiled group: the block bytes and the tile's
// quant bytes). Rows nrows .. 15 become padding.
void htp_iq_decode_group(htp_iq_decode_fn decode, const struct htp_codebooks * cb, const uint8_t * base,
                         size_t row_stride, size_t blk_stride, int nrows, int64_t nsb, struct htp_iq_dtile * dg);

// out[c][r] = dot product of row r (0..15) of the decoded group dg (nsb
// super-blocks) with column c (0 .. nc-1, nc <= 4) of activations
// a[c][0 .. nsb-1]. AVX-512 VNNI, HVX (bit-identical to the portable code)
// or portable C, whichever the build targets; on Hexagon GGML_HTP_SCALAR=1
// picks the portable code (quant.h).
void htp_iq_dot_group(float out[4][HTP_IQ_TILE_R], const struct htp_iq_dtile * dg, int64_t nsb,
                      const struct htp_q8k_block * const * a, int nc);

// The same with the portable C code only (for tests of the SIMD paths).
void htp_iq_dot_group_ref(float out[4][HTP_IQ_TILE_R], const struct htp_iq_dtile * dg, int64_t nsb,
                          const struct htp_q8k_block * const * a, int nc);

// One ggml block into y[256], bit-exact with ggml's to_float: (d * sc) * q.
void htp_iq_dequant_block(htp_iq_decode_fn decode, const struct htp_codebooks * cb, const uint8_t * block,
                          float y[HTP_IQ_QK]);

#endif  // HTP_IQ_DOT_H
