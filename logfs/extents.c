/* Strided group building, encoding and checked decoding. */
#include "extents.h"

#include "coding.h"
#include "format.h"

void logfs_grouper_init(struct logfs_grouper *gr)
{
    gr->g.count = 0;
}

int logfs_grouper_push(struct logfs_grouper *gr, uint64_t offset, uint64_t len,
                       struct logfs_group *done)
{
    struct logfs_group *g = &gr->g;

    if (g->count > 0 && len == g->blocklen) {
        /* Offsets are below 2^63, so differences fit an int64_t. */
        int64_t d = (int64_t)offset - (int64_t)g->offset;
        if (g->count == 1) {
            g->stride = d;
            g->count = 2;
            return 0;
        }
        /* __int128: count * stride cannot overflow while we compare. */
        if ((__int128)g->count * g->stride == (__int128)d) {
            g->count++;
            return 0;
        }
    }
    int emitted = 0;
    if (g->count > 0) {
        *done = *g;
        emitted = 1;
    }
    g->offset = offset;
    g->blocklen = len;
    g->stride = 0;
    g->count = 1;
    return emitted;
}

int logfs_grouper_push_group(struct logfs_grouper *gr, const struct logfs_group *g,
                             struct logfs_group done[2])
{
    struct logfs_group *cur = &gr->g;
    int n = logfs_grouper_push(gr, g->offset, g->blocklen, &done[0]);
    if (g->count == 1)
        return n;
    /* The first block is now the last of the pending group.  Pushing block
     * 1 either continues it (count 1: any stride; else: the same stride)
     * or completes it and starts a group that blocks 2.. then continue. */
    if (cur->count == 1) {
        cur->stride = g->stride;
        cur->count = g->count;
    } else if (cur->stride == g->stride) {
        cur->count += g->count - 1;
    } else {
        done[n++] = *cur;
        cur->offset = g->offset + (uint64_t)g->stride;
        cur->count = g->count - 1;
        cur->stride = cur->count > 1 ? g->stride : 0;
    }
    return n;
}

int logfs_grouper_finish(struct logfs_grouper *gr, struct logfs_group *done)
{
    if (gr->g.count == 0)
        return 0;
    *done = gr->g;
    gr->g.count = 0;
    return 1;
}

size_t logfs_group_encode(uint8_t *p, const struct logfs_group *g)
{
    size_t n = logfs_put_varint(p, g->count);
    n += logfs_put_varint(p + n, g->offset);
    n += logfs_put_varint(p + n, g->blocklen);
    if (g->count > 1)
        n += logfs_put_varint(p + n, logfs_zigzag(g->stride));
    return n;
}

void logfs_group_iter_init(struct logfs_group_iter *it, const uint8_t *groups, size_t len)
{
    it->p = groups;
    it->end = groups + len;
}

int logfs_group_next(struct logfs_group_iter *it, struct logfs_group *g)
{
    uint64_t zz = 0;
    __int128 first, last;

    if (it->p == it->end)
        return 0;
    if (logfs_get_varint(&it->p, it->end, &g->count) || logfs_get_varint(&it->p, it->end, &g->offset) ||
        logfs_get_varint(&it->p, it->end, &g->blocklen))
        return -1;
    if (g->count > 1 && logfs_get_varint(&it->p, it->end, &zz))
        return -1;
    g->stride = logfs_unzigzag(zz);
    if (g->count == 0 || g->blocklen == 0 || g->offset >= LOGFS_MAX_FILE_END ||
        g->blocklen > LOGFS_MAX_FILE_END || g->count > LOGFS_MAX_FILE_END)
        return -1;
    /* Both ends of the pattern must stay inside the file's offset range. */
    first = (__int128)g->offset;
    last = first + (__int128)(g->count - 1) * g->stride;
    if (last < 0 || last + (__int128)g->blocklen > (__int128)LOGFS_MAX_FILE_END ||
        first + (__int128)g->blocklen > (__int128)LOGFS_MAX_FILE_END)
        return -1;
    return 1;
}
