/*
 * Nonblocking reads and writes, forwarded like the blocking ones.  The lower
 * driver creates the request; completion goes through ROMIO's generic
 * request functions, which do not depend on the driver.
 */
#include "ad_bbfs.h"
#include "adioi.h"

void ADIOI_BBFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IreadContig(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IwriteContig(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IreadStrided(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IwriteStrided(lo, buf, count, datatype, file_ptr_type, offset, request, error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Request * request, int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IreadStridedColl(lo, buf, count, datatype, file_ptr_type, offset, request,
                          error_code);
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);
    ADIO_IwriteStridedColl(lo, buf, count, datatype, file_ptr_type, offset, request,
                           error_code);
    ADIOI_BBFS_Lower_end(fd);
}
