// vmem.h: a session's VA window: one large range of address space reserved
// PROT_NONE at session open, into which the host's buffers are mapped.
//
// Why a window instead of letting mmap pick addresses: the DSP maps buffers into
// a bounded IOVA space, so mapping order fragments it and a large enough buffer
// may stop fitting. The host's mapping policy (largest first, one retry, a vmem
// budget per batch) is written against that behaviour; the window reproduces it.
//
// Placement is FIRST-FIT over an address-ordered list of free ranges, at
// HTP_PAGE_SIZE granularity. First-fit rather than best-fit: the host maps each
// batch's buffers largest first, so first-fit packs them from the bottom and
// keeps the tail of the window as one large free range for the next big buffer;
// it is also what makes placement predictable, which the tests rely on. Freed
// ranges are coalesced with their neighbours at once.
//
// Every mapping keeps its last page (the host's guard page) PROT_NONE, so a
// kernel that runs past the end of a buffer faults instead of reading or
// corrupting the next buffer in the window. Where the platform's pages are
// larger than the host's 4 KiB (64 KiB under qemu-hexagon), buffers are placed
// at that granularity: the accessible part is rounded up to a whole page and
// one whole unmapped page follows it as the guard; an overrun of less than
// that rounding then reads zeros instead of faulting.
//
// Extended buffers (HTP_BUF_EXTENDED: DMA64 weights) are mapped outside the
// window, wherever mmap puts them, with the same guard page; they are only
// counted.
//
// Not thread safe: the session serialises calls.

#ifndef HTP_VMEM_H
#define HTP_VMEM_H

#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_vmem_range {
    uint64_t off;  // from the window base
    uint64_t len;  // bytes, > 0, multiple of HTP_PAGE_SIZE
};

struct htp_vmem {
    uint8_t *               base;  // window start (page aligned), reserved PROT_NONE
    uint64_t                size;  // window bytes, multiple of page
    uint64_t                page;  // placement granularity: the platform's page (>= HTP_PAGE_SIZE)
    struct htp_vmem_range * free;  // free ranges, sorted by off, never adjacent (coalesced)
    uint32_t                n_free;
    uint32_t                cap_free;
    uint64_t                used;        // bytes allocated in the window
    uint32_t                n_maps;      // allocations in the window
    uint32_t                n_extended;  // mappings outside it
};

// Reserve a window of size bytes (rounded up to a page). Returns HTP_STATUS_OK,
// HTP_STATUS_INVAL_PARAMS (size 0) or HTP_STATUS_NO_MEMORY.
int htp_vmem_init(struct htp_vmem * vm, uint64_t size);

// Release the window and everything mapped in it. Extended mappings are the
// caller's to unmap (htp_vmem_unmap) before; vm is zeroed.
void htp_vmem_free(struct htp_vmem * vm);

// Range allocator alone (no mmap): first-fit len bytes (a positive multiple of
// HTP_PAGE_SIZE) -> *off. HTP_STATUS_NO_MEMORY when no free range is large
// enough, HTP_STATUS_INVAL_PARAMS for a bad len.
int htp_vmem_alloc(struct htp_vmem * vm, uint64_t len, uint64_t * off);

// Give [off, off+len) back, coalescing. HTP_STATUS_INVAL_PARAMS if the range is
// outside the window or overlaps a free range (a double free).
int htp_vmem_release(struct htp_vmem * vm, uint64_t off, uint64_t len);

// Map size bytes of memfd fd (size: a multiple of HTP_PAGE_SIZE, at least one
// page, the last page being the guard page). In the window unless flags has
// HTP_BUF_EXTENDED. The fd is not kept: the caller may close it afterwards.
// Returns HTP_STATUS_OK with *addr set, HTP_STATUS_INVAL_PARAMS (bad size, fd
// not mappable or smaller than size) or HTP_STATUS_NO_MEMORY (does not fit).
int htp_vmem_map(struct htp_vmem * vm, int fd, uint64_t size, uint32_t flags, uint8_t ** addr);

// Undo htp_vmem_map(…, size, flags, &addr): the window range is reserved
// PROT_NONE again and returned to the free list.
int htp_vmem_unmap(struct htp_vmem * vm, uint8_t * addr, uint64_t size, uint32_t flags);

// Window state: size, used, largest free range, holes (free ranges that are not
// the tail of the window), mappings in and outside the window.
void htp_vmem_get_info(const struct htp_vmem * vm, struct htp_vmem_info * info);

#endif  // HTP_VMEM_H
