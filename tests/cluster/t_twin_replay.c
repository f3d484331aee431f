/* Atomic mode or a truncation on one handle while another handle of the
 * file is open must not hide that handle's synced writes, nor let them
 * land over newer ones.
 *
 *     t_twin_replay FILE atomic|shrink [halves]
 *
 * The processes on rank 0's node open FILE through one communicator
 * (handle A), then the others through another (handle B), which attaches
 * to A's map.  B's processes write two blocks each (their own, and one in
 * a second row) and sync.  Then A's rank 0 rewrites the second-row block of
 * B's first process, A's processes write their own blocks and sync.  Then,
 * atomic: A switches atomic mode on (which keeps A's logs, as B's older
 * writes are still in B's), and A's rank 0 rewrites the second-row block
 * of B's last process, which A's other processes must read at once;
 * shrink: rank 0 of A writes a block past the
 * second row (and does not rewrite B's), and A truncates the file to two
 * rows (which replays A's logs now, and the map must forget only A's).
 * After a barrier both handles sync and must read every block: B's, A's,
 * and the rewritten one as A wrote it (A's write came after B's sync).
 * After both close, the file must hold the same, and, shrink, be two rows
 * long.  Needs 2 or more nodes and node-local logs, or, with halves, the
 * lower half of the ranks are A and the upper B (one node). */
#include "off_node.h"

#define BLOCK 4096

static unsigned char pattern(long long off, int who)
{
    return (unsigned char) (off * 7 + who * 53 + 5);
}

static void fill(unsigned char *buf, long long off, int who)
{
    for (int i = 0; i < BLOCK; i++)
        buf[i] = pattern(off + i, who);
}

/* Write who's block at off.  1 if that failed (printed). */
static int put(MPI_File fh, long long off, int who, const char *what)
{
    unsigned char buf[BLOCK];
    fill(buf, off, who);
    return cluster_failed(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                          what);
}

/* Every block as it must read: own row from its writer (group 0 or 1),
 * second row B's, but A's for the blocks of B's first and last process
 * (A rewrote them; -1: none). */
static int check_all(MPI_File fh, int nprocs, const int *group, int first_b, int last_b,
                     const char *when)
{
    unsigned char want[BLOCK];
    int bad = 0;
    for (int r = 0; r < nprocs && !bad; r++) {
        long long off = (long long) r * BLOCK;
        fill(want, off, group[r]);
        bad |= cluster_expect(fh, off, want, BLOCK, when);
        if (!group[r])
            continue;
        off = (long long) (nprocs + r) * BLOCK;
        fill(want, off, r == first_b || r == last_b ? 0 : 1);
        bad |= cluster_expect(fh, off, want, BLOCK, when);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int rank, nprocs, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3 || (strcmp(argv[2], "atomic") && strcmp(argv[2], "shrink"))) {
        if (rank == 0)
            fprintf(stderr, "usage: t_twin_replay FILE atomic|shrink\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int shrink = !strcmp(argv[2], "shrink");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int halves = argc > 3 && !strcmp(argv[3], "halves"), *group, first_b = -1;
    if (halves) {
        group = malloc(sizeof(int) * (size_t) nprocs);
        for (int r = 0; r < nprocs; r++)
            group[r] = r >= nprocs / 2;
    } else
        group = off_rank0_node();
    /* B's processes whose second-row blocks A rewrites (atomic): first_b's
     * before atomic mode, last_b's in it */
    int last_b = -1;
    for (int r = nprocs - 1; r >= 0 && !shrink; r--)
        if (group[r]) {
            first_b = r;
            if (last_b < 0)
                last_b = r;
        }
    if (last_b == first_b)
        last_b = -1;
    MPI_Comm mine;
    MPI_Comm_split(MPI_COMM_WORLD, group[rank], rank, &mine);
    long long own = (long long) rank * BLOCK, row2 = (long long) (nprocs + rank) * BLOCK;
    MPI_File fh = MPI_FILE_NULL;
    int err = MPI_SUCCESS;

    /* A first, then B (which finds A's session live and joins its map) */
    for (int g = 0; g < 2; g++) {
        if (group[rank] == g)
            bad |= cluster_failed(err = MPI_File_open(mine, argv[1], MPI_MODE_CREATE |
                                                      MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                                  g ? "open of B" : "open of A");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all_open;
    MPI_Allreduce(&err, &all_open, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all_open != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (group[rank]) {
        bad |= put(fh, own, 1, "B's write");
        bad |= put(fh, row2, 1, "B's second write");
        bad |= cluster_failed(MPI_File_sync(fh), "B's sync");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!group[rank]) {
        bad |= cluster_failed(MPI_File_sync(fh), "A's first sync");
        if (rank == 0 && !shrink) {
            long long at = (long long) (nprocs + first_b) * BLOCK;
            bad |= put(fh, at, 0, "A's rewrite");
        }
        bad |= put(fh, own, 0, "A's write");
        if (rank == 0 && shrink) {
            long long at = (long long) 2 * nprocs * BLOCK;
            bad |= put(fh, at, 0, "A's write past");
        }
        bad |= cluster_failed(MPI_File_sync(fh), "A's sync");
        if (shrink)
            bad |= cluster_failed(MPI_File_set_size(fh, (MPI_Offset) 2 * nprocs * BLOCK),
                                  "A's set_size to two rows (a replay)");
        else
            bad |= cluster_failed(MPI_File_set_atomicity(fh, 1), "A's set_atomicity");
        /* atomic mode: A's other processes see rank 0's write when it
         * returns, without a sync */
        if (!shrink && last_b >= 0) {
            long long at = (long long) (nprocs + last_b) * BLOCK;
            unsigned char want[BLOCK];
            if (rank == 0)
                bad |= put(fh, at, 0, "A's write in atomic mode");
            MPI_Barrier(mine);
            fill(want, at, 0);
            bad |= cluster_expect(fh, at, want, BLOCK, "read through A of its atomic write");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= cluster_failed(MPI_File_sync(fh), "sync after A's replay");
    bad |= check_all(fh, nprocs, group, first_b, last_b, group[rank]
                     ? "read through B after A's step" : "read through A after its step");
    if (shrink) {
        MPI_Offset size;
        bad |= cluster_failed(MPI_File_get_size(fh, &size), "size after A's truncation");
        if (size != (MPI_Offset) 2 * nprocs * BLOCK) {
            fprintf(stderr, "FAIL [rank %d]: %s sees %lld bytes after A's truncation, want "
                    "%lld\n", rank, group[rank] ? "B" : "A", (long long) size,
                    (long long) 2 * nprocs * BLOCK);
            bad = 1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= cluster_failed(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= cluster_failed(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL,
                                        &fh), "open after both closed");
    bad |= check_all(fh, nprocs, group, first_b, last_b, "read after both closed");
    MPI_Offset size;
    bad |= cluster_failed(MPI_File_get_size(fh, &size), "size after both closed");
    if (shrink && size != (MPI_Offset) 2 * nprocs * BLOCK) {
        fprintf(stderr, "FAIL [rank %d]: the file is %lld bytes after both closed, want %lld "
                "(two rows)\n", rank, (long long) size, (long long) 2 * nprocs * BLOCK);
        bad = 1;
    }
    bad |= cluster_failed(MPI_File_close(&fh), "last close");

    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s on a handle beside another still open\n", anybad ? "FAIL" : "ok",
               shrink ? "a truncation" : "atomic mode");
    MPI_Comm_free(&mine);
    free(group);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
