// string.c: memory and string functions of the Hexagon runtime. The one idea:
// Hexagon's scalar loads and stores must be naturally aligned (a misaligned
// memw faults), so copies go by the widest word both pointers can share, and
// long ones by 128-byte HVX vectors, whose loads may be unaligned (vmemu)
// while the stores are aligned. Everything else is byte loops: the NPU only
// uses the string functions on short names.
//
// Built -ffreestanding, so the compiler does not turn these loops back into
// calls to themselves. The names are parenthesized because string.h also
// defines them as macros.

#include <string.h>

#include <stdint.h>

typedef uint64_t __attribute__((__may_alias__)) u64_alias;
typedef uint32_t __attribute__((__may_alias__)) u32_alias;

#if defined(__HVX__) && __HVX_LENGTH__ == 128
#define HVX_BYTES 128
typedef int32_t hvx_vec __attribute__((__vector_size__(HVX_BYTES), __aligned__(HVX_BYTES), __may_alias__));
typedef int32_t hvx_uvec __attribute__((__vector_size__(HVX_BYTES), __aligned__(1), __may_alias__));
#endif

// Ascending copy; safe for overlapping ranges when dst < src (every byte is
// read before anything at or above it is written).
static void copy_up(unsigned char * d, const unsigned char * s, size_t n) {
#ifdef HVX_BYTES
    if (n >= 4 * HVX_BYTES) {
        while ((uintptr_t)d & (HVX_BYTES - 1)) {
            *d++ = *s++;
            n--;
        }
        // An unaligned load (vmemu) reads the two aligned vectors around its
        // 128 bytes; keeping a vector's worth of source beyond each load keeps
        // that inside the source, never in a page past its end.
        for (; n >= 2 * HVX_BYTES; n -= HVX_BYTES) {
            *(hvx_vec *)d = *(const hvx_uvec *)s;
            d += HVX_BYTES;
            s += HVX_BYTES;
        }
    }
#endif
    if (n >= 16 && (((uintptr_t)d ^ (uintptr_t)s) & 7) == 0) {
        while ((uintptr_t)d & 7) {
            *d++ = *s++;
            n--;
        }
        for (; n >= 8; n -= 8) {
            *(u64_alias *)d = *(const u64_alias *)s;
            d += 8;
            s += 8;
        }
    } else if (n >= 8 && (((uintptr_t)d ^ (uintptr_t)s) & 3) == 0) {
        while ((uintptr_t)d & 3) {
            *d++ = *s++;
            n--;
        }
        for (; n >= 4; n -= 4) {
            *(u32_alias *)d = *(const u32_alias *)s;
            d += 4;
            s += 4;
        }
    }
    while (n > 0) {
        *d++ = *s++;
        n--;
    }
}

// Descending copy, for dst above an overlapping src.
static void copy_down(unsigned char * d, const unsigned char * s, size_t n) {
    d += n;
    s += n;
    if (n >= 16 && (((uintptr_t)d ^ (uintptr_t)s) & 7) == 0) {
        while ((uintptr_t)d & 7) {
            *--d = *--s;
            n--;
        }
        for (; n >= 8; n -= 8) {
            d -= 8;
            s -= 8;
            *(u64_alias *)d = *(const u64_alias *)s;
        }
    }
    while (n > 0) {
        *--d = *--s;
        n--;
    }
}

void *(memcpy)(void * restrict dst, const void * restrict src, size_t n) {
    copy_up(dst, src, n);
    return dst;
}

void *(memmove)(void * dst, const void * src, size_t n) {
    unsigned char *       d = dst;
    const unsigned char * s = src;
    if (d == s || n == 0) {
        return dst;
    }
    if ((uintptr_t)d < (uintptr_t)s || (uintptr_t)d - (uintptr_t)s >= n) {
        copy_up(d, s, n);
    } else {
        copy_down(d, s, n);
    }
    return dst;
}

void *(memset)(void * dst, int c, size_t n) {
    unsigned char * d = dst;
    unsigned char   b = (unsigned char)c;
#ifdef HVX_BYTES
    if (n >= 4 * HVX_BYTES) {
        while ((uintptr_t)d & (HVX_BYTES - 1)) {
            *d++ = b;
            n--;
        }
        hvx_vec v;
        for (int i = 0; i < HVX_BYTES / 4; i++) {
            v[i] = (int32_t)(b * 0x01010101u);
        }
        for (; n >= HVX_BYTES; n -= HVX_BYTES) {
            *(hvx_vec *)d = v;
            d += HVX_BYTES;
        }
    }
#endif
    if (n >= 16) {
        while ((uintptr_t)d & 7) {
            *d++ = b;
            n--;
        }
        uint64_t w = b * 0x0101010101010101ull;
        for (; n >= 8; n -= 8) {
            *(u64_alias *)d = w;
            d += 8;
        }
    }
    while (n > 0) {
        *d++ = b;
        n--;
    }
    return dst;
}

int(memcmp)(const void * a, const void * b, size_t n) {
    const unsigned char * p = a;
    const unsigned char * q = b;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != q[i]) {
            return p[i] < q[i] ? -1 : 1;
        }
    }
    return 0;
}

size_t(strlen)(const char * s) {
    const char * p = s;
    while (*p != '\0') {
        p++;
    }
    return (size_t)(p - s);
}

int strcmp(const char * a, const char * b) {
    const unsigned char * p = (const unsigned char *)a;
    const unsigned char * q = (const unsigned char *)b;
    while (*p != '\0' && *p == *q) {
        p++;
        q++;
    }
    return *p == *q ? 0 : (*p < *q ? -1 : 1);
}

int strncmp(const char * a, const char * b, size_t n) {
    const unsigned char * p = (const unsigned char *)a;
    const unsigned char * q = (const unsigned char *)b;
    for (; n > 0; n--, p++, q++) {
        if (*p != *q) {
            return *p < *q ? -1 : 1;
        }
        if (*p == '\0') {
            return 0;
        }
    }
    return 0;
}

char * strcpy(char * restrict dst, const char * restrict src) {
    char * d = dst;
    while ((*d++ = *src++) != '\0') {
    }
    return dst;
}

char * strchr(const char * s, int c) {
    const char ch = (char)c;
    for (;; s++) {
        if (*s == ch) {
            return (char *)s;
        }
        if (*s == '\0') {
            return NULL;
        }
    }
}

char * strrchr(const char * s, int c) {
    const char   ch   = (char)c;
    const char * last = NULL;
    for (;; s++) {
        if (*s == ch) {
            last = s;
        }
        if (*s == '\0') {
            return (char *)last;
        }
    }
}
