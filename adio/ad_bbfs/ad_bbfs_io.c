/*
 * Blocking reads and writes.  While the file logs, writes go to the logs and
 * reads merge logs and canonical file (ad_bbfs_write.c, ad_bbfs_read.c).
 * Otherwise (read-only open, atomic mode) the access goes to the canonical
 * file through the lower driver, with the view and file pointer of the bbfs
 * handle (see ADIOI_BBFS_Lower_begin).
 */
#include "ad_bbfs.h"
#include "adioi.h"

/* A logged collective access needs no communication, but ROMIO's ordered
 * (shared file pointer) calls and seek_shared rely on the collective I/O
 * inside them to keep processes together: without it, a process can move
 * the shared pointer before a slower one has taken its turn.  Keep that
 * synchronisation whenever the shared pointer is in use. */
static void ordered_sync(ADIO_File fd)
{
    if (fd->shared_fp_fd != ADIO_FILE_NULL)
        MPI_Barrier(fd->comm);
}

void ADIOI_BBFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int *error_code)
{
    if (ADIOI_BBFS_Reads_logs(fd)) {
        ADIOI_BBFS_Log_read(fd, buf, count, datatype, file_ptr_type, offset, 1, status,
                            error_code);
        return;
    }

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_ReadContig(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    if (ADIOI_BBFS_Logging(fd)) {
        ADIOI_BBFS_Log_write(fd, buf, count, datatype, file_ptr_type, offset, 1, status,
                             error_code);
        return;
    }

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_WriteContig(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    if (ADIOI_BBFS_Reads_logs(fd)) {
        ADIOI_BBFS_Log_read(fd, buf, count, datatype, file_ptr_type, offset, 0, status,
                            error_code);
        return;
    }

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_ReadStrided(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    if (ADIOI_BBFS_Logging(fd)) {
        ADIOI_BBFS_Log_write(fd, buf, count, datatype, file_ptr_type, offset, 0, status,
                             error_code);
        return;
    }

    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_WriteStrided(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                int *error_code)
{
    ADIOI_BBFS_Log_collective(fd);
    if (ADIOI_BBFS_Reads_logs(fd)) {
        ADIOI_BBFS_Log_read(fd, buf, count, datatype, file_ptr_type, offset, 0, status,
                            error_code);
        ordered_sync(fd);
    } else {
        ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
        ADIO_ReadStridedColl(lo, buf, count, datatype, file_ptr_type, offset, status,
                             error_code);
        ADIOI_BBFS_Lower_end(fd);
    }
    ADIOI_BBFS_Log_collective_end(fd);
}

void ADIOI_BBFS_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code)
{
    ADIOI_BBFS_Log_collective(fd);
    if (ADIOI_BBFS_Logging(fd)) {
        ADIOI_BBFS_Log_write(fd, buf, count, datatype, file_ptr_type, offset, 0, status,
                             error_code);
        ordered_sync(fd);
    } else {
        ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
        ADIO_WriteStridedColl(lo, buf, count, datatype, file_ptr_type, offset, status,
                              error_code);
        ADIOI_BBFS_Lower_end(fd);
    }
    ADIOI_BBFS_Log_collective_end(fd);
}
