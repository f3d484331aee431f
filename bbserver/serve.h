/*
 * One request in, one reply out: everything bbserver does with a message
 * except moving it.  No UCX here, so the unit tests and the fuzzer drive
 * the same code the daemon runs.
 */
#ifndef BBSERVER_SERVE_H
#define BBSERVER_SERVE_H

#include <stddef.h>

#include "drains.h"
#include "ownmap.h"
#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bbs_serve_conf {
    uint8_t token[BBS_TOKEN_LEN];       /* clients must present it */
    const char *const *logdirs;         /* READ serves files below these only */
    size_t nlogdirs;
    uint32_t pid;                       /* told by PING */
    /* Which life of the maps this is, told by every reply: new at each
     * start, unless the maps were loaded from the state file (so a client
     * knows when a map it relied on was lost: bbserver/state.h). */
    uint64_t incarnation;
    /* Files held by the whole server (PING), when it has several maps;
     * NULL: the map bbs_serve is given. */
    uint64_t (*nfiles)(void *arg);
    void *nfiles_arg;
    /* DRAIN queues the canonical files it names to be written by the
     * daemon's drain thread (drains.h); NULL: refused with BBS_EPERM (a
     * fuzzer's, a unit test's). */
    struct bbs_drains *drains;
};

/*
 * Decode msg, check the token, run it against m and encode the reply in
 * out (which is reused: its old contents go).  A malformed message still
 * gets a reply (status BBS_EMSG, with why) when its header can be read.
 * @return 0, or -1 when even the reply could not be made (out of memory).
 */
int bbs_serve(struct bbs_ownmap *m, const struct bbs_serve_conf *conf,
              struct bbs_stats *stats, const void *msg, size_t len, struct bbs_buf *out);

/*
 * The server's clock (nanoseconds): this node's real time, but never less
 * than a clock a writer attached with (@p seen; 0: none), and past every
 * clock it gave before: no two replies carry the same.  Every reply
 * carries it (a causal writer's writes since its last acquire take the
 * clock of the answer to the attach that releases them).  A Lamport clock: a process that hears it after an MPI call
 * that orders it after a writer's attach stamps its later writes after
 * that writer's, whatever the nodes' clocks say (docs/reliability.md).
 */
uint64_t bbs_serve_clock(uint64_t seen);

/* Whether path names a regular file below one of conf's log directories
 * (after resolving links).  Fills why (len bytes) when not. */
int bbs_serve_path_allowed(const struct bbs_serve_conf *conf, const char *path, char *why,
                           size_t len);

#ifdef __cplusplus
}
#endif

#endif
