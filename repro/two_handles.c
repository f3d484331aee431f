/* two_handles.c - one file open through two handles, as PnetCDF does (the
 * collective handle on the communicator, the independent one on
 * MPI_COMM_SELF).
 *
 *   mpiexec -n 4 ./two_handles PREFIX:/path/file
 *
 * 1. handle A (MPI_COMM_WORLD) writes "OLD" at offset 0 (process 0 only);
 * 2. handle B (MPI_COMM_SELF) is opened, process 0 writes "NEW" at offset 0
 *    through it, and MPI_File_sync(B), MPI_File_sync(A) both run;
 * 3. B is closed, then A (PnetCDF's order in ncmpi_close).
 * POSIX, ROMIO on ufs: the file starts with "NEW" (the later write).
 * Then a read-only open while A is open for writing (PnetCDF's nc_test
 * test_ncmpi_sync) is tried.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, err, len, bad = 0;
    char buf[4] = {0}, msg[MPI_MAX_ERROR_STRING];
    MPI_File a, b, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) { if (!rank) fprintf(stderr, "usage: %s file\n", argv[0]); MPI_Abort(MPI_COMM_WORLD, 2); }
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    /* part 1: later write through another handle */
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &a);
    if (rank == 0) MPI_File_write_at(a, 0, "OLD", 3, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_sync(a);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDWR, MPI_INFO_NULL, &b);
    if (rank == 0) MPI_File_write_at(b, 0, "NEW", 3, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_sync(b);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(a);
    MPI_File_close(&b);
    MPI_File_close(&a);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &r);
    MPI_File_read_at(r, 0, buf, 3, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&r);
    if (rank == 0) printf("part 1: file starts with \"%.3s\" (expected \"NEW\")\n", buf);
    if (strncmp(buf, "NEW", 3)) bad++;

    /* part 2: a second, read-only open while the file is open for writing */
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDWR, MPI_INFO_NULL, &a);
    if (rank == 0) MPI_File_write_at(a, 0, "ABC", 3, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_sync(a);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(a);
    err = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &r);
    if (err != MPI_SUCCESS) {
        MPI_Error_string(err, msg, &len);
        if (rank == 0) printf("part 2: read-only open while open for writing failed: %s\n", msg);
        bad++;
    } else {
        memset(buf, 0, sizeof buf);
        MPI_File_read_at(r, 0, buf, 3, MPI_CHAR, MPI_STATUS_IGNORE);
        if (rank == 0) printf("part 2: second handle reads \"%.3s\" (expected \"ABC\")\n", buf);
        if (strncmp(buf, "ABC", 3)) bad++;
        MPI_File_close(&r);
    }
    MPI_File_close(&a);
    if (rank == 0 && !bad) printf("No Errors\n");
    MPI_Finalize();
    return bad != 0;
}
