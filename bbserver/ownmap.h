/*
 * The ownership map: per file, which writer's log holds each attached byte.
 * Built on logfs's range map (owner = the writer's index in the file's
 * writer table, position = the byte's offset in that writer's datalog), so
 * the server splits and merges exactly as the client index and the replay
 * planner do: a later attach overwrites, cut pieces keep their old owner.
 *
 * No locking: the server gives each worker thread its own map and sends
 * every request about one file to the same worker.
 */
#ifndef BBSERVER_OWNMAP_H
#define BBSERVER_OWNMAP_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bbs_ownmap;

/* @return a new empty map, or NULL when out of memory. */
struct bbs_ownmap *bbs_own_create(void);
void bbs_own_destroy(struct bbs_ownmap *m);

/* Make the extents the writer's, overwriting older owners.
 * @return BBS_OK, BBS_ENOMEM (the file may then hold part of them). */
int bbs_own_attach(struct bbs_ownmap *m, const char *file, const struct bbs_writer *w,
                   const struct bbs_extent *e, size_t n);

/* Forget the writer's bytes in [start, end); bytes another writer took
 * over stay.  @return BBS_OK, BBS_ENOFILE, BBS_ENOMEM. */
/* The file is at least size bytes long (a writer's set_size grew it):
 * stat and queries report it.  @return BBS_OK, BBS_ENOMEM */
int bbs_own_grow(struct bbs_ownmap *m, const char *file, uint64_t size);
/* The file's size in the map: the end of its last attached byte, or what
 * a grow said if more; 0 for a file the map does not hold. */
uint64_t bbs_own_size(const struct bbs_ownmap *m, const char *file);

int bbs_own_detach(struct bbs_ownmap *m, const char *file, uint64_t session, uint32_t rank,
                   uint64_t start, uint64_t end);

/* The owners of [start, end), as records of at most max pieces in all:
 * each record holds a writer's pieces of one length that follow each other
 * in its log at one stride in the file (a strided write comes back as it
 * was attached); records of several writers interleave, in no particular
 * order.  Records name writers by their index in the file's table
 * (bbs_own_writer).
 * *more is where the next query should start when max cut the answer,
 * UINT64_MAX otherwise.  The array is the caller's to free.
 * @return BBS_OK (a file with nothing attached there gives n = 0),
 *         BBS_ENOFILE, BBS_ENOMEM. */
int bbs_own_query(const struct bbs_ownmap *m, const char *file, uint64_t start, uint64_t end,
                  uint32_t max, struct bbs_piece **pieces, uint32_t *n, uint64_t *more);

/* Writer i of a file's table (valid until the next change of the map). */
const struct bbs_writer *bbs_own_writer(const struct bbs_ownmap *m, const char *file,
                                        uint32_t i);

/* Size (one past the last attached byte), ranges and writers of a file.
 * @return BBS_OK or BBS_ENOFILE. */
int bbs_own_stat(const struct bbs_ownmap *m, const char *file, uint64_t *size,
                 uint64_t *nranges, uint32_t *nwriters);

/* Drop a file (its logs were replayed).  @return BBS_OK or BBS_ENOFILE. */
int bbs_own_drop(struct bbs_ownmap *m, const char *file);

/* The n sessions' logs were replayed: forget the bytes their writers own
 * now (bytes a later attach of another session took stay that one's), and
 * the file once nothing is left.  The size becomes the end of the last byte
 * left: the canonical file tells the rest (a replay that truncated made it
 * shorter; a grow by a set_size of a session left is lost, its bytes not).
 * n = 0 drops the file.
 * @return BBS_OK, BBS_ENOFILE, BBS_ENOMEM (the map is then unchanged). */
int bbs_own_replayed(struct bbs_ownmap *m, const char *file, const uint64_t *sessions,
                     size_t n);

/* Files held. */
uint64_t bbs_own_nfiles(const struct bbs_ownmap *m);

/* Call fn for every file (order unspecified); stops at a nonzero return. */
int bbs_own_each(const struct bbs_ownmap *m, int (*fn)(void *arg, const char *file),
                 void *arg);

/* Every range of a file in order: fn(arg, writer, start, end, pos); stops
 * at a nonzero return.  @return that value, 0, or BBS_ENOFILE. */
int bbs_own_ranges(const struct bbs_ownmap *m, const char *file,
                   int (*fn)(void *arg, const struct bbs_writer *w, uint64_t start,
                             uint64_t end, uint64_t pos), void *arg);

/* "[0-7:1@0][8-15:0@8]" of a file (see logfs_rangemap_print), like snprintf. */
size_t bbs_own_print(const struct bbs_ownmap *m, const char *file, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
