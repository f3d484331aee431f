/* A write that MPI orders before a read is visible to that read, with
 * default hints: one writer, one reader, ordered only by an MPI call of
 * each kind (no MPI_File_sync):
 *
 *   barrier, allreduce, bcast (from the writer), gather (to the reader),
 *   send/recv, isend/irecv + wait, sendrecv, ibarrier + wait, a chain of
 *   messages (0 -> 1 -> 2; 2 reads 0's write), a barrier on a
 *   sub-communicator of the writer and the reader only, making a
 *   communicator (MPI_Comm_split, MPI_Comm_dup), and one-sided calls: a
 *   flag put into the reader's window between two fences, and one put
 *   under a lock, which the reader watches under locks of its own.
 *
 * Then the writer writes past the end, and after a barrier the reader's
 * MPI_File_get_size, its first call after it, must count those bytes (its
 * call before the write, which it asks too, must not).
 *
 * The writer is rank 0, the reader the last rank (the chain's, rank 2).
 * Each kind writes its own tile of a noncontiguous file view (16-byte
 * blocks every 48 bytes) with an independent write, and the reader reads
 * the tile back through the same view.  The file must equal a ufs: run's.
 *
 * BBFS_TEST_EXPECT_STALE=1 (a run under bbfs_consistency mpiio): every
 * read must miss the write instead, showing that MPI's own ordering is
 * what makes the default model right.  Needs 2 or more processes (the
 * chain 3). */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 64
#define BLEN 16
#define STRIDE 48
#define TILE (BLOCKS * BLEN)            /* bytes of data in one tile */

enum kind { BARRIER, ALLREDUCE, BCAST, GATHER, SENDRECV_PAIR, ISEND_IRECV, SENDRECV,
    IBARRIER, CHAIN, SUBCOMM, COMM_SPLIT, COMM_DUP, WIN_FENCE, WIN_PUT_FLAG, NKINDS };
static const char *const kind_names[] = { "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast",
    "MPI_Gather", "MPI_Send/MPI_Recv", "MPI_Isend/MPI_Irecv + MPI_Wait", "MPI_Sendrecv",
    "MPI_Ibarrier + MPI_Wait", "a chain of messages 0 -> 1 -> 2", "a sub-communicator's barrier",
    "MPI_Comm_split", "MPI_Comm_dup", "MPI_Win_fence",
    "MPI_Put of a flag under MPI_Win_lock, watched under the reader's locks"
};

static int writer, reader, stale_expected, stale_seen;
static MPI_Win win;                     /* one int per process: a flag */
static int *flag;

/* The writer puts k into the reader's flag; the reader looks at its own
 * flag under locks until it is there.  Passive target: the reader makes no
 * call the writer waits for.  Between looks it probes for a message (none
 * comes) and naps: Open MPI's lock of a process's own window need not run
 * its progress engine, which the writer's lock request over the network
 * waits for, and a reader that took its shared lock again at once could
 * keep the writer's exclusive one out (stop 50's CI: one run in many hung
 * here until killed). */
static void put_flag(int k)
{
    if (tl_rank == writer) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, reader, 0, win);
        MPI_Put(&k, 1, MPI_INT, reader, 0, 1, MPI_INT, win);
        MPI_Win_unlock(reader, win);
    } else if (tl_rank == reader) {
        for (int seen = 0; seen != k;) {
            MPI_Win_lock(MPI_LOCK_SHARED, reader, 0, win);
            seen = *(volatile int *) flag;
            MPI_Win_unlock(reader, win);
            if (seen != k) {
                int any;
                struct timespec nap = { 0, 20 * 1000 };
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &any,
                           MPI_STATUS_IGNORE);
                nanosleep(&nap, NULL);
            }
        }
    }
}

/* The MPI call of kind k that orders the writer's write before the
 * reader's read (every process calls it; only some take part). */
static void order(int k, MPI_Comm pair)
{
    int v = tl_rank, sum, *all = malloc(sizeof(int) * (size_t) tl_nprocs);
    MPI_Request rq;
    switch (k) {
    case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(&v, 1, MPI_INT, writer, MPI_COMM_WORLD);
        break;
    case GATHER:
        MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, reader, MPI_COMM_WORLD);
        break;
    case SENDRECV_PAIR:
        if (tl_rank == writer)
            MPI_Send(&v, 1, MPI_INT, reader, 7, MPI_COMM_WORLD);
        else if (tl_rank == reader)
            MPI_Recv(&v, 1, MPI_INT, writer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case ISEND_IRECV:
        if (tl_rank == writer) {
            MPI_Isend(&v, 1, MPI_INT, reader, 8, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else if (tl_rank == reader) {
            MPI_Irecv(&v, 1, MPI_INT, writer, 8, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        break;
    case SENDRECV:
        if (tl_rank == writer || tl_rank == reader) {
            int peer = tl_rank == writer ? reader : writer;
            MPI_Sendrecv(&v, 1, MPI_INT, peer, 9, &sum, 1, MPI_INT, peer, 9, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
        break;
    case IBARRIER:
        MPI_Ibarrier(MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        break;
    case CHAIN:
        if (tl_rank == 0)
            MPI_Send(&v, 1, MPI_INT, 1, 10, MPI_COMM_WORLD);
        else if (tl_rank == 1) {
            MPI_Recv(&v, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, 2, 10, MPI_COMM_WORLD);
        } else if (tl_rank == 2)
            MPI_Recv(&v, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case SUBCOMM:
        if (pair != MPI_COMM_NULL)
            MPI_Barrier(pair);
        break;
    case COMM_SPLIT:
    case COMM_DUP:{
            MPI_Comm made;
            if (k == COMM_SPLIT)
                MPI_Comm_split(MPI_COMM_WORLD, tl_rank % 2, tl_rank, &made);
            else
                MPI_Comm_dup(MPI_COMM_WORLD, &made);
            MPI_Comm_free(&made);
            break;
        }
    case WIN_FENCE:            /* (the epoch opened before the write) */
        if (tl_rank == writer)
            MPI_Put(&k, 1, MPI_INT, reader, 0, 1, MPI_INT, win);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        TL_CHECK(tl_rank != reader || *flag == k, "%s: the put did not arrive (flag %d, not %d)",
                 kind_names[k], *flag, k);
        break;
    case WIN_PUT_FLAG:
        put_flag(k);
        break;
    default:
        break;
    }
    free(all);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_Datatype tile;
    MPI_File fh;
    MPI_Comm pair;
    unsigned char *buf = malloc(TILE), *got = malloc(TILE);

    TL_CHECK(tl_nprocs >= 2, "needs 2 or more processes");
    stale_expected = getenv("BBFS_TEST_EXPECT_STALE") && atoi(getenv("BBFS_TEST_EXPECT_STALE"));
    TL_CHECK(!stale_expected || tl_is_bbfs(name), "BBFS_TEST_EXPECT_STALE is for bbfs runs");
    writer = 0;
    MPI_Type_vector(BLOCKS, BLEN, STRIDE, MPI_BYTE, &tile);
    MPI_Type_commit(&tile);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    /* Zeros under every tile first, made visible the MPI-IO way: ROMIO's
     * data sieving on ufs: writes whatever its buffer held into the gaps
     * of a view past the end of the file. */
    long long extent = (long long) NKINDS * BLOCKS * STRIDE;
    if (tl_rank == 0) {
        unsigned char *zero = calloc((size_t) extent, 1);
        TL_MPI(MPI_File_write_at(fh, 0, zero, (int) extent, MPI_BYTE, MPI_STATUS_IGNORE));
        free(zero);
    }
    tl_sync_barrier_sync(fh);
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    MPI_Alloc_mem(sizeof(int), MPI_INFO_NULL, &flag);
    *flag = 0;
    MPI_Win_create(flag, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int k = 0; k < NKINDS; k++) {
        if (k == CHAIN && tl_nprocs < 3)
            continue;
        reader = k == CHAIN ? 2 : tl_nprocs - 1;
        int in_pair = tl_rank == writer || tl_rank == reader;
        MPI_Comm_split(MPI_COMM_WORLD, in_pair ? 0 : MPI_UNDEFINED, tl_rank, &pair);
        MPI_Offset at = (MPI_Offset) k * TILE;       /* (in the view: tile k) */
        if (k == WIN_FENCE)
            MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        if (tl_rank == writer) {
            tl_fill(buf, TILE, at, k + 1);
            TL_MPI(MPI_File_write_at(fh, at, buf, TILE, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        order(k, pair);
        if (tl_rank == reader) {
            memset(got, 0, TILE);
            TL_MPI(MPI_File_read_at(fh, at, got, TILE, MPI_BYTE, MPI_STATUS_IGNORE));
            tl_fill(buf, TILE, at, k + 1);
            int seen = memcmp(got, buf, TILE) == 0;
            if (stale_expected) {
                TL_CHECK(!seen, "%s: under mpiio the read saw the write with no "
                         "MPI_File_sync (the test cannot tell the models apart)",
                         kind_names[k]);
                stale_seen++;
            } else
                tl_verify(got, TILE, at, k + 1, kind_names[k]);
        }
        if (pair != MPI_COMM_NULL)
            MPI_Comm_free(&pair);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* The size, asked before any read after the barrier (so no view of
     * the others' writes is built for it): a write past the end that MPI
     * ordered before shows in it. */
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    reader = tl_nprocs - 1;
    /* (asked once before too, after a write of its own that makes the
     * size look at the logs: an answer kept from before the barrier, while
     * nothing had moved the end, must not serve after it.  The byte it
     * writes is the last write of offset 0 in the ufs: run too, and of the
     * highest rank in this epoch here, so the files still match.) */
    if (tl_rank == reader) {
        MPI_Offset before;
        unsigned char b = 0x5a;
        TL_MPI(MPI_File_write_at(fh, 0, &b, 1, MPI_BYTE, MPI_STATUS_IGNORE));
        TL_MPI(MPI_File_get_size(fh, &before));
        TL_CHECK(before == extent, "MPI_File_get_size before the write past the end: %lld, "
                 "expected %lld", (long long) before, (long long) extent);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == writer) {
        tl_fill(buf, TILE, extent, NKINDS + 1);
        TL_MPI(MPI_File_write_at(fh, extent, buf, TILE, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == reader) {
        MPI_Offset size;
        TL_MPI(MPI_File_get_size(fh, &size));
        long long want = stale_expected ? extent : extent + TILE;
        TL_CHECK(size == want, "MPI_File_get_size after MPI_Barrier: %lld, expected %lld%s",
                 (long long) size, want, stale_expected ? " (under mpiio: the write is not "
                 "synced)" : "");
    }
    int stale_all;
    MPI_Allreduce(&stale_seen, &stale_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tl_rank == 0 && stale_expected)
        printf("under mpiio, %d of %d orderings by MPI alone read stale data, as expected\n",
               stale_all, tl_nprocs >= 3 ? NKINDS : NKINDS - 1);
    MPI_Win_free(&win);
    MPI_Free_mem(flag);
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&tile);
    free(buf);
    free(got);
    return tl_finish();
}
