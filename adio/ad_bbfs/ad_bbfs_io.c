/*
 * Reads and writes, blocking and nonblocking, independent and collective:
 * the twelve ADIO entry points.  While the file logs, writes go to the logs
 * and reads merge logs and canonical file (ad_bbfs_write.c,
 * ad_bbfs_read.c).  Otherwise (read-only open, atomic mode) the access goes
 * to the canonical file through the lower driver, with the view and file
 * pointer of the bbfs handle (see ADIOI_BBFS_Lower_begin).
 *
 * Appending to a log is a memory copy most of the time, so a logged
 * nonblocking access is done at once and returns a completed request;
 * otherwise the lower driver makes the request, and completion goes through
 * ROMIO's generic request functions, which do not depend on the driver.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "adio_extern.h"

/* The lower driver's call, made with this handle's view and file pointer. */
#define LOWER(fd, call) do {                            \
        ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);      \
        call;                                           \
        ADIOI_BBFS_Lower_end(fd);                       \
    } while (0)

/* READ_ALL: a collective read, which all processes must take alike */
enum { READ, WRITE, READ_ALL };

/* How a collective read goes (collective_read_path). */
enum { LOWER_COLL, THROUGH_LOGS, LOWER_EACH };

/* Whether the lower driver's collective read is ROMIO's generic one,
 * which gathers every process's first and last byte (and takes them from
 * ADIOI_Coll_gathered instead: romio-stacked-offsets.patch). */
static int lower_gathers_offsets(ADIO_File lo)
{
    return lo->fns->ADIOI_xxx_ReadStridedColl == ADIOI_GEN_ReadStridedColl
        && lo->hints->cb_read != ADIOI_HINT_DISABLE && lo->hints->cb_pfr == ADIOI_HINT_DISABLE;
}

/* ROMIO's own test (ad_read_coll.c), on (start, end) per process. */
static int interleaved(const ADIO_Offset * ends, int n)
{
    for (int i = 1; i < n; i++)
        if (ends[2 * i] < ends[2 * (i - 1) + 1] && ends[2 * i] <= ends[2 * i + 1])
            return 1;
    return 0;
}

/* Whether a collective read goes through the logs: whether any process's
 * reads look at them.  A handle without logs of its own looks where
 * another handle's session is live, and each process finds that out at
 * its own reads (one may look just before that session's replay, another
 * just after): of two processes that disagreed, one would read the logs
 * and the other wait in the lower file's collective read.
 *
 * A logged collective write makes no communication (its order among the
 * others' writes is the count of collective calls, ad_bbfs_order.c), so
 * under the models that show others' writes without a sync (causal,
 * posix) the collective read is what orders a write of an earlier
 * collective call before it, as PnetCDF's and ROMIO's tests expect of a
 * write_all followed by a read_all: its agreement is an MPI collective,
 * whose entry releases this process's writes and whose exit acquires
 * everyone's (ad_bbfs_sync.c; posix's writes are out at once).
 *
 * Where the lower read is ROMIO's generic one, the agreement is one
 * all-gather of each process's flag with the first and last byte of its
 * request: what ROMIO's read would gather next (in two all-gathers), to
 * choose independent reads of requests that are not interleaved, which
 * this read then makes at once (LOWER_EACH), or to plan its two-phase
 * read, which takes them as given (*gathered: start and end per process,
 * for ADIOI_Coll_gathered; NULL where the caller cannot pass them on).
 * So a collective read of the canonical file makes no more collectives
 * than stock ROMIO's, and one fewer where it reads independently.
 * Collective; -1 with *error_code set if the agreement failed (a process
 * is gone). */
static int collective_read_path(ADIO_File fd, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Offset ** gathered,
                                int *error_code)
{
    static char myname[] = "ADIOI_BBFS_READ_ALL";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int c = bf->hints.consistency;
    int orders = c == ADIOI_BBFS_CONSISTENCY_CAUSAL || c == ADIOI_BBFS_CONSISTENCY_POSIX;
    int always = ADIOI_BBFS_Reads_logs_always(bf), any = 0, rc, path;

    ADIOI_BBFS_Sync_look(bf);   /* (others_live after an acquire) */
    if (gathered)
        *gathered = NULL;
    if (always && !orders)
        return THROUGH_LOGS;
    if (!always && lower_gathers_offsets(bf->lower)) {
        ADIO_Offset mine[3] = { bf->others_live != 0, 0, -1 }, *offs = NULL, *lens = NULL;
        ADIO_Offset fp = fd->fp_ind;    /* (moved by the calculation, as in ROMIO's read) */
        int n, size;
        ADIOI_Calc_my_off_len(fd, count, datatype, file_ptr_type, offset, &offs, &lens,
                              &mine[1], &mine[2], &n);
        fd->fp_ind = fp;
        ADIOI_Free(offs);       /* (the lengths share its block) */
        MPI_Comm_size(fd->comm, &size);
        ADIO_Offset *all = ADIOI_Malloc(sizeof(ADIO_Offset) * 3 * (size_t) size);
        rc = MPI_Allgather(mine, 3, ADIO_OFFSET, all, 3, ADIO_OFFSET, fd->comm);
        for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
            any |= all[3 * r] != 0;
            all[2 * r] = all[3 * r + 1];        /* (start, end) pairs, in place */
            all[2 * r + 1] = all[3 * r + 2];
        }
        path = any ? THROUGH_LOGS : bf->lower->hints->cb_read == ADIOI_HINT_AUTO
            && rc == MPI_SUCCESS && !interleaved(all, size) ? LOWER_EACH : LOWER_COLL;
        if (path == LOWER_COLL && gathered && rc == MPI_SUCCESS)
            *gathered = all;
        else
            ADIOI_Free(all);
    } else {
        int mine = bf->others_live != 0;
        rc = MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, fd->comm);
        path = any || always ? THROUGH_LOGS : LOWER_COLL;
    }
    if (rc != MPI_SUCCESS) {
        *error_code = ADIOI_BBFS_Err_peer_lost(myname, rc);
        return -1;
    }
    return path;
}

/* What ROMIO's generic collective read does where the requests are not
 * interleaved: each process reads its own part. */
static void read_each(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                      int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                      int *error_code)
{
    int buf_contig, file_contig;

    ADIOI_Datatype_iscontig(datatype, &buf_contig);
    ADIOI_Datatype_iscontig(fd->filetype, &file_contig);
    if (!buf_contig || !file_contig)
        LOWER(fd, ADIO_ReadStrided(lo, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code));
    else if (file_ptr_type == ADIO_EXPLICIT_OFFSET)
        LOWER(fd, ADIO_ReadContig(lo, buf, count, datatype, ADIO_EXPLICIT_OFFSET,
                                  fd->disp + fd->etype_size * offset, status, error_code));
    else
        LOWER(fd, ADIO_ReadContig(lo, buf, count, datatype, ADIO_INDIVIDUAL, 0, status,
                                  error_code));
}

/* A collective read on the path collective_read_path chose: done here (1:
 * through the logs, each process's part, or a failed agreement), or the
 * lower driver's collective read to make (0). */
static int read_all_here(ADIO_File fd, int path, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                         int *error_code)
{
    if (path == LOWER_COLL)
        return 0;
    if (path == THROUGH_LOGS)
        ADIOI_BBFS_Log_read(fd, buf, count, datatype, file_ptr_type, offset, 0, status,
                            error_code);
    else if (path == LOWER_EACH)
        read_each(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    return 1;
}

/* Done through the logs: 1; the lower driver's to do: 0.  (buf is the
 * caller's own, writable for reads.) */
static int logged(ADIO_File fd, int dir, const void *buf, int count, MPI_Datatype datatype,
                  int file_ptr_type, ADIO_Offset offset, int contig, ADIO_Status * status,
                  int *error_code)
{
    if (dir == WRITE && ADIOI_BBFS_Logging(fd)) {
        ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
        double t0 = bf->hints.timing ? MPI_Wtime() : 0;
        ADIOI_BBFS_Log_write(fd, buf, count, datatype, file_ptr_type, offset, contig, status,
                             error_code);
        if (bf->hints.timing) {
            bf->times.log += MPI_Wtime() - t0;
            bf->times.calls++;
        }
    }
    else if (dir == READ && ADIOI_BBFS_Reads_logs(fd))
        ADIOI_BBFS_Log_read(fd, (void *) buf, count, datatype, file_ptr_type, offset, contig,
                            status, error_code);
    else if (dir == READ_ALL)
        return read_all_here(fd, collective_read_path(fd, count, datatype, file_ptr_type,
                                                      offset, NULL, error_code),
                             (void *) buf, count, datatype, file_ptr_type, offset, status,
                             error_code);
    else
        return 0;
    return 1;
}

/* A nonblocking access done through the logs: a completed request for the
 * bytes moved (a read at the end of the file moves fewer than asked). */
static int ilogged(ADIO_File fd, int dir, const void *buf, int count, MPI_Datatype datatype,
                   int file_ptr_type, ADIO_Offset offset, int contig, ADIO_Request * request,
                   int *error_code)
{
    ADIO_Status st;
    MPI_Count bytes = 0;

    if (!logged(fd, dir, buf, count, datatype, file_ptr_type, offset, contig, &st, error_code))
        return 0;
    if (*error_code == MPI_SUCCESS) {
        MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
        MPIO_Completed_request_create(&fd, (MPI_Offset) bytes, error_code, request);
    }
    return 1;
}

void ADIOI_BBFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int *error_code)
{
    if (!logged(fd, READ, buf, count, datatype, file_ptr_type, offset, 1, status, error_code))
        LOWER(fd, ADIO_ReadContig(lo, buf, count, datatype,
                                  file_ptr_type, offset, status, error_code));
}

void ADIOI_BBFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    if (!logged(fd, WRITE, buf, count, datatype, file_ptr_type, offset, 1, status, error_code))
        LOWER(fd, ADIO_WriteContig(lo, buf, count, datatype,
                                   file_ptr_type, offset, status, error_code));
}

void ADIOI_BBFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    if (!logged(fd, READ, buf, count, datatype, file_ptr_type, offset, 0, status, error_code))
        LOWER(fd, ADIO_ReadStrided(lo, buf, count, datatype,
                                   file_ptr_type, offset, status, error_code));
}

void ADIOI_BBFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    if (!logged(fd, WRITE, buf, count, datatype, file_ptr_type, offset, 0, status, error_code))
        LOWER(fd, ADIO_WriteStrided(lo, buf, count, datatype,
                                    file_ptr_type, offset, status, error_code));
}

void ADIOI_BBFS_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                int *error_code)
{
    ADIO_Offset *gathered;

    ADIOI_BBFS_Collective_begin(fd);
    int path = collective_read_path(fd, count, datatype, file_ptr_type, offset, &gathered,
                                    error_code);
    if (!read_all_here(fd, path, buf, count, datatype, file_ptr_type, offset, status,
                       error_code)) {
        ADIOI_Coll_gathered = gathered;
        LOWER(fd, ADIO_ReadStridedColl(lo, buf, count, datatype,
                                       file_ptr_type, offset, status, error_code));
        ADIOI_Coll_gathered = NULL;
        ADIOI_BBFS_FREE(gathered);
    }
    ADIOI_BBFS_Collective_end(fd);
}

void ADIOI_BBFS_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code)
{
    ADIOI_BBFS_Collective_begin(fd);
    if (!logged(fd, WRITE, buf, count, datatype, file_ptr_type, offset, 0, status, error_code))
        LOWER(fd, ADIO_WriteStridedColl(lo, buf, count, datatype,
                                        file_ptr_type, offset, status, error_code));
    ADIOI_BBFS_Collective_end(fd);
}

void ADIOI_BBFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code)
{
    if (!ilogged(fd, READ, buf, count, datatype, file_ptr_type, offset, 1, request, error_code))
        LOWER(fd, ADIO_IreadContig(lo, buf, count, datatype,
                                   file_ptr_type, offset, request, error_code));
}

void ADIOI_BBFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    if (!ilogged(fd, WRITE, buf, count, datatype, file_ptr_type, offset, 1, request, error_code))
        LOWER(fd, ADIO_IwriteContig(lo, buf, count, datatype,
                                    file_ptr_type, offset, request, error_code));
}

void ADIOI_BBFS_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    if (!ilogged(fd, READ, buf, count, datatype, file_ptr_type, offset, 0, request, error_code))
        LOWER(fd, ADIO_IreadStrided(lo, buf, count, datatype,
                                    file_ptr_type, offset, request, error_code));
}

void ADIOI_BBFS_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int *error_code)
{
    if (!ilogged(fd, WRITE, buf, count, datatype, file_ptr_type, offset, 0, request, error_code))
        LOWER(fd, ADIO_IwriteStrided(lo, buf, count, datatype,
                                     file_ptr_type, offset, request, error_code));
}

void ADIOI_BBFS_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Request * request, int *error_code)
{
    ADIOI_BBFS_Collective_begin(fd);
    if (!ilogged(fd, READ_ALL, buf, count, datatype, file_ptr_type, offset, 0, request,
                 error_code))
        LOWER(fd, ADIO_IreadStridedColl(lo, buf, count, datatype,
                                        file_ptr_type, offset, request, error_code));
    ADIOI_BBFS_Collective_end(fd);
}

void ADIOI_BBFS_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code)
{
    ADIOI_BBFS_Collective_begin(fd);
    if (!ilogged(fd, WRITE, buf, count, datatype, file_ptr_type, offset, 0, request, error_code))
        LOWER(fd, ADIO_IwriteStridedColl(lo, buf, count, datatype,
                                         file_ptr_type, offset, request, error_code));
    ADIOI_BBFS_Collective_end(fd);
}
