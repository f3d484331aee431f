/*
 * The logging session of one open bbfs file.
 *
 * At open every process creates its datalog + metalog in bbfs_logdir and
 * rank 0 writes the manifest beside the canonical file (through the lower
 * driver), so a crash at any later point leaves enough to recover every
 * synced byte.  A sync ends the epoch in every log; close ends the last one
 * and, unless replay is deferred, turns the logs into the canonical file and
 * removes them and the manifest.  Logs that an earlier job left pending are
 * replayed before anything else touches the canonical file.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/manifest.h"
#include "../../logfs/writer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

int ADIOI_BBFS_Err_logfs(const char *myname, int line, int code, const char *msg)
{
    int cls;

    switch (code) {
        case LOGFS_ENOENT:
        case LOGFS_ENOTDIR: cls = MPI_ERR_NO_SUCH_FILE; break;
        case LOGFS_EACCES: cls = MPI_ERR_ACCESS; break;
        case LOGFS_EROFS: cls = MPI_ERR_READ_ONLY; break;
        case LOGFS_ENOSPC: cls = MPI_ERR_NO_SPACE; break;
        case LOGFS_ENOMEM: cls = MPI_ERR_NO_MEM; break;
        case LOGFS_EEXIST: cls = MPI_ERR_FILE_EXISTS; break;
        default: cls = MPI_ERR_IO; break;
    }
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, cls, "**io",
                                "bbfs: %s", msg);
}

/* Every process returns an error of the same class when any one failed:
 * the lowest failing rank's class, with this process's own message if it
 * has one. */
static int agree_on_error(MPI_Comm comm, const char *myname, int err)
{
    int mine = INT_MAX, cls = MPI_SUCCESS, first;

    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &cls);
        MPI_Comm_rank(comm, &mine);
    }
    int pair[2] = { mine, cls }, all[2];
    /* MINLOC on (rank, class) picks the lowest failing rank's class. */
    MPI_Allreduce(pair, all, 1, MPI_2INT, MPI_MINLOC, comm);
    first = all[0];
    if (first == INT_MAX || err != MPI_SUCCESS)
        return err;
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, all[1],
                                "**io", "bbfs: failed on another process, %d (see its error)", first);
}

/* ---- the manifest, through the lower driver --------------------------- */

static ADIO_File side_open(ADIOI_BBFS_File * bf, const char *path, int amode, int *error_code)
{
    MPI_Comm self;
    ADIO_File f;

    MPI_Comm_dup(MPI_COMM_SELF, &self);
    f = ADIO_Open(MPI_COMM_SELF, self, path, bf->lower_fstype, bf->lower_ops, amode, 0,
                  MPI_BYTE, MPI_BYTE, MPI_INFO_NULL, 0600, error_code);
    if (*error_code != MPI_SUCCESS) {
        MPI_Comm_free(&self);
        return ADIO_FILE_NULL;
    }
    return f;
}

static void side_close(ADIO_File f)
{
    int err;
    MPI_File h = f;
    ADIO_Close(f, &err);
    MPIO_File_free(&h);
}

static int manifest_write(ADIOI_BBFS_File * bf, const char *text, size_t len)
{
    static char myname[] = "ADIOI_BBFS_MANIFEST_WRITE";
    char path[PATH_MAX];
    ADIO_Status st;
    int err;
    ADIO_File f;

    logfs_manifest_path(bf->canonical, path, sizeof(path));
    f = side_open(bf, path, ADIO_CREATE | ADIO_RDWR, &err);
    if (f == ADIO_FILE_NULL)
        return MPIO_Err_create_code(err, MPIR_ERR_RECOVERABLE, myname, __LINE__, MPI_ERR_IO,
                                    "**io", "bbfs: cannot write the manifest %s", path);
    ADIO_WriteContig(f, text, (int) len, MPI_BYTE, ADIO_EXPLICIT_OFFSET, 0, &st, &err);
    if (err == MPI_SUCCESS)
        ADIO_Resize(f, (ADIO_Offset) len, &err);
    if (err == MPI_SUCCESS && bf->hints.durable)
        ADIO_Flush(f, &err);    /* power loss: recovery starts from the manifest */
    side_close(f);
    return err;
}

/* Rank 0: write bf->manifest as it stands. */
static int manifest_publish(ADIOI_BBFS_File * bf)
{
    static char myname[] = "ADIOI_BBFS_MANIFEST_PUBLISH";
    char *text = NULL;
    size_t len;
    int rc = logfs_manifest_format(bf->manifest, &text, &len);
    int err = rc == LOGFS_OK ? manifest_write(bf, text, len)
        : ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, "cannot describe the logs in a manifest");

    free(text);
    return err;
}

/* Read the manifest if there is one.  *text = NULL when there is none. */
static int manifest_read(ADIOI_BBFS_File * bf, char **text, size_t *len)
{
    static char myname[] = "ADIOI_BBFS_MANIFEST_READ";
    char path[PATH_MAX];
    ADIO_Fcntl_t fc;
    ADIO_Status st;
    int err, cls;
    ADIO_File f;

    *text = NULL;
    *len = 0;
    logfs_manifest_path(bf->canonical, path, sizeof(path));
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return MPI_SUCCESS;     /* the common case, without an ADIO open */
    f = side_open(bf, path, ADIO_RDONLY, &err);
    if (f == ADIO_FILE_NULL) {
        MPI_Error_class(err, &cls);
        return cls == MPI_ERR_NO_SUCH_FILE ? MPI_SUCCESS : err;
    }
    ADIO_Fcntl(f, ADIO_FCNTL_GET_FSIZE, &fc, &err);
    if (err == MPI_SUCCESS && fc.fsize > (1 << 28))
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_IO, "**io", "bbfs: manifest %s is implausibly large",
                                   path);
    if (err == MPI_SUCCESS) {
        *text = ADIOI_Malloc(fc.fsize + 1);
        ADIO_ReadContig(f, *text, (int) fc.fsize, MPI_BYTE, ADIO_EXPLICIT_OFFSET, 0, &st, &err);
        (*text)[fc.fsize] = '\0';
        *len = fc.fsize;
    }
    side_close(f);
    return err;
}

static void manifest_remove(ADIOI_BBFS_File * bf)
{
    char path[PATH_MAX];
    int err;

    logfs_manifest_path(bf->canonical, path, sizeof(path));
    (*(bf->lower_ops->ADIOI_xxx_Delete)) (path, &err);
}

/* Remove the logs this host holds (files already gone are fine). */
static void remove_logs(struct logfs_manifest *m)
{
    char host[LOGFS_MANIFEST_HOST_MAX] = "";

    gethostname(host, sizeof(host) - 1);
    for (uint32_t r = 0; r < m->nwriters; r++)
        if (strcmp(m->w[r].host, host) == 0)
            logfs_log_remove(m->w[r].metalog, NULL);
}

int ADIOI_BBFS_Discard_pending(ADIOI_BBFS_File * bf)
{
    static char myname[] = "ADIOI_BBFS_DISCARD_PENDING";
    struct logfs_manifest m;
    struct logfs_error le;
    char *text;
    size_t len;
    int err = manifest_read(bf, &text, &len), rc;

    if (err != MPI_SUCCESS || !text)
        return err;
    rc = logfs_manifest_parse(text, len, &m, &le);
    ADIOI_BBFS_FREE(text);
    if (rc == LOGFS_OK) {
        remove_logs(&m);
        logfs_manifest_free(&m);
    }
    manifest_remove(bf);
    /* A damaged manifest is removed too (the file is being deleted), but
     * its logs cannot be found: say so. */
    return rc == LOGFS_OK ? MPI_SUCCESS : ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
}

/* What rank 0 found at open, in one broadcast: whether reading the
 * manifest failed (its MPI error class), the manifest text if there is
 * one, and the id for this open's logs.  Collectives are expensive when
 * processes share cores; an open makes as few as it can. */
static int bcast_open_state(MPI_Comm comm, const char *myname, int err, char **text,
                            size_t len, uint64_t * file_id, int *fstype)
{
    long long hdr[4] = { 0, -1, 0, 0 };
    int rank;

    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        if (err != MPI_SUCCESS)
            MPI_Error_class(err, (int *) &hdr[0]);
        hdr[1] = *text ? (long long) len : -1;
        hdr[2] = (long long) *file_id;
        hdr[3] = *fstype;
    }
    MPI_Bcast(hdr, 4, MPI_LONG_LONG, 0, comm);
    *file_id = (uint64_t) hdr[2];
    *fstype = (int) hdr[3];
    if (hdr[0] != 0)
        return rank == 0 ? err : MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                      myname, __LINE__, (int) hdr[0], "**io",
                                                      "bbfs: failed on process 0 (see its "
                                                      "error)");
    if (hdr[1] < 0)
        return MPI_SUCCESS;
    if (rank != 0) {
        *text = ADIOI_Malloc(hdr[1] + 1);
        (*text)[hdr[1]] = '\0';
    }
    MPI_Bcast(*text, (int) hdr[1], MPI_CHAR, 0, comm);
    return MPI_SUCCESS;
}

static uint64_t new_file_id(const char *path);

/* ---- replaying logs left by an earlier job ---------------------------- */

/* At open: rank 0 finds the lower driver (as ROMIO would detect it, unless
 * the name forces one), looks for pending logs and picks the id of this
 * open's logs; one broadcast tells everyone, and pending logs are replayed
 * with this job's processes. */
void ADIOI_BBFS_Open_prepare(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_OPEN_PREPARE";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_manifest m;
    struct logfs_error le;
    char *text = NULL;
    size_t len = 0;
    int rank, err = MPI_SUCCESS, rc;

    const char *lower_path = NULL;
    int explicit_lower = ADIOI_BBFS_Name_has_prefix(fd->filename);

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0 || explicit_lower)
        /* a forced driver resolves from the name alone: everyone can */
        ADIOI_BBFS_Resolve_lower(fd->filename, &bf->lower_fstype,
                                 &bf->lower_ops, &lower_path, &err);
    if (rank == 0 && err == MPI_SUCCESS) {
        bf->canonical = ADIOI_Strdup(lower_path);
        err = manifest_read(bf, &text, &len);
        bf->file_id = new_file_id(bf->canonical);
    }
    if (explicit_lower && err != MPI_SUCCESS) {
        /* every process has its own, equally detailed error */
        *error_code = err;
        return;
    }
    *error_code = bcast_open_state(fd->comm, myname, err, &text, len, &bf->file_id,
                                   &bf->lower_fstype);
    if (*error_code != MPI_SUCCESS)
        return;
    if (rank != 0) {
        if (!explicit_lower)
            ADIOI_BBFS_Resolve_as(bf->lower_fstype, fd->filename, &bf->lower_ops, &lower_path,
                                  error_code);
        if (*error_code != MPI_SUCCESS)
            return;
        bf->canonical = ADIOI_Strdup(lower_path);
    }
    if (!text)
        return;                 /* nothing pending */

    rc = logfs_manifest_parse(text, strlen(text), &m, &le);
    ADIOI_BBFS_FREE(text);
    if (rc != LOGFS_OK) {
        char msg[LOGFS_ERRMSG_MAX + 64];
        snprintf(msg, sizeof(msg), "pending logs of %s: %s", bf->canonical, le.msg);
        *error_code = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
        return;
    }
    /* Replay with this job's processes, however many wrote the logs. */
    MPI_Comm comm;
    int lower_err;
    MPI_Comm_dup(fd->comm, &comm);
    ADIO_File lo = ADIO_Open(fd->comm, comm, bf->canonical, bf->lower_fstype, bf->lower_ops,
                             ADIO_CREATE | ADIO_RDWR, 0, MPI_BYTE, MPI_BYTE, MPI_INFO_NULL,
                             ADIO_PERM_NULL, &lower_err);
    if (lower_err != MPI_SUCCESS) {
        MPI_Comm_free(&comm);
        *error_code = lower_err;
    } else {
        char **paths = ADIOI_Malloc(sizeof(char *) * m.nwriters);
        uint64_t *promised = ADIOI_Malloc(sizeof(uint64_t) * m.nwriters);
        for (uint32_t r = 0; r < m.nwriters; r++) {
            paths[r] = m.w[r].metalog;
            promised[r] = m.w[r].epochs;
        }
        *error_code = ADIOI_BBFS_Replay(fd->comm, lo, bf->canonical, paths, (int) m.nwriters,
                                        promised, &bf->hints);
        ADIOI_BBFS_FREE(paths);
        ADIOI_BBFS_FREE(promised);
        side_close(lo);
    }
    *error_code = agree_on_error(fd->comm, myname, *error_code);
    if (*error_code == MPI_SUCCESS) {
        /* Manifest first: logs without a manifest are garbage, a manifest
         * without its logs would fail every later open. */
        if (rank == 0)
            manifest_remove(bf);
        MPI_Barrier(fd->comm);
        remove_logs(&m);
    }
    logfs_manifest_free(&m);
}

/* ---- this job's logs -------------------------------------------------- */

/* Unique enough to tell the logs of two opens of one file apart. */
static uint64_t new_file_id(const char *path)
{
    struct timeval tv;
    uint64_t id = 1469598103934665603ULL;

    gettimeofday(&tv, NULL);
    for (const char *c = path; *c; c++)
        id = (id ^ (unsigned char) *c) * 1099511628211ULL;
    return id ^ ((uint64_t) tv.tv_sec << 20) ^ (uint64_t) tv.tv_usec ^ ((uint64_t) getpid() << 40);
}

static void free_metalogs(ADIOI_BBFS_File * bf)
{
    for (int r = 0; bf->metalogs && r < bf->nwriters; r++)
        ADIOI_BBFS_FREE(bf->metalogs[r]);
    ADIOI_BBFS_FREE(bf->metalogs);
    bf->metalogs = NULL;
    if (bf->manifest)
        logfs_manifest_free(bf->manifest);
    ADIOI_BBFS_FREE(bf->manifest);
}

/* Create this process's logs and the manifest naming everyone's. */
static void log_start(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_START";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_writer_opts o;
    struct logfs_error le;
    char name[PATH_MAX];
    const char *base = strrchr(bf->canonical, '/');
    int rank, rc, err = MPI_SUCCESS;

    MPI_Comm_rank(fd->comm, &rank);
    if (bf->file_id == 0) {     /* restarting after a mid-session replay */
        bf->file_id = new_file_id(bf->canonical);
        MPI_Bcast(&bf->file_id, 1, MPI_UINT64_T, 0, fd->comm);
    }
    snprintf(name, sizeof(name), "%s.%016llx.%d", base ? base + 1 : bf->canonical,
             (unsigned long long) bf->file_id, rank);

    logfs_writer_opts_init(&o);
    o.dir = bf->hints.logdir;
    o.name = name;
    o.file_id = bf->file_id;
    o.rank = (uint32_t) rank;
    o.nwriters = (uint32_t) bf->nwriters;
    o.buffer_size = (size_t) bf->hints.buffer_size;
    o.durable = bf->hints.durable;
    o.max_datalog_bytes = (uint64_t) bf->hints.log_quota;
    o.exclusive = 1;
    rc = logfs_writer_open(&o, &bf->writer, &le);
    if (rc != LOGFS_OK) {
        char msg[LOGFS_ERRMSG_MAX + 128];
        snprintf(msg, sizeof(msg), "cannot create logs in bbfs_logdir %s: %s (set bbfs_logdir "
                 "or BBFS_LOGDIR to a writable node-local directory)", bf->hints.logdir, le.msg);
        err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
        bf->writer = NULL;
    }

    /* One exchange: everyone's metalog path and host (readers need the
     * paths, the manifest both), and whether everyone got logs at all. */
    struct {
        int err_class;
        char path[PATH_MAX];
        char host[LOGFS_MANIFEST_HOST_MAX];
    } mine, *all = ADIOI_Malloc(sizeof(mine) * bf->nwriters);
    memset(&mine, 0, sizeof(mine));
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &mine.err_class);
    else
        snprintf(mine.path, sizeof(mine.path), "%s", logfs_writer_metalog_path(bf->writer));
    gethostname(mine.host, sizeof(mine.host) - 1);
    MPI_Allgather(&mine, (int) sizeof(mine), MPI_BYTE, all, (int) sizeof(mine), MPI_BYTE,
                  fd->comm);
    for (int r = 0; r < bf->nwriters && err == MPI_SUCCESS; r++)
        if (all[r].err_class != 0)
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       all[r].err_class, "**io", "bbfs: cannot create logs "
                                       "on process %d (see its error)", r);
    if (err != MPI_SUCCESS) {
        ADIOI_Free(all);
        *error_code = err;
        goto fn_fail;
    }
    bf->metalogs = ADIOI_Malloc(sizeof(char *) * bf->nwriters);
    for (int r = 0; r < bf->nwriters; r++)
        bf->metalogs[r] = ADIOI_Strdup(all[r].path);
    if (rank == 0) {
        struct logfs_manifest *m = bf->manifest = ADIOI_Calloc(1, sizeof(*m));
        rc = logfs_manifest_init(m, bf->file_id, (uint32_t) bf->nwriters);
        for (int r = 0; r < bf->nwriters && rc == LOGFS_OK; r++)
            rc = logfs_manifest_set(m, (uint32_t) r, all[r].host, all[r].path);
        err = rc == LOGFS_OK ? manifest_publish(bf)
            : ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, "cannot describe the logs in a "
                                   "manifest (hostname or log path with blanks?)");
    }
    ADIOI_BBFS_FREE(all);
    *error_code = agree_on_error(fd->comm, myname, err);
    if (*error_code == MPI_SUCCESS)
        return;

  fn_fail:
    /* Nothing of a failed start may outlive it: a manifest naming logs that
     * are removed below would fail every later open of the file. */
    if (bf->manifest)
        manifest_remove(bf);
    free_metalogs(bf);
    if (bf->writer) {
        char *ml = ADIOI_Strdup(logfs_writer_metalog_path(bf->writer));
        logfs_writer_abandon(bf->writer);
        logfs_log_remove(ml, NULL);
        ADIOI_BBFS_FREE(ml);
        bf->writer = NULL;
    }
}

/* A deferred close tells the manifest how many epochs each writer sealed,
 * so that a replay notices a log that lost some (ADIOI_BBFS_Replay). */
static int manifest_record_epochs(ADIO_File fd, uint64_t sealed)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    uint64_t *all = NULL;
    int rank, err = MPI_SUCCESS;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0)
        all = ADIOI_Malloc(sizeof(uint64_t) * bf->nwriters);
    MPI_Gather(&sealed, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, fd->comm);
    if (rank == 0) {
        for (int r = 0; r < bf->nwriters; r++)
            bf->manifest->w[r].epochs = all[r];
        err = manifest_publish(bf);
        ADIOI_Free(all);
    }
    return err;
}


/* End the logs; replay them into the canonical file if asked, and then
 * remove them and the manifest. */
static void log_finish(ADIO_File fd, int replay, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_FINISH";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_error le;
    char *ml = NULL;
    int rank, err = MPI_SUCCESS, rc;

    MPI_Comm_rank(fd->comm, &rank);
    ADIOI_BBFS_Remote_reset(bf);
    bf->own_end = 0;
    bf->remote_end = 0;
    uint64_t sealed = 0;        /* 0: promise nothing (no log, or it failed) */
    if (bf->writer) {
        ml = ADIOI_Strdup(logfs_writer_metalog_path(bf->writer));
        sealed = logfs_writer_epoch(bf->writer) + 1;
        rc = logfs_writer_close(bf->writer, &le);
        bf->writer = NULL;
        if (rc != LOGFS_OK) {
            err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
            sealed = 0;
        }
    }
    /* A replay needs every log closed (and every process to know it); a
     * deferred close only reports its own outcome, and rank 0's manifest. */
    if (!replay) {
        int m_err = manifest_record_epochs(fd, sealed);
        if (err == MPI_SUCCESS)
            err = m_err;
    }
    *error_code = replay ? agree_on_error(fd->comm, myname, err) : err;
    if (*error_code == MPI_SUCCESS && replay) {
        /* The handle's own lower file is open for writing: replay through
         * it (a second open would cost a round of collectives). */
        ADIO_File lo = bf->lower;
        if (!lo->is_open)       /* deferred open (romio_no_indep_rw) */
            ADIO_ImmediateOpen(lo, &err);
        if (err == MPI_SUCCESS)
            err = ADIOI_BBFS_Replay(fd->comm, lo, bf->canonical, bf->metalogs, bf->nwriters,
                                    NULL, &bf->hints);
        *error_code = agree_on_error(fd->comm, myname, err);
        if (*error_code == MPI_SUCCESS) {
            if (rank == 0)
                manifest_remove(bf);
            MPI_Barrier(fd->comm);
            if (ml)
                logfs_log_remove(ml, NULL);
        }
    }
    ADIOI_BBFS_FREE(ml);
    free_metalogs(bf);
    bf->file_id = 0;
}

void ADIOI_BBFS_Log_open(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    *error_code = MPI_SUCCESS;
    bf->remote_stale = 1;
    if (bf->log_writes)
        log_start(fd, error_code);
}

void ADIOI_BBFS_Log_sync(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_SYNC";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_error le;
    int rc;

    *error_code = MPI_SUCCESS;
    if (bf->writer && (rc = logfs_writer_sync(bf->writer, &le)) != LOGFS_OK)
        *error_code = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
    /* Others may have synced new data: look again before the next read. */
    bf->remote_stale = 1;
}

/* Every process enters the same collective calls in the same order, so
 * their count orders the writes around each call on every process: HDF5
 * writes a chunk's fill values in one write_at_all and its data in the
 * next, and ROMIO over a POSIX file applies them in that order. */
void ADIOI_BBFS_Log_collective(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    bf->collectives++;
    if (bf->writer)
        /* cannot fail: outside a write call, and the count only grows */
        logfs_writer_order(bf->writer, bf->collectives, NULL);
}

void ADIOI_BBFS_Log_close(ADIO_File fd, int replay, int *error_code)
{
    *error_code = MPI_SUCCESS;
    if (ADIOI_BBFS_Private(fd)->metalogs)
        log_finish(fd, replay, error_code);
}

void ADIOI_BBFS_Log_flush_to_canonical(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    *error_code = MPI_SUCCESS;
    if (!bf->metalogs)
        return;
    log_finish(fd, 1, error_code);
    if (*error_code == MPI_SUCCESS && bf->log_writes && !bf->write_through)
        log_start(fd, error_code);
}
