// planner.c: layer-grouped allocation plans for static buffers (see planner.h).

#include "planner.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "log.h"

// Non-negative decimal at s; *end past it. False if s does not start with a digit.
static bool parse_layer(const char * s, const char ** end, int * layer) {
    if (!isdigit((unsigned char)s[0])) {
        return false;
    }
    long v = 0;
    while (isdigit((unsigned char)*s)) {
        v = v * 10 + (*s++ - '0');
        if (v > INT32_MAX) {
            return false;
        }
    }
    *end   = s;
    *layer = (int)v;
    return true;
}

bool htp_planner_layer(const char * name, int * kind, int * layer) {
    const char * end = NULL;
    *kind            = -1;
    *layer           = -1;
    if (strncmp(name, "blk.", 4) == 0 && parse_layer(name + 4, &end, layer) && *end == '.') {
        *kind = 0;
        return true;
    }
    if (strncmp(name, "cache_", 6) == 0) {
        // The layer is the number after the first "_l"; it must end the name.
        const char * p = strstr(name + 6, "_l");
        if (p && parse_layer(p + 2, &end, layer) && *end == '\0') {
            *kind = 1;
            return true;
        }
    }
    *layer = -1;
    return false;
}

void htp_planner_free(struct htp_plan * plan) {
    free(plan->units);
    free(plan->order);
    free(plan->bufs);
    memset(plan, 0, sizeof *plan);
}

static size_t pad(size_t x, size_t a) {
    return (x + a - 1) & ~(a - 1);
}

// Stable: largest first, then by first-fit creation order (index).
struct buf_tmp {
    size_t size;
    int    index;  // creation order
};

static int buf_cmp(const void * pa, const void * pb) {
    const struct buf_tmp * a = pa;
    const struct buf_tmp * b = pb;
    if (a->size != b->size) {
        return a->size > b->size ? -1 : 1;
    }
    return a->index < b->index ? -1 : a->index > b->index;
}

int htp_planner_plan(const struct htp_plan_tensor * tensors, int n, size_t alignment, size_t max_size,
                     struct htp_plan * plan) {
    memset(plan, 0, sizeof *plan);
    if (n < 0 || (n > 0 && !tensors) || alignment == 0 || (alignment & (alignment - 1))) {
        return -1;
    }
    const size_t     limit   = max_size ? max_size : SIZE_MAX;
    int *            unit_of = NULL;  // [n_units] buffer index in creation order
    size_t *         fill    = NULL;  // [n_units] bytes of each buffer in creation order
    struct buf_tmp * tmp     = NULL;
    int *            rank    = NULL;
    plan->units              = calloc(n ? (size_t)n : 1, sizeof *plan->units);
    if (!plan->units) {
        goto fail;
    }

    // 1. Units: a layer's consecutive tensors of one kind, within the limit.
    for (int i = 0; i < n;) {
        if (tensors[i].skip) {
            i++;
            continue;
        }
        struct htp_plan_unit u         = {pad(tensors[i].size, alignment), i, i + 1, -1, -1};
        bool                 has_layer = htp_planner_layer(tensors[i].name, &u.kind, &u.layer);
        while (has_layer && u.last < n) {
            const struct htp_plan_tensor * t = &tensors[u.last];
            if (t->skip) {
                u.last++;
                continue;
            }
            int kind, layer;
            if (!htp_planner_layer(t->name, &kind, &layer) || kind != u.kind || layer != u.layer) {
                break;
            }
            size_t sz = pad(t->size, alignment);
            if (u.size + sz > limit || u.size + sz < u.size) {
                break;  // the rest of this layer starts a new unit
            }
            u.size += sz;
            u.last++;
        }
        plan->units[plan->n_units++] = u;
        i                            = u.last;
    }

    // 2. First-fit: each unit into the first buffer with room, in unit order.
    unit_of = malloc((plan->n_units ? (size_t)plan->n_units : 1) * sizeof *unit_of);
    fill    = calloc(plan->n_units ? (size_t)plan->n_units : 1, sizeof *fill);
    if (!unit_of || !fill) {
        goto fail;
    }
    int n_made = 0;
    for (int u = 0; u < plan->n_units; u++) {
        size_t sz  = plan->units[u].size;
        unit_of[u] = -1;
        if (sz == 0) {
            continue;  // placed in the largest buffer below
        }
        for (int b = 0; b < n_made; b++) {
            if (fill[b] + sz <= limit && fill[b] + sz >= fill[b]) {
                fill[b] += sz;
                unit_of[u] = b;
                break;
            }
        }
        if (unit_of[u] < 0) {
            fill[n_made] = sz;
            unit_of[u]   = n_made++;
        }
    }
    if (n_made == 0) {
        free(unit_of);
        free(fill);
        return 0;  // nothing needs room
    }

    // 3. Largest first (stable), then the per-buffer unit lists.
    tmp         = malloc((size_t)n_made * sizeof *tmp);
    rank        = malloc((size_t)n_made * sizeof *rank);
    plan->bufs  = calloc((size_t)n_made, sizeof *plan->bufs);
    plan->order = malloc((size_t)plan->n_units * sizeof *plan->order);
    if (!tmp || !rank || !plan->bufs || !plan->order) {
        goto fail;
    }
    for (int b = 0; b < n_made; b++) {
        tmp[b] = (struct buf_tmp){fill[b], b};
    }
    qsort(tmp, (size_t)n_made, sizeof *tmp, buf_cmp);
    for (int r = 0; r < n_made; r++) {
        rank[tmp[r].index] = r;
    }
    for (int u = 0; u < plan->n_units; u++) {
        if (unit_of[u] < 0) {
            unit_of[u] = tmp[0].index;  // size 0: with the largest buffer
        }
    }
    plan->n_bufs = n_made;
    int k        = 0;
    for (int r = 0; r < n_made; r++) {
        plan->bufs[r].size  = tmp[r].size;
        plan->bufs[r].unit0 = k;
        for (int u = 0; u < plan->n_units; u++) {
            if (rank[unit_of[u]] == r) {
                plan->order[k++] = u;
            }
        }
        plan->bufs[r].n_units = k - plan->bufs[r].unit0;
    }
    free(unit_of);
    free(fill);
    free(tmp);
    free(rank);
    return 0;
fail:
    free(unit_of);
    free(fill);
    free(tmp);
    free(rank);
    htp_planner_free(plan);
    return -1;
}

// --- ggml ---

// Forget where tensors [0, n) of list were placed (their buffers are going away).
static void unplace(struct ggml_tensor ** list, int n) {
    for (int i = 0; i < n; i++) {
        list[i]->data   = NULL;
        list[i]->buffer = NULL;
    }
}

ggml_backend_buffer_t htp_planner_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_buffer_type_t buft,
                                                    size_t max_size) {
    int n = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        n++;
    }
    struct ggml_tensor **    all      = malloc((n ? (size_t)n : 1) * sizeof *all);
    struct ggml_tensor **    placed   = malloc((n ? (size_t)n : 1) * sizeof *placed);
    struct htp_plan_tensor * items    = malloc((n ? (size_t)n : 1) * sizeof *items);
    ggml_backend_buffer_t *  buffers  = NULL;
    ggml_backend_buffer_t    result   = NULL;
    struct htp_plan          plan     = {0};
    int                      n_placed = 0, n_buffers = 0;
    if (!all || !placed || !items) {
        goto done;
    }
    int i = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t), i++) {
        all[i]   = t;
        items[i] = (struct htp_plan_tensor){t->name, 0, t->data != NULL || t->view_src != NULL};
        if (!items[i].skip) {
            items[i].size = ggml_backend_buft_get_alloc_size(buft, t);
        }
    }
    if (htp_planner_plan(items, n, ggml_backend_buft_get_alignment(buft), max_size, &plan) != 0 || plan.n_bufs == 0) {
        goto done;
    }
    buffers = calloc((size_t)plan.n_bufs, sizeof *buffers);
    if (!buffers) {
        goto done;
    }
    for (int b = 0; b < plan.n_bufs; b++) {
        buffers[b] = ggml_backend_buft_alloc_buffer(buft, plan.bufs[b].size);
        if (!buffers[b]) {
            HTP_LOG_ERROR("ggml-htp: %s: cannot allocate buffer %d of %d (%zu bytes) of the plan\n",
                          ggml_backend_buft_name(buft), b + 1, plan.n_bufs, plan.bufs[b].size);
            goto fail;
        }
        n_buffers++;
        struct ggml_tallocr ta = ggml_tallocr_new(buffers[b]);
        for (int k = 0; k < plan.bufs[b].n_units; k++) {
            const struct htp_plan_unit * u = &plan.units[plan.order[plan.bufs[b].unit0 + k]];
            for (int j = u->first; j < u->last; j++) {
                if (items[j].skip) {
                    continue;
                }
                if (ggml_tallocr_alloc(&ta, all[j]) != GGML_STATUS_SUCCESS) {
                    HTP_LOG_ERROR("ggml-htp: cannot place tensor %s\n", all[j]->name);
                    goto fail;
                }
                placed[n_placed++] = all[j];
            }
        }
    }
    // Views last: their sources may be in any of the buffers.
    for (int j = 0; j < n; j++) {
        if (all[j]->view_src != NULL && all[j]->buffer == NULL) {
            if (ggml_backend_view_init(all[j]) != GGML_STATUS_SUCCESS) {
                HTP_LOG_ERROR("ggml-htp: cannot initialise view %s\n", all[j]->name);
                goto fail;
            }
            placed[n_placed++] = all[j];
        }
    }
    result = plan.n_bufs == 1 ? buffers[0] : ggml_backend_multi_buffer_alloc_buffer(buffers, (size_t)plan.n_bufs);
    if (!result) {
        goto fail;
    }
    HTP_VERBOSE("ggml-htp: %s: planned %d tensors in %d unit(s) into %d buffer(s)\n", ggml_backend_buft_name(buft), n,
                plan.n_units, plan.n_bufs);
    goto done;
fail:
    unplace(placed, n_placed);
    for (int b = 0; b < n_buffers; b++) {
        ggml_backend_buffer_free(buffers[b]);
    }
    result = NULL;
done:
    htp_planner_free(&plan);
    free(buffers);
    free(all);
    free(placed);
    free(items);
    return result;
}
