/*
 * The logging session of one open bbfs file.
 *
 * At open every process creates its datalog + metalog in bbfs_logdir and
 * process 0 publishes the session's manifest beside the canonical file
 * (ad_bbfs_manifest.c), so a crash at any later point leaves enough to
 * recover every synced byte.  A sync ends the epoch in every log; close ends
 * the last one and, unless replay is deferred, turns the logs into the
 * canonical file and removes them and the manifest.  Logs that an earlier
 * session left pending were replayed at open (ad_bbfs_pending.c).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/fault.h"
#include "../../logfs/manifest.h"
#include "../../logfs/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- this job's logs -------------------------------------------------- */

static void free_metalogs(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_View_logs_close(bf);
    for (int r = 0; bf->metalogs && r < bf->nwriters; r++) {
        ADIOI_BBFS_FREE(bf->metalogs[r]);
        if (bf->servers)
            ADIOI_BBFS_FREE(bf->servers[r]);
    }
    ADIOI_BBFS_FREE(bf->metalogs);
    ADIOI_BBFS_FREE(bf->servers);
    bf->metalogs = NULL;
    bf->servers = NULL;
    if (bf->manifest)
        logfs_manifest_free(bf->manifest);
    ADIOI_BBFS_FREE(bf->manifest);
}

/* A writer as the others see it: pointers into gather_ids' packed bytes. */
struct writer_id {
    int err_class;              /* its open failed, or its logs (0: neither) */
    uint64_t incarnation;       /* process 0's: its map's incarnation (0: none) */
    uint64_t clock;             /* process 0's: the map's clock it heard (0: none) */
    const char *path, *host, *server;
};

/* Bytes of one process's slot in gather_ids' first exchange: a fits flag,
 * its length and, when they fit, its strings.  Usual ones (a log path, a
 * host and a server address) take 60-150 bytes; 256 x 32k processes is 8
 * MiB for the moment of the exchange. */
#define ID_SLOT 256

/* Every process's metalog path, host name and node server (err: this
 * process's failure to create its logs), as NUL-terminated strings; *all
 * points into *packed.  One allgather of fixed slots when every process's
 * strings fit in one (each collective of an open costs 0.1-0.3 ms where
 * processes share cores), else a second, of exactly the bytes each has.
 * Collective; @return an error every process returns alike. */
static int gather_ids(ADIO_File fd, int err, struct writer_id **all, char **packed)
{
    static char myname[] = "ADIOI_BBFS_GATHER_IDS";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int n = bf->nwriters, err_class = 0;
    const char *host = ADIOI_BBFS_Host_name();
    char cls[64];

    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &err_class);
    snprintf(cls, sizeof(cls), "%d %llu %llu", err_class,
             (unsigned long long) ADIOI_BBFS_Server_incarnation(bf),
             (unsigned long long) ADIOI_BBFS_Server_open_clock(bf));
    const char *path = err == MPI_SUCCESS ? logfs_writer_metalog_path(bf->writer) : "";
    const char *server = ADIOI_BBFS_Server_node(bf);
    const char *part[4] = { cls, path, host, server };
    int len = 0;
    for (int i = 0; i < 4; i++)
        len += (int) strlen(part[i]) + 1;
    char *flat = ADIOI_Malloc((size_t) len);
    for (int i = 0, at = 0; i < 4; i++) {
        memcpy(flat + at, part[i], strlen(part[i]) + 1);
        at += (int) strlen(part[i]) + 1;
    }

    /* slot: [0] fits, [1..4] length, then the strings if they fit */
    char *slots = ADIOI_Malloc((size_t) n * ID_SLOT), mine[ID_SLOT];
    const int head = 1 + (int) sizeof(int);
    int fits = len <= ID_SLOT - head;
    memset(mine, 0, sizeof(mine));
    mine[0] = (char) fits;
    memcpy(mine + 1, &len, sizeof(int));
    if (fits)
        memcpy(mine + head, flat, (size_t) len);
    MPI_Allgather(mine, ID_SLOT, MPI_BYTE, slots, ID_SLOT, MPI_BYTE, fd->comm);

    int *counts = ADIOI_Malloc(sizeof(int) * n), *displs = ADIOI_Malloc(sizeof(int) * n);
    int all_fit = 1;
    long long total = 0;
    for (int r = 0; r < n; r++) {
        all_fit &= slots[(size_t) r * ID_SLOT] != 0;
        memcpy(&counts[r], slots + (size_t) r * ID_SLOT + 1, sizeof(int));
        displs[r] = (int) total;
        total += counts[r];
    }
    if (total > INT_MAX) {      /* (alike everywhere) */
        ADIOI_Free(flat);
        ADIOI_Free(slots);
        ADIOI_Free(counts);
        ADIOI_Free(displs);
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    MPI_ERR_IO, "**io", "bbfs: the processes' log names "
                                    "exceed 2 GiB; use a shorter bbfs_logdir");
    }
    *packed = ADIOI_Malloc((size_t) total);
    if (all_fit) {
        for (int r = 0; r < n; r++)
            memcpy(*packed + displs[r], slots + (size_t) r * ID_SLOT + head, (size_t) counts[r]);
    } else {
        MPI_Allgatherv(flat, len, MPI_BYTE, *packed, counts, displs, MPI_BYTE, fd->comm);
    }
    ADIOI_Free(flat);
    ADIOI_Free(slots);
    *all = ADIOI_Malloc(sizeof(**all) * n);
    for (int r = 0; r < n; r++) {
        const char *p = *packed + displs[r];
        char *after;
        (*all)[r].err_class = (int) strtol(p, &after, 10);
        (*all)[r].incarnation = strtoull(after, &after, 10);
        (*all)[r].clock = strtoull(after, NULL, 10);
        p += strlen(p) + 1;
        (*all)[r].path = p;
        p += strlen(p) + 1;
        (*all)[r].host = p;
        p += strlen(p) + 1;
        (*all)[r].server = p;
    }
    ADIOI_Free(counts);
    ADIOI_Free(displs);
    return MPI_SUCCESS;
}

/* The name of writer rank's logs in bbfs_logdir (logfs adds the suffixes):
 * the canonical file's base name, the session's file id, the rank. */
static void log_name(const ADIOI_BBFS_File * bf, const char *base, int rank, char *out,
                     size_t len)
{
    char tail[32], *end = ADIOI_BBFS_Put_int(ADIOI_BBFS_Put_hex16(tail, bf->file_id), rank);
    size_t b = strlen(base), t = (size_t) (end - tail);

    if (b + t >= len) {         /* (too long: cut as snprintf cuts; the open reports it) */
        snprintf(out, len, "%s%.*s", base, (int) t, tail);
        return;
    }
    memcpy(out, base, b);
    memcpy(out + b, tail, t);
    out[b + t] = '\0';
}

/* gather_ids' answer where every process's host and log directory are
 * this one's and none has a server (ids_alike): each writer's metalog is
 * named as its own writer names it.  No collective; errors are agreed
 * after.  @return MPI_SUCCESS or an out-of-memory error. */
static int same_ids(ADIOI_BBFS_File * bf, const char *base, struct writer_id **all,
                    char **packed)
{
    static char myname[] = "ADIOI_BBFS_SAME_IDS";
    int n = bf->nwriters;
    const char *host = ADIOI_BBFS_Host_name();
    char name[PATH_MAX];
    char **paths = ADIOI_Malloc(sizeof(char *) * n);
    size_t total = 0, at = 0;

    for (int r = 0; r < n; r++) {
        log_name(bf, base, r, name, sizeof(name));
        paths[r] = logfs_writer_metalog_path_of(bf->hints.logdir, name);
        total += (paths[r] ? strlen(paths[r]) : 0) + 1;
    }
    total += strlen(host) + 2;
    *packed = ADIOI_Malloc(total);
    *all = ADIOI_Malloc(sizeof(**all) * n);
    char *h = *packed;          /* the host, then "" (no server), then the paths */
    strcpy(h, host);
    at = strlen(host) + 1;
    (*packed)[at++] = '\0';
    int err = MPI_SUCCESS;
    for (int r = 0; r < n; r++) {
        (*all)[r].err_class = 0;
        (*all)[r].incarnation = 0;
        (*all)[r].clock = 0;
        (*all)[r].host = h;
        (*all)[r].server = h + strlen(host);
        (*all)[r].path = *packed + at;
        if (!paths[r] && err == MPI_SUCCESS)
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_NO_MEM, "**nomem", "bbfs: no memory for the "
                                       "names of the logs");
        strcpy(*packed + at, paths[r] ? paths[r] : "");
        at += strlen(*packed + at) + 1;
        free(paths[r]);
    }
    ADIOI_Free(paths);
    return err;
}

/* Create this process's logs and the manifest naming everyone's; @p err_in
 * is this process's failure so far (then it makes no logs, and all fail). */
static void log_start(ADIO_File fd, int err_in, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_START";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_writer_opts o;
    struct logfs_error le;
    char name[PATH_MAX];
    const char *slash = strrchr(bf->canonical, '/'), *base = slash ? slash + 1 : bf->canonical;
    int rank, rc, err = MPI_SUCCESS, adopted = 0;
    char other_map[256] = "";
    /* (a restart keeps its map: handles opened since follow it) */
    int restart = bf->file_id == 0;

    MPI_Comm_rank(fd->comm, &rank);
    int may_be_private = ADIOI_BBFS_Private_join(bf, &err);
    if (err_in != MPI_SUCCESS)
        err = err_in;
    bf->unpublished = may_be_private && err == MPI_SUCCESS;
    /* (one node, one log directory, no server: every name is known here,
     * and the errors are agreed below, after process 0 published) */
    int alike = bf->ids_alike && !ADIOI_BBFS_Server_connected(bf);
    /* Several processes so: a process's files wait for a byte that must
     * reach them (docs/architecture.md, lazy sessions), and an open, some
     * writes and a close that replays each log from memory make none. */
    bf->lazy = alike && bf->nwriters > 1;
    if (restart) {              /* restarting after a mid-session replay */
        bf->file_id = ADIOI_BBFS_New_file_id(bf->canonical);
        MPI_Bcast(&bf->file_id, 1, MPI_UINT64_T, 0, fd->comm);
    }
    log_name(bf, base, rank, name, sizeof(name));

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
    o.process = ADIOI_BBFS_Process_id();
    o.carry_calls = 1;          /* separate calls continuing a stride: one group */
    /* (this open's server facts looked at the directory: stat, access) */
    o.dir_checked = !restart && bf->hint_check[3 + ADIOI_BBFS_FACT_LOGDIR_USABLE];
    ADIOI_BBFS_Private_writer_opts(bf, &o);
    rc = err == MPI_SUCCESS ? logfs_writer_open(&o, &bf->writer, &le) : LOGFS_OK;
    if (rc == LOGFS_OK)
        bf->stamp_due = 1;      /* (at the first write: ad_bbfs_order.c) */
    if (rc != LOGFS_OK && err == MPI_SUCCESS) {
        char msg[LOGFS_ERRMSG_MAX + 128];
        snprintf(msg, sizeof(msg), "cannot create logs in bbfs_logdir %s: %s (set bbfs_logdir "
                 "or BBFS_LOGDIR to a writable node-local directory)", bf->hints.logdir, le.msg);
        err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
        bf->writer = NULL;
    }

    /* One exchange: everyone's metalog path, host and node server (readers
     * need the paths, the manifest all), and whether everyone got logs.
     * As strings in small slots: records of fixed fields (a path of
     * PATH_MAX) would be 4.6 KB each, 150 MB in every process at 32k. */
    struct writer_id *all = NULL;
    char *packed = NULL;
    int g_err = alike ? same_ids(bf, base, &all, &packed)
        : gather_ids(fd, err, &all, &packed);
    if (err == MPI_SUCCESS)
        err = g_err;            /* (this process's own failure says more) */
    for (int r = 0; r < bf->nwriters && err == MPI_SUCCESS; r++)
        if (all[r].err_class != 0)
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       all[r].err_class, "**io", "bbfs: the open failed on "
                                       "process %d (see its error)", r);
    if (err == MPI_SUCCESS && !alike)
        ADIOI_BBFS_Server_agreed(bf, all[0].incarnation, all[0].clock);
    if (err != MPI_SUCCESS) {
        ADIOI_BBFS_FREE(all);
        ADIOI_BBFS_FREE(packed);
        if (alike)              /* (the others learn it in the agreement they make below) */
            err = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
        *error_code = err;
        goto fn_fail;
    }
    bf->metalogs = ADIOI_Malloc(sizeof(char *) * bf->nwriters);
    bf->servers = ADIOI_Malloc(sizeof(char *) * bf->nwriters);
    for (int r = 0; r < bf->nwriters; r++) {
        bf->metalogs[r] = ADIOI_Strdup(all[r].path);
        bf->servers[r] = ADIOI_Strdup(all[r].server);
    }
    /* (a lazy session's manifest is made by whichever process first makes
     * log files: every process can write it) */
    bf->manifest_lazy = bf->lazy;
    if (rank == 0 || bf->lazy) {
        struct logfs_manifest *m = bf->manifest = ADIOI_Calloc(1, sizeof(*m));
        rc = logfs_manifest_init(m, bf->file_id, (uint32_t) bf->nwriters);
        m->lazy = bf->lazy;
        for (int r = 0; r < bf->nwriters && rc == LOGFS_OK; r++)
            if ((rc = logfs_manifest_set(m, (uint32_t) r, all[r].host, all[r].path)) == LOGFS_OK)
                rc = logfs_manifest_set_server(m, (uint32_t) r, all[r].server);
        /* The map: other handles opened later use the one this manifest
         * names (ADIOI_BBFS_Server_open).  Of two handles opened at once,
         * each chose before the other published: looking for another
         * live session's map and publishing are one step under the
         * sessions' lock, so the second to publish adopts the first's. */
        int lk = -1;
        if (rc == LOGFS_OK && ADIOI_BBFS_Server_connected(bf)) {
            if (!restart) {
                lk = ADIOI_BBFS_Manifest_lock_sessions(bf);
                adopted = ADIOI_BBFS_Server_other_live_map(bf, other_map, sizeof(other_map));
            }
            rc = logfs_manifest_set_map(m, adopted ? other_map : ADIOI_BBFS_Server_map(bf));
        }
        if (rc != LOGFS_OK)
            err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, "cannot name the logs in a manifest: "
                                       "bbfs_logdir (BBFS_LOGDIR) must be an absolute path with "
                                       "no . or .. parts, and host names may not hold blanks");
        /* (a private or lazy session's when its logs get files:
         * ad_bbfs_private.c) */
        else if (!bf->unpublished && !bf->manifest_lazy)
            err = ADIOI_BBFS_Manifest_publish(bf);
        logfs_sessions_unlock(lk);
    }
    ADIOI_BBFS_FREE(all);
    ADIOI_BBFS_FREE(packed);
    /* (only process 0 can have failed since the gathering; without it,
     * any process: alike, there is no server, and this agrees errors) */
    *error_code = ADIOI_BBFS_Server_agree_map(fd, myname, err, adopted ? other_map : NULL);
    if (*error_code == MPI_SUCCESS)
        return;

  fn_fail:
    /* Nothing of a failed start may outlive it: a manifest naming logs that
     * are removed below would fail every later open of the file. */
    ADIOI_BBFS_Manifest_remove(bf);
    free_metalogs(bf);
    if (bf->writer) {
        char *ml = ADIOI_Strdup(logfs_writer_metalog_path(bf->writer));
        logfs_writer_abandon(bf->writer);
        logfs_log_remove(ml, NULL);
        ADIOI_BBFS_FREE(ml);
        bf->writer = NULL;
    }
}

/* A lazy session's log that ended in memory for a replay at close, when
 * that replay is not made or failed (err: why): the log goes to its
 * files, closed, and stays pending with the rest of the session.
 * @return err, or why the log could not be kept. */
static int write_out(ADIOI_BBFS_File * bf, int err)
{
    static char myname[] = "ADIOI_BBFS_WRITE_OUT";
    struct logfs_error le;

    if (!bf->writer)
        return err;
    int rc = logfs_writer_close(bf->writer, &le);
    bf->writer = NULL;
    if (rc == LOGFS_OK)
        return err;
    fprintf(stderr, "bbfs: %s: the close did not replay the logs, and this process's could not "
            "be kept either (%s): its writes since the open are lost\n", bf->canonical, le.msg);
    return err != MPI_SUCCESS ? err : ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, le.msg);
}

/* How log_finish ends the logs. */
enum finish {
    FINISH_DEFER,               /* leave them pending */
    FINISH_REPLAY_IF_LAST,      /* replay, unless another handle of the file is open */
    FINISH_REPLAY_NOW           /* replay whatever else is open (atomic mode, truncation) */
};

/* End the logs; replay them into the canonical file if asked, with every
 * pending session of the file in one plan, and then remove them and the
 * manifests.  While another handle of the file is open, a close leaves its
 * logs pending: that handle's close replays them with its own, in the
 * order the writes were made (PnetCDF writes through two handles). */
static void log_finish(ADIO_File fd, enum finish how, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_FINISH";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIOI_BBFS_Pending p;
    struct logfs_error le;
    int rank, err = MPI_SUCCESS, rc, replay = how != FINISH_DEFER;

    memset(&p, 0, sizeof(p));
    MPI_Comm_rank(fd->comm, &rank);
    logfs_fault("close-begin"); /* (pause: this process late, the others ahead) */
    ADIOI_BBFS_Remote_reset(bf);
    bf->own_end = 0;
    bf->remote_end = 0;
    uint64_t sealed = 0;        /* 0: promise nothing (no log, or it failed) */
    /* A private session that needs no file replays from memory. */
    if (replay && ADIOI_BBFS_Private_close(fd, how == FINISH_REPLAY_IF_LAST, error_code)) {
        free_metalogs(bf);
        bf->file_id = 0;
        return;
    }
    /* Close is a sync point: with a server, what this process wrote since
     * its last attach becomes visible where the logs stay pending (under
     * session consistency this is the only attach).  A close that replays
     * makes those writes canonical instead, and attaches them only if it
     * leaves its logs to another handle's close after all: it knows that
     * in the take, with its writer closed (ADIOI_BBFS_Pending_take).  (A
     * round trip to the map at every close, across nodes mostly.)  A
     * replay in the middle of a session (atomic mode, a truncation)
     * attaches them first: other handles stay open, and the map learns
     * from the attach that these bytes, in the file now, are newer than
     * what those handles synced (mpiio-tests/t_session_flush). */
    if (bf->writer && how != FINISH_REPLAY_IF_LAST)
        ADIOI_BBFS_Server_attach(fd, &err);
    memset(&bf->own, 0, sizeof(bf->own));
    /* A lazy session's writer that never needed its files ends in memory,
     * and the replay reads it from there (write_out if it cannot). */
    ADIOI_BBFS_Memlog mem = { NULL, rank, NULL, 0 };
    if (bf->writer) {
        bf->own = *logfs_writer_summary(bf->writer);
        /* (a log that rules out replaying each alone goes to its files
         * now: the replay of all reads them in place, and the take's
         * collective below is then the wait for everyone's) */
        if (replay && bf->lazy && !logfs_writer_has_files(bf->writer)
            && ADIOI_BBFS_Log_may_replay_alone(&bf->own)
            && logfs_writer_end_in_memory(bf->writer, &mem.metalog, &mem.len, &le) == LOGFS_OK) {
            mem.writer = bf->writer;
            sealed = logfs_writer_epoch(bf->writer);    /* (the CLOSE's too) */
        } else {
            sealed = logfs_writer_epoch(bf->writer) + 1;
            rc = logfs_writer_close(bf->writer, &le);
            bf->writer = NULL;
            if (rc != LOGFS_OK) {
                if (err == MPI_SUCCESS)
                    err = ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, le.msg);
                sealed = 0;
            }
        }
    }
    logfs_fault("close-logs-closed");   /* (kill only) sealed, not yet replayed */
    /* A replay needs every log closed (and every process to know it); a
     * deferred close only reports its own outcome, and rank 0's manifest. */
    if (replay) {
        err = ADIOI_BBFS_Pending_take(fd, sealed, err, how == FINISH_REPLAY_NOW,
                                      how == FINISH_REPLAY_IF_LAST, &p);
        /* every process has the same answer (one collective), but for
         * process 0's own when it left the session pending */
        if (p.deferred || err != MPI_SUCCESS) {
            replay = 0;         /* (deferred: process 0 left the session pending already) */
            err = write_out(bf, err);
        } else if (!p.own_only && p.nfiles < bf->nwriters) {
            /* The replay of all logs together reads each writer's datalog
             * where it is, in place (one node, one directory): the logs
             * still in memory (each could have been replayed alone, but
             * not all: they overlap) go to their files first, and everyone
             * waits for all of them.  (An exchange of the in-memory bytes
             * over MPI made 5 collectives more for coll8.) */
            err = write_out(bf, err);
            mem.writer = NULL;
            err = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
            p.nfiles = bf->nwriters;
        }
        if (!p.deferred && err != MPI_SUCCESS && rank == 0)
            ADIOI_BBFS_Manifest_leave_pending(bf);
        *error_code = err;
    } else {
        ADIOI_BBFS_Manifest_epochs(fd, sealed);
        if (rank == 0) {
            int m_err = ADIOI_BBFS_Manifest_leave_pending(bf);
            if (err == MPI_SUCCESS)
                err = m_err;
            /* (the gather above: every log is sealed, or its writer failed
             * and the drain reports what it lacks) */
            if (m_err == MPI_SUCCESS && bf->hints.replay == ADIOI_BBFS_REPLAY_BACKGROUND)
                ADIOI_BBFS_Drain_hand_over(bf);
        }
        *error_code = err;
    }
    if (*error_code == MPI_SUCCESS && replay) {
        /* The handle's own lower file is open for writing: replay through
         * it (a second open would cost a round of collectives). */
        ADIO_File lo = bf->lower;
        if (lo->hints->deferred_open) {     /* (romio_no_indep_rw: alike everywhere) */
            if (!lo->is_open)
                ADIO_ImmediateOpen(lo, &err);
            err = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
        }
        /* A close keeps the logs until the lower file closed cleanly (a
         * network file system may report a failed write-back only there);
         * a replay in the middle of a session leaves it open. */
        int closing = how == FINISH_REPLAY_IF_LAST;
        if (err == MPI_SUCCESS)         /* (closing: agreed with the lower close) */
            err = ADIOI_BBFS_Pending_replay(fd, lo, &p, 1, closing, mem.writer ? &mem : NULL);
        if (closing) {
            err = ADIOI_BBFS_Replayed_close(fd, lo, myname, err);
            bf->lower_closed = 1;
        }
        /* (a failed replay keeps the logs, as files: the next open's) */
        if (err != MPI_SUCCESS)
            err = write_out(bf, err);
        /* (the removal tells the map first: ad_bbfs_pending_remove.c) */
        if (closing && err == MPI_SUCCESS)
            err = ADIOI_BBFS_Pending_remove(fd, &p, 1);
        *error_code = err;
    }
    if (bf->writer)             /* (replayed from memory: nothing to keep) */
        logfs_writer_abandon(bf->writer);
    bf->writer = NULL;
    ADIOI_BBFS_Server_notes_end(bf);
    /* A failed replay leaves the logs pending for the next open. */
    ADIOI_BBFS_Pending_free(&p);
    ADIOI_BBFS_Manifest_release(bf);
    free_metalogs(bf);
    bf->file_id = 0;
}

void ADIOI_BBFS_Log_open(ADIO_File fd, int err, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    *error_code = err;
    ADIOI_BBFS_NEWS(bf);
    if (bf->log_writes)
        log_start(fd, err, error_code);
}

void ADIOI_BBFS_Log_sync(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_SYNC";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_error le;
    int rc;

    *error_code = MPI_SUCCESS;
    if (bf->writer && (rc = logfs_writer_sync(bf->writer, &le)) != LOGFS_OK)
        *error_code = ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, le.msg);
    else if (bf->writer) {
        logfs_fault("sync-sealed");     /* (kill only) sealed here, maybe not elsewhere */
        /* the next epoch's writes come after this sync, on every handle's
         * clock: after a sync, barrier and sync another handle's come later
         * (stamped at the first write, after the clock heard the map's
         * server, whose clock is past every attached write's) */
        bf->stamp_due = 1;
        bf->stamp_later = 0;
        ADIOI_BBFS_Server_clock_stale(bf);
    }
    /* With a server, this epoch's writes become visible to others: attach
     * them (mpiio, commit, posix; session attaches only at close). */
    if (*error_code == MPI_SUCCESS && bf->hints.consistency != ADIOI_BBFS_CONSISTENCY_SESSION)
        ADIOI_BBFS_Server_attach(fd, error_code);
    /* Others may have synced new data, maybe through a handle opened since:
     * look again before the next read (not under session, where a sync
     * shows nothing new). */
    if (bf->hints.consistency != ADIOI_BBFS_CONSISTENCY_SESSION) {
        ADIOI_BBFS_NEWS(bf);
        bf->others_live = 1;
    }
}

/* MPI_File_set_size that grows the file (ADIOI_BBFS_Resize decides). */
void ADIOI_BBFS_Log_set_size(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_SET_SIZE";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_error le;
    int rc;

    ADIOI_BBFS_Order_switch(bf);
    rc = logfs_writer_set_size(bf->writer, (uint64_t) size, &le);

    if (rc == LOGFS_OK)
        ADIOI_BBFS_Server_note_size(bf, (uint64_t) size);
    if (rc == LOGFS_OK && bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_POSIX)
        rc = logfs_writer_flush(bf->writer, &le);
    *error_code = rc == LOGFS_OK ? MPI_SUCCESS : ADIOI_BBFS_Err_logfs(myname, __LINE__, rc,
                                                                      le.msg);
    if (*error_code == MPI_SUCCESS && bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_POSIX)
        ADIOI_BBFS_Server_attach(fd, error_code);       /* (with a server) */
    if (rc == LOGFS_OK && size > bf->own_end)
        bf->own_end = size;
    bf->own_unflushed = 1;
    ADIOI_BBFS_news++;
    ADIOI_BBFS_Sync_wrote(bf);
}

void ADIOI_BBFS_Log_close(ADIO_File fd, int replay, int *error_code)
{
    *error_code = MPI_SUCCESS;
    if (ADIOI_BBFS_Private(fd)->metalogs)
        log_finish(fd, replay ? FINISH_REPLAY_IF_LAST : FINISH_DEFER, error_code);
}

void ADIOI_BBFS_Log_flush_to_canonical(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    *error_code = MPI_SUCCESS;
    if (!bf->metalogs)
        return;
    log_finish(fd, FINISH_REPLAY_NOW, error_code);
    /* Process 0 removes the replayed sessions' manifests after the
     * replay's last collective, and a session replayed from memory makes
     * no collective at all to tell its map: nobody reads before process 0
     * is done (a read would ask the map for logs that are gone).
     * set_atomicity and a shrinking set_size are rare calls. */
    MPI_Barrier(fd->comm);
    if (*error_code == MPI_SUCCESS && bf->log_writes && !bf->write_through)
        log_start(fd, MPI_SUCCESS, error_code);
}
