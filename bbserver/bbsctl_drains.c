/*
 * bbsctl's drain commands (bbsctl_drains.h): drain, wait, status.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bbsctl_drains.h"
#include "drains.h"
#include "../logfs/sessions.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* The name the server files a drain under: the driver asks with the
 * file's real path. */
static int real_name(const char *file, char *out)
{
    if (realpath(file, out))
        return 0;
    fprintf(stderr, "bbsctl: %s: %m\n", file);
    return -1;
}

/* One request whose reply lists drains; @return 0, 1 refused, 3 no answer. */
static int call(struct bbs_client *cl, const uint8_t *token, int op, const char *file,
                struct bbs_buf *b, struct bbs_reply *r, struct bbs_drain_rec **recs)
{
    char err[1024];
    uint64_t id = bbs_client_next_id(cl);
    *recs = NULL;
    if ((op == BBS_DRAIN ? bbs_enc_drain(b, id, token, file)
         : bbs_enc_drains(b, id, token, file)) != 0) {
        fprintf(stderr, "bbsctl: out of memory\n");
        return 1;
    }
    if (bbs_client_call(cl, b, r, err, sizeof(err)) != 0) {
        fprintf(stderr, "bbsctl: %s\n", err);
        return 3;
    }
    if (r->status != BBS_OK) {
        fprintf(stderr, "bbsctl: %s: %s: %s\n", bbs_op_name(op), bbs_status_str(r->status),
                r->msg);
        return 1;
    }
    if ((*recs = calloc(r->ndrains ? r->ndrains : 1, sizeof(**recs))) == NULL) {
        fprintf(stderr, "bbsctl: out of memory\n");
        return 1;
    }
    bbs_reply_drains(r, *recs);
    return 0;
}

static void print_rec(FILE *f, const struct bbs_drain_rec *d)
{
    fprintf(f, "%-8s %10.1f %10.1f MiB %3u tries %8.1f s  %s", bbs_drain_state_name(d->state),
            (double) d->done / 1048576.0, (double) d->total / 1048576.0, d->tries,
            (double) d->age_ms / 1e3, d->path);
    if (*d->error)
        fprintf(f, "  (%s)", d->error);
    fputc('\n', f);
}

int bbsctl_drain(struct bbs_client *cl, const uint8_t *token, int nfiles, char **files)
{
    struct bbs_buf b = { 0 };
    int rc = 0;
    for (int i = 0; i < nfiles && rc == 0; i++) {
        char path[PATH_MAX];
        struct bbs_reply r;
        struct bbs_drain_rec *d;
        if (real_name(files[i], path) != 0) {
            rc = 1;
            break;
        }
        if ((rc = call(cl, token, BBS_DRAIN, path, &b, &r, &d)) == 0)
            print_rec(stdout, d);
        free(d);
    }
    bbs_buf_free(&b);
    return rc;
}

int bbsctl_status(struct bbs_client *cl, const uint8_t *token, const char *file)
{
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    struct bbs_drain_rec *d;
    char path[PATH_MAX];
    if (file && real_name(file, path) != 0)
        return 1;
    int rc = call(cl, token, BBS_DRAINS, file ? path : NULL, &b, &r, &d);
    if (rc == 0) {
        printf("%-8s %10s %10s\n", "state", "done", "of");
        for (uint32_t i = 0; i < r.ndrains; i++)
            print_rec(stdout, &d[i]);
        if (file && r.ndrains == 0)
            printf("none     %s  (this server has not drained it since it started)\n", path);
    }
    free(d);
    bbs_buf_free(&b);
    return rc;
}

/* A session left pending by a close on another node is claimed by that
 * node's server within milliseconds of the close (its drain thread tries
 * again after 10 ms): a wait started on this node right after the job
 * gives it this long before it calls the session undrained. */
#define CLAIM_GRACE_S 2.0

/* Where a file stands for wait: 0 canonical, 1 failed (said), 2 not yet,
 * 3 no answer.  (waited: seconds since the wait began) */
static int settled(struct bbs_client *cl, const uint8_t *token, const char *server,
                   const char *path, struct bbs_buf *b, int loud, double waited)
{
    struct bbs_reply r;
    struct bbs_drain_rec *d = NULL;
    /* (no server: nothing drains here, the sessions alone tell) */
    int rc = cl ? call(cl, token, BBS_DRAINS, path, b, &r, &d) : 0, state = BBS_DRAIN_NONE;
    if (!cl)
        r.ndrains = 0;
    if (rc != 0) {
        free(d);
        return rc == 3 ? 3 : 1;
    }
    if (r.ndrains)
        state = d->state;
    if (state == BBS_DRAIN_FAILED) {
        fprintf(stderr, "bbsctl: wait: %s: the drain on %s failed: %s\n", path, server,
                d->error);
        free(d);
        return 1;
    }
    if (state == BBS_DRAIN_QUEUED || state == BBS_DRAIN_HELD || state == BBS_DRAIN_RUNNING) {
        if (loud)
            print_rec(stderr, d);
        free(d);
        return 2;
    }
    free(d);
    /* Done here, or unknown here: the file is canonical once no session
     * of it is pending (a live one is a handle open, or a drain
     * elsewhere: wait for it). */
    struct logfs_session_info *v = NULL;
    struct logfs_error le;
    size_t n = 0;
    if (logfs_sessions_list(path, &v, &n, &le) != LOGFS_OK) {
        fprintf(stderr, "bbsctl: wait: %s: %s\n", path, le.msg);
        return 1;
    }
    int live = 0;
    for (size_t i = 0; i < n; i++)
        live |= v[i].live;
    logfs_sessions_free(v, n);
    if (n == 0)
        return 0;
    if (live) {
        if (loud)
            fprintf(stderr, "bbsctl: wait: %s: a handle of it is open, or another "
                    "server drains it\n", path);
        return 2;
    }
    if (waited < CLAIM_GRACE_S)
        return 2;
    if (!cl)
        fprintf(stderr, "bbsctl: wait: %s has %zu pending session%s, and %s drains it: run "
                "bbfs-replay %s\n", path, n, n == 1 ? "" : "s", server, path);
    else
        fprintf(stderr, "bbsctl: wait: %s has %zu pending session%s that %s is not draining: "
                "run bbsctl drain %s, or bbfs-replay %s\n", path, n, n == 1 ? "" : "s", server,
                path, path);
    return 1;
}

int bbsctl_wait(struct bbs_client *cl, const uint8_t *token, const char *server,
                double timeout, int nfiles, char **files)
{
    struct bbs_buf b = { 0 };
    char (*paths)[PATH_MAX] = calloc((size_t) nfiles, sizeof(*paths));
    int *left = calloc((size_t) nfiles, sizeof(*left)), nleft = nfiles, rc = 0;
    double start = now_s(), nap = 0.01, said = start;
    if (!paths || !left) {
        fprintf(stderr, "bbsctl: out of memory\n");
        return 1;
    }
    for (int i = 0; i < nfiles; i++) {
        if (real_name(files[i], paths[i]) != 0) {
            rc = 1;
            nleft--;
        } else
            left[i] = 1;
    }
    while (nleft > 0) {
        /* (what is still running is said every 10 s: long drains show progress) */
        int loud = now_s() - said >= 10;
        if (loud)
            said = now_s();
        for (int i = 0; i < nfiles; i++) {
            if (!left[i])
                continue;
            int st = settled(cl, token, server, paths[i], &b, loud, now_s() - start);
            if (st == 3) {
                free(paths);
                free(left);
                bbs_buf_free(&b);
                return 3;
            }
            if (st == 2)
                continue;
            if (st == 0)
                printf("canonical %s\n", paths[i]);
            else
                rc = 1;
            left[i] = 0;
            nleft--;
        }
        if (nleft == 0)
            break;
        if (timeout > 0 && now_s() - start > timeout) {
            for (int i = 0; i < nfiles; i++)
                if (left[i])
                    fprintf(stderr, "bbsctl: wait: %s is not canonical after %.0f s\n",
                            paths[i], timeout);
            rc = 3;
            break;
        }
        struct timespec ts = { 0, (long) (nap * 1e9) };
        nanosleep(&ts, NULL);
        nap = nap < 0.5 ? nap * 2 : 1;
    }
    fflush(stdout);
    free(paths);
    free(left);
    bbs_buf_free(&b);
    return rc;
}
