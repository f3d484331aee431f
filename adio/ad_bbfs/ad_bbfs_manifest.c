/*
 * The manifests of a file's logging sessions (logfs/sessions.h).  Each
 * logging handle is a session: process 0 of the handle publishes the
 * session's manifest when the logs start and holds it, locked, until the
 * handle closes, so that other handles on the same file (PnetCDF opens one
 * file twice; two jobs may share it) never replay or remove its live logs,
 * and can read what it synced.  A deferred close leaves the manifest
 * pending for the next open or bbfs-replay; a replay at close removes it.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/manifest.h"
#include "../../logfs/sessions.h"
#include "../../logfs/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A lazy session's canary beside writer 0's metalog, made before the
 * manifest that names its writers: it tells a later replay that a missing
 * log was never made, not lost (logfs/manifest.h, version 7). */
static int make_canary(ADIOI_BBFS_File * bf, struct logfs_error *le)
{
    char *canary = logfs_manifest_canary(bf->metalogs[0]);
    int fd = canary ? open(canary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    int e = errno;

    free(canary);
    if (fd >= 0) {
        close(fd);
        return LOGFS_OK;
    }
    snprintf(le->msg, sizeof(le->msg), "cannot create logs in bbfs_logdir %s (a lazy session's "
             "canary beside %s: %s)", bf->hints.logdir, bf->metalogs[0],
             canary ? strerror(e) : "no memory");
    return le->code = canary ? logfs_status_from_errno(e) : LOGFS_ENOMEM;
}

/* @p le's message as the manifest's failure (ADIOI_BBFS_MANIFEST_FAILED). */
static int manifest_failed(int rc, struct logfs_error *le)
{
    char why[LOGFS_ERRMSG_MAX];

    snprintf(why, sizeof(why), "%s", le->msg);
    snprintf(le->msg, sizeof(le->msg), "%s%s", ADIOI_BBFS_MANIFEST_FAILED, why);
    return le->code = rc;
}

static int manifest_error(int rc, struct logfs_error *le)
{
    static char myname[] = "ADIOI_BBFS_MANIFEST_PUBLISH";

    manifest_failed(rc, le);
    return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le->msg);
}

/* Make the session's manifest as bf->manifest stands, or, if another
 * process of the session made it first, hold that one (*joined set).
 * Either way this process holds it live.  @return a logfs code, @p le
 * saying why. */
static int create_or_join(ADIOI_BBFS_File * bf, int *joined, struct logfs_error *le)
{
    char *text = NULL;
    size_t len;
    int rc;

    *joined = 0;
    /* (once durable, the session's logs stay so: the replay flushes for it) */
    bf->manifest->durable |= bf->hints.durable;
    if (bf->manifest->lazy && (rc = make_canary(bf, le)) != LOGFS_OK)
        return rc;
    if ((rc = logfs_manifest_format(bf->manifest, &text, &len)) != LOGFS_OK)
        return manifest_failed(rc, le);
    rc = logfs_session_create(bf->canonical, bf->file_id, text, len, bf->hints.durable,
                              &bf->session, le);
    free(text);
    if (rc == LOGFS_EEXIST && bf->manifest->lazy) {
        rc = logfs_session_join(bf->canonical, bf->file_id, &bf->session, le);
        *joined = rc == LOGFS_OK;
    }
    if (rc != LOGFS_OK)         /* (the next sync or close tries again, and reports) */
        return manifest_failed(rc, le);
    bf->manifest_lazy = 0;
    return LOGFS_OK;
}

int ADIOI_BBFS_Manifest_held(const ADIOI_BBFS_File * bf)
{
    return bf->session.path != NULL;
}

/* Process 0: write bf->manifest as it stands (the first time, the session
 * begins, unless another process of a lazy session began it). */
static int publish_named(ADIOI_BBFS_File * bf)
{
    static char myname[] = "ADIOI_BBFS_MANIFEST_PUBLISH";
    struct logfs_error le;
    char *text = NULL;
    size_t len;
    int rc, joined = 1;

    if (!ADIOI_BBFS_Manifest_held(bf)) {
        if ((rc = create_or_join(bf, &joined, &le)) != LOGFS_OK)
            return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
        if (!joined)
            return MPI_SUCCESS;
    }
    bf->manifest->durable |= bf->hints.durable;
    rc = logfs_manifest_format(bf->manifest, &text, &len);
    if (rc != LOGFS_OK)
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, "cannot describe the logs in a "
                                    "manifest (hostname or log path with blanks?)");
    rc = logfs_session_store(&bf->session, text, len, bf->hints.durable, &le);
    free(text);
    return rc == LOGFS_OK ? MPI_SUCCESS : manifest_error(rc, &le);
}

int ADIOI_BBFS_Manifest_publish(ADIOI_BBFS_File * bf)
{
    char why[1024];
    int lk;
    /* (a handle that chose no map at its open chooses it now) */
    int err = ADIOI_BBFS_Server_name_map(bf, &lk, why, sizeof(why)) == 0 ? publish_named(bf)
        : ADIOI_BBFS_Err_server("ADIOI_BBFS_MANIFEST_PUBLISH", __LINE__, why);
    logfs_sessions_unlock(lk);
    return err;
}

/* Any process of a lazy session, when it makes its log files: the
 * manifest must name them first (its text is the open's, alike on every
 * process); process 0 writes what the close learns (epochs). */
int ADIOI_BBFS_Manifest_share(ADIOI_BBFS_File * bf, struct logfs_error *le)
{
    int joined;

    if (!bf->manifest_lazy || ADIOI_BBFS_Manifest_held(bf))
        return LOGFS_OK;
    return create_or_join(bf, &joined, le);
}

/* Process 0 at a close: hold the manifest if another process made it. */
void ADIOI_BBFS_Manifest_join(ADIOI_BBFS_File * bf)
{
    struct logfs_error le;

    if (!ADIOI_BBFS_Manifest_held(bf)
        && logfs_session_join(bf->canonical, bf->file_id, &bf->session, &le) == LOGFS_OK)
        bf->manifest_lazy = 0;
}

/* (made first: the first two sessions of a file must take turns too; the
 * last session to go removes the directory, hence the second try) */
int ADIOI_BBFS_Manifest_lock_sessions(ADIOI_BBFS_File * bf)
{
    char dir[PATH_MAX];
    int lk = -1;

    if (logfs_sessions_dir(bf->canonical, dir, sizeof(dir)) != 0)
        return -1;
    for (int tries = 0; tries < 2 && lk < 0; tries++) {
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return -1;
        lk = logfs_sessions_lock_made(bf->canonical);
    }
    return lk;
}

void ADIOI_BBFS_Manifest_remove(ADIOI_BBFS_File * bf)
{
    logfs_session_remove(&bf->session);
}

void ADIOI_BBFS_Manifest_release(ADIOI_BBFS_File * bf)
{
    logfs_session_release(&bf->session);
}

/* A close that leaves the logs pending tells the manifest how many epochs
 * each writer sealed, so that a replay notices a log that lost some
 * (ADIOI_BBFS_Replay): process 0 gathers the counts.  Collective.
 *
 * A lazy session's manifest is held by the processes that made or joined
 * it as their logs got files, and process 0 holds it only from its own
 * close on.  A process that let go of it before process 0 took it would
 * leave it unheld, and a drain or a replay elsewhere would claim a session
 * still being closed and remove logs still being written
 * (mpiio-tests/t_close_held.c).  So there every process waits until all,
 * process 0 too, have sealed and hold it: an allgather, where a gather
 * lets the others go at once.  (Elsewhere process 0 holds the manifest
 * from the open on.) */
void ADIOI_BBFS_Manifest_epochs(ADIO_File fd, uint64_t sealed)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    uint64_t *all = NULL;
    int rank;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0 || bf->lazy)
        all = ADIOI_Malloc(sizeof(uint64_t) * bf->nwriters);
    if (bf->lazy)
        MPI_Allgather(&sealed, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, fd->comm);
    else
        MPI_Gather(&sealed, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, fd->comm);
    if (rank != 0)
        ADIOI_BBFS_FREE(all);
    if (rank == 0) {
        for (int r = 0; r < bf->nwriters; r++)
            bf->manifest->w[r].epochs = all[r];
        ADIOI_Free(all);
    }
}

/* Process 0: the session becomes pending, its manifest with the epochs. */
int ADIOI_BBFS_Manifest_leave_pending(ADIOI_BBFS_File * bf)
{
    int lk = logfs_sessions_lock(bf->canonical), err = ADIOI_BBFS_Manifest_publish(bf);

    ADIOI_BBFS_Manifest_release(bf);
    logfs_sessions_unlock(lk);
    return err;
}

void ADIOI_BBFS_Manifest_reach(const struct logfs_manifest *m, unsigned char *here)
{
    for (uint32_t r = 0; r < m->nwriters; r++)
        here[r] = access(m->w[r].metalog, F_OK) == 0;
}

/* Remove every log of the manifest that this process can reach: its own
 * node's, and any other node's in a log directory the nodes share.  (Log
 * names hold the session's file id and the writer's rank, so a log of
 * that name here is that writer's, whichever host the manifest names.)
 * Files already gone are fine.  Logs on the own storage of nodes none of
 * the caller's processes runs on go through those nodes' servers; when
 * that fails they are left, and said so (the data is in the file). */
int ADIOI_BBFS_Manifest_remove_logs(const struct logfs_manifest *m, const unsigned char *far,
                                    int rank, int nprocs, double timeout)
{
    ADIOI_BBFS_Nodes nodes;
    char err[1024];
    int ready = 0, failed = 0;

    for (uint32_t r = 0; r < m->nwriters; r++) {
        failed += ADIOI_BBFS_Log_remove(m->w[r].metalog);
        if (!far || !far[r] || !m->w[r].server[0] || (int) (r % (uint32_t) nprocs) != rank)
            continue;
        if (!ready)
            ready = ADIOI_BBFS_Nodes_init(&nodes, timeout, err, sizeof(err)) == 0 ? 1 : -1;
        if (ready < 0 || ADIOI_BBFS_Nodes_remove(&nodes, m->w[r].server, m->w[r].metalog, err,
                                                 sizeof(err)) != 0)
            fprintf(stderr, "bbfs: the logs of writer %u on %s are left there (%s); remove %s "
                    "and its .datalog and .sealed on that node\n", r, m->w[r].host, err,
                    m->w[r].metalog);
    }
    if (m->lazy)                /* (a lazy session's canary, after its logs) */
        logfs_manifest_canary_remove(m->w[0].metalog);
    return failed;
}


int ADIOI_BBFS_Log_remove(const char *metalog)
{
    struct logfs_error le;
    if (logfs_log_remove(metalog, &le) == LOGFS_OK)
        return 0;
    fprintf(stderr, "bbfs: %s\n", le.msg);
    return 1;
}

/* Load and parse one manifest.  Returns a logfs code; le says why. */
int ADIOI_BBFS_Manifest_load(const char *path, struct logfs_manifest *m,
                             struct logfs_error *le)
{
    char *text;
    size_t len;
    int rc = logfs_session_load(path, &text, &len, le);

    if (rc != LOGFS_OK)
        return rc;
    rc = logfs_manifest_parse(text, len, m, le);
    free(text);
    if (rc != LOGFS_OK) {
        char msg[LOGFS_ERRMSG_MAX];
        snprintf(msg, sizeof(msg), "%s: %s", path, le->msg);
        snprintf(le->msg, sizeof(le->msg), "%s", msg);
    }
    return rc;
}

int ADIOI_BBFS_Manifest_each(ADIOI_BBFS_File * bf, int which, ADIOI_BBFS_session_fn fn,
                             void *arg, struct logfs_error *le)
{
    struct logfs_session_info *s;
    size_t ns, len;
    char *text, own[PATH_MAX];
    /* this handle's own: process 0 holds it by path, and every process
     * knows its name (a view after every acquire would load it again) */
    int known = bf->metalogs && bf->file_id
        && !logfs_session_path(bf->canonical, bf->file_id, own, sizeof(own));
    int rc = logfs_sessions_list_kept(bf->canonical, known ? own : NULL, 0, &bf->sessions_dir,
                                      &s, &ns, le);

    for (size_t i = 0; i < ns && rc == LOGFS_OK; i++) {
        if ((which == ADIOI_BBFS_SESSIONS_PENDING && s[i].live)
            || (which == ADIOI_BBFS_SESSIONS_LIVE && !s[i].live))
            continue;
        rc = logfs_session_load(s[i].path, &text, &len, le);
        if (rc == LOGFS_ENOENT) {       /* replayed meanwhile: its data is in the file */
            rc = LOGFS_OK;
            continue;
        }
        if (rc == LOGFS_OK) {
            rc = fn(arg, s[i].path, text, len, le);
            free(text);
        }
    }
    logfs_sessions_free(s, ns);        /* (none if the listing failed) */
    return rc;
}

struct others {
    ADIOI_BBFS_File *bf;
    struct logfs_manifest *m;
    int n, cap;
};

static int parse_other(void *arg, const char *path, char *text, size_t len,
                       struct logfs_error *le)
{
    struct others *o = arg;
    struct logfs_manifest *m;

    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 4;
        o->m = ADIOI_Realloc(o->m, o->cap * sizeof(*o->m));
    }
    m = &o->m[o->n];
    int rc = logfs_manifest_parse(text, len, m, le);
    if (rc != LOGFS_OK) {
        char msg[LOGFS_ERRMSG_MAX];
        snprintf(msg, sizeof(msg), "%s: %s", path, le->msg);
        snprintf(le->msg, sizeof(le->msg), "%s", msg);
        return rc;
    }
    if ((o->bf->metalogs && m->file_id == o->bf->file_id) || m->replayed)
        logfs_manifest_free(m); /* this handle's own, or in the file */
    else
        o->n++;
    return LOGFS_OK;
}

int ADIOI_BBFS_Manifest_others(ADIOI_BBFS_File * bf, int closed_only,
                               struct logfs_manifest **out, int *n)
{
    static char myname[] = "ADIOI_BBFS_SESSIONS";
    struct others o = { bf, NULL, 0, 0 };
    struct logfs_error le;
    int rc = ADIOI_BBFS_Manifest_each(bf, closed_only ? ADIOI_BBFS_SESSIONS_PENDING
                                      : ADIOI_BBFS_SESSIONS_ALL, parse_other, &o, &le);

    *out = NULL;
    *n = 0;
    if (rc != LOGFS_OK) {
        ADIOI_BBFS_Manifest_free_all(o.m, o.n);
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
    }
    *out = o.m;
    *n = o.n;
    return MPI_SUCCESS;
}

struct live_map {
    char *out;
    size_t len;
    int found;                  /* as ADIOI_BBFS_Manifest_live_map returns */
};

static int note_map(void *arg, const char *path, char *text, size_t len,
                    struct logfs_error *le)
{
    struct live_map *lm = arg;
    struct logfs_manifest m;

    (void) path;
    /* (a manifest that cannot be read names no map: the open's read of the
     * sessions next says what is wrong with it) */
    if (logfs_manifest_parse(text, len, &m, le) != LOGFS_OK)
        return LOGFS_OK;
    if (!m.replayed) {
        lm->found = m.map[0] != 0;
        snprintf(lm->out, lm->len, "%s", m.map);
    }
    logfs_manifest_free(&m);
    return lm->found == 1 ? LOGFS_END : LOGFS_OK;       /* (the oldest decides) */
}

int ADIOI_BBFS_Manifest_live_map(ADIOI_BBFS_File * bf, char *out, size_t len)
{
    struct live_map lm = { out, len, -1 };
    struct logfs_error le;

    int rc = ADIOI_BBFS_Manifest_each(bf, ADIOI_BBFS_SESSIONS_LIVE, note_map, &lm, &le);

    return rc == LOGFS_OK || rc == LOGFS_END ? lm.found : -1;
}

void ADIOI_BBFS_Manifest_free_all(struct logfs_manifest *m, int n)
{
    for (int i = 0; i < n; i++)
        logfs_manifest_free(&m[i]);
    ADIOI_BBFS_FREE(m);
}

/* MPI_File_delete: every session's logs this process reaches and every manifest go,
 * live or not (deleting an open file is erroneous in MPI anyway). */
int ADIOI_BBFS_Discard_pending(ADIOI_BBFS_File * bf)
{
    static char myname[] = "ADIOI_BBFS_DISCARD_PENDING";
    struct logfs_session_info *s;
    struct logfs_error le, first = { 0 };
    size_t ns;
    int rc = logfs_sessions_list(bf->canonical, &s, &ns, &le), bad = LOGFS_OK;

    if (rc != LOGFS_OK)
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
    for (size_t i = 0; i < ns; i++) {
        struct logfs_manifest m;
        struct logfs_session gone = { -1, s[i].path };
        rc = ADIOI_BBFS_Manifest_load(s[i].path, &m, &le);
        if (rc == LOGFS_OK) {
            /* logs neither here nor on this host: on another node */
            unsigned char *far = ADIOI_Calloc(m.nwriters, 1);
            const char *host = ADIOI_BBFS_Host_name();
            ADIOI_BBFS_Manifest_reach(&m, far);
            for (uint32_t r = 0; r < m.nwriters; r++)
                far[r] = !far[r] && strcmp(m.w[r].host, host) != 0;
            ADIOI_BBFS_Manifest_remove_logs(&m, far, 0, 1, ADIOI_BBFS_DEFAULT_SERVER_TIMEOUT);
            ADIOI_Free(far);
            logfs_manifest_free(&m);
        } else if (rc != LOGFS_ENOENT && bad == LOGFS_OK) {
            bad = rc;
            first = le;
        }
        /* A damaged manifest goes too (the file is being deleted), but its
         * logs cannot be found: say so below. */
        s[i].path = NULL;
        logfs_session_remove(&gone);
    }
    logfs_sessions_free(s, ns);
    return bad == LOGFS_OK ? MPI_SUCCESS : ADIOI_BBFS_Err_logfs(myname, __LINE__, bad, first.msg);
}
