/*
 * File-level control: size, preallocation, atomicity, sync, resize, locks.
 *
 * Atomic mode: bbfs keeps exact MPI semantics by not logging.  Turning it
 * on replays what is pending into the canonical file and writes go through
 * the lower driver (with its locks) until it is turned off again.  While
 * another handle of the file has a live session, the logs stay instead and
 * the handle runs under posix consistency (each write visible to every
 * process when it returns, reads look first): that handle's older synced
 * writes, replayed at its close, would otherwise land over newer ones that
 * went to the canonical file.
 *
 * set_size: growing the file past every byte any process has written (or
 * that is synced, or in the canonical file) discards nothing, so it is
 * logged as a SETSIZE record and the logs stay pending (HDF5 grows the
 * file to its allocation at every H5Fclose).  Anything else replays first
 * and then resizes the canonical file, so a truncation needs no special
 * case in the logs' readers (docs/hints.md, "set_size").
 */
#include "ad_bbfs.h"
#include "adioi.h"

/* Atomic mode on (see the top).  Collective. */
static void atomic_on(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SET_ATOMICITY";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int rank, live = 0, err = MPI_SUCCESS;

    if (bf->metalogs) {
        char map[256];
        MPI_Comm_rank(fd->comm, &rank);
        if (rank == 0)
            live = ADIOI_BBFS_Manifest_live_map(bf, map, sizeof(map)) >= 0;
        MPI_Bcast(&live, 1, MPI_INT, 0, fd->comm);
    }
    if (live) {
        /* what was written so far becomes visible now, as the replay
         * would make it (a sync under posix attaches, whatever the model
         * was), and every later write at once */
        int before = bf->hints.consistency;
        bf->hints.consistency = ADIOI_BBFS_CONSISTENCY_POSIX;
        ADIOI_BBFS_Log_sync(fd, &err);
        *error_code = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
        if (*error_code == MPI_SUCCESS)
            bf->atomic_logged = before + 1;
        else
            bf->hints.consistency = before;
        return;
    }
    bf->write_through = 1;
    ADIOI_BBFS_Log_flush_to_canonical(fd, error_code);
}

void ADIOI_BBFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    /* (MPI_File_set_atomicity passes its error code unset, and not every
     * branch below sets it before it is looked at) */
    *error_code = MPI_SUCCESS;
    if (flag == ADIO_FCNTL_GET_FSIZE && ADIOI_BBFS_Reads_logs(fd)) {
        fcntl_struct->fsize = ADIOI_BBFS_Logged_size(fd, error_code);
        return;
    }
    if (flag == ADIO_FCNTL_SET_ATOMICITY && bf->log_writes) {
        /* collective: every process of the file calls set_atomicity */
        if (fcntl_struct->atomicity && !bf->write_through && !bf->atomic_logged)
            atomic_on(fd, error_code);
        else if (!fcntl_struct->atomicity && bf->atomic_logged) {
            /* What atomic mode showed stays shown: its writes, visible
             * under posix as they returned, are synced before the user's
             * model (which shows synced writes only) is back. */
            int err;
            ADIOI_BBFS_Log_sync(fd, &err);
            *error_code = ADIOI_BBFS_Agree_error(fd->comm, "ADIOI_BBFS_SET_ATOMICITY", err);
                if (*error_code != MPI_SUCCESS)
                return;         /* (still atomic, on every process) */
            bf->hints.consistency = bf->atomic_logged - 1;
            bf->atomic_logged = 0;
            ADIOI_BBFS_NEWS(bf);        /* (a view built under posix) */
        } else if (!fcntl_struct->atomicity && bf->write_through) {
            bf->write_through = 0;
            ADIOI_BBFS_Log_open(fd, MPI_SUCCESS, error_code);
        }
        if (*error_code != MPI_SUCCESS)
            return;
    }
    /* Preallocation (rank 0 only) may rewrite old canonical bytes: logs
     * hold anything newer and are replayed over them later. */
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);

    ADIO_Fcntl(lo, flag, fcntl_struct, error_code);
    if (flag == ADIO_FCNTL_SET_ATOMICITY && *error_code == MPI_SUCCESS)
        fd->atomicity = lo->atomicity;
    ADIOI_BBFS_Lower_end(fd);
}

/* bbfs_replay on_sync: replay what every session of the file has synced,
 * this handle's and other handles' (live or pending), in one plan, and keep
 * all the logs: the canonical file is up to date for POSIX readers, and the
 * last close still replays everything in order (replay is idempotent).
 * Collective, as MPI_File_sync is: no process may skip it. */
static void sync_canonical(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SYNC_CANONICAL";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIOI_BBFS_Pending p;
    ADIO_File lo = bf->lower;
    int err = ADIOI_BBFS_Agree_error(fd->comm, myname, *error_code);

    memset(&p, 0, sizeof(p));
    if (err == MPI_SUCCESS && !lo->is_open)     /* deferred open (romio_no_indep_rw) */
        ADIO_ImmediateOpen(lo, &err);
    err = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
    if (err == MPI_SUCCESS)
        err = ADIOI_BBFS_Pending_list(fd, &p);
    if (err == MPI_SUCCESS)
        err = ADIOI_BBFS_Pending_replay(fd, lo, &p, 1, 1, NULL); /* (synced: in files) */
    err = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
    if (err == MPI_SUCCESS)
        ADIO_Flush(lo, &err);
    ADIOI_BBFS_Pending_free(&p);
    *error_code = err;
}

/* MPI_File_sync: end the epoch; durable logs if bbfs_durable.  A handle
 * without logs flushes the canonical file, and still looks for what other
 * handles synced before its next read.  bbfs_replay on_sync: the canonical
 * file gets everything synced, for programs that read it with POSIX calls
 * while it is open (PnetCDF's ncmpi_open reads the format signature so). */
void ADIOI_BBFS_Flush(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    double t0 = MPI_Wtime();

    *error_code = MPI_SUCCESS;
    if (!bf->metalogs)
        ADIO_Flush(bf->lower, error_code);
    if (*error_code == MPI_SUCCESS)
        ADIOI_BBFS_Log_sync(fd, error_code);
    if (bf->hints.replay == ADIOI_BBFS_REPLAY_ON_SYNC && bf->metalogs)
        sync_canonical(fd, error_code);
    bf->times.sync += MPI_Wtime() - t0;
}

/* A grow of the file as every process sees it: logged.  Collective. */
static int logged_grow(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_RESIZE";
    ADIO_Offset now, most;

    now = ADIOI_BBFS_Logged_size(fd, error_code);
    *error_code = ADIOI_BBFS_Agree_error(fd->comm, myname, *error_code);
    if (*error_code != MPI_SUCCESS)
        return 1;
    MPI_Allreduce(&now, &most, 1, ADIO_OFFSET, MPI_MAX, fd->comm);
    if (size < most)
        return 0;
    ADIOI_BBFS_Log_set_size(fd, size, error_code);
    *error_code = ADIOI_BBFS_Agree_error(fd->comm, myname, *error_code);
    return 1;
}

void ADIOI_BBFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    if (ADIOI_BBFS_Logging(fd) && logged_grow(fd, size, error_code))
        return;
    ADIOI_BBFS_Log_flush_to_canonical(fd, error_code);
    if (*error_code == MPI_SUCCESS)
        ADIO_Resize(ADIOI_BBFS_Private(fd)->lower, size, error_code);
}

int ADIOI_BBFS_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len)
{
    ADIO_File lo = ADIOI_BBFS_Private(fd)->lower;

    return (*(lo->fns->ADIOI_xxx_SetLock)) (lo, cmd, type, offset, whence, len);
}
