/* Writes that MPI orders land in that order when the nodes' clocks
 * disagree.
 *
 *     t_clock_skew FILE SKEW_NS
 *
 * The processes on other nodes than rank 0's run with their clock SKEW_NS
 * nanoseconds off (BBFS_CLOCK_SKEW_NS, which only tests set: it moves the
 * clock bbfs stamps writes with, on that node, and its bbserver's).  Rank
 * 0 is A; the first process on another node is B.  Needs 2 or more nodes.
 *
 * 1. Two handles of FILE (both on MPI_COMM_WORLD: two sessions, as
 *    PnetCDF opens), four blocks, one after the other.  Block k is
 *    written first by one of A and B through one handle, then, after
 *    sync, barrier, sync on both handles, by the other through the other
 *    handle (and sync, barrier, sync again):
 *      block 0: A on h0, then B on h1     block 2: A on h1, then B on h0
 *      block 1: B on h0, then A on h1     block 3: B on h1, then A on h0
 *    Each block must hold its second write: read through both handles,
 *    and after both close (their sessions replayed in one plan, which
 *    orders writes of different sessions by their stamps).
 * 2. FILE.posix under bbfs_consistency posix, one handle: the same four
 *    blocks written twice, one after the other, with only a barrier
 *    between (each write is visible at once under posix, and the later
 *    one wins).
 * 3. FILE.causal, the same with default hints (causal): the barrier
 *    releases the first write and orders the second after it (whose stamp
 *    comes with the answer to the attach that releases it).
 * 4. FILE.self, the same through a handle of A's and one of B's, each on
 *    MPI_COMM_SELF and opened before any write: such a handle finds its
 *    server only when its first release publishes its writes, and those
 *    writes, made before it heard any clock, must still come after what
 *    the barrier ordered before them.
 * 5. FILE.late: A writes every block through one handle and syncs; then
 *    a second handle is opened, and B's first writes through it (no sync
 *    on it since its open) write every block again.  Those writes stamp
 *    with the clock process 0 heard from the map at the open, not with
 *    one asked at the first write: it must come after A's attached ones.
 *
 * Byte for byte with a run on ufs:, and each block checked here. */
#include "off_node.h"

#define BLOCK 4096
#define NBLOCKS 4

static int rank;

/* The two writes of block k: (writer, handle) of the first and second. */
static const struct {
    int first_b, first_h, second_h;     /* first_b: B writes first */
} plan[NBLOCKS] = { {0, 0, 1}, {1, 0, 1}, {0, 1, 0}, {1, 1, 0} };

static void fill(unsigned char *buf, int k, int which)
{
    for (int i = 0; i < BLOCK; i++)
        buf[i] = (unsigned char) (k * 37 + which * 101 + i % 251 + 1);
}

/* Who wrote every block last, where the plan does not say (case 5). */
static const char *last_writer;

/* 1 unless every block holds its second write (printed). */
static int check_blocks(MPI_File fh, const char *when)
{
    unsigned char want[BLOCK];
    int bad = 0;
    for (int k = 0; k < NBLOCKS && !bad; k++) {
        char what[256];
        fill(want, k, 2);
        snprintf(what, sizeof(what), "%s, block %d (%s wrote it last)", when, k,
                 last_writer ? last_writer : plan[k].first_b ? "A" : "B");
        bad |= cluster_expect(fh, (long long) k * BLOCK, want, BLOCK, what);
    }
    return bad;
}

/* Who writes block k at step which (1 or 2): 1 if this process. */
static int writes(int k, int which, int b)
{
    int b_writes = which == 1 ? plan[k].first_b : !plan[k].first_b;
    return b_writes ? rank == b : rank == 0;
}

static int write_block(MPI_File fh, int k, int which)
{
    unsigned char buf[BLOCK];
    fill(buf, k, which);
    return cluster_failed(MPI_File_write_at(fh, (long long) k * BLOCK, buf, BLOCK, MPI_BYTE,
                                            MPI_STATUS_IGNORE), "write");
}

/* Sync, barrier, sync on both handles. */
static int sync_barrier_sync(MPI_File fh[2])
{
    int bad = 0;
    for (int h = 0; h < 2; h++)
        bad |= cluster_failed(MPI_File_sync(fh[h]), "sync before the barrier");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int h = 0; h < 2; h++)
        bad |= cluster_failed(MPI_File_sync(fh[h]), "sync after the barrier");
    return bad;
}

/* Every block holds its second write, read through each handle; then both
 * close. */
static int check_and_close(MPI_File fh[2], const char *first, const char *second)
{
    int bad = check_blocks(fh[0], first);
    bad |= check_blocks(fh[1], second);
    for (int h = 0; h < 2; h++)
        bad |= cluster_failed(MPI_File_close(&fh[h]), "close");
    return bad;
}

static int two_handles(const char *name, int b)
{
    MPI_File fh[2];
    int bad = 0;
    for (int h = 0; h < 2; h++)
        if (cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                         MPI_INFO_NULL, &fh[h]), "open"))
            MPI_Abort(MPI_COMM_WORLD, 1);
    /* one write an epoch: a session's earlier epochs must not order them */
    for (int k = 0; k < NBLOCKS; k++)
        for (int which = 1; which <= 2; which++) {
            if (writes(k, which, b))
                bad |= write_block(fh[which == 1 ? plan[k].first_h : plan[k].second_h], k,
                                   which);
            bad |= sync_barrier_sync(fh);
        }
    return bad | check_and_close(fh, "two handles, read through the first",
                                 "two handles, read through the second");
}

/* One handle under @p model (NULL: the default), only barriers between
 * the writes. */
static int barriers(const char *name, int b, const char *model)
{
    MPI_File fh;
    MPI_Info info;
    char when[128];
    int bad = 0;
    MPI_Info_create(&info);
    if (model)
        MPI_Info_set(info, "bbfs_consistency", model);
    if (cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                     info, &fh), "open"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Info_free(&info);
    for (int k = 0; k < NBLOCKS; k++)
        for (int which = 1; which <= 2; which++) {
            if (writes(k, which, b))
                bad |= write_block(fh, k, which);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    snprintf(when, sizeof(when), "%s, read before the close", model ? model : "default hints");
    bad |= check_blocks(fh, when);
    bad |= cluster_failed(MPI_File_close(&fh), "close");
    return bad;
}

/* A's and B's handles of name on MPI_COMM_SELF, only barriers between
 * the writes. */
static int self_handles(const char *name, int b)
{
    MPI_File fh = MPI_FILE_NULL;
    int bad = 0, mine = rank == 0 || rank == b;
    if (mine && cluster_failed(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE |
                                             MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);        /* (both open before any write) */
    for (int k = 0; k < NBLOCKS; k++)
        for (int which = 1; which <= 2; which++) {
            if (writes(k, which, b))
                bad |= write_block(fh, k, which);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    if (mine) {
        bad |= check_blocks(fh, rank == 0 ? "MPI_COMM_SELF handles, read through A's"
                            : "MPI_COMM_SELF handles, read through B's");
        bad |= cluster_failed(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);        /* (both closed before the check) */
    return bad;
}

/* A's writes through one handle, synced; then B's, the first through a
 * handle opened after them. */
static int late_handle(const char *name, int b)
{
    MPI_File fh[2];
    int bad = 0;
    if (cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                     MPI_INFO_NULL, &fh[0]), "open"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int k = 0; k < NBLOCKS && rank == 0; k++)
        bad |= write_block(fh[0], k, 1);
    bad |= cluster_failed(MPI_File_sync(fh[0]), "sync before the barrier");
    MPI_Barrier(MPI_COMM_WORLD);
    if (cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL,
                                     &fh[1]), "open of the second handle"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int k = 0; k < NBLOCKS && rank == b; k++)
        bad |= write_block(fh[1], k, 2);
    bad |= sync_barrier_sync(fh);
    return bad | check_and_close(fh, "a handle opened late, read through the first",
                                 "a handle opened late, read through it");
}

/* 1 unless name, reopened after its close, holds every block's second write. */
static int check_closed(const char *name, const char *when)
{
    MPI_File fh;
    int bad = cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL,
                                           &fh), "reopen");
    if (!bad) {
        bad |= check_blocks(fh, when);
        bad |= cluster_failed(MPI_File_close(&fh), "close after the check");
    }
    return bad;
}

int main(int argc, char **argv)
{
    int nprocs, bad = 0, b = -1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: t_clock_skew FILE SKEW_NS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int *off = off_rank0_node();
    for (int r = nprocs - 1; r > 0; r--)
        if (off[r])
            b = r;
    /* before bbfs runs here, so that this node's server starts skewed too */
    if (off[rank])
        setenv("BBFS_CLOCK_SKEW_NS", argv[2], 1);

    char name[4096];
    bad |= two_handles(argv[1], b);
    bad |= check_closed(argv[1], "two handles, after both closed");
    snprintf(name, sizeof(name), "%s.posix", argv[1]);
    bad |= barriers(name, b, "posix");
    bad |= check_closed(name, "posix, after the close");
    snprintf(name, sizeof(name), "%s.causal", argv[1]);
    bad |= barriers(name, b, NULL);
    bad |= check_closed(name, "default hints, after the close");
    snprintf(name, sizeof(name), "%s.self", argv[1]);
    bad |= self_handles(name, b);
    bad |= check_closed(name, "MPI_COMM_SELF handles, after both closed");
    snprintf(name, sizeof(name), "%s.late", argv[1]);
    last_writer = "B";
    bad |= late_handle(name, b);
    bad |= check_closed(name, "a handle opened late, after both closed");

    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: t_clock_skew with the other nodes' clocks %s ns off (A rank 0, B rank %d)\n",
               anybad ? "FAIL" : "PASS", argv[2], b);
    free(off);
    MPI_Finalize();
    return anybad;
}
