// kquant-tiles.c: the tiled format of K-quant weights (Q2_K .. Q6_K, IQ4_XS),
// kquant-tiles.h's layout: pack from ggml's blocks (the host's set_tensor),
// unpack back to them (get_tensor), and the decoded super-block the NPU's
// kernels dequantize from.
//
// Every conversion goes through one decoded form of a super-block (struct
// htp_kq_superblock: 256 unsigned quants, per-sub-block scales and mins, d
// and dmin bits), so pack and unpack are each a decode followed by an encode
// and the two directions cannot disagree.

#include "kquant-tiles.h"

#include <string.h>

#include "proto/htp-proto.h"

enum {
    KQ_Q2K_BYTES   = 84,
    KQ_Q3K_BYTES   = 110,
    KQ_Q4K_BYTES   = 144,
    KQ_Q5K_BYTES   = 176,
    KQ_Q6K_BYTES   = 210,
    KQ_IQ4XS_BYTES = 136
};

static uint16_t kq_rd16(const uint8_t * p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static void kq_wr16(uint8_t * p, uint16_t v) {
    memcpy(p, &v, 2);
}

// ggml's 12-byte packing of eight 6-bit scales and eight 6-bit mins: bytes
// 0-3 hold scales 0-3 (low 6 bits) and the top 2 bits of scales 4-7; bytes
// 4-7 the same for the mins; bytes 8-11 the low 4 bits of scale (low nibble)
// and min (high nibble) 4-7. All 96 bits are used, so the mapping is 1:1.
static void kq_scales_decode(const uint8_t * p, uint8_t sc[8], uint8_t mn[8]) {
    for (int j = 0; j < 4; j++) {
        sc[j]     = p[j] & 63;
        mn[j]     = p[j + 4] & 63;
        sc[j + 4] = (uint8_t)((p[j + 8] & 15) | ((p[j] >> 6) << 4));
        mn[j + 4] = (uint8_t)((p[j + 8] >> 4) | ((p[j + 4] >> 6) << 4));
    }
}

static void kq_scales_encode(uint8_t * p, const uint8_t sc[8], const uint8_t mn[8]) {
    for (int j = 0; j < 4; j++) {
        p[j]     = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        p[j + 4] = (uint8_t)((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        p[j + 8] = (uint8_t)((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
}

// Q4_K: d, dmin, scales[12], qs[128]. Element 64 i + l (l < 32) is the low
// nibble of qs[32 i + l], element 64 i + 32 + l its high nibble.
// Q5_K: d, dmin, scales[12], qh[32], qs[128]: as Q4_K plus bit 4 of element
// 64 i + 32 h + l in bit 2 i + h of qh[l].
static void kq_decode_kmin(int q5, const uint8_t * b, struct htp_kq_superblock * x) {
    x->d    = kq_rd16(b);
    x->dmin = kq_rd16(b + 2);
    kq_scales_decode(b + 4, x->sc, x->mn);
    const uint8_t * qh = b + 16;
    const uint8_t * qs = b + (q5 ? 48 : 16);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int i = e / 64, h = (e % 64) / 32, l = e % 32;
        int       v = (qs[32 * i + l] >> (4 * h)) & 15;
        if (q5) {
            v |= ((qh[l] >> (2 * i + h)) & 1) << 4;
        }
        x->q[e] = (uint8_t)v;
    }
}

static void kq_encode_kmin(int q5, uint8_t * b, const struct htp_kq_superblock * x) {
    kq_wr16(b, x->d);
    kq_wr16(b + 2, x->dmin);
    kq_scales_encode(b + 4, x->sc, x->mn);
    uint8_t * qh = b + 16;
    uint8_t * qs = b + (q5 ? 48 : 16);
    memset(qs, 0, 128);
    if (q5) {
        memset(qh, 0, 32);
    }
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int i = e / 64, h = (e % 64) / 32, l = e % 32;
        qs[32 * i + l] |= (uint8_t)((x->q[e] & 15) << (4 * h));
        if (q5) {
            qh[l] |= (uint8_t)(((x->q[e] >> 4) & 1) << (2 * i + h));
        }
    }
}

// Q6_K: ql[128], qh[64], scales[16] (int8), d. In each half n (128
// elements), element 128 n + 32 k + l (k < 4, l < 32) has its low 4 bits in
// nibble k / 2 of ql[64 n + 32 (k % 2) + l] and its top 2 bits at bit 2 k of
// qh[32 n + l]; its scale is scales[e / 16].
static void kq_decode_q6(const uint8_t * b, struct htp_kq_superblock * x) {
    const uint8_t * ql = b;
    const uint8_t * qh = b + 128;
    memcpy(x->sc, b + 192, 16);
    x->d    = kq_rd16(b + 208);
    x->dmin = 0;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int n = e / 128, k = (e % 128) / 32, l = e % 32;
        const int lo = (ql[64 * n + 32 * (k % 2) + l] >> (4 * (k / 2))) & 15;
        const int hi = (qh[32 * n + l] >> (2 * k)) & 3;
        x->q[e]      = (uint8_t)(lo | (hi << 4));
    }
}

static void kq_encode_q6(uint8_t * b, const struct htp_kq_superblock * x) {
    uint8_t * ql = b;
    uint8_t * qh = b + 128;
    memset(b, 0, 192);
    memcpy(b + 192, x->sc, 16);
    kq_wr16(b + 208, x->d);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int n = e / 128, k = (e % 128) / 32, l = e % 32;
        ql[64 * n + 32 * (k % 2) + l] |= (uint8_t)((x->q[e] & 15) << (4 * (k / 2)));
        qh[32 * n + l] |= (uint8_t)(((x->q[e] >> 4) & 3) << (2 * k));
    }
}

// Q3_K: hmask[32], qs[64], scales[12], d. Element 128 n + 32 j + l (j < 4,
// l < 32) has its low 2 bits at bit 2 j of qs[32 n + l] and its third bit
// (set: ggml's value is q - 0, clear: q - 4) at bit 4 n + j of hmask[l].
// The 16 six-bit scales: scale 4 g + m (g, m < 4) has its low 4 bits in
// nibble g / 2 of byte m + 4 (g % 2) and its top 2 at bits 2 g of byte 8 + m.
static void kq_decode_q3(const uint8_t * b, struct htp_kq_superblock * x) {
    const uint8_t * hm = b;
    const uint8_t * qs = b + 32;
    const uint8_t * p  = b + 96;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int n = e / 128, j = (e % 128) / 32, l = e % 32;
        const int lo = (qs[32 * n + l] >> (2 * j)) & 3;
        const int hi = (hm[l] >> (4 * n + j)) & 1;
        x->q[e]      = (uint8_t)(lo | (hi << 2));
    }
    for (int i = 0; i < 16; i++) {
        const int g = i / 4, m = i % 4;
        const int v = ((p[m + 4 * (g % 2)] >> (4 * (g / 2))) & 15) | (((p[8 + m] >> (2 * g)) & 3) << 4);
        x->sc[i]    = (uint8_t)(int8_t)(v - 32);
    }
    memset(x->mn, 0, sizeof x->mn);
    x->d    = kq_rd16(b + 108);
    x->dmin = 0;
}

static void kq_encode_q3(uint8_t * b, const struct htp_kq_superblock * x) {
    uint8_t * hm = b;
    uint8_t * qs = b + 32;
    uint8_t * p  = b + 96;
    memset(b, 0, 108);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int n = e / 128, j = (e % 128) / 32, l = e % 32;
        qs[32 * n + l] |= (uint8_t)((x->q[e] & 3) << (2 * j));
        hm[l] |= (uint8_t)(((x->q[e] >> 2) & 1) << (4 * n + j));
    }
    for (int i = 0; i < 16; i++) {
        const int g = i / 4, m = i % 4;
        const int v = ((int8_t)x->sc[i] + 32) & 63;
        p[m + 4 * (g % 2)] |= (uint8_t)((v & 15) << (4 * (g / 2)));
        p[8 + m] |= (uint8_t)((v >> 4) << (2 * g));
    }
    kq_wr16(b + 108, x->d);
}

// Q2_K: scales[16] (scale | min << 4), qs[64], d, dmin. Quants as Q3_K's low
// 2 bits.
static void kq_decode_q2(const uint8_t * b, struct htp_kq_superblock * x) {
    const uint8_t * qs = b + 16;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int n = e / 128, j = (e % 128) / 32, l = e % 32;
        x->q[e] = (uint8_t)((qs[32 * n + l] >> (2 * j)) & 3);
    }
    for (int i = 0; i < 16; i++) {
        x->sc[i] = b[i] & 15;
        x->mn[i] = b[i] >> 4;
    }
    x->d    = kq_rd16(b + 80);
    x->dmin = kq_rd16(b + 82);
}

static void kq_encode_q2(uint8_t * b, const struct htp_kq_superblock * x) {
    uint8_t * qs = b + 16;
    memset(qs, 0, 64);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int n = e / 128, j = (e % 128) / 32, l = e % 32;
        qs[32 * n + l] |= (uint8_t)((x->q[e] & 3) << (2 * j));
    }
    for (int i = 0; i < 16; i++) {
        b[i] = (uint8_t)((x->sc[i] & 15) | (x->mn[i] << 4));
    }
    kq_wr16(b + 80, x->d);
    kq_wr16(b + 82, x->dmin);
}

// IQ4_XS: d, scales_h (16 bits: bits 2 j, 2 j + 1 = the top of scale j),
// scales_l[4] (nibble j % 2 of byte j / 2 = the low 4 bits of scale j),
// qs[128]: element 32 j + 16 h + l (l < 16) is nibble h of qs[16 j + l].
static void kq_decode_iq4xs(const uint8_t * b, struct htp_kq_superblock * x) {
    const uint16_t  sh = kq_rd16(b + 2);
    const uint8_t * qs = b + 8;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int j = e / 32, h = (e % 32) / 16, l = e % 16;
        x->q[e] = (uint8_t)((qs[16 * j + l] >> (4 * h)) & 15);
    }
    memset(x->sc, 0, sizeof x->sc);
    memset(x->mn, 0, sizeof x->mn);
    for (int j = 0; j < 8; j++) {
        const int v = ((b[4 + j / 2] >> (4 * (j % 2))) & 15) | (((sh >> (2 * j)) & 3) << 4);
        x->sc[j]    = (uint8_t)(int8_t)(v - 32);
    }
    x->d    = kq_rd16(b);
    x->dmin = 0;
}

static void kq_encode_iq4xs(uint8_t * b, const struct htp_kq_superblock * x) {
    uint8_t * qs = b + 8;
    memset(b + 2, 0, KQ_IQ4XS_BYTES - 2);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int j = e / 32, h = (e % 32) / 16, l = e % 16;
        qs[16 * j + l] |= (uint8_t)((x->q[e] & 15) << (4 * h));
    }
    uint16_t sh = 0;
    for (int j = 0; j < 8; j++) {
        const int v = ((int8_t)x->sc[j] + 32) & 63;
        b[4 + j / 2] |= (uint8_t)((v & 15) << (4 * (j % 2)));
        sh |= (uint16_t)((v >> 4) << (2 * j));
    }
    kq_wr16(b, x->d);
    kq_wr16(b + 2, sh);
}

// ---------------------------------------------------------------------------
// Tiles (layout in kquant-tiles.h)
// ---------------------------------------------------------------------------

static void kq_mask_set(uint8_t m[8], int bit, int v) {
    m[bit / 8] = (uint8_t)((m[bit / 8] & ~(1u << (bit % 8))) | ((unsigned)(v & 1) << (bit % 8)));
}

static int kq_mask_get(const uint8_t m[8], int bit) {
    return (m[bit / 8] >> (bit % 8)) & 1;
}

// Row r of a Q4_K / Q5_K tile (q5 selects the high-bit masks).
static void kq_tile_put_kmin(int q5, uint8_t * qp, uint8_t * sp, int r, const struct htp_kq_superblock * x) {
    struct htp_q5k_q *  q = (struct htp_q5k_q *)(void *)qp;  // Q5_K only
    struct htp_kmin_s * s = (struct htp_kmin_s *)(void *)sp;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int j = e / 32, c = (e % 32) / 8, u = e % 8;
        uint8_t * byte = qp + htp_kmin_qs_off(q5, j, c) + 4 * r + u % 4;
        const int sh   = 4 * (u / 4);
        *byte          = (uint8_t)((*byte & ~(15u << sh)) | ((unsigned)(x->q[e] & 15) << sh));
        if (q5) {
            kq_mask_set(q->j[j].qh[c][u / 4], 4 * r + u % 4, x->q[e] >> 4);
        }
    }
    for (int j = 0; j < 8; j++) {
        s->sc[j][r]            = x->sc[j];
        s->mn[j / 2][r][j % 2] = x->mn[j];
    }
    kq_wr16(s->d[r], x->d);
    kq_wr16(s->dmin[r], x->dmin);
}

static void kq_tile_get_kmin(int q5, const uint8_t * qp, const uint8_t * sp, int r, struct htp_kq_superblock * x) {
    const struct htp_q5k_q *  q = (const struct htp_q5k_q *)(const void *)qp;  // Q5_K only
    const struct htp_kmin_s * s = (const struct htp_kmin_s *)(const void *)sp;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int j = e / 32, c = (e % 32) / 8, u = e % 8;
        int       v = (qp[htp_kmin_qs_off(q5, j, c) + 4 * r + u % 4] >> (4 * (u / 4))) & 15;
        if (q5) {
            v |= kq_mask_get(q->j[j].qh[c][u / 4], 4 * r + u % 4) << 4;
        }
        x->q[e] = (uint8_t)v;
    }
    for (int j = 0; j < 8; j++) {
        x->sc[j] = s->sc[j][r];
        x->mn[j] = s->mn[j / 2][r][j % 2];
    }
    x->d    = kq_rd16(s->d[r]);
    x->dmin = kq_rd16(s->dmin[r]);
}

// Where Q6_K's high bits sit in their qh byte: chunk c, nibble n (kquant-tiles.h).
static int kq_q6_field_shift(int c, int n) {
    return 4 - 4 * c + 2 * n;
}

static void kq_tile_put_q6(uint8_t * qp, uint8_t * sp, int r, const struct htp_kq_superblock * x) {
    struct htp_q6k_q * q = (struct htp_q6k_q *)(void *)qp;
    struct htp_q6k_s * s = (struct htp_q6k_s *)(void *)sp;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int s16 = e / 16, c = (e % 16) / 8, u = e % 8;
        uint8_t * byte  = &q->s[s16].ql[c][4 * r + u % 4];
        const int sh    = 4 * (u / 4);
        *byte           = (uint8_t)((*byte & ~(15u << sh)) | ((unsigned)(x->q[e] & 15) << sh));
        uint8_t * field = &q->s[s16].qh[4 * r + u % 4];
        const int h     = kq_q6_field_shift(c, u / 4);
        *field          = (uint8_t)((*field & ~(3u << h)) | ((unsigned)(x->q[e] >> 4 & 3) << h));
    }
    for (int i = 0; i < 16; i++) {
        s->sc[i][r] = (int8_t)x->sc[i];
    }
    kq_wr16(s->d[r], x->d);
}

static void kq_tile_get_q6(const uint8_t * qp, const uint8_t * sp, int r, struct htp_kq_superblock * x) {
    const struct htp_q6k_q * q = (const struct htp_q6k_q *)(const void *)qp;
    const struct htp_q6k_s * s = (const struct htp_q6k_s *)(const void *)sp;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int s16 = e / 16, c = (e % 16) / 8, u = e % 8;
        int       v = (q->s[s16].ql[c][4 * r + u % 4] >> (4 * (u / 4))) & 15;
        v |= (q->s[s16].qh[4 * r + u % 4] >> kq_q6_field_shift(c, u / 4) & 3) << 4;
        x->q[e] = (uint8_t)v;
    }
    for (int i = 0; i < 16; i++) {
        x->sc[i] = (uint8_t)s->sc[i][r];
    }
    x->d    = kq_rd16(s->d[r]);
    x->dmin = 0;
}

// The 2-bit fields of Q2_K and Q3_K: element e of row r in qs[e / 16],
// byte (r, e % 4), bits 2 ((e % 16) / 4).
static void kq_tile_put_q2bits(uint8_t qs[16][64], int r, const struct htp_kq_superblock * x) {
    for (int e = 0; e < HTP_KQ_QK; e++) {
        uint8_t * byte = &qs[e / 16][4 * r + e % 4];
        const int sh   = 2 * ((e % 16) / 4);
        *byte          = (uint8_t)((*byte & ~(3u << sh)) | ((unsigned)(x->q[e] & 3) << sh));
    }
}

static void kq_tile_get_q2bits(const uint8_t qs[16][64], int r, struct htp_kq_superblock * x) {
    for (int e = 0; e < HTP_KQ_QK; e++) {
        x->q[e] = (uint8_t)((qs[e / 16][4 * r + e % 4] >> (2 * ((e % 16) / 4))) & 3);
    }
}

static void kq_tile_put_q3(uint8_t * qp, uint8_t * sp, int r, const struct htp_kq_superblock * x) {
    struct htp_q3k_q * q = (struct htp_q3k_q *)(void *)qp;
    struct htp_q6k_s * s = (struct htp_q6k_s *)(void *)sp;
    kq_tile_put_q2bits(q->qs, r, x);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        kq_mask_set(q->qh[e / 16][(e % 16) / 4], 4 * r + e % 4, x->q[e] >> 2);
    }
    for (int i = 0; i < 16; i++) {
        s->sc[i][r] = (int8_t)x->sc[i];
    }
    kq_wr16(s->d[r], x->d);
}

static void kq_tile_get_q3(const uint8_t * qp, const uint8_t * sp, int r, struct htp_kq_superblock * x) {
    const struct htp_q3k_q * q = (const struct htp_q3k_q *)(const void *)qp;
    const struct htp_q6k_s * s = (const struct htp_q6k_s *)(const void *)sp;
    kq_tile_get_q2bits(q->qs, r, x);
    for (int e = 0; e < HTP_KQ_QK; e++) {
        x->q[e] = (uint8_t)(x->q[e] | (kq_mask_get(q->qh[e / 16][(e % 16) / 4], 4 * r + e % 4) << 2));
    }
    for (int i = 0; i < 16; i++) {
        x->sc[i] = (uint8_t)s->sc[i][r];
    }
    memset(x->mn, 0, sizeof x->mn);
    x->d    = kq_rd16(s->d[r]);
    x->dmin = 0;
}

static void kq_tile_put_q2(uint8_t * qp, uint8_t * sp, int r, const struct htp_kq_superblock * x) {
    struct htp_q2k_q * q = (struct htp_q2k_q *)(void *)qp;
    struct htp_q2k_s * s = (struct htp_q2k_s *)(void *)sp;
    kq_tile_put_q2bits(q->qs, r, x);
    for (int i = 0; i < 16; i++) {
        s->sm[i][r] = (uint8_t)((x->sc[i] & 15) | (x->mn[i] << 4));
    }
    kq_wr16(s->d[r], x->d);
    kq_wr16(s->dmin[r], x->dmin);
}

static void kq_tile_get_q2(const uint8_t * qp, const uint8_t * sp, int r, struct htp_kq_superblock * x) {
    const struct htp_q2k_q * q = (const struct htp_q2k_q *)(const void *)qp;
    const struct htp_q2k_s * s = (const struct htp_q2k_s *)(const void *)sp;
    kq_tile_get_q2bits(q->qs, r, x);
    for (int i = 0; i < 16; i++) {
        x->sc[i] = s->sm[i][r] & 15;
        x->mn[i] = s->sm[i][r] >> 4;
    }
    x->d    = kq_rd16(s->d[r]);
    x->dmin = kq_rd16(s->dmin[r]);
}

// IQ4_XS: Q4_K's nibbles (kq_tile_*_kmin's quant half), int8 scales.
static void kq_tile_put_iq4xs(uint8_t * qp, uint8_t * sp, int r, const struct htp_kq_superblock * x) {
    struct htp_q4k_q *   q = (struct htp_q4k_q *)(void *)qp;
    struct htp_iq4xs_s * s = (struct htp_iq4xs_s *)(void *)sp;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int j = e / 32, c = (e % 32) / 8, u = e % 8;
        uint8_t * byte = &q->qs[j][c][4 * r + u % 4];
        const int sh   = 4 * (u / 4);
        *byte          = (uint8_t)((*byte & ~(15u << sh)) | ((unsigned)(x->q[e] & 15) << sh));
    }
    for (int j = 0; j < 8; j++) {
        s->sc[j][r] = (int8_t)x->sc[j];
    }
    kq_wr16(s->d[r], x->d);
}

static void kq_tile_get_iq4xs(const uint8_t * qp, const uint8_t * sp, int r, struct htp_kq_superblock * x) {
    const struct htp_q4k_q *   q = (const struct htp_q4k_q *)(const void *)qp;
    const struct htp_iq4xs_s * s = (const struct htp_iq4xs_s *)(const void *)sp;
    for (int e = 0; e < HTP_KQ_QK; e++) {
        const int j = e / 32, c = (e % 32) / 8, u = e % 8;
        x->q[e] = (uint8_t)((q->qs[j][c][4 * r + u % 4] >> (4 * (u / 4))) & 15);
    }
    memset(x->sc, 0, sizeof x->sc);
    memset(x->mn, 0, sizeof x->mn);
    for (int j = 0; j < 8; j++) {
        x->sc[j] = (uint8_t)s->sc[j][r];
    }
    x->d    = kq_rd16(s->d[r]);
    x->dmin = 0;
}

static void kq_pack(uint32_t type, const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s) {
    memset(q, 0, htp_kq_q_bytes(type));
    memset(s, 0, htp_kq_s_bytes(type));
    for (int r = 0; r < HTP_KQ_R; r++) {
        if (!blocks[r]) {
            continue;  // padding row: all zero, d = 0
        }
        struct htp_kq_superblock x;
        htp_kq_block_decode(type, blocks[r], &x);
        switch (type) {
            case HTP_TYPE_Q6_K:
                kq_tile_put_q6(q, s, r, &x);
                break;
            case HTP_TYPE_Q3_K:
                kq_tile_put_q3(q, s, r, &x);
                break;
            case HTP_TYPE_Q2_K:
                kq_tile_put_q2(q, s, r, &x);
                break;
            case HTP_TYPE_IQ4_XS:
                kq_tile_put_iq4xs(q, s, r, &x);
                break;
            default:
                kq_tile_put_kmin(type == HTP_TYPE_Q5_K, q, s, r, &x);
                break;
        }
    }
}

static void kq_unpack(uint32_t type, const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {
    struct htp_kq_superblock x;
    htp_kq_tile_decode(type, q, s, r, &x);
    switch (type) {
        case HTP_TYPE_Q6_K:
            kq_encode_q6(block, &x);
            break;
        case HTP_TYPE_Q3_K:
            kq_encode_q3(block, &x);
            break;
        case HTP_TYPE_Q2_K:
            kq_encode_q2(block, &x);
            break;
        case HTP_TYPE_IQ4_XS:
            kq_encode_iq4xs(block, &x);
            break;
        default:
            kq_encode_kmin(type == HTP_TYPE_Q5_K, block, &x);
            break;
    }
}

#define KQ_PACK_FNS(name, T)                                                                    \
    void htp_kq_pack_##name(const uint8_t * const blocks[HTP_KQ_R], uint8_t * q, uint8_t * s) { \
        kq_pack(T, blocks, q, s);                                                               \
    }                                                                                           \
    void htp_kq_unpack_##name(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {   \
        kq_unpack(T, q, s, r, block);                                                           \
    }
KQ_PACK_FNS(q2_K, HTP_TYPE_Q2_K)
KQ_PACK_FNS(q3_K, HTP_TYPE_Q3_K)
KQ_PACK_FNS(q4_K, HTP_TYPE_Q4_K)
KQ_PACK_FNS(q5_K, HTP_TYPE_Q5_K)
KQ_PACK_FNS(q6_K, HTP_TYPE_Q6_K)
KQ_PACK_FNS(iq4_xs, HTP_TYPE_IQ4_XS)
#undef KQ_PACK_FNS

int htp_kq_type_ok(uint32_t type) {
    return type == HTP_TYPE_Q4_K || type == HTP_TYPE_Q5_K || type == HTP_TYPE_Q6_K || type == HTP_TYPE_Q3_K ||
           type == HTP_TYPE_Q2_K || type == HTP_TYPE_IQ4_XS;
}

size_t htp_kq_q_bytes(uint32_t type) {
    switch (type) {
        case HTP_TYPE_Q2_K:
            return sizeof(struct htp_q2k_q);
        case HTP_TYPE_Q3_K:
            return sizeof(struct htp_q3k_q);
        case HTP_TYPE_Q5_K:
            return sizeof(struct htp_q5k_q);
        case HTP_TYPE_Q6_K:
            return sizeof(struct htp_q6k_q);
        default:  // Q4_K, IQ4_XS
            return sizeof(struct htp_q4k_q);
    }
}

size_t htp_kq_s_bytes(uint32_t type) {
    switch (type) {
        case HTP_TYPE_Q2_K:
            return sizeof(struct htp_q2k_s);
        case HTP_TYPE_Q3_K:
        case HTP_TYPE_Q6_K:
            return sizeof(struct htp_q6k_s);
        case HTP_TYPE_IQ4_XS:
            return sizeof(struct htp_iq4xs_s);
        default:  // Q4_K, Q5_K
            return sizeof(struct htp_kmin_s);
    }
}

size_t htp_kq_block_bytes(uint32_t type) {
    switch (type) {
        case HTP_TYPE_Q2_K:
            return KQ_Q2K_BYTES;
        case HTP_TYPE_Q3_K:
            return KQ_Q3K_BYTES;
        case HTP_TYPE_Q5_K:
            return KQ_Q5K_BYTES;
        case HTP_TYPE_Q6_K:
            return KQ_Q6K_BYTES;
        case HTP_TYPE_IQ4_XS:
            return KQ_IQ4XS_BYTES;
        default:
            return KQ_Q4K_BYTES;
    }
}

void htp_kq_block_decode(uint32_t type, const uint8_t * block, struct htp_kq_superblock * x) {
    switch (type) {
        case HTP_TYPE_Q6_K:
            kq_decode_q6(block, x);
            break;
        case HTP_TYPE_Q3_K:
            kq_decode_q3(block, x);
            break;
        case HTP_TYPE_Q2_K:
            kq_decode_q2(block, x);
            break;
        case HTP_TYPE_IQ4_XS:
            kq_decode_iq4xs(block, x);
            break;
        default:
            kq_decode_kmin(type == HTP_TYPE_Q5_K, block, x);
            break;
    }
}

void htp_kq_tile_decode(uint32_t type, const uint8_t * q, const uint8_t * s, int r, struct htp_kq_superblock * x) {
    switch (type) {
        case HTP_TYPE_Q6_K:
            kq_tile_get_q6(q, s, r, x);
            break;
        case HTP_TYPE_Q3_K:
            kq_tile_get_q3(q, s, r, x);
            break;
        case HTP_TYPE_Q2_K:
            kq_tile_get_q2(q, s, r, x);
            break;
        case HTP_TYPE_IQ4_XS:
            kq_tile_get_iq4xs(q, s, r, x);
            break;
        default:
            kq_tile_get_kmin(type == HTP_TYPE_Q5_K, q, s, r, x);
            break;
    }
}
