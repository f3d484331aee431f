/*
 * One request in, one reply out (see serve.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "serve.h"
#include "../logfs/fault.h"
#include "../logfs/reader.h"
#include "../logfs/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Compare in constant time: how much of a token matched is no hint. */
static int token_ok(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < BBS_TOKEN_LEN; i++)
        d |= (uint8_t) (a[i] ^ b[i]);
    return d == 0;
}

int bbs_serve_path_allowed(const struct bbs_serve_conf *conf, const char *path, char *why,
                           size_t len)
{
    char real[PATH_MAX];
    struct stat st;

    if (!realpath(path, real)) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        return 0;
    }
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, len, "%s is not a regular file", path);
        return 0;
    }
    for (size_t i = 0; i < conf->nlogdirs; i++) {
        char dir[PATH_MAX];
        if (!realpath(conf->logdirs[i], dir))
            continue;
        size_t n = strlen(dir);
        if (strncmp(real, dir, n) == 0 && (real[n] == '/' || (n == 1 && dir[0] == '/')))
            return 1;
    }
    snprintf(why, len, "%s is not below any of the server's %zu log directories (--logdir)",
             path, conf->nlogdirs);
    return 0;
}

static int serve_read(const struct bbs_serve_conf *conf, const struct bbs_request *r,
                      struct bbs_buf *out)
{
    char why[PATH_MAX + 128];
    uint64_t n = r->end - r->start;
    int fd;

    logfs_fault("serve-read");  /* (kill only) the server dies with a read asked */
    if (!bbs_serve_path_allowed(conf, r->path, why, sizeof(why)))
        return bbs_rep_begin(out, r->op, r->id, BBS_EPERM, why);
    if ((fd = open(r->path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(why, sizeof(why), "cannot open %s: %s", r->path, strerror(errno));
        return bbs_rep_begin(out, r->op, r->id, BBS_EIO, why);
    }
    bbs_rep_begin(out, r->op, r->id, BBS_OK, NULL);
    uint8_t *p = bbs_rep_read_room(out, n);
    uint64_t got = 0;
    while (p && got < n) {
        ssize_t k = pread(fd, p + got, n - got, (off_t) (r->start + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : 0;
            close(fd);
            if (k == 0)
                snprintf(why, sizeof(why), "%s holds %llu bytes at %llu, not %llu", r->path,
                         (unsigned long long) got, (unsigned long long) r->start,
                         (unsigned long long) n);
            else
                snprintf(why, sizeof(why), "reading %s at %llu: %s", r->path,
                         (unsigned long long) (r->start + got), strerror(e));
            return bbs_rep_begin(out, r->op, r->id, k == 0 ? BBS_ESHORT : BBS_EIO, why);
        }
        got += (uint64_t) k;
    }
    close(fd);
    return p ? 0 : -1;
}

/* The sealed part of a metalog, checked as a local replay would check it;
 * the first BBS_MAX_READ bytes come along, the client reads the rest. */
static int serve_export(const struct bbs_serve_conf *conf, const struct bbs_request *r,
                        struct bbs_buf *out)
{
    char why[PATH_MAX + 128], *warning = NULL;
    struct logfs_error le;
    size_t len;
    void *bytes;

    if (!bbs_serve_path_allowed(conf, r->path, why, sizeof(why)))
        return bbs_rep_begin(out, r->op, r->id, BBS_EPERM, why);
    int rc = logfs_metalog_export(r->path, r->salvage, &bytes, &len, &warning, &le);
    if (rc != LOGFS_OK)
        return bbs_rep_begin(out, r->op, r->id, rc == LOGFS_ENOMEM ? BBS_ENOMEM : BBS_EIO,
                             le.msg);
    uint64_t first = len < BBS_MAX_READ ? len : BBS_MAX_READ;
    bbs_rep_begin(out, r->op, r->id, BBS_OK, NULL);
    bbs_rep_export(out, len, warning);
    uint8_t *p = bbs_rep_read_room(out, first);
    if (p)
        memcpy(p, bytes, first);
    free(bytes);
    free(warning);
    return p ? 0 : -1;
}

/* A writer's log files, named by its metalog, which may be gone already
 * (a removal retried): the directory must be below a log directory. */
static int serve_remove(const struct bbs_serve_conf *conf, const struct bbs_request *r,
                        struct bbs_buf *out)
{
    char why[PATH_MAX + 128], dir[PATH_MAX], real[PATH_MAX], path[2 * PATH_MAX];
    const char *slash = strrchr(r->path, '/'), *suffix = ".metalog";
    size_t n = strlen(r->path), ns = strlen(suffix);

    if (!slash || slash == r->path || n <= ns || strcmp(r->path + n - ns, suffix) != 0
        || (size_t) (slash - r->path) >= sizeof(dir))
        return bbs_rep_begin(out, r->op, r->id, BBS_EPERM, "remove: give the absolute path "
                             "of a metalog (NAME.metalog)");
    memcpy(dir, r->path, (size_t) (slash - r->path));
    dir[slash - r->path] = 0;
    if (!realpath(dir, real)) {
        snprintf(why, sizeof(why), "%s: %s", dir, strerror(errno));
        return bbs_rep_begin(out, r->op, r->id, BBS_EPERM, why);
    }
    int below = 0;
    for (size_t i = 0; i < conf->nlogdirs && !below; i++) {
        char d[PATH_MAX];
        if (realpath(conf->logdirs[i], d))
            below = strcmp(real, d) == 0 || (strncmp(real, d, strlen(d)) == 0
                                             && real[strlen(d)] == '/');
    }
    if (!below) {
        snprintf(why, sizeof(why), "%s is not in any of the server's log directories", dir);
        return bbs_rep_begin(out, r->op, r->id, BBS_EPERM, why);
    }
    struct logfs_error le;
    snprintf(path, sizeof(path), "%s%s", real, slash);
    if (logfs_log_remove(path, &le) != LOGFS_OK)
        return bbs_rep_begin(out, r->op, r->id, BBS_EIO, le.msg);
    return bbs_rep_begin(out, r->op, r->id, BBS_OK, NULL);
}

static int serve_query(const struct bbs_ownmap *m, const struct bbs_request *r,
                       struct bbs_buf *out)
{
    struct bbs_piece *p;
    uint32_t n, nw = 0;
    uint64_t more;
    int st = bbs_own_query(m, r->file, r->start, r->end, BBS_MAX_QUERY_PIECES, &p, &n, &more);

    if (st == BBS_ENOFILE) {    /* nothing attached: an empty answer */
        st = BBS_OK;
        n = 0;
        p = NULL;
    }
    if (st != BBS_OK)
        return bbs_rep_begin(out, r->op, r->id, (uint16_t) st, "query");
    /* Only the writers the pieces name, renumbered in order of appearance. */
    uint32_t *map = NULL, *used = NULL;
    if (n) {
        uint32_t maxw = 0;
        for (uint32_t i = 0; i < n; i++)
            if (p[i].writer + 1 > maxw)
                maxw = p[i].writer + 1;
        map = malloc(sizeof(*map) * maxw);
        used = malloc(sizeof(*used) * (n < maxw ? n : maxw));
        if (!map || !used) {
            free(map);
            free(used);
            free(p);
            return bbs_rep_begin(out, r->op, r->id, BBS_ENOMEM, "query");
        }
        memset(map, 0xff, sizeof(*map) * maxw);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t w = p[i].writer;
            if (map[w] == UINT32_MAX) {
                map[w] = nw;
                used[nw++] = w;
            }
            p[i].writer = map[w];
        }
    }
    bbs_rep_begin(out, r->op, r->id, BBS_OK, NULL);
    bbs_rep_query_begin(out, nw);
    for (uint32_t i = 0; i < nw; i++)
        bbs_rep_query_writer(out, bbs_own_writer(m, r->file, used[i]));
    int rc = bbs_rep_query_pieces(out, p, n, more, bbs_own_size(m, r->file));
    free(map);
    free(used);
    free(p);
    return rc;
}

static int serve_attach(struct bbs_ownmap *m, const struct bbs_request *r, struct bbs_buf *out)
{
    struct bbs_extent e;
    int st = BBS_OK;
    bbs_serve_clock(r->clock);
    logfs_fault("serve-attach");        /* (kill only) dies among a sync's attaches */
    for (uint32_t i = 0; i < r->nrecords && st == BBS_OK; i++) {
        bbs_record(r, i, &e);
        st = bbs_own_attach(m, r->file, &r->writer, &e, 1);
    }
    if (st == BBS_OK && r->size)
        st = bbs_own_grow(m, r->file, r->size);
    return bbs_rep_begin(out, r->op, r->id, (uint16_t) st,
                         st == BBS_OK ? NULL : "attach: the server ran out of memory");
}

static int serve_replayed(struct bbs_ownmap *m, const struct bbs_request *r,
                          struct bbs_buf *out)
{
    uint64_t *sessions = r->nsessions ? malloc(r->nsessions * sizeof(*sessions)) : NULL;
    int st = r->nsessions && !sessions ? BBS_ENOMEM : BBS_OK;
    for (uint32_t i = 0; i < r->nsessions && st == BBS_OK; i++)
        sessions[i] = bbs_session(r, i);
    if (st == BBS_OK)
        st = bbs_own_replayed(m, r->file, sessions, r->nsessions);
    if (st == BBS_ENOFILE)
        st = BBS_OK;            /* nothing to forget */
    free(sessions);
    return bbs_rep_begin(out, r->op, r->id, (uint16_t) st,
                         st == BBS_OK ? NULL : "replayed: the server ran out of memory");
}

/* One drain's record for a reply (the error cut to what a reply holds). */
static void drain_rec(const struct bbs_drain_info *i, struct bbs_drain_rec *d, char *error,
                      size_t len)
{
    snprintf(error, len, "%s", i->error ? i->error : "");
    *d = (struct bbs_drain_rec) { i->path, error, (uint8_t) i->state, i->tries, i->done,
        i->total, i->epochs, i->writes, (uint64_t) (i->age * 1e3)
    };
}

/* A file's pending logs into it, by the drain thread (drains.h): the
 * server does the replay no process of the application takes part in,
 * and answers at once with where the drain stands.  It reads only logs
 * this node reaches, and writes the file with this server's rights: its
 * user's, as the token says. */
static int serve_drain(const struct bbs_serve_conf *conf, const struct bbs_request *r,
                       struct bbs_buf *out)
{
    struct bbs_drain_info now;
    struct bbs_drain_rec d;
    char error[1024];

    if (!conf->drains)
        return bbs_rep_begin(out, r->op, r->id, BBS_EPERM, "drain: this server does not drain");
    if (r->file[0] != '/')
        return bbs_rep_begin(out, r->op, r->id, BBS_EMSG, "drain: give the canonical file's "
                             "absolute path");
    if (bbs_drains_submit(conf->drains, r->file, &now) != 0)
        return bbs_rep_begin(out, r->op, r->id, BBS_ENOMEM, "drain: the server is out of "
                             "memory");
    drain_rec(&now, &d, error, sizeof(error));
    bbs_rep_begin(out, r->op, r->id, BBS_OK, NULL);
    bbs_rep_drains_begin(out, 1);
    int rc = bbs_rep_drain(out, &d);
    bbs_drain_info_clear(&now);
    return rc;
}

static int serve_drains(const struct bbs_serve_conf *conf, const struct bbs_request *r,
                        struct bbs_buf *out)
{
    struct bbs_drain_info *v = NULL;
    size_t n = 0;
    char error[1024];
    int rc = 0;

    if (conf->drains && bbs_drains_list(conf->drains, r->file, &v, &n) != 0)
        return bbs_rep_begin(out, r->op, r->id, BBS_ENOMEM, "drains: the server is out of "
                             "memory");
    /* (unfinished ones first, then the newest ended: the oldest are cut) */
    size_t shown = n < BBS_MAX_DRAINS ? n : BBS_MAX_DRAINS;
    bbs_rep_begin(out, r->op, r->id, BBS_OK, NULL);
    bbs_rep_drains_begin(out, (uint32_t) shown);
    for (size_t i = 0; i < shown && rc == 0; i++) {
        struct bbs_drain_rec d;
        drain_rec(&v[i], &d, error, sizeof(error));
        rc = bbs_rep_drain(out, &d);
    }
    bbs_drains_info_free(v, n);
    return rc;
}

static int serve_request(struct bbs_ownmap *m, const struct bbs_serve_conf *conf,
                         struct bbs_stats *stats, const void *msg, size_t len, struct bbs_buf *out)
{
    struct bbs_request r;
    char err[512];
    int st = bbs_dec_request(msg, len, &r, err, sizeof(err));

    if (st != BBS_OK) {
        __atomic_fetch_add(&stats->refused, 1, __ATOMIC_RELAXED);
        /* (an op this server does not know is answered as a ping, so that
         * the reply still decodes; the client matches it by id) */
        uint16_t op = bbs_peek_op(msg, len);
        if (op == 0 || op >= BBS_NUM_OPS)
            op = BBS_PING;
        return bbs_rep_begin(out, op, r.id, (uint16_t) st, err);
    }
    if (!token_ok(r.token, conf->token)) {
        __atomic_fetch_add(&stats->refused, 1, __ATOMIC_RELAXED);
        return bbs_rep_begin(out, r.op, r.id, BBS_ETOKEN, "the token presented is not this "
                             "server's: use the job's BBFS_SERVER_TOKEN or the server's "
                             "--token-file");
    }
    __atomic_fetch_add(&stats->requests[r.op], 1, __ATOMIC_RELAXED);
    switch (r.op) {
    case BBS_PING:
        bbs_rep_begin(out, r.op, r.id, BBS_OK, NULL);
        return bbs_rep_ping(out, conf->pid, conf->nfiles ? conf->nfiles(conf->nfiles_arg)
                            : bbs_own_nfiles(m), stats);
    case BBS_ATTACH:
        return serve_attach(m, &r, out);
    case BBS_QUERY:
        return serve_query(m, &r, out);
    case BBS_DETACH:
        st = bbs_own_detach(m, r.file, r.writer.session, r.writer.rank, r.start, r.end);
        if (st == BBS_ENOFILE)
            st = BBS_OK;        /* nothing to forget */
        return bbs_rep_begin(out, r.op, r.id, (uint16_t) st, "detach");
    case BBS_STAT: {
        uint64_t size = 0, nranges = 0;
        uint32_t nw = 0;
        st = bbs_own_stat(m, r.file, &size, &nranges, &nw);
        if (st == BBS_ENOFILE)
            st = BBS_OK;        /* an empty file */
        bbs_rep_begin(out, r.op, r.id, (uint16_t) st, NULL);
        return bbs_rep_stat(out, size, nranges, nw);
    }
    case BBS_REPLAYED:
        return serve_replayed(m, &r, out);
    case BBS_READ:
        return serve_read(conf, &r, out);
    case BBS_EXPORT:
        return serve_export(conf, &r, out);
    case BBS_REMOVE:
        return serve_remove(conf, &r, out);
    case BBS_DRAIN:
        return serve_drain(conf, &r, out);
    case BBS_DRAINS:
        return serve_drains(conf, &r, out);
    }
    return bbs_rep_begin(out, r.op, r.id, BBS_EMSG, "unknown operation");
}

int bbs_serve(struct bbs_ownmap *m, const struct bbs_serve_conf *conf,
              struct bbs_stats *stats, const void *msg, size_t len, struct bbs_buf *out)
{
    int rc = serve_request(m, conf, stats, msg, len, out);
    if (rc == 0)
        bbs_rep_set_server(out, bbs_serve_clock(0), conf->incarnation);
    return rc;
}

static uint64_t clock_max;      /* the largest clock told or given (shared by workers) */

uint64_t bbs_serve_clock(uint64_t seen)
{
    uint64_t now = logfs_fault_clock(), want = now > seen ? now : seen;
    uint64_t cur = __atomic_load_n(&clock_max, __ATOMIC_RELAXED), next;
    do                          /* (on a failed exchange cur is the newer value) */
        next = want > cur ? want : cur + 1;
    while (!__atomic_compare_exchange_n(&clock_max, &cur, next, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return next;
}
