/* Noncontiguous file view (vector of small blocks, interleaved between
 * ranks, after a header displacement) and noncontiguous memory: independent
 * writes in one region, collective in another, read back both ways. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define BLK 24          /* bytes per block */
#define NBLK 1000       /* blocks per rank per region */
#define DISP 4096       /* header before the views */

/* Offset in the file of byte i (0-based within this rank's data) of a region. */
static long long file_off(long long region_base, int rank, int nprocs, long long i)
{
    return region_base + (i / BLK) * (long long) BLK * nprocs + (long long) rank * BLK + i % BLK;
}

static void fill_view(unsigned char *mem, long long base, int tag)
{
    for (long long i = 0; i < (long long) NBLK * BLK; i++)
        mem[i] = tl_byte(file_off(base, tl_rank, tl_nprocs, i), tag);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype ftype, mtype;
    long long region = (long long) NBLK * BLK * tl_nprocs;
    size_t n = (size_t) NBLK * BLK;
    unsigned char *data = malloc(n), *spread = calloc(2 * n, 1), *got = malloc(n);

    MPI_Datatype vec;
    MPI_Type_vector(NBLK, BLK, BLK * tl_nprocs, MPI_BYTE, &vec);
    /* extent of a whole region, so the next tile starts at the next region */
    MPI_Type_create_resized(vec, 0, (MPI_Aint) region, &ftype);
    MPI_Type_free(&vec);
    MPI_Type_commit(&ftype);
    /* memory: same bytes spread with gaps (every other BLK bytes) */
    MPI_Type_vector(NBLK, BLK, 2 * BLK, MPI_BYTE, &mtype);
    MPI_Type_commit(&mtype);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    if (tl_rank == 0) {         /* header, written before any view */
        unsigned char hdr[DISP];
        tl_fill(hdr, DISP, 0, 9);
        TL_MPI(MPI_File_write_at(fh, 0, hdr, DISP, MPI_BYTE, &st));
    }
    TL_MPI(MPI_File_set_view(fh, DISP + (MPI_Offset) tl_rank * BLK, MPI_BYTE, ftype,
                             "native", MPI_INFO_NULL));

    /* region 0: independent, contiguous memory */
    fill_view(data, DISP, 1);
    TL_MPI(MPI_File_write_at(fh, 0, data, (int) n, MPI_BYTE, &st));
    /* region 1: collective, noncontiguous memory */
    fill_view(data, DISP + region, 2);
    for (int b = 0; b < NBLK; b++)
        memcpy(spread + 2 * (size_t) b * BLK, data + (size_t) b * BLK, BLK);
    TL_MPI(MPI_File_write_at_all(fh, n, spread, 1, mtype, &st));

    /* region 2: individual file pointer, in odd-sized pieces that start and
     * end inside blocks, so the pointer must follow ROMIO's rules exactly */
    fill_view(data, DISP + 2 * region, 3);
    TL_MPI(MPI_File_seek(fh, 2 * (MPI_Offset) n, MPI_SEEK_SET));
    size_t chunks[] = { 37, 100, 1000, 24, 1 }, at = 0;
    for (int c = 0; at < n; c++) {
        size_t len = c < 5 ? chunks[c] : n - at;
        if (len > n - at)
            len = n - at;
        TL_MPI(MPI_File_write(fh, data + at, (int) len, MPI_BYTE, &st));
        at += len;
    }
    MPI_Offset vpos;
    TL_MPI(MPI_File_get_position(fh, &vpos));
    TL_CHECK(vpos == 3 * (MPI_Offset) n, "pointer at %lld after region 2, expected %lld",
             (long long) vpos, (long long) (3 * n));

    tl_sync_barrier_sync(fh);

    /* read back own data through the view, independent and collective */
    TL_MPI(MPI_File_read_at(fh, 2 * n, got, (int) n, MPI_BYTE, &st));
    TL_CHECK(memcmp(got, data, n) == 0, "region 2 read back through view differs");
    fill_view(data, DISP + region, 2);
    TL_MPI(MPI_File_read_at(fh, n, got, (int) n, MPI_BYTE, &st));
    TL_CHECK(memcmp(got, data, n) == 0, "region 1 read back through view differs");
    fill_view(data, DISP, 1);
    memset(spread, 0, 2 * n);
    TL_MPI(MPI_File_read_at_all(fh, 0, spread, 1, mtype, &st));
    for (int b = 0; b < NBLK; b++)
        TL_CHECK(memcmp(spread + 2 * (size_t) b * BLK, data + (size_t) b * BLK, BLK) == 0,
                 "region 0 block %d read into noncontiguous memory differs", b);

    /* the whole file as bytes: every rank's blocks where expected */
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char *all = malloc(DISP + 3 * region);
    TL_MPI(MPI_File_read_at_all(fh, 0, all, (int) (DISP + 3 * region), MPI_BYTE, &st));
    tl_verify(all, DISP, 0, 9, "header");
    for (int r = 0; r < tl_nprocs; r++)
        for (long long i = 0; i < (long long) n; i++) {
            long long o0 = file_off(DISP, r, tl_nprocs, i);
            long long o1 = file_off(DISP + region, r, tl_nprocs, i);
            long long o2 = file_off(DISP + 2 * region, r, tl_nprocs, i);
            TL_CHECK(all[o0] == tl_byte(o0, 1) && all[o1] == tl_byte(o1, 2)
                     && all[o2] == tl_byte(o2, 3), "rank %d byte %lld misplaced", r, i);
        }
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(all); free(data); free(spread); free(got);
    return tl_finish();
}
