/*
 * Replay planner.  Within an epoch the ops of each writer are taken in
 * segments of one collective-call count (ORDER records, format.h) and one
 * STAMP clock, in the order (count, clock, rank): a write made after a
 * collective call wins over every process's writes made before it, then
 * the later by the clock (under posix consistency every write is stamped,
 * so a POSIX file's order holds), and otherwise the higher rank wins.  A
 * segment with a SETSIZE is first built in a map of its own (so
 * the cut takes only that writer's earlier bytes), then folded into the
 * epoch's map, which is flattened to an array with byte prefix sums for
 * cutting domains.
 */
#include "planner.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extents.h"
#include "format.h"
#include "internal.h"
#include "rangemap.h"
#include "reader.h"

/* One group of a WRITE record, or a SETSIZE (g.count == 0, g.offset = size). */
struct op {
    struct logfs_group g;
    uint64_t dlog;   /* datalog offset of block 0 */
    uint64_t seq;    /* collective calls the writer had entered (ORDER); in a
                        plan of several sessions, the op's place in time */
    uint64_t stamp;  /* the writer's last STAMP clock */
    uint32_t writer;
};

/* A compact group: count blocks of bl bytes at off + i * stride, with
 * stride > bl when count > 1; block i's data at dlog + i * bl. */
struct cgroup {
    uint64_t off, bl, stride, count, dlog;
    uint32_t writer;
};

/* Strided groups whose extents [first block, end of last block) overlap,
 * transitively: disjoint ascending intervals of the file. */
struct cluster {
    uint64_t start, end;
    uint64_t before; /* bytes of the strided groups of earlier clusters */
    size_t first, n; /* its groups: strided[first .. first + n) */
};

struct epoch {
    /* while building: every writer's ops, in rank order */
    struct op *ops;
    size_t nops, capops;
    int need_map;               /* a SETSIZE cut bytes: only the range map applies it */
    int mixed;                  /* ops of more than one collective-call count or
                                   STAMP clock: they need sorting */
    int compact;                /* nonzero: the compact form below, else the pieces */
    /* range-map form: merged pieces with byte prefix sums */
    struct logfs_replay_piece *pieces;
    uint64_t *prefix;           /* bytes before pieces[i] */
    size_t n;
    /* compact form: single blocks (sorted), strided groups (sorted), clusters */
    struct cgroup *singles;
    uint64_t *sprefix;          /* bytes before singles[i] */
    size_t nsingles;
    struct cgroup *strided;
    size_t nstrided;
    struct cluster *cl;
    size_t ncl;
    uint64_t total;
    struct logfs_resize rs;
};

struct logfs_plan {
    uint64_t file_id;
    uint32_t nwriters;
    char **datalogs;
    char **warnings;
    uint64_t *sealed;  /* epochs each writer's metalog sealed */
    uint64_t *procs;   /* each writer's process (STAMP; 0: unknown) */
    struct epoch *epochs;
    size_t nepochs, cap;
};

/* What one writer did in its current epoch. */
struct wepoch {
    uint64_t seq;      /* the last ORDER's count (kept across epochs) */
    uint64_t stamp;    /* the last STAMP's clock (kept across epochs) */
    struct op *ops;
    size_t nops, capops;
    uint64_t max_end;  /* end of the furthest block written so far */
    int need_map;
    struct logfs_resize rs;
    int dirty;
};

static int grow_epochs(struct logfs_plan *p, uint64_t need)
{
    if (need <= p->nepochs)
        return LOGFS_OK;
    if (need > p->cap) {
        size_t cap = p->cap ? p->cap : 8;
        while (cap < need)
            cap *= 2;
        struct epoch *e = realloc(p->epochs, cap * sizeof *e);
        if (!e)
            return LOGFS_ENOMEM;
        p->epochs = e;
        p->cap = cap;
    }
    memset(p->epochs + p->nepochs, 0, (need - p->nepochs) * sizeof *p->epochs);
    p->nepochs = need;
    return LOGFS_OK;
}

static int push_ops(struct op **ops, size_t *n, size_t *cap, const struct op *add, size_t k)
{
    if (*n + k > *cap) {
        size_t c = *cap ? *cap : 16;
        while (c < *n + k)
            c *= 2;
        struct op *o = realloc(*ops, c * sizeof *o);
        if (!o)
            return LOGFS_ENOMEM;
        *ops = o;
        *cap = c;
    }
    if (k) /* an epoch without writes has no array at all */
        memcpy(*ops + *n, add, k * sizeof *add);
    *n += k;
    return LOGFS_OK;
}

/* Fold writer epoch @p w into epoch @p e of the plan and reset it. */
static int fold(struct logfs_plan *p, uint64_t e, struct wepoch *w)
{
    struct epoch *ep;
    int rc;
    if (!w->dirty)
        return LOGFS_OK;
    if ((rc = grow_epochs(p, e + 1)))
        return rc;
    ep = &p->epochs[e];
    const struct op *first = ep->nops ? &ep->ops[0] : &w->ops[0];
    for (size_t i = 0; i < w->nops && !ep->mixed; i++)
        ep->mixed = w->ops[i].seq != first->seq || w->ops[i].stamp != first->stamp;
    if ((rc = push_ops(&ep->ops, &ep->nops, &ep->capops, w->ops, w->nops)))
        return rc;
    ep->need_map |= w->need_map;
    if (w->rs.present) {
        if (!ep->rs.present) {
            ep->rs = w->rs;
        } else {
            if (w->rs.truncate_to < ep->rs.truncate_to)
                ep->rs.truncate_to = w->rs.truncate_to;
            if (w->rs.extend_to > ep->rs.extend_to)
                ep->rs.extend_to = w->rs.extend_to;
        }
    }
    w->nops = 0;
    w->max_end = 0;
    w->need_map = 0;
    w->dirty = 0;
    memset(&w->rs, 0, sizeof w->rs);
    return LOGFS_OK;
}

/* One past the last byte of group @p g (a valid, decoded group). */
static uint64_t group_end(const struct logfs_group *g)
{
    uint64_t last = logfs_group_block(g, g->count - 1);
    return (last > g->offset ? last : g->offset) + g->blocklen;
}

static int add_write(struct wepoch *w, uint32_t rank, const struct logfs_record *rec)
{
    struct logfs_group_iter it;
    struct op o = {{0, 0, 0, 0}, rec->u.write.dlog_off, w->seq, w->stamp, rank};
    int rc;

    w->dirty = 1;
    logfs_group_iter_init(&it, rec->u.write.groups, rec->u.write.groups_len);
    while (logfs_group_next(&it, &o.g) == 1) {
        uint64_t end = group_end(&o.g);
        if (o.g.count == 1)
            o.g.stride = 0;
        if ((rc = push_ops(&w->ops, &w->nops, &w->capops, &o, 1)))
            return rc;
        if (end > w->max_end)
            w->max_end = end;
        o.dlog += o.g.count * o.g.blocklen;
    }
    return LOGFS_OK;
}

static int set_size(struct wepoch *w, uint32_t rank, uint64_t size)
{
    struct op o = {{size, 0, 0, 0}, 0, w->seq, w->stamp, rank};
    w->dirty = 1;
    if (!w->rs.present || size < w->rs.truncate_to)
        w->rs.truncate_to = size;
    w->rs.present = 1;
    w->rs.extend_to = size;
    if (w->max_end > size)
        w->need_map = 1; /* it discards some of this writer's bytes */
    return push_ops(&w->ops, &w->nops, &w->capops, &o, 1);
}

static int read_writer(struct logfs_plan *p, struct logfs_reader *r, const char *path,
                       const struct logfs_plan_opts *o, struct logfs_error *err)
{
    uint32_t rank = logfs_reader_header(r)->rank;
    struct wepoch w;
    struct logfs_record rec;
    uint64_t epoch = 0;
    int rc;

    memset(&w, 0, sizeof w);
    for (;;) {
        struct logfs_error e;
        rc = logfs_reader_next(r, &rec, &e);
        if (rc == LOGFS_END) {
            if (o->include_unsealed)
                rc = fold(p, epoch, &w);
            else
                rc = LOGFS_OK;
            break;
        }
        if (rc) {
            if (!o->salvage) {
                if (err)
                    *err = e;
                break;
            }
            p->warnings[rank] = strdup(e.msg);
            rc = p->warnings[rank] ? LOGFS_OK : LOGFS_ENOMEM;
            break;
        }
        switch (rec.type) {
        case LOGFS_REC_WRITE:
            rc = add_write(&w, rank, &rec);
            break;
        case LOGFS_REC_SETSIZE:
            rc = set_size(&w, rank, rec.u.setsize.size);
            break;
        case LOGFS_REC_ORDER:
            w.seq = rec.u.order.seq;
            break;
        case LOGFS_REC_STAMP:
            w.stamp = rec.u.stamp.clock;
            if (rec.u.stamp.process)
                p->procs[rank] = rec.u.stamp.process;
            break;
        case LOGFS_REC_SYNC:
        case LOGFS_REC_CLOSE:
            /* An empty sealed epoch still counts: epochs line up across writers. */
            rc = grow_epochs(p, epoch + 1);
            if (!rc)
                rc = fold(p, epoch, &w);
            p->sealed[rank] = ++epoch;
            break;
        }
        if (rc) {
            if (rc == LOGFS_ENOMEM)
                logfs_fail(err, rc, 0, "no memory to plan replay of %s", path);
            break;
        }
    }
    free(w.ops);
    return rc;
}

/* ---- the range-map form -------------------------------------------------- */

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

static int op_before(const struct op *a, const struct op *b)
{
    if (a->seq != b->seq)
        return a->seq < b->seq;
    return a->stamp != b->stamp ? a->stamp < b->stamp : a->writer < b->writer;
}

/* Stable merge sort by (seq, stamp, writer): each writer's ops keep their
 * order (its stamps never decrease). */
static int sort_ops(struct op *ops, size_t n)
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
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        struct logfs_range *nr = realloc(c->r, cap * sizeof *nr);
        if (!nr)
            return (c->rc = LOGFS_ENOMEM);
        c->r = nr;
        c->cap = cap;
    }
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
    if (ep->mixed && (rc = sort_ops(ep->ops, ep->nops)))
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

static int plan_with_map(struct epoch *ep)
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

/* ---- the compact form ---------------------------------------------------- */

/* Index of the first block of @p g that ends after @p x (may be g->count). */
static uint64_t first_ending_after(const struct cgroup *g, uint64_t x)
{
    if (x < g->off + g->bl)
        return 0;
    if (g->count == 1)
        return 1;
    return (x - g->off - g->bl) / g->stride + 1;
}

/* Number of blocks of @p g that start before @p x. */
static uint64_t starting_before(const struct cgroup *g, uint64_t x)
{
    uint64_t k;
    if (x <= g->off)
        return 0;
    if (g->count == 1)
        return 1;
    k = (x - g->off - 1) / g->stride + 1;
    return k < g->count ? k : g->count;
}

static uint64_t block_off(const struct cgroup *g, uint64_t i)
{
    return g->off + i * g->stride;
}

static uint64_t cgroup_end(const struct cgroup *g)
{
    return block_off(g, g->count - 1) + g->bl;
}

/* Bytes of @p g below file offset @p x. */
static uint64_t bytes_below(const struct cgroup *g, uint64_t x)
{
    uint64_t k = starting_before(g, x), tail;
    if (k == 0)
        return 0;
    tail = x - block_off(g, k - 1);
    return (k - 1) * g->bl + (tail < g->bl ? tail : g->bl);
}

/* Does [x, x + len) meet a block of @p g? */
static int meets(uint64_t x, uint64_t len, const struct cgroup *g)
{
    uint64_t i;
    if (x + len <= g->off)
        return 0;
    i = first_ending_after(g, x);
    return i < g->count && block_off(g, i) < x + len;
}

/* Do two strided groups share a byte?  1 yes, 0 no, -1 over budget. */
static int groups_meet(const struct cgroup *a, const struct cgroup *b, uint64_t *budget)
{
    uint64_t lo = a->off > b->off ? a->off : b->off;
    uint64_t ea = cgroup_end(a), eb = cgroup_end(b), hi = ea < eb ? ea : eb;
    if (lo >= hi)
        return 0;
    if (a->stride == b->stride) {
        /* Same period: where b's blocks fall within a's period decides. */
        if (a->off > b->off) {
            const struct cgroup *t = a;
            a = b;
            b = t;
        }
        uint64_t q = (b->off - a->off) / a->stride, d = (b->off - a->off) % a->stride;
        return (d < a->bl && q < a->count) || (d + b->bl > a->stride && q + 1 < a->count);
    }
    /* Different periods: test each block of the sparser one in [lo, hi). */
    uint64_t a0 = first_ending_after(a, lo), a1 = starting_before(a, hi);
    uint64_t b0 = first_ending_after(b, lo), b1 = starting_before(b, hi);
    if (a1 - a0 > b1 - b0) {
        const struct cgroup *t = a;
        a = b;
        b = t;
        a0 = b0;
        a1 = b1;
    }
    if (a1 - a0 > *budget)
        return -1;
    *budget -= a1 - a0;
    for (uint64_t i = a0; i < a1; i++)
        if (meets(block_off(a, i), a->bl, b))
            return 1;
    return 0;
}

static int cmp_cgroup(const void *x, const void *y)
{
    const struct cgroup *a = x, *b = y;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    if (a->writer != b->writer)
        return a->writer < b->writer ? -1 : 1;
    return a->dlog < b->dlog ? -1 : a->dlog > b->dlog;
}

/* 1 if no two blocks of the epoch share a byte, 0 if some do or the check
 * would cost too much, LOGFS_ENOMEM. */
static int disjoint(const struct epoch *ep)
{
    uint64_t budget = 4 * (uint64_t)(ep->nsingles + ep->nstrided) + ((uint64_t)1 << 22);
    size_t *active, nactive = 0, i, j;
    int ok = 1;

    for (i = 1; i < ep->nsingles; i++)
        if (ep->singles[i - 1].off + ep->singles[i - 1].bl > ep->singles[i].off)
            return 0;
    /* Strided against strided: a sweep over their extents. */
    active = malloc((ep->nstrided ? ep->nstrided : 1) * sizeof *active);
    if (!active)
        return LOGFS_ENOMEM;
    for (i = 0; i < ep->nstrided && ok; i++) {
        const struct cgroup *g = &ep->strided[i];
        size_t keep = 0;
        for (j = 0; j < nactive && ok; j++) {
            const struct cgroup *a = &ep->strided[active[j]];
            if (cgroup_end(a) <= g->off)
                continue;
            active[keep++] = active[j];
            if (budget == 0)
                ok = 0;
            else
                budget--;
            if (ok && groups_meet(a, g, &budget) != 0)
                ok = 0;
        }
        nactive = keep;
        active[nactive++] = i;
    }
    free(active);
    /* Single blocks against strided groups: the singles inside each extent. */
    for (i = 0; i < ep->nstrided && ok; i++) {
        const struct cgroup *g = &ep->strided[i];
        uint64_t end = cgroup_end(g);
        size_t lo = 0, hi = ep->nsingles;
        while (lo < hi) { /* first single ending after g->off */
            size_t mid = lo + (hi - lo) / 2;
            if (ep->singles[mid].off + ep->singles[mid].bl <= g->off)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (j = lo; j < ep->nsingles && ep->singles[j].off < end && ok; j++) {
            if (budget == 0 || meets(ep->singles[j].off, ep->singles[j].bl, g))
                ok = 0;
            budget--;
        }
    }
    return ok;
}

static void free_compact(struct epoch *ep)
{
    free(ep->singles);
    free(ep->sprefix);
    free(ep->strided);
    free(ep->cl);
    ep->singles = ep->strided = NULL;
    ep->sprefix = NULL;
    ep->cl = NULL;
    ep->nsingles = ep->nstrided = ep->ncl = 0;
}

/* Backward groups (negative stride) longer than this take the range map;
 * shorter ones become single blocks.  MPI file views never go backwards,
 * so they only come from a few writes issued in descending order. */
#define BACKWARD_MAX 1024

/* Try the compact form.  @return 1 done, 0 not applicable, LOGFS_ENOMEM. */
static int plan_compact(struct epoch *ep)
{
    size_t ns = 0, nt = 0, i;
    int rc;

    for (i = 0; i < ep->nops; i++) {
        const struct logfs_group *g = &ep->ops[i].g;
        if (g->count == 0)
            continue;
        if (g->count == 1 || g->stride == (int64_t)g->blocklen)
            ns++;
        else if (g->stride > (int64_t)g->blocklen)
            nt++;
        else if (g->stride <= -(int64_t)g->blocklen && g->count <= BACKWARD_MAX)
            ns += g->count; /* blocks going backwards: each on its own */
        else
            return 0; /* blocks overlap within the group, or too many backwards */
    }
    ep->singles = malloc((ns ? ns : 1) * sizeof *ep->singles);
    ep->sprefix = malloc((ns ? ns : 1) * sizeof *ep->sprefix);
    ep->strided = malloc((nt ? nt : 1) * sizeof *ep->strided);
    if (!ep->singles || !ep->sprefix || !ep->strided)
        goto nomem;
    for (i = 0; i < ep->nops; i++) {
        const struct op *o = &ep->ops[i];
        const struct logfs_group *g = &o->g;
        if (g->count == 0)
            continue;
        if (g->count == 1 || g->stride == (int64_t)g->blocklen)
            ep->singles[ep->nsingles++] = (struct cgroup){g->offset, g->count * g->blocklen, 0, 1, o->dlog, o->writer};
        else if (g->stride < 0)
            for (uint64_t k = 0; k < g->count; k++)
                ep->singles[ep->nsingles++] =
                    (struct cgroup){logfs_group_block(g, k), g->blocklen, 0, 1, o->dlog + k * g->blocklen, o->writer};
        else
            ep->strided[ep->nstrided++] =
                (struct cgroup){g->offset, g->blocklen, (uint64_t)g->stride, g->count, o->dlog, o->writer};
    }
    qsort(ep->singles, ep->nsingles, sizeof *ep->singles, cmp_cgroup);
    qsort(ep->strided, nt, sizeof *ep->strided, cmp_cgroup);
    rc = disjoint(ep);
    if (rc != 1) {
        free_compact(ep);
        return rc;
    }
    ep->total = 0;
    for (i = 0; i < ns; i++) {
        ep->sprefix[i] = ep->total;
        ep->total += ep->singles[i].bl;
    }
    /* Clusters of strided groups, with byte prefix sums. */
    ep->cl = malloc((nt ? nt : 1) * sizeof *ep->cl);
    if (!ep->cl)
        goto nomem;
    uint64_t before = 0;
    for (i = 0; i < nt; i++) {
        const struct cgroup *g = &ep->strided[i];
        struct cluster *c = ep->ncl ? &ep->cl[ep->ncl - 1] : NULL;
        if (!c || g->off >= c->end) {
            c = &ep->cl[ep->ncl++];
            *c = (struct cluster){g->off, 0, before, i, 0};
        }
        c->n++;
        if (cgroup_end(g) > c->end)
            c->end = cgroup_end(g);
        before += g->count * g->bl;
    }
    ep->total += before;
    ep->compact = 1;
    return 1;
nomem:
    free_compact(ep);
    return LOGFS_ENOMEM;
}

static int finish_epoch(struct epoch *ep, unsigned flags)
{
    int rc = 0;
    if (!ep->need_map && !(flags & LOGFS_PLAN_NO_COMPACT))
        rc = plan_compact(ep);
    if (rc == 0)
        rc = plan_with_map(ep);
    else if (rc == 1)
        rc = LOGFS_OK;
    free(ep->ops);
    ep->ops = NULL;
    ep->nops = ep->capops = 0;
    return rc;
}

static char *datalog_path(const char *metalog)
{
    size_t n = strlen(metalog), k = strlen(".metalog");
    char *s = malloc(n + sizeof ".datalog");
    if (!s)
        return NULL;
    if (n >= k && !strcmp(metalog + n - k, ".metalog"))
        n -= k;
    memcpy(s, metalog, n);
    strcpy(s + n, ".datalog");
    return s;
}

int logfs_plan_build(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                     struct logfs_plan **out, struct logfs_error *err)
{
    return logfs_plan_build_flags(metalogs, n, o, 0, out, err);
}

/* Read the metalogs of one session into a new plan whose epochs still hold
 * their ops (not yet finished). */
static int load_session(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                        struct logfs_plan **out, struct logfs_error *err)
{
    struct logfs_reader **rd = NULL;
    struct logfs_plan *p;
    int rc = LOGFS_OK;

    *out = NULL;
    if (n == 0 || n > INT32_MAX)
        return logfs_fail(err, LOGFS_EINVAL, 0, "replay needs at least one metalog");
    p = calloc(1, sizeof *p);
    rd = calloc(n, sizeof *rd);
    if (!p || !rd || !(p->datalogs = calloc(n, sizeof *p->datalogs)) ||
        !(p->warnings = calloc(n, sizeof *p->warnings)) ||
        !(p->sealed = calloc(n, sizeof *p->sealed)) || !(p->procs = calloc(n, sizeof *p->procs))) {
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
        goto out;
    }
    p->nwriters = (uint32_t)n;
    /* Open all first: the headers must agree before anything is planned. */
    for (size_t i = 0; i < n; i++) {
        struct logfs_reader *r;
        const struct logfs_header *h;
        if ((rc = logfs_reader_open(metalogs[i], &r, err)))
            goto out;
        h = logfs_reader_header(r);
        if (i == 0)
            p->file_id = h->file_id;
        if (h->file_id != p->file_id || h->nwriters != n || rd[h->rank]) {
            rc = logfs_fail(err, LOGFS_EMISMATCH, 0,
                            "metalog %s (file id %llu, rank %u of %u) does not fit with the other %zu",
                            metalogs[i], (unsigned long long)h->file_id, h->rank, h->nwriters, n - 1);
            logfs_reader_close(r);
            goto out;
        }
        rd[h->rank] = r;
        if (!(p->datalogs[h->rank] = datalog_path(metalogs[i]))) {
            rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
            goto out;
        }
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = read_writer(p, rd[i], p->datalogs[i], o, err);
out:
    if (rd)
        for (size_t i = 0; i < n; i++)
            logfs_reader_close(rd[i]);
    free(rd);
    if (rc) {
        logfs_plan_free(p);
        return rc;
    }
    *out = p;
    return LOGFS_OK;
}

int logfs_plan_build_flags(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                           unsigned flags, struct logfs_plan **out, struct logfs_error *err)
{
    static const struct logfs_plan_opts defaults = {0, 0};
    struct logfs_plan *p;
    int rc = load_session(metalogs, n, o ? o : &defaults, &p, err);

    *out = NULL;
    if (rc)
        return rc;
    for (size_t e = 0; e < p->nepochs && !rc; e++)
        if ((rc = finish_epoch(&p->epochs[e], flags)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
    if (rc) {
        logfs_plan_free(p);
        return rc;
    }
    *out = p;
    return LOGFS_OK;
}

/* ---- several sessions ---------------------------------------------------- */

/* A run: one writer's ops of one (epoch, collective-call) group under one
 * STAMP; runs are placed in time, and their ops with them. */
struct run {
    uint64_t raw;      /* its STAMP clock */
    uint64_t place;    /* its place in time (>= raw) */
    uint64_t proc;     /* the writing process (0: unknown) */
    uint32_t session, writer;
    size_t group;      /* groups count across all sessions, in order */
};

struct runs {
    struct run *r;
    size_t n, cap;
    size_t *group_first; /* group g's runs: [group_first[g], group_first[g + 1]) */
    size_t ngroups, gcap;
    size_t *session_first_group; /* session s: groups [sfg[s], sfg[s + 1]) */
};

static int push_run(struct runs *rs, const struct run *r)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 64;
        struct run *v = realloc(rs->r, cap * sizeof *v);
        if (!v)
            return LOGFS_ENOMEM;
        rs->r = v;
        rs->cap = cap;
    }
    rs->r[rs->n++] = *r;
    return LOGFS_OK;
}

static int new_group(struct runs *rs)
{
    if (rs->ngroups + 1 >= rs->gcap) {
        size_t cap = rs->gcap ? 2 * rs->gcap : 64;
        size_t *v = realloc(rs->group_first, cap * sizeof *v);
        if (!v)
            return LOGFS_ENOMEM;
        rs->group_first = v;
        rs->gcap = cap;
    }
    rs->group_first[rs->ngroups++] = rs->n;
    rs->group_first[rs->ngroups] = rs->n;
    return LOGFS_OK;
}

/* Cut session @p s (plan @p p, writers from @p base) into groups and runs;
 * each op's seq becomes the index of its run. */
static int cut_runs(struct runs *rs, struct logfs_plan *p, uint32_t s, uint32_t base)
{
    int rc = LOGFS_OK;
    for (size_t e = 0; e < p->nepochs && !rc; e++) {
        struct epoch *ep = &p->epochs[e];
        size_t i = 0;
        if ((rc = sort_ops(ep->ops, ep->nops)))
            break;
        while (i < ep->nops && !rc) {
            uint64_t seq = ep->ops[i].seq;
            size_t j;
            if ((rc = new_group(rs)))
                break;
            for (j = i; j < ep->nops && ep->ops[j].seq == seq && !rc; j++) {
                struct op *o = &ep->ops[j];
                if (j == i || o[-1].writer != o->writer || o[-1].stamp != o->stamp) {
                    struct run r = {o->stamp, o->stamp, p->procs[o->writer], s, base + o->writer,
                                    rs->ngroups - 1};
                    rc = push_run(rs, &r);
                    rs->group_first[rs->ngroups] = rs->n;
                }
                o[0].seq = rs->n - 1; /* (o[0]: seq of later ops is still compared above) */
            }
            i = j;
        }
    }
    return rc;
}

/* A run in a process's order: (process, clock, group, run index). */
struct in_process {
    uint64_t proc, raw;
    size_t group, run;
};

static int by_process(const void *x, const void *y)
{
    const struct in_process *a = x, *b = y;
    if (a->proc != b->proc)
        return a->proc < b->proc ? -1 : 1;
    if (a->raw != b->raw)
        return a->raw < b->raw ? -1 : 1;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* One pass of the session rule: every group after every earlier group of
 * its session, and a writer's runs within a group in their order.
 * @return nonzero if a place moved. */
static int session_pass(struct runs *rs, size_t nsessions, uint64_t *last)
{
    int moved = 0;
    for (size_t s = 0; s < nsessions; s++) {
        uint64_t before = 0; /* the latest place of the groups so far */
        int any = 0;
        for (size_t g = rs->session_first_group[s]; g < rs->session_first_group[s + 1]; g++) {
            uint64_t most = before;
            for (size_t k = rs->group_first[g]; k < rs->group_first[g + 1]; k++) {
                struct run *r = &rs->r[k];
                uint64_t at = any ? before + 1 : 0;
                if (last[r->writer] != UINT64_MAX && last[r->writer] + 1 > at)
                    at = last[r->writer] + 1; /* the writer's earlier run */
                if (r->place < at) {
                    r->place = at;
                    moved = 1;
                }
                last[r->writer] = r->place;
                if (r->place > most)
                    most = r->place;
            }
            if (rs->group_first[g + 1] > rs->group_first[g]) {
                before = most;
                any = 1;
            }
        }
    }
    return moved;
}

/* One pass of the process rule: a process's runs, in the order it made
 * them (by its clock), each later than the one before. */
static int process_pass(struct runs *rs, const struct in_process *order, size_t n)
{
    int moved = 0;
    for (size_t i = 1; i < n; i++) {
        struct run *a = &rs->r[order[i - 1].run], *b = &rs->r[order[i].run];
        if (a->proc == b->proc && b->place <= a->place) {
            b->place = a->place + 1;
            moved = 1;
        }
    }
    return moved;
}

/*
 * Give every op of the sessions its place in time (in op.seq).  Three rules,
 * applied until none moves a place (or a bound on the passes, for logs of
 * racy programs whose rules contradict each other: the result is still the
 * same on every replayer):
 *  - a run is placed no earlier than its STAMP clock;
 *  - within a session, the groups of (epoch, collective-call count) follow
 *    each other as in a plan of the session alone: each is placed after
 *    every run of the groups before it;
 *  - a process's runs, in every session, follow each other in the order it
 *    made them (its clock strictly increases and stamps every switch of
 *    handle), even where the session rule moved one of them later (a
 *    process that lags behind the others in collective calls does that).
 * So a run another session began after one ended (sync, barrier, sync) is
 * placed after it, and a process's writes through two handles keep their
 * program order.
 */
static int place_in_time(struct logfs_plan **ps, size_t nsessions, const size_t *counts)
{
    struct runs rs;
    struct in_process *order = NULL;
    size_t nproc = 0, total = 0;
    uint64_t *last = NULL;
    uint32_t base = 0;
    int rc = LOGFS_OK;

    memset(&rs, 0, sizeof rs);
    for (size_t s = 0; s < nsessions; s++)
        total += counts[s];
    rs.session_first_group = calloc(nsessions + 1, sizeof *rs.session_first_group);
    last = malloc(total * sizeof *last);
    if (!rs.session_first_group || !last)
        rc = LOGFS_ENOMEM;
    for (size_t s = 0; s < nsessions && !rc; s++) {
        rs.session_first_group[s] = rs.ngroups;
        rc = cut_runs(&rs, ps[s], (uint32_t)s, base);
        base += (uint32_t)counts[s];
        rs.session_first_group[s + 1] = rs.ngroups;
    }
    if (!rc && rs.n && !(order = malloc(rs.n * sizeof *order)))
        rc = LOGFS_ENOMEM;
    if (!rc) {
        for (size_t k = 0; k < rs.n; k++)
            if (rs.r[k].proc)
                order[nproc++] = (struct in_process){rs.r[k].proc, rs.r[k].raw, rs.r[k].group, k};
        qsort(order, nproc, sizeof *order, by_process);
        for (int pass = 0; pass < 64; pass++) {
            for (size_t w = 0; w < total; w++)
                last[w] = UINT64_MAX;
            int moved = session_pass(&rs, nsessions, last);
            moved |= process_pass(&rs, order, nproc);
            if (!moved)
                break;
        }
        for (size_t s = 0; s < nsessions; s++)
            for (size_t e = 0; e < ps[s]->nepochs; e++)
                for (size_t i = 0; i < ps[s]->epochs[e].nops; i++) {
                    struct op *o = &ps[s]->epochs[e].ops[i];
                    o->seq = rs.r[o->seq].place;
                }
    }
    free(order);
    free(last);
    free(rs.r);
    free(rs.group_first);
    free(rs.session_first_group);
    return rc;
}

/* Move session @p s's ops, writers and resizes into plan @p m (one epoch),
 * its writers becoming m's writers [base, base + s->nwriters). */
static int absorb(struct logfs_plan *m, struct logfs_plan *s, uint32_t base)
{
    struct epoch *all = &m->epochs[0];
    int rc;

    for (uint32_t w = 0; w < s->nwriters; w++) {
        m->datalogs[base + w] = s->datalogs[w];
        m->warnings[base + w] = s->warnings[w];
        m->sealed[base + w] = s->sealed[w];
        s->datalogs[w] = s->warnings[w] = NULL;
    }
    for (size_t e = 0; e < s->nepochs; e++) {
        struct epoch *ep = &s->epochs[e];
        for (size_t i = 0; i < ep->nops; i++)
            ep->ops[i].writer += base;
        if ((rc = push_ops(&all->ops, &all->nops, &all->capops, ep->ops, ep->nops)))
            return rc;
        if (ep->rs.present) {
            if (!all->rs.present) {
                all->rs = ep->rs;
            } else {
                if (ep->rs.truncate_to < all->rs.truncate_to)
                    all->rs.truncate_to = ep->rs.truncate_to;
                if (ep->rs.extend_to > all->rs.extend_to)
                    all->rs.extend_to = ep->rs.extend_to;
            }
        }
    }
    return LOGFS_OK;
}

int logfs_plan_build_sessions(const char *const *metalogs, const size_t *counts, size_t nsessions,
                              const struct logfs_plan_opts *o, struct logfs_plan **out,
                              struct logfs_error *err)
{
    static const struct logfs_plan_opts defaults = {0, 0};
    struct logfs_plan *m = NULL;
    size_t total = 0, at = 0;
    int rc = LOGFS_OK;

    *out = NULL;
    if (nsessions == 1)
        return logfs_plan_build(metalogs, counts[0], o, out, err);
    if (!o)
        o = &defaults;
    for (size_t i = 0; i < nsessions; i++) {
        if (counts[i] == 0 || counts[i] > INT32_MAX - total)
            return logfs_fail(err, LOGFS_EINVAL, 0, "session %zu: bad writer count %zu", i, counts[i]);
        total += counts[i];
    }
    if (total == 0)
        return logfs_fail(err, LOGFS_EINVAL, 0, "replay needs at least one metalog");
    m = calloc(1, sizeof *m);
    if (!m || !(m->datalogs = calloc(total, sizeof *m->datalogs)) ||
        !(m->warnings = calloc(total, sizeof *m->warnings)) ||
        !(m->sealed = calloc(total, sizeof *m->sealed)) || grow_epochs(m, 1)) {
        logfs_plan_free(m);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    }
    m->nwriters = (uint32_t)total;
    struct logfs_plan **ps = calloc(nsessions, sizeof *ps);
    if (!ps)
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    for (size_t i = 0; i < nsessions && !rc; i++) {
        rc = load_session(metalogs + at, counts[i], o, &ps[i], err);
        at += counts[i];
    }
    if (!rc) {
        m->file_id = ps[0]->file_id;
        if ((rc = place_in_time(ps, nsessions, counts)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
    }
    at = 0;
    for (size_t i = 0; i < nsessions && !rc; i++) {
        if ((rc = absorb(m, ps[i], (uint32_t)at)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
        at += counts[i];
    }
    for (size_t i = 0; ps && i < nsessions; i++)
        logfs_plan_free(ps[i]);
    free(ps);
    if (!rc) {
        /* every op through the range map, in its place in time */
        m->epochs[0].need_map = 1;
        m->epochs[0].mixed = 1;
        if ((rc = finish_epoch(&m->epochs[0], 0)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
    }
    if (rc) {
        logfs_plan_free(m);
        return rc;
    }
    *out = m;
    return LOGFS_OK;
}

void logfs_plan_free(struct logfs_plan *p)
{
    if (!p)
        return;
    for (size_t e = 0; e < p->nepochs; e++) {
        free(p->epochs[e].ops);
        free(p->epochs[e].pieces);
        free(p->epochs[e].prefix);
        free_compact(&p->epochs[e]);
    }
    for (uint32_t i = 0; p->datalogs && i < p->nwriters; i++)
        free(p->datalogs[i]);
    for (uint32_t i = 0; p->warnings && i < p->nwriters; i++)
        free(p->warnings[i]);
    free(p->datalogs);
    free(p->warnings);
    free(p->sealed);
    free(p->procs);
    free(p->epochs);
    free(p);
}

uint64_t logfs_plan_nepochs(const struct logfs_plan *p)
{
    return p->nepochs;
}

uint32_t logfs_plan_nwriters(const struct logfs_plan *p)
{
    return p->nwriters;
}

uint64_t logfs_plan_file_id(const struct logfs_plan *p)
{
    return p->file_id;
}

const char *logfs_plan_datalog(const struct logfs_plan *p, uint32_t rank)
{
    return rank < p->nwriters ? p->datalogs[rank] : NULL;
}

const char *logfs_plan_warning(const struct logfs_plan *p, uint32_t rank)
{
    return rank < p->nwriters ? p->warnings[rank] : NULL;
}

uint64_t logfs_plan_writer_epochs(const struct logfs_plan *p, uint32_t rank)
{
    return rank < p->nwriters ? p->sealed[rank] : 0;
}

int logfs_plan_check_sealed(const struct logfs_plan *p, const uint64_t *promised,
                            struct logfs_error *err)
{
    for (uint32_t w = 0; w < p->nwriters; w++)
        if (p->sealed[w] < promised[w])
            return logfs_fail(err, LOGFS_ELOST, 0,
                              "writer %" PRIu32 " closed its log after %" PRIu64 " epochs, but "
                              "its metalog seals only %" PRIu64 ": synced data is missing "
                              "(a truncated, or older copy of the log?)",
                              w, promised[w], p->sealed[w]);
    return LOGFS_OK;
}

uint64_t logfs_plan_epoch_bytes(const struct logfs_plan *p, uint64_t e)
{
    return e < p->nepochs ? p->epochs[e].total : 0;
}

int logfs_plan_resize(const struct logfs_plan *p, uint64_t e, struct logfs_resize *rs)
{
    if (e >= p->nepochs)
        return LOGFS_EINVAL;
    *rs = p->epochs[e].rs;
    return LOGFS_OK;
}

/* Byte rank t of the epoch's @p total bytes split m ways, rounded down. */
static uint64_t cut_point(uint64_t total, uint32_t r, uint32_t m)
{
    return (uint64_t)((unsigned __int128)total * r / m);
}

/* Where the pieces of a domain go: the caller's piece callback (adjacent
 * pieces of one writer, contiguous in its datalog, merged) or its run
 * callback (each writer's pieces gathered into strided runs). */
struct sink {
    logfs_replay_fn piece_fn;
    logfs_replay_run_fn run_fn;
    void *arg;
    struct logfs_replay_piece pend; /* piece mode; length 0: none */
    struct logfs_replay_run *wr;    /* run mode, per writer; count 0: none */
    uint32_t nw;
};

static int sink_piece(struct sink *s, const struct logfs_replay_piece *q)
{
    int rc = 0;
    if (s->piece_fn) {
        struct logfs_replay_piece *pd = &s->pend;
        if (pd->length && pd->writer == q->writer && pd->offset + pd->length == q->offset &&
            pd->dlog_off + pd->length == q->dlog_off) {
            pd->length += q->length;
            return 0;
        }
        if (pd->length)
            rc = s->piece_fn(s->arg, pd);
        *pd = *q;
        return rc;
    }
    struct logfs_replay_run *r = &s->wr[q->writer];
    if (r->count) {
        if (r->count == 1 && q->offset == r->offset + r->blocklen && q->dlog_off == r->dlog_off + r->blocklen) {
            r->blocklen += q->length; /* contiguous: one longer block */
            r->stride = r->blocklen;
            return 0;
        }
        if (q->length == r->blocklen && q->dlog_off == r->dlog_off + r->count * r->blocklen) {
            if (r->count == 1 && q->offset >= r->offset + r->blocklen) {
                r->stride = q->offset - r->offset;
                r->count = 2;
                return 0;
            }
            if (r->count > 1 && q->offset == r->offset + r->count * r->stride) {
                r->count++;
                return 0;
            }
        }
        if ((rc = s->run_fn(s->arg, r)) != 0)
            return rc;
    }
    *r = (struct logfs_replay_run){q->offset, q->length, q->length, 1, q->writer, q->dlog_off};
    return 0;
}

static int sink_flush(struct sink *s)
{
    int rc = 0;
    if (s->piece_fn) {
        if (s->pend.length)
            rc = s->piece_fn(s->arg, &s->pend);
        s->pend.length = 0;
        return rc;
    }
    for (uint32_t w = 0; w < s->nw && !rc; w++)
        if (s->wr[w].count) {
            rc = s->run_fn(s->arg, &s->wr[w]);
            s->wr[w].count = 0;
        }
    return rc;
}

/* Domain of byte ranks [b0, b1) in the range-map form. */
static int map_domain(const struct epoch *ep, uint64_t b0, uint64_t b1, uint64_t *lo, uint64_t *hi,
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
        if ((rc = sink_piece(s, &q)) != 0)
            return rc;
    }
    return LOGFS_OK;
}

/* Bytes of a compact epoch below file offset @p x: O(log + cluster size). */
static uint64_t compact_below(const struct epoch *ep, uint64_t x)
{
    size_t lo = 0, hi = ep->nsingles;
    uint64_t b = 0;
    while (lo < hi) { /* singles starting before x */
        size_t mid = lo + (hi - lo) / 2;
        if (ep->singles[mid].off < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo) {
        const struct cgroup *g = &ep->singles[lo - 1];
        uint64_t t = x - g->off;
        b = ep->sprefix[lo - 1] + (t < g->bl ? t : g->bl);
    }
    lo = 0;
    hi = ep->ncl;
    while (lo < hi) { /* clusters starting before x */
        size_t mid = lo + (hi - lo) / 2;
        if (ep->cl[mid].start < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo) {
        const struct cluster *c = &ep->cl[lo - 1];
        b += c->before;
        for (size_t i = 0; i < c->n; i++)
            b += bytes_below(&ep->strided[c->first + i], x);
    }
    return b;
}

/* File offset of the byte of rank @p b (< total) of a compact epoch. */
static uint64_t compact_byte_at(const struct epoch *ep, uint64_t b)
{
    uint64_t lo = 0, hi = LOGFS_MAX_FILE_END; /* below(lo) <= b < below(hi) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (compact_below(ep, mid) > b)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* A stream of blocks in file order: the blocks i .. end-1 of one strided
 * group, or (single) the singles i .. end-1. */
struct cursor {
    uint64_t next; /* file offset of the current block */
    const struct cgroup *g;
    uint64_t i, end;
    int single;
};

static void cursor_piece(const struct cursor *c, struct logfs_replay_piece *q)
{
    const struct cgroup *g = c->single ? &c->g[c->i] : c->g;
    uint64_t i = c->single ? 0 : c->i;
    *q = (struct logfs_replay_piece){block_off(g, i), g->bl, g->writer, g->dlog + i * g->bl};
}

static void clip(struct logfs_replay_piece *q, uint64_t lo, uint64_t hi)
{
    if (q->offset < lo) {
        q->length -= lo - q->offset;
        q->dlog_off += lo - q->offset;
        q->offset = lo;
    }
    if (q->offset + q->length > hi)
        q->length = hi - q->offset;
}

static void sift_down(struct cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l].next < h[m].next)
            m = l;
        if (l + 1 < n && h[l + 1].next < h[m].next)
            m = l + 1;
        if (m == i)
            return;
        struct cursor t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The runs of strided group @p g's blocks [i0, i1) clipped to [lo, hi). */
static int group_runs(const struct cgroup *g, uint64_t i0, uint64_t i1, uint64_t lo, uint64_t hi,
                      struct sink *s)
{
    struct cursor c = {0, g, i0, i1, 0};
    struct logfs_replay_piece q;
    struct logfs_replay_run r;
    uint64_t a = i0, b = i1;
    int rc;
    if (block_off(g, i0) < lo || i1 - i0 == 1) { /* clipped head (or the only block) */
        cursor_piece(&c, &q);
        clip(&q, lo, hi);
        r = (struct logfs_replay_run){q.offset, q.length, q.length, 1, q.writer, q.dlog_off};
        if ((rc = s->run_fn(s->arg, &r)) != 0 || i1 - i0 == 1)
            return rc;
        a++;
    }
    int tail = block_off(g, i1 - 1) + g->bl > hi;
    if (tail)
        b--;
    if (a < b) {
        r = (struct logfs_replay_run){block_off(g, a), g->bl, b - a > 1 ? g->stride : g->bl, b - a, g->writer,
                                      g->dlog + a * g->bl};
        if ((rc = s->run_fn(s->arg, &r)) != 0)
            return rc;
    }
    if (tail) {
        c.i = i1 - 1;
        cursor_piece(&c, &q);
        clip(&q, lo, hi);
        r = (struct logfs_replay_run){q.offset, q.length, q.length, 1, q.writer, q.dlog_off};
        return s->run_fn(s->arg, &r);
    }
    return 0;
}

/* Every block of a compact epoch inside [lo, hi), clipped to it. */
static int compact_domain(const struct epoch *ep, uint64_t lo, uint64_t hi, struct sink *s)
{
    size_t c0 = 0, c1 = ep->ncl, j0 = 0, j1 = ep->nsingles, n = 0, cap = 1;
    struct cursor *h;
    int rc = 0;

    while (c0 < c1) { /* first cluster ending after lo */
        size_t mid = c0 + (c1 - c0) / 2;
        if (ep->cl[mid].end <= lo)
            c0 = mid + 1;
        else
            c1 = mid;
    }
    for (c1 = c0; c1 < ep->ncl && ep->cl[c1].start < hi; c1++)
        cap += ep->cl[c1].n;
    while (j0 < j1) { /* first single ending after lo */
        size_t mid = j0 + (j1 - j0) / 2;
        if (ep->singles[mid].off + ep->singles[mid].bl <= lo)
            j0 = mid + 1;
        else
            j1 = mid;
    }
    for (j1 = j0; j1 < ep->nsingles && ep->singles[j1].off < hi; j1++)
        ;
    if (!(h = malloc(cap * sizeof *h)))
        return LOGFS_ENOMEM;
    for (size_t c = c0; c < c1; c++)
        for (size_t k = 0; k < ep->cl[c].n; k++) {
            const struct cgroup *g = &ep->strided[ep->cl[c].first + k];
            uint64_t i0 = first_ending_after(g, lo), i1 = starting_before(g, hi);
            if (i0 < i1)
                h[n++] = (struct cursor){block_off(g, i0), g, i0, i1, 0};
        }
    if (s->run_fn) {
        /* Each group's blocks as one run (plus clipped ends); singles
         * through the sink, which gathers them per writer. */
        for (size_t k = 0; k < n && !rc; k++)
            rc = group_runs(h[k].g, h[k].i, h[k].end, lo, hi, s);
        for (size_t j = j0; j < j1 && !rc; j++) {
            struct cursor c = {0, ep->singles, j, j1, 1};
            struct logfs_replay_piece q;
            cursor_piece(&c, &q);
            clip(&q, lo, hi);
            rc = sink_piece(s, &q);
        }
        free(h);
        return rc;
    }
    /* Pieces in file order: merge the streams. */
    if (j0 < j1)
        h[n++] = (struct cursor){ep->singles[j0].off, ep->singles, j0, j1, 1};
    for (size_t k = n / 2; k-- > 0;)
        sift_down(h, n, k);
    while (n > 0 && !rc) {
        struct logfs_replay_piece q;
        cursor_piece(&h[0], &q);
        clip(&q, lo, hi);
        rc = sink_piece(s, &q);
        if (++h[0].i == h[0].end)
            h[0] = h[--n];
        else
            h[0].next = h[0].single ? h[0].g[h[0].i].off : block_off(h[0].g, h[0].i);
        sift_down(h, n, 0);
    }
    free(h);
    return rc;
}

static int domain(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m, uint64_t *lo,
                  uint64_t *hi, struct sink *s)
{
    const struct epoch *ep;
    uint64_t b0, b1;
    int rc;

    *lo = *hi = 0;
    if (e >= p->nepochs || m == 0 || r >= m)
        return LOGFS_EINVAL;
    ep = &p->epochs[e];
    b0 = cut_point(ep->total, r, m);
    b1 = cut_point(ep->total, r + 1, m);
    if (b0 == b1)
        return LOGFS_OK;
    if (ep->compact) {
        *lo = compact_byte_at(ep, b0);
        *hi = compact_byte_at(ep, b1 - 1) + 1;
        rc = compact_domain(ep, *lo, *hi, s);
    } else {
        rc = map_domain(ep, b0, b1, lo, hi, s);
    }
    return rc ? rc : sink_flush(s);
}

int logfs_plan_domain(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                      uint64_t *lo, uint64_t *hi, logfs_replay_fn fn, void *arg)
{
    struct sink s;
    memset(&s, 0, sizeof s);
    s.piece_fn = fn;
    s.arg = arg;
    return domain(p, e, r, m, lo, hi, &s);
}

int logfs_plan_domain_runs(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                           uint64_t *lo, uint64_t *hi, logfs_replay_run_fn fn, void *arg)
{
    struct sink s;
    int rc;
    memset(&s, 0, sizeof s);
    s.run_fn = fn;
    s.arg = arg;
    s.nw = p->nwriters;
    if (!(s.wr = calloc(s.nw, sizeof *s.wr))) {
        *lo = *hi = 0;
        return LOGFS_ENOMEM;
    }
    rc = domain(p, e, r, m, lo, hi, &s);
    free(s.wr);
    return rc;
}

int logfs_plan_epoch_compact(const struct logfs_plan *p, uint64_t e)
{
    return e < p->nepochs && p->epochs[e].compact;
}
