// iq1-decode.h: the decoders of IQ1_S and IQ1_M (iq-decode.h's interface;
// htp_iq_decoder hands them out). Both index iq1s, 2048 points of 8
// coordinates in {-1, 0, 1}, and add a delta of +-1/8 to every coordinate of
// a group.
//
//   IQ1_S  50 bytes   +0 fp16 d | +2 u8 index_lo[32] | +34 u16 word[8]
//          word j covers weights 32 j .. 32 j + 31: bits 3 l .. 3 l + 2 are
//          the high index bits of group 4 j + l (weights 8 (4 j + l) .. + 7),
//          bits 12..14 the scale s, bit 15 the delta's sign (set: -1/8).
//          weight = d * (2 s + 1) * (point + delta)
//   IQ1_M  56 bytes   +0 u8 index_lo[32] | +32 u8 high[16] | +48 u16 scales[4]
//          nibble g % 2 (low first) of high[g / 2] is group g's: bits 0..2
//          the high index bits, bit 3 the delta's sign (set: -1/8). Bits
//          6 (j % 2) .. + 2 and + 3 .. + 5 of scales[j / 2] are the scales of
//          weights 32 j .. + 15 and 32 j + 16 .. + 31; the top nibbles of
//          scales[0..3] are, in that order, the four nibbles (low first) of
//          the fp16 d.   weight = d * (2 s + 1) * (point + delta)
//
// Into struct htp_iq_superblock: q = 8 point +- 1, sc = 2 s + 1 (IQ1_S's
// each twice), d = fp16 d / 8: d * sc * q is ggml's float.
//
// In tiles the blocks keep their points as codes (contract/iq-tiles.h, 3.:
// 70 and 76 bytes): htp_iq1s_code_decode and htp_iq1m_code_decode read
// those, into the same superblock, and need no codebook.

#ifndef HTP_IQ1_DECODE_H
#define HTP_IQ1_DECODE_H

#include "iq-decode.h"

#define HTP_IQ1S_BLOCK 50
#define HTP_IQ1M_BLOCK 56

// The AVX-512 variant where the build has it (bit-identical), else portable C.
void htp_iq1s_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq1m_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

// The code blocks of tiles (cb unused).
void htp_iq1s_code_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq1m_code_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

// The portable C code only (tests of the SIMD paths).
void htp_iq1s_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq1m_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq1s_code_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq1m_code_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

#endif  // HTP_IQ1_DECODE_H
