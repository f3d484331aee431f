/* MPI_File_set_size grows (zero fill) and shrinks (truncates) the file;
 * get_size follows; preallocate never shrinks; writes after a shrink land. */
#include "testlib.h"
#include <stdlib.h>

#define BLOCK 4096

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size;
    unsigned char buf[BLOCK], got[BLOCK];
    MPI_Offset off = (MPI_Offset) tl_rank * BLOCK;
    MPI_Offset full = (MPI_Offset) tl_nprocs * BLOCK;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    tl_fill(buf, BLOCK, off, 1);
    TL_MPI(MPI_File_write_at_all(fh, off, buf, BLOCK, MPI_BYTE, &st));

    /* grow to 3x: the new tail reads as zeros */
    TL_MPI(MPI_File_set_size(fh, 3 * full));
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == 3 * full, "size after grow %lld", (long long) size);
    TL_MPI(MPI_File_read_at(fh, 2 * full + off, got, BLOCK, MPI_BYTE, &st));
    for (int i = 0; i < BLOCK; i++)
        TL_CHECK(got[i] == 0, "grown region byte %d is %d", i, got[i]);

    /* shrink to half a block per rank: the rest is gone */
    MPI_Offset half = full / 2 + 7;
    TL_MPI(MPI_File_set_size(fh, half));
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == half, "size after shrink %lld", (long long) size);
    int count;
    TL_MPI(MPI_File_read_at(fh, half - 10, got, BLOCK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    TL_CHECK(count == 10, "read across shrunk end returned %d bytes", count);
    tl_verify(got, 10, half - 10, 1, "bytes before the new end");

    /* preallocate smaller than the size does nothing; larger grows */
    TL_MPI(MPI_File_preallocate(fh, 10));
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == half, "preallocate shrank the file to %lld", (long long) size);
    TL_MPI(MPI_File_preallocate(fh, full + 123));
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == full + 123, "size after preallocate %lld", (long long) size);
    /* (no write before every process has looked: a logged collective write
     * is visible once its process released it, maybe before another has
     * entered the call, as a concurrent write may be) */
    MPI_Barrier(MPI_COMM_WORLD);

    /* write again past the shrunk end, then a final shrink cuts it */
    tl_fill(buf, BLOCK, full + off, 2);
    TL_MPI(MPI_File_write_at_all(fh, full + off, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_size(fh, full + full / 2));
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == full + full / 2, "final size %lld", (long long) size);
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
