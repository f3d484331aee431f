/* Overlapping writes: within one epoch a rank's later write wins; across
 * epochs (sync-barrier-sync) another rank's later write wins; independent
 * and collective writes interleave.  Every rank checks the final bytes. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define SPAN 8192

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    unsigned char *buf = malloc(SPAN * 4), *got = malloc(SPAN * 4);
    int P = tl_nprocs, r = tl_rank;
    MPI_Offset mine = (MPI_Offset) r * SPAN;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    /* epoch 1: each rank writes its span twice; the second (tag 2) wins,
     * except a middle piece rewritten a third time (tag 3). */
    tl_fill(buf, SPAN, mine, 1);
    TL_MPI(MPI_File_write_at(fh, mine, buf, SPAN, MPI_BYTE, &st));
    tl_fill(buf, SPAN, mine, 2);
    TL_MPI(MPI_File_write_at(fh, mine, buf, SPAN, MPI_BYTE, &st));
    tl_fill(buf, 100, mine + 1000, 3);
    TL_MPI(MPI_File_write_at(fh, mine + 1000, buf, 100, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);

    /* epoch 2: rank r overwrites the second half of rank (r+1)'s span,
     * collectively. */
    MPI_Offset next = (MPI_Offset) ((r + 1) % P) * SPAN + SPAN / 2;
    tl_fill(buf, SPAN / 2, next, 4);
    TL_MPI(MPI_File_write_at_all(fh, next, buf, SPAN / 2, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);

    /* epoch 3: rank 0 independently overwrites 10 bytes at the start of
     * every span, then all collectively extend the file. */
    if (r == 0)
        for (int q = 0; q < P; q++) {
            tl_fill(buf, 10, (MPI_Offset) q * SPAN, 5);
            TL_MPI(MPI_File_write_at(fh, (MPI_Offset) q * SPAN, buf, 10, MPI_BYTE, &st));
        }
    tl_fill(buf, 64, (MPI_Offset) P * SPAN + r * 64, 6);
    TL_MPI(MPI_File_write_at_all(fh, (MPI_Offset) P * SPAN + r * 64, buf, 64, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);

    /* everyone checks everything */
    long long total = (long long) P * SPAN + P * 64;
    unsigned char *all = malloc(total);
    TL_MPI(MPI_File_read_at_all(fh, 0, all, (int) total, MPI_BYTE, &st));
    for (long long o = 0; o < total; o++) {
        long long q = o / SPAN, in = o % SPAN;
        int tag;
        if (o >= (long long) P * SPAN)
            tag = 6;
        else if (in < 10)
            tag = 5;
        else if (in >= SPAN / 2)
            tag = 4;
        else if (in >= 1000 && in < 1100)
            tag = 3;
        else
            tag = 2;
        (void) q;
        TL_CHECK(all[o] == tl_byte(o, tag), "byte %lld is from the wrong write (want tag %d)",
                 o, tag);
    }
    TL_MPI(MPI_File_close(&fh));
    free(all); free(buf); free(got);
    return tl_finish();
}
