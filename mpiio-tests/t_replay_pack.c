/* Replay rounds hold whole pieces while they fit (bbfs_replay_buffer=64k
 * here), so a replayer whose share is pieces of 0.6 rounds with holes
 * between needs one round per piece: more rounds than its bytes divided by
 * the round size.  The replay used to count rounds that way and left the
 * last pieces of each share unwritten (a silent loss, logs then deleted).
 *
 * Each process writes PIECES pieces of 40000 bytes, 10000-byte holes
 * between, interleaved with the other processes'; after close every piece
 * is read back, and the runner compares the file with ufs:. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>

#define PIECES 6
#define PIECE 40000
#define SLOT 50000

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char *buf = malloc(PIECE);
    MPI_File fh;
    MPI_Status st;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    for (int i = 0; i < PIECES; i++) {
        MPI_Offset o = ((MPI_Offset) i * tl_nprocs + tl_rank) * SLOT;
        tl_fill(buf, PIECE, o, 1);
        TL_MPI(MPI_File_write_at(fh, o, buf, PIECE, MPI_BYTE, &st));
    }
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int k = 0; k < PIECES * tl_nprocs; k++) {
        char what[80];
        TL_MPI(MPI_File_read_at(fh, (MPI_Offset) k * SLOT, buf, PIECE, MPI_BYTE, &st));
        snprintf(what, sizeof(what), "piece %d after the replay", k);
        tl_verify(buf, PIECE, (long long) k * SLOT, 1, what);
    }
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    return tl_finish();
}
