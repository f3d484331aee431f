/*
 * The writer's local index (internal): which file bytes this writer's logs
 * hold, from which epoch, and where in the datalog.  A range map with
 * owner = epoch for logged bytes, and owner = -(epoch + 1) for bytes that a
 * set_size shrink cut off (they read as zeros until written again).
 */
#ifndef LOGFS_INDEX_H
#define LOGFS_INDEX_H

#include <stdint.h>

#include "rangemap.h"
#include "writer.h"

struct logfs_index {
    struct logfs_rangemap *map;
};

int logfs_index_init(struct logfs_index *ix);
void logfs_index_fini(struct logfs_index *ix);

/* [off, off + len) now comes from datalog offset @p dlog, written in @p epoch. */
int logfs_index_add(struct logfs_index *ix, uint64_t off, uint64_t len, uint64_t epoch,
                    uint64_t dlog);

/* set_size(@p size) in @p epoch: everything at and past size reads as zeros. */
int logfs_index_cut(struct logfs_index *ix, uint64_t size, uint64_t epoch);

/* See logfs_writer_lookup(). */
int logfs_index_lookup(const struct logfs_index *ix, uint64_t off, uint64_t len,
                       uint64_t min_epoch, logfs_piece_fn fn, void *arg);

#endif
