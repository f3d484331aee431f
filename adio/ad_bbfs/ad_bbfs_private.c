/*
 * Private sessions.  A logging handle that one process opened (a file per
 * process on MPI_COMM_SELF), without a server, while no other handle of
 * the file is open in this process: nobody can read what it writes until
 * it releases it, so until then its logs live in memory and it has no
 * manifest.  An open, some writes and a close then cost what they cost on
 * the lower file system, and nothing on the node's storage (a logging
 * open made four files, and removed them at close: 28x stock's time).
 *
 * The session is published (its log files made, its manifest written, as
 * every other session's at open) as soon as anything needs that: a sync,
 * a release (the MPI calls that order processes: ad_bbfs_sync.c), a full
 * buffer, another handle of the file opened in this process, a close that
 * leaves the logs pending or finds other sessions of the file.  The
 * writer makes its files when a byte must reach them and then calls
 * publish_manifest (logfs_writer_opts.on_create).  A close that needs
 * none of that replays the logs from memory (the same plan and replay as
 * any close: ADIOI_BBFS_Replay reads this writer's metalog and data from
 * memory) and makes no file at all.  Across nodes such a handle finds its
 * node's server only when it publishes (or asks the map): until then it
 * talks to none (ADIOI_BBFS_Server_connect).
 *
 * Nothing is promised lost: a private session never synced (a sync
 * publishes), so a crash loses only writes no sync covered; and a replay
 * from memory that fails writes the logs to their files, pending, as a
 * failed replay at close leaves them.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/manifest.h"
#include "../../logfs/sessions.h"
#include "../../logfs/writer.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static ADIOI_BBFS_File *logging;        /* this process's logging handles */

/* The writer's on_create: its files exist now, the manifest names them. */
static int publish_manifest(void *arg, struct logfs_error *le)
{
    ADIOI_BBFS_File *bf = arg;

    if (!bf->unpublished && !bf->manifest_lazy)
        return LOGFS_OK;
    /* (a release passes no error: the next sync or close makes the files'
     * manifest again, and reports) */
    struct logfs_error mine;
    if (!bf->unpublished)
        return ADIOI_BBFS_Manifest_share(bf, le ? le : &mine);
    int err = ADIOI_BBFS_Manifest_publish(bf);
    if (err != MPI_SUCCESS) {
        if (le)
            ADIOI_BBFS_Error_text(err, 0, le->msg, sizeof(le->msg));
        return LOGFS_EIO;
    }
    bf->unpublished = 0;
    return LOGFS_OK;
}

/* Make the logs' files of a private session, and so its manifest (or
 * this process's of a lazy one, and so the manifest if nobody made it). */
static int publish(ADIOI_BBFS_File * bf, const char *myname)
{
    struct logfs_error le;
    int rc;

    if ((!bf->unpublished && !bf->manifest_lazy) || !bf->writer)
        return MPI_SUCCESS;
    if ((rc = logfs_writer_create_files(bf->writer, &le)) == LOGFS_OK)
        return MPI_SUCCESS;
    return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
}

/* Whether two handles of this process are of one file: by name, or where
 * the names differ (MPI lets a process name a file differently in each
 * open: "out", "./out", "/abs/out") by the lower files' identity. */
static int same_file(ADIOI_BBFS_File * a, ADIOI_BBFS_File * b)
{
    struct stat sa, sb;

    if (strcmp(a->canonical, b->canonical) == 0)
        return 1;
    return a->lower && b->lower && a->lower->fd_sys >= 0 && b->lower->fd_sys >= 0
        && fstat(a->lower->fd_sys, &sa) == 0 && fstat(b->lower->fd_sys, &sb) == 0
        && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int ADIOI_BBFS_Private_join(ADIOI_BBFS_File * bf, int *err)
{
    static char myname[] = "ADIOI_BBFS_PRIVATE_JOIN";
    int alone = 1;

    *err = MPI_SUCCESS;
    for (ADIOI_BBFS_File * h = logging; h; h = h->next_logging) {
        if (h == bf || !same_file(h, bf))
            continue;
        /* Two handles of the file here: each one's close must see the
         * other's session, so that the last replays both, each write where
         * this process made it (PnetCDF writes one file through two). */
        alone = 0;
        if (*err == MPI_SUCCESS)
            *err = publish(h, myname);
    }
    if (!bf->in_logging) {
        bf->next_logging = logging;
        logging = bf;
        bf->in_logging = 1;
    }
    return alone && bf->nwriters == 1 && !ADIOI_BBFS_Server_connected(bf);
}

void ADIOI_BBFS_Private_leave(ADIOI_BBFS_File * bf)
{
    if (!bf->in_logging)
        return;
    for (ADIOI_BBFS_File ** pp = &logging; *pp; pp = &(*pp)->next_logging)
        if (*pp == bf) {
            *pp = bf->next_logging;
            break;
        }
    bf->in_logging = 0;
}

void ADIOI_BBFS_Private_writer_opts(ADIOI_BBFS_File * bf, struct logfs_writer_opts *o)
{
    o->lazy_files = bf->unpublished || bf->lazy;
    o->on_create = publish_manifest;
    o->on_create_arg = bf;
}

int ADIOI_BBFS_No_session(ADIOI_BBFS_File * bf)
{
    struct logfs_session_info *s;
    size_t ns;

    /* (the file's directory has no subdirectory: an fstat of it, kept
     * open from the second look, for handles that look after every
     * acquire; else the listing, which need not test it again) */
    if (logfs_sessions_surely_none_kept(bf->canonical, &bf->parent_dir))
        return 1;
    int rc = logfs_sessions_list_except(bf->canonical, NULL, LOGFS_LIST_PARENT_TESTED, &s, &ns,
                                        NULL);

    if (rc != LOGFS_OK)
        return 0;
    logfs_sessions_free(s, ns);
    return ns == 0;
}

int ADIOI_BBFS_Private_close(ADIO_File fd, int closing, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_PRIVATE_CLOSE";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_error le;
    ADIOI_BBFS_Memlog mem = { bf->writer, 0, NULL, 0 };
    ADIOI_BBFS_Pending none;
    int err = MPI_SUCCESS;

    if (!bf->unpublished || !bf->writer)
        return 0;
    if (!ADIOI_BBFS_No_session(bf)
        || logfs_writer_end_in_memory(bf->writer, &mem.metalog, &mem.len, &le) != LOGFS_OK) {
        /* (the ordinary close publishes, and says what failed) */
        return 0;
    }
    /* (the replay's own collectives release: this log has nothing more to) */
    bf->unreleased = 0;
    memset(&none, 0, sizeof(none));
    ADIO_File lo = bf->lower;
    if (!lo->is_open)           /* deferred open (romio_no_indep_rw) */
        ADIO_ImmediateOpen(lo, &err);
    if (err == MPI_SUCCESS)
        err = ADIOI_BBFS_Pending_replay(fd, lo, &none, 1, 1, &mem);
    ADIOI_BBFS_Pending_free(&none);     /* (its parse of no manifests) */
    if (closing) {
        err = ADIOI_BBFS_Replayed_close(fd, lo, myname, err);
        bf->lower_closed = 1;
    }
    if (err != MPI_SUCCESS) {
        /* The data must outlive the failure: the logs go to their files,
         * closed, and the session stays pending for the next open or
         * bbfs-replay. */
        uint64_t sealed = logfs_writer_epoch(bf->writer);       /* (the CLOSE's too) */
        int rc = logfs_writer_close(bf->writer, &le);
        bf->writer = NULL;
        if (rc == LOGFS_OK) {
            bf->manifest->w[0].epochs = sealed;
            ADIOI_BBFS_Manifest_leave_pending(bf);
        } else
            fprintf(stderr, "bbfs: %s: the replay at close failed, and its logs could not be "
                    "kept either (%s): the writes since open are lost\n", bf->canonical, le.msg);
    } else {
        logfs_writer_abandon(bf->writer);
        bf->writer = NULL;
    }
    bf->unpublished = 0;
    *error_code = err;
    return 1;
}
