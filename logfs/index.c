/* Local read-your-writes index on the shared range map. */
#include "index.h"

#include "extents.h"

int logfs_index_init(struct logfs_index *ix)
{
    return logfs_rangemap_create(&ix->map);
}

void logfs_index_fini(struct logfs_index *ix)
{
    logfs_rangemap_destroy(ix->map);
    ix->map = NULL;
}

int logfs_index_add(struct logfs_index *ix, uint64_t off, uint64_t len, uint64_t epoch,
                    uint64_t dlog)
{
    return logfs_rangemap_insert(ix->map, off, off + len, (int32_t)epoch, dlog);
}

int logfs_index_cut(struct logfs_index *ix, uint64_t size, uint64_t epoch)
{
    if (size >= LOGFS_MAX_FILE_END)
        return LOGFS_OK;
    /* Position 0 for every cut range: contiguous cuts of one epoch merge. */
    return logfs_rangemap_insert(ix->map, size, LOGFS_MAX_FILE_END, -(int32_t)epoch - 1, 0);
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
    rc = logfs_rangemap_query(ix->map, off, off + len, visit, &c);
    if (rc)
        return rc;
    return flush_hole(&c);
}
