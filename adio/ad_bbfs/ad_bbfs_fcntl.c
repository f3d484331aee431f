/*
 * File-level control: size, preallocation, atomicity, sync, resize, locks.
 * All of them concern the canonical file, so they go to the lower handle.
 */
#include "ad_bbfs.h"
#include "adioi.h"

void ADIOI_BBFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    ADIO_File lo = ADIOI_BBFS_Lower_begin(fd);

    ADIO_Fcntl(lo, flag, fcntl_struct, error_code);
    if (flag == ADIO_FCNTL_SET_ATOMICITY && *error_code == MPI_SUCCESS)
        fd->atomicity = lo->atomicity;
    ADIOI_BBFS_Lower_end(fd);
}

void ADIOI_BBFS_Flush(ADIO_File fd, int *error_code)
{
    ADIO_Flush(ADIOI_BBFS_Private(fd)->lower, error_code);
}

void ADIOI_BBFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    ADIO_Resize(ADIOI_BBFS_Private(fd)->lower, size, error_code);
}

int ADIOI_BBFS_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len)
{
    ADIO_File lo = ADIOI_BBFS_Private(fd)->lower;

    return (*(lo->fns->ADIOI_xxx_SetLock)) (lo, cmd, type, offset, whence, len);
}
