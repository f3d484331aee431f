/* Writes through several handles of one file land in the order they were
 * made, whichever handle closes last.
 *
 * PnetCDF keeps a collective handle (A, on all processes) and, in
 * independent data mode, a second one (B, on MPI_COMM_SELF) open on the same
 * file, and one process writes the header's record count through both, with
 * no sync in between: POSIX and ROMIO's drivers keep that program order.
 * MPI-IO itself orders two handles' conflicting writes by sync, barrier,
 * sync.  Each handle's logs are its own, so bbfs replays them together, at
 * the last close, placed in time (STAMP records, logfs_plan_build_sessions).
 *
 * Region 0: each process writes its block through A, half of it through B,
 *           a quarter through A again; B closes first, then A.
 * Region 1: the same, A closes first, then B.
 * Region 2: each process writes its block through A, syncs, barrier; the
 *           next process overwrites half of it through B, syncs, barrier,
 *           A syncs and its owner overwrites a quarter again through A.
 * Reads through A check regions 0 and 2 after syncs on both handles; a
 * read-only open after all closes checks all three, and the runner
 * compares the file with ufs:. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 8192

static MPI_Offset at(int region, int r)
{
    return ((MPI_Offset) region * tl_nprocs + r) * BLOCK;
}

static void put(MPI_File fh, MPI_Offset off, int len, int tag)
{
    unsigned char *buf = malloc(len);
    MPI_Status st;

    tl_fill(buf, len, off, tag);
    TL_MPI(MPI_File_write_at(fh, off, buf, len, MPI_BYTE, &st));
    free(buf);
}

/* Block of rank r in region: [0, q) tag t3, [q, 2q) tag t2, [2q, 4q) tag t1. */
static void expect(MPI_File fh, int region, int r, int t1, int t2, int t3, const char *what)
{
    unsigned char *got = malloc(BLOCK);
    MPI_Offset o = at(region, r);
    MPI_Status st;
    char w[200];
    const int q = BLOCK / 4;

    TL_MPI(MPI_File_read_at(fh, o, got, BLOCK, MPI_BYTE, &st));
    snprintf(w, sizeof(w), "%s (region %d, rank %d's block, first quarter)", what, region, r);
    tl_verify(got, q, o, t3, w);
    snprintf(w, sizeof(w), "%s (region %d, rank %d's block, second quarter)", what, region, r);
    tl_verify(got + q, q, o + q, t2, w);
    snprintf(w, sizeof(w), "%s (region %d, rank %d's block, second half)", what, region, r);
    tl_verify(got + 2 * q, 2 * q, o + 2 * q, t1, w);
    free(got);
}

/* A, B, A again, on one process, no sync. */
static void program_order(MPI_File a, MPI_File b, int region)
{
    MPI_Offset o = at(region, tl_rank);
    put(a, o, BLOCK, 1);
    put(b, o, BLOCK / 2, 2);
    put(a, o, BLOCK / 4, 3);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int next = (tl_rank + 1) % tl_nprocs;
    MPI_File a, b;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &a));
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &b));
    program_order(a, b, 0);
    TL_MPI(MPI_File_sync(b));
    TL_MPI(MPI_File_sync(a));
    expect(a, 0, tl_rank, 1, 2, 3, "A reads its and B's writes in program order");

    /* sync, barrier, sync between the two handles of different processes */
    put(a, at(2, tl_rank), BLOCK, 4);
    tl_sync_barrier_sync(a);
    TL_MPI(MPI_File_sync(b));
    put(b, at(2, next), BLOCK / 2, 5);
    TL_MPI(MPI_File_sync(b));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(a));
    put(a, at(2, tl_rank), BLOCK / 4, 6);
    TL_MPI(MPI_File_sync(a));
    expect(a, 2, tl_rank, 4, 5, 6, "A reads B's synced write over its own, and its later one");

    TL_MPI(MPI_File_close(&b));
    TL_MPI(MPI_File_close(&a));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &a));
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &b));
    program_order(a, b, 1);
    TL_MPI(MPI_File_close(&a));
    TL_MPI(MPI_File_close(&b));
    /* the B handles close at about the same time: exactly one of them must
     * find itself the last and replay everything */
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_is_bbfs(name) && tl_rank == 0)
        TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 0,
                 "logs left pending after every handle closed (each close saw another open)");

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &a));
    for (int r = 0; r < tl_nprocs; r++) {
        expect(a, 0, r, 1, 2, 3, "after B then A closed");
        expect(a, 1, r, 1, 2, 3, "after A then B closed");
        expect(a, 2, r, 4, 5, 6, "after both closed");
    }
    TL_MPI(MPI_File_close(&a));
    if (tl_is_bbfs(name))
        TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 0, "a manifest is left behind");
    return tl_finish();
}
