/* Nonblocking I/O: iwrite_at, iwrite (individual pointer) and iwrite_all in
 * flight together, then iread_at and iread_all of a neighbour's data, and
 * an iread_at across the end of the file. */
#include "testlib.h"
#include <stdlib.h>

#define BLOCK 65536

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Request req[3];
    MPI_Status st[3];
    unsigned char *b[3], *got[2];
    MPI_Offset P = tl_nprocs, off = (MPI_Offset) tl_rank * BLOCK, pos;

    for (int i = 0; i < 3; i++) {
        b[i] = malloc(BLOCK);
        tl_fill(b[i], BLOCK, i * P * BLOCK + off, i + 1);
    }
    got[0] = malloc(BLOCK);
    got[1] = malloc(BLOCK);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_iwrite_at(fh, off, b[0], BLOCK, MPI_BYTE, &req[0]));
    TL_MPI(MPI_File_seek(fh, P * BLOCK + off, MPI_SEEK_SET));
    TL_MPI(MPI_File_iwrite(fh, b[1], BLOCK, MPI_BYTE, &req[1]));
    TL_MPI(MPI_File_iwrite_at_all(fh, 2 * P * BLOCK + off, b[2], BLOCK, MPI_BYTE, &req[2]));
    TL_MPI(MPI_Waitall(3, req, st));
    for (int i = 0; i < 3; i++) {
        int count;
        MPI_Get_count(&st[i], MPI_BYTE, &count);
        TL_CHECK(count == BLOCK, "request %d moved %d bytes", i, count);
    }
    TL_MPI(MPI_File_get_position(fh, &pos));
    TL_CHECK(pos == P * BLOCK + off + BLOCK, "individual pointer at %lld after iwrite",
             (long long) pos);
    tl_sync_barrier_sync(fh);

    MPI_Offset peer = (MPI_Offset) ((tl_rank + 1) % tl_nprocs) * BLOCK;
    TL_MPI(MPI_File_iread_at(fh, P * BLOCK + peer, got[0], BLOCK, MPI_BYTE, &req[0]));
    TL_MPI(MPI_File_iread_at_all(fh, 2 * P * BLOCK + peer, got[1], BLOCK, MPI_BYTE, &req[1]));
    TL_MPI(MPI_Waitall(2, req, st));
    tl_verify(got[0], BLOCK, P * BLOCK + peer, 2, "iread_at");
    tl_verify(got[1], BLOCK, 2 * P * BLOCK + peer, 3, "iread_at_all");

    /* at the end of the file a nonblocking read moves what is there, as a
     * blocking one does */
    MPI_Offset end = 3 * P * BLOCK;
    int count;
    TL_MPI(MPI_File_iread_at(fh, end - 10, got[0], 100, MPI_BYTE, &req[0]));
    TL_MPI(MPI_Wait(&req[0], &st[0]));
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    TL_CHECK(count == 10, "iread_at of 100 bytes 10 before the end moved %d", count);
    TL_MPI(MPI_File_read_at(fh, end - 10, got[1], 100, MPI_BYTE, &st[1]));
    MPI_Get_count(&st[1], MPI_BYTE, &count);
    TL_CHECK(count == 10, "read_at of 100 bytes 10 before the end moved %d", count);
    /* and so does a collective one (PnetCDF moves a growing header by the
     * count it reports); process 0 reads, the others read nothing */
    TL_MPI(MPI_File_read_at_all(fh, end - 10, got[1], tl_rank == 0 ? 100 : 0, MPI_BYTE,
                                &st[1]));
    MPI_Get_count(&st[1], MPI_BYTE, &count);
    TL_CHECK(count == (tl_rank == 0 ? 10 : 0),
             "read_at_all of 100 bytes 10 before the end moved %d", count);
    TL_MPI(MPI_File_close(&fh));
    for (int i = 0; i < 3; i++)
        free(b[i]);
    free(got[0]);
    free(got[1]);
    return tl_finish();
}
