/* A close where no byte is two processes' replays each process's own log
 * alone (ad_bbfs_pending.c, logfs/summary.h); every other close replays
 * all logs together.  Five opens and closes of one file, each writing its
 * own region of it, each region read back after its close:
 *   A. each process its own 64 KiB block, in 16 calls, then (after a
 *      sync, a second epoch) part of it again: alone, one piece per block;
 *   B. each process 8 pieces of 100 bytes, apart, in its own 8 KiB slot,
 *      in no order: alone, written piece by piece, the holes left alone;
 *   C. each process its own 4 KiB, a barrier, then 16 bytes of the next
 *      process's: two writers of those bytes, all logs together, and the
 *      later write (after the barrier) is what the file holds;
 *   D. each process its own 4 KiB, then MPI_File_set_size: a size change
 *      is ordered between processes, all logs together;
 *   E. each process 100 pieces of 8 bytes in its own slot: too many
 *      pieces to write one by one, all logs together.
 * The spec (t_own_replay.mpi) runs it with bbfs_timing and expects two
 * closes (A, B) whose every process replayed alone and three (C, D, E)
 * where none did. */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define A_BLK (64 * 1024)
#define SLOT (8 * 1024)

static MPI_File open_rw(const char *name)
{
    MPI_File fh;
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    return fh;
}

static void write_at(MPI_File fh, long long off, const unsigned char *buf, int n)
{
    TL_MPI(MPI_File_write_at(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE));
}

/* After the close: the n bytes at off, read through a fresh open, are
 * want (every process checks every region). */
static void expect_bytes(const char *name, long long off, const unsigned char *want, int n,
                         const char *what)
{
    MPI_File fh;
    unsigned char *got = calloc(1, n);  /* (past the end of the file: nothing read) */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_read_at(fh, off, got, n, MPI_BYTE, MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));
    for (int i = 0; i < n; i++)
        TL_CHECK(got[i] == want[i], "%s: byte %lld is %d, not %d", what, off + i, got[i],
                 want[i]);
    free(got);
}

/* What region A holds once its two epochs are in: round 1's bytes, and
 * round 2's at [1 KiB, 2 KiB) of each block. */
static void region_a(unsigned char *buf, long long base)
{
    tl_fill(buf, (size_t) tl_nprocs * A_BLK, base, 1);
    for (int p = 0; p < tl_nprocs; p++)
        tl_fill(buf + (size_t) p * A_BLK + 1024, 1024, base + (long long) p * A_BLK + 1024, 2);
}

/* What a region of one SLOT per process holds after each wrote n pieces
 * of len bytes, gap apart, in its own (round tag's bytes; zeros between). */
static void slot_pieces(unsigned char *want, long long base, int n, int gap, int len, int tag)
{
    memset(want, 0, (size_t) tl_nprocs * SLOT);
    for (int p = 0; p < tl_nprocs; p++)
        for (int k = 0; k < n; k++)
            tl_fill(want + (size_t) p * SLOT + k * gap, len, base + (long long) p * SLOT + k * gap,
                    tag);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int P = tl_nprocs, r = tl_rank;
    long long a = 0, b = a + (long long) P * A_BLK, c = b + (long long) P * SLOT;
    long long d = c + (long long) P * SLOT, e = d + (long long) P * SLOT;
    size_t all = (size_t) P * A_BLK;
    unsigned char *buf = malloc(all), *want = malloc(all);
    MPI_File fh;

    /* A: sequential calls, a sync, part of the block again */
    fh = open_rw(name);
    tl_fill(buf, A_BLK, a + (long long) r * A_BLK, 1);
    for (int k = 0; k < 16; k++)
        write_at(fh, a + (long long) r * A_BLK + k * 4096, buf + k * 4096, 4096);
    TL_MPI(MPI_File_sync(fh));
    tl_fill(buf, 1024, a + (long long) r * A_BLK + 1024, 2);
    write_at(fh, a + (long long) r * A_BLK + 1024, buf, 1024);
    TL_MPI(MPI_File_close(&fh));
    region_a(want, a);
    expect_bytes(name, a, want, (int) all, "A (own blocks, two epochs)");

    /* B: pieces apart in the own slot, last first */
    fh = open_rw(name);
    for (int k = 7; k >= 0; k--) {
        long long off = b + (long long) r * SLOT + k * 1000;
        tl_fill(buf, 100, off, 3);
        write_at(fh, off, buf, 100);
    }
    TL_MPI(MPI_File_close(&fh));
    slot_pieces(want, b, 8, 1000, 100, 3);
    expect_bytes(name, b, want, P * SLOT, "B (pieces apart in own slots)");

    /* C: the next process's bytes after a barrier */
    fh = open_rw(name);
    tl_fill(buf, 4096, c + (long long) r * SLOT, 4);
    write_at(fh, c + (long long) r * SLOT, buf, 4096);
    TL_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long long theirs = c + (long long) ((r + 1) % P) * SLOT + 100;
    tl_fill(buf, 16, theirs, 5);
    write_at(fh, theirs, buf, 16);
    TL_MPI(MPI_File_close(&fh));
    memset(want, 0, (size_t) P * SLOT);
    for (int p = 0; p < P; p++) {
        tl_fill(want + (size_t) p * SLOT, 4096, c + (long long) p * SLOT, 4);
        if (P > 1)
            tl_fill(want + (size_t) p * SLOT + 100, 16, c + (long long) p * SLOT + 100, 5);
    }
    if (P == 1)     /* (its own bytes, written twice: the later wins) */
        tl_fill(want + 100, 16, c + 100, 5);
    expect_bytes(name, c, want, P * SLOT, "C (the next process's bytes, after a barrier)");

    /* D: own slots, then the size grows past region E's end */
    fh = open_rw(name);
    tl_fill(buf, 4096, d + (long long) r * SLOT, 6);
    write_at(fh, d + (long long) r * SLOT, buf, 4096);
    TL_MPI(MPI_File_set_size(fh, e + (long long) P * SLOT + 512));
    TL_MPI(MPI_File_close(&fh));
    memset(want, 0, (size_t) P * SLOT);
    for (int p = 0; p < P; p++)
        tl_fill(want + (size_t) p * SLOT, 4096, d + (long long) p * SLOT, 6);
    expect_bytes(name, d, want, P * SLOT, "D (own slots, then set_size)");

    /* E: 100 pieces of 8 bytes, apart, in the own slot */
    fh = open_rw(name);
    for (int k = 0; k < 100; k++) {
        long long off = e + (long long) r * SLOT + k * 80;
        tl_fill(buf, 8, off, 7);
        write_at(fh, off, buf, 8);
    }
    TL_MPI(MPI_File_close(&fh));
    slot_pieces(want, e, 100, 80, 8, 7);
    expect_bytes(name, e, want, P * SLOT, "E (100 pieces in own slots)");

    free(buf);
    free(want);
    return tl_finish();
}
