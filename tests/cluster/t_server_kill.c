/* The file's map server killed under a running job (on 2+ nodes with
 * node-local logs, so the handle uses bbserver):
 *
 *     t_server_kill FILE
 *
 *   1. every process writes its first block and syncs: attached;
 *   2. process 0 kills the map server (its node's bbserver, SIGKILL);
 *   3. every process writes its second block; the sync fails on every
 *      process, in seconds, with MPI_ERR_IO and a message naming bbserver
 *      (no hang, no process left behind in a collective);
 *   4. the close reports the same, and leaves the logs pending;
 *   5. a new open (which restarts the node's server) replays them: every
 *      block of every process, the first and the second, reads back.
 * Data a completed sync covered is never lost, and none that was written. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node_server.h"

#define BLK 4096

static int rank, nprocs, failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL [rank %d] ", rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static void fill(char *b, int r, int which)
{
    for (int i = 0; i < BLK; i++)
        b[i] = (char) (r * 31 + which * 101 + i % 251 + 1);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    char buf[BLK], want[BLK], msg[MPI_MAX_ERROR_STRING];
    int rc, len, cls;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: t_server_kill FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                       &fh);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "FAIL [rank %d]: open: %s\n", rank, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill(buf, rank, 0);
    MPI_File_write_at(fh, (MPI_Offset) rank * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
    rc = MPI_File_sync(fh);
    CHECK(rc == MPI_SUCCESS, "the first sync failed");

    int pid = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && (pid = node_server_pid()) > 0) {
        kill(pid, SIGKILL);
        for (int i = 0; i < 200 && kill(pid, 0) == 0; i++)
            usleep(10000);
        printf("killed the map server (pid %d)\n", pid);
    }
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (pid <= 0)
        MPI_Abort(MPI_COMM_WORLD, 1);

    fill(buf, rank, 1);
    MPI_File_write_at(fh, (MPI_Offset) (nprocs + rank) * BLK, buf, BLK, MPI_BYTE,
                      MPI_STATUS_IGNORE);
    double t0 = MPI_Wtime();
    rc = MPI_File_sync(fh);
    double took = MPI_Wtime() - t0;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_IO && strstr(msg, "bbserver"),
          "the sync after the kill: class %d, \"%s\" (expected MPI_ERR_IO naming bbserver)",
          cls, rc == MPI_SUCCESS ? "success" : msg);
    if (rank == 0)
        printf("sync after the kill failed in %.2f s: %s\n", took, msg);
    rc = MPI_File_close(&fh);
    if (rank == 0)
        printf("close: %s\n", rc == MPI_SUCCESS ? "success" : "failed (logs left pending)");

    /* a new open restarts the node's server; its replay brings every block */
    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        CHECK(0, "the open after the kill: %s", msg);
    } else {
        for (int r = 0; r < nprocs; r++)
            for (int which = 0; which < 2; which++) {
                memset(buf, 0, BLK);
                fill(want, r, which);
                MPI_File_read_at(fh, (MPI_Offset) (which * nprocs + r) * BLK, buf, BLK,
                                 MPI_BYTE, MPI_STATUS_IGNORE);
                CHECK(memcmp(buf, want, BLK) == 0, "process %d's %s block is lost", r,
                      which ? "second (unsynced)" : "first (synced)");
            }
        MPI_File_close(&fh);
    }
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: the map server killed under the job: a clear error, nothing lost\n",
               any ? "FAIL" : "ok");
    MPI_Finalize();
    return any ? 1 : 0;
}
