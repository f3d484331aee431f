/* One process writes a long block, a short block inside it, then a strided
 * write over the long one, all in one epoch (PnetCDF's varn calls make this
 * pattern); after a barrier every other process reads the range and must
 * see the last bytes written.  The planner took such an epoch for compact
 * (its search stepped over the long block, past the short one sorted
 * after it), and the view the readers build, and the replay, put the long
 * block's bytes over the strided ones: PnetCDF's i_varn_int64 read stale
 * values.  The runner compares the file with ufs:'s. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define LONG 3000       /* the long block: [0, LONG) */
#define SHORT_AT 100    /* the short one: [SHORT_AT, SHORT_AT + 100) */
#define GROUP_AT 1000   /* the strided write: NB blocks of BL every STRIDE */
#define BL 8
#define STRIDE 24
#define NB 40

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    unsigned char want[LONG], got[LONG], buf[LONG];

    /* what the file must hold: each write over the ones before it */
    tl_fill(want, LONG, 0, 1);
    tl_fill(want + SHORT_AT, 100, SHORT_AT, 2);
    for (int k = 0; k < NB; k++)
        tl_fill(want + GROUP_AT + k * STRIDE, BL, GROUP_AT + k * STRIDE, 3);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    MPI_Datatype vec;
    MPI_Type_vector(NB, BL, STRIDE, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    if (tl_rank == 0) {
        tl_fill(buf, LONG, 0, 1);
        TL_MPI(MPI_File_write_at(fh, 0, buf, LONG, MPI_BYTE, &st));
        tl_fill(buf, 100, SHORT_AT, 2);
        TL_MPI(MPI_File_write_at(fh, SHORT_AT, buf, 100, MPI_BYTE, &st));
    }
    /* (set_view is collective: every process takes it; the others write
     * nothing through it) */
    TL_MPI(MPI_File_set_view(fh, GROUP_AT, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    for (int k = 0; k < NB; k++)
        tl_fill(buf + k * BL, BL, GROUP_AT + k * STRIDE, 3);
    TL_MPI(MPI_File_write_at(fh, 0, buf, tl_rank == 0 ? NB * BL : 0, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);        /* (default hints: the barrier orders) */
    memset(got, 0, LONG);
    TL_MPI(MPI_File_read_at(fh, 0, got, LONG, MPI_BYTE, &st));
    for (int i = 0; i < LONG; i++)
        if (got[i] != want[i]) {
            TL_CHECK(0, "byte %d read after the barrier is %d, not %d (%s)", i, got[i],
                     want[i], i >= GROUP_AT && (i - GROUP_AT) % STRIDE < BL
                     && i < GROUP_AT + NB * STRIDE ? "the strided write's" : "the long write's");
            break;
        }
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
