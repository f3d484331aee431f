/* A file's pending sessions drained into it by one process (drain.h,
 * logfs_drain_file): claim, plan, drain, mark, remove. */
#include "drain.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "internal.h"
#include "manifest.h"
#include "planner.h"
#include "sessions.h"
#include "writer.h"

struct claimed {
    size_t n;
    struct logfs_session *s;      /* claims, held until the end */
    struct logfs_manifest *m;     /* parsed, by claim */
};

static void release_all(struct claimed *c, int remove)
{
    for (size_t i = 0; i < c->n; i++) {
        if (remove)
            logfs_session_remove(&c->s[i]);
        else
            logfs_session_release(&c->s[i]);
        logfs_manifest_free(&c->m[i]);
    }
    free(c->s);
    free(c->m);
    memset(c, 0, sizeof *c);
}

/* Claim and parse every session of @p path, none live (LOGFS_EBUSY). */
static int claim_all(const char *path, struct claimed *c, struct logfs_error *err)
{
    struct logfs_session_info *v = NULL;
    size_t n = 0;
    int lk = logfs_sessions_lock(path);
    int rc = logfs_sessions_list(path, &v, &n, err);

    for (size_t i = 0; i < n && !rc; i++)
        if (v[i].live)
            rc = logfs_fail(err, LOGFS_EBUSY, 0, "a handle of %s is open (%s is live): its close "
                            "replays the pending logs", path, v[i].path);
    if (!rc && n && (!(c->s = calloc(n, sizeof *c->s)) || !(c->m = calloc(n, sizeof *c->m))))
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to drain %s", path);
    for (size_t i = 0; i < n && !rc; i++) {
        char *text = NULL;
        size_t len;
        rc = logfs_session_claim(v[i].path, &c->s[c->n], err);
        if (rc == LOGFS_ENOENT) { /* (replayed and removed meanwhile) */
            rc = LOGFS_OK;
            continue;
        }
        if (!rc)
            c->n++;
        if (!rc && !(rc = logfs_session_load(v[i].path, &text, &len, err)))
            rc = logfs_manifest_parse(text, len, &c->m[c->n - 1], err);
        free(text);
    }
    logfs_sessions_unlock(lk);
    logfs_sessions_free(v, n);
    if (rc)
        release_all(c, 0);
    return rc;
}

/* Where each of the plan's writers is: here (NULL), or on another node,
 * read through the server its manifest entry names; and the metalogs
 * fetched from those servers, kept until the drain ends. */
struct far_logs {
    const char **servers;       /* by the plan's writers */
    void **bytes;
    size_t n;
};

static void far_logs_free(struct far_logs *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->bytes ? f->bytes[i] : NULL);
    free(f->servers);
    free(f->bytes);
    memset(f, 0, sizeof *f);
}

/* The server through which a writer's logs are reached, or NULL where
 * this node opens them itself (or no server can say otherwise: the plan
 * then reports a log it cannot open). */
static const char *far_server(const struct logfs_manifest_writer *w,
                              const struct logfs_drain_far *far)
{
    return far && w->server[0] && access(w->metalog, F_OK) != 0 ? w->server : NULL;
}

/* A writer's metalog that this node cannot open, fetched from the server
 * of the node that holds it; LOGFS_OK with nothing fetched where the log
 * is here. */
static int fetch_far(const struct logfs_manifest_writer *w, const struct logfs_drain_far *far,
                     size_t at, struct logfs_metalog_src *src, struct far_logs *f,
                     struct logfs_error *err)
{
    if (!far_server(w, far))
        return LOGFS_OK;
    int rc = far->export_metalog(far->arg, w->server, w->metalog, &f->bytes[at], &src->len, err);
    if (rc)
        return rc;
    src->data = f->bytes[at];
    f->servers[at] = w->server;
    return LOGFS_OK;
}

static int plan_all(const struct claimed *c, const struct logfs_drain_far *far,
                    struct logfs_plan **plan, struct far_logs *f, struct logfs_error *err)
{
    size_t nw = 0, ns = 0, at = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!c->m[i].replayed) {
            nw += c->m[i].nwriters;
            ns++;
        }
    *plan = NULL;
    if (!ns)
        return LOGFS_OK;
    struct logfs_metalog_src *src = calloc(nw, sizeof *src);
    size_t *counts = calloc(ns, sizeof *counts);
    uint64_t *promised = calloc(nw, sizeof *promised);
    f->n = nw;
    f->servers = calloc(nw, sizeof *f->servers);
    f->bytes = calloc(nw, sizeof *f->bytes);
    int rc = src && counts && promised && f->servers && f->bytes ? LOGFS_OK
        : logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan a drain");
    for (size_t i = 0, s = 0; i < c->n && !rc; i++) {
        const struct logfs_manifest *m = &c->m[i];
        if (m->replayed)
            continue;
        /* (a lazy session's writer that promised nothing may have made no
         * log: logfs/manifest.h, version 7) */
        int made_none_ok = logfs_manifest_lazy_unmade_ok(m);
        for (uint32_t r = 0; r < m->nwriters && !rc; r++, at++) {
            src[at].metalog = m->w[r].metalog;
            src[at].absent_ok = made_none_ok && m->w[r].epochs == 0;
            promised[at] = m->w[r].epochs;
            rc = fetch_far(&m->w[r], far, at, &src[at], f, err);
        }
        counts[s++] = m->nwriters;
    }
    if (!rc)
        rc = logfs_plan_build_sessions_src(src, counts, ns, NULL, plan, err);
    if (!rc && (rc = logfs_plan_check_sealed(*plan, promised, err))) {
        logfs_plan_free(*plan);
        *plan = NULL;
    }
    free(src);
    free(counts);
    free(promised);
    return rc;
}

/* The writers' logs a drain removes, shared out among its threads: a
 * removal frees the log's pages (tmpfs) or extents, a few milliseconds for
 * each 16 MiB, and a far one waits for another node's server. */
struct removal {
    const struct logfs_manifest_writer *w;
    int failed;
    struct logfs_error le;
};

struct removals {
    struct removal *r;
    size_t n, next;             /* (next: taken in turn, as drain.c's domains) */
    const struct logfs_drain_far *far;
};

static void *remove_some(void *arg)
{
    struct removals *rs = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&rs->next, 1, __ATOMIC_RELAXED);
        if (i >= rs->n)
            return NULL;
        struct removal *x = &rs->r[i];
        const struct logfs_manifest_writer *w = x->w;
        x->failed = far_server(w, rs->far)
            ? rs->far->remove(rs->far->arg, w->server, w->metalog, &x->le)
            : logfs_log_remove(w->metalog, &x->le);
    }
}

/* Remove every log of rs, on up to @p threads threads. */
static void remove_logs(struct removals *rs, int threads)
{
    pthread_t t[LOGFS_DRAIN_MAX_THREADS];
    int started = 0;
    for (int k = 1; k < threads && k < LOGFS_DRAIN_MAX_THREADS && (size_t) k < rs->n; k++)
        if (pthread_create(&t[started], NULL, remove_some, rs) == 0)
            started++;
    remove_some(rs);
    for (int k = 0; k < started; k++)
        pthread_join(t[k], NULL);
}

/* The replayed sessions go: marks first, then the logs, then the
 * manifests (a crash between leaves marked manifests whose leftovers the
 * next replay removes, never a session replayed again over newer data). */
static void remove_replayed(struct claimed *c, const struct logfs_drain_far *far,
                            const char *path, int durable, int threads)
{
    int marked = 1;
    size_t nlogs = 0;
    for (size_t i = 0; i < c->n; i++) {
        char *text;
        size_t len;
        nlogs += c->m[i].nwriters;
        if (c->m[i].replayed)
            continue;
        c->m[i].replayed = 1;
        marked = marked && logfs_manifest_format(&c->m[i], &text, &len) == LOGFS_OK;
        if (marked) {
            marked = logfs_session_store(&c->s[i], text, len, durable, NULL) == LOGFS_OK;
            free(text);
        }
    }
    logfs_fault("drain-marked"); /* (kill only) in the file, marked, logs still there */
    struct removals rs = { 0 };
    rs.r = calloc(nlogs ? nlogs : 1, sizeof(struct removal));
    rs.n = nlogs;
    rs.far = far;
    if (!marked || !rs.r) {      /* (orphaned logs at worst) */
        free(rs.r);
        release_all(c, 1);
        return;
    }
    /* (the maps first: once they forgot the sessions, no read is sent to
     * their logs; a failure leaves a map naming logs that are gone, and
     * reads of it then say the log is missing: said, not fatal) */
    size_t at = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct logfs_error le;
        if (far && far->replayed && c->m[i].map[0]
            && far->replayed(far->arg, c->m[i].map, path, c->m[i].file_id, &le))
            fprintf(stderr, "bbfs drain %s: %s\n", path, le.msg);
        for (uint32_t r = 0; r < c->m[i].nwriters; r++)
            rs.r[at++].w = &c->m[i].w[r];
    }
    remove_logs(&rs, threads);
    /* A log that stays keeps its manifest, marked replayed: the next
     * drain, open or bbfs-replay of the file removes what is left
     * (without it nothing would ever name those logs again). */
    at = 0;
    for (size_t i = 0; i < c->n; i++) {
        int gone = 1;
        for (uint32_t r = 0; r < c->m[i].nwriters; r++, at++)
            if (rs.r[at].failed) {
                fprintf(stderr, "bbfs drain %s: %s (the file is complete; the log and the "
                        "session's manifest, marked replayed, stay for the next replay to "
                        "remove)\n", path, rs.r[at].le.msg);
                gone = 0;
            }
        if (!gone)
            logfs_session_release(&c->s[i]);    /* (release_all then keeps it) */
        else if (c->m[i].lazy && c->m[i].nwriters)
            logfs_manifest_canary_remove(c->m[i].w[0].metalog);
    }
    free(rs.r);
    release_all(c, 1);
}

int logfs_drain_file(const char *path, const struct logfs_drain_opts *opts,
                     struct logfs_drain_stats *st, struct logfs_error *err)
{
    struct logfs_drain_opts o = opts ? *opts : (struct logfs_drain_opts){0};
    struct claimed c = {0};
    struct logfs_plan *plan = NULL;
    struct far_logs f = {0};
    int rc;

    if (st)
        memset(st, 0, sizeof *st);
    if ((rc = claim_all(path, &c, err)) || !c.n)
        return rc;
    if ((rc = plan_all(&c, o.far, &plan, &f, err))) {
        far_logs_free(&f);
        release_all(&c, 0);
        return rc;
    }
    o.far_servers = f.servers;
    for (size_t i = 0; i < c.n; i++)
        o.durable |= !c.m[i].replayed && c.m[i].durable;
    if (plan) {
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            rc = logfs_fail_errno(err, errno, "cannot open the file to drain into", path);
        else {
            rc = logfs_drain(plan, fd, &o, st, err);
            if (close(fd) < 0 && !rc) /* (a network file system's write-back) */
                rc = logfs_fail_errno(err, errno, "cannot close the drained file", path);
        }
        logfs_plan_free(plan);
    }
    if (rc)
        release_all(&c, 0);
    else
        remove_replayed(&c, o.far, path, o.durable, o.threads);
    far_logs_free(&f);
    return rc;
}
