/*
 * Closing a bbfs file ends the last epoch, replays the logs unless replay is
 * deferred (bbfs_replay), closes the lower file and releases the stack.
 */
#include "ad_bbfs.h"
#include "adioi.h"

void ADIOI_BBFS_Close(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIO_File lo = bf->lower;
    MPI_File lower_handle;
    int close_err;
    double t0 = MPI_Wtime();

    ADIOI_BBFS_Sync_leave(bf);

    ADIOI_BBFS_Log_close(fd, bf->hints.replay == ADIOI_BBFS_REPLAY_ON_CLOSE
                         || bf->hints.replay == ADIOI_BBFS_REPLAY_ON_SYNC, error_code);
    ADIOI_BBFS_Private_leave(bf);
    ADIOI_BBFS_Remote_reset(bf);        /* a view of other handles' logs */
    ADIOI_BBFS_View_logs_close(bf);     /* (the logs' end closed them, but for a failed one) */
    ADIOI_BBFS_FREE(bf->view_sizes);
    ADIOI_BBFS_FREE(bf->sizes_seen);
    ADIOI_BBFS_FREE(bf->view_marks);
    ADIOI_BBFS_FREE(bf->size_marks);
    ADIOI_BBFS_FREE(bf->size_sizes);
    if (!bf->lower_closed) {    /* (else the replay closed it, before removing the logs) */
        ADIOI_BBFS_Lower_close(lo, &close_err);
        if (*error_code == MPI_SUCCESS)
            *error_code = close_err;
    }
    lower_handle = lo;
    MPIO_File_free(&lower_handle);

    ADIOI_BBFS_Server_close(bf);
    if (bf->hints.timing) {
        bf->times.close += MPI_Wtime() - t0;
        ADIOI_BBFS_Times_report(fd);
    }
    if (bf->open_info != MPI_INFO_NULL)
        MPI_Info_free(&bf->open_info);
    ADIOI_BBFS_FREE(bf->replayed);
    ADIOI_BBFS_FREE(bf->canonical);
    ADIOI_BBFS_File_free(bf);
    /* (the shared pointer's name this driver made, where MPI_File_close
     * did not free it: a lower driver without shared pointers, or a close
     * from ADIO_Open after another process's open failed) */
    ADIOI_BBFS_FREE(fd->shared_fp_fname);
    fd->shared_fp_fname = NULL;
    fd->fs_ptr = NULL;
    fd->fd_sys = -1;
}
