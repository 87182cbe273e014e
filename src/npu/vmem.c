// vmem.c: the session VA window: first-fit range allocator over an
// address-ordered free list, plus the platform calls that place a received
// buffer in it with its guard page left inaccessible. See vmem.h for why.

#include "vmem.h"

#include <stdlib.h>
#include <string.h>

#include "contract/window.h"
#include "fault.h"
#include "platform/platform.h"

#define PAGE ((uint64_t)HTP_PAGE_SIZE)

// The window bytes a buffer takes and the bytes of it mapped, by the rule the
// host budgets with (contract/window.h).
static uint64_t mapped_len(const struct htp_vmem * vm, uint64_t size) {
    return htp_window_mapped_bytes(size, vm->page);
}

static uint64_t range_len(const struct htp_vmem * vm, uint64_t size) {
    return htp_window_bytes(size, vm->page);
}

int htp_vmem_init(struct htp_vmem * vm, uint64_t size) {
    memset(vm, 0, sizeof(*vm));
    if (size == 0 || size > UINT64_MAX - PAGE || size > (uint64_t)SIZE_MAX - PAGE) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    vm->page = htp_plat_page_size();
    if (vm->page % PAGE != 0 || size > UINT64_MAX - vm->page) {
        memset(vm, 0, sizeof(*vm));
        return HTP_STATUS_INVAL_PARAMS;
    }
    size = (size + vm->page - 1) / vm->page * vm->page;

    vm->free = malloc(16 * sizeof(*vm->free));
    if (vm->free == NULL) {
        return HTP_STATUS_NO_MEMORY;
    }
    vm->cap_free = 16;

    void * p = htp_plat_reserve(size);
    if (p == NULL) {
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
        htp_plat_release(vm->base, vm->size);
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

// Map the buffer over [p, p + mapped_len); the guard page after it stays as
// it is (reserved, inaccessible).
static int map_fd_at(const struct htp_vmem * vm, uint8_t * p, int fd, uint64_t size, uint32_t flags) {
    const uint64_t len = mapped_len(vm, size);
    if (len == 0) {
        return HTP_STATUS_OK;  // a buffer of guard page only: nothing accessible
    }
    if (htp_npu_fault(HTP_FAULT_NPU_MAP)) {
        return HTP_STATUS_NO_MEMORY;
    }
    return htp_plat_map_buffer(p, len, fd, (flags & HTP_BUF_EAGER) != 0) == 0 ? HTP_STATUS_OK : HTP_STATUS_NO_MEMORY;
}

int htp_vmem_map(struct htp_vmem * vm, int fd, uint64_t size, uint32_t flags, uint8_t ** addr) {
    if (!valid_len(size) || size > (uint64_t)SIZE_MAX) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Mapping past the end of the buffer would "work" and then fault on access.
    const int64_t have = htp_plat_buffer_size(fd);
    if (have < 0 || (uint64_t)have < size) {
        return HTP_STATUS_INVAL_PARAMS;
    }

    const uint64_t len = range_len(vm, size);
    if (flags & HTP_BUF_EXTENDED) {
        uint8_t * p = htp_plat_reserve(len);
        if (p == NULL) {
            return HTP_STATUS_NO_MEMORY;
        }
        int rc = map_fd_at(vm, p, fd, size, flags);
        if (rc != HTP_STATUS_OK) {
            htp_plat_release(p, len);
            return rc;
        }
        vm->n_extended++;
        *addr = p;
        return HTP_STATUS_OK;
    }

    uint64_t off;
    int      rc = htp_vmem_alloc(vm, len, &off);
    if (rc != HTP_STATUS_OK) {
        return rc;
    }
    rc = map_fd_at(vm, vm->base + off, fd, size, flags);
    if (rc != HTP_STATUS_OK) {
        // A failed fixed mapping may have unmapped the range: reserve it again.
        htp_plat_reserve_at(vm->base + off, len);
        htp_vmem_release(vm, off, len);
        return rc;
    }
    *addr = vm->base + off;
    return HTP_STATUS_OK;
}

int htp_vmem_unmap(struct htp_vmem * vm, uint8_t * addr, uint64_t size, uint32_t flags) {
    if (!valid_len(size)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const uint64_t len = range_len(vm, size);
    if (flags & HTP_BUF_EXTENDED) {
        if (vm->n_extended == 0) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        htp_plat_release(addr, len);
        vm->n_extended--;
        return HTP_STATUS_OK;
    }
    if (addr < vm->base || (uint64_t)(addr - vm->base) > vm->size) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    uint64_t off = (uint64_t)(addr - vm->base);
    if (len > vm->size - off) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Replace the shared mapping by a fresh reservation in one call, so the
    // range never becomes free address space another mapping could take.
    if (htp_plat_reserve_at(addr, len) != 0) {
        return HTP_STATUS_NO_MEMORY;
    }
    return htp_vmem_release(vm, off, len);
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
