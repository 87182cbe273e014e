// rope-check.h: ROPE as its check reads it and its kernel runs it: modes
// normal, neox and the multi-section ones (mrope, imrope, vision), YaRN,
// frequency factors.
//
//   src0 [ne0, n_head, n_tokens, ne3]   F32/F16/BF16; dst of its shape
//   src1 positions I32 [n_tokens] (multi-section modes: [4 * n_tokens])
//   src2 frequency factors F32 [>= n_pairs], optional
//   params: [1] n_dims [2] mode [4] n_ctx_orig [5] freq_base [6] freq_scale
//           [7] ext_factor [8] attn_factor [9] beta_fast [10] beta_slow
//           [11..14] sections
//
// Scratch: each worker keeps a cos and a sin per rotated pair.

#ifndef HTP_CONTRACT_ROPE_CHECK_H
#define HTP_CONTRACT_ROPE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_rope_params {
    int32_t n_dims, mode, n_ctx_orig;
    float   freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int32_t sections[4];
};

struct htp_rope_params htp_rope_params_read(const struct htp_op_desc * desc);

// A multi-section mode (positions come in four streams).
int htp_rope_is_multi(int32_t mode);

// Rotated pairs per row.
int32_t htp_rope_pairs(const struct htp_rope_params * p);

// Scratch bytes n_threads workers use for n_pairs pairs.
size_t htp_rope_scratch_size(int32_t n_pairs, uint32_t n_threads);

#endif  // HTP_CONTRACT_ROPE_CHECK_H
