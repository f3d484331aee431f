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
    int rank, np, bad = 0;
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

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims = n * np, start = rank, stride = np, count = n;
    hid_t space = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(f, "strided", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, &stride, &count, NULL);
    hid_t mem = H5Screate_simple(1, &count, NULL);
    hid_t dx = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dx, H5FD_MPIO_INDEPENDENT);
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, dx, buf) < 0)
        bad = 1;
    double t1 = MPI_Wtime();
    H5Dclose(d);
    H5Fclose(f);
    double t2 = MPI_Wtime();

    /* read back: the whole dataset, every process */
    bad |= h5_check_read_back(argv[1], "strided", dims, fapl);
    H5Sclose(space);
    H5Sclose(mem);
    H5Pclose(dx);
    H5Pclose(fapl);
    int anybad = h5_check_report(argv[1], t1 - t0, t2 - t1, bad);
    free(buf);
    MPI_Finalize();
    return anybad;
}
