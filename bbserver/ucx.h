/*
 * What bbserver and its clients share about UCX: one context and worker
 * with active messages and wake-up, addresses as "host:port", and taking
 * an incoming active message whether it came eager or by rendezvous.
 */
#ifndef BBSERVER_UCX_H
#define BBSERVER_UCX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ucp/api/ucp.h>

#include "ucx_dl.h"

struct bbs_ucx {
    ucp_context_h ctx;
    ucp_worker_h worker;
    int efd;                    /* the worker's event fd, for epoll/poll */
};

/* @return 0, or -1 with why in err. */
int bbs_ucx_open(struct bbs_ucx *u, char *err, size_t errlen);
void bbs_ucx_close(struct bbs_ucx *u);

/* Take active messages of id with cb(arg, ...).  @return 0, or -1 with why. */
int bbs_ucx_set_handler(struct bbs_ucx *u, unsigned id, ucp_am_recv_callback_t cb, void *arg,
                        char *err, size_t errlen);

/* "host:port" -> host and port.  @return 0, or -1 if it has no port. */
/* Seconds on a monotonic clock. */
double bbs_now(void);

/* Close ep (forced: without telling the peer, for a peer that failed),
 * progressing u's worker for at most timeout seconds: a dead peer never
 * answers a graceful close, which is then cancelled. */
void bbs_ep_close(struct bbs_ucx *u, ucp_ep_h ep, int force, double timeout);

int bbs_addr_split(const char *hostport, char *host, size_t hostlen, uint16_t *port);

/* Resolve host (name or address) and port.  @return 0, or -1 with why. */
int bbs_addr_resolve(const char *host, uint16_t port, struct sockaddr_storage *ss,
                     char *err, size_t errlen);

/* An incoming message being received.  done is set (by the worker's
 * progress) when buf holds len bytes, or status says why not. */
struct bbs_incoming {
    uint8_t *buf;
    size_t len, cap;            /* (cap: buf's size, bigbuf.h) */
    int done;
    ucs_status_t status;
    void *desc;                 /* rendezvous descriptor not yet started */
};

/*
 * In an active-message callback: take the message into a new incoming.
 * Eager data is copied (done at once); rendezvous data is left for
 * bbs_incoming_start, outside the callback.  @return the incoming, or
 * NULL (out of memory; the message is dropped).
 */
struct bbs_incoming *bbs_incoming_take(void *data, size_t length,
                                       const ucp_am_recv_param_t *param);

/* Start the rendezvous receive of an incoming (no-op if eager).
 * @return 0, or -1 (in->status says why; in->done is then set). */
int bbs_incoming_start(struct bbs_ucx *u, struct bbs_incoming *in);

/* Free an incoming that is done. */
void bbs_incoming_free(struct bbs_incoming *in);

#endif
