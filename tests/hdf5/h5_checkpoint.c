/* A parallel HDF5 checkpoint, as applications write them, built with
 * Debian's h5pcc.mpich against Debian's libhdf5-mpich and run on the bbfs
 * MPICH (docs/hdf5-pnetcdf.md):
 *
 *   h5_checkpoint write FILE [KEY=VALUE ...]   write, hints go to H5Pset_fapl_mpio
 *   h5_checkpoint read FILE [KEY=VALUE ...]    read back and check every value
 *
 * Datasets: "strided", 1-D doubles where process r writes every nprocs-th
 * element (independent transfers: HDF5 turns it into many small writes);
 * "grid", a 3-D array in slabs along the first axis (collective); and
 * "chunked", chunked with a fill value, half written (HDF5 writes the fill
 * values and then the data in collective calls).  Prints "No Errors". */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N1 4096                 /* elements per process in "strided" */
#define NX 8                    /* "grid" planes per process */
#define NY 32
#define NZ 16
#define NC 1024                 /* "chunked" elements per process */

static int rank, nprocs, errors;

#define CHECK(call) do { if ((call) < 0) { \
    fprintf(stderr, "[%d] %s:%d: %s failed\n", rank, __FILE__, __LINE__, #call); \
    MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static double value(int set, long long i)
{
    return set * 1e9 + (double) i * 0.5;
}

static void expect(double got, double want, const char *what, long long i)
{
    if (got != want && errors++ < 5)
        fprintf(stderr, "[%d] %s[%lld] = %g, expected %g\n", rank, what, i, got, want);
}

static hid_t open_file(const char *name, int create, int argc, char **argv)
{
    MPI_Info info;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;

    MPI_Info_create(&info);
    for (int i = 3; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "hint %s is not KEY=VALUE\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        *eq = '\0';
        MPI_Info_set(info, argv[i], eq + 1);
        *eq = '=';
    }
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info));
    f = create ? H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
        : H5Fopen(name, H5F_ACC_RDONLY, fapl);
    CHECK(f);
    H5Pclose(fapl);
    MPI_Info_free(&info);
    return f;
}

static void strided(hid_t f, int write)
{
    hsize_t dims = (hsize_t) N1 * nprocs, start = rank, stride = nprocs, count = N1;
    hid_t space = H5Screate_simple(1, &dims, NULL), mem = H5Screate_simple(1, &count, NULL);
    hid_t d = write ? H5Dcreate2(f, "strided", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT) : H5Dopen2(f, "strided", H5P_DEFAULT);
    double *buf = malloc(sizeof(double) * N1);

    CHECK(d);
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, &stride, &count, NULL));
    if (write) {
        for (long long i = 0; i < N1; i++)
            buf[i] = value(1, rank + i * nprocs);
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
    } else {
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        for (long long i = 0; i < N1; i++)
            expect(buf[i], value(1, rank + i * nprocs), "strided", rank + i * nprocs);
    }
    free(buf);
    H5Dclose(d);
    H5Sclose(mem);
    H5Sclose(space);
}

static void grid(hid_t f, int write)
{
    hsize_t dims[3] = { (hsize_t) NX * nprocs, NY, NZ }, start[3] = { (hsize_t) NX * rank, 0, 0 };
    hsize_t count[3] = { NX, NY, NZ };
    hid_t space = H5Screate_simple(3, dims, NULL), mem = H5Screate_simple(3, count, NULL);
    hid_t d = write ? H5Dcreate2(f, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT) : H5Dopen2(f, "grid", H5P_DEFAULT);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    size_t n = (size_t) NX * NY * NZ;
    double *buf = malloc(sizeof(double) * n);
    long long first = (long long) rank * n;

    CHECK(d);
    CHECK(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    if (write) {
        for (size_t i = 0; i < n; i++)
            buf[i] = value(2, first + (long long) i);
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, xfer, buf));
    } else {
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, xfer, buf));
        for (size_t i = 0; i < n; i++)
            expect(buf[i], value(2, first + (long long) i), "grid", first + (long long) i);
    }
    free(buf);
    H5Pclose(xfer);
    H5Dclose(d);
    H5Sclose(mem);
    H5Sclose(space);
}

/* Chunks span processes; only the first half of each process's part is
 * written, the rest must read as the fill value. */
static void chunked(hid_t f, int write)
{
    hsize_t dims = (hsize_t) NC * nprocs, chunk = NC / 2 + 100, start = (hsize_t) NC * rank;
    hsize_t count = NC / 2, all = NC;
    double fill = -7.25, *buf = malloc(sizeof(double) * NC);
    hid_t space = H5Screate_simple(1, &dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER), d, mem;

    CHECK(H5Pset_chunk(dcpl, 1, &chunk));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill));
    CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC));
    CHECK(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE));
    d = write ? H5Dcreate2(f, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                           H5P_DEFAULT) : H5Dopen2(f, "chunked", H5P_DEFAULT);
    CHECK(d);
    if (write) {
        mem = H5Screate_simple(1, &count, NULL);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL));
        for (hsize_t i = 0; i < count; i++)
            buf[i] = value(3, (long long) (start + i));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, xfer, buf));
    } else {
        mem = H5Screate_simple(1, &all, NULL);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &all, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, xfer, buf));
        for (hsize_t i = 0; i < all; i++)
            expect(buf[i], i < count ? value(3, (long long) (start + i)) : fill, "chunked",
                   (long long) (start + i));
    }
    free(buf);
    H5Sclose(mem);
    H5Pclose(xfer);
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Sclose(space);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
        if (rank == 0)
            fprintf(stderr, "usage: %s write|read FILE [KEY=VALUE ...]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int write = !strcmp(argv[1], "write");
    hid_t f = open_file(argv[2], write, argc, argv);

    strided(f, write);
    grid(f, write);
    chunked(f, write);
    CHECK(H5Fclose(f));

    int all;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "Found %d errors\n" : "No Errors\n", all);
    MPI_Finalize();
    return all != 0;
}
