// buffer.c: memfd buffers and their per-session mappings (see buffer.h).
//
// Every live buffer sits on one global list, each with a small table of
// (target, mapped) records. Session teardown walks the list instead of
// keeping a second index per session, so there is one source of truth and no
// back-pointers to keep consistent. One lock (htp_buffer_lock) guards the
// list, the records and the control calls made on their behalf; its order is
// before an NPU's call lock and it is never taken while holding one.

#include "buffer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault.h"
#include "log.h"
#include "npu-proc.h"
#include "status.h"

struct htp_buffer_map {
    const struct htp_map_target * target;
    bool                          mapped;
};

struct htp_buffer {
    uint8_t *                     base;    // host mapping of the whole memfd
    int                           fd;      // memfd (CLOEXEC)
    size_t                        size;    // usable + HTP_PAGE_SIZE guard
    size_t                        usable;  // requested size rounded up to HTP_PAGE_SIZE
    uint32_t                      flags;   // HTP_BUFFER_*
    const struct htp_map_target * owner;
    _Atomic int                   refs;

    // Guarded by htp_buffer_lock.
    struct htp_buffer *   prev, *next;  // global list of live buffers
    uint32_t              n_maps;
    struct htp_buffer_map maps[HTP_BUFFER_MAX_MAPS];
};

static pthread_mutex_t     htp_buffer_lock = PTHREAD_MUTEX_INITIALIZER;
static struct htp_buffer * htp_buffer_list;
static size_t              htp_buffer_count, htp_buffer_bytes;
static _Atomic uint64_t    htp_buffer_epoch_count;  // htp_buffer_epoch; moved under the lock

// A registration is going or a buffer's flags change. Lock held. Release:
// whoever reads the new count also sees the change it stands for.
static void epoch_move(void) {
    atomic_fetch_add_explicit(&htp_buffer_epoch_count, 1, memory_order_release);
}

uint64_t htp_buffer_epoch(void) {
    // Acquire: pairs with epoch_move's release.
    return atomic_load_explicit(&htp_buffer_epoch_count, memory_order_acquire);
}

int htp_buffer_alloc(const struct htp_map_target * owner, size_t size, uint32_t flags, struct htp_buffer ** out) {
    if (size == 0 || size > ((size_t)1 << 46)) {
        HTP_LOG_ERROR("ggml-htp: buffer size %zu out of range\n", size);
        return HTP_STATUS_HOST_ERR;
    }
    if ((flags & HTP_BUFFER_PINNED) && (flags & HTP_BUFFER_EXTENDED)) {
        return HTP_STATUS_HOST_ERR;
    }
    struct htp_buffer * buf = calloc(1, sizeof *buf);
    if (!buf) {
        return HTP_STATUS_HOST_ERR;
    }
    buf->fd     = -1;
    buf->base   = MAP_FAILED;
    buf->usable = (size + HTP_PAGE_SIZE - 1) & ~(size_t)(HTP_PAGE_SIZE - 1);
    buf->size   = buf->usable + HTP_PAGE_SIZE;
    buf->flags  = flags;
    buf->owner  = owner;
    atomic_init(&buf->refs, 1);

    const char * who = owner ? owner->name : "ggml-htp";
    const double mib = (double)buf->size / (1024.0 * 1024.0);
    int          rc  = HTP_STATUS_HOST_ERR;
    if (htp_fault(HTP_FAULT_MEMFD)) {
        errno   = EMFILE;
        buf->fd = -1;
    } else {
        buf->fd = memfd_create("ggml-htp", MFD_CLOEXEC);
    }
    if (buf->fd < 0) {
        HTP_LOG_ERROR("ggml-htp: %s: cannot create the memfd of a %.1f MiB buffer: memfd_create: %s\n", who, mib,
                      strerror(errno));
        goto fail;
    }
    int sized = -1;
    if (htp_fault(HTP_FAULT_FTRUNCATE)) {
        errno = ENOSPC;
    } else {
        sized = ftruncate(buf->fd, (off_t)buf->size);
    }
    if (sized != 0) {
        HTP_LOG_ERROR("ggml-htp: %s: cannot size the memfd of a %.1f MiB buffer: ftruncate: %s\n", who, mib,
                      strerror(errno));
        rc = HTP_STATUS_NO_MEMORY;
        goto fail;
    }
    if (htp_fault(HTP_FAULT_MMAP)) {
        errno     = ENOMEM;
        buf->base = MAP_FAILED;
    } else {
        buf->base = mmap(NULL, buf->size, PROT_READ | PROT_WRITE, MAP_SHARED, buf->fd, 0);
    }
    if (buf->base == MAP_FAILED) {
        HTP_LOG_ERROR("ggml-htp: %s: cannot map a %.1f MiB buffer (fd %d) into the host: mmap: %s\n", who, mib, buf->fd,
                      strerror(errno));
        rc = HTP_STATUS_NO_MEMORY;
        goto fail;
    }
    // The guard page faults on the host too: an overrun shows up on whichever side makes it.
    if (mprotect(buf->base + buf->usable, HTP_PAGE_SIZE, PROT_NONE) != 0) {
        HTP_LOG_ERROR("ggml-htp: mprotect guard page: %s\n", strerror(errno));
        goto fail;
    }

    pthread_mutex_lock(&htp_buffer_lock);
    buf->next = htp_buffer_list;
    if (htp_buffer_list) {
        htp_buffer_list->prev = buf;
    }
    htp_buffer_list = buf;
    htp_buffer_count++;
    htp_buffer_bytes += buf->size;
    pthread_mutex_unlock(&htp_buffer_lock);

    HTP_VERBOSE("ggml-htp: %s allocated buffer: base %p size %zu fd %d flags 0x%x\n", owner ? owner->name : "-",
                (void *)buf->base, buf->size, buf->fd, flags);
    *out = buf;
    return 0;
fail:
    if (buf->base != MAP_FAILED) {
        munmap(buf->base, buf->size);
    }
    if (buf->fd >= 0) {
        close(buf->fd);
    }
    free(buf);
    return rc;
}

void htp_buffer_ref(struct htp_buffer * buf) {
    // Relaxed: taking a reference needs one already held; nothing to publish.
    atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
}

// Find t's record in buf; -1 if none. Lock held.
static int find_map(const struct htp_buffer * buf, const struct htp_map_target * t) {
    for (uint32_t i = 0; i < buf->n_maps; i++) {
        if (buf->maps[i].target == t) {
            return (int)i;
        }
    }
    return -1;
}

// Send HTP_CTL_UNMAP for buf in record i's target and drop the record. Lock held.
static int unmap_locked(struct htp_buffer * buf, uint32_t i, bool send) {
    const struct htp_map_target * t  = buf->maps[i].target;
    int                           rc = 0;
    if (buf->maps[i].mapped && send) {
        rc = htp_npu_unmap_buffer(t->npu, t->session_id, buf->fd);
        if (rc != 0 && rc != HTP_STATUS_NPU_DEAD) {
            HTP_LOG_ERROR("ggml-htp: %s unmap of buffer fd %d failed: %s\n", t->name, buf->fd, htp_status_str(rc));
        }
        HTP_VERBOSE("ggml-htp: %s unmapped buffer: base %p size %zu fd %d\n", t->name, (void *)buf->base, buf->size,
                    buf->fd);
    }
    buf->maps[i] = buf->maps[--buf->n_maps];
    epoch_move();
    return rc;
}

void htp_buffer_unref(struct htp_buffer * buf) {
    if (!buf) {
        return;
    }
    // Acq-rel: the last owner must see every write other owners made before dropping theirs.
    if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    pthread_mutex_lock(&htp_buffer_lock);
    while (buf->n_maps > 0) {
        unmap_locked(buf, buf->n_maps - 1, true);
    }
    if (buf->prev) {
        buf->prev->next = buf->next;
    } else {
        htp_buffer_list = buf->next;
    }
    if (buf->next) {
        buf->next->prev = buf->prev;
    }
    htp_buffer_count--;
    htp_buffer_bytes -= buf->size;
    pthread_mutex_unlock(&htp_buffer_lock);

    HTP_VERBOSE("ggml-htp: freed buffer: base %p size %zu fd %d\n", (void *)buf->base, buf->size, buf->fd);
    munmap(buf->base, buf->size);
    close(buf->fd);
    free(buf);
}

uint8_t * htp_buffer_base(const struct htp_buffer * buf) {
    return buf->base;
}

size_t htp_buffer_size(const struct htp_buffer * buf) {
    return buf->size;
}

size_t htp_buffer_usable(const struct htp_buffer * buf) {
    return buf->usable;
}

int htp_buffer_fd(const struct htp_buffer * buf) {
    return buf->fd;
}

uint32_t htp_buffer_flags(const struct htp_buffer * buf) {
    return buf->flags;
}

int htp_buffer_set_extended(struct htp_buffer * buf, bool extended) {
    int rc = 0;
    pthread_mutex_lock(&htp_buffer_lock);
    bool mapped = false;
    for (uint32_t i = 0; i < buf->n_maps; i++) {
        mapped |= buf->maps[i].mapped;
    }
    if (mapped || (buf->flags & HTP_BUFFER_PINNED)) {
        rc = HTP_STATUS_HOST_ERR;
    } else if (extended != !!(buf->flags & HTP_BUFFER_EXTENDED)) {
        buf->flags ^= HTP_BUFFER_EXTENDED;
        epoch_move();
    }
    pthread_mutex_unlock(&htp_buffer_lock);
    return rc;
}

uint32_t htp_buffer_desc_flags(const struct htp_buffer * buf, const struct htp_map_target * t) {
    // Only the owner maps its pinned buffer as pinned; in other sessions it is
    // an ordinary clone (the reference clears pinned in its clone constructor).
    if ((buf->flags & HTP_BUFFER_PINNED) && buf->owner == t) {
        return HTP_BUF_PINNED;
    }
    return (buf->flags & HTP_BUFFER_EXTENDED) ? HTP_BUF_EXTENDED : 0;
}

// Register t with buf; returns the record index or -1. Lock held.
static int use_locked(struct htp_buffer * buf, const struct htp_map_target * t) {
    int i = find_map(buf, t);
    if (i >= 0) {
        return i;
    }
    if (buf->n_maps >= HTP_BUFFER_MAX_MAPS) {
        HTP_LOG_ERROR("ggml-htp: %s buffer fd %d is registered with too many sessions\n", t->name, buf->fd);
        return -1;
    }
    i                   = (int)buf->n_maps++;
    buf->maps[i].target = t;
    buf->maps[i].mapped = false;
    if (buf->owner != t) {
        HTP_VERBOSE("ggml-htp: %s clone-buffer: owner %s base %p size %zu fd %d\n", t->name,
                    buf->owner ? buf->owner->name : "-", (void *)buf->base, buf->size, buf->fd);
    }
    return i;
}

int htp_buffer_use(struct htp_buffer * buf, const struct htp_map_target * t) {
    pthread_mutex_lock(&htp_buffer_lock);
    int i = use_locked(buf, t);
    pthread_mutex_unlock(&htp_buffer_lock);
    return i < 0 ? HTP_STATUS_HOST_ERR : 0;
}

// Map record i of buf (not mapped yet). A failed map is retried once after
// 100 ms (spurious failures happen on the DSP); an extended map is retried in
// eager mode. With once, there is no retry and no error log (probing). Lock held.
static int map_locked(struct htp_buffer * buf, uint32_t i, bool once) {
    const struct htp_map_target * t     = buf->maps[i].target;
    uint32_t                      flags = htp_buffer_desc_flags(buf, t);
    int                           rc    = htp_npu_map_buffer(t->npu, t->session_id, buf->fd, buf->size, flags);
    if (rc != 0 && !once && rc != HTP_STATUS_NPU_DEAD && rc != HTP_STATUS_PROTOCOL) {
        if (flags & HTP_BUF_EXTENDED) {
            flags |= HTP_BUF_EAGER;
        }
        HTP_LOG_WARN("ggml-htp: %s: mapping buffer fd %d (%.1f MiB) failed (%s), retrying in 100 ms\n", t->name,
                     buf->fd, (double)buf->size / (1024.0 * 1024.0), htp_status_str(rc));
        usleep(100 * 1000);
        rc = htp_npu_map_buffer(t->npu, t->session_id, buf->fd, buf->size, flags);
    }
    if (rc == 0) {
        buf->maps[i].mapped = true;
        HTP_VERBOSE("ggml-htp: %s mapped buffer: base %p size %zu fd %d flags 0x%x\n", t->name, (void *)buf->base,
                    buf->size, buf->fd, flags);
    } else if (!once) {
        HTP_LOG_ERROR("ggml-htp: %s buffer mapping failed: size %zu fd %d: %s\n", t->name, buf->size, buf->fd,
                      htp_status_str(rc));
    }
    return rc;
}

static int map_one(struct htp_buffer * buf, const struct htp_map_target * t, bool once) {
    int rc = 0;
    pthread_mutex_lock(&htp_buffer_lock);
    int i = use_locked(buf, t);
    if (i < 0) {
        rc = HTP_STATUS_HOST_ERR;
    } else if (!buf->maps[i].mapped) {
        rc = map_locked(buf, (uint32_t)i, once);
    }
    pthread_mutex_unlock(&htp_buffer_lock);
    return rc;
}

int htp_buffer_map(struct htp_buffer * buf, const struct htp_map_target * t) {
    return map_one(buf, t, false);
}

int htp_buffer_try_map(struct htp_buffer * buf, const struct htp_map_target * t) {
    return map_one(buf, t, true);
}

// One registration waiting to be mapped.
struct pending {
    struct htp_buffer * buf;
    uint32_t            rec;   // index in buf->maps
    uint32_t            phys;  // the target's physical NPU (the reference's domain)
    uint32_t            sid;   // the target's session id there
};

// Largest first; ties by fd, then NPU, then session, so the order (and with it
// the NPU's placement) does not depend on the buffer list's order.
static int pending_cmp(const void * pa, const void * pb) {
    const struct pending * a = pa;
    const struct pending * b = pb;
    if (a->buf->size != b->buf->size) {
        return a->buf->size > b->buf->size ? -1 : 1;
    }
    if (a->buf->fd != b->buf->fd) {
        return a->buf->fd < b->buf->fd ? -1 : 1;
    }
    if (a->phys != b->phys) {
        return a->phys < b->phys ? -1 : 1;
    }
    return a->sid < b->sid ? -1 : a->sid > b->sid;
}

static bool in_set(const struct htp_map_target * const * targets, uint32_t n, const struct htp_map_target * t) {
    for (uint32_t i = 0; i < n; i++) {
        if (targets[i] == t) {
            return true;
        }
    }
    return false;
}

int htp_buffer_map_pending(const struct htp_map_target * const * targets, uint32_t n_targets,
                           struct htp_buffer_map_failure * failed) {
    int rc = 0;
    pthread_mutex_lock(&htp_buffer_lock);
    size_t n = 0;
    for (struct htp_buffer * b = htp_buffer_list; b; b = b->next) {
        for (uint32_t i = 0; i < b->n_maps; i++) {
            n += !b->maps[i].mapped && in_set(targets, n_targets, b->maps[i].target);
        }
    }
    struct pending * p = n ? malloc(n * sizeof *p) : NULL;
    if (n && !p) {
        rc = HTP_STATUS_HOST_ERR;
        goto done;
    }
    size_t k = 0;
    for (struct htp_buffer * b = htp_buffer_list; b; b = b->next) {
        for (uint32_t i = 0; i < b->n_maps; i++) {
            const struct htp_map_target * t = b->maps[i].target;
            if (!b->maps[i].mapped && in_set(targets, n_targets, t)) {
                p[k++] = (struct pending){b, i, t->phys_idx, t->session_id};
            }
        }
    }
    if (n > 1) {
        qsort(p, n, sizeof *p, pending_cmp);
    }
    // The records stay put while the lock is held, so rec indices are valid.
    for (k = 0; k < n && rc == 0; k++) {
        rc = map_locked(p[k].buf, p[k].rec, false);
        if (rc != 0 && failed) {
            failed->target = p[k].buf->maps[p[k].rec].target;
            failed->fd     = p[k].buf->fd;
            failed->size   = p[k].buf->size;
        }
    }
    free(p);
done:
    pthread_mutex_unlock(&htp_buffer_lock);
    return rc;
}

int htp_buffer_unmap(struct htp_buffer * buf, const struct htp_map_target * t) {
    int rc = 0;
    pthread_mutex_lock(&htp_buffer_lock);
    int i = find_map(buf, t);
    if (i >= 0) {
        rc = unmap_locked(buf, (uint32_t)i, true);
    }
    pthread_mutex_unlock(&htp_buffer_lock);
    return rc;
}

bool htp_buffer_is_mapped(struct htp_buffer * buf, const struct htp_map_target * t) {
    pthread_mutex_lock(&htp_buffer_lock);
    int  i      = find_map(buf, t);
    bool mapped = i >= 0 && buf->maps[i].mapped;
    pthread_mutex_unlock(&htp_buffer_lock);
    return mapped;
}

void htp_buffer_forget_target(const struct htp_map_target * t, bool send_unmap) {
    pthread_mutex_lock(&htp_buffer_lock);
    for (struct htp_buffer * b = htp_buffer_list; b; b = b->next) {
        int i = find_map(b, t);
        if (i >= 0) {
            unmap_locked(b, (uint32_t)i, send_unmap);
        }
        if (b->owner == t) {
            b->owner = NULL;  // outlives its session: from now on every user clones it
        }
    }
    pthread_mutex_unlock(&htp_buffer_lock);
}

uint64_t htp_buffer_window_bytes(const struct htp_map_target * t, uint32_t * n_buffers) {
    uint64_t bytes = 0;
    uint32_t n     = 0;
    pthread_mutex_lock(&htp_buffer_lock);
    for (const struct htp_buffer * b = htp_buffer_list; b; b = b->next) {
        const int i = find_map(b, t);
        if ((b->owner == t || (i >= 0 && b->maps[i].mapped)) &&
            !(b->flags & (HTP_BUFFER_PINNED | HTP_BUFFER_EXTENDED))) {
            bytes += b->size;
            n++;
        }
    }
    pthread_mutex_unlock(&htp_buffer_lock);
    if (n_buffers) {
        *n_buffers = n;
    }
    return bytes;
}

void htp_buffer_stats(size_t * n_buffers, size_t * n_bytes) {
    pthread_mutex_lock(&htp_buffer_lock);
    if (n_buffers) {
        *n_buffers = htp_buffer_count;
    }
    if (n_bytes) {
        *n_bytes = htp_buffer_bytes;
    }
    pthread_mutex_unlock(&htp_buffer_lock);
}
