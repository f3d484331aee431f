/* Each consistency model gives exactly the visibility it promises, and asks
 * the server no more than it pays for (the consistency-models paper, Table
 * 6; docs/hints.md):
 *
 *     t_models FILE MODEL        (4 or more processes, on 2 or more nodes)
 *
 * Every process writes its block, then reads the next process's block (on
 * another node: the test checks) at each step below; process 0 asks the
 * file's map server (its node's bbserver) for its request counters between
 * steps, and the test asserts how many attaches and queries each step cost
 * and what each read saw:
 *
 *   step            mpiio         commit        posix         session
 *   open            -             -             -             -
 *   write           -             -             attach, ping  -
 *   read            query, old    query, old    query, new    old
 *   sync-barrier-   attach        attach        -             -
 *   sync
 *   read            query, new    query, new    query, new    old
 *   read again      new           query, new    query, new    old
 *   read another    query, new    query, new    query, new    old
 *   block (whole file under mpiio: the view held the first block only)
 *   read 2 more     new           2 queries     2 queries     old
 *   close           -             -             -             -
 *   open, read      new           new           new           new
 *
 * ("old": the bytes before this session's writes, zeros; "new": the writer's
 * bytes; "-": no request.)  The close replays the logs: what it makes
 * canonical it attaches nowhere, under session too (a close that leaves
 * its logs to another live handle attaches them: t_peer_handles).  The server is the one the driver starts:
 * LOGDIR/.bbserver.HOST.addr of process 0's node. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "token.h"

#define BLK 4096

static int rank, nprocs, failures;
static struct bbs_client *cl;
static uint8_t token[BBS_TOKEN_LEN];

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL [rank %d] ", rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

/* Process 0: the server's counters of attach, query and ping requests
 * (this ping among them). */
static void counters(uint64_t *attach, uint64_t *query, uint64_t *ping)
{
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    char err[512];
    *attach = *query = *ping = 0;
    if (bbs_enc_ping(&b, bbs_client_next_id(cl), token) != 0
        || bbs_client_call(cl, &b, &r, err, sizeof(err)) != 0 || r.status != BBS_OK) {
        fprintf(stderr, "FAIL: ping: %s\n", err);
        failures++;
    } else {
        *attach = r.requests[BBS_ATTACH];
        *query = r.requests[BBS_QUERY];
        *ping = r.requests[BBS_PING];
    }
    bbs_buf_free(&b);
}

/* The requests made since the last call, by all processes (after a barrier
 * so that every process's step is done); want_ping < 0: pings not checked
 * (pings ask the map's clock: a write stamps after hearing it). */
static uint64_t last_attach, last_query, last_ping;
static void step_pings(const char *name, long want_attach, long want_query, long want_ping)
{
    uint64_t a, q, pg;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !name)
        counters(&last_attach, &last_query, &last_ping);
    else if (rank == 0) {
        counters(&a, &q, &pg);
        long da = (long) (a - last_attach), dq = (long) (q - last_query);
        long dp = (long) (pg - last_ping) - 1;  /* (but for this one) */
        /* want_attach < 0: at least -want_attach */
        CHECK(want_attach < 0 ? da >= -want_attach : da == want_attach,
              "%s: %ld attach requests, expected %s%ld", name, da, want_attach < 0 ?
              "at least " : "", want_attach < 0 ? -want_attach : want_attach);
        CHECK(dq == want_query, "%s: %ld query requests, expected %ld", name, dq, want_query);
        CHECK(want_ping < 0 || dp == want_ping, "%s: %ld ping requests, expected %ld", name,
              dp, want_ping);
        printf("  %-22s attach %3ld  query %3ld  ping %3ld\n", name, da, dq, dp);
        last_attach = a;
        last_query = q;
        last_ping = pg;
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void step(const char *name, long want_attach, long want_query)
{
    step_pings(name, want_attach, want_query, -1);
}

static void fill(char *b, int r)
{
    for (int i = 0; i < BLK; i++)
        b[i] = (char) (r * 31 + i % 251 + 1);
}

/* Read the block of process next; it must be new (its bytes) or old
 * (zeros). */
static void read_block(MPI_File fh, int next, const char *when, int want_new)
{
    char got[BLK], want[BLK];
    if (want_new)
        fill(want, next);
    else
        memset(want, 0, BLK);
    memset(got, 0, BLK);        /* (a read past what it sees of the file stops short) */
    MPI_File_read_at(fh, (MPI_Offset) next * BLK, got, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(memcmp(got, want, BLK) == 0, "%s: process %d's block reads %s, expected %s", when,
          next, got[0] ? "its bytes" : "zeros", want_new ? "its bytes" : "zeros");
}

/* Read the next process's block (on another node). */
static void read_next(MPI_File fh, const char *when, int want_new)
{
    read_block(fh, (rank + 1) % nprocs, when, want_new);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Info info;
    char buf[BLK], host[256], next_host[256], err[512], src[4096];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 3 || nprocs < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 4+ t_models FILE mpiio|commit|posix|session\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *file = argv[1], *model = argv[2];
    int mpiio = !strcmp(model, "mpiio"), commit = !strcmp(model, "commit"),
        posix = !strcmp(model, "posix"), session = !strcmp(model, "session");
    if (!mpiio && !commit && !posix && !session) {
        if (rank == 0)
            fprintf(stderr, "t_models: model %s: give mpiio, commit, posix or session\n", model);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = nprocs;

    /* the next process must be on another node, or the test shows nothing */
    gethostname(host, sizeof(host));
    MPI_Sendrecv(host, sizeof(host), MPI_CHAR, (rank + nprocs - 1) % nprocs, 0, next_host,
                 sizeof(next_host), MPI_CHAR, (rank + 1) % nprocs, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(strcmp(host, next_host) != 0, "process %d is on this node (%s): run on 2+ nodes, "
          "round-robin", (rank + 1) % nprocs, host);

    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_consistency", model);
    MPI_Info_set(info, "bbfs_replay", "on_close");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);

    if (rank == 0) {            /* the map's server: this node's, started by the open */
        char addrfile[4400], addr[300] = "";
        const char *dir = getenv("BBFS_LOGDIR");
        snprintf(addrfile, sizeof(addrfile), "%s/.bbserver.%s.addr", dir ? dir : "/tmp", host);
        FILE *f = fopen(addrfile, "r");
        if (!f || !fgets(addr, sizeof(addr), f)) {
            fprintf(stderr, "FAIL: no server address in %s: does the file use a server?\n",
                    addrfile);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
        addr[strcspn(addr, "\n")] = 0;
        if (bbs_token_find(NULL, 0, token, src, sizeof(src), err, sizeof(err)) != 0
            || bbs_client_open(addr, token, 10, &cl, err, sizeof(err)) != 0) {
            fprintf(stderr, "FAIL: server %s: %s\n", addr, err);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("%s on %d processes, map server %s\n", model, nprocs, addr);
    }
    step(NULL, 0, 0);           /* (the counters so far, from the start on) */

    fill(buf, rank);
    MPI_File_write_at(fh, (MPI_Offset) rank * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
    /* (the first write after the open stamps with the clock process 0
     * heard at the open: no process asks for one; posix asks at every
     * write) */
    step_pings("write", posix ? -n : 0, 0, posix ? -1 : 0);

    read_next(fh, "read before a sync", posix);
    step("read before a sync", 0, session ? 0 : n);   /* mpiio: the open's, lazily */

    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    step("sync-barrier-sync", mpiio || commit ? -n : 0, 0);

    read_next(fh, "read after the syncs", !session);
    step("read after the syncs", 0, session ? 0 : n);

    read_next(fh, "read again", !session);
    step("read again", 0, commit || posix ? n : 0);

    /* A view asks the map for the bytes its read needs; a read of other
     * bytes before the next sync point asks once for the whole file, and
     * then nothing more is asked until that sync point. */
    read_block(fh, (rank + 2) % nprocs, "read of another block", !session);
    step("read of another block", 0, session ? 0 : n);
    read_block(fh, (rank + 3) % nprocs, "read of a third block", !session);
    read_next(fh, "read of the first block again", !session);
    step("read of two more blocks", 0, commit || posix ? 2 * n : 0);

    MPI_File_close(&fh);
    step("close", 0, 0);
    MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR, info, &fh);
    read_next(fh, "read after close and open", 1);
    MPI_File_close(&fh);
    MPI_Info_free(&info);

    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        bbs_client_close(cl);
        printf("%s: %s\n", any ? "FAIL" : "ok", model);
    }
    MPI_Finalize();
    return any ? 1 : 0;
}
