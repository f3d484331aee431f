/* A node lost under a running job: the survivors' next calls fail, none hangs.
 *
 *     t_node_lost FILE DIR          (the job, on 2 nodes)
 *     t_node_lost --check PATH DIR  (one process, after the salvage)
 *
 * The job runs on 2 nodes, 2 processes each, with hint bbfs_server_timeout
 * T (BBFS_TEST_TIMEOUT tells the test T).  Every process writes block r
 * and syncs; rank 0 then makes DIR/synced.  The processes off rank 0's node
 * make DIR/off.R holding their pid and wait to be killed (the script kills
 * them and their node's bbserver and empties their node's log directory:
 * the node is lost).  Under plain mpiexec that ends the job.  Under
 * mpiexec -disable-auto-cleanup rank 0's node goes on once DIR/killed is
 * there: a collective write of block 4+r is logged and needs no other
 * process, so it succeeds; the close, which replays with every process,
 * must fail on every survivor with MPI_ERR_IO naming the lost process,
 * within T + 10 s (not hang, not succeed), leaving the logs for
 * bbfs-replay --salvage.
 *
 * --check reads the salvaged canonical file with POSIX calls: blocks 0-3
 * hold the pattern of their writer, or zeros for a writer that was lost
 * (DIR/off.R). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "off_node.h"

#define BLK 4096

static int rank, failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL [rank %d] ", rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static void fill(char *b, int block)
{
    for (int i = 0; i < BLK; i++)
        b[i] = (char) (block * 37 + i % 253 + 1);
}

/* The --check mode: 0 if blocks 0-3 of path are right. */
static int check(const char *path, const char *dir)
{
    char got[BLK], want[BLK], p[4200];
    struct stat st;
    int bad = 0, lost = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "FAIL: cannot open %s\n", path);
        return 1;
    }
    for (int b = 0; b < 4; b++) {
        snprintf(p, sizeof(p), "%s/off.%d", dir, b);
        int gone = stat(p, &st) == 0;
        lost += gone;
        if (gone)
            memset(want, 0, BLK);
        else
            fill(want, b);
        memset(got, 0x55, BLK);
        size_t n = fread(got, 1, BLK, f);
        if ((n != BLK && !gone) || memcmp(got, want, n) != 0) {
            fprintf(stderr, "FAIL: block %d of %s is not %s\n", b, path,
                    gone ? "zeros (its writer was lost)" : "its writer's");
            bad = 1;
        }
    }
    fclose(f);
    if (lost != 2) {
        fprintf(stderr, "FAIL: %d writers were lost, not 2\n", lost);
        bad = 1;
    }
    if (!bad)
        printf("ok: blocks 0-3 hold the 2 survivors' synced writes, zeros for the 2 lost\n");
    return bad;
}

static int write_block(MPI_File fh, int block)
{
    char buf[BLK];
    fill(buf, block);
    return MPI_File_write_at(fh, (MPI_Offset) block * BLK, buf, BLK, MPI_BYTE,
                             MPI_STATUS_IGNORE);
}

/* rc must be an error, and must have come within the limit. */
static void expect_failed(int rc, double took, double limit, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "success";
    int len, cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
    }
    CHECK(rc != MPI_SUCCESS, "%s with a node lost succeeded", what);
    CHECK(rc == MPI_SUCCESS || (cls == MPI_ERR_IO && strstr(msg, "node lost")),
          "%s with a node lost: %s (expected MPI_ERR_IO saying a node was lost)", what, msg);
    CHECK(took <= limit + 10, "%s with a node lost took %.1f s to fail (bbfs_server_timeout "
          "%.0f s)", what, took, limit);
    printf("rank %d: %s with a node lost: class %d in %.2f s: %s\n", rank, what, cls, took, msg);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    int rc;

    if (argc == 4 && !strcmp(argv[1], "--check"))
        return check(argv[2], argv[3]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: t_node_lost FILE DIR | --check PATH DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[2];
    double limit = getenv("BBFS_TEST_TIMEOUT") ? atof(getenv("BBFS_TEST_TIMEOUT")) : 5;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int *off = off_rank0_node();

    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                       &fh);
    if (cluster_failed(rc, "open"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    CHECK(write_block(fh, rank) == MPI_SUCCESS, "the first write");
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "the first sync");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        cluster_touch(dir, "synced");
    if (off[rank]) {
        char p[4200];
        snprintf(p, sizeof(p), "%s/off.%d", dir, rank);
        FILE *f = fopen(p, "w");
        if (f) {
            fprintf(f, "%d\n", (int) getpid());
            fclose(f);
        }
        for (;;)
            pause();
    }
    if (!cluster_wait_file(dir, "killed")) {
        fprintf(stderr, "FAIL [rank %d]: %s/killed never came (120 s)\n", rank, dir);
        _exit(1);
    }
    char buf[BLK];
    fill(buf, 4 + rank);
    double t0 = MPI_Wtime();
    rc = MPI_File_write_at_all(fh, (MPI_Offset) (4 + rank) * BLK, buf, BLK, MPI_BYTE,
                               MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "a collective write with a node lost failed (it is logged: it "
          "needs no other process)");
    printf("rank %d: a collective write with a node lost: logged in %.2f s\n", rank,
           MPI_Wtime() - t0);
    t0 = MPI_Wtime();
    rc = MPI_File_close(&fh);
    expect_failed(rc, MPI_Wtime() - t0, limit, "the close");
    printf("rank %d: %s\n", rank, failures ? "FAIL" : "ok");
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
