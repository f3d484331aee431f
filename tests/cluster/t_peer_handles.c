/* A second handle of a file, opened while a first is open, must attach to
 * the map the first one asks (PnetCDF's MPI_COMM_SELF handle beside its
 * collective one, here across nodes).
 *
 *     t_peer_handles FILE
 *
 * Every process holds the file open through MPI_COMM_WORLD (handle A);
 * then the processes on the nodes other than rank 0's open it again
 * through a communicator of their own (handle B), write a block each and
 * sync.  After a barrier and a sync of A, every process reads through A
 * and must see B's blocks (sync-barrier-sync).  A's map is on rank 0's
 * node's server; B's rank 0 is on another node, whose server B would use
 * if A's manifest did not name A's map.  Then the writers write their
 * blocks again through B, with no sync, and close B, which leaves its
 * logs to A's close (A is open): a close is a sync point, so after a
 * barrier and a sync of A every process must read those writes through
 * A (the close attaches them once it knows it leaves its logs to A; a
 * close that replays attaches nothing).  After both close, the file must
 * hold B's last blocks.  Needs 2 or more nodes and node-local logs. */
#include "off_node.h"

#define BLOCK 4096

static int rank;

static unsigned char pattern(long long off, int pass)
{
    return (unsigned char) (off * 11 + pass * 29 + 3);
}

static int failed(int err, const char *what)
{
    if (err == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "FAIL [rank %d]: %s: %s\n", rank, what, msg);
    return 1;
}

/* Read every process's block through fh; want pass `late` in the blocks of
 * the processes with writer[r], pass 0 elsewhere. */
static int check(MPI_File fh, int nprocs, const int *writer, int late, const char *when)
{
    unsigned char *buf = malloc(BLOCK);
    int bad = 0;
    for (int r = 0; r < nprocs && !bad; r++) {
        long long off = (long long) r * BLOCK;
        int want_pass = writer[r] ? late : 0;
        if (failed(MPI_File_read_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), when)) {
            bad = 1;
            break;
        }
        for (int i = 0; i < BLOCK; i++)
            if (buf[i] != pattern(off + i, want_pass)) {
                fprintf(stderr, "FAIL [rank %d] %s: byte %lld (rank %d's block) is %d, want %d "
                        "(%s)\n", rank, when, off + i, r, buf[i], pattern(off + i, want_pass),
                        buf[i] == pattern(off + i, 0) ? "the old data" : "neither");
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
    MPI_File fh, a, b;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: t_peer_handles FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    /* writers: the processes on another node than rank 0 */
    int *writer = off_rank0_node(), nwriters = 0;
    for (int r = 0; r < nprocs; r++)
        nwriters += writer[r];

    /* pass 0 everywhere, replayed at close */
    unsigned char *buf = malloc(BLOCK);
    long long mine = (long long) rank * BLOCK;
    for (int i = 0; i < BLOCK; i++)
        buf[i] = pattern(mine + i, 0);
    bad |= failed(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                MPI_INFO_NULL, &fh), "first open");
    bad |= failed(MPI_File_write_at_all(fh, mine, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                  "first write");
    bad |= failed(MPI_File_close(&fh), "first close");

    bad |= failed(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDWR, MPI_INFO_NULL, &a),
                  "open of A (every process)");
    MPI_Comm wcomm;
    MPI_Comm_split(MPI_COMM_WORLD, writer[rank], rank, &wcomm);
    if (writer[rank]) {
        for (int i = 0; i < BLOCK; i++)
            buf[i] = pattern(mine + i, 1);
        bad |= failed(MPI_File_open(wcomm, argv[1], MPI_MODE_WRONLY, MPI_INFO_NULL, &b),
                      "open of B (the writers)");
        bad |= failed(MPI_File_write_at(b, mine, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                      "write through B");
        bad |= failed(MPI_File_sync(b), "sync of B");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= failed(MPI_File_sync(a), "sync of A");
    bad |= check(a, nprocs, writer, 1, "read through A after B's sync");
    MPI_Barrier(MPI_COMM_WORLD);        /* (every read above done before the writes below) */
    if (writer[rank]) {
        for (int i = 0; i < BLOCK; i++)
            buf[i] = pattern(mine + i, 2);
        bad |= failed(MPI_File_write_at(b, mine, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                      "second write through B");
        bad |= failed(MPI_File_close(&b), "close of B");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= failed(MPI_File_sync(a), "sync of A after B's close");
    bad |= check(a, nprocs, writer, 2, "read through A after B's close (its last writes "
                 "not synced before it)");
    bad |= failed(MPI_File_close(&a), "close of A");

    bad |= failed(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                  "last open");
    bad |= check(fh, nprocs, writer, 2, "read after both closed");
    bad |= failed(MPI_File_close(&fh), "last close");

    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d processes, %d writing through a second handle on other nodes\n",
               anybad ? "FAIL" : "ok", nprocs, nwriters);
    MPI_Comm_free(&wcomm);
    free(buf);
    free(writer);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
