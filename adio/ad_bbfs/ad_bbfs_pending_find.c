/*
 * Finding a file's other sessions (process 0): the pending ones claimed,
 * to be replayed by an open or a close, or every one listed, claiming
 * none; their manifests' texts kept for the broadcast that tells everyone
 * (ad_bbfs_pending.c).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/manifest.h"
#include "../../logfs/sessions.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ADIOI_BBFS_Pending_free(ADIOI_BBFS_Pending * p)
{
    for (int i = 0; i < p->n; i++) {
        if (p->claims)
            logfs_session_release(&p->claims[i]);
        if (p->texts)
            ADIOI_BBFS_FREE(p->texts[i]);
        if (p->parsed)
            logfs_manifest_free(&p->parsed[i]);
    }
    ADIOI_BBFS_FREE(p->parsed);
    ADIOI_BBFS_FREE(p->claims);
    ADIOI_BBFS_FREE(p->texts);
    ADIOI_BBFS_FREE(p->lens);
    memset(p, 0, sizeof(*p));
}

/* Process 0 keeps manifest i's text (len bytes read) as every process will
 * have it after the broadcast: up to its first NUL (a damaged manifest may
 * hold one; the parser then sees the same text everywhere, and every
 * process fails, or replays, alike). */
static void keep(ADIOI_BBFS_Pending * p, int i, const char *text, size_t len)
{
    p->texts[i] = ADIOI_Strdup(text);   /* ADIOI_ memory, freed with the rest */
    p->lens[i] = strnlen(p->texts[i], len);
}
/* Whether a session claimed by a drain or a replay elsewhere has logs on
 * another node's storage: this node can read them neither in place nor
 * (the manifest of a session on one node names no server) through a
 * server, and the file is not canonical yet. */
static int claimed_out_of_reach(const char *manifest)
{
    struct logfs_manifest m;
    struct logfs_error le;
    char *text;
    size_t len;
    int far = 0;
    if (logfs_session_load(manifest, &text, &len, &le) != LOGFS_OK)
        return 0;
    if (logfs_manifest_parse(text, len, &m, &le) == LOGFS_OK) {
        for (uint32_t r = 0; r < m.nwriters && !far; r++)
            far = strcmp(m.w[r].host, ADIOI_BBFS_Host_name()) != 0
                && access(m.w[r].metalog, F_OK) != 0;
        logfs_manifest_free(&m);
    }
    free(text);
    return far;
}

/* Process 0, at an open: claim and read the pending sessions of the file:
 * all of them if @p always, else only if no other handle's session is
 * live; under the sessions' lock (logfs_sessions_lock), as a close's
 * choice is made (ADIOI_BBFS_Pending_take).  A session another node's
 * server drains (bbfs_replay=background), whose logs this node cannot
 * reach, is waited for: an open on its own node reads through its logs
 * meanwhile, one here would read the file's old bytes. */
int ADIOI_BBFS_Pending_find(ADIOI_BBFS_File * bf, int always, ADIOI_BBFS_Pending * p)
{
    double t0 = MPI_Wtime(), nap = 0.005;
    for (int said = 0;; ) {
        int lk = logfs_sessions_lock(bf->canonical);
        int err = ADIOI_BBFS_Pending_find_locked(bf, always, lk, p);
        logfs_sessions_unlock(lk);
        if (err != MPI_SUCCESS || !p->far_claimed)
            return err;
        ADIOI_BBFS_Pending_free(p);
        if (!said && MPI_Wtime() - t0 > 10) {
            said = 1;
            fprintf(stderr, "bbfs: %s: another node's bbserver is draining it; this open "
                    "waits until it is canonical (bbsctl status on that node shows how "
                    "far it is)\n", bf->canonical);
        }
        ADIOI_BBFS_Nap(&nap, 0.2);
    }
}

/* (@p lock: what logfs_sessions_lock returned) */
int ADIOI_BBFS_Pending_find_locked(ADIOI_BBFS_File * bf, int always, int lock,
                                   ADIOI_BBFS_Pending * p)
{
    static char myname[] = "ADIOI_BBFS_FIND_PENDING";
    struct logfs_session_info *s;
    struct logfs_error le;
    size_t ns;
    /* (an older release's single manifest is bbfs-replay's to find:
     * docs/log-format.md; looking for it at every open was a failed path
     * lookup more, and those contend with other processes' creates in the
     * directory: a third of an MPI_COMM_SELF open's time with 4 processes) */
    unsigned flags = lock == LOGFS_SESSIONS_NO_DIR ? LOGFS_LIST_NO_DIR : 0;
    /* (this session's own manifest, if any, left out by name: also one
     * that another process of a lazy session made) */
    char own[PATH_MAX];
    int known = bf->metalogs && bf->file_id
        && !logfs_session_path(bf->canonical, bf->file_id, own, sizeof(own));
    /* (through the directory kept since an earlier listing: a close's
     * look, under the lock, is then one listing, not a lookup of the
     * directory's parent, an open and a check of the directory more) */
    int rc = logfs_sessions_list_kept(bf->canonical, known ? own : bf->session.path, flags,
                                      &bf->sessions_dir, &s, &ns, &le);
    int live = 0;

    if (rc != LOGFS_OK)
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
    if (ns) {
        p->claims = ADIOI_Calloc(ns, sizeof(*p->claims));
        p->texts = ADIOI_Calloc(ns, sizeof(*p->texts));
        p->lens = ADIOI_Calloc(ns, sizeof(*p->lens));
    }
    for (size_t i = 0; i < ns; i++)
        live += s[i].live;
    for (size_t i = 0; i < ns && rc == LOGFS_OK; i++) {
        if (s[i].live || (live && !always)) {
            p->others++;
            p->live_others += s[i].live;
            p->claimed_others += s[i].claimed;
            p->far_claimed |= s[i].claimed && claimed_out_of_reach(s[i].path);
            continue;
        }
        rc = logfs_session_claim(s[i].path, &p->claims[p->n], &le);
        if (rc == LOGFS_EBUSY) {        /* another open took it since the listing */
            p->others++;
            p->live_others++;
            rc = LOGFS_OK;
            continue;
        }
        if (rc == LOGFS_ENOENT) {       /* replayed by someone else meanwhile */
            rc = LOGFS_OK;
            continue;
        }
        if (rc != LOGFS_OK)
            break;
        p->n++;
        char *text;
        size_t len;
        rc = logfs_session_load(s[i].path, &text, &len, &le);
        if (rc == LOGFS_OK) {
            keep(p, p->n - 1, text, len);
            free(text);
        }
    }
    logfs_sessions_free(s, ns);
    if (rc == LOGFS_OK)
        return MPI_SUCCESS;
    char msg[LOGFS_ERRMSG_MAX + 64];
    snprintf(msg, sizeof(msg), "pending logs of %s: %s", bf->canonical, le.msg);
    return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
}

static int keep_text(void *arg, const char *path, char *text, size_t len,
                     struct logfs_error *le)
{
    ADIOI_BBFS_Pending *p = arg;

    (void) path;
    (void) le;
    p->texts = ADIOI_Realloc(p->texts, (p->n + 1) * sizeof(*p->texts));
    p->lens = ADIOI_Realloc(p->lens, (p->n + 1) * sizeof(*p->lens));
    keep(p, p->n++, text, len);
    return LOGFS_OK;
}

/* Process 0: the manifests of every other session, live or pending,
 * claiming none (a replay that keeps the logs). */
int ADIOI_BBFS_Pending_find_all(ADIOI_BBFS_File * bf, ADIOI_BBFS_Pending * p)
{
    static char myname[] = "ADIOI_BBFS_LIST_SESSIONS";
    struct logfs_error le;
    int rc = ADIOI_BBFS_Manifest_each(bf, ADIOI_BBFS_SESSIONS_ALL, keep_text, p, &le);

    return rc == LOGFS_OK ? MPI_SUCCESS : ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
}
