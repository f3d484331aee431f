/*
 * Logs on other nodes, through the bbserver of the node that holds them:
 * connections (per process, one per address, outliving handles), and the
 * calls that read a datalog, export a metalog's sealed part and remove a
 * writer's log files there.  The handle's own use of a server (attach,
 * query) is ad_bbfs_server.c; a replay reaches logs no process of its job
 * can open through the calls here (ad_bbfs_exchange.c), with the server
 * addresses the manifests name.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../bbserver/client.h"
#include "../../bbserver/token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(((ADIOI_BBFS_Nodes *) 0)->token) == BBS_TOKEN_LEN,
               "ADIOI_BBFS_Nodes holds one bbserver token");

static struct conn {
    char addr[256];
    struct bbs_client *c;
    struct conn *next;
} *conns;

/* (every open that finds a server asks: kept, bbserver/token.h) */
static struct bbs_token_kept token_kept;

int ADIOI_BBFS_Nodes_init(ADIOI_BBFS_Nodes * r, double timeout, char *err, size_t errlen)
{
    char source[PATH_MAX];
    r->timeout = timeout;
    return bbs_token_find_kept(&token_kept, 1, r->token, source, sizeof(source), err, errlen);
}

/* The connection to addr, made now or earlier (*cached). */
static int connect_to(const ADIOI_BBFS_Nodes * r, const char *addr, struct bbs_client **out,
                      int *cached, char *err, size_t errlen)
{
    *cached = 1;
    for (struct conn * k = conns; k; k = k->next)
        if (strcmp(k->addr, addr) == 0) {
            *out = k->c;
            return 0;
        }
    *cached = 0;
    struct conn *k = calloc(1, sizeof(*k));
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (bbs_client_open(addr, r->token, r->timeout, &k->c, err, errlen) != 0) {
        free(k);
        return -1;
    }
    snprintf(k->addr, sizeof(k->addr), "%s", addr);
    k->next = conns;
    conns = k;
    *out = k->c;
    return 0;
}

int ADIOI_BBFS_Nodes_connect(const ADIOI_BBFS_Nodes * r, const char *addr,
                              struct bbs_client **out, char *err, size_t errlen)
{
    int cached;
    return connect_to(r, addr, out, &cached, err, errlen);
}

int ADIOI_BBFS_Nodes_ping(const ADIOI_BBFS_Nodes * r, const char *addr, uint64_t * incarnation,
                          char *err, size_t errlen)
{
    struct bbs_client *c;
    if (incarnation)
        *incarnation = 0;
    for (struct conn * k = conns; k; k = k->next)
        if (strcmp(k->addr, addr) == 0) {
            struct bbs_buf b = { 0 };
            struct bbs_reply rep;
            int rc = bbs_enc_ping(&b, 0, r->token) == 0 ? 0 : -1;
            if (rc == 0)
                rc = ADIOI_BBFS_Nodes_call(r, addr, &b, &rep, err, errlen);
            bbs_buf_free(&b);
            if (rc == 0 && incarnation)
                *incarnation = rep.incarnation;
            if (rc == 0)
                return 0;
            ADIOI_BBFS_Nodes_drop(addr);        /* (if the call did not) */
            break;
        }
    return ADIOI_BBFS_Nodes_connect(r, addr, &c, err, errlen);
}

void ADIOI_BBFS_Nodes_drop(const char *addr)
{
    for (struct conn ** pp = &conns; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->addr, addr) == 0) {
            struct conn *k = *pp;
            *pp = k->next;
            bbs_client_close(k->c);
            free(k);
            return;
        }
}

int ADIOI_BBFS_Nodes_call(const ADIOI_BBFS_Nodes * r, const char *addr, struct bbs_buf *req,
                           struct bbs_reply *rep, char *err, size_t errlen)
{
    struct bbs_client *c;
    int cached, rc;
    if (connect_to(r, addr, &c, &cached, err, errlen) != 0)
        return -1;
    rc = bbs_client_call(c, req, rep, err, errlen);
    if (rc != 0 && cached && bbs_client_broken(c)) {
        /* The server went away since this connection was made: restarted
         * (stopped and started again, as the next open on its node does),
         * it answers a new one.  Every request may be sent twice: an attach
         * of the same runs, a query, a read, a removal of what is gone are
         * the same done again.  (Not after a time-out: that would wait
         * twice for a server that does not answer.) */
        ADIOI_BBFS_Nodes_drop(addr);
        if (connect_to(r, addr, &c, &cached, err, errlen) != 0)
            return -1;
        rc = bbs_client_call(c, req, rep, err, errlen);
    }
    if (rc != 0) {
        ADIOI_BBFS_Nodes_drop(addr);   /* the next call reconnects: a restarted server */
        return -1;
    }
    ADIOI_BBFS_Clock_observe(rep->clock);
    if (rep->status != BBS_OK) {
        snprintf(err, errlen, "bbserver %s: %s: %s", addr, bbs_status_str(rep->status),
                 rep->msg);
        return -1;
    }
    return 0;
}

int ADIOI_BBFS_Err_server(const char *myname, int line, const char *msg)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, MPI_ERR_IO,
                                "**io", "bbfs: %s", msg);
}

/* The helpers of bbserver/client.h reach addr's server through
 * ADIOI_BBFS_Nodes_call (a restarted server reconnected, its clock noted). */
struct node_call {
    const ADIOI_BBFS_Nodes *r;
    const char *addr;
};

static int call_node(void *ctx, const struct bbs_buf *req, struct bbs_reply *rep, char *err,
                     size_t errlen)
{
    const struct node_call *nc = ctx;
    return ADIOI_BBFS_Nodes_call(nc->r, nc->addr, (struct bbs_buf *) req, rep, err, errlen);
}

int ADIOI_BBFS_Nodes_read(const ADIOI_BBFS_Nodes * r, const char *addr, const char *datalog,
                           uint64_t off, void *buf, size_t len)
{
    static char myname[] = "ADIOI_BBFS_NODES_READ";
    struct node_call nc = { r, addr };
    char err[1024];
    if (bbs_read_log(call_node, &nc, r->token, datalog, off, buf, len, err, sizeof(err)) != 0)
        return ADIOI_BBFS_Err_server(myname, __LINE__, err);
    return MPI_SUCCESS;
}

int ADIOI_BBFS_Nodes_export(const ADIOI_BBFS_Nodes * r, const char *addr, const char *metalog,
                             int salvage, void **out, size_t *len, char **warning)
{
    static char myname[] = "ADIOI_BBFS_NODES_EXPORT";
    struct node_call nc = { r, addr };
    char err[1024];
    if (bbs_export_log(call_node, &nc, r->token, metalog, salvage, out, len, warning, err,
                       sizeof(err)) != 0)
        return ADIOI_BBFS_Err_server(myname, __LINE__, err);
    return MPI_SUCCESS;
}

int ADIOI_BBFS_Nodes_remove(const ADIOI_BBFS_Nodes * r, const char *addr,
                             const char *metalog, char *err, size_t errlen)
{
    struct bbs_buf b = { 0 };
    struct bbs_reply rep;
    int rc = bbs_enc_remove(&b, 0, r->token, metalog);
    if (rc == 0)
        rc = ADIOI_BBFS_Nodes_call(r, addr, &b, &rep, err, errlen);
    else
        snprintf(err, errlen, "out of memory");
    bbs_buf_free(&b);
    return rc;
}
