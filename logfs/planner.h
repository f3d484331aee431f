/*
 * The replay planner: from the metalogs of N writers, which bytes to copy
 * from which datalog to which file offset, epoch by epoch, split among M
 * replayers (M need not equal N).
 *
 * Rules:
 *  - epochs are applied in order: all of epoch k before any of epoch k+1;
 *  - within one writer and epoch, the later write wins, and a SETSIZE
 *    discards that writer's earlier bytes at and past the new size;
 *  - within one epoch, different writers should not overlap (a correct MPI
 *    program does not do that); if they do, a write made in or after a
 *    collective call wins over writes made before it (ORDER records), then
 *    the write with the later STAMP clock wins (writers under posix
 *    consistency stamp every write), then the higher rank, so every
 *    replayer computes the same plan;
 *  - only sealed epochs (ended by SYNC or CLOSE) are replayed unless
 *    include_unsealed is set: bytes written after the last sync of a writer
 *    that crashed are not covered by any MPI guarantee;
 *  - replay is idempotent: applying epochs 0..k again after a crash at any
 *    point, then the rest, gives the same file.
 *
 * Two forms of an epoch, chosen at build time (same results either way):
 *  - compact: when no two blocks of the epoch share a byte (the normal case
 *    for a correct MPI program, e.g. interleaved vectors of different ranks)
 *    and no SETSIZE discards bytes written before it, the epoch stays a list
 *    of (writer, group, datalog offset): building costs O(groups log groups)
 *    however many blocks the groups hold, and domains are found by binary
 *    search on file offsets and cut out of each group by arithmetic;
 *  - range map: otherwise every block goes through a range map that applies
 *    the rules above, and the epoch becomes a sorted array of pieces.
 * The overlap check is exact for groups of equal stride and for single
 * blocks; strided groups of different strides whose extents overlap are
 * checked block by block within a budget proportional to the epoch's
 * groups, past which the epoch takes the range map.
 *
 * Applying epoch e (each replayer r of M):
 *   1. if resize.present: one replayer truncates the file to truncate_to;
 *   2. all: copy the pieces of logfs_plan_domain(e, r, M) (barrier around);
 *   3. if resize.present: one replayer extends the file to extend_to if it
 *      is shorter (never shortens: pieces written after the SETSIZE stand).
 */
#ifndef LOGFS_PLANNER_H
#define LOGFS_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

struct logfs_plan;
struct logfs_reader_mark; /* reader.h */
struct logfs_kept_log;    /* reader.h */

struct logfs_plan_opts {
    int salvage;          /* nonzero: a damaged metalog contributes the epochs it
                             sealed before the damage (see logfs_plan_warning) */
    int include_unsealed; /* nonzero: also replay writes after a writer's last seal */
    /* NULL, or by rank: read that writer's metalog on from the mark, as
     * logfs_plan_mark gave it after an earlier plan of the same logs, so
     * that the plan holds only what was logged after that one (for a
     * reader that keeps the earlier plan's result: logfs_plan_key_bounds
     * says whether putting this one over it is exact).  One session only;
     * the logs' SETSIZEs must only grow the file (a truncating one would
     * have to cut bytes of the ops read before). */
    const struct logfs_reader_mark *resume;
    /* nonzero: the one metalog given is one writer's of a session of
     * several, planned alone (the caller knows no other writer wrote any
     * of its bytes); it takes writer index 0 of the plan */
    int one_writer;
};

/* Where an op stands in a one-session plan's order: a later key wins; ops
 * of one writer with equal keys land in log order. */
struct logfs_plan_key {
    uint64_t epoch;
    uint64_t seq;      /* collective-call count (ORDER) */
    uint64_t stamp;    /* STAMP clock */
    uint32_t writer;
};

struct logfs_replay_piece {
    uint64_t offset;   /* file offset */
    uint64_t length;   /* bytes */
    uint32_t writer;   /* rank whose datalog holds them */
    uint64_t dlog_off; /* offset in that datalog */
};

struct logfs_resize {
    int present;          /* nonzero if some writer logged SETSIZE in the epoch */
    uint64_t truncate_to; /* smallest size set in the epoch */
    uint64_t extend_to;   /* largest final size a writer set in the epoch */
};

/*
 * @return 0 to continue, nonzero to stop (logfs_plan_domain returns it).
 */
typedef int (*logfs_replay_fn)(void *arg, const struct logfs_replay_piece *p);

/*
 * A run of equal blocks of one writer: block i covers file bytes
 * [offset + i * stride, + blocklen) and its data is at datalog offset
 * dlog_off + i * blocklen: the blocks are back to back in the datalog, so
 * one pread of count * blocklen bytes and a strided copy apply the run.
 */
struct logfs_replay_run {
    uint64_t offset;   /* file offset of block 0 */
    uint64_t blocklen; /* bytes per block, >= 1 */
    uint64_t stride;   /* > blocklen when count > 1; == blocklen when count == 1 */
    uint64_t count;    /* blocks, >= 1 */
    uint32_t writer;   /* rank whose datalog holds them */
    uint64_t dlog_off; /* datalog offset of block 0 */
};

/* @return 0 to continue, nonzero to stop (logfs_plan_domain_runs returns it). */
typedef int (*logfs_replay_run_fn)(void *arg, const struct logfs_replay_run *r);

/*
 * Read all metalogs and plan every epoch.
 * @param metalogs  paths of the N metalogs, in any order
 * @param n         N; must equal the writer count in their headers
 * @param o         options, or NULL for the defaults (all 0)
 * @param[out] out  the plan
 * @return LOGFS_OK, LOGFS_EMISMATCH (file ids, writer counts or ranks do
 *         not fit together), any reader error (unless salvage), LOGFS_ENOMEM
 */
int logfs_plan_build(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                     struct logfs_plan **out, struct logfs_error *err);

/* Flags of logfs_plan_build_flags. */
#define LOGFS_PLAN_NO_COMPACT 1u /* every epoch takes the range map (tests, benchmarks) */

/* logfs_plan_build with @p flags (LOGFS_PLAN_*); logfs_plan_build passes 0. */
int logfs_plan_build_flags(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                           unsigned flags, struct logfs_plan **out, struct logfs_error *err);

/*
 * One plan of several sessions of one file (handles open at the same time,
 * in one job or several), whose writes must land in the order they were
 * made, not session after session.  Session i has counts[i] metalogs,
 * metalogs[sum of counts before i ..]; in the plan, its writers follow
 * those of the sessions before it (writer index = that sum + rank).
 *
 * The plan has one epoch.  Each op is placed in time by the STAMP records
 * (format.h) and the order of its session: within a session, the order of a
 * plan of that session alone (epochs, then collective calls) holds; across
 * sessions, a write made after another by the clock wins, so a write made
 * after a sync, barrier and sync of another handle wins over that handle's
 * writes, and so do a process's writes through a handle it switched to.
 * Writes that overlap within one group of a session may land in clock
 * order rather than rank order: MPI leaves them undefined anyway.  With one
 * session this is logfs_plan_build.
 * @return as logfs_plan_build; LOGFS_EINVAL if a count is 0
 */
int logfs_plan_build_sessions(const char *const *metalogs, const size_t *counts, size_t nsessions,
                              const struct logfs_plan_opts *o, struct logfs_plan **out,
                              struct logfs_error *err);

/* A metalog for the planner: its path, which also names its datalog, and
 * either nothing more (the planner reads the file) or its bytes, read where
 * the file is (logfs_metalog_export) and sent to a process that cannot open
 * it: a writer's log on another node's own storage. */
struct logfs_metalog_src {
    const char *metalog;
    const void *data;  /* NULL: read the file */
    size_t len;
    int gone;          /* nonzero: nobody can read it (its node's storage
                          was lost); only with salvage, which plans the
                          other writers and gives this one, rank = its
                          place in the session, a warning and 0 epochs */
    struct logfs_kept_log *kept; /* NULL, or the file and its seal kept open
                                    between plans (logfs_reader_open_kept) */
    int absent_ok;     /* nonzero: a writer of a lazy session (its files are
                          made when a byte must first reach them): a metalog
                          that does not exist, or not yet with its header,
                          holds nothing anyone may see yet, and plans as an
                          empty log */
    uint64_t size;     /* nonzero: plan it no further than this size, the
                          caller's own look at it (logfs_reader_open_kept_upto) */
};

/* logfs_plan_build_flags and logfs_plan_build_sessions from sources; the
 * plan is the same whether a metalog comes as a file or as its exported
 * bytes. */
int logfs_plan_build_src(const struct logfs_metalog_src *logs, size_t n,
                         const struct logfs_plan_opts *o, unsigned flags, struct logfs_plan **out,
                         struct logfs_error *err);
int logfs_plan_build_sessions_src(const struct logfs_metalog_src *logs, const size_t *counts,
                                  size_t nsessions, const struct logfs_plan_opts *o,
                                  struct logfs_plan **out, struct logfs_error *err);

/* Free the plan; NULL is fine. */
void logfs_plan_free(struct logfs_plan *p);

/* @return number of epochs to apply (0 .. nepochs-1). */
uint64_t logfs_plan_nepochs(const struct logfs_plan *p);

/* @return number of writers / the file id from the headers. */
uint32_t logfs_plan_nwriters(const struct logfs_plan *p);
uint64_t logfs_plan_file_id(const struct logfs_plan *p);

/* @return the datalog path of writer @p rank (the metalog's, ".datalog");
 *         NULL for a lazy writer that made no log (absent_ok): it has no
 *         op in the plan. */
const char *logfs_plan_datalog(const struct logfs_plan *p, uint32_t rank);

/* @return why writer @p rank's log was only partly used (salvage), or NULL. */
const char *logfs_plan_warning(const struct logfs_plan *p, uint32_t rank);

/* @return the epochs writer @p rank's metalog sealed (what the plan uses
 *         of it; with salvage, those before the damage). */
uint64_t logfs_plan_writer_epochs(const struct logfs_plan *p, uint32_t rank);

/* @param[out] m  where the plan stopped reading writer @p rank's metalog:
 *                after its last sealed epoch, or with include_unsealed
 *                after its last record (the resume of a later plan that
 *                should hold only what was logged after this one).
 *                A mark of pos 0 for a writer the plan did not read. */
void logfs_plan_mark(const struct logfs_plan *p, uint32_t rank, struct logfs_reader_mark *m);

/*
 * The smallest and largest key of the ops a one-session plan holds.  A reader that applied an earlier plan P of the same
 * logs and then applies this one, resumed from P's marks, holds
 * exactly what one plan of everything gives when this plan's min is at
 * least P's max (or than the largest max of all the plans applied so far):
 * every new op then wins over every op applied before (given SETSIZEs that
 * only grow the file, as for resume).
 * @return 1 with the bounds set, 0 if the plan holds no op
 */
int logfs_plan_key_bounds(const struct logfs_plan *p, struct logfs_plan_key *min,
                          struct logfs_plan_key *max);

/* @return -1, 0 or 1 as key @p a comes before, is, or comes after @p b. */
int logfs_plan_key_cmp(const struct logfs_plan_key *a, const struct logfs_plan_key *b);

/*
 * Check the plan against the epochs each writer was known to have sealed
 * when it closed the file (the manifest's count; 0 promises nothing).
 * @param promised  nwriters counts
 * @return LOGFS_OK, or LOGFS_ELOST naming the first writer whose metalog
 *         seals fewer: synced data is missing (a truncated or stale log)
 */
int logfs_plan_check_sealed(const struct logfs_plan *p, const uint64_t *promised,
                            struct logfs_error *err);

/* @return bytes epoch @p e writes in total. */
uint64_t logfs_plan_epoch_bytes(const struct logfs_plan *p, uint64_t e);

/* @return one past the last file byte epoch @p e writes (0: it writes
 *         none): a file's size from a plan, with no piece visited. */
uint64_t logfs_plan_epoch_end(const struct logfs_plan *p, uint64_t e);

/* @param[out] rs  the SETSIZE effect of epoch @p e.  @return LOGFS_OK or LOGFS_EINVAL. */
int logfs_plan_resize(const struct logfs_plan *p, uint64_t e, struct logfs_resize *rs);

/*
 * The share of epoch @p e that replayer @p r of @p m applies: one contiguous
 * file domain [*lo, *hi) holding about 1/m of the epoch's bytes.  Domains of
 * r = 0..m-1 are disjoint and ascending; together they hold every piece.
 * @param[out] lo,hi  the domain (equal when the share is empty)
 * @param fn          called for each piece in the domain, in file order
 * @return LOGFS_OK, LOGFS_EINVAL (e, r or m out of range), or fn's value
 */
int logfs_plan_domain(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                      uint64_t *lo, uint64_t *hi, logfs_replay_fn fn, void *arg);

/*
 * The same share as logfs_plan_domain (the same [*lo, *hi), the same bytes
 * from the same datalog offsets), delivered as runs instead of pieces: in a
 * compact epoch each group's blocks inside the domain make one run, and a
 * block cut by a domain edge becomes a run of its own (count 1); single
 * blocks, and the pieces of a range-map epoch, are gathered per writer
 * into runs while the domain is walked in file order.  Runs never share a
 * byte; each run's blocks ascend, but runs come in no particular order.
 * @return LOGFS_OK, LOGFS_EINVAL, LOGFS_ENOMEM, or fn's value
 */
int logfs_plan_domain_runs(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                           uint64_t *lo, uint64_t *hi, logfs_replay_run_fn fn, void *arg);

/* @return nonzero if epoch @p e is held in the compact form (see above). */
int logfs_plan_epoch_compact(const struct logfs_plan *p, uint64_t e);

#ifdef __cplusplus
}
#endif

#endif
