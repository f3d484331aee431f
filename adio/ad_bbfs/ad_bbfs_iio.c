/*
 * Nonblocking reads and writes.  Appending to a log is a memory copy most of
 * the time, so a logged access is done at once and returns a completed
 * request.  Otherwise the lower driver creates the request; completion goes
 * through ROMIO's generic request functions, which do not depend on the
 * driver.
 */
#include "ad_bbfs.h"
#include "adioi.h"

/* A request already complete, for the bytes the blocking call moved (a
 * read at the end of the file moves fewer than asked). */
static void completed(ADIO_File fd, ADIO_Status * st, ADIO_Request * request, int *error_code)
{
    MPI_Count bytes = 0;
    MPI_Get_elements_x(st, MPI_BYTE, &bytes);
    MPIO_Completed_request_create(&fd, (MPI_Offset) bytes, error_code, request);
}

/* A read that must look at logs, done now.  Returns 0 if the file has no
 * logs and the lower driver takes the call. */
static int logged_iread(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                        int file_ptr_type, ADIO_Offset offset, int contig,
                        ADIO_Request * request, int *error_code)
{
    ADIO_Status st;

    if (!ADIOI_BBFS_Reads_logs(fd))
        return 0;
    ADIOI_BBFS_Log_read(fd, buf, count, datatype, file_ptr_type, offset, contig, &st,
                        error_code);
    if (*error_code == MPI_SUCCESS)
        completed(fd, &st, request, error_code);
    return 1;
}

/* A logged write, done now.  Returns 0 if writes go to the lower file. */
static int logged_iwrite(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, int contig,
                         ADIO_Request * request, int *error_code)
{
    ADIO_Status st;

    if (!ADIOI_BBFS_Logging(fd))
        return 0;
    ADIOI_BBFS_Log_write(fd, buf, count, datatype, file_ptr_type, offset, contig, &st,
                         error_code);
    if (*error_code == MPI_SUCCESS)
        completed(fd, &st, request, error_code);
    return 1;
}

void ADIOI_BBFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code)
{
    if (logged_iread(fd, buf, count, datatype, file_ptr_type, offset, 1, request,
                     error_code))
        return;

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IreadContig(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    if (logged_iwrite(fd, buf, count, datatype, file_ptr_type, offset, 1, request,
                      error_code))
        return;

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IwriteContig(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    if (logged_iread(fd, buf, count, datatype, file_ptr_type, offset, 0, request,
                     error_code))
        return;

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IreadStrided(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int *error_code)
{
    if (logged_iwrite(fd, buf, count, datatype, file_ptr_type, offset, 0, request,
                      error_code))
        return;

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IwriteStrided(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Request * request, int *error_code)
{
    ADIOI_BBFS_Log_collective(fd);
    if (!logged_iread(fd, buf, count, datatype, file_ptr_type, offset, 0, request,
                      error_code)) {
        ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
        ADIO_IreadStridedColl(lo, buf, count, datatype, file_ptr_type, offset, request,
                              error_code);
        ADIOI_BBFS_Lower_end(fd);
    }
    ADIOI_BBFS_Log_collective_end(fd);
}

void ADIOI_BBFS_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code)
{
    ADIOI_BBFS_Log_collective(fd);
    if (!logged_iwrite(fd, buf, count, datatype, file_ptr_type, offset, 0, request,
                       error_code)) {
        ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
        ADIO_IwriteStridedColl(lo, buf, count, datatype, file_ptr_type, offset, request,
                               error_code);
        ADIOI_BBFS_Lower_end(fd);
    }
    ADIOI_BBFS_Log_collective_end(fd);
}
