/*
 * The range map: non-overlapping byte ranges [start, end), each with an
 * owner and a position, kept in a balanced tree.  One implementation serves
 * the writer's local index (owner = epoch, position = datalog offset), the
 * replay planner (owner = writer rank) and, later, bbserver's ownership tree.
 *
 * Rules:
 *  - insert overwrites: the new range replaces whatever it overlaps;
 *  - a partially overlapped range is cut, and the pieces that survive keep
 *    their OLD owner and a position moved by the bytes cut off their front;
 *  - neighbours merge only when they touch, have the same owner, and their
 *    positions are contiguous too (a.pos + a.len == b.pos).
 */
#ifndef LOGFS_RANGEMAP_H
#define LOGFS_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

struct logfs_rangemap;

struct logfs_range {
    uint64_t start; /* first byte */
    uint64_t end;   /* one past the last byte */
    int32_t owner;  /* whose bytes these are (meaning is the user's) */
    uint64_t pos;   /* position of byte `start` in the owner's log */
};

/*
 * Called for each piece a query or walk visits, in ascending order.
 * @param arg      the caller's pointer, passed through
 * @param r        the piece, clipped to the queried range (pos adjusted)
 * @param is_hole  1 if no range covers r (then r->owner is -1, r->pos 0)
 * @return 0 to continue, anything else to stop the walk and return it
 */
typedef int (*logfs_range_fn)(void *arg, const struct logfs_range *r, int is_hole);

/* @param[out] out  the new empty map.  @return LOGFS_OK or LOGFS_ENOMEM. */
int logfs_rangemap_create(struct logfs_rangemap **out);

/* Free the map and all its ranges; NULL is fine. */
void logfs_rangemap_destroy(struct logfs_rangemap *m);

/*
 * Make [start, end) belong to @p owner at position @p pos, overwriting.
 * @return LOGFS_OK, LOGFS_EINVAL if start >= end, LOGFS_ENOMEM (the map is
 *         then unchanged)
 */
int logfs_rangemap_insert(struct logfs_rangemap *m, uint64_t start, uint64_t end,
                          int32_t owner, uint64_t pos);

/* count blocks of len bytes, owner's, at start, start + stride, ...; at
 * pos, pos + len, ... in its log (stride >= len when count > 1). */
struct logfs_strided {
    uint64_t start, len, count, stride;
    int32_t owner;
    uint64_t pos;
};

/*
 * Insert the blocks of runs r[0..n), with the result of inserting them one
 * by one, run after run.  Blocks of runs that interleave (a reader's view
 * of several writers' strided writes) go in file order, so a map that holds
 * nothing past them takes each down the append path instead of a search.
 * Runs whose blocks overlap fall back to one by one.  A run whose blocks
 * touch (stride == len) goes in as one range.
 * @return LOGFS_OK, LOGFS_EINVAL for a run without bytes, LOGFS_ENOMEM (the
 *         map may then hold part of them)
 */
int logfs_rangemap_insert_strided(struct logfs_rangemap *m, const struct logfs_strided *r,
                                  size_t n);

/*
 * Forget [start, end); ranges straddling an edge are cut as insert cuts them.
 * @return LOGFS_OK, LOGFS_EINVAL if start >= end, LOGFS_ENOMEM
 */
int logfs_rangemap_remove(struct logfs_rangemap *m, uint64_t start, uint64_t end);

/*
 * Visit [start, end) in order: covered pieces and the holes between them.
 * @return 0 after a full walk, or the first nonzero value @p fn returned
 */
int logfs_rangemap_query(const struct logfs_rangemap *m, uint64_t start, uint64_t end,
                         logfs_range_fn fn, void *arg);

/* Visit every range in order (no holes). @return as logfs_rangemap_query. */
int logfs_rangemap_walk(const struct logfs_rangemap *m, logfs_range_fn fn, void *arg);

/* @return the number of ranges held. */
size_t logfs_rangemap_count(const struct logfs_rangemap *m);

/* @return bytes of memory the map holds (nodes, free nodes and bookkeeping). */
size_t logfs_rangemap_memory(const struct logfs_rangemap *m);

/*
 * Print the map as "[2-7:200@0][8-10:3@16]": first-last byte (inclusive),
 * owner, position, like snprintf.
 * @return the length of the full text (excluding the NUL), even if truncated
 */
size_t logfs_rangemap_print(const struct logfs_rangemap *m, char *buf, size_t len);

/* @return 0 if the tree is a valid B+-tree of ordered, disjoint ranges. */
int logfs_rangemap_check(const struct logfs_rangemap *m);

#ifdef __cplusplus
}
#endif

#endif
