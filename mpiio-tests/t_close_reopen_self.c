/* A collective close, then each process opens the file again on its own
 * (MPI_COMM_SELF, read-only) and reads another process's block at once,
 * as HDF5's t_chunk_alloc checks a file's size after H5Fclose.  A process
 * leaves the close before process 0 has told the map's server that the
 * session is in the file: across nodes the reopened handle's read was
 * sent to a datalog the close had removed ("not a log in the server's log
 * directories", in 2 of 3 runs of 200 rounds); on one node its listing of
 * the sessions met the directory's removal.  Many rounds, to meet that
 * moment: each writes every process's block (independent and collective
 * writes, by turns), closes, reads back the next process's block on its
 * own handle.  Needs 2 or more processes. */
#include "testlib.h"
#include <string.h>

#define BLOCK 4096
#define ROUNDS 120

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char buf[BLOCK], got[BLOCK];

    TL_CHECK(tl_nprocs >= 2, "needs 2 or more processes");
    int peer = (tl_rank + 1) % tl_nprocs;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_File fh;
        MPI_Offset mine = (MPI_Offset) tl_rank * BLOCK, theirs = (MPI_Offset) peer * BLOCK;
        TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh));
        tl_fill(buf, BLOCK, mine, round + 1);
        if (round % 2)
            TL_MPI(MPI_File_write_at_all(fh, mine, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        else
            TL_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        TL_MPI(MPI_File_close(&fh));
        TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        memset(got, 0, BLOCK);
        TL_MPI(MPI_File_read_at(fh, theirs, got, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        tl_verify(got, BLOCK, theirs, round + 1, "a read on a handle of its own, after the close");
        TL_MPI(MPI_File_close(&fh));
    }
    return tl_finish();
}
