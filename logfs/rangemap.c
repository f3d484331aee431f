/*
 * Range map on the intrusive red-black tree.  Nodes come from chunks owned
 * by the map (no per-node malloc header) so a live range costs ~56 bytes.
 */
#include "rangemap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "rbtree.h"

#define NODES_PER_CHUNK 2048

struct node {
    struct logfs_rb_node rb; /* must be first: nodes are cast from rb nodes */
    uint64_t start, end, pos;
    int32_t owner;
};

struct logfs_rangemap {
    struct logfs_rb_tree tree;
    struct node *max;      /* rightmost range: appends skip the search */
    struct node *free;     /* free nodes, chained through rb.child[0] */
    size_t nfree;
    struct node **chunks;
    size_t nchunks, chunks_cap;
    size_t count;
};

#define N(rb) ((struct node *)(rb))

int logfs_rangemap_create(struct logfs_rangemap **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? LOGFS_OK : LOGFS_ENOMEM;
}

void logfs_rangemap_destroy(struct logfs_rangemap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nchunks; i++)
        free(m->chunks[i]);
    free(m->chunks);
    free(m);
}

/* Make sure @p n nodes can be taken without failing, so that an operation
 * either fails before touching the tree or succeeds. */
static int reserve(struct logfs_rangemap *m, size_t n)
{
    while (m->nfree < n) {
        struct node *c;
        if (m->nchunks == m->chunks_cap) {
            size_t cap = m->chunks_cap ? 2 * m->chunks_cap : 16;
            struct node **cs = realloc(m->chunks, cap * sizeof *cs);
            if (!cs)
                return LOGFS_ENOMEM;
            m->chunks = cs;
            m->chunks_cap = cap;
        }
        c = malloc(NODES_PER_CHUNK * sizeof *c);
        if (!c)
            return LOGFS_ENOMEM;
        m->chunks[m->nchunks++] = c;
        for (size_t i = 0; i < NODES_PER_CHUNK; i++) {
            c[i].rb.child[0] = m->free ? &m->free->rb : NULL;
            m->free = &c[i];
        }
        m->nfree += NODES_PER_CHUNK;
    }
    return LOGFS_OK;
}

static struct node *take(struct logfs_rangemap *m, uint64_t start, uint64_t end,
                         int32_t owner, uint64_t pos)
{
    struct node *n = m->free; /* reserve() guaranteed one */
    m->free = N(n->rb.child[0]);
    m->nfree--;
    n->start = start;
    n->end = end;
    n->owner = owner;
    n->pos = pos;
    m->count++;
    return n;
}

static void drop(struct logfs_rangemap *m, struct node *n)
{
    if (m->max == n)
        m->max = N(logfs_rb_prev(&n->rb));
    logfs_rb_erase(&m->tree, &n->rb);
    n->rb.child[0] = m->free ? &m->free->rb : NULL;
    m->free = n;
    m->nfree++;
    m->count--;
}

static int mergeable(const struct node *a, const struct node *b)
{
    return a->end == b->start && a->owner == b->owner && a->pos + (a->end - a->start) == b->pos;
}

/* First range with end > @p off, or NULL. */
static struct node *lower_bound(const struct logfs_rangemap *m, uint64_t off)
{
    struct logfs_rb_node *x = m->tree.root;
    struct node *best = NULL;
    while (x) {
        if (N(x)->end > off) {
            best = N(x);
            x = x->child[0];
        } else {
            x = x->child[1];
        }
    }
    return best;
}

/* Cut [start, end) out of the map, starting from @p n = lower_bound(start).
 * Needs one reserved node (for a range that spans the hole and splits). */
static void cut(struct logfs_rangemap *m, struct node *n, uint64_t start, uint64_t end)
{
    while (n && n->start < end) {
        struct node *next = N(logfs_rb_next(&n->rb));
        if (n->start < start) {
            if (n->end > end) {
                /* Both the head and the tail survive, each as the old owner's. */
                struct node *tail = take(m, end, n->end, n->owner, n->pos + (end - n->start));
                n->end = start;
                logfs_rb_link_after(&m->tree, &n->rb, &tail->rb);
                if (m->max == n)
                    m->max = tail;
                return;
            }
            n->end = start;
        } else if (n->end <= end) {
            drop(m, n);
        } else {
            n->pos += end - n->start;
            n->start = end;
            return;
        }
        n = next;
    }
}

/* Link @p n (disjoint from every range) at its place in order. */
static void place(struct logfs_rangemap *m, struct node *n)
{
    struct logfs_rb_node *x = m->tree.root, *parent = NULL;
    int dir = 0;
    while (x) {
        parent = x;
        dir = n->start > N(x)->start;
        x = x->child[dir];
    }
    logfs_rb_link(&m->tree, parent, dir, &n->rb);
    if (!m->max || n->start > m->max->start)
        m->max = n;
}

/* Link @p n just before @p next (NULL: after the last range). */
static void place_before(struct logfs_rangemap *m, struct node *n, struct node *next)
{
    if (next) {
        logfs_rb_link_before(&m->tree, &next->rb, &n->rb);
    } else if (m->max) {
        logfs_rb_link(&m->tree, &m->max->rb, 1, &n->rb);
        m->max = n;
    } else {
        logfs_rb_link(&m->tree, NULL, 0, &n->rb);
        m->max = n;
    }
}

int logfs_rangemap_insert(struct logfs_rangemap *m, uint64_t start, uint64_t end,
                          int32_t owner, uint64_t pos)
{
    struct node *n, *nb;

    if (start >= end)
        return LOGFS_EINVAL;
    if (reserve(m, 2) != LOGFS_OK)
        return LOGFS_ENOMEM;

    /* Appending past the last range is the common case for a log. */
    if (m->max && start >= m->max->end) {
        struct node *last = m->max;
        if (last->end == start && last->owner == owner && last->pos + (last->end - last->start) == pos) {
            last->end = end;
            return LOGFS_OK;
        }
        n = take(m, start, end, owner, pos);
        logfs_rb_link(&m->tree, &last->rb, 1, &n->rb); /* the max has no right child */
        m->max = n;
        return LOGFS_OK;
    }

    nb = lower_bound(m, start);
    n = take(m, start, end, owner, pos);
    if (!nb || nb->start >= end) {
        /* Nothing overlaps: the search already found the place. */
        place_before(m, n, nb);
    } else {
        cut(m, nb, start, end);
        place(m, n);
    }

    nb = N(logfs_rb_prev(&n->rb));
    if (nb && mergeable(nb, n)) {
        nb->end = n->end;
        drop(m, n);
        n = nb;
    }
    nb = N(logfs_rb_next(&n->rb));
    if (nb && mergeable(n, nb)) {
        n->end = nb->end;
        drop(m, nb);
    }
    return LOGFS_OK;
}

int logfs_rangemap_remove(struct logfs_rangemap *m, uint64_t start, uint64_t end)
{
    if (start >= end)
        return LOGFS_EINVAL;
    if (reserve(m, 1) != LOGFS_OK)
        return LOGFS_ENOMEM;
    cut(m, lower_bound(m, start), start, end);
    return LOGFS_OK;
}

int logfs_rangemap_query(const struct logfs_rangemap *m, uint64_t start, uint64_t end,
                         logfs_range_fn fn, void *arg)
{
    struct node *n = lower_bound(m, start);
    uint64_t at = start;
    struct logfs_range r;
    int rc;

    while (at < end) {
        if (!n || n->start >= end) {
            r = (struct logfs_range){at, end, -1, 0};
            return fn(arg, &r, 1);
        }
        if (n->start > at) {
            r = (struct logfs_range){at, n->start, -1, 0};
            if ((rc = fn(arg, &r, 1)) != 0)
                return rc;
            at = n->start;
        }
        r.start = at;
        r.end = n->end < end ? n->end : end;
        r.owner = n->owner;
        r.pos = n->pos + (at - n->start);
        if ((rc = fn(arg, &r, 0)) != 0)
            return rc;
        at = r.end;
        n = N(logfs_rb_next(&n->rb));
    }
    return 0;
}

int logfs_rangemap_walk(const struct logfs_rangemap *m, logfs_range_fn fn, void *arg)
{
    for (struct logfs_rb_node *x = logfs_rb_first(&m->tree); x; x = logfs_rb_next(x)) {
        struct logfs_range r = {N(x)->start, N(x)->end, N(x)->owner, N(x)->pos};
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
    return sizeof *m + m->chunks_cap * sizeof *m->chunks +
           m->nchunks * NODES_PER_CHUNK * sizeof(struct node);
}

size_t logfs_rangemap_print(const struct logfs_rangemap *m, char *buf, size_t len)
{
    size_t total = 0;
    for (struct logfs_rb_node *x = logfs_rb_first(&m->tree); x; x = logfs_rb_next(x)) {
        char piece[96];
        int k = snprintf(piece, sizeof piece, "[%llu-%llu:%d@%llu]",
                         (unsigned long long)N(x)->start, (unsigned long long)(N(x)->end - 1),
                         (int)N(x)->owner, (unsigned long long)N(x)->pos);
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

int logfs_rangemap_check(const struct logfs_rangemap *m)
{
    const struct node *prev = NULL;
    size_t n = 0;
    if (logfs_rb_check(&m->tree) < 0)
        return -1;
    for (struct logfs_rb_node *x = logfs_rb_first(&m->tree); x; x = logfs_rb_next(x)) {
        if (N(x)->start >= N(x)->end || (prev && prev->end > N(x)->start))
            return -1;
        prev = N(x);
        n++;
    }
    if (n != m->count || m->max != prev)
        return -1;
    return 0;
}
