/*
 * Opening a bbfs file: resolve the lower driver from the rest of the name
 * ("bbfs:/p" detects it as ROMIO would, "bbfs:ufs:/p" forces it), open the
 * canonical file through that driver as a full ADIO file of its own, and
 * keep it as the lower half of the stack.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "adio_extern.h"
#include "../../logfs/sessions.h"
#include <string.h>

void ADIOI_BBFS_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_OPEN";

    /* ROMIO reaches the per-process Open only through ADIOI_GEN_OpenColl or
     * deferred open, neither of which a bbfs handle uses. */
    *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_INTERN, "**io",
                                       "**io %s", "bbfs: unexpected independent open");
}

/* The lower driver's hints (striping, cb_*, its aggregators), which are
 * the ones in force for the data, as the handle's info: one copy of the
 * lower's (merging it key by key into the handle's own was quadratic: an
 * MPI_Info is a list, each set a walk of it). */
static void show_lower_info(ADIO_File fd, ADIO_File lo)
{
    char own[MPI_MAX_INFO_VAL + 1], lower[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    int has_own, has_lower, nkeys;
    MPI_Info shown;

    ADIOI_Info_get(fd->info, "romio_filesystem_type", MPI_MAX_INFO_VAL, own, &has_own);
    ADIOI_Info_get(lo->info, "romio_filesystem_type", MPI_MAX_INFO_VAL, lower, &has_lower);
    MPI_Info_dup(lo->info, &shown);
    if (ADIOI_BBFS_Private(fd)->hint_check[1] != ADIOI_BBFS_NO_HINTS_DIGEST) {
        /* ROMIO 3.4.1 keeps the user's keys in the lower's info as given;
         * bbfs's are shown as parsed. */
        MPI_Info_get_nkeys(shown, &nkeys);
        for (int k = nkeys - 1; k >= 0; k--) {
            MPI_Info_get_nthkey(shown, k, key);
            if (!strncmp(key, "bbfs_", 5))
                MPI_Info_delete(shown, key);
        }
    }
    if (has_own)
        ADIOI_Info_set(shown, "romio_filesystem_type", own);
    if (has_lower)
        ADIOI_Info_set(shown, "bbfs_lower_filesystem_type", lower);
    MPI_Info_free(&fd->info);
    fd->info = shown;
}

/* What MPI_File_get_info shows (romio-visible-info-hook.patch) is built
 * when it is asked for, not at every open: the hints installed at open
 * were a third of a read-only open's instructions.  The lower driver's
 * hints, then bbfs's in force, then the map's server. */
void ADIOI_BBFS_ShowInfo(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    if (!bf || !bf->lower)
        return;
    show_lower_info(fd, bf->lower);
    ADIOI_BBFS_Hints_show(fd);
    ADIOI_Info_set(fd->info, "bbfs_map_server", ADIOI_BBFS_Server_map(bf));
}

static void free_private(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    if (!bf)
        return;
    ADIOI_BBFS_Private_leave(bf);
    ADIOI_BBFS_Server_close(bf);
    if (bf->open_info != MPI_INFO_NULL)
        MPI_Info_free(&bf->open_info);
    ADIOI_BBFS_FREE(bf->replayed);
    ADIOI_BBFS_FREE(bf->canonical);
    ADIOI_BBFS_File_free(bf);
    fd->fs_ptr = NULL;
}

#ifndef ADIOI_SHFP_FNAME_KEEPS_DRIVERS
#error "ROMIO lacks adio/mpich-patches/romio-driver-shfp-name.patch"
#endif
#ifndef ADIOI_OPEN_AGREED_FLAG
#error "ROMIO lacks adio/mpich-patches/romio-nested-open.patch's ADIOI_Open_agreed"
#endif

/* The shared file pointer's file, a hidden file beside the file as ROMIO
 * names it, but from the session's id, which every process has from the
 * open's agreement: ROMIO then broadcasts no name of its own
 * (romio-driver-shfp-name.patch; two collectives per open).  Only where
 * every process opened the file by the same name (agreed there too): so
 * the names, and whether each fits, are alike.  A name too long is left
 * to ROMIO, which reports it. */
static void name_shared_fp(ADIO_File fd, uint64_t id)
{
    const char *slash = strrchr(fd->filename, '/');
    int dir = slash ? (int) (slash + 1 - fd->filename) : 0;
    size_t len = strlen(fd->filename), base = len - (size_t) dir;

    if (len + 23 >= PATH_MAX)   /* (".", ".shfp" and 17 of the id; a NUL after) */
        return;
    char *name = ADIOI_Malloc(len + 24), *at = name;
    memcpy(at, fd->filename, (size_t) dir);
    at += dir;
    *at++ = '.';
    memcpy(at, fd->filename + dir, base);
    at += base;
    memcpy(at, ".shfp", 5);
    at = ADIOI_BBFS_Put_hex16(at + 5, id);
    *at = '\0';
    fd->shared_fp_fname = name;
}

/* An open that may create the file looks at its name once the lower open
 * has made it (ADIOI_BBFS_Open_prepare does not: a lookup of a name not
 * made yet waits behind every other create in its directory, 65 us per
 * open where 4 processes each create files in one).  Each process looks
 * at its own: a symbolic link's file is the one whose sessions count.
 * Sessions beside that file were not looked for (process 0 looked beside
 * the link): where there are any, process 0 fails the open, agreed with
 * the logs' start, rather than write past them. */
static int name_created(ADIO_File fd, int rank)
{
    static char myname[] = "ADIOI_BBFS_NAME_CREATED";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct logfs_session_info *v = NULL;
    struct logfs_error le;
    size_t n = 0;
    int linked;
    char *name = ADIOI_BBFS_Canonical_path(bf->canonical, &linked);

    if (!linked) {
        ADIOI_Free(name);
        return MPI_SUCCESS;
    }
    ADIOI_Free(bf->canonical);
    bf->canonical = name;
    if (rank != 0)
        return MPI_SUCCESS;
    int rc = logfs_sessions_list(name, &v, &n, &le);
    logfs_sessions_free(v, n);
    if (rc != LOGFS_OK)
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
    if (n == 0)
        return MPI_SUCCESS;
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_FILE_IN_USE, "**io", "**io %s", "bbfs: the file this "
                                "name links to has logs of another open, or pending ones: "
                                "open it by its own name, or without MPI_MODE_CREATE "
                                "(bbfs-replay makes pending logs canonical)");
}

void ADIOI_BBFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIO_File lo;
    double t0 = MPI_Wtime();

    MPI_Comm_size(fd->comm, &bf->nwriters);
    /* Scratch files (ROMIO's shared file pointer, DELETE_ON_CLOSE) are never
     * logged: nothing of them outlives the job, and the shared pointer must
     * be seen by every process at once. */
    bf->log_writes = !(access_mode & ADIO_RDONLY) && !(access_mode & ADIO_DELETE_ON_CLOSE);

    /* Agree the hints (SetInfo's) and find the lower driver; logs an
     * earlier job left pending become the canonical file first, so the
     * lower open below (and MPI_MODE_APPEND's end of file) sees them. */
    ADIOI_BBFS_Open_prepare(fd, access_mode, error_code);
    if (*error_code != MPI_SUCCESS)
        goto fn_fail;

    /* The lower file is a complete ADIO file with its own hints and
     * aggregators, so collective I/O on it is the lower driver's own.
     * Delete-on-close stays with the bbfs handle: it must also remove
     * logs, and deleting twice would fail.  Its outcome is agreed with the
     * next agreement below (the server's, the logs' start), or by
     * ADIO_Open's own after this call: no reduction of its own.  (Except
     * under bbfs_timing, whose report at the close is collective, and
     * ADIO_Open closes the file where the others failed.) */
    int agreed_later = !bf->hints.timing, err, agreed;
    lo = ADIOI_BBFS_Lower_open(fd, access_mode & ~ADIO_DELETE_ON_CLOSE, bf->open_info, fd->perm,
                               agreed_later, &err);
    if (err == MPI_SUCCESS && bf->lower_learn
        && ADIOI_BBFS_Lower_learn(lo, fd->filename, bf->lower_learn == 2, &bf->lower_fstype,
                                  &bf->lower_ops)) {
        /* A guessed driver that is not the file's: again with its own (the
         * file exists now; this process made it if MPI_MODE_EXCL). */
        ADIOI_BBFS_Lower_discard(lo, &err);
        lo = ADIO_FILE_NULL;
        if (err == MPI_SUCCESS)
            lo = ADIOI_BBFS_Lower_open(fd, access_mode & ~(ADIO_DELETE_ON_CLOSE | ADIO_EXCL),
                                       bf->open_info, fd->perm, agreed_later, &err);
    }
    if (err == MPI_SUCCESS && (access_mode & ADIO_CREATE)
        && (err = name_created(fd, rank)) != MPI_SUCCESS) {
        int close_err;
        ADIOI_BBFS_Lower_discard(lo, &close_err);
        lo = ADIO_FILE_NULL;
    }
    if (err != MPI_SUCCESS && !agreed_later) {
        *error_code = err;
        goto fn_fail;
    }
    fd->access_mode = access_mode;
    if (err == MPI_SUCCESS) {
        bf->lower = lo;
        fd->is_open = 1;
        /* ROMIO's generic shared-pointer and locking code keys on the file
         * system type (NFS locks inside its own read/write calls, so the
         * generic code must not lock around them): present the lower
         * driver's. */
        fd->file_system = lo->file_system;
        /* Generic code (locks, shared file pointer) uses fd_sys directly. */
        fd->fd_sys = lo->fd_sys;
        fd->blksize = lo->blksize;
        fd->fp_ind = lo->fp_ind;        /* MPI_MODE_APPEND: the lower open found EOF */
        fd->fp_sys_posn = lo->fp_sys_posn;
        ADIOI_BBFS_Hints_resolve_at_open(fd, access_mode);
    }

    /* (before the logs start: a server that cannot be reached fails the
     * open, not a sync later) */
    ADIOI_BBFS_Server_open(fd, err, error_code, &agreed);
    if (*error_code == MPI_SUCCESS || !agreed)
        ADIOI_BBFS_Log_open(fd, *error_code, error_code);
    /* The logs' start agrees its outcome, and with it the lower open's:
     * ADIO_Open need not agree it again (one collective fewer per open).
     * A read-only handle's lower open is agreed there, unless the server's
     * agreement came after it. */
    ADIOI_Open_agreed = agreed || bf->log_writes;
    if (*error_code != MPI_SUCCESS) {
        if (bf->lower) {
            int close_err;
            ADIOI_BBFS_Lower_discard(lo, &close_err);
            bf->lower = NULL;
        }
        goto fn_fail;
    }
    ADIOI_BBFS_Sync_join(bf);
    /* (not for ROMIO's own scratch files: the shared pointer's, nested) */
    if (bf->names_alike && !(access_mode & ADIO_DELETE_ON_CLOSE))
        name_shared_fp(fd, bf->file_id);
    bf->times.open += MPI_Wtime() - t0;
    return;

  fn_fail:
    /* ADIO_Open frees the handle but knows nothing of fs_ptr. */
    free_private(fd);
}
