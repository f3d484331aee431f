/*
 * bbserver's background drains (docs/drain.md): files whose pending logs
 * the server writes into them (logfs_drain_file), one file at a time, on a
 * thread of its own.  A request to drain is answered at once, the maps of
 * other files stay served meanwhile, and bbsctl status / wait watch the
 * drains through bbs_drains_list.
 *
 * A file whose session is still held (a handle open, or another drainer)
 * waits and is tried again, backing off to a second between tries.  The
 * files not yet drained are kept in a journal (one path per line,
 * rewritten on every change), which a restarted server queues again: a
 * server killed in the middle leaves its claim to die with it, and the
 * next one drains the file from the start (a drain is a replay: it can
 * run again to the same file).  Plain C with threads, no UCX: the unit
 * tests drive it as the daemon does.
 */
#ifndef BBSERVER_DRAINS_H
#define BBSERVER_DRAINS_H

#include <stddef.h>
#include <stdint.h>

#include "../logfs/drain.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bbs_drain_state {
    BBS_DRAIN_NONE = 0,     /* the server knows nothing of the file */
    BBS_DRAIN_QUEUED,       /* waiting for the drain thread */
    BBS_DRAIN_HELD,         /* its session is held (a handle is open): tried again */
    BBS_DRAIN_RUNNING,
    BBS_DRAIN_DONE,         /* canonical (as of the drain's start) */
    BBS_DRAIN_FAILED,       /* the sessions stay pending; error says why */
    BBS_DRAIN_NUM_STATES
};

/* @return "queued", "held", ... ("?" past the list). */
const char *bbs_drain_state_name(int state);

/* What the server knows of one file's drain. */
struct bbs_drain_info {
    char *path;
    int state;              /* enum bbs_drain_state */
    uint64_t done, total;   /* logged bytes applied so far, and in all (RUNNING, DONE) */
    uint64_t epochs, writes; /* DONE: epochs applied, pwrites on the file */
    uint32_t tries;         /* attempts so far (a held session makes several) */
    double age;             /* seconds since it was queued, or (DONE, FAILED) ended */
    char *error;            /* FAILED: why; HELD: who holds it ("" otherwise) */
};

struct bbs_drains_conf {
    const char *journal;    /* files still to drain, across restarts (NULL: none) */
    int nice;               /* the drain threads' niceness (0: the server's) */
    int threads;            /* threads one drain uses (logfs_drain_opts.threads) */
    double rate;            /* logged bytes per second at most (0: no limit) */
    size_t keep;            /* ended drains remembered for status and wait (0: 1024) */
    int durable;            /* fsync every drained file (as bbfs_durable does) */
    const struct logfs_drain_far *far; /* logs on other nodes (NULL: this node's only) */
};

struct bbs_drains;

/*
 * Start the drain thread; files the journal names are queued again.
 * @return 0, or -1 with why in err (the journal unreadable, no thread).
 */
int bbs_drains_start(const struct bbs_drains_conf *c, struct bbs_drains **out, char *err,
                     size_t errlen);

/*
 * Queue a file's drain (an absolute path) and say where it stands.  A file
 * queued or held already is not queued twice (a held one is tried again
 * at once: its holder may just have closed); one running is run again
 * once it ends (its close may have left a newer session).
 * @param now  filled in (free with bbs_drain_info_clear); may be NULL
 * @return 0, or -1 out of memory (a journal that cannot be written is
 *         said on stderr: only a restart's memory of the drain is lost)
 */
int bbs_drains_submit(struct bbs_drains *d, const char *path, struct bbs_drain_info *now);

/*
 * The drains the server knows of: every one (path NULL or ""), or the one
 * of path (n is then 0 or 1).  Queued, held and running first, in queue
 * order, then the ended ones, newest first.
 * @return 0, or -1 out of memory
 */
int bbs_drains_list(struct bbs_drains *d, const char *path, struct bbs_drain_info **out,
                    size_t *n);
void bbs_drains_info_free(struct bbs_drain_info *v, size_t n);
void bbs_drain_info_clear(struct bbs_drain_info *i);

/* Drains queued, held or running (the server stays up while there are). */
size_t bbs_drains_unfinished(struct bbs_drains *d);

/*
 * Stop: the running drain stops at its next domain (its sessions stay
 * pending and in the journal), the thread ends, and d is freed.
 */
void bbs_drains_stop(struct bbs_drains *d);

#ifdef __cplusplus
}
#endif

#endif
