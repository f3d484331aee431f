/* The individual file pointer through a subarray view (mpi4py's test_io
 * testSubarray, in C).  Rank r owns rows [7r, 7r + 7) of a (7P x 5) array of
 * ints; three tiles are written with write_all and read back through the view
 * with the pointer, then every tile read plainly.
 *
 * On a MPI_MODE_DELETE_ON_CLOSE file bbfs does not log, and its accesses mix
 * its own view walk with ROMIO's (ad_read_str.c) on the lower handle.  The
 * walk left the pointer at the end of the tile, on the subarray's zero-length
 * upper-bound block, where ROMIO's strided read does not expect it: ranks 1..
 * read another rank's rows from the second tile on.  The same sequence on a
 * logged file is compared with ufs: by the runner. */
#include "testlib.h"
#include <string.h>

#define ROWS 7
#define COLS 5
#define TILES 3

static int value(int rank, int tile)
{
    return 10 * (rank + 1) + tile;
}

static void run(const char *name, int amode)
{
    MPI_File fh;
    MPI_Datatype ft;
    int sizes[2] = { ROWS * tl_nprocs, COLS }, sub[2] = { ROWS, COLS };
    int start[2] = { ROWS * tl_rank, 0 };
    int buf[ROWS * COLS];

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode | MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    TL_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    for (int t = 0; t < TILES; t++) {
        for (int k = 0; k < ROWS * COLS; k++)
            buf[k] = value(tl_rank, t);
        TL_MPI(MPI_File_write_all(fh, buf, ROWS * COLS, MPI_INT, MPI_STATUS_IGNORE));
    }
    tl_sync_barrier_sync(fh);

    /* Alternate independent and collective reads: both paths move the
     * pointer. */
    TL_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    for (int t = 0; t < TILES; t++) {
        MPI_Offset pos;
        TL_MPI(MPI_File_get_position(fh, &pos));
        TL_CHECK(pos == (MPI_Offset) t * ROWS * COLS, "%s: position %lld before tile %d",
                 name, (long long) pos, t);
        memset(buf, 0, sizeof(buf));
        if (t % 2)
            TL_MPI(MPI_File_read_all(fh, buf, ROWS * COLS, MPI_INT, MPI_STATUS_IGNORE));
        else
            TL_MPI(MPI_File_read(fh, buf, ROWS * COLS, MPI_INT, MPI_STATUS_IGNORE));
        for (int k = 0; k < ROWS * COLS; k++)
            TL_CHECK(buf[k] == value(tl_rank, t), "%s: tile %d through the view: int %d is "
                     "%d, not %d", name, t, k, buf[k], value(tl_rank, t));
    }
    MPI_Type_free(&ft);

    TL_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int t = 0; t < TILES; t++)
        for (int r = 0; r < tl_nprocs; r++) {
            TL_MPI(MPI_File_read_all(fh, buf, ROWS * COLS, MPI_INT, MPI_STATUS_IGNORE));
            for (int k = 0; k < ROWS * COLS; k++)
                TL_CHECK(buf[k] == value(r, t), "%s: tile %d, rank %d's rows: int %d is %d",
                         name, t, r, k, buf[k]);
        }
    TL_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    char scratch[4096];

    tl_sibling(name, ".scratch", scratch, sizeof(scratch));
    run(scratch, MPI_MODE_DELETE_ON_CLOSE);
    run(name, 0);
    return tl_finish();
}
