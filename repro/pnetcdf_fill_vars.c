/* pnetcdf_fill_vars.c - the MPI-IO calls of PnetCDF's tst_vars_fill (one
 * NC_BYTE variable of 16 x 64 at offset 512, 4 processes).
 *
 *   mpiexec -n 4 ./pnetcdf_fill_vars PREFIX:/path/file
 *
 * 1. fill: process r fills rows 4r..4r+3 (bytes 256r..256r+255 of the
 *    variable): view disp 0, filetype hindexed {256 bytes at 512+256r},
 *    write_at_all 256 bytes of 'F' at 0, then view back to bytes;
 * 2. put_vars with stride 2 x 2 of its columns 16r..16r+15: view disp 512,
 *    filetype hindexed of 64 one-byte blocks (rows 0,2,..14, columns
 *    16r+0,2,..14), write_at_all 64 bytes of 'D' at 0;
 * 3. get_vara of rows 0..15, columns 16r..16r+15: view disp 512, filetype
 *    subarray {16,64} {16,16} {0,16r}, read_at_all 256 bytes.
 * Expected: D at even rows and even columns, F elsewhere; most of the F were
 * written by other processes, in the collective fill, with no sync since.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, nprocs, i, j, bad = 0, all, blens[64], sizes[2] = {16, 64}, subs[2] = {16, 16}, starts[2] = {0, 0};
    char buf[1024];
    MPI_Aint disps[64];
    MPI_File fh;
    MPI_Datatype fill, strided, sub;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 4) { fprintf(stderr, "run with 4 processes\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    if (argc < 2) { fprintf(stderr, "usage: %s file\n", argv[0]); MPI_Abort(MPI_COMM_WORLD, 2); }
    if (rank == 0) MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    blens[0] = 256; disps[0] = 512 + 256 * rank;
    MPI_Type_create_hindexed(1, blens, disps, MPI_BYTE, &fill);
    MPI_Type_commit(&fill);
    MPI_File_set_view(fh, 0, MPI_BYTE, fill, "native", MPI_INFO_NULL);
    memset(buf, 'F', sizeof buf);
    MPI_File_write_at_all(fh, 0, buf, 256, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);

    for (i = 0; i < 8; i++)
        for (j = 0; j < 8; j++) { blens[i * 8 + j] = 1; disps[i * 8 + j] = (MPI_Aint)i * 128 + 16 * rank + j * 2; }
    MPI_Type_create_hindexed(64, blens, disps, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    MPI_File_set_view(fh, 512, MPI_BYTE, strided, "native", MPI_INFO_NULL);
    memset(buf, 'D', sizeof buf);
    MPI_File_write_at_all(fh, 0, buf, 64, MPI_BYTE, MPI_STATUS_IGNORE);

    starts[1] = 16 * rank;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &sub);
    MPI_Type_commit(&sub);
    MPI_File_set_view(fh, 512, MPI_BYTE, sub, "native", MPI_INFO_NULL);
    memset(buf, 0, sizeof buf);
    MPI_File_read_at_all(fh, 0, buf, 256, MPI_BYTE, MPI_STATUS_IGNORE);
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++)
            if (buf[i * 16 + j] != ((i % 2 == 0 && j % 2 == 0) ? 'D' : 'F')) bad++;
    if (bad) {
        char line[17 * 16 + 1];
        for (i = 0; i < 16; i++) {
            for (j = 0; j < 16; j++) line[i * 17 + j] = buf[i * 16 + j] ? buf[i * 16 + j] : '.';
            line[i * 17 + 16] = i == 15 ? 0 : '/';
        }
        printf("process %d: %d bytes wrong, rows: %s\n", rank, bad, line);
    }
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !all) printf("No Errors\n");
    MPI_File_close(&fh);
    MPI_Type_free(&fill); MPI_Type_free(&strided); MPI_Type_free(&sub);
    MPI_Finalize();
    return all != 0;
}
