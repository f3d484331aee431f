/* Several handles on one file at the same time are legal MPI-IO, and each
 * handle's logs are its own until it closes.  PnetCDF opens a file on all
 * processes, then again on MPI_COMM_SELF for independent data mode, while
 * the first handle stays open; before bbfs kept one session per handle,
 * the second open replayed and removed the first one's live logs, and its
 * close then failed.
 *
 * A: the file on MPI_COMM_WORLD; B: the same file on MPI_COMM_SELF, one per
 * process.  Each writes, and each reads the other's data after the sync
 * points MPI-IO defines (sync on one, barrier, sync on the other), and
 * after the other closes.  The runner compares the final file with ufs:. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 8192

/* region k, block of rank r */
static MPI_Offset at(int region, int r)
{
    return ((MPI_Offset) region * tl_nprocs + r) * BLOCK;
}

static void expect_block(MPI_File fh, int region, int r, int tag, const char *what)
{
    unsigned char *got = malloc(BLOCK);
    MPI_Status st;
    char w[160];

    TL_MPI(MPI_File_read_at(fh, at(region, r), got, BLOCK, MPI_BYTE, &st));
    snprintf(w, sizeof(w), "%s (region %d, rank %d's block)", what, region, r);
    tl_verify(got, BLOCK, at(region, r), tag, w);
    free(got);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int peer = (tl_rank + 1) % tl_nprocs;
    unsigned char *buf = malloc(BLOCK);
    MPI_File a, b;
    MPI_Status st;

    /* 1. A writes region 0 and syncs; B opens afterwards (sync -> open) */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &a));
    tl_fill(buf, BLOCK, at(0, tl_rank), 1);
    TL_MPI(MPI_File_write_at_all(a, at(0, tl_rank), buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(a));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &b));
    expect_block(b, 0, peer, 1, "B reads what A synced before B opened");

    /* 2. B writes region 1 (independent data mode); sync B, barrier, sync A */
    tl_fill(buf, BLOCK, at(1, tl_rank), 2);
    TL_MPI(MPI_File_write_at(b, at(1, tl_rank), buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(b));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(a));
    expect_block(a, 1, peer, 2, "A reads what B synced");

    /* 3. A writes region 2; sync A, barrier, sync B */
    tl_fill(buf, BLOCK, at(2, tl_rank), 3);
    TL_MPI(MPI_File_write_at(a, at(2, tl_rank), buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(a));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(b));
    expect_block(b, 2, peer, 3, "B reads what A synced later");

    /* 3b. A grows the file (a logged set_size); B sees the size after sync */
    MPI_Offset size;
    TL_MPI(MPI_File_set_size(a, at(6, 0)));
    TL_MPI(MPI_File_sync(a));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(b));
    TL_MPI(MPI_File_get_size(b, &size));
    TL_CHECK(size == at(6, 0), "B sees size %lld after A's set_size, expected %lld",
             (long long) size, (long long) at(6, 0));

    /* 4. B closes (its logs become the canonical file); A still reads them */
    TL_MPI(MPI_File_close(&b));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_block(a, 1, peer, 2, "A reads B's data after B closed, before A syncs");
    TL_MPI(MPI_File_sync(a));
    expect_block(a, 1, peer, 2, "A reads B's data after B closed and A synced");

    /* 5. PnetCDF's order: B reopened, written and closed inside A's life */
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &b));
    tl_fill(buf, BLOCK, at(3, tl_rank), 4);
    TL_MPI(MPI_File_write_at(b, at(3, tl_rank), buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&b));
    TL_MPI(MPI_File_close(&a));         /* its logs must still be there */

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &a));
    for (int region = 0; region < 4; region++)
        expect_block(a, region, peer, region + 1, "after both closed");
    TL_MPI(MPI_File_get_size(a, &size));
    TL_CHECK(size == at(6, 0), "size %lld, expected %lld", (long long) size,
             (long long) at(6, 0));
    TL_MPI(MPI_File_close(&a));
    if (tl_is_bbfs(name))
        TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 0, "a manifest is left behind");
    free(buf);
    return tl_finish();
}
