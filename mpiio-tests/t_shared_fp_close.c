/* A process that closes right after its shared-pointer write does not take
 * the pointer away from the others: the last process writes one record
 * through the shared pointer and closes at once (not process 0, which
 * waits for the others in any collective rooted at it); the others write
 * theirs 0.3 s later.  ROMIO deletes the pointer's file at the close, after
 * a barrier.  Were the file deleted while the others had not yet used it,
 * their pointer would start again at 0 and one record would land on the
 * first one's: the file would hold nprocs - 1 records.  (It did, in
 * session 52, where MPI_File_close left that barrier to a driver that said
 * its close ordered the processes and under bbfs_force_remote and
 * bbfs_replay never did not: the _never spec.) */
#include "testlib.h"
#include <string.h>
#include <unistd.h>

#define REC 4096

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char rec[REC], got[REC];
    MPI_File fh;
    MPI_Offset size;

    /* (the same bytes from every process: the file is alike whatever
     * order the records took) */
    tl_fill(rec, REC, 0, 7);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    if (tl_rank != tl_nprocs - 1)
        usleep(300 * 1000);
    TL_MPI(MPI_File_write_shared(fh, rec, REC, MPI_BYTE, MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));

    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0) {
        TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        TL_MPI(MPI_File_get_size(fh, &size));
        TL_CHECK(size == (MPI_Offset) tl_nprocs * REC, "the file holds %lld bytes, expected %d "
                 "records of %d (a record landed on another: the shared pointer started again)",
                 (long long) size, tl_nprocs, REC);
        for (int r = 0; r < tl_nprocs; r++) {
            memset(got, 0, REC);
            TL_MPI(MPI_File_read_at(fh, (MPI_Offset) r * REC, got, REC, MPI_BYTE,
                                    MPI_STATUS_IGNORE));
            TL_CHECK(memcmp(got, rec, REC) == 0, "record %d is not what was written", r);
        }
        TL_MPI(MPI_File_close(&fh));
    }
    return tl_finish();
}
