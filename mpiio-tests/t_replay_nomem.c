/* A replay in which one process cannot plan its share (no memory; injected
 * with BBFS_FAULT=replay-plan:ENOMEM:once in process BBFS_FAULT_RANK) must fail on every
 * process and keep the logs: before, that process silently wrote nothing
 * for its share, the replay reported success, and the logs were deleted.
 * t_replay_flush.mpi runs it with the canonical file's write failing
 * instead (canonical-write:EIO) under bbfs_durable and
 * romio_synchronized_flush: the flush after the last round is collective
 * then, and the process whose write failed skipped it, so the others
 * waited there for ever.
 *
 * Each process writes its block and closes; on bbfs the close fails
 * everywhere (MPI_ERR_NO_MEM on the process that could not plan), the
 * manifest stays, and a read-only open replays the logs and finds every
 * block.  The runner compares the file with ufs:. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 65536

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char *buf = malloc(BLOCK);
    const char *fault = getenv("BBFS_FAULT_RANK"), *what = getenv("BBFS_FAULT");
    int victim = fault ? atoi(fault) : -1, err;
    int cls = what && strstr(what, ":EIO") ? MPI_ERR_IO : MPI_ERR_NO_MEM;
    MPI_File fh;
    MPI_Status st;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    tl_fill(buf, BLOCK, (long long) tl_rank * BLOCK, 1);
    TL_MPI(MPI_File_write_at(fh, (MPI_Offset) tl_rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    err = MPI_File_close(&fh);
    if (tl_is_bbfs(name) && victim >= 0 && victim < tl_nprocs) {
        TL_CHECK(err != MPI_SUCCESS, "the close succeeded although process %d could not plan "
                 "its share of the replay", victim);
        if (tl_rank == victim)
            tl_expect_class(err, cls, "close whose replay failed there");
        MPI_Barrier(MPI_COMM_WORLD);
        if (tl_rank == 0)
            TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 1,
                     "the logs of the failed replay are gone (no manifest left)");
    } else {
        TL_MPI(err);
    }

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int r = 0; r < tl_nprocs; r++) {
        char what[80];
        TL_MPI(MPI_File_read_at(fh, (MPI_Offset) r * BLOCK, buf, BLOCK, MPI_BYTE, &st));
        snprintf(what, sizeof(what), "block %d after the replay at open", r);
        tl_verify(buf, BLOCK, (long long) r * BLOCK, 1, what);
    }
    TL_MPI(MPI_File_close(&fh));
    if (tl_is_bbfs(name) && tl_rank == 0)
        TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 0, "logs left after the replay at open");
    free(buf);
    return tl_finish();
}
