// iq3-decode.h: the decoders of IQ3_XXS and IQ3_S (iq-decode.h's
// interface; htp_iq_decoder hands them out).
//
//   IQ3_XXS  98 bytes   +0 fp16 d | +2 u8 index[64] | +66 u32 word[8]
//            word w covers weights 32 w .. 32 w + 31: bits 7 l .. 7 l + 6 are
//            the stored signs of weights 32 w + 8 l .. + 7 (l = 0..3), bits
//            28..31 the scale s; index g selects iq3xxs point of weights
//            4 g .. 4 g + 3.   weight = d * (2 s + 1) / 4 * +-point
//   IQ3_S   110 bytes   +0 fp16 d | +2 u8 index_lo[64] | +66 u8 index_hi[8]
//            | +74 u8 signs[32] | +106 u8 scales[4]
//            index of group g = index_lo[g] | bit (g % 8) of index_hi[g / 8]
//            << 8 (iq3s point of weights 4 g .. 4 g + 3); bit e % 8 of
//            signs[e / 8] set: weight e negative; scale s of weights
//            32 j .. 32 j + 31 is nibble j % 2 (low first) of scales[j / 2].
//            weight = d * (2 s + 1) * +-point
//
// Into struct htp_iq_superblock: q = +-point, sc = 2 s + 1 (each twice),
// d = fp16 d / 4 (IQ3_XXS) or fp16 d (IQ3_S): d * sc * q is ggml's float.

#ifndef HTP_IQ3_DECODE_H
#define HTP_IQ3_DECODE_H

#include "iq-decode.h"

#define HTP_IQ3XXS_BLOCK 98
#define HTP_IQ3S_BLOCK   110

// The AVX-512 variant where the build has it (bit-identical), else portable C.
void htp_iq3xxs_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq3s_decode(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

// The portable C code only (tests of the SIMD paths).
void htp_iq3xxs_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);
void htp_iq3s_decode_ref(const uint8_t * block, const struct htp_codebooks * cb, struct htp_iq_superblock * x);

#endif  // HTP_IQ3_DECODE_H
