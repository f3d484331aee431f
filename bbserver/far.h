/*
 * Logs on other nodes, reached from this server through theirs: what a
 * drain of a file written on several nodes reads (logfs_drain_far,
 * logfs/drain.h).  Connections are made at first use and kept, a pool per
 * server address: each call takes a free one, so that the drain's threads
 * read from other nodes at once.
 */
#ifndef BBSERVER_FAR_H
#define BBSERVER_FAR_H

#include <stdint.h>

#include "proto.h"
#include "../logfs/drain.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bbs_far;

/* @p timeout: seconds a server has to answer (0: 30).
 * @return NULL out of memory */
struct bbs_far *bbs_far_open(const uint8_t token[BBS_TOKEN_LEN], double timeout);

/* The calls of a drain, through @p f. */
void bbs_far_calls(struct bbs_far *f, struct logfs_drain_far *out);

void bbs_far_close(struct bbs_far *f);

#ifdef __cplusplus
}
#endif

#endif
