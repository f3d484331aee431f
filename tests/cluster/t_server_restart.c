/* A bbserver stopped and restarted under a running job (on 2+ nodes with
 * node-local logs, so the handle uses bbserver):
 *
 *     t_server_restart FILE kill|term|attach|read
 *
 * kill, term and attach stop the file's map server (rank 0's node's):
 *   1. every process writes block A and syncs: attached;
 *   2. process 0 stops the map server (SIGKILL: it saves nothing; SIGTERM:
 *      it saves its maps to its state file) and starts it again, as the
 *      next bbfs open on its node does (a forced-remote open of another
 *      file on MPI_COMM_SELF).  attach: the server dies instead in the
 *      middle of the next sync's attaches (its 6th, fault point
 *      serve-attach: some processes' are in its map, some not), and
 *      process 0 starts it again after that sync;
 *   3. every process writes block B and syncs, then syncs again after a
 *      barrier and reads every process's A and B blocks.
 *      term: the restarted server loaded the map, so the syncs succeed
 *      and every block reads back.
 *      kill: the map is gone.  The sync after the restart must fail on
 *      every process with MPI_ERR_IO saying the server restarted, and a
 *      read may fail, but no read may succeed with stale bytes;
 *      attach: as kill, but a process whose attach got in has nothing to
 *      attach again, so only its reads fail;
 *   4. the close, then a new open, reads every block back: nothing that
 *      was written is lost.
 *
 * read: the server of the first process on another node dies while it
 * serves process 0 a read of that process's block (fault point
 * serve-read): the read fails with MPI_ERR_IO naming bbserver within the
 * time-out; once that node starts its server again, the same read returns
 * the same bytes. */
#include <mpi.h>
#include <signal.h>

#include "node_server.h"
#include "off_node.h"

#define BLK 4096

static int rank, nprocs, failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL [rank %d] ", rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static void fill(char *b, int r, int which)
{
    for (int i = 0; i < BLK; i++)
        b[i] = (char) (r * 31 + which * 101 + i % 251 + 1);
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

/* Process 0: stop its node's server with sig and start it again. */
static void restart_server(const char *file, int sig)
{
    int pid = sig ? node_server_pid() : 0;   /* (0: it died already) */
    if (sig && pid <= 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (sig)
        kill(pid, sig);
    for (int i = 0; i < 500 && sig && kill(pid, 0) == 0; i++)
        usleep(10000);
    if (sig && kill(pid, 0) == 0) {
        fprintf(stderr, "FAIL: the server (pid %d) is still there 5 s after signal %d\n", pid,
                sig);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char name[4200];
    MPI_File fh;
    MPI_Info info;
    snprintf(name, sizeof(name), "%s.restart", file);
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_force_remote", "true");
    int rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: the open that restarts the server: %s\n", errstr(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_close(&fh);
    printf("stopped the map server (pid %d) with signal %d; now pid %d\n", pid, sig,
           node_server_pid());
}

/* Every process's A and B blocks: 1 if one read succeeded with wrong bytes
 * (printed); *errors counts the reads that failed. */
static int read_all(MPI_File fh, int *errors, const char *when, int want_all)
{
    char buf[BLK], want[BLK];
    int stale = 0;
    for (int r = 0; r < nprocs; r++)
        for (int which = 0; which < 2; which++) {
            memset(buf, 0, BLK);
            fill(want, r, which);
            int rc = MPI_File_read_at(fh, (MPI_Offset) (which * nprocs + r) * BLK, buf, BLK,
                                      MPI_BYTE, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                ++*errors;
                CHECK(!want_all, "%s: the read of process %d's block %c failed: %s", when, r,
                      "AB"[which], errstr(rc));
            } else if (memcmp(buf, want, BLK) != 0) {
                stale = 1;
                CHECK(0, "%s: process %d's block %c reads back wrong, with success", when, r,
                      "AB"[which]);
            }
        }
    return stale;
}

/* Process 0 reads process b's block A through b's node's server, which the
 * fault point kills; b then starts its server again, and the read works. */
static int read_mode(const char *file)
{
    MPI_File fh;
    char buf[BLK], want[BLK];
    int *off = off_rank0_node(), b = -1, rc, cls;
    for (int r = nprocs - 1; r > 0; r--)
        if (off[r])
            b = r;
    /* every process of b's node arms it: whichever starts the server */
    if (off[rank])
        setenv("BBFS_FAULT", "serve-read:kill", 1);
    rc = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                       &fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL [rank %d]: open: %s\n", rank, errstr(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill(buf, rank, 0);
    MPI_File_write_at(fh, (MPI_Offset) rank * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "the first sync");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "the second sync");
    fill(want, b, 0);
    if (rank == 0) {
        double t0 = MPI_Wtime();
        rc = MPI_File_read_at(fh, (MPI_Offset) b * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
        double took = MPI_Wtime() - t0;
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_IO && strstr(errstr(rc), "bbserver"),
              "the read while process %d's server died: class %d, \"%s\" (expected MPI_ERR_IO "
              "naming bbserver)", b, cls, errstr(rc));
        CHECK(took < 15, "the read took %.1f s to fail", took);
        printf("read while the server died: failed in %.2f s: %.160s\n", took, errstr(rc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == b) {
        unsetenv("BBFS_FAULT");
        restart_server(file, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        memset(buf, 0, BLK);
        rc = MPI_File_read_at(fh, (MPI_Offset) b * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && memcmp(buf, want, BLK) == 0, "the read after process %d's "
              "server restarted: %s", b, rc == MPI_SUCCESS ? "wrong bytes" : errstr(rc));
    }
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS, "close");
    free(off);
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: a server killed while it served a read: a clear error; restarted, the same "
               "bytes\n", any ? "FAIL" : "ok");
    MPI_Finalize();
    return any ? 1 : 0;
}

int main(int argc, char **argv)
{
    MPI_File fh;
    char buf[BLK];
    int rc, cls, errors = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *mode = argc == 3 ? argv[2] : "";
    if (strcmp(mode, "kill") != 0 && strcmp(mode, "term") != 0 && strcmp(mode, "attach") != 0
        && strcmp(mode, "read") != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: t_server_restart FILE kill|term|attach|read\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int term = strcmp(mode, "term") == 0, at_attach = strcmp(mode, "attach") == 0;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (strcmp(mode, "read") == 0)
        return read_mode(argv[1]);
    /* (before bbfs starts this node's server, which inherits it) */
    if (at_attach) {
        int *off = off_rank0_node();
        if (!off[rank])
            setenv("BBFS_FAULT", "serve-attach#6:kill", 1);
        free(off);
    }
    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                       &fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL [rank %d]: open: %s\n", rank, errstr(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill(buf, rank, 0);
    MPI_File_write_at(fh, (MPI_Offset) rank * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
    rc = MPI_File_sync(fh);
    CHECK(rc == MPI_SUCCESS, "the first sync: %s", errstr(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !at_attach)
        restart_server(argv[1], term ? SIGTERM : SIGKILL);
    MPI_Barrier(MPI_COMM_WORLD);

    fill(buf, rank, 1);
    MPI_File_write_at(fh, (MPI_Offset) (nprocs + rank) * BLK, buf, BLK, MPI_BYTE,
                      MPI_STATUS_IGNORE);
    rc = MPI_File_sync(fh);
    if (at_attach) {
        int all;
        MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(all != MPI_SUCCESS, "the server died in the sync's attaches, and no process "
              "saw an error");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            unsetenv("BBFS_FAULT");
            restart_server(argv[1], 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        rc = MPI_File_sync(fh);     /* (attaches what did not get in) */
    }
    MPI_Error_class(rc, &cls);
    if (term)
        CHECK(rc == MPI_SUCCESS, "the sync after a restart from the saved state: %s",
              errstr(rc));
    else if (!at_attach)
        CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_IO && strstr(errstr(rc), "restarted"),
              "the sync after a restart that lost the map: class %d, \"%s\" (expected "
              "MPI_ERR_IO saying the server restarted)", cls, errstr(rc));
    else
        CHECK(rc == MPI_SUCCESS || (cls == MPI_ERR_IO && strstr(errstr(rc), "restarted")),
              "the sync after a restart that lost the map: class %d, \"%s\" (expected "
              "success or MPI_ERR_IO saying the server restarted)", cls, errstr(rc));
    if (rank == 0)
        printf("sync after the restart: %s\n", errstr(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int stale = read_all(fh, &errors, "after the restart", term);
    if (!term)
        CHECK(errors > 0, "every read succeeded through a map the restart lost");
    if (rank == 0)
        printf("reads after the restart: %d failed, %s\n", errors,
               stale ? "some stale" : "none stale");
    rc = MPI_File_close(&fh);
    if (rank == 0)
        printf("close: %s\n", errstr(rc));

    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "the open after the restart: %s", errstr(rc));
    if (rc == MPI_SUCCESS) {
        errors = 0;
        read_all(fh, &errors, "after the reopen", 1);
        MPI_File_close(&fh);
    }
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: the map server %s and restarted under the job: %s, nothing lost\n",
               any ? "FAIL" : "ok", term ? "stopped (SIGTERM)" : at_attach
               ? "killed among a sync's attaches" : "killed",
               term ? "the saved map serves on" : "a clear error, no stale read");
    MPI_Finalize();
    return any ? 1 : 0;
}
