/* Logs on other nodes through their servers (far.h). */
#include "far.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* A connection is used by one call at a time: the drain's threads each
 * take a free one to a server (or make one), so that they read from other
 * nodes at once. */
struct conn {
    char addr[256];
    struct bbs_client *c;
    int busy;
    struct conn *next;
};

struct bbs_far {
    uint8_t token[BBS_TOKEN_LEN];
    double timeout;
    pthread_mutex_t lock;       /* the list, and each busy flag */
    struct conn *conns;
};

static int fail(struct logfs_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* (logfs's own logfs_fail is internal to it) */
static int fail(struct logfs_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    if (err) {
        err->code = code;
        err->sys_errno = 0;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

struct bbs_far *bbs_far_open(const uint8_t token[BBS_TOKEN_LEN], double timeout)
{
    struct bbs_far *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    memcpy(f->token, token, BBS_TOKEN_LEN);
    f->timeout = timeout > 0 ? timeout : 30;
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

void bbs_far_close(struct bbs_far *f)
{
    if (!f)
        return;
    while (f->conns) {
        struct conn *k = f->conns;
        f->conns = k->next;
        bbs_client_close(k->c);
        free(k);
    }
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* A free connection to addr, marked busy: a kept one (*fresh 0), or a
 * new one.  @return NULL with why in err */
static struct conn *take(struct bbs_far *f, const char *addr, int *fresh,
                         struct logfs_error *err)
{
    char why[LOGFS_ERRMSG_MAX];
    pthread_mutex_lock(&f->lock);
    struct conn *k = f->conns;
    while (k && (k->busy || strcmp(k->addr, addr) != 0))
        k = k->next;
    if (k)
        k->busy = 1;
    pthread_mutex_unlock(&f->lock);
    *fresh = !k;
    if (k)
        return k;
    if (!(k = calloc(1, sizeof(*k)))) {
        fail(err, LOGFS_ENOMEM, "out of memory");
        return NULL;
    }
    if (bbs_client_open(addr, f->token, f->timeout, &k->c, why, sizeof(why)) != 0) {
        free(k);
        fail(err, LOGFS_EIO, "%s", why);
        return NULL;
    }
    snprintf(k->addr, sizeof(k->addr), "%s", addr);
    k->busy = 1;
    pthread_mutex_lock(&f->lock);
    k->next = f->conns;
    f->conns = k;
    pthread_mutex_unlock(&f->lock);
    return k;
}

/* Give k back, or (broken) close it, and every idle connection to its
 * server with it: they reach the same server, gone or restarted, and a
 * retry must not take one of them. */
static void give_back(struct bbs_far *f, struct conn *k, int broken)
{
    struct conn *dead = NULL;
    pthread_mutex_lock(&f->lock);
    k->busy = 0;
    if (broken)
        for (struct conn **pp = &f->conns; *pp;) {
            struct conn *c = *pp;
            if (c->busy || strcmp(c->addr, k->addr) != 0) {
                pp = &c->next;
                continue;
            }
            *pp = c->next;
            c->next = dead;
            dead = c;
        }
    pthread_mutex_unlock(&f->lock);
    while (dead) {
        struct conn *c = dead;
        dead = c->next;
        bbs_client_close(c->c);
        free(c);
    }
}

/* Send req to addr's server on k and take its answer (valid until k's
 * next call); a kept connection that broke (the server restarted since) is
 * made again once, and *k is then the new one.
 * @return LOGFS_OK, or LOGFS_EIO with why in err */
static int call(struct bbs_far *f, struct conn **k, int fresh, const struct bbs_buf *req,
                struct bbs_reply *rep, struct logfs_error *err)
{
    char why[LOGFS_ERRMSG_MAX];
    char addr[sizeof((*k)->addr)];
    snprintf(addr, sizeof(addr), "%s", (*k)->addr);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (bbs_client_call((*k)->c, req, rep, why, sizeof(why)) == 0) {
            if (rep->status == BBS_OK)
                return LOGFS_OK;
            return fail(err, rep->status == BBS_ESHORT ? LOGFS_ESHORT : LOGFS_EIO,
                        "bbserver %s: %s: %s", addr, bbs_status_str(rep->status), rep->msg);
        }
        int broken = bbs_client_broken((*k)->c);
        give_back(f, *k, 1);
        *k = NULL;
        if (fresh || !broken)   /* (a time-out is not waited for twice) */
            return fail(err, LOGFS_EIO, "bbserver %s: %s", addr, why);
        if (!(*k = take(f, addr, &fresh, err)))
            return err ? err->code : LOGFS_EIO;
    }
    return fail(err, LOGFS_EIO, "bbserver %s does not answer", addr);
}

/* One request to addr's server, on a connection taken for it. */
static int call_once(struct bbs_far *f, const char *addr, const struct bbs_buf *req,
                     struct logfs_error *err)
{
    struct bbs_reply rep;
    int fresh;
    struct conn *k = take(f, addr, &fresh, err);
    if (!k)
        return err ? err->code : LOGFS_EIO;
    int rc = call(f, &k, fresh, req, &rep, err);
    if (k)
        give_back(f, k, 0);
    return rc;
}

/* The helpers of client.h reach a server through the connection taken
 * for them (made again once if it broke). */
struct on_conn {
    struct bbs_far *f;
    struct conn *k;
    int fresh;
    int code;                   /* the last failure's logfs status */
};

static int call_conn(void *ctx, const struct bbs_buf *req, struct bbs_reply *rep, char *err,
                     size_t errlen)
{
    struct on_conn *oc = ctx;
    struct logfs_error le;
    if (!oc->k) {
        snprintf(err, errlen, "no connection");
        return -1;
    }
    oc->code = call(oc->f, &oc->k, oc->fresh, req, rep, &le);
    oc->fresh = 0;
    if (oc->code == LOGFS_OK)
        return 0;
    snprintf(err, errlen, "%s", le.msg);
    return -1;
}

/* Take a connection to server for a helper's calls, and give it back. */
static int with_conn(struct bbs_far *f, const char *server, struct on_conn *oc,
                     struct logfs_error *err)
{
    *oc = (struct on_conn) { f, NULL, 0, LOGFS_OK };
    if (!(oc->k = take(f, server, &oc->fresh, err)))
        return err ? err->code : LOGFS_EIO;
    return LOGFS_OK;
}

static int done_conn(struct on_conn *oc, int rc, const char *why, struct logfs_error *err)
{
    if (oc->k)
        give_back(oc->f, oc->k, 0);
    if (rc == 0)
        return LOGFS_OK;
    return fail(err, oc->code != LOGFS_OK ? oc->code : LOGFS_EIO, "%s", why);
}

static int far_read(void *arg, const char *server, const char *datalog, uint64_t off,
                    void *buf, size_t len, struct logfs_error *err)
{
    struct on_conn oc;
    char why[LOGFS_ERRMSG_MAX];
    int rc = with_conn(arg, server, &oc, err);
    if (rc)
        return rc;
    rc = bbs_read_log(call_conn, &oc, oc.f->token, datalog, off, buf, len, why, sizeof(why));
    return done_conn(&oc, rc, why, err);
}

static int far_export(void *arg, const char *server, const char *metalog, void **bytes,
                      size_t *len, struct logfs_error *err)
{
    struct on_conn oc;
    char why[LOGFS_ERRMSG_MAX], *warning = NULL;
    int rc = with_conn(arg, server, &oc, err);
    if (rc)
        return rc;
    rc = bbs_export_log(call_conn, &oc, oc.f->token, metalog, 0, bytes, len, &warning, why,
                        sizeof(why));
    free(warning);              /* (only salvage leaves something out) */
    return done_conn(&oc, rc, why, err);
}

static int far_remove(void *arg, const char *server, const char *metalog,
                      struct logfs_error *err)
{
    struct bbs_far *f = arg;
    struct bbs_buf b = { 0 };
    int rc = bbs_enc_remove(&b, 0, f->token, metalog) == 0 ? call_once(f, server, &b, err)
        : fail(err, LOGFS_ENOMEM, "out of memory");
    bbs_buf_free(&b);
    return rc;
}

static int far_replayed(void *arg, const char *map, const char *path, uint64_t session,
                        struct logfs_error *err)
{
    struct bbs_far *f = arg;
    struct bbs_buf b = { 0 };
    int rc = bbs_enc_replayed(&b, 0, f->token, path, &session, 1) == 0
        ? call_once(f, map, &b, err) : fail(err, LOGFS_ENOMEM, "out of memory");
    bbs_buf_free(&b);
    return rc;
}

void bbs_far_calls(struct bbs_far *f, struct logfs_drain_far *out)
{
    *out = (struct logfs_drain_far) { far_export, far_read, far_remove, far_replayed, f };
}
