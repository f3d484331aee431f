/*
 * Set-up shared by every bbfs operation: finding the lower driver and
 * handing the lower handle the state of the bbfs handle for one call.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "adio_extern.h"
#include "adio_cb_config_list.h"

#include "../../logfs/coding.h"
#include "../../logfs/errors.h"
#include "../../logfs/fault.h"
#include "../../logfs/manifest.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

ADIOI_BBFS_File *ADIOI_BBFS_Private(ADIO_File fd)
{
    return (ADIOI_BBFS_File *) fd->fs_ptr;
}

/* A handle's state is 5 KB, and a request that large makes glibc's malloc
 * consolidate its fast bins first (in an open and close on MPI_COMM_SELF,
 * a twentieth of the instructions), so the last one freed serves the next
 * open.  (Not under AddressSanitizer: a use after the close must show.) */
#if defined(__SANITIZE_ADDRESS__)
#define SPARE_FILE 0
#else
#define SPARE_FILE 1
#endif
static ADIOI_BBFS_File *spare_file;

ADIOI_BBFS_File *ADIOI_BBFS_File_new(void)
{
    ADIOI_BBFS_File *bf = spare_file;
    if (!bf)
        return ADIOI_Calloc(1, sizeof(*bf));
    spare_file = NULL;
    memset(bf, 0, sizeof(*bf));
    return bf;
}

void ADIOI_BBFS_File_free(ADIOI_BBFS_File * bf)
{
    if (SPARE_FILE && !spare_file)
        spare_file = bf;
    else
        ADIOI_Free(bf);
}

/* The one mapping from logfs's status codes to MPI error classes. */
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
        case LOGFS_EBUSY: cls = MPI_ERR_FILE_IN_USE; break;
        default: cls = MPI_ERR_IO; break;
    }
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, cls, "**io",
                                "bbfs: %s", msg);
}

/* An error of this process's own logs while writing, syncing or closing:
 * what it means for the data and what to do come first, because MPICH
 * cuts long messages short (at about 250 characters) and paths are long. */
int ADIOI_BBFS_Err_log_io(const char *myname, int line, int code, const char *msg)
{
    char full[LOGFS_ERRMSG_MAX + 200];
    const char *advice = "";

    switch (code) {
        case LOGFS_ENOSPC:
            advice = "log space full: free space, raise bbfs_log_quota or move bbfs_logdir; "
                "earlier syncs are safe: ";
            break;
        case LOGFS_EIO:
        case LOGFS_ESHORT:
            advice = "log device failed; earlier syncs are kept for bbfs-replay once it works: ";
            break;
        case LOGFS_ENOENT:
            advice = "logs removed while the file was open; writes since the open are lost: ";
            break;
    }
    if (!strncmp(msg, ADIOI_BBFS_MANIFEST_FAILED, strlen(ADIOI_BBFS_MANIFEST_FAILED)))
        advice = "";            /* (not the log directory's) */
    snprintf(full, sizeof(full), "%s%s", advice, msg);
    return ADIOI_BBFS_Err_logfs(myname, line, code, full);
}

/* Every process returns an error of the same class when any one failed:
 * the lowest failing rank's class, with this process's own message if it
 * has one.  Collective, so no process waits on one that gave up. */
int ADIOI_BBFS_Agree_error(MPI_Comm comm, const char *myname, int err)
{
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t mine = ADIOI_BBFS_Error_key(err, rank), key;
    int rc = MPI_Allreduce(&mine, &key, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return ADIOI_BBFS_Err_peer_lost(myname, rc);
    return ADIOI_BBFS_Error_of_key(key, size, err, myname);
}

uint64_t ADIOI_BBFS_Error_key(int err, int rank)
{
    int cls;
    if (err == MPI_SUCCESS)
        return 0;
    MPI_Error_class(err, &cls);
    return ((uint64_t) (INT_MAX - rank) << 32) | (uint32_t) cls;
}

int ADIOI_BBFS_Error_of_key(uint64_t key, int size, int err, const char *myname)
{
    if (key == 0)
        return err;
    /* MPICH 4.0.2's ch3 can return success from a reduction that lost a
     * process, with bytes it never received: a rank no process has is
     * that loss too.  (Unsigned: such bytes must not overflow an int.) */
    uint64_t below_max = key >> 32;
    if (below_max > INT_MAX || INT_MAX - below_max >= (uint64_t) size)
        return ADIOI_BBFS_Err_peer_lost(myname, MPI_SUCCESS);
    int first = INT_MAX - (int) below_max;
    return err != MPI_SUCCESS ? err
        : ADIOI_BBFS_Err_elsewhere(myname, (int) (key & 0xffffffff), first);
}

/* A collective call inside the driver failed (mpi_err), or returned what
 * no process sent (MPI_SUCCESS): a process of the file's communicator is
 * gone (its node lost, or it was killed, and the launcher let the others
 * go on, as mpiexec -disable-auto-cleanup does).  Nothing this call could
 * do after would be agreed, so it stops here; the logs stay. */
int ADIOI_BBFS_Err_peer_lost(const char *myname, int mpi_err)
{
    char msg[MPI_MAX_ERROR_STRING] = "a reduction returned bytes no process sent";
    /* (MPI's own message is long and names the lost rank last) */
    if (mpi_err != MPI_SUCCESS)
        ADIOI_BBFS_Error_text(mpi_err, 1, msg, sizeof(msg));
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, MPI_ERR_IO,
                                "**io", "bbfs: a process of this file's job is gone (node lost?); "
                                "the logs stay: after the job, bbfs-replay --salvage on the "
                                "remaining nodes recovers what they hold (MPI: %s)", msg);
}

void ADIOI_BBFS_Error_text(int err, int last_line, char *out, size_t len)
{
    /* MPICH 4.0.2 reads past the buffer MPI_Error_string is given when the
     * error's stack does not fit in MPI_MAX_ERROR_STRING (errutil.c, a
     * strlen at the end of the full buffer; AddressSanitizer saw it under
     * a node lost at close): it gets a zeroed one twice that size. */
    char s[2 * MPI_MAX_ERROR_STRING];
    int n;
    memset(s, 0, sizeof(s));
    MPI_Error_string(err, s, &n);
    const char *t = last_line ? strrchr(s, '\n') : NULL;
    snprintf(out, len, "%s", t ? t + 1 : s);
}

int ADIOI_BBFS_Err_elsewhere(const char *myname, int err_class, int rank)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, err_class,
                                "**io", "bbfs: failed on process %d (see its error)", rank);
}

/* ROMIO's open gathers every process's host name (for its aggregators'
 * list) and keeps the list on the communicator the user gave, so that the
 * next open on it asks no one.  The lower file is opened on the bbfs
 * handle's communicator, new at every open, so every lower open gathered
 * again: two collectives, and on MPI_COMM_SELF a fifth of an open's CPU.
 * The driver keeps the last few lists by process group and lends the one
 * of the same group (same processes, same order: process 0, which alone
 * holds the names, is the same) to the next lower open. */
#define NAME_LISTS 4
static struct {
    MPI_Group group;
    ADIO_cb_name_array names;
} name_lists[NAME_LISTS];
static int name_lists_next;

static void name_list_drop(ADIO_cb_name_array names)
{
    ADIOI_cb_delete_name_array(MPI_COMM_NULL, ADIOI_cb_config_list_keyval, names, NULL);
}

static void name_list_lend(MPI_Comm comm)
{
    MPI_Group g;
    void *names;
    int found, same;

    if (ADIOI_cb_config_list_keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm_get_attr(comm, ADIOI_cb_config_list_keyval, &names, &found);
    if (found)
        return;
    MPI_Comm_group(comm, &g);
    for (int i = 0; i < NAME_LISTS; i++) {
        if (!name_lists[i].names)
            continue;
        MPI_Group_compare(g, name_lists[i].group, &same);
        if (same == MPI_IDENT) {
            name_lists[i].names->refct++;       /* (the attribute's delete drops it) */
            MPI_Comm_set_attr(comm, ADIOI_cb_config_list_keyval, name_lists[i].names);
            break;
        }
    }
    MPI_Group_free(&g);
}

static void name_list_keep(MPI_Comm comm)
{
    ADIO_cb_name_array names;
    int found, i = name_lists_next;

    if (ADIOI_cb_config_list_keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm_get_attr(comm, ADIOI_cb_config_list_keyval, &names, &found);
    if (!found || !names)
        return;
    for (int k = 0; k < NAME_LISTS; k++)
        if (name_lists[k].names == names)
            return;
    if (name_lists[i].names) {
        name_list_drop(name_lists[i].names);
        MPI_Group_free(&name_lists[i].group);
    }
    names->refct++;
    name_lists[i].names = names;
    MPI_Comm_group(comm, &name_lists[i].group);
    name_lists_next = (i + 1) % NAME_LISTS;
}

/* Opens the canonical file through the lower driver, on the bbfs
 * handle's own communicator: a communicator of its own (MPI_Comm_dup) cost
 * one more collective per open, and the lower driver's collectives come in
 * the same order on every process, between bbfs's own, as ROMIO's two
 * layers of one file use one communicator.  (The lower open also finds the
 * processes' host names cached on it: no second gather; and, nested in
 * the bbfs handle's open, which processed the system hints on every
 * process, no reduction asking whether all have: ADIOI_Open_nested,
 * adio/mpich-patches/romio-nested-open.patch.)  Collective. */
ADIO_File ADIOI_BBFS_Lower_open(ADIO_File fd, int access_mode, MPI_Info info, int perm,
                                int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    name_list_lend(fd->comm);
    ADIOI_Open_nested = 1;
    ADIO_File lo = ADIO_Open(fd->comm, fd->comm, bf->canonical, bf->lower_fstype, bf->lower_ops,
                             access_mode, 0, MPI_BYTE, MPI_BYTE, info, perm, error_code);
    ADIOI_Open_nested = 0;
    if (lo != ADIO_FILE_NULL)
        name_list_keep(fd->comm);
    return lo;
}

/* Closes the lower file.  It only borrowed the bbfs handle's view (etype
 * and filetype) and communicator, which ADIO_Close would free: nested, it
 * leaves the communicator to the bbfs handle (romio-nested-open.patch; a
 * copy of MPI_COMM_SELF for it to free cost a sixth of an open and close
 * on MPI_COMM_SELF). */
void ADIOI_BBFS_Lower_close(ADIO_File lo, int *error_code)
{
    lo->etype = MPI_BYTE;
    lo->filetype = MPI_BYTE;
    ADIOI_Open_nested = 1;
    ADIO_Close(lo, error_code);
    ADIOI_Open_nested = 0;
}

/* A driver prefix as MPI_File_open sees one ("ufs:/a"). */
int ADIOI_BBFS_Name_has_prefix(const char *name)
{
    return logfs_name_prefix_len(name) > 0;
}

/* The name without its driver prefix ("ufs:/a" -> "/a"). */
static const char *strip_prefix(const char *name)
{
    return name + logfs_name_prefix_len(name);
}

/* ROMIO_FSTYPE_FORCE=bbfs: hands every file to bbfs, the zero-change way
 * to run a binary on it; below bbfs the lower driver must then be found as
 * if the variable were not set (ROMIO applies it after any prefix, so
 * "ufs:/p" would resolve to bbfs too).  ROMIO has no call that detects
 * without it, so set it aside for the one call: ROMIO holds its global
 * lock here, and the variable's value is restored before returning. */
static void resolve_unforced(const char *name, int *fstype, ADIOI_Fns ** ops, int *error_code)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    char *saved = NULL;

    if (force && !strncasecmp(force, "bbfs:", 5)) {
        saved = ADIOI_Strdup(force);
        unsetenv("ROMIO_FSTYPE_FORCE");
    }
    ADIO_ResolveFileType(MPI_COMM_SELF, name, fstype, ops, error_code);
    if (saved) {
        setenv("ROMIO_FSTYPE_FORCE", saved, 1);
        ADIOI_Free(saved);
    }
}

void ADIOI_BBFS_Resolve_lower(const char *name, int *fstype, ADIOI_Fns ** ops,
                              const char **path, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_RESOLVE_LOWER";
    int has_prefix = ADIOI_BBFS_Name_has_prefix(name);

    if (has_prefix && !strncasecmp(name, "bbfs:", 5)) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename",
                                           "bbfs cannot stack on itself: '%s'; name one lower "
                                           "driver at most, as in bbfs:ufs:/path", name);
        return;
    }
    /* This process alone: rank 0 broadcasts what it found (ROMIO's own
     * scalable detection), and delete is not collective. */
    resolve_unforced(name, fstype, ops, error_code);
    if (*error_code != MPI_SUCCESS) {
        if (has_prefix) {
            /* Only an unknown or unbuilt driver prefix fails here: say which. */
            char driver[64];
            snprintf(driver, sizeof(driver), "%.*s", (int) (strip_prefix(name) - name - 1),
                     name);
            *error_code = MPIO_Err_create_code(*error_code, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_BAD_FILE, "**filename",
                                               "bbfs: lower driver '%s' in '%s' is unknown or "
                                               "not built into this MPICH; use one of ufs:, "
                                               "nfs:, or no prefix to detect it",
                                               driver, name);
        }
        return;
    }
    if (*fstype == ADIO_BBFS) {
        /* ROMIO_FSTYPE_FORCE names some other driver prefix bbfs cannot
         * see past (it was set aside above only when it names bbfs). */
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename",
                                           "bbfs: the lower driver for '%s' resolved to bbfs "
                                           "itself; force a lower driver with bbfs:ufs:/path",
                                           name);
        return;
    }
    *path = strip_prefix(name);
}

/* The prefix that names each lower driver ROMIO may detect, so that other
 * processes can take rank 0's detection without a statfs storm (as ROMIO's
 * own scalable detection does). */
static const struct {
    int fstype;
    const char *prefix;
} lower_prefixes[] = {
    {ADIO_UFS, "ufs:"}, {ADIO_NFS, "nfs:"}, {ADIO_XFS, "xfs:"}, {ADIO_PVFS2, "pvfs2:"},
    {ADIO_GPFS, "gpfs:"}, {ADIO_PANFS, "panfs:"}, {ADIO_LUSTRE, "lustre:"},
    {ADIO_DAOS, "daos:"}, {ADIO_TESTFS, "testfs:"}, {ADIO_IME, "ime:"},
    {ADIO_QUOBYTEFS, "quobyte:"}
};

void ADIOI_BBFS_Resolve_as(int fstype, const char *name, ADIOI_Fns ** ops, const char **path,
                           int *error_code)
{
    static char myname[] = "ADIOI_BBFS_RESOLVE_AS";
    char forced[64];
    int got;

    for (size_t i = 0; i < sizeof(lower_prefixes) / sizeof(lower_prefixes[0]); i++)
        if (lower_prefixes[i].fstype == fstype) {
            snprintf(forced, sizeof(forced), "%s", lower_prefixes[i].prefix);
            resolve_unforced(forced, &got, ops, error_code);
            *path = strip_prefix(name);
            return;
        }
    *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_BAD_FILE, "**filename", "bbfs: process 0 "
                                       "detected lower file system type %d for %s, which "
                                       "this process cannot use; force one with bbfs:ufs:",
                                       fstype, name);
}

/* ROMIO's generic code reads the view and file pointer from the handle it is
 * given.  The view lives on the bbfs handle (MPI_File_set_view only touches
 * that one), so lend it to the lower handle for the duration of one call. */
ADIO_File ADIOI_BBFS_Lower_begin(ADIO_File fd)
{
    ADIO_File lo = ADIOI_BBFS_Private(fd)->lower;

    lo->disp = fd->disp;
    lo->etype = fd->etype;
    lo->filetype = fd->filetype;
    lo->etype_size = fd->etype_size;
    lo->is_external32 = fd->is_external32;
    lo->atomicity = fd->atomicity;
    lo->fp_ind = fd->fp_ind;
    return lo;
}

/* Take back what the lower call moved: the individual file pointer. */
void ADIOI_BBFS_Lower_end(ADIO_File fd)
{
    ADIO_File lo = ADIOI_BBFS_Private(fd)->lower;

    fd->fp_ind = lo->fp_ind;
    fd->fp_sys_posn = lo->fp_sys_posn;
}

/* What every completed logged access leaves behind, as ROMIO's own calls
 * do: the individual pointer moved, the system pointer unknown, the byte
 * count in the status. */
void ADIOI_BBFS_Access_done(ADIO_File fd, int file_ptr_type, ADIO_Offset next_fp,
                            ADIO_Status * status, MPI_Datatype datatype, ADIO_Offset nbytes)
{
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = next_fp;
    fd->fp_sys_posn = -1;
#ifdef HAVE_STATUS_SET_BYTES
    MPIR_Status_set_bytes(status, datatype, nbytes);
#else
    (void) status;
    (void) datatype;
    (void) nbytes;
#endif
}

/* The largest clock a bbserver told this process, and the last stamp given. */
static uint64_t clock_floor, clock_last;

uint64_t ADIOI_BBFS_Clock(void)
{
    /* Real time, not monotonic: sessions left pending by an earlier job (or
     * boot) are replayed with later ones, and must come first.  Above the
     * floor: the map's server tells every writer's clock on (bbserver/serve.h),
     * so a write that MPI orders after another node's attached one is stamped
     * later, however far the nodes' clocks are apart. */
    uint64_t now = logfs_fault_clock();

    if (now <= clock_floor)
        now = clock_floor + 1;
    clock_last = now > clock_last ? now : clock_last + 1;
    return clock_last;
}

void ADIOI_BBFS_Clock_observe(uint64_t told)
{
    if (told > clock_floor)
        clock_floor = told;
}

/* Asked once: the name is the node's for the life of the process (an
 * emulated node's namespace is entered before the process starts), and
 * every open, close and server lookup wants it. */
void ADIOI_BBFS_Nap(double *nap, double cap)
{
    struct timespec ts = { (time_t) *nap, (long) ((*nap - (double) (time_t) *nap) * 1e9) };
    nanosleep(&ts, NULL);
    *nap = *nap * 2 < cap ? *nap * 2 : cap;
}

const char *ADIOI_BBFS_Host_name(void)
{
    static char host[LOGFS_MANIFEST_HOST_MAX];

    if (!host[0] && gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    return host;
}

uint64_t ADIOI_BBFS_Process_id(void)
{
    static uint64_t id;

    if (id)
        return id;
    /* host, pid and the time of the first call: unique across the nodes of
     * a job and across jobs, never 0 */
    id = logfs_fnv_str(LOGFS_FNV_START, ADIOI_BBFS_Host_name());
    id = logfs_fnv_value(id, (uint64_t) getpid());
    id = logfs_fnv_value(id, ADIOI_BBFS_Clock());
    if (id == 0)
        id = 1;
    return id;
}

/* The path, this process and the time: two opens of one file differ. */
uint64_t ADIOI_BBFS_New_file_id(const char *path)
{
    uint64_t id = logfs_fnv_value(logfs_fnv_str(LOGFS_FNV_START, path), (uint64_t) getpid());

    id ^= ADIOI_BBFS_Clock();
    return id ? id : 1;         /* 0 means none yet */
}

int ADIOI_BBFS_Force_remote(const ADIOI_BBFS_Hints * h)
{
    const char *v = getenv("BBFS_FORCE_REMOTE");
    return h->force_remote || (v && (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes")));
}
