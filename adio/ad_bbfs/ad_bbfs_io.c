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

/* The lower driver's call, made with this handle's view and file pointer. */
#define LOWER(fd, call) do {                            \
        ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);      \
        call;                                           \
        ADIOI_BBFS_Lower_end(fd);                       \
    } while (0)

/* READ_ALL: a collective read, which all processes must take alike */
enum { READ, WRITE, READ_ALL };

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
 * write_all followed by a read_all: its reduction is an MPI collective,
 * whose entry releases this process's writes and whose exit acquires
 * everyone's (ad_bbfs_sync.c; posix's writes are out at once).  One small
 * allreduce per collective read, where ROMIO's own makes several.
 * Collective; -1 with *error_code set if the reduction failed (a process
 * is gone). */
static int collective_reads_logs(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_READ_ALL";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int c = bf->hints.consistency;
    int orders = c == ADIOI_BBFS_CONSISTENCY_CAUSAL || c == ADIOI_BBFS_CONSISTENCY_POSIX;
    int mine = bf->others_live != 0, any = 0;

    if (ADIOI_BBFS_Reads_logs_always(bf) && !orders)
        return 1;
    int rc = MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, fd->comm);
    if (rc != MPI_SUCCESS) {
        *error_code = ADIOI_BBFS_Err_peer_lost(myname, rc);
        return -1;
    }
    return any || ADIOI_BBFS_Reads_logs_always(bf);
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
    else if (dir == READ_ALL) {
        int logs = collective_reads_logs(fd, error_code);
        if (logs == 0)
            return 0;
        if (logs > 0)
            ADIOI_BBFS_Log_read(fd, (void *) buf, count, datatype, file_ptr_type, offset,
                                contig, status, error_code);
    } else
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
    ADIOI_BBFS_Collective_begin(fd);
    if (!logged(fd, READ_ALL, buf, count, datatype, file_ptr_type, offset, 0, status,
                error_code))
        LOWER(fd, ADIO_ReadStridedColl(lo, buf, count, datatype,
                                       file_ptr_type, offset, status, error_code));
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
