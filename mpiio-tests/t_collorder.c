/* A collective call orders the writes before it against the writes after
 * it, on every process, within one epoch (no sync in between), as ROMIO
 * over a POSIX file does.  HDF5 relies on it: it writes a chunk's fill
 * values in one write_at_all and the data in the next, and a different
 * process may fill the bytes that another then writes.
 *
 * Each region has one block per rank; block r is first written by the
 * next rank ("stale") and then by rank r ("fresh"), with a collective call
 * between the two.  The fresh bytes must win everywhere: in the file after
 * close (the runner compares it with ufs:), in reads after a sync, under
 * bbfs_consistency=posix in reads right after the writes, and under
 * bbfs_consistency=collective after one more collective call. */
#include "testlib.h"
#include <stdio.h>
#include <string.h>

#define BLOCK 64
#define NREGIONS 5

static MPI_Offset block_at(int region, int r)
{
    return ((MPI_Offset) region * tl_nprocs + r) * BLOCK;
}

/* Read block r of every region and check it holds the fresh content. */
static void check_fresh(MPI_File fh, int r, const char *when)
{
    unsigned char got[BLOCK];
    char what[128];
    MPI_Status st;

    for (int region = 0; region < NREGIONS; region++) {
        TL_MPI(MPI_File_read_at(fh, block_at(region, r), got, BLOCK, MPI_BYTE, &st));
        snprintf(what, sizeof(what), "%s: region %d, block of rank %d", when, region, r);
        tl_verify(got, BLOCK, block_at(region, r), 10 + region, what);
    }
}

static int consistency_is(MPI_File fh, const char *model)
{
    char v[MPI_MAX_INFO_VAL + 1];
    return tl_info_get(fh, "bbfs_consistency", v) && !strcmp(v, model);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int next = (tl_rank + 1) % tl_nprocs, prev = (tl_rank + tl_nprocs - 1) % tl_nprocs;
    unsigned char stale[BLOCK], fresh[BLOCK], none;
    MPI_File fh;
    MPI_Status st;

    memset(stale, 0, sizeof(stale));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));

    /* region 0: write_at_all of fill values, then write_at_all of data */
    TL_MPI(MPI_File_write_at_all(fh, block_at(0, prev), stale, BLOCK, MPI_BYTE, &st));
    tl_fill(fresh, BLOCK, block_at(0, tl_rank), 10);
    TL_MPI(MPI_File_write_at_all(fh, block_at(0, tl_rank), fresh, BLOCK, MPI_BYTE, &st));

    /* region 1: an independent write before a collective write loses to it */
    TL_MPI(MPI_File_write_at(fh, block_at(1, prev), stale, BLOCK, MPI_BYTE, &st));
    tl_fill(fresh, BLOCK, block_at(1, tl_rank), 11);
    TL_MPI(MPI_File_write_at_all(fh, block_at(1, tl_rank), fresh, BLOCK, MPI_BYTE, &st));

    /* region 2: a collective read orders independent writes too */
    TL_MPI(MPI_File_write_at(fh, block_at(2, prev), stale, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_read_at_all(fh, 0, &none, 0, MPI_BYTE, &st));
    tl_fill(fresh, BLOCK, block_at(2, tl_rank), 12);
    TL_MPI(MPI_File_write_at(fh, block_at(2, tl_rank), fresh, BLOCK, MPI_BYTE, &st));

    /* region 3: a collective write through a file view and the individual
     * pointer, after fill values written with a view as well */
    MPI_Datatype blk;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &blk);
    MPI_Type_commit(&blk);
    TL_MPI(MPI_File_set_view(fh, block_at(3, prev), MPI_BYTE, blk, "native", MPI_INFO_NULL));
    TL_MPI(MPI_File_write_all(fh, stale, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_view(fh, block_at(3, tl_rank), MPI_BYTE, blk, "native",
                             MPI_INFO_NULL));
    tl_fill(fresh, BLOCK, block_at(3, tl_rank), 13);
    TL_MPI(MPI_File_write_all(fh, fresh, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&blk);

    /* region 4: fill values in a collective call, a barrier, then the data
     * in independent writes (HDF5's chunked datasets with independent
     * transfers): writes after a collective call win over writes in it */
    TL_MPI(MPI_File_write_at_all(fh, block_at(4, prev), stale, BLOCK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    tl_fill(fresh, BLOCK, block_at(4, tl_rank), 14);
    TL_MPI(MPI_File_write_at(fh, block_at(4, tl_rank), fresh, BLOCK, MPI_BYTE, &st));

    /* Under posix every write is visible when it returns: the block this
     * process filled with stale bytes must already read as its owner's. */
    if (consistency_is(fh, "posix")) {
        MPI_Barrier(MPI_COMM_WORLD);
        check_fresh(fh, prev, "posix, before any sync");
        check_fresh(fh, tl_rank, "posix, own block before any sync");
    }
    /* Under the collective model a collective call is enough. */
    if (consistency_is(fh, "collective")) {
        TL_MPI(MPI_File_read_at_all(fh, 0, &none, 0, MPI_BYTE, &st));
        check_fresh(fh, prev, "collective, after a collective call");
        check_fresh(fh, tl_rank, "collective, own block after a collective call");
    }

    tl_sync_barrier_sync(fh);
    check_fresh(fh, prev, "after sync-barrier-sync");
    TL_MPI(MPI_File_close(&fh));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check_fresh(fh, next, "after close and a read-only open");
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
