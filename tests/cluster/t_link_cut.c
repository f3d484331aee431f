/* A node's link cut while two jobs share a file through bbserver, and back.
 *
 *     t_link_cut FILE DIR reader|writer|check
 *
 * Run with hints bbfs_force_remote true (two one-node jobs use the servers
 * then) and bbfs_server_timeout T (BBFS_TEST_TIMEOUT tells the test T).
 * Two processes a job; DIR holds the files by which the jobs and the
 * script that cuts the link take turns (made by process 0, waited for by
 * process 0 while the others wait in a barrier of their own node).
 *
 * reader (node0, opens first: the file's map is on node0's server):
 *   writes block r, syncs; after the writer's sync (w-synced), syncs and
 *   reads the writer's block 3-r (through node1's server): right.
 *   r-ready.  After the cut (cut): a read of block 2+r (not in its cache)
 *   must fail with MPI_ERR_IO naming bbserver within T + 5 s (a remote read
 *   cut off).  r-cut-done.
 *   After the link is back (back): the read is right again.  Close.
 * writer (node1, opens second: it adopts node0's map):
 *   writes block 2+r, syncs, w-synced.  After the cut: writes block 4+r;
 *   its sync must fail (an attach cut off) and a read of the reader's block
 *   r must fail (a query cut off), each with MPI_ERR_IO within T + 5 s.
 *   w-cut-done.  After back: the sync succeeds (its runs were kept) and the
 *   reader's block reads right.  Close.
 * check (any job, after both): every block 0..5 reads back: nothing that
 * was written is lost. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "off_node.h"

#define BLK 4096

static int rank, failures;
static const char *dir;
static double limit;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL [%s rank %d] ", role, rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static const char *role = "";

static void fill(char *b, int block)
{
    for (int i = 0; i < BLK; i++)
        b[i] = (char) (block * 37 + i % 253 + 1);
}

static const char *errstr(int rc)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int len;
    if (rc == MPI_SUCCESS)
        return "success";
    MPI_Error_string(rc, msg, &len);
    return msg;
}

static void say(const char *name)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        cluster_touch(dir, name);
}

static void await(const char *name)
{
    if (rank == 0 && !cluster_wait_file(dir, name)) {
        fprintf(stderr, "FAIL [%s]: %s/%s never came (120 s)\n", role, dir, name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int read_block(MPI_File fh, int block)
{
    char buf[BLK], want[BLK];
    memset(buf, 0, BLK);
    fill(want, block);
    int rc = MPI_File_read_at(fh, (MPI_Offset) block * BLK, buf, BLK, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && memcmp(buf, want, BLK) != 0)
        return -1;
    return rc;
}

static int write_block(MPI_File fh, int block)
{
    char buf[BLK];
    fill(buf, block);
    return MPI_File_write_at(fh, (MPI_Offset) block * BLK, buf, BLK, MPI_BYTE,
                             MPI_STATUS_IGNORE);
}

/* rc must be MPI_ERR_IO naming bbserver, and have come within the limit. */
static void expect_cut_off(int rc, double took, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS && rc != -1)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && rc != -1 && cls == MPI_ERR_IO && strstr(errstr(rc), "bbserver"),
          "%s with the link cut: %s (expected MPI_ERR_IO naming bbserver)", what,
          rc == -1 ? "success with wrong bytes" : errstr(rc));
    CHECK(took <= limit + 5, "%s with the link cut took %.1f s to fail (bbfs_server_timeout "
          "%.0f s)", what, took, limit);
    if (rank == 0)
        printf("%s: %s with the link cut failed in %.2f s\n", role, what, took);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    int rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: t_link_cut FILE DIR reader|writer|check\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dir = argv[2];
    role = argv[3];
    limit = getenv("BBFS_TEST_TIMEOUT") ? atof(getenv("BBFS_TEST_TIMEOUT")) : 5;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int reader = !strcmp(role, "reader"), writer = !strcmp(role, "writer");

    if (writer)
        await("r-open");
    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], (reader || writer ? MPI_MODE_CREATE
                                                 | MPI_MODE_RDWR : MPI_MODE_RDONLY),
                       MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL [%s rank %d]: open: %s\n", role, rank, errstr(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (reader) {
        CHECK(write_block(fh, rank) == MPI_SUCCESS, "write");
        CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "the first sync");
        say("r-open");
        await("w-synced");
        CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "the sync after the writer's");
        /* (the other writer's: the one read under the cut must not be in
         * this process's cache of other nodes' log bytes) */
        CHECK((rc = read_block(fh, 3 - rank)) == MPI_SUCCESS, "the writer's block before the "
              "cut: %s", rc == -1 ? "wrong bytes" : errstr(rc));
        say("r-ready");
        await("cut");
        double t0 = MPI_Wtime();
        rc = read_block(fh, 2 + rank);
        expect_cut_off(rc, MPI_Wtime() - t0, "a read of node1's block");
        say("r-cut-done");
        await("back");
        CHECK((rc = read_block(fh, 2 + rank)) == MPI_SUCCESS, "the writer's block with the link "
              "back: %s", rc == -1 ? "wrong bytes" : errstr(rc));
    } else if (writer) {
        CHECK(write_block(fh, 2 + rank) == MPI_SUCCESS, "write");
        CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "the first sync");
        say("w-synced");
        await("cut");
        CHECK(write_block(fh, 4 + rank) == MPI_SUCCESS, "the write after the cut");
        double t0 = MPI_Wtime();
        rc = MPI_File_sync(fh);
        expect_cut_off(rc, MPI_Wtime() - t0, "a sync (its attach)");
        t0 = MPI_Wtime();
        rc = read_block(fh, rank);
        expect_cut_off(rc, MPI_Wtime() - t0, "a read of node0's block (its query)");
        say("w-cut-done");
        await("back");
        CHECK((rc = MPI_File_sync(fh)) == MPI_SUCCESS, "the sync with the link back: %s",
              errstr(rc));
        CHECK((rc = read_block(fh, rank)) == MPI_SUCCESS, "the reader's block with the link "
              "back: %s", rc == -1 ? "wrong bytes" : errstr(rc));
    } else {
        for (int b = 0; b < 6; b++)
            CHECK((rc = read_block(fh, b)) == MPI_SUCCESS, "block %d after both jobs: %s", b,
                  rc == -1 ? "wrong bytes" : errstr(rc));
    }
    rc = MPI_File_close(&fh);
    CHECK(rc == MPI_SUCCESS, "close: %s", errstr(rc));
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s\n", any ? "FAIL" : "ok", role);
    MPI_Finalize();
    return any ? 1 : 0;
}
