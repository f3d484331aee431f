/* A read-only handle opened while no other handle of the file is open
 * finds a server only when a read needs one (ad_bbfs_server.c,
 * may_connect_late): each of its processes on its own.
 *
 *     t_late_readers FILE [pending]       (or T_LATE_READERS_PENDING set)
 *
 * Readers are the processes on other nodes than rank 0, writers the rest
 * (on one node, the odd ranks read: there no server is used, and
 * bbfs_map_server must say "none" throughout).
 *   1. Every process makes FILE (one block of 1s per process) and closes
 *      it: the file is canonical, nothing pending.  With "pending", the
 *      close leaves its logs pending (bbfs_replay never), the readers'
 *      open replays them and, across nodes, tells its map's server so:
 *      it is connected from its open, to its own process 0's node's
 *      server, not the one the writers choose below.
 *   2. The readers open it read-only through their own communicator and
 *      read it, twice with barriers between (acquires): every block must
 *      be 1s, and get_info's bbfs_map_server must say "unconnected": no
 *      server was asked anything (with "pending": a host:port).
 *   3. The writers open it through theirs, overwrite their blocks with 2s
 *      and sync; a barrier of every process orders that before the
 *      readers' next reads, which must see the 2s (the default model,
 *      causal: the writers' sync published their session, so the readers
 *      ask its map), and bbfs_map_server is a host:port now.
 *   4. Both close; in the file every writer's block is 2s, every
 *      reader's 1s.
 * Across nodes, with node-local logs; or on one node (make check runs it
 * there as mpiio-tests/t_late_readers.mpi).  Fails naming what differs. */
#include "off_node.h"

#define BLOCK 4096

static int rank, nprocs, bad, several_nodes, on_bbfs;

static void fill(unsigned char *b, int v)
{
    memset(b, v, BLOCK);
}

static void map_server(MPI_File fh, int want_connected, const char *when)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;

    if (!on_bbfs)               /* (the reference run, on ufs:) */
        return;
    if (cluster_failed(MPI_File_get_info(fh, &info), "get_info")) {
        bad = 1;
        return;
    }
    MPI_Info_get(info, "bbfs_map_server", MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&info);
    const char *want = !several_nodes ? "none" : want_connected ? "a host:port" : "unconnected";
    int ok = flag && (several_nodes && want_connected ? strchr(v, ':') != NULL : !strcmp(v, want));
    if (!ok) {
        fprintf(stderr, "FAIL [rank %d]: %s: bbfs_map_server is \"%s\", want %s\n", rank, when,
                flag ? v : "(absent)", want);
        bad = 1;
    }
}

/* Every block as the readers must see it: writers' blocks at version w. */
static void expect_all(MPI_File fh, const int *off, int w, const char *when)
{
    unsigned char want[BLOCK];
    for (int r = 0; r < nprocs; r++) {
        fill(want, off[r] ? 1 : w);
        bad |= cluster_expect(fh, (long long) r * BLOCK, want, BLOCK, when);
    }
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Comm mine;
    unsigned char buf[BLOCK];
    int total;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: t_late_readers FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *name = argv[1];
    int pending = (argc > 2 && !strcmp(argv[2], "pending")) || getenv("T_LATE_READERS_PENDING");
    on_bbfs = !strncmp(name, "bbfs:", 5);
    /* (the processes off rank 0's host read; on one host, the odd ones) */
    int *off = off_rank0_hosts(&several_nodes);
    for (int r = 0; r < nprocs && !several_nodes; r++)
        off[r] = r % 2;
    int reader = off[rank];
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "FAIL: needs 2 or more processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_split(MPI_COMM_WORLD, reader, rank, &mine);

    /* 1 */
    fill(buf, 1);
    MPI_Info never;
    MPI_Info_create(&never);
    if (pending)
        MPI_Info_set(never, "bbfs_replay", "never");
    bad |= cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                        never, &fh), "open to make");
    MPI_Info_free(&never);
    if (!bad) {
        bad |= cluster_failed(MPI_File_write_at(fh, (MPI_Offset) rank * BLOCK, buf, BLOCK,
                                                MPI_BYTE, MPI_STATUS_IGNORE), "write 1s");
        bad |= cluster_failed(MPI_File_close(&fh), "close after making");
    }
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (total)
        MPI_Abort(MPI_COMM_WORLD, 1);

    /* 2 */
    if (reader) {
        bad |= cluster_failed(MPI_File_open(mine, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                              "readers' open");
        expect_all(fh, off, 1, "first read, nothing pending");
        MPI_Barrier(mine);
        expect_all(fh, off, 1, "read after a barrier, nothing pending");
        map_server(fh, pending, "after reads of a finished file");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3 */
    MPI_File wfh = MPI_FILE_NULL;
    if (!reader) {
        fill(buf, 2);
        bad |= cluster_failed(MPI_File_open(mine, name, MPI_MODE_RDWR, MPI_INFO_NULL, &wfh),
                              "writers' open");
        bad |= cluster_failed(MPI_File_write_at(wfh, (MPI_Offset) rank * BLOCK, buf, BLOCK,
                                                MPI_BYTE, MPI_STATUS_IGNORE), "write 2s");
        bad |= cluster_failed(MPI_File_sync(wfh), "writers' sync");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (reader) {
        expect_all(fh, off, 2, "read after the writers' sync and a barrier");
        map_server(fh, 1, "after reading a live session's writes");
        bad |= cluster_failed(MPI_File_close(&fh), "readers' close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!reader)
        bad |= cluster_failed(MPI_File_close(&wfh), "writers' close");

    /* 4 */
    MPI_Barrier(MPI_COMM_WORLD);
    if (!cluster_failed(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL,
                                      &fh), "open to check")) {
        expect_all(fh, off, 2, "the file after both closed");
        bad |= cluster_failed(MPI_File_close(&fh), "close after checking");
    } else
        bad = 1;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !total)
        printf("ok: a read-only handle asked no server until a session was published, then "
               "saw its writes\n No Errors\n");
    MPI_Comm_free(&mine);
    free(off);
    MPI_Finalize();
    return total;
}
