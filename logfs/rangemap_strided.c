/*
 * Inserting many strided runs at once (logfs_rangemap_insert_strided).
 *
 * A map only grows cheaply at its end: a block inserted below the last
 * range pays a search and a cut.  Four writers' interleaved 8-byte blocks,
 * inserted writer after writer, put three quarters of them in the middle;
 * the same blocks merged into file order are all appends.  Merging is only
 * the same as inserting run after run when no two blocks overlap, which is
 * checked on the way: the first overlap sends every run through the
 * one-by-one path, which overwrites whatever the merge put in already.
 */
#include "rangemap.h"

#include <stdlib.h>

/* A run whose blocks touch (stride == len) is one block: count times as
 * long (its log positions continue too). */
static struct logfs_strided blocks_of(const struct logfs_strided *r)
{
    struct logfs_strided b = *r;
    if (b.count > 1 && b.stride == b.len) {
        b.len *= b.count;
        b.count = 1;
    }
    return b;
}

static uint64_t block_start(const struct logfs_strided *r, uint64_t k)
{
    return r->start + k * r->stride;
}

static int insert_block(struct logfs_rangemap *m, const struct logfs_strided *r, uint64_t k)
{
    uint64_t at = block_start(r, k);
    return logfs_rangemap_insert(m, at, at + r->len, r->owner, r->pos + k * r->len);
}

static int one_by_one(struct logfs_rangemap *m, const struct logfs_strided *runs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct logfs_strided r = blocks_of(&runs[i]);
        for (uint64_t k = 0; k < r.count; k++) {
            int rc = insert_block(m, &r, k);
            if (rc != LOGFS_OK)
                return rc;
        }
    }
    return LOGFS_OK;
}

/* A min-heap of runs by the start of their next block. */
struct cursor {
    struct logfs_strided r;     /* (blocks_of the run) */
    uint64_t k;                 /* next block */
    uint64_t at;                /* its start */
};

static void sift_down(struct cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && h[c + 1].at < h[c].at)
            c++;
        if (h[i].at <= h[c].at)
            return;
        struct cursor t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

/* Whether the runs, taken in order, already come in file order. */
static int in_file_order(const struct logfs_strided *r, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (block_start(&r[i], r[i].count - 1) + r[i].len > r[i + 1].start)
            return 0;
    return 1;
}

int logfs_rangemap_insert_strided(struct logfs_rangemap *m, const struct logfs_strided *r,
                                  size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].len == 0 || r[i].count == 0)
            return LOGFS_EINVAL;
    if (n < 2 || in_file_order(r, n))
        return one_by_one(m, r, n);
    struct cursor *h = malloc(n * sizeof(*h));
    if (!h)
        return one_by_one(m, r, n);     /* slower, but needs no memory of its own */
    for (size_t i = 0; i < n; i++)
        h[i] = (struct cursor) { blocks_of(&r[i]), 0, r[i].start };
    for (size_t i = n / 2; i-- > 0;)
        sift_down(h, n, i);
    uint64_t end = 0;                   /* of the blocks in so far */
    size_t live = n;
    int rc = LOGFS_OK;
    while (live && rc == LOGFS_OK) {
        struct cursor *c = h;
        if (c->at < end) {              /* overlaps a block in already */
            free(h);
            return one_by_one(m, r, n);
        }
        rc = insert_block(m, &c->r, c->k);
        end = c->at + c->r.len;
        if (++c->k < c->r.count)
            c->at = block_start(&c->r, c->k);
        else
            *c = h[--live];
        sift_down(h, live, 0);
    }
    free(h);
    return rc;
}
