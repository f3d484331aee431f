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

/* Give k back, or (broken) close it. */
static void give_back(struct bbs_far *f, struct conn *k, int broken)
{
    pthread_mutex_lock(&f->lock);
    if (broken)
        for (struct conn **pp = &f->conns; *pp; pp = &(*pp)->next)
            if (*pp == k) {
                *pp = k->next;
                break;
            }
    k->busy = 0;
    pthread_mutex_unlock(&f->lock);
    if (broken) {
        bbs_client_close(k->c);
        free(k);
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

/* len bytes of path on k's server's node at off, in replies of at most
 * BBS_MAX_READ. */
static int read_at(struct bbs_far *f, struct conn **k, int fresh, const char *path,
                   uint64_t off, void *buf, size_t len, struct logfs_error *err)
{
    for (size_t got = 0; got < len && *k;) {
        size_t n = len - got > BBS_MAX_READ ? BBS_MAX_READ : len - got;
        struct bbs_buf b = { 0 };
        struct bbs_reply rep;
        int rc = bbs_enc_read(&b, 0, f->token, path, off + got, n) == 0 ? LOGFS_OK
            : fail(err, LOGFS_ENOMEM, "out of memory");
        if (!rc)
            rc = call(f, k, fresh, &b, &rep, err);
        if (!rc && rep.len != n)
            rc = fail(err, LOGFS_ESHORT, "bbserver %s sent %llu bytes of %s, not %zu",
                      (*k)->addr, (unsigned long long) rep.len, path, n);
        if (!rc)
            memcpy((char *) buf + got, rep.data, n);
        bbs_buf_free(&b);
        if (rc)
            return rc;
        got += n;
    }
    return LOGFS_OK;
}

static int far_read(void *arg, const char *server, const char *datalog, uint64_t off,
                    void *buf, size_t len, struct logfs_error *err)
{
    struct bbs_far *f = arg;
    int fresh;
    struct conn *k = take(f, server, &fresh, err);
    if (!k)
        return err ? err->code : LOGFS_EIO;
    int rc = read_at(f, &k, fresh, datalog, off, buf, len, err);
    if (k)
        give_back(f, k, 0);
    return rc;
}

static int far_export(void *arg, const char *server, const char *metalog, void **bytes,
                      size_t *len, struct logfs_error *err)
{
    struct bbs_far *f = arg;
    struct bbs_buf b = { 0 };
    struct bbs_reply rep;
    int fresh;
    *bytes = NULL;
    *len = 0;
    struct conn *k = take(f, server, &fresh, err);
    if (!k)
        return err ? err->code : LOGFS_EIO;
    int rc = bbs_enc_export(&b, 0, f->token, metalog, 0) == 0 ? LOGFS_OK
        : fail(err, LOGFS_ENOMEM, "out of memory");
    if (!rc)
        rc = call(f, &k, fresh, &b, &rep, err);
    if (!rc && !(*bytes = malloc(rep.total ? rep.total : 1)))
        rc = fail(err, LOGFS_ENOMEM, "no memory for the %llu-byte metalog %s",
                        (unsigned long long) rep.total, metalog);
    if (!rc) {
        uint64_t total = rep.total, first = rep.len;
        memcpy(*bytes, rep.data, first);
        /* the rest of a large one: the sealed part does not change */
        rc = read_at(f, &k, 0, metalog, first, (char *) *bytes + first, total - first, err);
        *len = total;
    }
    if (k)
        give_back(f, k, 0);
    bbs_buf_free(&b);
    if (rc) {
        free(*bytes);
        *bytes = NULL;
        *len = 0;
    }
    return rc;
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
