/* Under bbfs_consistency posix, writes land in time order, as on a POSIX
 * file system, even when only a barrier orders them: HDF5 writes the same
 * bytes from two processes that way (a chunk's fill, then another
 * process's data; metadata rewritten by another process).  MPI-IO leaves
 * such writes undefined without sync-barrier-sync; posix promises POSIX.
 *
 * Region k (one per process): process k writes it all, barrier, process
 * k+1 writes its first half, barrier, process k+2 writes its first quarter;
 * then every process reads every region, before and after close, and the
 * runner compares the file with ufs:. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>

#define REGION 4096

static void check(MPI_File fh, const char *when)
{
    unsigned char *got = malloc(REGION);
    char what[160];
    MPI_Status st;

    for (int k = 0; k < tl_nprocs; k++) {
        MPI_Offset o = (MPI_Offset) k * REGION;
        TL_MPI(MPI_File_read_at(fh, o, got, REGION, MPI_BYTE, &st));
        snprintf(what, sizeof(what), "%s, region %d", when, k);
        tl_verify(got, REGION / 4, o, 3, what);
        tl_verify(got + REGION / 4, REGION / 4, o + REGION / 4, 2, what);
        tl_verify(got + REGION / 2, REGION / 2, o + REGION / 2, 1, what);
    }
    free(got);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char *buf = malloc(REGION);
    MPI_File fh;
    MPI_Status st;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    for (int step = 0; step < 3; step++) {
        /* step s: process (k + s) writes REGION >> s bytes of region k */
        for (int k = 0; k < tl_nprocs; k++) {
            if ((k + step) % tl_nprocs != tl_rank)
                continue;
            MPI_Offset o = (MPI_Offset) k * REGION;
            tl_fill(buf, REGION >> step, o, step + 1);
            TL_MPI(MPI_File_write_at(fh, o, buf, REGION >> step, MPI_BYTE, &st));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    check(fh, "before close");
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check(fh, "after close");
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    return tl_finish();
}
