// fuzz-input.h: the fuzz targets' reader of their input, little-endian
// fields taken from the front. Past the end every read is 0, so any input,
// however short, decodes to something.

#ifndef HTP_FUZZ_INPUT_H
#define HTP_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct rd {
    const uint8_t * p;
    size_t          n;  // bytes left
};

static inline uint8_t u8(struct rd * r) {
    if (r->n == 0) {
        return 0;
    }
    r->n--;
    return *r->p++;
}

static inline uint16_t u16(struct rd * r) {
    uint16_t lo = u8(r);
    return (uint16_t)(lo | (uint16_t)u8(r) << 8);
}

static inline uint32_t u32(struct rd * r) {
    uint32_t lo = u16(r);
    return lo | (uint32_t)u16(r) << 16;
}

static inline uint64_t u64(struct rd * r) {
    uint64_t lo = u32(r);
    return lo | (uint64_t)u32(r) << 32;
}

#endif  // HTP_FUZZ_INPUT_H
