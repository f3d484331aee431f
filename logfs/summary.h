/*
 * What a log's records touch, in a few words: the file range, the pieces,
 * whether it changed the file's size.
 *
 * A replay plans every writer's records together because two writers may
 * have written the same bytes, and only the records of all, in the
 * replay's order, say whose lands last.  Where the ranges the logs touch
 * are pairwise apart, no byte has two writers: each log alone gives its
 * bytes' final contents, and each writer can replay its own with nobody
 * else's records (the driver's close: ad_bbfs_pending.c).  A summary is
 * conservative: it grows with every run a write call hands the writer,
 * also of a call that then fails; a size change (truncation order is
 * between writers) rules the shortcut out.
 */
#ifndef LOGFS_SUMMARY_H
#define LOGFS_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct logfs_summary {
    uint64_t lo, hi;   /* [lo, hi): every byte a record touches (blocks > 0) */
    uint64_t blocks;   /* blocks logged; 0: nothing */
    uint64_t pieces;   /* blocks not continuing the one logged just before */
    uint64_t last_end; /* end of the last block logged */
    int resized;       /* a SETSIZE */
};

/* A run of count blocks of blocklen bytes, block i at off + i * stride
 * (count == 1 or stride == blocklen: one contiguous extent). */
void logfs_summary_note_run(struct logfs_summary *s, uint64_t off, uint64_t blocklen,
                            int64_t stride, uint64_t count);
void logfs_summary_note_size(struct logfs_summary *s);

/* As LOGFS_SUMMARY_WORDS words, for an exchange between processes
 * (last_end stays behind: only the writer needs it). */
#define LOGFS_SUMMARY_WORDS 3
void logfs_summary_pack(const struct logfs_summary *s, uint64_t *out);
void logfs_summary_unpack(const uint64_t *in, struct logfs_summary *s);

/* Whether the n logs touch pairwise disjoint ranges, none changed the
 * size, and none has more than max_pieces pieces (a log of many small
 * pieces is better merged with the others' by a collective write). */
int logfs_summaries_apart(const struct logfs_summary *s, size_t n, uint64_t max_pieces);

#ifdef __cplusplus
}
#endif

#endif
