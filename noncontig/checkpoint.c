/*
 * checkpoint — what bbfs_replay=background gives a checkpointing program
 * (docs/drain.md, issue 34), against stock ROMIO and the other replay
 * modes, in one run:
 *
 * 1. The close.  Every process writes its elements interleaved with the
 *    others' (noncontig's pattern) in one collective call and closes, by
 *    mode: stock (ufs:), bbfs never (deferred: the logs stay), background
 *    (the close hands the file to the node's bbserver), on_close (the
 *    replay inside the close).  For background, also the time from the
 *    close to the canonical file (the manifest directory gone), against
 *    the synchronous replay of never's logs (a read-only open replays
 *    them).  Open to close, the slowest process counts; modes alternate,
 *    medians of -repeat with their spread.
 * 2. A checkpoint loop: -rounds rounds of computing (-compute seconds of
 *    arithmetic, fixed work) then writing and closing a checkpoint file;
 *    total time by mode, and the compute phases' own time, so that what a
 *    drain running beside the computation costs it shows.  Background's
 *    total includes the wait for the last file to be canonical.
 *
 * Every file is read back through ufs: and checked once it is canonical.
 */
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int rank, nprocs;

enum mode { STOCK, NEVER, BACKGROUND, ON_CLOSE, NMODES };
static const char *const mode_names[NMODES] = { "stock", "never", "background", "on_close" };

struct opts {
    const char *dir, *sizes, *csv;
    long mib;
    int repeat, rounds;
    const char *compute;        /* seconds, as text (bench_options has no double) */
    long warm;
};

static unsigned char pattern(long long off, int round)
{
    return (unsigned char) ((off * 2654435761u >> 7) + (unsigned) round * 31u);
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: checkpoint [-dir DIR] [-elmtsize B[,B...]] [-mib M] [-repeat R]\n"
                "                  [-rounds N] [-compute SECONDS] [-warm MIB] [-csv FILE]\n"
                "  -dir       directory of the files (default .); the logs go to BBFS_LOGDIR\n"
                "  -elmtsize  bytes per element, k suffix, comma list (default 8,4k)\n"
                "  -mib       MiB per file (default 64)\n"
                "  -repeat    rounds of the close measurement (default 5)\n"
                "  -rounds    checkpoints in the loop (default 4; 0: no loop)\n"
                "  -compute   seconds of computing between checkpoints (default 1)\n"
                "  -warm      MiB written and freed before each timed phase (default 16\n"
                "             times -mib, at least 256)\n"
                "  -csv       append one row per figure\n");
    MPI_Finalize();
    exit(2);
}

/* The file name of a mode's file: ufs: for stock, bbfs: else. */
#define NAME_MAX_LEN 4096
static void names(const struct opts *o, enum mode m, const char *tag, char *path, char *fname)
{
    snprintf(path, NAME_MAX_LEN, "%s/checkpoint.%s.%s.dat", o->dir, mode_names[m], tag);
    snprintf(fname, NAME_MAX_LEN + 8, "%s%s", m == STOCK ? "ufs:" : "bbfs:", path);
}

/* Open, one collective write of the interleaved pattern, close: seconds
 * of the slowest process. */
static double write_file(const char *fname, enum mode m, const unsigned char *buf, long n,
                         MPI_Datatype ftype, int elmt)
{
    MPI_Info info;
    MPI_File fh;
    MPI_Status st;
    MPI_Info_create(&info);
    if (m != STOCK)
        MPI_Info_set(info, "bbfs_replay", mode_names[m]);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    bench_check(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_WRONLY, info,
                              &fh), "checkpoint", fname);
    bench_check(MPI_File_set_view(fh, (MPI_Offset) rank * elmt, MPI_BYTE, ftype, "native",
                                  MPI_INFO_NULL), "checkpoint", "set_view");
    bench_check(MPI_File_write_all(fh, buf, (int) n, MPI_BYTE, &st), "checkpoint", "write_all");
    bench_check(MPI_File_close(&fh), "checkpoint", "close");
    double t = bench_slowest(t0, MPI_COMM_WORLD);
    MPI_Info_free(&info);
    return t;
}

/* Seconds from now until the file's manifest directory is gone (its
 * sessions drained), as process 0 sees it.  It looks every 200 us; the
 * others sleep until it is done (a millisecond at a time, in an
 * MPI_Ibarrier): a process waiting in an MPI call would poll a core the
 * drain needs, and four processes looking as often would wake the
 * scheduler 20000 times a second beside it. */
static double until_canonical(const char *path)
{
    char dir[4300];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof(dir), "%.*s/.%s.bbfs", (int) (slash - path), path, slash + 1);
    double t0 = MPI_Wtime(), t = 0;
    struct stat st;
    while (rank == 0 && stat(dir, &st) == 0) {
        struct timespec ts = { 0, 200 * 1000 };
        nanosleep(&ts, NULL);
        if (MPI_Wtime() - t0 > 600) {
            fprintf(stderr, "checkpoint: %s is still pending after 10 minutes: is the "
                    "node's bbserver draining (bbsctl status)?\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (rank == 0)
        t = MPI_Wtime() - t0;
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

/* The synchronous replay of pending logs: a read-only open replays them. */
static double replay_now(const char *fname)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    bench_check(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                "checkpoint", fname);
    MPI_File_close(&fh);
    return bench_slowest(t0, MPI_COMM_WORLD);
}

/* Read the file back through ufs: and check every byte (then remove it). */
static void verify(const char *path, int round, long n, MPI_Datatype ftype, int elmt)
{
    char fname[4300];
    MPI_File fh;
    MPI_Status st;
    unsigned char *got = malloc((size_t) n);
    int bad = 0, anybad;
    snprintf(fname, sizeof(fname), "ufs:%s", path);
    bench_check(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                "checkpoint", fname);
    MPI_File_set_view(fh, (MPI_Offset) rank * elmt, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
    bench_check(MPI_File_read_all(fh, got, (int) n, MPI_BYTE, &st), "checkpoint", "read_all");
    MPI_File_close(&fh);
    for (long i = 0; i < n && !bad; i++)
        bad = got[i] != pattern((i / elmt) * (long long) elmt * nprocs
                                + (long long) rank * elmt + i % elmt, round);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (rank == 0)
            fprintf(stderr, "checkpoint: %s has wrong contents\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
}

static void fill(unsigned char *buf, long n, int elmt, int round)
{
    for (long i = 0; i < n; i++)
        buf[i] = pattern((i / elmt) * (long long) elmt * nprocs + (long long) rank * elmt
                         + i % elmt, round);
}

/* Fixed arithmetic work (no memory traffic to speak of): the compute phase. */
static volatile double sink;
static double compute(long iters)
{
    double t0 = MPI_Wtime(), x = 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
    return MPI_Wtime() - t0;
}

/* A file of o->mib MiB of elmt-byte elements interleaved: this process's
 * bytes (n, a buffer of them) and its view's type; mib: the file's MiB. */
static unsigned char *layout(const struct opts *o, int elmt, long *n, double *mib,
                             MPI_Datatype * ftype)
{
    long veclen = o->mib * 1048576 / ((long) elmt * nprocs);
    *n = veclen * elmt;
    *mib = (double) *n * nprocs / 1048576;
    MPI_Type_vector((int) veclen, elmt, elmt * nprocs, MPI_BYTE, ftype);
    MPI_Type_commit(ftype);
    return malloc((size_t) *n);
}

static void print_row(FILE *csv, const char *what, const char *mode, int elmt, double mib,
                      const double *t, int n, double vs, const char *vs_what)
{
    struct bench_stat s = bench_stat(t, n);
    printf("%-22s %-11s %9.4f %6.0f%% %9.1f", what, mode, s.median, bench_spread(&s),
           mib / s.median);
    if (vs > 0)
        printf("   %.2fx %s", vs / s.median, vs_what);
    printf("\n");
    if (csv)
        fprintf(csv, "checkpoint,%d,%d,%.1f,%s,%s,%d,%.6f,%.6f,%.6f,%.1f,%s,%.4f\n", nprocs,
                elmt, mib, what, mode, n, s.median, s.min, s.max, bench_spread(&s), vs_what,
                vs > 0 ? vs / s.median : 0);
}

static void close_costs(const struct opts *o, int elmt, FILE *csv)
{
    long n;
    double mib;
    MPI_Datatype ftype;
    unsigned char *buf = layout(o, elmt, &n, &mib, &ftype);
    fill(buf, n, elmt, 0);
    double t[NMODES][64], canon[64], replay[64];
    for (int r = 0; r < o->repeat; r++)
        for (int k = 0; k < NMODES; k++) {
            enum mode m = (enum mode) ((k + r) % NMODES);
            char path[NAME_MAX_LEN], fname[NAME_MAX_LEN + 8];
            names(o, m, "close", path, fname);
            bench_warm(o->dir, (double) o->warm, MPI_COMM_WORLD);
            t[m][r] = write_file(fname, m, buf, n, ftype, elmt);
            if (m == BACKGROUND)
                canon[r] = until_canonical(path);
            /* (no warming in between: the replay, as the drain, writes
             * the file into what the write phase left) */
            if (m == NEVER)
                replay[r] = replay_now(fname);
            verify(path, 0, n, ftype, elmt);
        }
    if (rank == 0) {
        double stock = bench_stat(t[STOCK], o->repeat).median;
        double never = bench_stat(t[NEVER], o->repeat).median;
        double sync = bench_stat(replay, o->repeat).median;
        printf("\ncheckpoint: %d processes, %d-byte elements interleaved, %.1f MiB per file, "
               "one write_all; medians of %d, modes alternating\n", nprocs, elmt, mib,
               o->repeat);
        printf("%-22s %-11s %9s %7s %9s   %s\n", "what", "mode", "median s", "spread",
               "MiB/s", "ratio of medians");
        for (int m = 0; m < NMODES; m++)
            print_row(csv, "open, write, close", mode_names[m], elmt, mib, t[m], o->repeat,
                      m == STOCK ? 0 : stock, "vs stock");
        print_row(csv, "background's close", "background", elmt, mib, t[BACKGROUND], o->repeat,
                  never, "vs never");
        print_row(csv, "replay of never's logs", "never", elmt, mib, replay, o->repeat, 0, "");
        print_row(csv, "close to canonical", "background", elmt, mib, canon, o->repeat, sync,
                  "vs the replay");
    }
    MPI_Type_free(&ftype);
    free(buf);
}

static void loop(const struct opts *o, int elmt, double compute_s, FILE *csv)
{
    long n;
    double mib;
    MPI_Datatype ftype;
    unsigned char *buf = layout(o, elmt, &n, &mib, &ftype);
    /* Calibrate the work to compute_s with every process computing at once
     * (as in the loop), on at least a tenth of a second of it. */
    long iters = 1 << 20;
    double took;
    MPI_Barrier(MPI_COMM_WORLD);
    while ((took = compute(iters)) < 0.1)
        iters *= 2;
    iters = (long) ((double) iters * compute_s / took);
    MPI_Allreduce(MPI_IN_PLACE, &iters, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    enum mode modes[3] = { STOCK, ON_CLOSE, BACKGROUND };
    double total[3], comp[3];
    for (int k = 0; k < 3; k++) {
        enum mode m = modes[k];
        char path[NAME_MAX_LEN], fname[NAME_MAX_LEN + 8], tag[32];
        bench_warm(o->dir, (double) o->warm, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c = 0;
        for (int round = 0; round < o->rounds; round++) {
            c += compute(iters);
            fill(buf, n, elmt, round + 1);
            snprintf(tag, sizeof(tag), "loop%d", round);
            names(o, m, tag, path, fname);
            write_file(fname, m, buf, n, ftype, elmt);
        }
        if (m == BACKGROUND)        /* (the job script's bbsctl wait) */
            for (int round = 0; round < o->rounds; round++) {
                snprintf(tag, sizeof(tag), "loop%d", round);
                names(o, m, tag, path, fname);
                until_canonical(path);
            }
        total[k] = bench_slowest(t0, MPI_COMM_WORLD);
        MPI_Allreduce(&c, &comp[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int round = 0; round < o->rounds; round++) {
            snprintf(tag, sizeof(tag), "loop%d", round);
            names(o, m, tag, path, fname);
            verify(path, round + 1, n, ftype, elmt);
        }
    }
    if (rank == 0) {
        printf("\ncheckpoint loop: %d rounds of %.2f s computing, then %.1f MiB of %d-byte "
               "elements written and closed\n", o->rounds, compute_s, mib, elmt);
        printf("%-11s %9s %9s %12s\n", "mode", "total s", "vs stock", "computing s");
        for (int k = 0; k < 3; k++) {
            printf("%-11s %9.3f %8.2fx %12.3f\n", mode_names[modes[k]], total[k],
                   total[0] / total[k], comp[k]);
            if (csv)
                fprintf(csv, "checkpoint-loop,%d,%d,%.1f,total,%s,%d,%.6f,,,,,%.4f\n", nprocs,
                        elmt, mib, mode_names[modes[k]], o->rounds, total[k],
                        total[0] / total[k]);
        }
        printf("computing while drains ran took %.1f%% longer than with stock ROMIO's "
               "checkpoints\n", 100 * (comp[2] / comp[0] - 1));
    }
    MPI_Type_free(&ftype);
    free(buf);
}

int main(int argc, char **argv)
{
    struct opts o = { ".", "8,4k", NULL, 64, 5, 4, "1", -1 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &o.dir}, {"-elmtsize", 's', &o.sizes}, {"-csv", 's', &o.csv},
        {"-mib", 'l', &o.mib}, {"-repeat", 'i', &o.repeat}, {"-rounds", 'i', &o.rounds},
        {"-compute", 's', &o.compute}, {"-warm", 'l', &o.warm},
    };
    long long sizes[16];
    int nsizes;
    double compute_s = 0;
    if (bench_options(argc, argv, opts, (int) (sizeof(opts) / sizeof(opts[0]))) != 0
        || (nsizes = bench_parse_sizes(o.sizes, sizes, 16)) < 1 || o.mib < 1
        || o.repeat < 1 || o.repeat > 64 || o.rounds < 0 || (compute_s = atof(o.compute)) < 0)
        usage();
    /* (this VM hands freed memory back to its host, and the first touch of
     * a page it took back costs a fault there: a write to new pages runs at
     * a tenth of its speed.  The logs, the file and the drain's buffers
     * all come out of what the warming freed.) */
    if (o.warm < 0)
        o.warm = 16 * o.mib > 256 ? 16 * o.mib : 256;
    FILE *csv = bench_csv_open(o.csv, "bench,nprocs,elmtsize,mib,what,mode,runs,median_s,"
                               "min_s,max_s,spread_pct,vs,ratio");
    /* The first background close of a node starts its bbserver: once,
     * untimed (as a job's first checkpoint would). */
    char path[NAME_MAX_LEN], fname[NAME_MAX_LEN + 8];
    unsigned char one = 0;
    MPI_Datatype byte_t = MPI_BYTE;
    names(&o, BACKGROUND, "warmup", path, fname);
    write_file(fname, BACKGROUND, &one, 1, byte_t, 1);
    until_canonical(path);
    if (rank == 0)
        unlink(path);
    for (int s = 0; s < nsizes; s++)
        close_costs(&o, (int) sizes[s], csv);
    for (int s = 0; s < nsizes && o.rounds > 0; s++)
        loop(&o, (int) sizes[s], compute_s, csv);
    if (csv)
        fclose(csv);
    MPI_Finalize();
    return 0;
}
