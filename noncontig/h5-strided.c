/*
 * h5-strided — parallel HDF5's view of bbfs (Debian's libhdf5-mpich): a
 * 1-D dataset of doubles where each process writes every nprocs-th element
 * with independent transfers.  HDF5 turns that selection into one 8-byte
 * MPI_File_write_at per element.  Prints the slowest process's seconds for
 * the write (create to H5Dwrite) and the close (H5Dclose to H5Fclose), and
 * checks every element with a read-back.
 *
 *   h5-strided FILE [ELEMENTS_PER_PROCESS]      (default 1048576)
 *
 * Built and run by noncontig/h5-bench.sh.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "h5-check.h"

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: h5-strided FILE [ELEMENTS_PER_PROCESS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t n = argc > 2 ? (hsize_t) atol(argv[2]) : (hsize_t) 1 << 20;
    double *buf = malloc(n * sizeof(double));
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (double) (i * np + rank);

    hsize_t dims = n * np, start = rank, stride = np;
    int bad = h5_check_run(argv[1], "strided", 1, &dims, &start, &stride, &n,
                           H5FD_MPIO_INDEPENDENT, buf);
    free(buf);
    MPI_Finalize();
    return bad;
}
