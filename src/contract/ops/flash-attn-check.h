// flash-attn-check.h: FLASH_ATTN_EXT as its check reads it and its kernel
// plans it: attention with an online softmax over blocks of the KV sequence.
//
//   src0 q     [DK, n_q, n_head, ne3]            F32/F16, any strides
//   src1 k     [DK, n_kv, n_head_kv, ne3k]       F32/F16/BF16, any strides; or a KV-cache
//                                                block type (htp_fa_kv_block_type): rows of
//                                                whole blocks, nb[0] = block bytes, not tiled
//   src2 v     [DV, n_kv, n_head_kv, ne3k]       as k (its type may differ from k's)
//   src3 mask  [>= n_kv, >= n_q, nm2 | n_head, nm3 | ne3]  F16/F32, optional
//   src4 sinks [>= n_head]                       F32, optional
//   dst        [DV, n_head, n_q, ne3]            F32, nb[0] = 4 (ggml's permute(0, 2, 1, 3))
//   params: [0] scale, [1] max_bias (ALiBi), [2] logit_softcap (floats), [3] precision (ignored:
//           the kernel always accumulates in fp32)
//
// Scratch plan: each worker stages FA_ROWS query rows and one block of
// FA_KV_BLK K and V rows, converted to fp32 and padded to whole 128-byte
// vectors, plus its scores and output accumulators; the op needs one such
// slice at least and uses as many workers as slices fit. With a block-type K
// the query and K areas hold int8 blocks and their scales instead (smaller:
// see flash-attn-ops.c), so the plan is the same for every type.

#ifndef HTP_CONTRACT_FLASH_ATTN_CHECK_H
#define HTP_CONTRACT_FLASH_ATTN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "contract/op-call.h"

#define HTP_FA_ROWS   16  // query rows per work item
#define HTP_FA_KV_BLK 64  // K/V rows staged per block
#define HTP_FA_PAD    32  // head sizes are padded to this many floats (one HVX vector)

struct htp_fa_shape {
    const struct htp_tensor_view *q, *k, *v, *mask, *sinks, *dst;
    float                         scale;                      // divided by softcap when softcap != 0
    float                         softcap, max_bias, m0, m1;  // m0, m1: ALiBi slope bases
    uint32_t                      n_head_log2;
    int64_t                       dk, dv;  // head sizes
    int64_t                       n_q, n_kv, n_head, n_head_kv, ne3;
    int64_t                       rk2, rk3;  // query heads per KV head; q ne3 per k ne3
};

// K/V block types FLASH_ATTN_EXT reads (a llama.cpp quantized KV cache):
// Q8_0, Q4_0, Q4_1, IQ4_NL, and Q5_0 / Q5_1 where htp_quant_can_dequant
// says their rows can be dequantized.
int htp_fa_kv_block_type(uint32_t type);

// Read and check call's operands and params into *a. Returns enum htp_status.
int htp_fa_read(const struct htp_op_call * call, struct htp_fa_shape * a);

// n rounded up to whole vectors.
int64_t htp_fa_pad(int64_t n);

// Scratch bytes of one worker's slice for padded head sizes dkp, dvp.
size_t htp_fa_slice_bytes(int64_t dkp, int64_t dvp);

#endif  // HTP_CONTRACT_FLASH_ATTN_CHECK_H
