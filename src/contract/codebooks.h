// codebooks.h: the lattice codebooks of the IQ weight types (IQ1_S, IQ1_M,
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), as the NPU's kernels read them.
//
// These types store, for each group of 8 (IQ1, IQ2) or 4 (IQ3) weights, an
// index into a fixed table of points; the weight is the point's coordinate
// times a scale (and a sign, stored apart). The tables are part of the format
// and only ggml holds them, so the NPU, which does not include ggml, gets
// them from the host: the host derives every entry from the pinned ggml's own
// dequantizers at session start (src/host/codebooks.c: it dequantizes blocks
// that select each index with unit scale and positive signs and reads the
// points back) and hands the whole struct over with the queue
// (htp_queue_desc.codebooks_off, in the pinned buffer). The NPU checks it
// (htp_codebooks_ok) and keeps its own copy for the session; kernels find it
// in their op context (htp_op_ctx.codebooks).
//
// Layout (all byte arrays, no padding; offsets from the struct's start):
//
//   +0       magic    HTP_CODEBOOKS_MAGIC
//   +4       bytes    sizeof(struct htp_codebooks)
//   +8       iq2xxs   [256][8]  IQ2_XXS: coordinates of point i, each 8, 25 or 43
//   +2056    iq2xs    [512][8]  IQ2_XS:  same values, 9-bit index
//   +6152    iq2s     [1024][8] IQ2_S:   same values, 10-bit index
//   +14344   iq3xxs   [256][4]  IQ3_XXS: coordinates 4, 12, .., 62 (8 values)
//   +15368   iq3s     [512][4]  IQ3_S:   coordinates 1, 3, .., 15 (odd)
//   +17416   iq1s     [2048][8] IQ1_S and IQ1_M: coordinates -1, 0 or +1 (int8)
//   +33800   end
//
// Coordinate j of a point is its j-th weight of the group (element 8 g + j of
// the 32- or 16-element sub-block for IQ2 and IQ1, 4 g + j for IQ3).
//
// Signs (IQ2, IQ3): a group of 8 weights carries 7 sign bits; the eighth is
// chosen so that the number of negative weights is even. Bit j set means
// weight j is negative. htp_iq_signs8 expands the 7 stored bits.

#ifndef HTP_CONTRACT_CODEBOOKS_H
#define HTP_CONTRACT_CODEBOOKS_H

#include <stdint.h>

#define HTP_CODEBOOKS_MAGIC 0x4b424349u  // "ICBK"

struct htp_codebooks {
    uint32_t magic;
    uint32_t bytes;
    uint8_t  iq2xxs[256][8];
    uint8_t  iq2xs[512][8];
    uint8_t  iq2s[1024][8];
    uint8_t  iq3xxs[256][4];
    uint8_t  iq3s[512][4];
    int8_t   iq1s[2048][8];
};

_Static_assert(sizeof(struct htp_codebooks) == 33800, "codebook layout");

// The 8 sign bits of a group from its 7 stored ones (bit 7 makes the parity even).
static inline uint8_t htp_iq_signs8(uint32_t stored7) {
    const uint32_t s = stored7 & 0x7f;
    const uint32_t p = (uint32_t)__builtin_popcount(s) & 1;
    return (uint8_t)(s | (p << 7));
}

// 1 if type (enum htp_type) is one of the types that index these tables.
int htp_type_uses_codebooks(uint32_t type);

// 1 if cb is a well-formed set of codebooks: magic, size and every entry in
// its type's value set. The NPU checks what the host sent before any kernel
// reads it.
int htp_codebooks_ok(const struct htp_codebooks * cb);

#endif  // HTP_CONTRACT_CODEBOOKS_H
