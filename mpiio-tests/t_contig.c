/* Contiguous access: explicit offsets, individual file pointer with seek,
 * independent and collective, then read back every rank's data. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define BLOCK 100000

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    unsigned char *buf = malloc(BLOCK), *got = malloc(BLOCK);
    MPI_Offset off = (MPI_Offset) tl_rank * BLOCK, size;
    MPI_Offset region2 = (MPI_Offset) tl_nprocs * BLOCK;
    int count;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    /* region 1: independent write_at */
    tl_fill(buf, BLOCK, off, 1);
    TL_MPI(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    TL_CHECK(count == BLOCK, "write_at wrote %d bytes", count);
    /* region 2: collective write_at_all */
    tl_fill(buf, BLOCK, region2 + off, 2);
    TL_MPI(MPI_File_write_at_all(fh, region2 + off, buf, BLOCK, MPI_BYTE, &st));
    /* region 3: individual file pointer, two halves */
    TL_MPI(MPI_File_seek(fh, 2 * region2 + off, MPI_SEEK_SET));
    tl_fill(buf, BLOCK, 2 * region2 + off, 3);
    TL_MPI(MPI_File_write(fh, buf, BLOCK / 2, MPI_BYTE, &st));
    TL_MPI(MPI_File_write_all(fh, buf + BLOCK / 2, BLOCK / 2, MPI_BYTE, &st));
    MPI_Offset pos;
    TL_MPI(MPI_File_get_position(fh, &pos));
    TL_CHECK(pos == 2 * region2 + off + BLOCK, "file pointer at %lld", (long long) pos);

    tl_sync_barrier_sync(fh);

    /* read back the neighbour's blocks, all three ways */
    int peer = (tl_rank + 1) % tl_nprocs;
    MPI_Offset poff = (MPI_Offset) peer * BLOCK;
    TL_MPI(MPI_File_read_at(fh, poff, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, poff, 1, "read_at region 1");
    TL_MPI(MPI_File_read_at_all(fh, region2 + poff, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, region2 + poff, 2, "read_at_all region 2");
    TL_MPI(MPI_File_seek(fh, 2 * region2 + poff, MPI_SEEK_SET));
    TL_MPI(MPI_File_read_all(fh, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, 2 * region2 + poff, 3, "read_all region 3");

    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == 3 * region2, "size %lld, expected %lld", (long long) size,
             (long long) (3 * region2));
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    free(got);
    return tl_finish();
}
