/* The writer, the recovery and the judge of the crash matrix
 * (crash-matrix.sh, docs/reliability.md).
 *
 *   t_crashpoints NAME            write four epochs; a fault point
 *                                 (BBFS_FAULT) kills one process on the way
 *   t_crashpoints --reopen NAME   open read-only and close (replays pending logs)
 *   t_crashpoints --verify PATH [--exact]
 *                                 judge the recovered file (plain POSIX, no MPI)
 *
 * With BBFS_EXPECT_CLASS set (fault-errors.sh), the fault point makes a call
 * fail instead: the writer then carries on with every call (collectives
 * must not hang), and process BBFS_FAULT_RANK (0 if unset) checks that its
 * first error has that MPI error class and a message containing
 * BBFS_EXPECT_TEXT.  BBFS_TEST_REMOVE_LOGS=1 makes process 0 remove the log
 * directory's files after the first sync.
 *
 * Process r owns blocks r, r+P, r+2P, ... (NB of BLK bytes each).  Epoch e
 * (1..4) rewrites the owned blocks whose index is a multiple of e, through a
 * different kind of call each time: a collective strided write, small
 * independent writes, an independent strided write, a collective strided
 * write left to the close to cover.  After each MPI_File_sync returns, and
 * after the close, a process records in PATH.progress.<r> how many epochs
 * are now covered.
 *
 * --verify then asks of every block of process r with c epochs covered: it
 * holds the content of the last covered epoch that wrote it, or of a later
 * epoch that wrote it (written but not covered: may or may not be there),
 * or zeros if no covered epoch wrote it.  With --exact, all four epochs
 * must be there (the kill came after every log was sealed). */
#include "testlib.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLK 16
#define NB 16384
#define EPOCHS 4

static int expect_cls = -1, first_err = MPI_SUCCESS;
static const char *first_call;

/* Record a failed call in error-expecting runs; fail the test otherwise. */
#define CALL(x) call_checked((x), #x, __LINE__)
static int call_checked(int err, const char *what, int line)
{
    if (err == MPI_SUCCESS)
        return 0;
    if (expect_cls < 0)
        tl_fail_mpi(what, err, __FILE__, line);
    if (first_err == MPI_SUCCESS) {
        first_err = err;
        first_call = what;
    }
    return 1;
}

static int class_named(const char *name)
{
    static const struct { const char *name; int cls; } known[] = {
        {"MPI_ERR_NO_SPACE", MPI_ERR_NO_SPACE}, {"MPI_ERR_IO", MPI_ERR_IO},
        {"MPI_ERR_NO_SUCH_FILE", MPI_ERR_NO_SUCH_FILE}, {"MPI_ERR_ACCESS", MPI_ERR_ACCESS},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcmp(name, known[i].name))
            return known[i].cls;
    tl_fail(__FILE__, __LINE__, "BBFS_EXPECT_CLASS=%s: not a class this test knows", name);
}

/* The process the fault was armed in got the error it should have. */
static void judge_error(void)
{
    const char *r = getenv("BBFS_FAULT_RANK"), *text = getenv("BBFS_EXPECT_TEXT");
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len, cls = MPI_SUCCESS;

    if (first_err != MPI_SUCCESS) {
        MPI_Error_class(first_err, &cls);
        MPI_Error_string(first_err, msg, &len);
        for (char *c = msg; *c; c++)
            if (*c == '\n')
                *c = ' ';
        printf("process %d: first error in %s: %s\n", tl_rank, first_call, msg);
    }
    if (tl_rank != (r ? atoi(r) : 0))
        return;
    TL_CHECK(first_err != MPI_SUCCESS, "no call failed, expected %s",
             getenv("BBFS_EXPECT_CLASS"));
    TL_CHECK(cls == expect_cls, "first error (in %s) has class %d, expected %s (%d): %s",
             first_call, cls, getenv("BBFS_EXPECT_CLASS"), expect_cls, msg);
    TL_CHECK(!text || strstr(msg, text), "the message of the first error (in %s) does not say "
             "\"%s\": %s", first_call, text, msg);
}

static void remove_logs(void)
{
    const char *dir = getenv("BBFS_LOGDIR");
    char cmd[4200];
    TL_CHECK(dir && *dir, "BBFS_TEST_REMOVE_LOGS needs BBFS_LOGDIR");
    snprintf(cmd, sizeof(cmd), "rm -f '%s'/*", dir);
    TL_CHECK(system(cmd) == 0, "%s failed", cmd);
}

static void record_progress(const char *path, int rank, int covered)
{
    char p[4096], line[16];
    snprintf(p, sizeof(p), "%s.progress.%d", path, rank);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = snprintf(line, sizeof(line), "%d\n", covered);
    TL_CHECK(fd >= 0 && write(fd, line, (size_t) n) == n && close(fd) == 0,
             "cannot record progress in %s", p);
}

/* Independent or collective write of the owned blocks j with j % e == 0. */
static void write_epoch(MPI_File fh, int e, unsigned char *buf)
{
    int P = tl_nprocs, n = 0;
    MPI_Datatype vec, ftype;
    MPI_Status st;
    for (int j = 0; j < NB; j += e)
        tl_fill(buf + (size_t) n++ * BLK, BLK, ((long long) j * P + tl_rank) * BLK, e);
    if (e == 2) {               /* one small call per block */
        for (int k = 0; k < n; k++)
            CALL(MPI_File_write_at(fh, ((MPI_Offset) (k * e) * P + tl_rank) * BLK,
                                     buf + (size_t) k * BLK, BLK, MPI_BYTE, &st));
        return;
    }
    MPI_Type_vector(n, BLK, BLK * P * e, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) BLK * P * NB, &ftype);
    MPI_Type_commit(&ftype);
    CALL(MPI_File_set_view(fh, (MPI_Offset) tl_rank * BLK, MPI_BYTE, ftype, "native",
                           MPI_INFO_NULL));
    if (e == 3)
        CALL(MPI_File_write(fh, buf, n * BLK, MPI_BYTE, &st));
    else
        CALL(MPI_File_write_all(fh, buf, n * BLK, MPI_BYTE, &st));
    CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
}

static int write_all_epochs(const char *name)
{
    unsigned char *buf = malloc((size_t) NB * BLK);
    MPI_File fh;

    const char *ec = getenv("BBFS_EXPECT_CLASS"), *rm = getenv("BBFS_TEST_REMOVE_LOGS");
    if (ec && *ec)
        expect_cls = class_named(ec);
    record_progress(tl_path(name), tl_rank, 0);
    if (CALL(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh))) {
        judge_error();
        free(buf);
        return tl_finish();
    }
    for (int e = 1; e <= EPOCHS; e++) {
        write_epoch(fh, e, buf);
        if (e < EPOCHS) {
            /* a process that failed covers nothing from here on */
            if (!CALL(MPI_File_sync(fh)) && first_err == MPI_SUCCESS)
                record_progress(tl_path(name), tl_rank, e);
            if (e == 1 && rm && *rm == '1') {
                MPI_Barrier(MPI_COMM_WORLD);
                if (tl_rank == 0)
                    remove_logs();
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    if (!CALL(MPI_File_close(&fh)) && first_err == MPI_SUCCESS)
        record_progress(tl_path(name), tl_rank, EPOCHS);
    if (expect_cls >= 0)
        judge_error();
    free(buf);
    return tl_finish();
}

/* A failed open is reported and ends the job normally (not with
 * MPI_Abort, which can take the job down before the message is out):
 * security.sh reads why bbfs refused. */
static int reopen(const char *name)
{
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        printf("process %d: open failed: %s\n", tl_rank, msg);
        fflush(stdout);
        MPI_Finalize();
        return 1;
    }
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}

static int block_is(const unsigned char *b, long long off, int e)
{
    for (int i = 0; i < BLK; i++)
        if (b[i] != (e ? tl_byte(off + i, e) : 0))
            return 0;
    return 1;
}

static int verify(const char *path, int exact)
{
    int P = 0, covered[1024], bad = 0;
    char p[4096];
    for (; P < 1024; P++) {
        snprintf(p, sizeof(p), "%s.progress.%d", path, P);
        FILE *f = fopen(p, "r");
        if (!f)
            break;
        if (fscanf(f, "%d", &covered[P]) != 1)
            covered[P] = 0;
        fclose(f);
        if (exact)
            covered[P] = EPOCHS;
    }
    if (P == 0) {
        fprintf(stderr, "FAIL: no progress files %s.progress.*\n", path);
        return 1;
    }
    long long size = (long long) P * NB * BLK;
    unsigned char *img = calloc(1, (size_t) size + 1);
    int fd = open(path, O_RDONLY);
    ssize_t got = fd >= 0 ? read(fd, img, (size_t) size + 1) : 0;
    if (fd >= 0)
        close(fd);
    if (got > size) {
        fprintf(stderr, "FAIL: %s is longer than the %lld bytes ever written\n", path, size);
        return 1;
    }
    for (long long b = 0; b < (long long) P * NB && bad < 5; b++) {
        int r = (int) (b % P), j = (int) (b / P), c = covered[r], ok = 0, last = 0;
        for (int e = 1; e <= c; e++)
            if (j % e == 0)
                last = e;
        ok = block_is(img + b * BLK, b * BLK, last);
        for (int e = c + 1; e <= EPOCHS && !ok; e++)
            ok = j % e == 0 && block_is(img + b * BLK, b * BLK, e);
        if (!ok) {
            fprintf(stderr, "FAIL: block %lld (process %d, its block %d, %d epochs covered): "
                    "expected epoch %d's data%s, found %02x %02x %02x %02x...\n", b, r, j, c,
                    last, c < EPOCHS ? " or a later epoch's" : "", img[b * BLK],
                    img[b * BLK + 1], img[b * BLK + 2], img[b * BLK + 3]);
            bad++;
        }
    }
    free(img);
    if (bad)
        return 1;
    printf("ok: %s holds every covered epoch (", path);
    for (int r = 0; r < P; r++)
        printf("%s%d", r ? " " : "", covered[r]);
    printf(" by process)\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--verify"))
        return verify(argv[2], argc > 3 && !strcmp(argv[3], "--exact"));
    if (argc >= 3 && !strcmp(argv[1], "--reopen")) {
        argv[1] = argv[0];
        argc--;
        argv++;
        return reopen(tl_init(&argc, &argv));
    }
    return write_all_epochs(tl_init(&argc, &argv));
}
