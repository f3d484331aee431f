/*
 * The client side of bbserver (see client.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "client.h"

#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../logfs/coding.h"
#include "server.h"
#include "ucx.h"

struct bbs_client {
    struct bbs_ucx u;
    ucp_ep_h ep;
    char addr[300];
    uint8_t token[BBS_TOKEN_LEN];
    double timeout;
    double spin;                /* seconds to poll for a reply before sleeping */
    unsigned misses;            /* calls in a row whose reply outlasted the spin */
    unsigned calls;
    uint64_t next_id;
    uint64_t waiting;           /* id of the request in flight */
    struct bbs_incoming *reply; /* its reply, once it arrives */
    ucs_status_t failed;        /* the endpoint's error, UCS_OK while fine */
    int timed_out;              /* failed is ours: the endpoint closed at a time-out */
};

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    struct bbs_client *c = arg;
    (void) ep;
    c->failed = status;
}

static ucs_status_t on_reply(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param)
{
    struct bbs_client *c = arg;
    (void) header;
    (void) header_length;
    /* The id is in the header (bytes 8-15); a reply to a request that
     * timed out earlier is dropped.  Eager data is there to read; a
     * rendezvous reply is for the one request in flight, or dropped. */
    if (c->reply || length > BBS_MAX_MSG)
        return UCS_OK;
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)
        && (length < 16 || logfs_get64((const uint8_t *) data + 8) != c->waiting))
        return UCS_OK;
    c->reply = bbs_incoming_take(data, length, param);
    return c->reply && c->reply->desc ? UCS_INPROGRESS : UCS_OK;
}

/* Progress until done() or the deadline; sleeps in poll between events. */
static int wait_until(struct bbs_client *c, double deadline, int (*done)(struct bbs_client *))
{
    /* Poll for the reply (yielding) before sleeping: a caller inside an MPI
     * call has nothing else to do, as MPI's own waits poll.  A reply that
     * keeps outlasting the poll (a slow request, a busy server) stops it:
     * after 32 misses in a row, every 32nd call tries again. */
    int spin = c->spin > 0 && (c->misses < 32 || ++c->calls % 32 == 0);
    double spin_end = spin ? bbs_now() + c->spin : 0;
    for (;;) {
        while (ucp_worker_progress(c->u.worker))
            ;
        if (c->reply && c->reply->desc)
            bbs_incoming_start(&c->u, c->reply);
        if (done(c)) {
            if (spin_end)
                c->misses = 0;
            return 0;
        }
        if (c->failed != UCS_OK)
            return -1;
        double left = deadline - bbs_now();
        if (left <= 0)
            return -1;
        /* A reply usually comes within a few microseconds of progress; a
         * sleeping thread takes 40 us to wake on this kind of VM.  Each
         * empty poll yields: with more clients than cores, the server's
         * thread waiting for this core was what the reply waited for (4
         * clients on 2 cores: 69-92k -> 110-127k messages/s). */
        if (spin_end && bbs_now() < spin_end) {
            sched_yield();
            continue;
        }
        if (spin_end) {
            c->misses++;
            spin_end = 0;
        }
        ucs_status_t st = ucp_worker_arm(c->u.worker);
        if (st == UCS_ERR_BUSY)
            continue;
        if (st != UCS_OK)
            return -1;
        struct pollfd p = { .fd = c->u.efd, .events = POLLIN };
        int ms = left > 0.1 ? 100 : (int) (left * 1000) + 1;   /* (rendezvous progress) */
        poll(&p, 1, ms);
    }
}

static int reply_done(struct bbs_client *c)
{
    if (!c->reply || !c->reply->done)
        return 0;
    if (c->reply->status == UCS_OK
        && (c->reply->len < 16 || logfs_get64(c->reply->buf + 8) != c->waiting)) {
        bbs_incoming_free(c->reply);    /* a late rendezvous reply to an older request */
        c->reply = NULL;
        return 0;
    }
    return 1;
}

const uint8_t *bbs_client_token(const struct bbs_client *c)
{
    return c->token;
}

uint64_t bbs_client_next_id(struct bbs_client *c)
{
    return ++c->next_id;
}

int bbs_client_broken(const struct bbs_client *c)
{
    return c->failed != UCS_OK && !c->timed_out;
}

const char *bbs_client_addr(const struct bbs_client *c)
{
    return c->addr;
}

static void send_done(void *request, ucs_status_t status, void *user_data)
{
    (void) request;
    *(ucs_status_t *) user_data = status;
}

int bbs_client_call(struct bbs_client *c, const struct bbs_buf *req, struct bbs_reply *rep,
                    char *err, size_t errlen)
{
    ucp_request_param_t p;
    ucs_status_t sent = UCS_INPROGRESS;
    double deadline = bbs_now() + c->timeout;
    char why[256];

    if (c->failed != UCS_OK) {
        snprintf(err, errlen, "the connection to bbserver %s is broken (%s); restart the "
                 "server or check BBFS_SERVER", c->addr, ucs_status_string(c->failed));
        return -1;
    }
    bbs_incoming_free(c->reply);
    c->reply = NULL;
    c->waiting = req->len >= 16 ? logfs_get64(req->p + 8) : 0;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
        | UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send = send_done;
    p.user_data = &sent;
    p.flags = UCP_AM_SEND_FLAG_REPLY;
    ucs_status_ptr_t r = ucp_am_send_nbx(c->ep, BBS_AM_REQUEST, NULL, 0, req->p, req->len, &p);
    if (UCS_PTR_IS_ERR(r)) {
        snprintf(err, errlen, "cannot send to bbserver %s: %s", c->addr,
                 ucs_status_string(UCS_PTR_STATUS(r)));
        return -1;
    }
    /* The request's buffer is the caller's: wait until UCX is done with it
     * as well as for the reply. */
    if (r == NULL)
        sent = UCS_OK;
    int rc = wait_until(c, deadline, reply_done), lost = 0;
    if (r) {
        while (sent == UCS_INPROGRESS && c->failed == UCS_OK && bbs_now() < deadline + 1)
            ucp_worker_progress(c->u.worker);
        if (sent == UCS_INPROGRESS)
            ucp_request_cancel(c->u.worker, r);
        double grace = bbs_now() + 1;
        while (sent == UCS_INPROGRESS && bbs_now() < grace)
            ucp_worker_progress(c->u.worker);
        if (sent == UCS_INPROGRESS) {
            /* A send UCX does not cancel: to a peer whose connection never
             * formed (a link down), it would wait out TCP's own timeout,
             * minutes.  Closing the endpoint by force completes it. */
            bbs_ep_close(&c->u, c->ep, 1, 1);
            c->ep = NULL;
            lost = 1;
            grace = bbs_now() + 5;
            while (sent == UCS_INPROGRESS && bbs_now() < grace)
                ucp_worker_progress(c->u.worker);
        }
        if (sent != UCS_INPROGRESS)
            ucp_request_free(r);        /* (else UCX still owns it: left, not waited for) */
    }
    if (rc != 0) {
        if (c->failed != UCS_OK)
            snprintf(err, errlen, "bbserver %s went away (%s); restart it, or check "
                     "BBFS_SERVER and the bbfs_server hint", c->addr,
                     ucs_status_string(c->failed));
        else
            snprintf(err, errlen, "bbserver %s did not answer within %.0f s "
                     "(bbfs_server_timeout); is it running and reachable?", c->addr,
                     c->timeout);
        if (lost && c->failed == UCS_OK) {
            c->failed = UCS_ERR_TIMED_OUT;      /* (the endpoint is gone) */
            c->timed_out = 1;
        }
        return -1;
    }
    if (c->reply->status != UCS_OK) {
        snprintf(err, errlen, "receiving from bbserver %s: %s", c->addr,
                 ucs_status_string(c->reply->status));
        return -1;
    }
    int st = bbs_dec_reply(c->reply->buf, c->reply->len, rep, why, sizeof(why));
    if (st == BBS_EVERSION) {
        snprintf(err, errlen, "bbserver %s is another bbfs build's (%s): stop it with SIGTERM "
                 "(it saves its map) and the next open starts this build's", c->addr, why);
        return -2;
    }
    if (st != BBS_OK || rep->id != c->waiting) {
        snprintf(err, errlen, "bbserver %s sent a malformed reply: %s", c->addr,
                 rep->id != c->waiting ? "for another request" : why);
        return -1;
    }
    return 0;
}

/* How long a caller polls for its reply before it sleeps: BBFS_SERVER_SPIN_US
 * microseconds (default 250, 0: never).  Over shared memory a reply comes
 * in about 5 us; across nodes (TCP) in 30-150 us, and a sleeping thread
 * takes about 40 us more to wake on this kind of VM.  Across 2 emulated
 * nodes, 16 writes and an allreduce a round under causal (an attach per
 * round), 4 processes: 0.33 s at 250-300 against 0.41 s at 20 (docs/bbserver.md). */
static double client_spin(void)
{
    const char *v = getenv("BBFS_SERVER_SPIN_US");
    char *end;
    double us = v && *v ? strtod(v, &end) : 250;
    if (v && *v && (*end || us < 0 || us > 1e6))
        us = 250;
    return us * 1e-6;
}

int bbs_client_open(const char *addr, const uint8_t *token, double timeout,
                    struct bbs_client **out, char *err, size_t errlen)
{
    struct bbs_client *c = calloc(1, sizeof(*c));
    struct sockaddr_storage ss;
    char host[256];
    uint16_t port;
    ucp_ep_params_t ep;
    ucs_status_t st;

    *out = NULL;
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(c->addr, sizeof(c->addr), "%s", addr);
    memcpy(c->token, token, BBS_TOKEN_LEN);
    c->timeout = timeout > 0 ? timeout : 30;
    c->spin = client_spin();
    if (bbs_addr_split(addr, host, sizeof(host), &port) != 0) {
        snprintf(err, errlen, "bad bbserver address \"%s\": give host:port", addr);
        goto fail;
    }
    if (bbs_addr_resolve(host, port, &ss, err, errlen) != 0 || bbs_ucx_open(&c->u, err, errlen))
        goto fail;
    if (bbs_ucx_set_handler(&c->u, BBS_AM_REPLY, on_reply, c, err, errlen) != 0)
        goto fail;
    memset(&ep, 0, sizeof(ep));
    ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR
        | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    ep.sockaddr.addr = (const struct sockaddr *) &ss;
    ep.sockaddr.addrlen = sizeof(struct sockaddr_in);
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = ep_error;
    ep.err_handler.arg = c;
    if ((st = ucp_ep_create(c->u.worker, &ep, &c->ep)) != UCS_OK) {
        snprintf(err, errlen, "cannot connect to bbserver %s: %s", addr, ucs_status_string(st));
        c->ep = NULL;
        goto fail;
    }
    /* The connection is made in the background: a ping tells whether
     * anyone is there and takes our token. */
    struct bbs_buf b = { 0 };
    struct bbs_reply rep;
    char why[512];
    if (bbs_enc_ping(&b, bbs_client_next_id(c), c->token) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    int rc = bbs_client_call(c, &b, &rep, why, sizeof(why));
    bbs_buf_free(&b);
    if (rc == -2)               /* (it answers, in other words) */
        snprintf(err, errlen, "%s", why);
    else if (rc != 0)
        snprintf(err, errlen, "no bbserver answers at %s: %s", addr, why);
    if (rc != 0)
        goto fail;
    if (rep.status != BBS_OK) {
        snprintf(err, errlen, "bbserver %s refused us: %s", addr, rep.msg);
        goto fail;
    }
    *out = c;
    return 0;
  fail:
    bbs_client_close(c);
    return -1;
}

void bbs_client_close(struct bbs_client *c)
{
    if (!c)
        return;
    if (c->ep)
        bbs_ep_close(&c->u, c->ep, c->failed != UCS_OK, 2);
    bbs_incoming_free(c->reply);
    if (c->u.worker)
        bbs_ucx_close(&c->u);
    free(c);
}

int bbs_read_log(bbs_call_fn call, void *ctx, const uint8_t *token, const char *path,
                 uint64_t off, void *buf, size_t len, char *err, size_t errlen)
{
    for (size_t got = 0; got < len;) {
        size_t n = len - got > BBS_MAX_READ ? BBS_MAX_READ : len - got;
        struct bbs_buf b = { 0 };
        struct bbs_reply rep;
        int rc = bbs_enc_read(&b, 0, token, path, off + got, n);
        if (rc != 0)
            snprintf(err, errlen, "out of memory");
        else
            rc = call(ctx, &b, &rep, err, errlen);
        if (rc == 0 && rep.len != n) {
            snprintf(err, errlen, "the server sent %llu bytes of %s, not %zu",
                     (unsigned long long) rep.len, path, n);
            rc = -1;
        }
        if (rc == 0)
            memcpy((char *) buf + got, rep.data, n);
        bbs_buf_free(&b);
        if (rc != 0)
            return -1;
        got += n;
    }
    return 0;
}

int bbs_export_log(bbs_call_fn call, void *ctx, const uint8_t *token, const char *metalog,
                   int salvage, void **out, size_t *len, char **warning, char *err,
                   size_t errlen)
{
    struct bbs_buf b = { 0 };
    struct bbs_reply rep;
    void *bytes = NULL;
    int rc = bbs_enc_export(&b, 0, token, metalog, salvage);

    *out = NULL;
    *len = 0;
    *warning = NULL;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    else
        rc = call(ctx, &b, &rep, err, errlen);
    if (rc == 0 && !(bytes = malloc(rep.total ? rep.total : 1))) {
        snprintf(err, errlen, "no memory for the %llu-byte metalog %s",
                 (unsigned long long) rep.total, metalog);
        rc = -1;
    }
    if (rc == 0) {
        uint64_t total = rep.total, first = rep.len;
        if (*rep.warning && !(*warning = strdup(rep.warning))) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        memcpy(bytes, rep.data, first);
        /* the rest of a large one: the sealed part does not change */
        if (rc == 0)
            rc = bbs_read_log(call, ctx, token, metalog, first, (char *) bytes + first,
                              total - first, err, errlen);
        *len = total;
    }
    bbs_buf_free(&b);
    if (rc != 0) {
        free(bytes);
        free(*warning);
        *warning = NULL;
        *len = 0;
        return -1;
    }
    *out = bytes;
    return 0;
}
