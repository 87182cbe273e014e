// malloc.c: the Hexagon runtime's heap, over anonymous mmap2. The one idea:
// small blocks come in size classes (four per power of two, so at most 25%
// is lost to rounding) carved from 1 MiB arenas and recycled through one free
// list per class; blocks larger than the largest class get a mapping of
// their own and go back to the kernel on free. One futex mutex guards it all:
// the NPU allocates at session and batch set-up, not per element, so a
// single lock costs nothing that matters and keeps the code obviously right.
//
// Every block has a 16-byte header in front of it (its class, or for a large
// block its mapping's size, and a check word that catches frees of pointers
// this heap did not hand out); user pointers are 16-byte aligned. Small
// blocks are never returned to the kernel, only reused.

#include <stdlib.h>

#include <stdint.h>
#include <string.h>

#include "futex.h"
#include "start.h"
#include "syscall.h"

#define PROT_READ     1
#define PROT_WRITE    2
#define MAP_PRIVATE   0x02
#define MAP_ANONYMOUS 0x20

#define HEADER      16u
#define ARENA_BYTES (1u << 20)
#define CHECK_SMALL 0x5afe0001u
#define CHECK_LARGE 0x5afe0002u
#define CHECK_FREED 0xdeadfee5u

struct header {
    uint32_t check;  // CHECK_SMALL, CHECK_LARGE, or CHECK_FREED once freed
    uint32_t klass;  // size class of a small block
    uint32_t size;   // block bytes (header included): the class size or the mapping size
    uint32_t unused;
};

struct free_block {
    struct free_block * next;
};

// Classes 0..6: 32, 48, ..., 128 bytes (steps of 16); then four per power of
// two: 160, 192, 224, 256, 320, ... up to 64 KiB.
#define N_CLASSES 43
#define MAX_SMALL (64u << 10)

static uint32_t class_size(unsigned k) {
    if (k < 7) {
        return 32u + 16u * k;
    }
    unsigned j    = k - 7;  // 0: 160
    uint32_t base = 128u << (j / 4);
    return base + (base / 4) * (j % 4 + 1);
}

static unsigned class_of(uint32_t block) {
    if (block <= 128) {
        return block <= 32 ? 0 : (block - 32 + 15) / 16;
    }
    // The power of two at or below block - 1, then which quarter above it.
    unsigned top  = 31u - (unsigned)__builtin_clz(block - 1);  // 2^top < block <= 2^(top+1)
    uint32_t base = 1u << top;
    uint32_t q    = (block - base + base / 4 - 1) / (base / 4);  // 1..4
    return 7 + (top - 7) * 4 + (q - 1);
}

static struct htp_rt_mutex heap_lock;
static struct free_block * free_lists[N_CLASSES];
static uint8_t *           arena_next;
static size_t              arena_left;

static void * map_anon(size_t size) {
    long m = htp_sys_call6(HTP_NR_MMAP2, 0, (long)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return HTP_SYS_FAILED(m) ? NULL : (void *)m;
}

_Noreturn static void heap_corrupt(const char * what) {
    static const char prefix[] = "htp-npu: heap: ";
    htp_sys_call3(HTP_NR_WRITE, 2, (long)prefix, sizeof(prefix) - 1);
    htp_sys_call3(HTP_NR_WRITE, 2, (long)what, (long)strlen(what));
    htp_sys_call3(HTP_NR_WRITE, 2, (long)"\n", 1);
    abort();
}

static struct header * header_of(void * p) {
    struct header * h = (struct header *)((uint8_t *)p - HEADER);
    if (h->check == CHECK_FREED) {
        heap_corrupt("block freed twice");
    }
    if (h->check != CHECK_SMALL && h->check != CHECK_LARGE) {
        heap_corrupt("free or realloc of a pointer malloc did not return");
    }
    return h;
}

// Bytes the caller may use in the block at p.
static size_t usable(const struct header * h) {
    return h->size - HEADER;
}

static void * alloc_large(size_t n) {
    size_t page = htp_rt_start_page_size();
    if (n > SIZE_MAX - HEADER - page) {
        return NULL;
    }
    size_t          size = (n + HEADER + page - 1) & ~(page - 1);
    struct header * h    = map_anon(size);
    if (h == NULL) {
        return NULL;
    }
    h->check = CHECK_LARGE;
    h->klass = 0;
    h->size  = (uint32_t)size;
    return (uint8_t *)h + HEADER;
}

static void * alloc_small(unsigned k) {
    uint32_t        size = class_size(k);
    struct header * h;
    htp_rt_mutex_lock(&heap_lock);
    struct free_block * f = free_lists[k];
    if (f != NULL) {
        free_lists[k] = f->next;
        h             = (struct header *)((uint8_t *)f - HEADER);
    } else {
        if (arena_left < size) {
            // The old arena's tail (smaller than this class) is left unused.
            uint8_t * a = map_anon(ARENA_BYTES);
            if (a == NULL) {
                htp_rt_mutex_unlock(&heap_lock);
                return NULL;
            }
            arena_next = a;
            arena_left = ARENA_BYTES;
        }
        h = (struct header *)arena_next;
        arena_next += size;
        arena_left -= size;
    }
    htp_rt_mutex_unlock(&heap_lock);
    h->check = CHECK_SMALL;
    h->klass = k;
    h->size  = size;
    return (uint8_t *)h + HEADER;
}

void * malloc(size_t n) {
    if (n > MAX_SMALL - HEADER) {
        return alloc_large(n);
    }
    return alloc_small(class_of((uint32_t)n + HEADER));
}

void free(void * p) {
    if (p == NULL) {
        return;
    }
    struct header * h = header_of(p);
    if (h->check == CHECK_LARGE) {
        h->check = CHECK_FREED;
        htp_sys_call2(HTP_NR_MUNMAP, (long)h, (long)h->size);
        return;
    }
    unsigned k = h->klass;
    if (k >= N_CLASSES || h->size != class_size(k)) {
        heap_corrupt("block header overwritten");
    }
    h->check = CHECK_FREED;
    htp_rt_mutex_lock(&heap_lock);
    struct free_block * f = p;
    f->next               = free_lists[k];
    free_lists[k]         = f;
    htp_rt_mutex_unlock(&heap_lock);
}

void * calloc(size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        return NULL;
    }
    void * p = malloc(total);
    if (p != NULL && total <= MAX_SMALL - HEADER) {
        memset(p, 0, total);  // a recycled small block holds old data; a fresh mapping is zero
    }
    return p;
}

void * realloc(void * p, size_t n) {
    if (p == NULL) {
        return malloc(n);
    }
    if (n == 0) {
        free(p);
        return NULL;
    }
    struct header * h   = header_of(p);
    size_t          cap = usable(h);
    if (n <= cap) {
        return p;
    }
    void * q = malloc(n);
    if (q == NULL) {
        return NULL;  // p is left as it was
    }
    memcpy(q, p, cap);
    free(p);
    return q;
}
