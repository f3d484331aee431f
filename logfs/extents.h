/*
 * Strided extent groups: how a WRITE record stores the file extents of one
 * call compactly.  A group is `count` blocks of `blocklen` bytes, the first
 * at `offset`, each next one `stride` bytes further (stride may be negative
 * or zero; blocks may then overlap and the later block wins).
 */
#ifndef LOGFS_EXTENTS_H
#define LOGFS_EXTENTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest file offset + 1 logfs accepts: MPI_Offset is a signed 64-bit. */
#define LOGFS_MAX_FILE_END ((uint64_t)INT64_MAX)

struct logfs_group {
    uint64_t offset;   /* file offset of the first block */
    uint64_t blocklen; /* bytes per block, >= 1 */
    int64_t stride;    /* offset of block i is offset + i * stride */
    uint64_t count;    /* number of blocks, >= 1 */
};

/*
 * Builds groups from runs fed in order: a run continues the current group if
 * it has the group's block length and sits one stride further.
 */
struct logfs_grouper {
    struct logfs_group g; /* count == 0: no group pending */
};

/* Start with no pending group. */
void logfs_grouper_init(struct logfs_grouper *gr);

/*
 * Feed one run (offset, len > 0, offset + len <= LOGFS_MAX_FILE_END).
 * @param[out] done  the group this run could not join, if any
 * @return 1 if *done was filled, else 0
 */
int logfs_grouper_push(struct logfs_grouper *gr, uint64_t offset, uint64_t len,
                       struct logfs_group *done);

/*
 * Feed a whole group @p g (its blocks in order), with exactly the result of
 * pushing its blocks one by one, in O(1).  The group must be valid (see
 * logfs_group_next); its stride is ignored when count == 1.
 * @param[out] done  up to two groups completed by this push, in order
 * @return how many of done[] were filled (0, 1 or 2)
 */
int logfs_grouper_push_group(struct logfs_grouper *gr, const struct logfs_group *g,
                             struct logfs_group done[2]);

/* @param[out] done  the pending group.  @return 1 if there was one, else 0. */
int logfs_grouper_finish(struct logfs_grouper *gr, struct logfs_group *done);

/* Encode @p g at @p p (room for LOGFS_GROUP_MAX_LEN bytes). @return bytes used. */
size_t logfs_group_encode(uint8_t *p, const struct logfs_group *g);

/* Walks the groups of a WRITE record's payload. */
struct logfs_group_iter {
    const uint8_t *p, *end;
};

/* Iterate over the @p len encoded bytes at @p groups. */
void logfs_group_iter_init(struct logfs_group_iter *it, const uint8_t *groups, size_t len);

/*
 * Decode the next group and check it: count and blocklen >= 1, every block
 * within [0, LOGFS_MAX_FILE_END).
 * @return 1 with *g filled, 0 at the end, -1 if the bytes are malformed
 */
int logfs_group_next(struct logfs_group_iter *it, struct logfs_group *g);

/* @return file offset of block @p i of @p g (i < g->count). */
static inline uint64_t logfs_group_block(const struct logfs_group *g, uint64_t i)
{
    return g->offset + (uint64_t)((int64_t)i * g->stride);
}

#ifdef __cplusplus
}
#endif

#endif
