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
#include <assert.h>
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
        bf = ADIOI_Calloc(1, sizeof(*bf));
    else
        memset(bf, 0, sizeof(*bf));
    spare_file = NULL;
    bf->sessions_dir = -1;
    bf->parent_dir = -1;
    return bf;
}

void ADIOI_BBFS_File_free(ADIOI_BBFS_File * bf)
{
    logfs_sessions_kept_close(&bf->sessions_dir);
    logfs_sessions_kept_close(&bf->parent_dir);
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

/* (A struct of fixed PATH_MAX strings made an open's broadcast 8.7 KB,
 * past the eager limit of ch4:ucx within a node: a rendezvous by
 * process_vm_readv, slower, and refused between processes that changed
 * their user ids.) */
enum { SAID_INTS = 4, SAID_INLINE = 1024 };

void ADIOI_BBFS_Bcast_said(MPI_Comm comm, int *const *ints, int nints, char *const *strs,
                           const size_t * caps, int nstrs)
{
    struct {
        int total;              /* the strings' bytes, back to back, each with its NUL */
        int ints[SAID_INTS];
        char text[SAID_INLINE];
    } said;
    int rank;
    char *all;

    assert(nints <= SAID_INTS);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        said.total = 0;
        for (int i = 0; i < nstrs; i++)
            said.total += (int) strnlen(strs[i], caps[i] - 1) + 1;
        for (int i = 0; i < nints; i++)
            said.ints[i] = *ints[i];
        all = said.total <= SAID_INLINE ? said.text : ADIOI_Malloc(said.total);
        for (int i = 0, at = 0; i < nstrs; i++) {
            size_t l = strnlen(strs[i], caps[i] - 1);
            memcpy(all + at, strs[i], l);
            all[at + l] = 0;
            at += (int) l + 1;
        }
    }
    MPI_Bcast(&said, (int) sizeof(said), MPI_BYTE, 0, comm);
    if (rank != 0) {
        for (int i = 0; i < nints; i++)
            *ints[i] = said.ints[i];
        all = said.total <= SAID_INLINE ? said.text : ADIOI_Malloc(said.total);
    }
    if (said.total > SAID_INLINE)
        MPI_Bcast(all, said.total, MPI_CHAR, 0, comm);
    if (rank != 0)
        for (int i = 0, at = 0; i < nstrs; i++) {
            snprintf(strs[i], caps[i], "%s", all + at);
            at += (int) strlen(all + at) + 1;
        }
    if (all != said.text)
        ADIOI_Free(all);
}

/* Every process returns an error of the same class when any one failed:
 * the lowest failing rank's class, with this process's own message if it
 * has one.  Collective, so no process waits on one that gave up. */
int ADIOI_BBFS_Agree_error(MPI_Comm comm, const char *myname, int err)
{
    return ADIOI_BBFS_Agree_error_with(comm, myname, err, NULL);
}

int ADIOI_BBFS_Agree_error_with(MPI_Comm comm, const char *myname, int err, uint64_t * rank0s)
{
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t mine[2] = { ADIOI_BBFS_Error_key(err, rank), rank0s && rank == 0 ? *rank0s : 0 };
    uint64_t got[2];
    int rc = MPI_Allreduce(mine, got, rank0s ? 2 : 1, MPI_UINT64_T, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return ADIOI_BBFS_Err_peer_lost(myname, rc);
    if (rank0s)
        *rank0s = got[1];
    return ADIOI_BBFS_Error_of_key(got[0], size, err, myname);
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

uint64_t ADIOI_BBFS_Clock_floor(void)
{
    return clock_floor;
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

char *ADIOI_BBFS_Put_hex16(char *out, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";

    *out++ = '.';
    for (int shift = 60; shift >= 0; shift -= 4)
        *out++ = digits[(v >> shift) & 15];
    return out;
}

char *ADIOI_BBFS_Put_int(char *out, int v)
{
    char rev[11];
    int n = 0;
    unsigned int u = v < 0 ? 0u - (unsigned int) v : (unsigned int) v;

    *out++ = '.';
    if (v < 0)
        *out++ = '-';
    do
        rev[n++] = (char) ('0' + u % 10);
    while ((u /= 10) != 0);
    while (n > 0)
        *out++ = rev[--n];
    return out;
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
