/* Two communicators on different nodes open one file at the same moment;
 * both must end up with one ownership map.
 *
 *     t_twin_opens FILE [ROUNDS]
 *
 * The processes on rank 0's node form one group, the others another.
 * Each round, right after a barrier, both groups open FILE (new each
 * round) through their own communicator: neither sees the other's session
 * when it starts, so each would choose its own node's server for the map.
 * The second group writes a block per process and syncs; after a barrier
 * the first group syncs and must read those blocks (sync-barrier-sync).
 * Then the groups swap roles for a second check.  After both close, the
 * file must hold both groups' blocks.  Needs 2 or more nodes and
 * node-local logs. */
#include "off_node.h"

#define BLOCK 4096

static int rank;

static unsigned char pattern(long long off, int round)
{
    return (unsigned char) (off * 5 + round * 17 + 1);
}

static int failed(int err, const char *what, int round)
{
    if (err == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "FAIL [rank %d] round %d: %s: %s\n", rank, round, what, msg);
    return 1;
}

/* The blocks of the processes in group g (of ingroup[]): pattern(round)
 * there.  1 if any byte differs (printed). */
static int check_group(MPI_File fh, int nprocs, const int *group, int g, int round,
                       const char *when)
{
    unsigned char *buf = malloc(BLOCK);
    int bad = 0;
    for (int r = 0; r < nprocs && !bad; r++) {
        if (group[r] != g)
            continue;
        long long off = (long long) r * BLOCK;
        if (failed(MPI_File_read_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), when,
                   round)) {
            bad = 1;
            break;
        }
        for (int i = 0; i < BLOCK; i++)
            if (buf[i] != pattern(off + i, round)) {
                fprintf(stderr, "FAIL [rank %d] round %d, %s: byte %lld (rank %d's block) is "
                        "%d, want %d\n", rank, round, when, off + i, r, buf[i],
                        pattern(off + i, round));
                bad = 1;
                break;
            }
    }
    free(buf);
    return bad;
}

int main(int argc, char **argv)
{
    int nprocs, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: t_twin_opens FILE [ROUNDS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    /* group 0: rank 0's node; group 1: the other nodes */
    int *group = off_rank0_node(), others = 0;
    for (int r = 0; r < nprocs; r++)
        others += group[r];
    MPI_Comm mine;
    MPI_Comm_split(MPI_COMM_WORLD, group[rank], rank, &mine);
    unsigned char *buf = malloc(BLOCK);
    long long off = (long long) rank * BLOCK;

    for (int round = 1; round <= rounds; round++) {
        char name[4096];
        MPI_File fh;
        snprintf(name, sizeof(name), "%s.%d", argv[1], round);
        for (int i = 0; i < BLOCK; i++)
            buf[i] = pattern(off + i, round);
        MPI_Barrier(MPI_COMM_WORLD);
        int err = MPI_File_open(mine, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        bad |= failed(err, "open", round);
        int all_open;
        MPI_Allreduce(&err, &all_open, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (all_open != MPI_SUCCESS)
            break;
        /* group 1 writes, group 0 reads; then the other way round */
        for (int writer = 1; writer >= 0; writer--) {
            if (group[rank] == writer) {
                bad |= failed(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE,
                                                MPI_STATUS_IGNORE), "write", round);
                bad |= failed(MPI_File_sync(fh), "writers' sync", round);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (group[rank] != writer) {
                bad |= failed(MPI_File_sync(fh), "readers' sync", round);
                bad |= check_group(fh, nprocs, group, writer, round,
                                   writer ? "read of the other node's group after its sync"
                                   : "read of rank 0's node's group after its sync");
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        bad |= failed(MPI_File_close(&fh), "close", round);
        MPI_Barrier(MPI_COMM_WORLD);
        bad |= failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                      "open after both closed", round);
        bad |= check_group(fh, nprocs, group, 0, round, "read after both closed");
        bad |= check_group(fh, nprocs, group, 1, round, "read after both closed");
        bad |= failed(MPI_File_close(&fh), "last close", round);
    }

    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d rounds, %d processes in two groups opening at once (%d on other nodes)\n",
               anybad ? "FAIL" : "ok", rounds, nprocs, others);
    MPI_Comm_free(&mine);
    free(buf);
    free(group);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
