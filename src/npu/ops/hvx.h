// hvx.h: the small vocabulary the kernels' HVX paths are written in (Hexagon
// v67, 128-byte vectors), over clang's __builtin_HEXAGON_V6_*_128B. Only
// included under #if defined(__HVX__).
//
// Integer only. v67 HVX has no float arithmetic (qf32/qf16 arrive with v68,
// and every v68+ HVX instruction aborts qemu-hexagon 7.2, the only HVX we can
// run), so the kernels do their integer work here and their float scaling in
// scalar code, in the order of their portable C: the results are the same
// bits, which tests/npu/target/test-hvx.c checks with memcmp. Anything that
// would need HVX float belongs under #if __HVX_ARCH__ >= 68, untested here.
//
// Lanes. A vector is 128 bytes: 32 word lanes. A tile vector of the tiled
// weight layouts (contract/tiled.h, contract/kquant-tiles.h) is 64 bytes, 16
// rows x 4 bytes, so an HVX vector holds 16 rows twice: lanes 0-15 and lanes
// 16-31 ("halves"). The dot-product kernels fill the halves with two row
// groups A and B (or the same group twice) by joining the 64-byte halves of
// two loads (hvx_join), so that vrmpy with four activation bytes in a scalar
// register multiplies all 32 lanes by the right k.
//
// Semantics the code relies on (checked under qemu-hexagon -cpu v67, and by
// test-hvx through the kernels): vshuff(Vu, Vv, 64) gives lo = [Vv.lo64 |
// Vu.lo64], hi = [Vv.hi64 | Vu.hi64]; vshuff with a negative size -s zips the
// s-byte elements of Vv and Vu; vunpack widens in order (lo = the first half);
// vpacke(Vu, Vv) takes the even halves of Vv's then Vu's elements; vlut32 with
// control 0 maps index i (< 32) to byte 2i of the table; vdelta routes byte b
// from b ^ s at each stage s = 64, 32, .., 1 whose bit is set in control byte b.

#ifndef HTP_HVX_H
#define HTP_HVX_H

#if defined(__HVX__)

#include <stdint.h>
#include <string.h>

#if __HVX_LENGTH__ != 128
#error "the HVX kernels assume 128-byte vectors (-mhvx-length=128b)"
#endif

typedef int32_t hvx_v __attribute__((vector_size(128)));   // one HVX register
typedef int32_t hvx_vv __attribute__((vector_size(256)));  // a register pair

#define HVX_ALIGN __attribute__((aligned(128)))

// Unaligned load / store (vmemu): tiles sit at any offset of a buffer.
static inline hvx_v hvx_ld(const void * p) {
    hvx_v v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void hvx_st(void * p, hvx_v v) {
    memcpy(p, &v, sizeof v);
}

// The len (<= 128) bytes at p in bytes 0 .. len - 1 (the rest: the bytes
// before p), from the vector that ends at p + len: for data near the end of a
// buffer. The caller guarantees that the 128 - len bytes before p are readable.
static inline hvx_v hvx_ld_tail(const uint8_t * p, int len) {
    return __builtin_HEXAGON_V6_vror_128B(hvx_ld(p + len - 128), 128 - len);
}

static inline hvx_v hvx_w(int32_t x) {  // x in every word
    return __builtin_HEXAGON_V6_lvsplatw_128B(x);
}

static inline hvx_v hvx_b(int32_t x) {  // (uint8_t)x in every byte
    return __builtin_HEXAGON_V6_lvsplatb_128B(x);
}

static inline hvx_v hvx_zero(void) {
    return __builtin_HEXAGON_V6_vd0_128B();
}

static inline hvx_v hvx_lo(hvx_vv p) {
    return __builtin_HEXAGON_V6_lo_128B(p);
}

static inline hvx_v hvx_hi(hvx_vv p) {
    return __builtin_HEXAGON_V6_hi_128B(p);
}

// lo = [a bytes 0-63 | b bytes 0-63], hi = [a bytes 64-127 | b bytes 64-127]:
// the same 64-byte tile vector of two row groups side by side.
static inline hvx_vv hvx_join(hvx_v a, hvx_v b) {
    return __builtin_HEXAGON_V6_vshuffvdd_128B(b, a, 64);
}

// Zip the s-byte elements of a (even places) and b (odd places).
static inline hvx_vv hvx_zip(hvx_v a, hvx_v b, int s) {
    return __builtin_HEXAGON_V6_vshuffvdd_128B(b, a, -s);
}

static inline hvx_v hvx_lsr_b(hvx_v v, int n) {  // bytes >> n (logical)
    return __builtin_HEXAGON_V6_vlsrb_128B(v, n);
}

static inline hvx_v hvx_nib_lo(hvx_v v) {
    return v & hvx_b(0x0f);
}

static inline hvx_v hvx_nib_hi(hvx_v v) {
    return hvx_lsr_b(v, 4);
}

// acc.w[l] + sum over t < 4 of u8 v.b[4 l + t] * s8 byte t of word.
static inline hvx_v hvx_rmpy_acc(hvx_v acc, hvx_v v, int32_t word) {
    return __builtin_HEXAGON_V6_vrmpybus_acc_128B(acc, v, word);
}

static inline hvx_v hvx_rmpy(hvx_v v, int32_t word) {
    return __builtin_HEXAGON_V6_vrmpybus_128B(v, word);
}

// Four activation bytes (aligned: activation blocks are word aligned) as the
// scalar operand of vrmpy.
static inline int32_t hvx_word(const int8_t * p) {
    int32_t v;
    memcpy(&v, __builtin_assume_aligned(p, 4), 4);
    return v;
}

// Word lane l of the result = word lane 0 .. 31 of v at index l (l < 32).
static inline int32_t hvx_lane(hvx_v v, int l) {
    return __builtin_HEXAGON_V6_extractw_128B(v, 4 * l);
}

// Every lane = the largest / smallest (signed) word of v.
static inline hvx_v hvx_hmax_w(hvx_v v) {
    for (int s = 64; s >= 4; s /= 2) {
        v = __builtin_HEXAGON_V6_vmaxw_128B(v, __builtin_HEXAGON_V6_vror_128B(v, s));
    }
    return v;
}

static inline hvx_v hvx_hmin_w(hvx_v v) {
    for (int s = 64; s >= 4; s /= 2) {
        v = __builtin_HEXAGON_V6_vminw_128B(v, __builtin_HEXAGON_V6_vror_128B(v, s));
    }
    return v;
}

// Words lanes (a < b ? x : y).
static inline hvx_v hvx_sel_lt(hvx_v a, hvx_v b, hvx_v x, hvx_v y) {
    return __builtin_HEXAGON_V6_vmux_128B(__builtin_HEXAGON_V6_vgtw_128B(b, a), x, y);
}

static inline hvx_v hvx_sel_eq(hvx_v a, hvx_v b, hvx_v x, hvx_v y) {
    return __builtin_HEXAGON_V6_vmux_128B(__builtin_HEXAGON_V6_veqw_128B(a, b), x, y);
}

// fp16 in the low half of each word (upper half zero) -> the fp32 bits
// htp_fp16_to_fp32_soft gives, for every input: exponents 1-30 rebias by
// 127 - 15; 31 (inf, NaN) becomes 255 with the payload kept; a subnormal m
// (value m * 2^-24) has its top bit p = 31 - clz(m) made the implicit one,
// so its exponent field is p + 103 = 134 - clz(m).
static inline hvx_v hvx_fp16_bits(hvx_v h) {
    const hvx_v mag  = h & hvx_w(0x7fff);
    const hvx_v sign = (h & hvx_w(0x8000)) << 16;
    hvx_v       norm = (mag << 13) + hvx_w(112 << 23);
    norm             = hvx_sel_lt(hvx_w(0x7bff), mag, norm + hvx_w(112 << 23), norm);
    const hvx_v clz  = __builtin_HEXAGON_V6_vcl0w_128B(mag);
    const hvx_v sub  = ((hvx_w(133) - clz) << 23) + __builtin_HEXAGON_V6_vaslwv_128B(mag, clz - hvx_w(8));
    hvx_v       r    = hvx_sel_lt(mag, hvx_w(0x400), sub, norm);
    r                = hvx_sel_eq(mag, hvx_zero(), hvx_zero(), r);
    return r | sign;
}

// Words v with |v| < 2^24 -> the bits of (float)v, which is exact there (no
// rounding): the top bit p = 31 - clz(|v|) becomes the implicit one and the
// exponent field 127 + p = 158 - clz. Callers guarantee the bound.
static inline hvx_v hvx_small_int_to_float_bits(hvx_v v) {
    const hvx_v a    = __builtin_HEXAGON_V6_vabsw_128B(v);
    const hvx_v clz  = __builtin_HEXAGON_V6_vcl0w_128B(a);
    const hvx_v bits = ((hvx_w(157) - clz) << 23) + __builtin_HEXAGON_V6_vaslwv_128B(a, clz - hvx_w(8));
    return hvx_sel_eq(a, hvx_zero(), hvx_zero(), bits) | (v & hvx_w((int32_t)0x80000000u));
}

// 64 fp16 values (a vector, or 128 bytes at p) -> their fp32 bits, in order, at out.
static inline void hvx_fp16_to_fp32_64_v(hvx_v h, float out[64]) {
    const hvx_vv w = __builtin_HEXAGON_V6_vunpackuh_128B(h);
    hvx_st(out, hvx_fp16_bits(hvx_lo(w)));
    hvx_st(out + 32, hvx_fp16_bits(hvx_hi(w)));
}

static inline void hvx_fp16_to_fp32_64(const void * p, float out[64]) {
    hvx_fp16_to_fp32_64_v(hvx_ld(p), out);
}

// e8m0 exponent in the low byte of each word (rest zero) -> the bits of
// htp_e8m0_to_fp32_half: 0.5 * 2^(e - 127), a subnormal for e < 2.
static inline hvx_v hvx_e8m0_half_bits(hvx_v e) {
    const hvx_v sub = __builtin_HEXAGON_V6_vaslwv_128B(hvx_w(0x00200000), e);
    return hvx_sel_lt(e, hvx_w(2), sub, (e - hvx_w(1)) << 23);
}

// A 16-entry byte table (values + add) as vlut32's table operand: entry i at
// byte 2i.
//
// Two clang 14 (Hexagon) miscompiles shape the staging buffers of the HVX
// paths: (1) it put a memset's vector store and a later byte store to the
// same address into one packet, and the zeros won (a lost table entry), so
// each byte of a staging buffer is written once; (2) it turned a 64-byte
// memcpy into a staging buffer that is then loaded as a vector into a
// 128-byte load of the source, reading past its end, so data that ends near
// the end of a buffer is loaded as the whole vector that ends where it does
// (tests/npu/target/test-hvx.c puts every input before a guard page).
static inline hvx_v hvx_table16(const int8_t tab[16], int add) {
    uint16_t t[64] HVX_ALIGN;
    for (int i = 0; i < 64; i++) {
        t[i] = i < 16 ? (uint8_t)(tab[i] + add) : 0;
    }
    return hvx_ld(t);
}

// Bytes (indices 0..15) -> table bytes.
static inline hvx_v hvx_lut16(hvx_v idx, hvx_v table) {
    return __builtin_HEXAGON_V6_vlutvvb_128B(idx, table, 0);
}

// ---------------------------------------------------------------------------
// Bit masks -> bytes
// ---------------------------------------------------------------------------

#define HVX_T8(F, n) F(n), F(n + 1), F(n + 2), F(n + 3), F(n + 4), F(n + 5), F(n + 6), F(n + 7)
#define HVX_T64(F, n)                                                                                           \
    HVX_T8(F, n), HVX_T8(F, n + 8), HVX_T8(F, n + 16), HVX_T8(F, n + 24), HVX_T8(F, n + 32), HVX_T8(F, n + 40), \
        HVX_T8(F, n + 48), HVX_T8(F, n + 56)
#define HVX_T128(F) HVX_T64(F, 0), HVX_T64(F, 64)
#define HVX_ID(b)   (b)

static const int32_t hvx_iota_w_tab[32] HVX_ALIGN = {HVX_T8(HVX_ID, 0), HVX_T8(HVX_ID, 8), HVX_T8(HVX_ID, 16),
                                                     HVX_T8(HVX_ID, 24)};

// Masks of 64 bits, one bit per (row, byte) of a 16-row tile vector: bit
// 4 r + t stands for lane r, byte t (kquant-tiles.h). A mask vector holds 8
// masks of group A and B, interleaved 8 bytes at a time (hvx_zip(a, b, 8)):
// mask m of A at bytes 16 m .. 16 m + 7, of B at 16 m + 8 .. 16 m + 15.
//
// hvx_mask_words puts each mask m into s[m], each of its four words (A's
// low and high 32 bits, then B's) in 8 consecutive lanes: a vector zipped
// with itself word by word doubles every word, three times make 8 copies.
// Lane l (row l % 16 of A, then B) then holds the word with its row's
// nibble, at bits 4 (l % 8): hvx_mask_or shifts it down, and a multiply by
// 0x00204081 << sh (n << sh, << sh + 7, + 14, + 21: no carries for n < 16)
// moves bit t of the nibble to bit 8 t + sh, byte t's bit sh. (No permute
// network and no predicates: under qemu-hexagon a vdelta costs about 50
// vand, a compare into a predicate and a predicated add 30.)
#define HVX_NIB_SHIFT(l) (4 * ((l) % 8))

static const int32_t hvx_nib_shift_tab[32] HVX_ALIGN = {HVX_T8(HVX_NIB_SHIFT, 0), HVX_T8(HVX_NIB_SHIFT, 8),
                                                        HVX_T8(HVX_NIB_SHIFT, 16), HVX_T8(HVX_NIB_SHIFT, 24)};

static inline void hvx_mask_words(hvx_v qh, hvx_v s[8]) {
    const hvx_vv r1 = hvx_zip(qh, qh, 4);  // masks 0-3, 4-7
    for (int h = 0; h < 2; h++) {
        const hvx_v  x  = h ? hvx_hi(r1) : hvx_lo(r1);
        const hvx_vv r2 = hvx_zip(x, x, 4);  // masks 4h + 0-1, 4h + 2-3
        const hvx_vv a = hvx_zip(hvx_lo(r2), hvx_lo(r2), 4), b = hvx_zip(hvx_hi(r2), hvx_hi(r2), 4);
        s[4 * h]     = hvx_lo(a);
        s[4 * h + 1] = hvx_hi(a);
        s[4 * h + 2] = hvx_lo(b);
        s[4 * h + 3] = hvx_hi(b);
    }
}

// w with bit sh (4: + 16, 5: + 32) set in every byte whose mask bit is set;
// s: the mask's words from hvx_mask_words. (w's bit sh must be clear.)
static inline hvx_v hvx_mask_or(hvx_v w, hvx_v s, int sh) {
    const hvx_v n = __builtin_HEXAGON_V6_vlsrwv_128B(s, hvx_ld(hvx_nib_shift_tab)) & hvx_w(15);
    const hvx_v t = __builtin_HEXAGON_V6_vmpyiewuh_128B(hvx_w(0x00204081 << sh), n);
    return w | (t & hvx_w(0x01010101 << sh));
}

#endif  // __HVX__

#endif  // HTP_HVX_H
