/*
 * Range map as a B+-tree.  Ranges live in leaves of up to LEAF_CAP, in
 * sorted arrays, one array per field, so a search reads only the array it
 * compares; inner nodes route by start offset.
 *
 * Why not a binary tree: a random insert into a million-range red-black
 * tree costs ~20 dependent cache misses on the way down.  Here the way down
 * is three or four nodes whose upper levels stay in cache, and a range
 * costs 28 bytes of leaf plus the leaf's unused slots.
 *
 * Invariants (logfs_rangemap_check tests them all):
 *  - the leaves hold disjoint ranges in order, are chained in that order
 *    (prev/next) and all sit at depth m->height;
 *  - in an inner node key[0] is 0 and key[i] (i >= 1) is greater than every
 *    start under child[i-1] and at most every start under child[i].  Keys
 *    are never raised when the first range of a child shrinks or goes, so a
 *    range may reach past the key that routes to the next leaf: a lookup by
 *    offset checks the last range of the leaf before (lower_bound);
 *  - only the root leaf may be empty; an inner node has >= 1 child, the
 *    root inner node >= 2;
 *  - erasing keeps leaves at >= LEAF_CAP/2 ranges and inner nodes at >=
 *    FANOUT/2 children by merging with or sharing with a sibling under the
 *    same parent, so a live range costs at most ~2 x 28 bytes plus a
 *    little for headers and inner nodes (<= 64 B).  Appending splits the
 *    rightmost nodes 100/0 instead of 50/50, so a log that only appends
 *    fills its leaves completely (~29 B per range).
 */
#include "rangemap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

#define LEAF_CAP 32
#define LEAF_MIN (LEAF_CAP / 2)
#define FANOUT 32
#define INNER_MIN (FANOUT / 2)

struct inner;

/* First member of both node kinds. */
struct hdr {
    struct inner *parent; /* NULL at the root */
    uint32_t n;           /* ranges in a leaf, children in an inner node */
    uint32_t leaf;        /* 1: struct leaf, 0: struct inner */
};

struct leaf {
    struct hdr h;
    struct leaf *prev, *next;
    uint64_t start[LEAF_CAP], end[LEAF_CAP], pos[LEAF_CAP];
    int32_t owner[LEAF_CAP];
};

struct inner {
    struct hdr h;
    uint64_t key[FANOUT];
    struct hdr *child[FANOUT];
};

/*
 * Spare nodes: an insert takes every node it might need (a leaf split per
 * range placed, and an inner split per level above it) before it changes
 * anything, so that running out of memory leaves the map as it was.
 */
struct logfs_rangemap {
    struct hdr *root;
    struct leaf *first, *last; /* the leaf chain's ends; last: appends skip the search */
    struct leaf *finger;       /* the leaf the last insert or lookup went to, or NULL
                                * (a cache: a lookup through a const map sets it) */
    unsigned height;           /* inner levels above the leaves */
    size_t count;              /* ranges */
    size_t nleaves, ninners;   /* allocated, spares included */
    struct leaf *spare_leaves; /* chained through next */
    struct inner *spare_inners; /* chained through h.parent */
    size_t nspare_leaves, nspare_inners;
};

/* A position in the leaf chain; i == l->h.n is one past l's last range. */
struct cur {
    struct leaf *l;
    uint32_t i;
};

/* ---- nodes ------------------------------------------------------------- */

static size_t inners_needed(const struct logfs_rangemap *m)
{
    /* Two placements per insert (the new range, and the tail of a range the
     * cut puts back), each splitting at most every level and adding a root;
     * the second may meet the root the first added. */
    return 2 * ((size_t)m->height + 2);
}

static int reserve(struct logfs_rangemap *m)
{
    while (m->nspare_leaves < 2) {
        struct leaf *l = malloc(sizeof *l);
        if (!l)
            return LOGFS_ENOMEM;
        l->next = m->spare_leaves;
        m->spare_leaves = l;
        m->nspare_leaves++;
        m->nleaves++;
    }
    while (m->nspare_inners < inners_needed(m)) {
        struct inner *in = malloc(sizeof *in);
        if (!in)
            return LOGFS_ENOMEM;
        in->h.parent = m->spare_inners;
        m->spare_inners = in;
        m->nspare_inners++;
        m->ninners++;
    }
    return LOGFS_OK;
}

static struct leaf *new_leaf(struct logfs_rangemap *m)
{
    struct leaf *l = m->spare_leaves; /* reserve() guaranteed one */
    m->spare_leaves = l->next;
    m->nspare_leaves--;
    l->h = (struct hdr){NULL, 0, 1};
    l->prev = l->next = NULL;
    return l;
}

static struct inner *new_inner(struct logfs_rangemap *m)
{
    struct inner *in = m->spare_inners;
    m->spare_inners = in->h.parent;
    m->nspare_inners--;
    in->h = (struct hdr){NULL, 0, 0};
    in->key[0] = 0;
    return in;
}

/* Freed nodes refill the spares first: the next insert needs them anyway. */
static void free_leaf(struct logfs_rangemap *m, struct leaf *l)
{
    if (m->finger == l)
        m->finger = NULL;
    if (m->nspare_leaves < 2) {
        l->next = m->spare_leaves;
        m->spare_leaves = l;
        m->nspare_leaves++;
    } else {
        free(l);
        m->nleaves--;
    }
}

static void free_inner(struct logfs_rangemap *m, struct inner *in)
{
    if (m->nspare_inners < inners_needed(m)) {
        in->h.parent = m->spare_inners;
        m->spare_inners = in;
        m->nspare_inners++;
    } else {
        free(in);
        m->ninners--;
    }
}

static void free_tree(struct hdr *x)
{
    if (!x->leaf) {
        struct inner *in = (struct inner *)x;
        for (uint32_t i = 0; i < in->h.n; i++)
            free_tree(in->child[i]);
    }
    free(x);
}

int logfs_rangemap_create(struct logfs_rangemap **out)
{
    struct logfs_rangemap *m = calloc(1, sizeof *m);
    if (!m || reserve(m) != LOGFS_OK) {
        logfs_rangemap_destroy(m);
        *out = NULL;
        return LOGFS_ENOMEM;
    }
    m->first = m->last = new_leaf(m);
    m->root = &m->first->h;
    *out = m;
    return LOGFS_OK;
}

void logfs_rangemap_destroy(struct logfs_rangemap *m)
{
    if (!m)
        return;
    if (m->root)
        free_tree(m->root);
    while (m->spare_leaves) {
        struct leaf *l = m->spare_leaves;
        m->spare_leaves = l->next;
        free(l);
    }
    while (m->spare_inners) {
        struct inner *in = m->spare_inners;
        m->spare_inners = in->h.parent;
        free(in);
    }
    free(m);
}

/* ---- searching --------------------------------------------------------- */

/* The child of @p in whose key range holds @p off: the last i with key[i] <= off. */
static uint32_t route(const struct inner *in, uint64_t off)
{
    uint32_t lo = 1, hi = in->h.n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (in->key[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/*
 * Ask for every cache line of [p, p + len) at once: a binary search would
 * otherwise wait for them one after another, and they are all likely needed.
 */
static inline void prefetch(const void *p, size_t len)
{
#if defined(__GNUC__)
    for (size_t o = 0; o < len; o += 64)
        __builtin_prefetch((const char *)p + o);
#else
    (void)p;
    (void)len;
#endif
}

static struct leaf *find_leaf(const struct logfs_rangemap *m, uint64_t off)
{
    const struct hdr *x = m->root;
    const struct leaf *f = m->finger;
    /* Inserts often land next to the previous one (a writer's pieces go in
     * ascending order between another writer's).  An offset between the
     * first and the last start of a leaf is routed to that leaf: its starts
     * all lie within its keys. */
    if (f && f->h.n && f->start[0] <= off && off <= f->start[f->h.n - 1])
        return (struct leaf *)f;
    /* A reader's lookups go forward through the map: often the next leaf. */
    if (f && f->next && f->h.n && f->next->h.n && off > f->start[f->h.n - 1] &&
        f->next->start[0] <= off && off <= f->next->start[f->next->h.n - 1])
        return f->next;
    /* Each node is fetched whole as soon as its address is known: one wait
     * per level instead of one per probe of its binary search.  A leaf is
     * fetched whole too: an insert shifts all of its arrays anyway. */
    for (unsigned d = m->height; d > 0; d--) {
        x = ((const struct inner *)x)->child[route((const struct inner *)x, off)];
        prefetch(x, d > 1 ? sizeof(struct inner) : sizeof(struct leaf));
    }
    return (struct leaf *)x;
}

/* First i in @p l with end[i] > @p off, or l->h.n. */
static uint32_t first_end_after(const struct leaf *l, uint64_t off)
{
    uint32_t lo = 0, hi = l->h.n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (l->end[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first range with end > @p off (i == l->h.n if there is none). */
static struct cur lower_bound(const struct logfs_rangemap *m, uint64_t off)
{
    struct leaf *l = find_leaf(m, off);
    ((struct logfs_rangemap *)m)->finger = l; /* (the next lookup is likely near) */
    uint32_t i = first_end_after(l, off);
    /* Only the range holding off can start before l's key; it is then the
     * last range of the leaf before (see the invariants at the top). */
    if (i == 0 && l->prev && l->start[0] > off) {
        struct leaf *p = l->prev;
        if (p->end[p->h.n - 1] > off)
            return (struct cur){p, p->h.n - 1};
    }
    if (i == l->h.n && l->next)
        return (struct cur){l->next, 0};
    return (struct cur){l, i};
}

/* ---- inner nodes ------------------------------------------------------- */

static uint32_t child_index(const struct inner *p, const struct hdr *c)
{
    uint32_t k = 0;
    while (p->child[k] != c)
        k++;
    return k;
}

static void insert_child(struct logfs_rangemap *m, struct hdr *left, uint64_t key, struct hdr *right,
                         int append);

/*
 * Split the full @p p while putting @p right (separated by @p key) at @p k.
 * Appending splits 100/0: a log's inner nodes then stay full.
 */
static void split_inner(struct logfs_rangemap *m, struct inner *p, uint32_t k, uint64_t key,
                        struct hdr *right, int append)
{
    uint64_t keys[FANOUT + 1];
    struct hdr *kids[FANOUT + 1];
    struct inner *q = new_inner(m);
    uint32_t t = append && k == FANOUT ? FANOUT : (FANOUT + 1) / 2;

    memcpy(keys, p->key, k * sizeof *keys);
    memcpy(kids, p->child, k * sizeof *kids);
    keys[k] = key;
    kids[k] = right;
    memcpy(keys + k + 1, p->key + k, (FANOUT - k) * sizeof *keys);
    memcpy(kids + k + 1, p->child + k, (FANOUT - k) * sizeof *kids);

    memcpy(p->key, keys, t * sizeof *keys);
    memcpy(p->child, kids, t * sizeof *kids);
    p->h.n = t;
    q->key[0] = 0;
    memcpy(q->key + 1, keys + t + 1, (FANOUT - t) * sizeof *keys);
    memcpy(q->child, kids + t, (FANOUT + 1 - t) * sizeof *kids);
    q->h.n = FANOUT + 1 - t;
    for (uint32_t i = 0; i < t; i++)
        p->child[i]->parent = p;
    for (uint32_t i = 0; i < q->h.n; i++)
        q->child[i]->parent = q;
    insert_child(m, &p->h, keys[t], &q->h, append);
}

/* Put @p right just after @p left in left's parent, separated by @p key. */
static void insert_child(struct logfs_rangemap *m, struct hdr *left, uint64_t key, struct hdr *right,
                         int append)
{
    struct inner *p = left->parent;
    uint32_t k;

    if (!p) { /* left was the root: grow a level */
        p = new_inner(m);
        p->h.n = 2;
        p->key[1] = key;
        p->child[0] = left;
        p->child[1] = right;
        left->parent = right->parent = p;
        m->root = &p->h;
        m->height++;
        return;
    }
    k = child_index(p, left) + 1;
    if (p->h.n == FANOUT) {
        split_inner(m, p, k, key, right, append);
        return;
    }
    memmove(p->key + k + 1, p->key + k, (p->h.n - k) * sizeof *p->key);
    memmove(p->child + k + 1, p->child + k, (p->h.n - k) * sizeof *p->child);
    p->key[k] = key;
    p->child[k] = right;
    right->parent = p;
    p->h.n++;
}

static void fix_inner(struct logfs_rangemap *m, struct inner *p);

/* Drop child @p k of @p p (the child's memory is the caller's), then rebalance. */
static void remove_child(struct logfs_rangemap *m, struct inner *p, uint32_t k)
{
    /* Removing child 0 drops the key after it: the next child takes over
     * the lower end of p's range. */
    uint32_t kk = k ? k : 1;
    if (kk < p->h.n)
        memmove(p->key + kk, p->key + kk + 1, (p->h.n - kk - 1) * sizeof *p->key);
    memmove(p->child + k, p->child + k + 1, (p->h.n - k - 1) * sizeof *p->child);
    p->h.n--;
    fix_inner(m, p);
}

/* Merge or share children between siblings @p a and @p b = g->child[kb]. */
static void rebalance_inners(struct logfs_rangemap *m, struct inner *g, uint32_t kb, struct inner *a,
                             struct inner *b)
{
    uint64_t keys[2 * FANOUT];
    struct hdr *kids[2 * FANOUT];
    uint32_t na = a->h.n, total = na + b->h.n, t;

    memcpy(keys, a->key, na * sizeof *keys);
    memcpy(kids, a->child, na * sizeof *kids);
    keys[na] = g->key[kb];
    memcpy(keys + na + 1, b->key + 1, (b->h.n - 1) * sizeof *keys);
    memcpy(kids + na, b->child, b->h.n * sizeof *kids);

    t = total <= FANOUT ? total : total / 2;
    memcpy(a->key, keys, t * sizeof *keys);
    memcpy(a->child, kids, t * sizeof *kids);
    a->h.n = t;
    for (uint32_t i = 0; i < t; i++)
        kids[i]->parent = a;
    if (t == total) {
        free_inner(m, b);
        remove_child(m, g, kb);
        return;
    }
    g->key[kb] = keys[t];
    memcpy(b->key + 1, keys + t + 1, (total - t - 1) * sizeof *keys);
    memcpy(b->child, kids + t, (total - t) * sizeof *kids);
    b->h.n = total - t;
    for (uint32_t i = 0; i < b->h.n; i++)
        b->child[i]->parent = b;
}

/* Restore the fill rules for @p p after it lost a child. */
static void fix_inner(struct logfs_rangemap *m, struct inner *p)
{
    struct inner *g = p->h.parent;
    uint32_t k;

    if (!g) { /* the root: an only child takes its place */
        while (!m->root->leaf && m->root->n == 1) {
            struct inner *r = (struct inner *)m->root;
            m->root = r->child[0];
            m->root->parent = NULL;
            free_inner(m, r);
            m->height--;
        }
        return;
    }
    if (p->h.n >= INNER_MIN)
        return;
    k = child_index(g, &p->h);
    if (p->h.n == 0) {
        free_inner(m, p);
        remove_child(m, g, k);
        return;
    }
    if (g->h.n < 2)
        return; /* no sibling under the same parent: the thin end of a 100/0 split */
    if (k + 1 < g->h.n)
        rebalance_inners(m, g, k + 1, p, (struct inner *)g->child[k + 1]);
    else
        rebalance_inners(m, g, k, (struct inner *)g->child[k - 1], p);
}

/* ---- leaves ------------------------------------------------------------ */

/* Move @p k ranges from s[si] to d[di] (the same leaf is fine). */
static void leaf_move(struct leaf *d, uint32_t di, const struct leaf *s, uint32_t si, uint32_t k)
{
    memmove(d->start + di, s->start + si, k * sizeof *d->start);
    memmove(d->end + di, s->end + si, k * sizeof *d->end);
    memmove(d->pos + di, s->pos + si, k * sizeof *d->pos);
    memmove(d->owner + di, s->owner + si, k * sizeof *d->owner);
}

static void leaf_set(struct leaf *l, uint32_t i, uint64_t start, uint64_t end, int32_t owner, uint64_t pos)
{
    l->start[i] = start;
    l->end[i] = end;
    l->owner[i] = owner;
    l->pos[i] = pos;
}

static void unlink_leaf(struct logfs_rangemap *m, struct leaf *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else
        m->first = l->next;
    if (l->next)
        l->next->prev = l->prev;
    else
        m->last = l->prev;
}

/* Put a range at index @p i of @p l, splitting l if it is full. */
static void leaf_insert(struct logfs_rangemap *m, struct leaf *l, uint32_t i, uint64_t start, uint64_t end,
                        int32_t owner, uint64_t pos)
{
    struct leaf *r;
    int append;
    uint32_t t;

    m->count++;
    if (l->h.n < LEAF_CAP) {
        if (i < l->h.n)         /* (an append moves nothing: no calls) */
            leaf_move(l, i + 1, l, i, l->h.n - i);
        leaf_set(l, i, start, end, owner, pos);
        l->h.n++;
        return;
    }
    /* Of the LEAF_CAP + 1 ranges, the first t stay in l. */
    append = l == m->last && i == LEAF_CAP;
    t = append ? LEAF_CAP : (LEAF_CAP + 1) / 2;
    r = new_leaf(m);
    if (i < t) {
        leaf_move(r, 0, l, t - 1, LEAF_CAP - t + 1);
        leaf_move(l, i + 1, l, i, t - 1 - i);
        leaf_set(l, i, start, end, owner, pos);
    } else {
        leaf_move(r, 0, l, t, i - t);
        leaf_set(r, i - t, start, end, owner, pos);
        leaf_move(r, i - t + 1, l, i, LEAF_CAP - i);
    }
    l->h.n = t;
    r->h.n = LEAF_CAP + 1 - t;
    r->prev = l;
    r->next = l->next;
    if (l->next)
        l->next->prev = r;
    else
        m->last = r;
    l->next = r;
    insert_child(m, &l->h, r->start[0], &r->h, append);
}

/* Restore the fill rules for @p l after it lost ranges. */
static void fix_leaf(struct logfs_rangemap *m, struct leaf *l)
{
    struct inner *p = l->h.parent;
    struct leaf *a, *b;
    uint32_t k, kb;

    if (!p || l->h.n >= LEAF_MIN)
        return;
    k = child_index(p, &l->h);
    if (l->h.n == 0) {
        unlink_leaf(m, l);
        free_leaf(m, l);
        remove_child(m, p, k);
        return;
    }
    if (p->h.n < 2)
        return; /* no sibling under the same parent: the thin end of a 100/0 split */
    kb = k + 1 < p->h.n ? k + 1 : k;
    a = (struct leaf *)p->child[kb - 1];
    b = (struct leaf *)p->child[kb];
    if (a->h.n + b->h.n <= LEAF_CAP) {
        leaf_move(a, a->h.n, b, 0, b->h.n);
        a->h.n += b->h.n;
        unlink_leaf(m, b);
        free_leaf(m, b);
        remove_child(m, p, kb);
        return;
    }
    /* Share: both end up with at least half of LEAF_CAP. */
    uint32_t t = (a->h.n + b->h.n) / 2;
    if (a->h.n < t) {
        uint32_t d = t - a->h.n;
        leaf_move(a, a->h.n, b, 0, d);
        leaf_move(b, 0, b, d, b->h.n - d);
        b->h.n -= d;
    } else {
        uint32_t d = a->h.n - t;
        leaf_move(b, d, b, 0, b->h.n);
        leaf_move(b, 0, a, t, d);
        b->h.n += d;
    }
    a->h.n = t;
    p->key[kb] = b->start[0];
}

static void leaf_erase(struct logfs_rangemap *m, struct leaf *l, uint32_t i)
{
    leaf_move(l, i, l, i + 1, l->h.n - i - 1);
    l->h.n--;
    m->count--;
    fix_leaf(m, l);
}

/* Put a range that overlaps none where its start routes to. */
static void place(struct logfs_rangemap *m, uint64_t start, uint64_t end, int32_t owner, uint64_t pos)
{
    struct leaf *l = find_leaf(m, start);
    leaf_insert(m, l, first_end_after(l, start), start, end, owner, pos);
}

/* ---- the operations ---------------------------------------------------- */

/* Cut [start, end) out of the map; pieces keep their owner, positions move. */
static void cut(struct logfs_rangemap *m, uint64_t start, uint64_t end)
{
    struct cur c = lower_bound(m, start);
    struct leaf *l = c.l, *first, *next;
    uint32_t i = c.i;
    struct logfs_range tail = {0, 0, 0, 0}; /* a range to put back, if end > 0 */

    if (i == l->h.n || l->start[i] >= end)
        return; /* nothing overlaps */
    if (l->start[i] < start) {
        if (l->end[i] > end) {
            /* Both the head and the tail survive, each as the old owner's. */
            uint64_t e = l->end[i], p = l->pos[i] + (end - l->start[i]);
            l->end[i] = start;
            place(m, end, e, l->owner[i], p);
            return;
        }
        l->end[i] = start;
        i++;
    }
    /* Drop the covered ranges leaf by leaf.  Leaves emptied in the middle go
     * at once; the first and the last leaf touched are fixed at the end,
     * the last first: fixing it frees at most itself or a leaf after it. */
    first = l;
    for (;;) {
        uint32_t j = i;
        while (j < l->h.n && l->end[j] <= end)
            j++;
        leaf_move(l, i, l, j, l->h.n - j);
        l->h.n -= j - i;
        m->count -= j - i;
        if (i < l->h.n) { /* l[i] reaches past end: keep its tail */
            if (l->start[i] >= end)
                break;
            if (i + 1 < l->h.n || !l->next) {
                l->pos[i] += end - l->start[i];
                l->start[i] = end;
                break;
            }
            /* The last range of a leaf: its new start may pass the key of
             * the next leaf, so it goes back in through the routing. */
            tail = (struct logfs_range){end, l->end[i], l->owner[i], l->pos[i] + (end - l->start[i])};
            l->h.n--;
            m->count--;
            break;
        }
        if (!l->next || l->next->start[0] >= end)
            break;
        next = l->next;
        if (l != first)
            fix_leaf(m, l); /* empty: unlinks it */
        l = next;
        i = 0;
    }
    fix_leaf(m, l);
    if (first != l)
        fix_leaf(m, first);
    if (tail.end)
        place(m, tail.start, tail.end, tail.owner, tail.pos);
}

int logfs_rangemap_insert(struct logfs_rangemap *m, uint64_t start, uint64_t end,
                          int32_t owner, uint64_t pos)
{
    struct leaf *l, *pl, *sl;
    uint32_t i, pi, si, n;
    int join_prev, join_next;

    if (start >= end)
        return LOGFS_EINVAL;
    if (reserve(m) != LOGFS_OK)
        return LOGFS_ENOMEM;

    /* Appending past the last range is the common case for a log. */
    l = m->last;
    n = l->h.n;
    if (n == 0 || start >= l->end[n - 1]) {
        if (n && l->end[n - 1] == start && l->owner[n - 1] == owner &&
            l->pos[n - 1] + (start - l->start[n - 1]) == pos)
            l->end[n - 1] = end;
        else
            leaf_insert(m, l, n, start, end, owner, pos);
        return LOGFS_OK;
    }

    cut(m, start, end);

    /* Where the range goes, and the neighbours it may merge with. */
    l = find_leaf(m, start);
    i = first_end_after(l, start);
    pl = i > 0 ? l : l->prev;
    pi = i > 0 ? i - 1 : pl ? pl->h.n - 1 : 0;
    sl = i < l->h.n ? l : l->next;
    si = i < l->h.n ? i : 0;
    join_prev = pl && pl->end[pi] == start && pl->owner[pi] == owner &&
                pl->pos[pi] + (start - pl->start[pi]) == pos;
    join_next = sl && sl->start[si] == end && sl->owner[si] == owner && pos + (end - start) == sl->pos[si];
    m->finger = l; /* before any erase: freeing l clears it */

    if (join_prev && join_next) {
        pl->end[pi] = sl->end[si];
        leaf_erase(m, sl, si);
    } else if (join_prev) {
        pl->end[pi] = end;
    } else if (join_next && sl == l) {
        sl->start[si] = start; /* start still routes to l: keys stay right */
        sl->pos[si] = pos;
    } else if (join_next) {
        /* The successor opens the next leaf, whose key may be above start:
         * put the joined range here and drop the successor. */
        uint64_t e = sl->end[si];
        leaf_insert(m, l, i, start, e, owner, pos); /* a split of l leaves sl alone */
        leaf_erase(m, sl, si);
    } else {
        leaf_insert(m, l, i, start, end, owner, pos);
    }
    return LOGFS_OK;
}

int logfs_rangemap_remove(struct logfs_rangemap *m, uint64_t start, uint64_t end)
{
    if (start >= end)
        return LOGFS_EINVAL;
    if (reserve(m) != LOGFS_OK)
        return LOGFS_ENOMEM;
    cut(m, start, end);
    return LOGFS_OK;
}

int logfs_rangemap_query(const struct logfs_rangemap *m, uint64_t start, uint64_t end,
                         logfs_range_fn fn, void *arg)
{
    struct cur c = lower_bound(m, start);
    uint64_t at = start;
    struct logfs_range r;
    int rc;

    while (at < end) {
        if (c.i == c.l->h.n) {
            if (!c.l->next) {
                r = (struct logfs_range){at, end, -1, 0};
                return fn(arg, &r, 1);
            }
            c = (struct cur){c.l->next, 0};
        }
        uint64_t s = c.l->start[c.i], e = c.l->end[c.i];
        if (s >= end) {
            r = (struct logfs_range){at, end, -1, 0};
            return fn(arg, &r, 1);
        }
        if (s > at) {
            r = (struct logfs_range){at, s, -1, 0};
            if ((rc = fn(arg, &r, 1)) != 0)
                return rc;
            at = s;
        }
        r.start = at;
        r.end = e < end ? e : end;
        r.owner = c.l->owner[c.i];
        r.pos = c.l->pos[c.i] + (at - s);
        if ((rc = fn(arg, &r, 0)) != 0)
            return rc;
        at = r.end;
        c.i++;
    }
    return 0;
}

int logfs_rangemap_walk(const struct logfs_rangemap *m, logfs_range_fn fn, void *arg)
{
    for (const struct leaf *l = m->first; l; l = l->next)
        for (uint32_t i = 0; i < l->h.n; i++) {
            struct logfs_range r = {l->start[i], l->end[i], l->owner[i], l->pos[i]};
            int rc = fn(arg, &r, 0);
            if (rc)
                return rc;
        }
    return 0;
}

size_t logfs_rangemap_count(const struct logfs_rangemap *m)
{
    return m->count;
}

size_t logfs_rangemap_memory(const struct logfs_rangemap *m)
{
    return sizeof *m + m->nleaves * sizeof(struct leaf) + m->ninners * sizeof(struct inner);
}

size_t logfs_rangemap_print(const struct logfs_rangemap *m, char *buf, size_t len)
{
    size_t total = 0;
    for (const struct leaf *l = m->first; l; l = l->next)
        for (uint32_t i = 0; i < l->h.n; i++) {
            char piece[96];
            int k = snprintf(piece, sizeof piece, "[%llu-%llu:%d@%llu]", (unsigned long long)l->start[i],
                             (unsigned long long)(l->end[i] - 1), (int)l->owner[i],
                             (unsigned long long)l->pos[i]);
            if (len > 0 && total < len - 1) {
                size_t room = len - 1 - total;
                memcpy(buf + total, piece, (size_t)k < room ? (size_t)k : room);
            }
            total += (size_t)k;
        }
    if (len > 0)
        buf[total < len - 1 ? total : len - 1] = '\0';
    return total;
}

/* ---- checking ---------------------------------------------------------- */

struct check_ctx {
    const struct leaf *next_leaf; /* the leaf the chain says comes next */
    size_t count;
};

/* Check the subtree @p x at @p depth whose starts must lie in [lo, hi]. */
static int check_node(const struct logfs_rangemap *m, const struct hdr *x, const struct inner *parent,
                      unsigned depth, uint64_t lo, uint64_t hi, struct check_ctx *c)
{
    if (x->parent != parent)
        return -1;
    if (x->leaf) {
        const struct leaf *l = (const struct leaf *)x;
        if (depth != m->height || l != c->next_leaf || l->h.n > LEAF_CAP || (parent && l->h.n == 0))
            return -1;
        for (uint32_t i = 0; i < l->h.n; i++)
            if (l->start[i] < lo || l->start[i] > hi || l->start[i] >= l->end[i])
                return -1;
        c->next_leaf = l->next;
        c->count += l->h.n;
        return 0;
    }
    const struct inner *in = (const struct inner *)x;
    if (in->h.n < (parent ? 1u : 2u) || in->h.n > FANOUT || in->key[0] != 0)
        return -1;
    for (uint32_t i = 0; i < in->h.n; i++) {
        uint64_t clo = i ? in->key[i] : lo, chi = i + 1 < in->h.n ? in->key[i + 1] - 1 : hi;
        if (clo < lo || (i + 1 < in->h.n && (in->key[i + 1] <= clo || in->key[i + 1] > hi)))
            return -1;
        if (check_node(m, in->child[i], in, depth + 1, clo, chi, c) < 0)
            return -1;
    }
    return 0;
}

int logfs_rangemap_check(const struct logfs_rangemap *m)
{
    struct check_ctx c = {m->first, 0};
    const struct leaf *prev = NULL;
    uint64_t prev_end = 0;

    if (m->root->parent || check_node(m, m->root, NULL, 0, 0, UINT64_MAX, &c) < 0)
        return -1;
    if (c.next_leaf || c.count != m->count)
        return -1;
    for (const struct leaf *l = m->first; l; prev = l, l = l->next) {
        if (l->prev != prev)
            return -1;
        for (uint32_t i = 0; i < l->h.n; i++) {
            if ((prev || i) && l->start[i] < prev_end)
                return -1;
            prev_end = l->end[i];
        }
    }
    if (m->last != prev)
        return -1;
    return 0;
}
