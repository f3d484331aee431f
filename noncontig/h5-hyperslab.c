/*
 * h5-hyperslab — parallel HDF5's view of bbfs, the collective case: a 3-D
 * array of doubles split into one block per process (MPI_Dims_create's
 * grid), each process writing its block as a hyperslab with collective
 * transfers (H5FD_MPIO_COLLECTIVE: one MPI_File_write_at_all of a
 * noncontiguous file type per process).  Prints the slowest process's
 * seconds for the write (create to H5Dwrite) and the close (H5Dclose to
 * H5Fclose), and checks every element with a read-back, as h5-strided does.
 *
 *   h5-hyperslab FILE [EDGE]      (each block EDGE^3 doubles; default 100)
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
    int rank, np, grid[3] = { 0, 0, 0 }, periods[3] = { 0, 0, 0 }, at[3];
    MPI_Comm cart;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long edge_arg = argc > 2 ? atol(argv[2]) : 100;
    if (argc < 2 || edge_arg < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: h5-hyperslab FILE [EDGE]\n");
        MPI_Finalize();
        return 2;
    }
    hsize_t edge = (hsize_t) edge_arg;
    MPI_Dims_create(np, 3, grid);
    MPI_Cart_create(MPI_COMM_WORLD, 3, grid, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, at);
    hsize_t dims[3], start[3], count[3] = { edge, edge, edge };
    for (int k = 0; k < 3; k++) {
        dims[k] = edge * (hsize_t) grid[k];
        start[k] = edge * (hsize_t) at[k];
    }
    /* element (x, y, z) holds its row-major index: every byte is checkable */
    double *buf = malloc(edge * edge * edge * sizeof(double));
    for (hsize_t x = 0; x < edge; x++)
        for (hsize_t y = 0; y < edge; y++)
            for (hsize_t z = 0; z < edge; z++)
                buf[(x * edge + y) * edge + z] =
                    (double) (((start[0] + x) * dims[1] + start[1] + y) * dims[2] + start[2] + z);

    int bad = h5_check_run(argv[1], "cube", 3, dims, start, NULL, count, H5FD_MPIO_COLLECTIVE,
                           buf);
    free(buf);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return bad;
}
