/* A file's pending sessions drained into it by one process (drain.h,
 * logfs_drain_file): claim, plan, drain, mark, remove. */
#include "drain.h"

#include <errno.h>
#include <fcntl.h>
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

static int plan_all(const struct claimed *c, struct logfs_plan **plan, struct logfs_error *err)
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
    int rc = src && counts && promised ? LOGFS_OK
        : logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan a drain");
    for (size_t i = 0, s = 0; i < c->n && !rc; i++) {
        const struct logfs_manifest *m = &c->m[i];
        if (m->replayed)
            continue;
        /* (a lazy session's writer that promised nothing may have made no
         * log: logfs/manifest.h, version 7) */
        int made_none_ok = logfs_manifest_lazy_unmade_ok(m);
        for (uint32_t r = 0; r < m->nwriters; r++, at++) {
            src[at].metalog = m->w[r].metalog;
            src[at].absent_ok = made_none_ok && m->w[r].epochs == 0;
            promised[at] = m->w[r].epochs;
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

/* The replayed sessions go: marks first, then the logs, then the
 * manifests (a crash between leaves marked manifests whose leftovers the
 * next replay removes, never a session replayed again over newer data). */
static void remove_replayed(struct claimed *c, int durable)
{
    int marked = 1;
    for (size_t i = 0; i < c->n; i++) {
        char *text;
        size_t len;
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
    if (!marked) {               /* (orphaned logs at worst) */
        release_all(c, 1);
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        for (uint32_t r = 0; r < c->m[i].nwriters; r++)
            logfs_log_remove(c->m[i].w[r].metalog, NULL);
        if (c->m[i].lazy && c->m[i].nwriters)
            logfs_manifest_canary_remove(c->m[i].w[0].metalog);
    }
    release_all(c, 1);
}

int logfs_drain_file(const char *path, const struct logfs_drain_opts *opts,
                     struct logfs_drain_stats *st, struct logfs_error *err)
{
    struct logfs_drain_opts o = opts ? *opts : (struct logfs_drain_opts){0};
    struct claimed c = {0};
    struct logfs_plan *plan = NULL;
    int rc;

    if (st)
        memset(st, 0, sizeof *st);
    if ((rc = claim_all(path, &c, err)) || !c.n)
        return rc;
    if ((rc = plan_all(&c, &plan, err))) {
        release_all(&c, 0);
        return rc;
    }
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
        remove_replayed(&c, o.durable);
    return rc;
}
