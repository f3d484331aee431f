/*
 * Applying a replay plan with POSIX calls, in one process: how a node's
 * server writes a file from its logs while the application goes on
 * (bbfs_replay=background, docs/drain.md).  The collective replay
 * (ad_bbfs_replay.c) applies the same plan, epoch by epoch, with
 * MPI_File_write_all; the file is the same byte for byte.
 *
 * Small pieces do not become one system call each.  Each epoch is cut into
 * domains of about @c window logged bytes (logfs_plan_domain_runs); a
 * domain's runs are read from the datalogs with one pread per run, sorted
 * into file order, and written in as few pwrites as the gaps between them
 * allow: a gap of at most @c max_gap bytes is read from the file and
 * written back with its neighbours (ROMIO's data sieving does the same),
 * which is safe because nothing else writes the file while it drains.
 */
#ifndef LOGFS_DRAIN_H
#define LOGFS_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

struct logfs_plan;

#define LOGFS_DRAIN_MAX_THREADS 16

/* Logs on other nodes (a session of processes on several nodes), reached
 * through the server of the node that holds them (bbserver's EXPORT, READ
 * and REMOVE): a writer whose metalog cannot be opened here and whose
 * manifest entry names a server is read through it.  Each call returns
 * LOGFS_OK, or an error with why in err.  Calls come from the drain's
 * threads one at a time or at once: the implementation serializes them
 * where it must. */
struct logfs_drain_far {
    /* the sealed part of metalog, malloc'ed */
    int (*export_metalog)(void *arg, const char *server, const char *metalog, void **bytes,
                          size_t *len, struct logfs_error *err);
    /* len bytes of datalog at off */
    int (*read)(void *arg, const char *server, const char *datalog, uint64_t off, void *buf,
                size_t len, struct logfs_error *err);
    /* a replayed writer's log files go */
    int (*remove)(void *arg, const char *server, const char *metalog, struct logfs_error *err);
    /* the file's map (the server the manifest names) forgets a replayed
     * session's bytes: they are in the file now */
    int (*replayed)(void *arg, const char *map, const char *path, uint64_t session,
                    struct logfs_error *err);
    void *arg;
};

struct logfs_drain_opts {
    uint64_t window;  /* logged bytes gathered per domain (0: 16 MiB) */
    uint64_t max_gap; /* largest gap filled from the file between two pieces
                         written together (0: 64 KiB; UINT64_MAX: any) */
    int no_gaps;      /* nonzero: never read the file, every gap splits */
    int durable;      /* fsync the file once everything is in */
    int threads;      /* domains drained at once, 1 (0: 1) to LOGFS_DRAIN_MAX_THREADS;
                         an epoch of a MiB or more per thread is cut into at
                         least as many domains */
    /* After each domain (NULL: none): bytes applied so far and in all;
     * a nonzero return stops the drain with that code. */
    int (*progress)(void *arg, uint64_t done, uint64_t total);
    void *arg;
    /* logfs_drain_file: logs on other nodes (NULL: only logs this node
     * holds can be drained) */
    const struct logfs_drain_far *far;
    /* logfs_drain: by the plan's writers, the server that reads a writer's
     * datalog, or NULL where this node reads it (NULL: every one); set by
     * logfs_drain_file */
    const char *const *far_servers;
    /* Buffers kept from one drain to the next (NULL: each drain's own) */
    struct logfs_drain_buffers *keep;
};

/*
 * The buffers a drain's threads stage and gather domains in (two of about
 * a window each per thread), kept for the next drain: a server draining
 * file after file would otherwise fault in fresh pages for every one, a
 * third of a 64 MiB drain's time on a 2-core node.  One drain at a time.
 * @return NULL if out of memory (drains then keep none)
 */
struct logfs_drain_buffers *logfs_drain_buffers_new(void);
/* The bytes they hold now. */
size_t logfs_drain_buffers_bytes(const struct logfs_drain_buffers *b);
void logfs_drain_buffers_free(struct logfs_drain_buffers *b);

/* What a drain did (for benchmarks and bbsctl status). */
struct logfs_drain_stats {
    uint64_t bytes;     /* logged bytes applied */
    uint64_t writes;    /* pwrite calls on the file */
    uint64_t gap_bytes; /* bytes read from the file to fill gaps */
    uint64_t epochs;
};

/*
 * Apply every epoch of @p p to the file open for reading and writing at
 * @p fd: each epoch's size change (SETSIZE), then its pieces.
 * @param st  NULL, or filled in
 * @return LOGFS_OK; LOGFS_EIO / LOGFS_ENOSPC (the file, @p err names it);
 *         a datalog's read error (LOGFS_ESHORT: a datalog shorter than its
 *         metalog says); LOGFS_ENOMEM; or what @c progress returned
 */
int logfs_drain(const struct logfs_plan *p, int fd, const struct logfs_drain_opts *o,
                struct logfs_drain_stats *st, struct logfs_error *err);

/*
 * Drain the pending sessions of canonical file @p path (a POSIX path) into
 * it, with every log reachable here or, through o->far, on other nodes: what a node's server does for
 * bbfs_replay=background, with no MPI process.  Under the sessions' lock
 * (logfs_sessions_lock), every pending session is claimed, oldest first;
 * they are planned together (logfs_plan_build_sessions_src, as the
 * collective replay plans them), checked against the epochs their writers
 * sealed, and drained; the file is made durable if any session was; then
 * every manifest is marked replayed, the logs and canaries go, and the
 * manifests; a map's server is told the sessions were replayed.  A session already marked replayed (a replay that died while
 * cleaning up) only loses its leftovers.  Stopped or killed anywhere, it
 * can run again (or an open or bbfs-replay can replay the same sessions):
 * the file comes out the same.
 * @return LOGFS_OK (also with nothing pending: st->epochs is then 0);
 *         LOGFS_EBUSY (a handle of the file is open: its close replays
 *         them; nothing was touched); a manifest's or metalog's error;
 *         LOGFS_ELOST (a log seals fewer epochs than its manifest
 *         promises); logfs_drain's errors.  On an error the sessions stay
 *         pending.
 */
int logfs_drain_file(const char *path, const struct logfs_drain_opts *o,
                     struct logfs_drain_stats *st, struct logfs_error *err);

#ifdef __cplusplus
}
#endif

#endif
