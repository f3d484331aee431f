/*
 * The range-map form of an epoch's plan: every op folded into a range map
 * in (collective-call count, clock, rank) order, so later writes win and a
 * SETSIZE cuts only its writer's earlier bytes; then flattened into pieces
 * with byte prefix sums, from which a domain is cut by binary search.  It
 * serves every epoch the compact form cannot (plan_compact.c).
 */
#include "plan_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rangemap.h"

static int fold_range(void *arg, const struct logfs_range *r, int is_hole)
{
    (void)is_hole;
    return logfs_rangemap_insert(arg, r->start, r->end, r->owner, r->pos);
}

static int insert_op(struct logfs_rangemap *m, const struct op *o)
{
    const struct logfs_group *g = &o->g;
    uint64_t dlog = o->dlog;
    int rc;
    if (g->count == 0)
        return g->offset >= LOGFS_MAX_FILE_END ? LOGFS_OK
                                               : logfs_rangemap_remove(m, g->offset, LOGFS_MAX_FILE_END);
    if (g->count == 1 || g->stride == (int64_t)g->blocklen) /* back-to-back blocks are one range */
        return logfs_rangemap_insert(m, g->offset, g->offset + g->count * g->blocklen, (int32_t)o->writer, dlog);
    for (uint64_t i = 0; i < g->count; i++, dlog += g->blocklen) {
        uint64_t off = logfs_group_block(g, i);
        if ((rc = logfs_rangemap_insert(m, off, off + g->blocklen, (int32_t)o->writer, dlog)))
            return rc;
    }
    return LOGFS_OK;
}

/* (within one epoch) */
static int op_before(const struct op *a, const struct op *b)
{
    struct logfs_plan_key ka = {0, a->seq, a->stamp, a->writer};
    struct logfs_plan_key kb = {0, b->seq, b->stamp, b->writer};
    return plan_key_order(&ka, &kb) < 0;
}

/* Stable merge sort by (seq, stamp, writer): each writer's ops keep their
 * order (its stamps never decrease). */
int plan_sort_ops(struct op *ops, size_t n)
{
    if (n < 2)
        return LOGFS_OK;
    struct op *tmp = malloc(n * sizeof *tmp), *src = ops, *dst = tmp;
    if (!tmp)
        return LOGFS_ENOMEM;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = op_before(&src[b], &src[a]) ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        struct op *t = src;
        src = dst;
        dst = t;
    }
    if (src != ops)
        memcpy(ops, src, n * sizeof *ops);
    free(tmp);
    return LOGFS_OK;
}

struct cut_ctx {
    int32_t writer;
    struct logfs_range *r;
    size_t n, cap;
    int rc;
};

static int collect_owned(void *arg, const struct logfs_range *r, int is_hole)
{
    struct cut_ctx *c = arg;
    if (is_hole || r->owner != c->writer)
        return 0;
    struct logfs_range *nr = logfs_grow(c->r, &c->cap, c->n + 1, sizeof *nr, 16);
    if (!nr)
        return (c->rc = LOGFS_ENOMEM);
    c->r = nr;
    c->r[c->n++] = *r;
    return 0;
}

/* A SETSIZE of @p writer also discards what it wrote at and past @p size
 * in earlier segments of the epoch (already in @p map). */
static int cut_writer(struct logfs_rangemap *map, uint32_t writer, uint64_t size)
{
    struct cut_ctx c = {(int32_t)writer, NULL, 0, 0, LOGFS_OK};
    int rc = LOGFS_OK;
    if (size >= LOGFS_MAX_FILE_END)
        return LOGFS_OK;
    logfs_rangemap_query(map, size, LOGFS_MAX_FILE_END, collect_owned, &c);
    for (size_t i = 0; i < c.n && !rc && !c.rc; i++)
        rc = logfs_rangemap_remove(map, c.r[i].start, c.r[i].end);
    free(c.r);
    return c.rc ? c.rc : rc;
}

/* Segments of one writer and one collective-call count, in (count, rank)
 * order; within a segment the later op wins, and a SETSIZE cuts only that
 * writer's bytes, hence a map of its own when the segment has one. */
static int build_map(struct epoch *ep, struct logfs_rangemap *map)
{
    size_t i = 0, j;
    int rc = LOGFS_OK;
    if (ep->mixed && (rc = plan_sort_ops(ep->ops, ep->nops)))
        return rc;
    while (i < ep->nops && !rc) {
        uint64_t cut = LOGFS_MAX_FILE_END;
        const struct op *first = &ep->ops[i];
        for (j = i; j < ep->nops && ep->ops[j].writer == first->writer && ep->ops[j].seq == first->seq; j++)
            if (ep->ops[j].g.count == 0 && ep->ops[j].g.offset < cut)
                cut = ep->ops[j].g.offset;
        if (cut == LOGFS_MAX_FILE_END) {
            for (; i < j && !rc; i++)
                rc = insert_op(map, &ep->ops[i]);
            continue;
        }
        struct logfs_rangemap *wm;
        if (ep->mixed && (rc = cut_writer(map, first->writer, cut)))
            return rc;
        if ((rc = logfs_rangemap_create(&wm)))
            return rc;
        for (; i < j && !rc; i++)
            rc = insert_op(wm, &ep->ops[i]);
        if (!rc)
            rc = logfs_rangemap_walk(wm, fold_range, map);
        logfs_rangemap_destroy(wm);
    }
    return rc;
}

struct flat_ctx {
    struct epoch *ep;
    size_t i;
};

static int flatten_one(void *arg, const struct logfs_range *r, int is_hole)
{
    struct flat_ctx *c = arg;
    (void)is_hole;
    c->ep->pieces[c->i] = (struct logfs_replay_piece){r->start, r->end - r->start, (uint32_t)r->owner, r->pos};
    c->ep->prefix[c->i] = c->ep->total;
    c->ep->total += r->end - r->start;
    c->i++;
    return 0;
}

int plan_with_map(struct epoch *ep)
{
    struct logfs_rangemap *map;
    struct flat_ctx c = {ep, 0};
    int rc = logfs_rangemap_create(&map);
    if (rc)
        return rc;
    if ((rc = build_map(ep, map)))
        goto out;
    ep->n = logfs_rangemap_count(map);
    ep->pieces = malloc((ep->n ? ep->n : 1) * sizeof *ep->pieces);
    ep->prefix = malloc((ep->n ? ep->n : 1) * sizeof *ep->prefix);
    if (!ep->pieces || !ep->prefix) {
        rc = LOGFS_ENOMEM;
        goto out;
    }
    ep->total = 0;
    logfs_rangemap_walk(map, flatten_one, &c);
out:
    logfs_rangemap_destroy(map);
    return rc;
}

/* Domain of byte ranks [b0, b1) in the range-map form. */
int plan_map_domain(const struct epoch *ep, uint64_t b0, uint64_t b1, uint64_t *lo, uint64_t *hi,
                      struct sink *s)
{
    size_t i, lo_i = 0, hi_i = ep->n;
    /* Last piece starting at or before byte rank b0. */
    while (hi_i - lo_i > 1) {
        size_t mid = lo_i + (hi_i - lo_i) / 2;
        if (ep->prefix[mid] <= b0)
            lo_i = mid;
        else
            hi_i = mid;
    }
    for (i = lo_i; i < ep->n && ep->prefix[i] < b1; i++) {
        struct logfs_replay_piece q = ep->pieces[i];
        uint64_t skip = b0 > ep->prefix[i] ? b0 - ep->prefix[i] : 0;
        uint64_t stop = ep->prefix[i] + q.length > b1 ? b1 - ep->prefix[i] : q.length;
        int rc;
        q.offset += skip;
        q.dlog_off += skip;
        q.length = stop - skip;
        if (i == lo_i)
            *lo = q.offset;
        *hi = q.offset + q.length;
        if ((rc = plan_sink_piece(s, &q)) != 0)
            return rc;
    }
    return LOGFS_OK;
}
