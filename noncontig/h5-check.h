/*
 * What h5-strided and h5-hyperslab share: the timed write of one
 * hyperslab per process, reading the whole dataset back (element i must
 * hold i) and the line h5-bench.sh parses.
 */
#ifndef H5_CHECK_H
#define H5_CHECK_H

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* @return nonzero unless every one of the n doubles of dataset name in
 * file reads back as its index (every process reads them all). */
static int h5_check_read_back(const char *file, const char *name, hsize_t n, hid_t fapl)
{
    int bad = 0;
    double *all = malloc(n * sizeof(double));
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, fapl);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (!all || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) < 0)
        bad = 1;
    for (hsize_t i = 0; i < n && !bad; i++)
        bad = all[i] != (double) i;
    H5Dclose(d);
    H5Fclose(f);
    free(all);
    return bad;
}

/* Rank 0 prints the slowest process's write and create-to-close seconds,
 * the close as what that total adds to the write (each process's own close
 * time would count waiting there for a slower writer as close), and
 * whether any process read wrong data.  Collective; @return that verdict. */
static int h5_check_report(const char *file, double write_s, double total_s, int bad)
{
    int rank, anybad;
    double wm, tm;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&write_s, &wm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&total_s, &tm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s write %.3f close %.3f total %.3f %s\n", file, wm, tm - wm, tm,
               anybad ? "WRONG DATA" : "ok");
    return anybad;
}

/* Every process writes buf as its hyperslab (start, stride, count) of an
 * ndims-dimensional dataset of doubles in a new file, with transfer mode
 * mode; times create to H5Dwrite and create to H5Fclose, reads the
 * dataset back and reports.  Collective; @return nonzero if any process
 * failed or read wrong data. */
static int h5_check_run(const char *file, const char *name, int ndims, const hsize_t *dims,
                        const hsize_t *start, const hsize_t *stride, const hsize_t *count,
                        H5FD_mpio_xfer_t mode, const double *buf)
{
    int bad = 0;
    hsize_t total = 1;
    for (int k = 0; k < ndims; k++)
        total *= dims[k];

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t space = H5Screate_simple(ndims, dims, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, NULL);
    hid_t mem = H5Screate_simple(ndims, count, NULL);
    hid_t dx = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dx, mode);
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, dx, buf) < 0)
        bad = 1;
    double t1 = MPI_Wtime();
    H5Dclose(d);
    H5Fclose(f);
    double t2 = MPI_Wtime();

    bad |= h5_check_read_back(file, name, total, fapl);
    H5Sclose(space);
    H5Sclose(mem);
    H5Pclose(dx);
    H5Pclose(fapl);
    return h5_check_report(file, t1 - t0, t2 - t0, bad);
}

#endif
