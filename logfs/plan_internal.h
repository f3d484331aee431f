/*
 * What the planner's sources share (planner.c reads metalogs into epochs,
 * plan_map.c and plan_compact.c are the two forms of an epoch's plan,
 * plan_sessions.c joins sessions, plan_domain.c cuts domains).  Not part
 * of the API: planner.h is.
 */
#ifndef LOGFS_PLAN_INTERNAL_H
#define LOGFS_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "extents.h"
#include "internal.h"
#include "planner.h"
#include "reader.h"

/* The order in which ops land (logfs_plan_key_cmp): epoch, collective-call
 * count, STAMP clock, rank.  Inline: the ops' sort compares with it. */
static inline int plan_key_order(const struct logfs_plan_key *a, const struct logfs_plan_key *b)
{
    if (a->epoch != b->epoch)
        return a->epoch < b->epoch ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->stamp != b->stamp)
        return a->stamp < b->stamp ? -1 : 1;
    return (a->writer > b->writer) - (a->writer < b->writer);
}

/* One group of a WRITE record, or a SETSIZE (g.count == 0, g.offset = size). */
struct op {
    struct logfs_group g;
    uint64_t dlog;   /* datalog offset of block 0 */
    uint64_t seq;    /* collective calls the writer had entered (ORDER); in a
                        plan of several sessions, the op's place in time */
    uint64_t stamp;  /* the writer's last STAMP clock */
    uint32_t writer;
};

/* A compact group: count blocks of bl bytes at off + i * stride, with
 * stride > bl when count > 1; block i's data at dlog + i * bl. */
struct cgroup {
    uint64_t off, bl, stride, count, dlog;
    uint32_t writer;
};

/* Strided groups whose extents [first block, end of last block) overlap,
 * transitively: disjoint ascending intervals of the file. */
struct cluster {
    uint64_t start, end;
    uint64_t before; /* bytes of the strided groups of earlier clusters */
    size_t first, n; /* its groups: strided[first .. first + n) */
};

struct epoch {
    /* while building: every writer's ops, in rank order */
    struct op *ops;
    size_t nops, capops;
    int need_map;               /* a SETSIZE cut bytes: only the range map applies it */
    int mixed;                  /* ops of more than one collective-call count or
                                   STAMP clock: they need sorting */
    int compact;                /* nonzero: the compact form below, else the pieces */
    /* range-map form: merged pieces with byte prefix sums */
    struct logfs_replay_piece *pieces;
    uint64_t *prefix;           /* bytes before pieces[i] */
    size_t n;
    /* compact form: single blocks (sorted), strided groups (sorted), clusters */
    struct cgroup *singles;
    uint64_t *sprefix;          /* bytes before singles[i] */
    size_t nsingles;
    struct cgroup *strided;
    size_t nstrided;
    struct cluster *cl;
    size_t ncl;
    uint64_t total;
    struct logfs_resize rs;
};

struct logfs_plan {
    uint64_t file_id;
    uint32_t nwriters;
    char **datalogs;
    char **warnings;
    uint64_t *sealed;  /* epochs each writer's metalog sealed */
    uint64_t *procs;   /* each writer's process (STAMP; 0: unknown) */
    struct logfs_reader_mark *marks; /* where each writer's reading stopped */
    struct logfs_plan_key key_min, key_max; /* of the ops held (one session) */
    int has_keys;
    struct epoch *epochs;
    size_t nepochs, cap;
};

/* Where the pieces of a domain go: the caller's piece callback (adjacent
 * pieces of one writer, contiguous in its datalog, merged) or its run
 * callback (each writer's pieces gathered into strided runs). */
struct sink {
    logfs_replay_fn piece_fn;
    logfs_replay_run_fn run_fn;
    void *arg;
    struct logfs_replay_piece pend; /* piece mode; length 0: none */
    struct logfs_replay_run *wr;    /* run mode, per writer; count 0: none */
    uint32_t nw;
};

/* planner.c: reading metalogs */
int plan_grow_epochs(struct logfs_plan *p, uint64_t need);
int plan_push_ops(struct op **ops, size_t *n, size_t *cap, const struct op *add, size_t k);
/* Two resizes of one epoch as one: the smallest truncation, the largest
 * extension. */
void plan_merge_resize(struct logfs_resize *into, const struct logfs_resize *r);
/* Read one session's metalogs into a new plan whose epochs still hold their
 * ops (not yet finished). */
int plan_load_session(const struct logfs_metalog_src *logs, size_t n,
                      const struct logfs_plan_opts *o, struct logfs_plan **out,
                      struct logfs_error *err);
/* Sources for paths (malloc'ed; NULL out of memory). */
struct logfs_metalog_src *plan_sources(const char *const *metalogs, size_t n);
/* Turn an epoch's ops into its compact form if it can, else its range-map
 * form, and free the ops. */
int plan_finish_epoch(struct epoch *ep, unsigned flags);

/* plan_map.c: the range-map form */
int plan_sort_ops(struct op *ops, size_t n);
int plan_with_map(struct epoch *ep);
int plan_map_domain(const struct epoch *ep, uint64_t b0, uint64_t b1, uint64_t *lo, uint64_t *hi,
                    struct sink *s);

/* plan_compact.c: the compact form; plan_compact returns 1 done, 0 not
 * applicable, or LOGFS_ENOMEM */
int plan_compact(struct epoch *ep);
void plan_free_compact(struct epoch *ep);
uint64_t plan_compact_byte_at(const struct epoch *ep, uint64_t b);
int plan_compact_domain(const struct epoch *ep, uint64_t lo, uint64_t hi, struct sink *s);

/* plan_domain.c */
int plan_sink_piece(struct sink *s, const struct logfs_replay_piece *q);

#endif
