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
    long long mpos = 0, total = 0;

    /* Rank r owns, in each 1 KiB stripe k, bytes [k*1024 + r*len_k, +len_k)
     * with len_k = 1 + (k*7 + r) % 40: irregular, never overlapping. */
    for (int k = 0; k < NB; k++) {
        len[k] = 1 + (k * 7) % 40;
        fdisp[k] = (MPI_Aint) k * 1024 * tl_nprocs / 4 + 1 + (MPI_Aint) tl_rank * 41;
        mdisp[k] = (MPI_Aint) mpos;
        mpos += len[k] + 3;
        total += len[k];
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
    /* Epoch 1: rank 0 fills the whole span.  Stock ROMIO's data sieving may
     * leave garbage in bytes nobody wrote, so every byte is written once. */
    long long span = 200000 + 64 * 100;     /* up to the far-out pieces below */
    if (tl_rank == 0) {
        unsigned char *fill = malloc(span);
        tl_fill(fill, span, 0, 7);
        TL_MPI(MPI_File_write_at(fh, 0, fill, (int) span, MPI_BYTE, &st));
        free(fill);
    }
    tl_sync_barrier_sync(fh);
    /* Epoch 2: the hindexed pieces overwrite parts of it. */
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL));
    TL_MPI(MPI_File_write(fh, mem, 1, mtype, &st));
    int count;
    MPI_Get_count(&st, MPI_BYTE, &count);
    TL_CHECK(count == total, "wrote %d of %lld bytes", count, total);
    tl_sync_barrier_sync(fh);

    memset(mem, 0, mpos);
    TL_MPI(MPI_File_read_at_all(fh, 0, mem, 1, mtype, &st));
    for (int k = 0; k < NB; k++)
        tl_verify(mem + mdisp[k], len[k], fdisp[k], 4, "hindexed read back");

    /* A filetype whose lower bound lies many extents into the file, tiled
     * twice through the individual file pointer: two 10-byte blocks 20 bytes
     * apart, starting past the data above. */
    MPI_Datatype far;
    int flen[2] = { 10, 10 };
    MPI_Aint base = 200000 + (MPI_Aint) tl_rank * 100, fdsp[2] = { base, base + 20 };
    MPI_Type_create_hindexed(2, flen, fdsp, MPI_BYTE, &far);
    MPI_Type_commit(&far);
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, far, "native", MPI_INFO_NULL));
    unsigned char farbuf[40], farexp[40];
    for (int t = 0; t < 2; t++)         /* tile t: extent 30 */
        for (int b = 0; b < 2; b++)
            tl_fill(farexp + t * 20 + b * 10, 10, base + t * 30 + b * 20, 5);
    TL_MPI(MPI_File_write_all(fh, farexp, 40, MPI_BYTE, &st));
    MPI_Offset fpos;
    TL_MPI(MPI_File_get_position(fh, &fpos));
    TL_CHECK(fpos == 40, "position after two tiles is %lld etypes", (long long) fpos);
    tl_sync_barrier_sync(fh);
    TL_MPI(MPI_File_read_at_all(fh, 0, farbuf, 40, MPI_BYTE, &st));
    TL_CHECK(memcmp(farbuf, farexp, 40) == 0, "far-out hindexed view read back differs");
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[10];
    TL_MPI(MPI_File_read_at(fh, base + 30 + 20, raw, 10, MPI_BYTE, &st));
    tl_verify(raw, 10, base + 50, 5, "second tile's second block at its file offset");
    MPI_Type_free(&far);

    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(mem);
    return tl_finish();
}
