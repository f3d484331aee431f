/* Local read-your-writes index on the shared range map. */
#include "index.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rangemap.h"

/* Queued groups enter the map once there are this many. */
#define QUEUE_MAX ((size_t)1 << 18)

/* One queued group, or (count == 0) a set_size cut at its offset. */
struct queued {
    struct logfs_group g;
    uint64_t dlog;
    uint64_t epoch;
};

struct logfs_index {
    struct logfs_rangemap *map;
    struct queued *q;
    size_t nq, capq;
    /* 1 + the latest epoch anything in the map was written in (0: none):
     * a lookup of later epochs only (a read after a sync, of what this
     * writer wrote since) is then one hole without a search per block */
    uint64_t newest;
};

int logfs_index_create(struct logfs_index **out)
{
    struct logfs_index *ix = calloc(1, sizeof *ix);
    *out = NULL;
    if (!ix)
        return LOGFS_ENOMEM;
    if (logfs_rangemap_create(&ix->map)) {
        free(ix);
        return LOGFS_ENOMEM;
    }
    *out = ix;
    return LOGFS_OK;
}

void logfs_index_destroy(struct logfs_index *ix)
{
    if (!ix)
        return;
    logfs_rangemap_destroy(ix->map);
    free(ix->q);
    free(ix);
}

static void note_epoch(struct logfs_index *ix, uint64_t epoch)
{
    if (epoch + 1 > ix->newest)
        ix->newest = epoch + 1;
}

int logfs_index_add(struct logfs_index *ix, uint64_t off, uint64_t len, uint64_t epoch,
                    uint64_t dlog)
{
    note_epoch(ix, epoch);
    return logfs_rangemap_insert(ix->map, off, off + len, (int32_t)epoch, dlog);
}

int logfs_index_cut(struct logfs_index *ix, uint64_t size, uint64_t epoch)
{
    if (size >= LOGFS_MAX_FILE_END)
        return LOGFS_OK;
    note_epoch(ix, epoch);
    /* Position 0 for every cut range: contiguous cuts of one epoch merge. */
    return logfs_rangemap_insert(ix->map, size, LOGFS_MAX_FILE_END, -(int32_t)epoch - 1, 0);
}

int logfs_index_group(struct logfs_index *ix, const struct logfs_group *g, uint64_t dlog,
                      uint64_t epoch)
{
    if (g->count == 0)
        return logfs_index_cut(ix, g->offset, epoch);
    if (g->count == 1 || g->stride == (int64_t)g->blocklen)
        return logfs_index_add(ix, g->offset, g->count * g->blocklen, epoch, dlog);
    for (uint64_t i = 0; i < g->count; i++, dlog += g->blocklen) {
        int rc = logfs_index_add(ix, logfs_group_block(g, i), g->blocklen, epoch, dlog);
        if (rc)
            return rc;
    }
    return LOGFS_OK;
}

int logfs_index_queue(struct logfs_index *ix, const struct logfs_group *g, uint64_t dlog,
                      uint64_t epoch)
{
    if (ix->nq >= QUEUE_MAX && logfs_index_catch_up(ix))
        return LOGFS_ENOMEM;
    struct queued *q = logfs_grow(ix->q, &ix->capq, ix->nq + 1, sizeof *q, 8);
    if (!q)
        return LOGFS_ENOMEM;
    ix->q = q;
    ix->q[ix->nq++] = (struct queued){*g, dlog, epoch};
    return LOGFS_OK;
}

int logfs_index_catch_up(struct logfs_index *ix)
{
    size_t i;
    int rc = LOGFS_OK;
    for (i = 0; i < ix->nq && !rc; i++)
        rc = logfs_index_group(ix, &ix->q[i].g, ix->q[i].dlog, ix->q[i].epoch);
    if (rc) {
        i--; /* a failed insert leaves the map unchanged: keep it queued */
        memmove(ix->q, ix->q + i, (ix->nq - i) * sizeof *ix->q);
        ix->nq -= i;
        return rc;
    }
    ix->nq = 0;
    return LOGFS_OK;
}

struct lookup_ctx {
    uint64_t min_epoch;
    logfs_piece_fn fn;
    void *arg;
    struct logfs_piece hole; /* pending hole, length 0 if none */
};

static int flush_hole(struct lookup_ctx *c)
{
    int rc = 0;
    if (c->hole.length)
        rc = c->fn(c->arg, &c->hole);
    c->hole.length = 0;
    return rc;
}

static int visit(void *arg, const struct logfs_range *r, int is_hole)
{
    struct lookup_ctx *c = arg;
    struct logfs_piece p = {r->start, r->end - r->start, LOGFS_PIECE_HOLE, 0, 0};
    int rc;

    if (!is_hole) {
        int cut = r->owner < 0;
        p.epoch = cut ? (uint64_t)(-(int64_t)r->owner - 1) : (uint64_t)r->owner;
        if (p.epoch >= c->min_epoch) {
            p.kind = cut ? LOGFS_PIECE_ZERO : LOGFS_PIECE_LOG;
            p.dlog_off = cut ? 0 : r->pos;
        } else {
            p.epoch = 0;
        }
    }
    if (p.kind == LOGFS_PIECE_HOLE) {
        if (!c->hole.length)
            c->hole = p;
        else
            c->hole.length += p.length;
        return 0;
    }
    if ((rc = flush_hole(c)) != 0)
        return rc;
    return c->fn(c->arg, &p);
}

int logfs_index_lookup(const struct logfs_index *ix, uint64_t off, uint64_t len,
                       uint64_t min_epoch, logfs_piece_fn fn, void *arg)
{
    struct lookup_ctx c = {min_epoch, fn, arg, {0, 0, LOGFS_PIECE_HOLE, 0, 0}};
    int rc;
    if (len == 0)
        return LOGFS_OK;
    if (min_epoch >= ix->newest) {      /* nothing that new: all one hole */
        c.hole = (struct logfs_piece){off, len, LOGFS_PIECE_HOLE, 0, 0};
        return flush_hole(&c);
    }
    rc = logfs_rangemap_query(ix->map, off, off + len, visit, &c);
    if (rc)
        return rc;
    return flush_hole(&c);
}
