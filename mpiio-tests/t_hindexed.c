/* hindexed file type with irregular block lengths, plus an hindexed memory
 * type; independent write, collective read of everyone's blocks. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define NB 64

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype ftype, mtype;
    int len[NB];
    MPI_Aint fdisp[NB], mdisp[NB];
    long long pos = 0, mpos = 0, total = 0;

    /* Rank r owns, in each 1 KiB stripe k, bytes [k*1024 + r*len_k, +len_k)
     * with len_k = 1 + (k*7 + r) % 40: irregular, never overlapping. */
    for (int k = 0; k < NB; k++) {
        len[k] = 1 + (k * 7) % 40;
        fdisp[k] = (MPI_Aint) k * 1024 * tl_nprocs / 4 + 1 + (MPI_Aint) tl_rank * 41;
        mdisp[k] = (MPI_Aint) mpos;
        mpos += len[k] + 3;
        total += len[k];
        (void) pos;
    }
    MPI_Type_create_hindexed(NB, len, fdisp, MPI_BYTE, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_create_hindexed(NB, len, mdisp, MPI_BYTE, &mtype);
    MPI_Type_commit(&mtype);
    unsigned char *mem = calloc(mpos, 1);
    for (int k = 0; k < NB; k++)
        tl_fill(mem + mdisp[k], len[k], fdisp[k], 4);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL));
    TL_MPI(MPI_File_write(fh, mem, 1, mtype, &st));
    int count;
    MPI_Get_count(&st, MPI_BYTE, &count);
    TL_CHECK(count == total, "wrote %d of %lld bytes", count, total);
    TL_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(fh));

    memset(mem, 0, mpos);
    TL_MPI(MPI_File_read_at_all(fh, 0, mem, 1, mtype, &st));
    for (int k = 0; k < NB; k++)
        tl_verify(mem + mdisp[k], len[k], fdisp[k], 4, "hindexed read back");
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(mem);
    return tl_finish();
}
