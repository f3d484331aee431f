/* One strided write of more blocks than one attach request to bbserver may
 * carry (2^24): the attach loop packed whole notes into requests, and a
 * single note of more blocks was never sent: the loop sent empty requests
 * for ever while the other processes waited (seen across 2 nodes).  Run
 * with BBFS_FORCE_REMOTE=1, so that one node attaches through its server.
 *
 * Each of P processes writes NBLOCKS 8-byte blocks through a vector view
 * (block i of process r at (i * P + r) * 8) in one MPI_File_write; after
 * sync-barrier-sync each reads 1 MiB around the middle of the file, every
 * process's blocks, and checks them.  The runner compares the file with
 * the ufs: run's. */
#include "testlib.h"
#include <stdint.h>
#include <stdlib.h>

#define NBLOCKS ((1 << 24) + 4096)

static uint64_t word(uint64_t off)
{
    return off * 0x9e3779b97f4a7c15ull ^ (off >> 3);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_Datatype view;
    MPI_File fh;
    MPI_Status st;
    uint64_t *buf = malloc(sizeof(uint64_t) * NBLOCKS);
    TL_CHECK(buf != NULL, "no memory");

    for (uint64_t i = 0; i < NBLOCKS; i++)
        buf[i] = word((i * (uint64_t) tl_nprocs + (uint64_t) tl_rank) * 8);
    TL_MPI(MPI_Type_vector(NBLOCKS, 8, 8 * tl_nprocs, MPI_BYTE, &view));
    TL_MPI(MPI_Type_commit(&view));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    TL_MPI(MPI_File_set_view(fh, (MPI_Offset) tl_rank * 8, MPI_BYTE, view, "native",
                             MPI_INFO_NULL));
    TL_MPI(MPI_File_write(fh, buf, NBLOCKS * 8, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);

    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    const uint64_t n = (1 << 20) / 8, at = (uint64_t) NBLOCKS * tl_nprocs * 8 / 2;
    TL_MPI(MPI_File_read_at(fh, (MPI_Offset) at, buf, (int) n * 8, MPI_BYTE, &st));
    for (uint64_t i = 0; i < n; i++)
        TL_CHECK(buf[i] == word(at + 8 * i), "the block at %llu is 0x%016llx, expected 0x%016llx",
                 (unsigned long long) (at + 8 * i), (unsigned long long) buf[i],
                 (unsigned long long) word(at + 8 * i));
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&view);
    free(buf);
    return tl_finish();
}
