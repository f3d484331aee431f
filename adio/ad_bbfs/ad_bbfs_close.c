/*
 * Closing a bbfs file closes the lower file and releases the stack.
 */
#include "ad_bbfs.h"
#include "adioi.h"

void ADIOI_BBFS_Close(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIO_File lo = bf->lower;
    MPI_File lower_handle;

    /* The lower handle only borrowed the view; ADIO_Close would free it. */
    lo->etype = MPI_BYTE;
    lo->filetype = MPI_BYTE;
    ADIO_Close(lo, error_code);
    lower_handle = lo;
    MPIO_File_free(&lower_handle);

    if (bf->open_info != MPI_INFO_NULL)
        MPI_Info_free(&bf->open_info);
    ADIOI_Free(bf);
    fd->fs_ptr = NULL;
    fd->fd_sys = -1;
}
