/* Pieces of 2 GiB and more: a checkpoint's contiguous data becomes one
 * piece in the replay plan (adjacent blocks merge), and the replay used to
 * take a round's first piece whole and cast its length to int: beyond
 * 2 GiB the length went negative.  Pieces are now cut to the round size.
 *
 * One process writes BIG_CHUNKS * 256 MiB from offset 0 (in 256 MiB calls),
 * leaves a 256 MiB hole, and writes 4 KiB after it; after close it reads
 * back samples around each 2 GiB mark, the hole and the tail, and the
 * runner compares the whole file with ufs:.  Built as t_replay_4g (4.25
 * GiB: past a signed and an unsigned 32-bit length). */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BIG_CHUNKS
#error "build with -DBIG_CHUNKS=n (pieces of n * 256 MiB)"
#endif
#define CHUNK ((MPI_Offset) 256 << 20)
#define DATA (BIG_CHUNKS * CHUNK)
#define TAIL (DATA + CHUNK)

static void check(MPI_File fh, MPI_Offset off, int len, int tag, const char *what)
{
    unsigned char *got = malloc(len);
    MPI_Status st;
    TL_MPI(MPI_File_read_at(fh, off, got, len, MPI_BYTE, &st));
    if (tag)
        tl_verify(got, len, off, tag, what);
    else
        for (int i = 0; i < len; i++)
            TL_CHECK(got[i] == 0, "%s: byte %lld is %d, expected 0", what, (long long) off + i,
                     got[i]);
    free(got);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char *buf = malloc(CHUNK);
    MPI_File fh;
    MPI_Status st;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    if (tl_rank == 0) {
        for (MPI_Offset o = 0; o < DATA; o += CHUNK) {
            tl_fill(buf, CHUNK, o, 1);
            TL_MPI(MPI_File_write_at(fh, o, buf, (int) CHUNK, MPI_BYTE, &st));
        }
        tl_fill(buf, 4096, TAIL, 2);
        TL_MPI(MPI_File_write_at(fh, TAIL, buf, 4096, MPI_BYTE, &st));
    }
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (tl_rank == 0) {
        check(fh, 0, 65536, 1, "the first bytes");
        for (MPI_Offset mark = (MPI_Offset) 2 << 30; mark < DATA; mark += (MPI_Offset) 2 << 30) {
            char what[64];
            snprintf(what, sizeof what, "around %lld GiB", (long long) (mark >> 30));
            check(fh, mark - 65536, 131072, 1, what);
        }
        check(fh, DATA - 65536, 65536, 1, "the last data bytes");
        check(fh, DATA, 65536, 0, "the hole");
        check(fh, TAIL, 4096, 2, "the tail");
        MPI_Offset size;
        TL_MPI(MPI_File_get_size(fh, &size));
        TL_CHECK(size == TAIL + 4096, "size %lld, expected %lld", (long long) size,
                 (long long) (TAIL + 4096));
    }
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
