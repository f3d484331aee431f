/* Atomic mode turned on in the middle of a session: set_atomicity replays
 * the logs into the file and process 0 then removes the session (its
 * manifest, and the sessions directory with it) while the others, already
 * out of the call, read at once.  A read that listed the sessions
 * directory just as it went failed with MPI_ERR_NO_SUCH_FILE ("cannot list
 * the manifests": HDF5's testphdf5 atomicity test, once in about 30 runs).
 * Many rounds, to meet that moment: each round, rank 0 writes a block
 * (logged), everyone turns atomic mode on, and every process reads the
 * block at once and must see it (the replay put it in the file), then
 * everyone closes.  Needs 2 or more processes. */
#include "testlib.h"
#include <string.h>

#define BLOCK 4096
#define ROUNDS 150

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char buf[BLOCK], got[BLOCK];

    TL_CHECK(tl_nprocs >= 2, "needs 2 or more processes");
    for (int round = 0; round < ROUNDS; round++) {
        MPI_File fh;
        MPI_Offset at = (MPI_Offset) (round % 8) * BLOCK;
        TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh));
        if (tl_rank == 0) {
            tl_fill(buf, BLOCK, at, round + 1);
            TL_MPI(MPI_File_write_at(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        TL_MPI(MPI_File_set_atomicity(fh, 1));
        memset(got, 0, BLOCK);
        TL_MPI(MPI_File_read_at(fh, at, got, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        tl_verify(got, BLOCK, at, round + 1, "a read right after set_atomicity");
        TL_MPI(MPI_File_close(&fh));
    }
    return tl_finish();
}
