/*
 * The writer's local index (internal): which file bytes this writer's logs
 * hold, from which epoch, and where in the datalog.  A range map with
 * owner = epoch for logged bytes, and owner = -(epoch + 1) for bytes that a
 * set_size shrink cut off (they read as zeros until written again).
 *
 * Read-your-writes is lazy: the writer queues each group (and set_size cut)
 * in call order, and the queue enters the map at the next lookup.  The
 * index is a cache of what the writer logged, so a lookup through a const
 * writer may fill it.
 */
#ifndef LOGFS_INDEX_H
#define LOGFS_INDEX_H

#include <stdint.h>

#include "extents.h"
#include "writer.h"

struct logfs_index;

int logfs_index_create(struct logfs_index **out);
void logfs_index_destroy(struct logfs_index *ix);

/* [off, off + len) now comes from datalog offset @p dlog, written in @p epoch. */
int logfs_index_add(struct logfs_index *ix, uint64_t off, uint64_t len, uint64_t epoch,
                    uint64_t dlog);

/* set_size(@p size) in @p epoch: everything at and past size reads as zeros. */
int logfs_index_cut(struct logfs_index *ix, uint64_t size, uint64_t epoch);

/* Group @p g (its block 0 at datalog offset @p dlog; count 0: a set_size
 * cut at g->offset) enters the map now. */
int logfs_index_group(struct logfs_index *ix, const struct logfs_group *g, uint64_t dlog,
                      uint64_t epoch);

/* The same, queued until the next logfs_index_catch_up.  The queue is
 * bounded: a writer that never looks up but rewrites the same bytes keeps
 * an index of what survives, not of every write. */
int logfs_index_queue(struct logfs_index *ix, const struct logfs_group *g, uint64_t dlog,
                      uint64_t epoch);

/* Every queued group into the map, in order.  On failure the rest stay
 * queued. */
int logfs_index_catch_up(struct logfs_index *ix);

/* See logfs_writer_lookup(); call after logfs_index_catch_up. */
int logfs_index_lookup(const struct logfs_index *ix, uint64_t off, uint64_t len,
                       uint64_t min_epoch, logfs_piece_fn fn, void *arg);

#endif
