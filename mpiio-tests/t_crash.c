/* A writer killed after MPI_File_sync loses nothing the sync covered.
 *
 * On bbfs: every rank writes two epochs (vector pattern, then overwrites),
 * syncs, writes a third epoch it never syncs, and rank 1 kills itself with
 * SIGKILL, taking the job down.  The runner then runs bbfs-replay, which must
 * rebuild exactly the synced state.  On ufs: (the reference) the program
 * writes the two synced epochs and exits normally. */
#include "testlib.h"
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define BLK 16
#define NBLK 4096

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype vec, ftype;
    int P = tl_nprocs;
    long long region = (long long) NBLK * BLK * P;
    unsigned char *buf = malloc((size_t) NBLK * BLK);

    MPI_Type_vector(NBLK, BLK, BLK * P, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) region, &ftype);
    MPI_Type_commit(&ftype);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_set_view(fh, (MPI_Offset) tl_rank * BLK, MPI_BYTE, ftype, "native",
                             MPI_INFO_NULL));
    /* epoch 1: the whole region, interleaved */
    for (int b = 0; b < NBLK; b++)
        tl_fill(buf + b * BLK, BLK, (long long) b * BLK * P + tl_rank * BLK, 1);
    TL_MPI(MPI_File_write_all(fh, buf, NBLK * BLK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(fh));
    /* epoch 2: every rank rewrites its first 100 blocks */
    for (int b = 0; b < 100; b++)
        tl_fill(buf + b * BLK, BLK, (long long) b * BLK * P + tl_rank * BLK, 2);
    TL_MPI(MPI_File_write_at(fh, 0, buf, 100 * BLK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(fh));

    if (tl_is_bbfs(name)) {
        /* epoch 3, never synced: must not appear after recovery */
        for (int b = 0; b < NBLK; b++)
            tl_fill(buf + b * BLK, BLK, (long long) b * BLK * P + tl_rank * BLK, 3);
        TL_MPI(MPI_File_write_at(fh, 0, buf, NBLK * BLK, MPI_BYTE, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        if (tl_rank == 1)
            kill(getpid(), SIGKILL);
        sleep(30);              /* mpiexec takes the others down */
        tl_fail(__FILE__, __LINE__, "still alive after rank 1 was killed");
    }
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    free(buf);
    return tl_finish();
}
