/* waw_barrier.c - write-after-write by two processes, ordered only by a
 * barrier (no MPI_File_sync), as HDF5 does when it fills chunks collectively
 * and then lets other ranks write data into them.
 *
 *   mpiexec -n 4 ./waw_barrier PREFIX:/path/file [coll]
 *
 * The last process writes 'F' (the "fill") over [0, N), barrier, then
 * process 0 writes 'D' (the "data") over the first half.  After the close
 * every process reads [0, N): POSIX (and ROMIO on ufs:) give D...DF...F.
 * MPI's non-atomic mode leaves conflicting writes of different processes
 * without sync-barrier-sync undefined, but this is what HDF5 relies on.
 * With "coll" the fill is one MPI_File_write_at_all (the other processes
 * writing nothing), as in HDF5's H5D__chunk_collective_fill.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 4096

int main(int argc, char **argv)
{
    int rank, size, bad = 0, i, first_bad = -1, coll;
    char buf[N];
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) { if (!rank) fprintf(stderr, "usage: %s file\n", argv[0]); MPI_Abort(MPI_COMM_WORLD, 2); }
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    coll = argc > 2 && strcmp(argv[2], "coll") == 0;
    memset(buf, 'F', N);
    if (coll)
        MPI_File_write_at_all(fh, 0, buf, rank == size - 1 ? N : 0, MPI_CHAR, MPI_STATUS_IGNORE);
    else if (rank == size - 1)
        MPI_File_write_at(fh, 0, buf, N, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        memset(buf, 'D', N / 2);
        MPI_File_write_at(fh, 0, buf, N / 2, MPI_CHAR, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* what process 0 reads back before the close (its own write) */
    if (rank == 0) {
        memset(buf, 0, N);
        MPI_File_read_at(fh, 0, buf, N, MPI_CHAR, MPI_STATUS_IGNORE);
        printf("before close, process 0 reads: byte 0 = '%c', byte %d = '%c'\n", buf[0], N / 2, buf[N / 2]);
    }
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    memset(buf, 0, N);
    MPI_File_read_at(fh, 0, buf, N, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    for (i = 0; i < N; i++)
        if (buf[i] != (i < N / 2 ? 'D' : 'F')) { bad++; if (first_bad < 0) first_bad = i; }
    if (rank == 0) {
        if (bad) printf("after close: %d bytes wrong, first at %d: '%c' (expected '%c')\n",
                        bad, first_bad, buf[first_bad], first_bad < N / 2 ? 'D' : 'F');
        else printf("after close: D...DF...F as written in time order: No Errors\n");
    }
    MPI_Finalize();
    return bad != 0;
}
