/*
 * UCX pieces shared by bbserver and its clients (see ucx.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucx.h"
#include "bigbuf.h"

#include <netdb.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

int bbs_ucx_open(struct bbs_ucx *u, char *err, size_t errlen)
{
    ucp_config_t *config;
    ucp_params_t p;
    ucp_worker_params_t wp;
    ucs_status_t st;

    memset(u, 0, sizeof(*u));
    u->efd = -1;
#ifdef BBS_UCX_DLOPEN
    if (bbs_ucx_load(err, errlen) != 0)
        return -1;
#endif
    if ((st = ucp_config_read(NULL, NULL, &config)) != UCS_OK) {
        snprintf(err, errlen, "UCX configuration: %s", ucs_status_string(st));
        return -1;
    }
    /* Shared memory between a node's processes and its server: UCX leaves
     * it out of endpoints that ask for peer error handling unless told
     * that its keepalive-based error handling will do (the connection
     * manager's socket still reports a peer that dies).  4 clients on
     * one node: 61-66k one-range messages/s, against 31-37k over TCP on
     * loopback.  A user's UCX_MM_ERROR_HANDLING wins. */
    if (!getenv("UCX_MM_ERROR_HANDLING"))
        (void) ucp_config_modify(config, "MM_ERROR_HANDLING", "y");
    /* TCP segments of 256 KiB, not 8: a message up to that size goes out
     * eagerly in one, where from about 32 KiB it otherwise goes by
     * rendezvous, a round trip whose wake-ups cost more than the bytes.
     * A read reply across 2 emulated nodes: 32 KiB in 66-71 us against
     * 225-250, 128 KiB in 145-159 us against 324-356; 8 KiB and 1 MiB as
     * before.  (Named without TCP_: UCX refuses that form here and applies
     * this one to the transports that have the field.)  A user who sets
     * either size, in either form, sets both: UCX's TCP refuses a TX
     * segment larger than the RX one. */
    if (!getenv("UCX_TCP_TX_SEG_SIZE") && !getenv("UCX_TCP_RX_SEG_SIZE")
        && !getenv("UCX_TX_SEG_SIZE") && !getenv("UCX_RX_SEG_SIZE")) {
        (void) ucp_config_modify(config, "TX_SEG_SIZE", "256k");
        (void) ucp_config_modify(config, "RX_SEG_SIZE", "256k");
    }
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
    p.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    p.name = "bbfs";
    /* (ucp_init is an inline wrapper of this; called directly so that
     * the dlopen build reaches it through its table) */
    st = ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &p, config, &u->ctx);
    ucp_config_release(config);
    if (st != UCS_OK) {
        snprintf(err, errlen, "UCX initialisation: %s", ucs_status_string(st));
        return -1;
    }
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;   /* only one thread touches UCX */
    if ((st = ucp_worker_create(u->ctx, &wp, &u->worker)) != UCS_OK
        || (st = ucp_worker_get_efd(u->worker, &u->efd)) != UCS_OK) {
        snprintf(err, errlen, "UCX worker: %s", ucs_status_string(st));
        bbs_ucx_close(u);
        return -1;
    }
    return 0;
}

void bbs_ucx_close(struct bbs_ucx *u)
{
    if (u->worker)
        ucp_worker_destroy(u->worker);
    if (u->ctx)
        ucp_cleanup(u->ctx);
    u->worker = NULL;
    u->ctx = NULL;
    u->efd = -1;
}

int bbs_ucx_set_handler(struct bbs_ucx *u, unsigned id, ucp_am_recv_callback_t cb, void *arg,
                        char *err, size_t errlen)
{
    ucp_am_handler_param_t hp;
    ucs_status_t st;

    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB
        | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = id;
    hp.cb = cb;
    hp.arg = arg;
    if ((st = ucp_worker_set_am_recv_handler(u->worker, &hp)) != UCS_OK) {
        snprintf(err, errlen, "active-message handler: %s", ucs_status_string(st));
        return -1;
    }
    return 0;
}

int bbs_addr_split(const char *hostport, char *host, size_t hostlen, uint16_t *port)
{
    const char *colon = strrchr(hostport, ':');
    char *end;
    if (!colon || colon == hostport || (size_t) (colon - hostport) >= hostlen)
        return -1;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (*end || end == colon + 1 || p == 0 || p > 65535)
        return -1;
    memcpy(host, hostport, (size_t) (colon - hostport));
    host[colon - hostport] = 0;
    *port = (uint16_t) p;
    return 0;
}

int bbs_addr_resolve(const char *host, uint16_t port, struct sockaddr_storage *ss,
                     char *err, size_t errlen)
{
    struct addrinfo hints, *res;
    char ps[8];
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;  /* UCX's tcp sockcm; the cluster is IPv4 */
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof(ps), "%u", port);
    if ((rc = getaddrinfo(host, ps, &hints, &res)) != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

struct bbs_incoming *bbs_incoming_take(void *data, size_t length,
                                       const ucp_am_recv_param_t *param)
{
    struct bbs_incoming *in = calloc(1, sizeof(*in));
    if (!in || (in->buf = bbs_big_take(length, &in->cap)) == NULL) {
        free(in);
        return NULL;
    }
    in->len = length;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)
        in->desc = data;
    else {
        memcpy(in->buf, data, length);
        in->done = 1;
        in->status = UCS_OK;
    }
    return in;
}

static void recv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    struct bbs_incoming *in = user_data;
    (void) length;
    in->status = status;
    in->done = 1;
    ucp_request_free(request);
}

int bbs_incoming_start(struct bbs_ucx *u, struct bbs_incoming *in)
{
    ucp_request_param_t p;
    ucs_status_ptr_t r;

    if (!in->desc)
        return 0;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
        | UCP_OP_ATTR_FIELD_DATATYPE;
    p.cb.recv_am = recv_done;
    p.user_data = in;
    p.datatype = ucp_dt_make_contig(1);
    r = ucp_am_recv_data_nbx(u->worker, in->desc, in->buf, in->len, &p);
    in->desc = NULL;
    if (r == NULL) {
        in->status = UCS_OK;
        in->done = 1;
    } else if (UCS_PTR_IS_ERR(r)) {
        in->status = UCS_PTR_STATUS(r);
        in->done = 1;
        return -1;
    }
    return 0;
}

void bbs_incoming_free(struct bbs_incoming *in)
{
    if (!in)
        return;
    bbs_big_give(in->buf, in->cap);
    free(in);
}

double bbs_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + t.tv_nsec * 1e-9;
}

void bbs_ep_close(struct bbs_ucx *u, ucp_ep_h ep, int force, double timeout)
{
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &p);
    double deadline = bbs_now() + timeout;
    while (r && !UCS_PTR_IS_ERR(r) && ucp_request_check_status(r) == UCS_INPROGRESS
           && bbs_now() < deadline)
        ucp_worker_progress(u->worker);
    if (r && !UCS_PTR_IS_ERR(r)) {
        if (ucp_request_check_status(r) == UCS_INPROGRESS)
            ucp_request_cancel(u->worker, r);
        ucp_request_free(r);
    }
}
