/*
 * Blocking reads and writes.  At this stage of bbfs every access goes to the
 * canonical file through the lower driver, with the view and file pointer of
 * the bbfs handle (see ADIOI_BBFS_Lower_begin).
 */
#include "ad_bbfs.h"
#include "adioi.h"

void ADIOI_BBFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_ReadContig(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_WriteContig(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_ReadStrided(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_WriteStrided(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_ReadStridedColl(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_WriteStridedColl(lo, buf, count, datatype, file_ptr_type, offset, status, error_code);
    ADIOI_BBFS_Lower_end(fd);
}
