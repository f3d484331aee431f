/* Handles of one process (MPI_COMM_SELF) on one shared file, ordered by
 * MPI calls only, as a file-per-process code that sometimes shares a file
 * makes them.  Across nodes with node-local logs such a handle finds its
 * node's server only when it first needs one (its first release, or a
 * read after an acquire), so each step here is one where it must:
 *
 *   1. ranks 0 and 1 and the last rank open the file, each on
 *      MPI_COMM_SELF, before anyone writes; rank 0 writes block 0; a
 *      barrier; the last rank reads it (its handle has talked to no server
 *      yet and must find rank 0's map), overwrites it and writes block 1;
 *      a barrier; rank 0 reads both (the overwrite must win, here and in
 *      the file); then rank 1, which has read nothing, overwrites block 1
 *      (its first release publishes the write, in rank 0's map, stamped
 *      after the last rank's), and after a barrier rank 0 reads it;
 *   2. rank 2 opens the file only now, on MPI_COMM_SELF, and reads both
 *      blocks (the open must find the map the others published);
 *   3. everyone closes; the file must equal a ufs: run's;
 *   4. each process writes a file of its own on MPI_COMM_SELF and closes
 *      it (a close that replays from memory and talks to no server), and
 *      after a barrier the next process reads it.
 *
 * On one node every step holds too (no server is involved there).  Needs
 * 4 or more processes. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096

static void write_block(MPI_File fh, int block, int tag)
{
    unsigned char buf[BLOCK];
    tl_fill(buf, BLOCK, (long long) block * BLOCK, tag);
    TL_MPI(MPI_File_write_at(fh, (MPI_Offset) block * BLOCK, buf, BLOCK, MPI_BYTE,
                             MPI_STATUS_IGNORE));
}

static void read_block(MPI_File fh, int block, int tag, const char *what)
{
    unsigned char buf[BLOCK];
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_read_at(fh, (MPI_Offset) block * BLOCK, buf, BLOCK, MPI_BYTE,
                            MPI_STATUS_IGNORE));
    tl_verify(buf, BLOCK, (long long) block * BLOCK, tag, what);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int last = tl_nprocs - 1;
    MPI_File fh = MPI_FILE_NULL;
    const int rw = MPI_MODE_CREATE | MPI_MODE_RDWR;

    TL_CHECK(tl_nprocs >= 4, "needs 4 or more processes");
    /* 1: two handles opened before any write */
    if (tl_rank == 0 || tl_rank == 1 || tl_rank == last)
        TL_MPI(MPI_File_open(MPI_COMM_SELF, name, rw, MPI_INFO_NULL, &fh));
    if (tl_rank == 0)
        write_block(fh, 0, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == last) {
        read_block(fh, 0, 1, "step 1: the last rank reads rank 0's block after a barrier");
        write_block(fh, 0, 2);
        write_block(fh, 1, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0) {
        read_block(fh, 0, 2, "step 1: rank 0 reads its block overwritten by the last rank");
        read_block(fh, 1, 3, "step 1: rank 0 reads the last rank's new block");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 1)
        write_block(fh, 1, 5);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        read_block(fh, 1, 5, "step 1: rank 0 reads block 1 overwritten by rank 1");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2: a handle opened after both published */
    if (tl_rank == 2) {
        TL_MPI(MPI_File_open(MPI_COMM_SELF, name, rw, MPI_INFO_NULL, &fh));
        read_block(fh, 0, 2, "step 2: a handle opened later reads block 0");
        read_block(fh, 1, 5, "step 2: a handle opened later reads block 1");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3 */
    if (fh != MPI_FILE_NULL)
        TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4: a file per process */
    char own[4096], next[4096];
    snprintf(own, sizeof(own), "%s.rank%d", name, tl_rank);
    snprintf(next, sizeof(next), "%s.rank%d", name, (tl_rank + 1) % tl_nprocs);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, own, rw, MPI_INFO_NULL, &fh));
    write_block(fh, 0, 10 + tl_rank);
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, next, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    read_block(fh, 0, 10 + (tl_rank + 1) % tl_nprocs,
               "step 4: the next process's own file, closed before a barrier");
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
