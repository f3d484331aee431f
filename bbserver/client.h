/*
 * The client side of bbserver: one connection, one request at a time,
 * each waited for with a time-out: polled briefly (BBFS_SERVER_SPIN_US,
 * yielding the core), then asleep in poll on the worker's event fd.  Used
 * by the driver inside MPI processes, by bbsctl and by the tests.  No MPI
 * here.
 */
#ifndef BBSERVER_CLIENT_H
#define BBSERVER_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bbs_client;

/*
 * Connect to the server at "host:port" and check that it answers and
 * accepts the token (a PING).  @return 0, or -1 with why in err: the
 * address is bad, nothing answers within timeout seconds, or the server
 * refused the token.
 */
int bbs_client_open(const char *addr, const uint8_t *token, double timeout,
                    struct bbs_client **out, char *err, size_t errlen);

/* The token and a fresh request id, for encoding a request. */
const uint8_t *bbs_client_token(const struct bbs_client *c);
uint64_t bbs_client_next_id(struct bbs_client *c);

/*
 * Send an encoded request and wait for its reply, decoded into rep (valid
 * until the next call).  @return 0 when a reply came (rep->status may
 * still be an error the server reports), -1 with why in err when none
 * did: time-out, the server went away, or a malformed reply; -2 when the
 * server answered in another protocol version (err says what to do).
 */
int bbs_client_call(struct bbs_client *c, const struct bbs_buf *req, struct bbs_reply *rep,
                    char *err, size_t errlen);

/* Whether the connection broke under the last call: the server's end went
 * away (it was stopped, or crashed), as UCX saw, rather than a time-out.
 * A restarted server may be there again: a new connection will tell. */
int bbs_client_broken(const struct bbs_client *c);

/* The address this client talks to. */
const char *bbs_client_addr(const struct bbs_client *c);

void bbs_client_close(struct bbs_client *c);

/* How the helpers below reach a server: send req and take its reply
 * (valid until the next call), returning 0 only for a reply whose status
 * is BBS_OK; else -1 with why in err.  (The driver's calls reconnect to a
 * restarted server and note its clock; a drain's take a pooled
 * connection.) */
typedef int (*bbs_call_fn)(void *ctx, const struct bbs_buf *req, struct bbs_reply *rep,
                           char *err, size_t errlen);

/* len bytes of the log at path on the server's node, at off, in replies
 * of at most BBS_MAX_READ.  @return 0, or -1 with why in err. */
int bbs_read_log(bbs_call_fn call, void *ctx, const uint8_t *token, const char *path,
                 uint64_t off, void *buf, size_t len, char *err, size_t errlen);

/* The sealed part of metalog on the server's node (EXPORT, then READs of
 * what one reply did not hold), malloc'ed into *out; *warning (malloc'ed,
 * or NULL) what salvage left out.  @return 0, or -1 with why in err. */
int bbs_export_log(bbs_call_fn call, void *ctx, const uint8_t *token, const char *metalog,
                   int salvage, void **out, size_t *len, char **warning, char *err,
                   size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
