/* posix_after_sync.c - a POSIX read of a file that is open for writing,
 * after MPI_File_sync, as PnetCDF's ncmpi_open does (ncmpi_inq_file_format
 * reads the 8-byte signature with open/read, on the name without its
 * prefix) when a second handle is opened on a file still being written
 * (nc_test's test_ncmpi_sync).
 *
 *   mpiexec -n 4 ./posix_after_sync PREFIX:/path/file
 *
 * Process 0 writes "CDF\1...." (8 bytes), every process syncs, barrier,
 * syncs; then process 0 reads the first 8 bytes with POSIX read().
 * ufs: 8 bytes.  MPI_File_sync "transfers all previous writes to the storage
 * device"; a POSIX reader is outside MPI-IO's promises, but PnetCDF relies
 * on it.
 */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, bad = 0;
    const char *path;
    char sig[8] = {'C', 'D', 'F', 1, 0, 0, 0, 0}, got[8];
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) { if (!rank) fprintf(stderr, "usage: %s file\n", argv[0]); MPI_Abort(MPI_COMM_WORLD, 2); }
    path = strchr(argv[1], ':') ? strchr(argv[1], ':') + 1 : argv[1];
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rank == 0) MPI_File_write_at(fh, 0, sig, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    if (rank == 0) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : read(fd, got, 8);
        if (fd >= 0) close(fd);
        printf("POSIX read of %s while open, after sync: %zd bytes%s\n", path, n,
               n == 8 && memcmp(got, sig, 8) == 0 ? " (the signature)" : " (expected the 8-byte signature)");
        bad = !(n == 8 && memcmp(got, sig, 8) == 0);
    }
    MPI_File_close(&fh);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 && !bad) printf("No Errors\n");
    MPI_Finalize();
    return bad;
}
