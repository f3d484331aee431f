/*
 * What h5-strided and h5-hyperslab share: reading the whole dataset back
 * (element i must hold i) and the line h5-bench.sh parses.
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

/* Rank 0 prints the slowest process's write and close seconds and whether
 * any process read wrong data.  Collective; @return that verdict. */
static int h5_check_report(const char *file, double write_s, double close_s, int bad)
{
    int rank, anybad;
    double wm, cm;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&write_s, &wm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&close_s, &cm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s write %.3f close %.3f total %.3f %s\n", file, wm, cm, wm + cm,
               anybad ? "WRONG DATA" : "ok");
    return anybad;
}

#endif
