// vmem.c: the session VA window: first-fit range allocator over an
// address-ordered free list, plus the mmap calls that place a memfd in it with
// its guard page left PROT_NONE. See vmem.h for why.

#include "vmem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define PAGE ((uint64_t)HTP_PAGE_SIZE)

// Anonymous, inaccessible, not backed by swap: address space only.
static void * reserve(void * addr, uint64_t len, int fixed) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (fixed ? MAP_FIXED : 0);
    return mmap(addr, (size_t)len, PROT_NONE, flags, -1, 0);
}

int htp_vmem_init(struct htp_vmem * vm, uint64_t size) {
    memset(vm, 0, sizeof(*vm));
    if (size == 0 || size > UINT64_MAX - PAGE || size > (uint64_t)SIZE_MAX - PAGE) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    size = (size + PAGE - 1) & ~(PAGE - 1);

    vm->free = malloc(16 * sizeof(*vm->free));
    if (vm->free == NULL) {
        return HTP_STATUS_NO_MEMORY;
    }
    vm->cap_free = 16;

    void * p = reserve(NULL, size, 0);
    if (p == MAP_FAILED) {
        free(vm->free);
        memset(vm, 0, sizeof(*vm));
        return HTP_STATUS_NO_MEMORY;
    }
    vm->base    = p;
    vm->size    = size;
    vm->free[0] = (struct htp_vmem_range){0, size};
    vm->n_free  = 1;
    return HTP_STATUS_OK;
}

void htp_vmem_free(struct htp_vmem * vm) {
    if (vm->base != NULL) {
        munmap(vm->base, (size_t)vm->size);
    }
    free(vm->free);
    memset(vm, 0, sizeof(*vm));
}

static int valid_len(uint64_t len) {
    return len > 0 && (len % PAGE) == 0;
}

int htp_vmem_alloc(struct htp_vmem * vm, uint64_t len, uint64_t * off) {
    if (!valid_len(len)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    for (uint32_t i = 0; i < vm->n_free; i++) {
        struct htp_vmem_range * r = &vm->free[i];
        if (r->len < len) {
            continue;
        }
        *off = r->off;
        r->off += len;
        r->len -= len;
        if (r->len == 0) {
            memmove(r, r + 1, (size_t)(vm->n_free - i - 1) * sizeof(*r));
            vm->n_free--;
        }
        vm->used += len;
        vm->n_maps++;
        return HTP_STATUS_OK;
    }
    return HTP_STATUS_NO_MEMORY;
}

int htp_vmem_release(struct htp_vmem * vm, uint64_t off, uint64_t len) {
    if (!valid_len(len) || (off % PAGE) != 0 || off > vm->size || len > vm->size - off || len > vm->used ||
        vm->n_maps == 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // i = first free range starting after off.
    uint32_t lo = 0, hi = vm->n_free;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (vm->free[mid].off <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    uint32_t                i    = lo;
    struct htp_vmem_range * prev = i > 0 ? &vm->free[i - 1] : NULL;
    struct htp_vmem_range * next = i < vm->n_free ? &vm->free[i] : NULL;
    // Overlap with a free range means the caller releases what is not allocated.
    if ((prev && prev->off + prev->len > off) || (next && off + len > next->off)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    int join_prev = prev && prev->off + prev->len == off;
    int join_next = next && off + len == next->off;
    if (join_prev && join_next) {
        prev->len += len + next->len;
        memmove(next, next + 1, (size_t)(vm->n_free - i - 1) * sizeof(*next));
        vm->n_free--;
    } else if (join_prev) {
        prev->len += len;
    } else if (join_next) {
        next->off = off;
        next->len += len;
    } else {
        if (vm->n_free == vm->cap_free) {
            uint32_t                cap = vm->cap_free * 2;
            struct htp_vmem_range * f   = realloc(vm->free, cap * sizeof(*f));
            if (f == NULL) {
                return HTP_STATUS_NO_MEMORY;
            }
            vm->free     = f;
            vm->cap_free = cap;
        }
        memmove(&vm->free[i + 1], &vm->free[i], (size_t)(vm->n_free - i) * sizeof(*vm->free));
        vm->free[i] = (struct htp_vmem_range){off, len};
        vm->n_free++;
    }
    vm->used -= len;
    vm->n_maps--;
    return HTP_STATUS_OK;
}

// mmap the memfd over [p, p + size - PAGE); the guard page stays as it is
// (PROT_NONE reserved).
static int map_fd_at(uint8_t * p, int fd, uint64_t size, uint32_t flags) {
    if (size == PAGE) {
        return HTP_STATUS_OK;  // a buffer of guard page only: nothing accessible
    }
    // Eager: fault every page in now (FastRPC's non-delayed map), so a mapping
    // that would fail later fails here, where the host can still react.
    int    populate = (flags & HTP_BUF_EAGER) ? MAP_POPULATE : 0;
    void * q        = mmap(p, (size_t)(size - PAGE), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | populate, fd, 0);
    return q == MAP_FAILED ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}

int htp_vmem_map(struct htp_vmem * vm, int fd, uint64_t size, uint32_t flags, uint8_t ** addr) {
    if (!valid_len(size) || size > (uint64_t)SIZE_MAX) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Mapping past the end of the file would "work" and then SIGBUS on access.
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size < size) {
        return HTP_STATUS_INVAL_PARAMS;
    }

    if (flags & HTP_BUF_EXTENDED) {
        void * p = reserve(NULL, size, 0);
        if (p == MAP_FAILED) {
            return HTP_STATUS_NO_MEMORY;
        }
        int rc = map_fd_at(p, fd, size, flags);
        if (rc != HTP_STATUS_OK) {
            munmap(p, (size_t)size);
            return rc;
        }
        vm->n_extended++;
        *addr = p;
        return HTP_STATUS_OK;
    }

    uint64_t off;
    int      rc = htp_vmem_alloc(vm, size, &off);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    rc = map_fd_at(vm->base + off, fd, size, flags);
    if (rc != HTP_STATUS_OK) {
        // A failed MAP_FIXED may have unmapped the range: reserve it again.
        reserve(vm->base + off, size, 1);
        htp_vmem_release(vm, off, size);
        return rc;
    }
    *addr = vm->base + off;
    return HTP_STATUS_OK;
}

int htp_vmem_unmap(struct htp_vmem * vm, uint8_t * addr, uint64_t size, uint32_t flags) {
    if (!valid_len(size)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (flags & HTP_BUF_EXTENDED) {
        if (vm->n_extended == 0) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        munmap(addr, (size_t)size);
        vm->n_extended--;
        return HTP_STATUS_OK;
    }
    if (addr < vm->base || (uint64_t)(addr - vm->base) > vm->size) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    uint64_t off = (uint64_t)(addr - vm->base);
    if (size > vm->size - off) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Replace the shared mapping by a fresh PROT_NONE reservation in one call,
    // so the range never becomes free address space another mmap could take.
    if (reserve(addr, size, 1) == MAP_FAILED) {
        return HTP_STATUS_NO_MEMORY;
    }
    return htp_vmem_release(vm, off, size);
}

void htp_vmem_get_info(const struct htp_vmem * vm, struct htp_vmem_info * info) {
    memset(info, 0, sizeof(*info));
    info->size       = vm->size;
    info->used       = vm->used;
    info->n_maps     = vm->n_maps;
    info->n_extended = vm->n_extended;
    for (uint32_t i = 0; i < vm->n_free; i++) {
        const struct htp_vmem_range * r = &vm->free[i];
        if (r->len > info->largest_free) {
            info->largest_free = r->len;
        }
        if (r->off + r->len != vm->size) {
            info->n_holes++;
        }
    }
}
