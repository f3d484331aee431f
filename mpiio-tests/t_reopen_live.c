/* Close and open again while another handle of the file stays open: the
 * close→open construct must show the closed handle's writes to the new
 * handle.  With another handle live, the open may not replay the closed
 * session (it could land under that handle's older writes), so the new
 * handle reads it from the pending logs.
 *
 * K: the file on MPI_COMM_WORLD, open throughout, writing nothing.
 * A: each process writes its blocks, closes; A': the same communicator
 * opens again and each process reads every other process's blocks.
 * Then A' writes a second round, closes, and a third open reads it (two
 * pending sessions in order).  The runner compares the file with ufs:. */
#include "testlib.h"
#include <stdlib.h>

#define BLOCK 8192
#define BLOCKS 8

static MPI_Offset at(int r, int b)
{
    return ((MPI_Offset) r * BLOCKS + b) * BLOCK;
}

static void write_mine(MPI_File fh, int tag)
{
    unsigned char *buf = malloc(BLOCK);
    MPI_Status st;
    for (int b = 0; b < BLOCKS; b++) {
        tl_fill(buf, BLOCK, at(tl_rank, b), tag);
        TL_MPI(MPI_File_write_at(fh, at(tl_rank, b), buf, BLOCK, MPI_BYTE, &st));
    }
    free(buf);
}

static void read_all(MPI_File fh, int tag, const char *what)
{
    unsigned char *buf = malloc(BLOCK);
    MPI_Status st;
    for (int k = 1; k <= tl_nprocs; k++) {
        int r = (tl_rank + k) % tl_nprocs;
        for (int b = 0; b < BLOCKS; b++) {
            TL_MPI(MPI_File_read_at(fh, at(r, b), buf, BLOCK, MPI_BYTE, &st));
            tl_verify(buf, BLOCK, at(r, b), tag, what);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File keeper, fh;
    int rw = MPI_MODE_RDWR;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, rw | MPI_MODE_CREATE, MPI_INFO_NULL, &keeper));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, rw, MPI_INFO_NULL, &fh));
    write_mine(fh, 1);
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, rw, MPI_INFO_NULL, &fh));
    read_all(fh, 1, "after close and open, with another handle open");
    MPI_Barrier(MPI_COMM_WORLD);        /* everyone has read round 1 */
    write_mine(fh, 2);
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, rw, MPI_INFO_NULL, &fh));
    read_all(fh, 2, "after a second close and open, with another handle open");
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_close(&keeper));
    return tl_finish();
}
