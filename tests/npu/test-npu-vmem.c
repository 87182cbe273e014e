// test-npu-vmem: the NPU's VA window allocator (src/npu/vmem.c). Random
// map/unmap sequences are checked step by step against a page-bitmap model
// doing the same first-fit placement: same addresses, exact used bytes,
// largest free range, hole and map counts, out-of-space answered; then real
// memfd mappings: data visible through the window, guard page and unmapped
// ranges PROT_NONE (a child touching them dies of SIGSEGV).

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npu/vmem.h"
#include "test-check.h"

#define PAGE HTP_PAGE_SIZE

// --- model: one byte per page, first fit ---

struct model {
    uint32_t  n_pages;
    uint8_t * used;
};

static int64_t model_alloc(struct model * m, uint32_t pages) {
    uint32_t run = 0;
    for (uint32_t i = 0; i < m->n_pages; i++) {
        run = m->used[i] ? 0 : run + 1;
        if (run == pages) {
            uint32_t first = i + 1 - pages;
            memset(m->used + first, 1, pages);
            return (int64_t)first;
        }
    }
    return -1;
}

static void model_info(const struct model * m, struct htp_vmem_info * info) {
    memset(info, 0, sizeof(*info));
    info->size   = (uint64_t)m->n_pages * PAGE;
    uint64_t run = 0;
    for (uint32_t i = 0; i <= m->n_pages; i++) {
        if (i < m->n_pages && !m->used[i]) {
            run++;
            continue;
        }
        if (run) {
            if (run * PAGE > info->largest_free) {
                info->largest_free = run * PAGE;
            }
            if (i < m->n_pages) {
                info->n_holes++;  // a free run followed by a used page
            }
        }
        if (i < m->n_pages) {
            info->used += PAGE;
        }
        run = 0;
    }
}

static int compare_info(const struct htp_vmem * vm, const struct model * m, uint32_t n_maps, int step) {
    struct htp_vmem_info a, b;
    htp_vmem_get_info(vm, &a);
    model_info(m, &b);
    CHECK_OR_RETURN(
        1,
        a.size == b.size && a.used == b.used && a.largest_free == b.largest_free && a.n_holes == b.n_holes &&
            a.n_maps == n_maps,
        "step %d: got used %llu largest %llu holes %u maps %u; want used %llu largest %llu holes %u maps %u", step,
        (unsigned long long)a.used, (unsigned long long)a.largest_free, a.n_holes, a.n_maps, (unsigned long long)b.used,
        (unsigned long long)b.largest_free, b.n_holes, n_maps);
    return 0;
}

struct live {
    uint64_t  off;
    uint32_t  pages;
    uint8_t * addr;  // real mappings only
};

// Random sequence over a window of n_pages; real = through htp_vmem_map with memfd fd.
static int random_sequence(uint32_t n_pages, int steps, int real, int fd, unsigned seed) {
    struct htp_vmem vm;
    CHECK_OR_RETURN(1, htp_vmem_init(&vm, (uint64_t)n_pages * PAGE) == HTP_STATUS_OK, "init");
    struct model  m      = {n_pages, calloc(n_pages, 1)};
    struct live * live   = calloc(n_pages, sizeof(*live));
    uint32_t      n_live = 0;
    srand(seed);
    int n_nomem = 0;

    for (int step = 0; step < steps; step++) {
        int do_map = n_live == 0 || (rand() % 100) < 55;
        if (do_map) {
            // Mostly small, sometimes large, sometimes bigger than anything free.
            uint32_t  pages = (rand() % 10) == 0 ? 1 + (uint32_t)rand() % (n_pages / 2) : 1 + (uint32_t)rand() % 8;
            int64_t   want  = model_alloc(&m, pages);
            uint64_t  off   = 0;
            uint8_t * addr  = NULL;
            int       rc;
            if (real) {
                rc  = htp_vmem_map(&vm, fd, (uint64_t)pages * PAGE, 0, &addr);
                off = addr ? (uint64_t)(addr - vm.base) : 0;
            } else {
                rc = htp_vmem_alloc(&vm, (uint64_t)pages * PAGE, &off);
            }
            if (want < 0) {
                CHECK_OR_RETURN(1, rc == HTP_STATUS_NO_MEMORY, "step %d: %u pages should not fit, rc %d", step, pages,
                                rc);
                n_nomem++;
            } else {
                CHECK_OR_RETURN(1, rc == HTP_STATUS_OK, "step %d: %u pages should fit at page %lld, rc %d", step, pages,
                                (long long)want, rc);
                CHECK_OR_RETURN(1, off == (uint64_t)want * PAGE, "step %d: placed at %llu, first fit is %llu", step,
                                (unsigned long long)off, (unsigned long long)want * PAGE);
                live[n_live++] = (struct live){off, pages, addr};
            }
        } else {
            uint32_t    k = (uint32_t)rand() % n_live;
            struct live l = live[k];
            live[k]       = live[--n_live];
            memset(m.used + l.off / PAGE, 0, l.pages);
            int rc = real ? htp_vmem_unmap(&vm, l.addr, (uint64_t)l.pages * PAGE, 0)
                          : htp_vmem_release(&vm, l.off, (uint64_t)l.pages * PAGE);
            CHECK_OR_RETURN(1, rc == HTP_STATUS_OK, "step %d: release rc %d", step, rc);
            if (!real && (step % 7) == 0) {
                // Releasing it again is a double free: refused, nothing changes.
                CHECK_OR_RETURN(1, htp_vmem_release(&vm, l.off, (uint64_t)l.pages * PAGE) == HTP_STATUS_INVAL_PARAMS,
                                "step %d: double release accepted", step);
            }
        }
        if (compare_info(&vm, &m, n_live, step)) {
            return 1;
        }
    }
    CHECK_OR_RETURN(1, n_nomem > 0, "sequence never ran out of space (test too weak)");
    printf("  %s sequence: %d steps over %u pages, %d out-of-space answers: ok\n", real ? "mmap" : "range", steps,
           n_pages, n_nomem);
    htp_vmem_free(&vm);
    free(m.used);
    free(live);
    return 0;
}

// Does touching p kill a child with SIGSEGV?
static int faults(volatile uint8_t * p) {
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        (void)*p;
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static int real_mappings(void) {
    int fd = memfd_create("vmem-test", MFD_CLOEXEC);
    CHECK_OR_RETURN(1, fd >= 0, "memfd");
    CHECK_OR_RETURN(1, ftruncate(fd, 8 * PAGE) == 0, "ftruncate");
    uint8_t * host = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK_OR_RETURN(1, host != MAP_FAILED, "host mmap");
    for (int i = 0; i < 7 * PAGE; i++) {
        host[i] = (uint8_t)(i * 7 + 3);
    }

    struct htp_vmem vm;
    CHECK_OR_RETURN(1, htp_vmem_init(&vm, 20 * PAGE) == HTP_STATUS_OK, "init");
    uint8_t *a = NULL, *b = NULL, *c = NULL, *x = NULL;
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, fd, 8 * PAGE, 0, &a) == HTP_STATUS_OK && a == vm.base, "map a");
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, fd, 4 * PAGE, 0, &b) == HTP_STATUS_OK && b == vm.base + 8 * PAGE, "map b");
    for (int i = 0; i < 7 * PAGE; i++) {
        CHECK_OR_RETURN(1, a[i] == (uint8_t)(i * 7 + 3), "byte %d through the window", i);
    }
    a[5] = 0xab;
    CHECK_OR_RETURN(1, host[5] == 0xab, "write through the window reaches the memfd");
    CHECK_OR_RETURN(1, !faults(a + 7 * PAGE - 1), "last usable byte must not fault");
    CHECK_OR_RETURN(1, faults(a + 7 * PAGE), "guard page of a must fault");
    CHECK_OR_RETURN(1, faults(b + 3 * PAGE + 100), "guard page of b must fault");
    CHECK_OR_RETURN(1, faults(vm.base + 12 * PAGE), "free window must fault");

    // 9 pages do not fit (8 left), a file smaller than the request is refused,
    // sizes must be whole pages.
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, fd, 9 * PAGE, 0, &c) == HTP_STATUS_INVAL_PARAMS, "map larger than the file");
    int big = memfd_create("vmem-big", MFD_CLOEXEC);
    CHECK_OR_RETURN(1, big >= 0 && ftruncate(big, 16 * PAGE) == 0, "big memfd");
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, big, 9 * PAGE, 0, &c) == HTP_STATUS_NO_MEMORY, "map that does not fit");
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, fd, PAGE + 1, 0, &c) == HTP_STATUS_INVAL_PARAMS, "unaligned size");
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, fd, 0, 0, &c) == HTP_STATUS_INVAL_PARAMS, "zero size");
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, -1, PAGE * 2, 0, &c) == HTP_STATUS_INVAL_PARAMS, "bad fd");

    // Extended: outside the window, counted separately, guard page too.
    CHECK_OR_RETURN(1, htp_vmem_map(&vm, big, 16 * PAGE, HTP_BUF_EXTENDED, &x) == HTP_STATUS_OK, "extended map");
    CHECK_OR_RETURN(1, x < vm.base || x >= vm.base + vm.size, "extended map lies outside the window");
    CHECK_OR_RETURN(1, faults(x + 15 * PAGE), "guard page of the extended map must fault");
    struct htp_vmem_info info;
    htp_vmem_get_info(&vm, &info);
    CHECK_OR_RETURN(1,
                    info.used == 12 * PAGE && info.n_maps == 2 && info.n_extended == 1 &&
                        info.largest_free == 8 * PAGE && info.n_holes == 0,
                    "info after maps: used %llu maps %u ext %u", (unsigned long long)info.used, info.n_maps,
                    info.n_extended);

    // Unmap a: a hole of 8 pages at the bottom; the range faults again.
    CHECK_OR_RETURN(1, htp_vmem_unmap(&vm, a, 8 * PAGE, 0) == HTP_STATUS_OK, "unmap a");
    CHECK_OR_RETURN(1, faults(a), "unmapped range must fault");
    htp_vmem_get_info(&vm, &info);
    CHECK_OR_RETURN(1, info.used == 4 * PAGE && info.n_maps == 1 && info.n_holes == 1 && info.largest_free == 8 * PAGE,
                    "info after unmap: used %llu holes %u", (unsigned long long)info.used, info.n_holes);
    CHECK_OR_RETURN(1, htp_vmem_unmap(&vm, x, 16 * PAGE, HTP_BUF_EXTENDED) == HTP_STATUS_OK, "unmap extended");
    CHECK_OR_RETURN(1, htp_vmem_unmap(&vm, b, 4 * PAGE, 0) == HTP_STATUS_OK, "unmap b");
    htp_vmem_get_info(&vm, &info);
    CHECK_OR_RETURN(1,
                    info.used == 0 && info.n_maps == 0 && info.n_extended == 0 && info.n_holes == 0 &&
                        info.largest_free == 20 * PAGE,
                    "window empty again");
    CHECK_OR_RETURN(1, htp_vmem_unmap(&vm, b, 4 * PAGE, 0) == HTP_STATUS_INVAL_PARAMS, "double unmap refused");

    htp_vmem_free(&vm);
    munmap(host, 8 * PAGE);
    close(fd);
    close(big);
    printf("  memfd mappings, guard pages, extended maps, refusals: ok\n");
    return 0;
}

int main(void) {
    printf("test-npu-vmem: first-fit VA window vs a page model; guard pages fault\n");
    int fd = memfd_create("vmem-seq", MFD_CLOEXEC);
    CHECK_OR_RETURN(1, fd >= 0 && ftruncate(fd, 128 * PAGE) == 0, "memfd of the mmap sequence");
    if (random_sequence(256, 20000, 0, -1, 1) || random_sequence(64, 5000, 0, -1, 2) ||
        random_sequence(256, 3000, 1, fd, 3) || real_mappings()) {
        return 1;
    }
    close(fd);
    return test_exit_code("test-npu-vmem");
}
