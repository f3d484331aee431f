/*
 * The compact form of an epoch's plan: when no block of a strided group
 * shares a byte with any other block of the epoch, the strided groups are
 * kept as they were logged (sorted, with byte prefix sums) instead of one
 * piece per block, and a domain is cut by counting bytes below an offset.
 * Single blocks that overlap each other (HDF5 rewrites its superblock and
 * object headers from every process beside a strided dataset) are resolved
 * first in a range map of their own, in the order the range-map form
 * applies them, so the epoch stays compact.  Strided groups whose extents
 * overlap form clusters; within a domain their blocks are merged in file
 * order, or handed over as strided runs.
 */
#include "plan_internal.h"

#include <stdlib.h>

#include "rangemap.h"

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

/* Whether two of the (sorted) single blocks share a byte. */
static int singles_overlap(const struct epoch *ep)
{
    for (size_t i = 1; i < ep->nsingles; i++)
        if (ep->singles[i - 1].off + ep->singles[i - 1].bl > ep->singles[i].off)
            return 1;
    return 0;
}

/* 1 if no block of a strided group shares a byte with another block of
 * the epoch, 0 if one does or the check would cost too much, LOGFS_ENOMEM. */
static int disjoint(const struct epoch *ep)
{
    uint64_t budget = 4 * (uint64_t)(ep->nsingles + ep->nstrided) + ((uint64_t)1 << 22);
    size_t *active, nactive = 0, i, j;
    int ok = 1;

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
    /* Single blocks against strided groups: the singles inside each extent.
     * Singles are sorted by offset, but their ends need not ascend (they
     * may overlap each other here: a long block with a short one inside),
     * so the search starts where the longest could still reach g. */
    uint64_t maxbl = 0;
    for (j = 0; j < ep->nsingles; j++)
        if (ep->singles[j].bl > maxbl)
            maxbl = ep->singles[j].bl;
    for (i = 0; i < ep->nstrided && ok; i++) {
        const struct cgroup *g = &ep->strided[i];
        uint64_t end = cgroup_end(g);
        size_t lo = 0, hi = ep->nsingles;
        while (lo < hi) { /* first single that could end after g->off */
            size_t mid = lo + (hi - lo) / 2;
            if (ep->singles[mid].off + maxbl <= g->off)
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

struct resolved {
    struct epoch *ep;
    size_t n;
};

static int take_piece(void *arg, const struct logfs_range *r, int is_hole)
{
    struct resolved *c = arg;
    (void)is_hole;
    c->ep->singles[c->n++] = (struct cgroup){r->start, r->end - r->start, 0, 1, r->pos, (uint32_t)r->owner};
    return 0;
}

static int is_single(const struct logfs_group *g)
{
    return g->count >= 1 && (g->count == 1 || g->stride == (int64_t)g->blocklen || g->stride < 0);
}

/* The single blocks as the range-map form would leave them: inserted in its
 * order (plan_map.c), later ones winning.  The strided groups touch none of
 * them (disjoint), and a SETSIZE here cuts nothing (need_map is not set),
 * so the result is the range-map form's for these bytes. */
static int resolve_singles(struct epoch *ep)
{
    struct logfs_rangemap *m;
    int rc;

    if (ep->mixed && (rc = plan_sort_ops(ep->ops, ep->nops)))
        return rc;
    if ((rc = logfs_rangemap_create(&m)))
        return rc;
    for (size_t i = 0; i < ep->nops && !rc; i++) {
        const struct op *o = &ep->ops[i];
        const struct logfs_group *g = &o->g;
        if (!is_single(g))
            continue;
        if (g->stride >= 0)
            rc = logfs_rangemap_insert(m, g->offset, g->offset + g->count * g->blocklen, (int32_t)o->writer,
                                       o->dlog);
        else
            for (uint64_t k = 0; k < g->count && !rc; k++) {
                uint64_t off = logfs_group_block(g, k);
                rc = logfs_rangemap_insert(m, off, off + g->blocklen, (int32_t)o->writer, o->dlog + k * g->blocklen);
            }
    }
    size_t n = rc ? 0 : logfs_rangemap_count(m);
    if (!rc && n > ep->nsingles) { /* (pieces of overlapping blocks never outnumber them) */
        struct cgroup *s = realloc(ep->singles, n * sizeof *s);
        uint64_t *p = realloc(ep->sprefix, n * sizeof *p);
        if (s)
            ep->singles = s;
        if (p)
            ep->sprefix = p;
        if (!s || !p)
            rc = LOGFS_ENOMEM;
    }
    if (!rc) {
        struct resolved c = {ep, 0};
        logfs_rangemap_walk(m, take_piece, &c);
        ep->nsingles = c.n;
    }
    logfs_rangemap_destroy(m);
    return rc;
}

void plan_free_compact(struct epoch *ep)
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
int plan_compact(struct epoch *ep)
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
    if (rc == 1 && singles_overlap(ep))
        rc = resolve_singles(ep) ? LOGFS_ENOMEM : 1;
    if (rc != 1) {
        plan_free_compact(ep);
        return rc;
    }
    ep->total = 0;
    for (i = 0; i < ep->nsingles; i++) {
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
    plan_free_compact(ep);
    return LOGFS_ENOMEM;
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

/* The first byte and one past the last of a compact epoch: the singles are
 * sorted and disjoint, and so are the clusters. */
static void compact_extent(const struct epoch *ep, uint64_t *first, uint64_t *end)
{
    *first = UINT64_MAX;
    *end = 0;
    if (ep->nsingles) {
        const struct cgroup *last = &ep->singles[ep->nsingles - 1];
        *first = ep->singles[0].off;
        *end = last->off + last->bl;
    }
    if (ep->ncl) {
        if (ep->cl[0].start < *first)
            *first = ep->cl[0].start;
        if (ep->cl[ep->ncl - 1].end > *end)
            *end = ep->cl[ep->ncl - 1].end;
    }
}

/* File offset of the byte of rank @p b (< total) of a compact epoch.  A
 * read's domain is the whole epoch, whose ends need no search; a cut
 * between them bisects the epoch's extent, not the whole offset range
 * (each step counts the bytes below a point). */
uint64_t plan_compact_byte_at(const struct epoch *ep, uint64_t b)
{
    uint64_t lo, hi; /* below(lo) <= b < below(hi) */
    compact_extent(ep, &lo, &hi);
    if (b == 0)
        return lo;
    if (b == ep->total - 1)
        return hi - 1;
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
int plan_compact_domain(const struct epoch *ep, uint64_t lo, uint64_t hi, struct sink *s)
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
            rc = plan_sink_piece(s, &q);
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
        rc = plan_sink_piece(s, &q);
        if (++h[0].i == h[0].end)
            h[0] = h[--n];
        else
            h[0].next = h[0].single ? h[0].g[h[0].i].off : block_off(h[0].g, h[0].i);
        sift_down(h, n, 0);
    }
    free(h);
    return rc;
}
