/*
 * The log writer's files: making them (at open, or with lazy_files when a
 * byte must first reach one), sealing epochs into them, closing them, and
 * ending a log that never needed them in memory.
 *
 * Files are made in the order metalog, seal, datalog, so that a failure
 * part way removes only what this writer made: with exclusive, a metalog
 * that exists is another writer's, and nothing is touched.
 */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coding.h"
#include "datalog.h"
#include "format.h"
#include "internal.h"
#include "seal.h"
#include "writer_internal.h"

static int check_dir(const struct logfs_writer_opts *o, struct logfs_error *err)
{
    struct stat st;
    if (o->dir_checked && !o->create_dir)
        return LOGFS_OK;
    if (o->create_dir && mkdir(o->dir, 0700) < 0 && errno != EEXIST)
        return logfs_fail_errno(err, errno, "cannot create log directory", o->dir);
    if (stat(o->dir, &st) < 0)
        return logfs_fail_errno(err, errno, "log directory", o->dir);
    if (!S_ISDIR(st.st_mode))
        return logfs_fail(err, LOGFS_ENOTDIR, ENOTDIR, "log directory %s is not a directory", o->dir);
    /* (lazy: the files come later, and the open is where to hear of a
     * directory that will refuse them) */
    if (o->lazy_files && access(o->dir, W_OK | X_OK) < 0)
        return logfs_fail_errno(err, errno, "cannot create logs in", o->dir);
    return LOGFS_OK;
}

static int queue_header(struct logfs_writer *w, const struct logfs_writer_opts *o,
                        struct logfs_error *err)
{
    uint8_t h[LOGFS_HEADER_PAYLOAD_LEN];
    memcpy(h, LOGFS_MAGIC, LOGFS_MAGIC_LEN);
    logfs_put32(h + 8, LOGFS_FORMAT_VERSION);
    logfs_put64(h + 12, o->file_id);
    logfs_put32(h + 20, o->rank);
    logfs_put32(h + 24, o->nwriters);
    return logfs_writer_queue_record(w, LOGFS_REC_HEADER, h, sizeof h, NULL, 0, err);
}

static int make_files(struct logfs_writer *w, struct logfs_error *err)
{
    int rc;

    /* An old seal must never judge the new metalog: it goes before the
     * metalog is truncated (with exclusive, the metalog must not exist, and
     * the seal is emptied once the metalog is created). */
    if (!w->exclusive && unlink(w->spath) < 0 && errno != ENOENT)
        return logfs_fail_errno(err, errno, "cannot remove old seal", w->spath);
    if ((rc = logfs_open_own(w->mpath, O_WRONLY | O_CREAT | O_TRUNC | (w->exclusive ? O_EXCL : 0),
                             0600, "cannot create metalog", &w->mfd, err)))
        return rc;
    if ((rc = logfs_open_own(w->spath, O_WRONLY | O_CREAT | O_TRUNC, 0600, "cannot create seal",
                             &w->sfd, err)))
        goto fail;
    if ((rc = logfs_datalog_create(&w->dl, w->use_pmem, w->exclusive, err)))
        goto fail;
    w->lazy = 0;
    return LOGFS_OK;
fail:
    if (w->sfd >= 0) {
        close(w->sfd);
        unlink(w->spath);
        w->sfd = -1;
    }
    close(w->mfd);
    unlink(w->mpath);
    w->mfd = -1;
    return rc;
}

/* The datalog's need_file: it cannot make its file alone, the others
 * come with it. */
static int datalog_needs_file(void *arg, struct logfs_error *err)
{
    return logfs_writer_ensure_files(arg, err);
}

int logfs_writer_ensure_files(struct logfs_writer *w, struct logfs_error *err)
{
    int rc;
    if (w->lazy && (rc = make_files(w, err)))
        return rc;
    if (w->announced || w->announcing)
        return LOGFS_OK;
    /* Durable logs must also be found after a crash: their names too. */
    int e = w->durable ? logfs_fsync_dir(w->dir) : 0;
    if (e)
        return logfs_fail_errno(err, e, "cannot fsync the log directory", w->dir);
    /* What was queued (the header at least) is in the files before anyone
     * hears of them: a reader never finds a metalog without its header. */
    w->announcing = 1;
    rc = logfs_writer_write_queued(w, err);
    w->announcing = 0;
    if (rc)
        return rc;
    if (w->on_create && (rc = w->on_create(w->on_create_arg, err)))
        return rc;
    w->announced = 1;
    return LOGFS_OK;
}

int logfs_writer_open(const struct logfs_writer_opts *o, struct logfs_writer **out,
                      struct logfs_error *err)
{
    struct logfs_writer *w;
    char *dpath = NULL;
    int rc;

    *out = NULL;
    if (!o || !o->dir || !o->name || !*o->name || strchr(o->name, '/') || o->nwriters == 0 ||
        o->rank >= o->nwriters)
        return logfs_fail(err, LOGFS_EINVAL, 0,
                          "writer options need dir, a name without '/', and rank < nwriters");
    if ((rc = check_dir(o, err)))
        return rc;
    w = calloc(1, sizeof *w);
    if (!w)
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a log writer");
    w->mfd = -1;
    w->sfd = -1;
    w->dl.fd = -1;
    w->file_id = o->file_id;
    w->process = o->process;
    w->rank = o->rank;
    w->nwriters = o->nwriters;
    w->durable = o->durable;
    w->carry_calls = o->carry_calls;
    w->max_meta = o->max_metalog_bytes;
    w->exclusive = o->exclusive;
    w->use_pmem = o->pmem != LOGFS_PMEM_NEVER;
    w->on_create = o->on_create;
    w->on_create_arg = o->on_create_arg;
    w->lazy = 1;                /* (until make_files) */
    w->dir = strdup(o->dir);
    w->mpath = logfs_path_join(o->dir, o->name, "metalog");
    dpath = logfs_path_join(o->dir, o->name, "datalog");
    w->spath = logfs_path_join(o->dir, o->name, "sealed");
    if (!w->dir || !w->mpath || !dpath || !w->spath ||
        (o->track_index && logfs_index_create(&w->ix))) {
        free(dpath);
        logfs_writer_abandon(w);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a log writer");
    }
    rc = logfs_datalog_init(&w->dl, dpath, o->buffer_size ? o->buffer_size : LOGFS_DEFAULT_BUFFER_SIZE,
                            o->max_datalog_bytes, o->durable, err);
    free(dpath);
    w->dl.need_file = datalog_needs_file;
    w->dl.need_file_arg = w;
    if (!rc)
        rc = queue_header(w, o, err);
    if (!rc && !o->lazy_files && !(rc = make_files(w, err)) && (rc = logfs_writer_flush_meta(w, err))) {
        unlink(w->spath);
        unlink(w->mpath);
        unlink(w->dl.path);
    }
    if (rc) {
        logfs_writer_abandon(w);
        return rc;
    }
    *out = w;
    return LOGFS_OK;
}

char *logfs_writer_metalog_path_of(const char *dir, const char *name)
{
    return logfs_path_join(dir, name, "metalog");
}

int logfs_writer_has_files(const struct logfs_writer *w)
{
    return !w->lazy;
}

int logfs_writer_create_files(struct logfs_writer *w, struct logfs_error *err)
{
    return logfs_writer_ensure_files(w, err);
}

/* The record that ends the open epoch (SYNC or CLOSE: its number and the
 * datalog's length), queued. */
static int queue_epoch_end(struct logfs_writer *w, int type, struct logfs_error *err)
{
    uint8_t p[20];
    size_t n = logfs_epoch_end_payload(p, w->epoch, w->dl.len);
    return logfs_writer_queue_record(w, type, p, n, NULL, 0, err);
}

int logfs_writer_end_in_memory(struct logfs_writer *w, const void **metalog, size_t *len,
                               struct logfs_error *err)
{
    int rc = LOGFS_OK;

    if (w->in_call)
        rc = logfs_writer_end_write(w, err);
    if (!rc)
        rc = logfs_writer_settle(w, err);
    if (rc)
        return rc;
    /* (ending the call may have filled the buffer, and made the files) */
    if (!w->lazy)
        return logfs_fail(err, LOGFS_ESTATE, 0, "log %s has its files: close it", w->mpath);
    if (w->slot_queued)
        logfs_writer_fill_later(w, w->later_fn(w->later_arg));
    if ((rc = queue_epoch_end(w, LOGFS_REC_CLOSE, err)))
        return rc;
    w->epoch++;
    w->ended = 1;
    *metalog = w->mbuf;
    *len = w->mfill;
    return LOGFS_OK;
}

/* Record in the seal that the metalog is complete up to its current length
 * (just past the SYNC/CLOSE record): one pwrite of one slot, the other slot
 * keeps the previous seal in case this write tears. */
static int write_seal(struct logfs_writer *w, int closed, struct logfs_error *err)
{
    uint8_t slot[LOGFS_SEAL_SLOT_LEN];
    struct logfs_seal s;

    memset(&s, 0, sizeof s);
    s.seq = w->seal_seq + 1;
    s.file_id = w->file_id;
    s.rank = w->rank;
    s.nwriters = w->nwriters;
    s.length = w->mflushed;
    s.epochs = w->epoch;
    s.closed = closed;
    logfs_seal_encode(slot, &s);
    int e = logfs_pwrite_full("seal-write", w->sfd, slot, sizeof slot,
                              (uint64_t)logfs_seal_slot(s.seq) * LOGFS_SEAL_SLOT_LEN);
    if (e)
        return logfs_fail_errno(err, e, "cannot write seal", w->spath);
    w->seal_seq = s.seq;
    w->sealed = s.length;
    w->seal_unsynced = w->durable && fdatasync(w->sfd) < 0;
    if (w->seal_unsynced)
        return logfs_fail_errno(err, errno, "cannot fdatasync seal", w->spath);
    return LOGFS_OK;
}

/* Queue SYNC or CLOSE and make everything durable; on failure the record is
 * taken back out of the queue so a retry does not log the epoch twice. */
static int seal_epoch(struct logfs_writer *w, int type, struct logfs_error *err)
{
    size_t saved = w->mfill;
    int rc;

    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "sync or close inside a write call");
    if ((rc = logfs_writer_settle(w, err)))
        return rc;
    if (w->epoch >= INT32_MAX)
        return logfs_fail(err, LOGFS_ERANGE, 0, "too many epochs");
    if ((rc = logfs_writer_ensure_files(w, err)))
        return rc;
    /* A sync must not claim to cover logs nobody can find again. */
    struct stat st;
    if (fstat(w->mfd, &st) == 0 && st.st_nlink == 0)
        return logfs_fail(err, LOGFS_ENOENT, ENOENT, "metalog %s was removed", w->mpath);
    /* An epoch that queued no record since the last seal: the seal covers
     * every record already, so this sync owes only its SYNC record, queued
     * before the next record (pay_owed_syncs) and written with it.  (An
     * MPI_File_sync with nothing new was a metalog and a seal write.) */
    if (type == LOGFS_REC_SYNC && w->seal_seq > 0 && w->mfill == 0 && w->mflushed == w->sealed) {
        /* (the seal of a sync whose fdatasync of it failed, retried: made
         * durable now, or this one fails too) */
        if (w->seal_unsynced && fdatasync(w->sfd) < 0)
            return logfs_fail_errno(err, errno, "cannot fdatasync seal", w->spath);
        w->seal_unsynced = 0;
        if (!w->syncs_owed)
            w->owed_dlen = w->dl.len;
        w->syncs_owed++;
        w->epoch++;
        return LOGFS_OK;
    }
    if ((rc = logfs_datalog_sync(&w->dl, err)))
        return rc;
    /* (after settle: a failure takes back the SYNC alone, not the records
     * settle queued, which a retry must still write) */
    saved = w->mfill;
    uint64_t owed = w->syncs_owed;     /* (queued with it: owed again if it fails) */
    if ((rc = queue_epoch_end(w, type, err)) || (rc = logfs_writer_flush_meta(w, err))) {
        w->mfill = saved;
        w->syncs_owed = owed;
        return rc;
    }
    /* The record is in the file now, so the epoch is over even if the
     * fdatasync below fails (the caller then hears that it is not durable). */
    w->epoch++;
    if (w->durable && fdatasync(w->mfd) < 0)
        return logfs_fail_errno(err, errno, "cannot fdatasync metalog", w->mpath);
    return write_seal(w, type == LOGFS_REC_CLOSE, err);
}

int logfs_writer_sync(struct logfs_writer *w, struct logfs_error *err)
{
    return seal_epoch(w, LOGFS_REC_SYNC, err);
}

/* A log ended in memory, whose files are wanted after all (its replay
 * failed: the logs stay pending): its records, CLOSE included, reach the
 * files as a close would write them. */
static int write_ended(struct logfs_writer *w, struct logfs_error *err)
{
    int rc = logfs_writer_ensure_files(w, err);
    if (!rc)
        rc = logfs_datalog_sync(&w->dl, err);
    if (!rc)
        rc = logfs_writer_flush_meta(w, err);
    if (!rc && w->durable && fdatasync(w->mfd) < 0)
        rc = logfs_fail_errno(err, errno, "cannot fdatasync metalog", w->mpath);
    return rc ? rc : write_seal(w, 1, err);
}

int logfs_writer_close(struct logfs_writer *w, struct logfs_error *err)
{
    int rc = LOGFS_OK, rc2;
    if (w->ended)
        rc = write_ended(w, err);
    else if (w->in_call)
        rc = logfs_writer_end_write(w, err);
    if (!rc && !w->ended)
        rc = seal_epoch(w, LOGFS_REC_CLOSE, err);
    rc2 = logfs_datalog_close(&w->dl, rc ? NULL : err);
    if (!rc)
        rc = rc2;
    if (w->mfd >= 0 && close(w->mfd) < 0 && !rc)
        rc = logfs_fail_errno(err, errno, "cannot close metalog", w->mpath);
    w->mfd = -1;
    if (w->sfd >= 0 && close(w->sfd) < 0 && !rc)
        rc = logfs_fail_errno(err, errno, "cannot close seal", w->spath);
    w->sfd = -1;
    logfs_writer_abandon(w);
    return rc;
}

void logfs_writer_abandon(struct logfs_writer *w)
{
    if (!w)
        return;
    logfs_datalog_abandon(&w->dl);
    if (w->mfd >= 0)
        close(w->mfd);
    if (w->sfd >= 0)
        close(w->sfd);
    logfs_index_destroy(w->ix);
    free(w->mbuf);
    free(w->rbuf);
    free(w->mpath);
    free(w->spath);
    free(w->dir);
    free(w);
}

uint64_t logfs_writer_epoch(const struct logfs_writer *w)
{
    return w->epoch;
}

const struct logfs_summary *logfs_writer_summary(const struct logfs_writer *w)
{
    return &w->summary;
}

uint64_t logfs_writer_datalog_length(const struct logfs_writer *w)
{
    return w->dl.len;
}

int logfs_writer_is_pmem(const struct logfs_writer *w)
{
    return w->dl.is_pmem;
}

const char *logfs_writer_metalog_path(const struct logfs_writer *w)
{
    return w->mpath;
}

const char *logfs_writer_datalog_path(const struct logfs_writer *w)
{
    return w->dl.path;
}

const char *logfs_writer_seal_path(const struct logfs_writer *w)
{
    return w->spath;
}

uint64_t logfs_writer_sealed_length(const struct logfs_writer *w)
{
    return w->sealed;
}

uint64_t logfs_writer_metalog_length(const struct logfs_writer *w)
{
    return w->mflushed;
}
