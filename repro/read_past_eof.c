/* read_past_eof.c - the byte count of a read that crosses the end of file.
 *
 *   mpiexec -n 4 ./read_past_eof PREFIX:/path/file
 *
 * Process 0 writes 100 bytes and reads 100 bytes at offset 50, independently
 * and collectively (read_at_all, the others reading nothing), and checks
 * MPI_Get_count: 50 (what is there); first in the writing session after
 * sync-barrier-sync, then after close and reopen.  PnetCDF moves data when a
 * header grows by read_at_all + write_at_all of MPI_Get_count bytes, so a
 * count that is too large makes the file grow (nc_test's test_ncmpi_sync).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* Process 0 reads; in the collective call the others read nothing (when
 * several processes read the same bytes, ROMIO's two-phase read itself
 * reports the full count on ufs:). */
static int check(const char *what, MPI_File fh, int rank, int coll)
{
    char buf[100];
    int got = -1, n = rank == 0 ? 100 : 0, want = rank == 0 ? 50 : 0;
    MPI_Status st;
    memset(buf, 0, sizeof buf);
    if (coll) MPI_File_read_at_all(fh, 50, buf, n, MPI_BYTE, &st);
    else if (rank == 0) MPI_File_read_at(fh, 50, buf, n, MPI_BYTE, &st);
    else return 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (rank == 0 || got != want)
        printf("process %d: %s %s at 50 for %d bytes of a 100-byte file: count %d (expected %d)\n",
               rank, what, coll ? "read_at_all" : "read_at", n, got, want);
    return got != want;
}

int main(int argc, char **argv)
{
    int rank, bad = 0, all;
    char data[100];
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) { if (!rank) fprintf(stderr, "usage: %s file\n", argv[0]); MPI_Abort(MPI_COMM_WORLD, 2); }
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(data, 'x', sizeof data);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rank == 0) MPI_File_write_at(fh, 0, data, 100, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    bad += check("same session, after sync:", fh, rank, 0);
    bad += check("same session, after sync:", fh, rank, 1);
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    bad += check("reopened:", fh, rank, 0);
    bad += check("reopened:", fh, rank, 1);
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !all) printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
