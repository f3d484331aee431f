/*
 * noncontig — the LogFS paper's benchmark: every process writes a vector of
 * small elements, interleaved round-robin with the other processes, so the
 * file is noncontiguous for everyone.  One run measures, on the same file
 * system and with the same pattern:
 *
 *   raw    each process writes its bytes contiguously with POSIX write()
 *          (what the device gives to an easy pattern)
 *   ufs:   stock ROMIO, independent and collective
 *   bbfs:  the same calls through bbfs (and any extra prefixes given), three
 *          ways: end to end (replay at close, the default), with replay
 *          deferred (bbfs_replay=never: open to close leaves the logs), and
 *          the replay of those logs (a read-only open through bbfs), which
 *          is compared with stock ROMIO's collective write of the pattern
 *
 * Noise control (this VM hands freed memory back to its host, so the first
 * large write after a large free runs at page-fault speed): before every
 * timed phase each process writes and deletes its share of -warm MiB; the
 * modes alternate, in a rotated order each round, -repeat times; the tables
 * give medians, the spread (max - min, % of the median) and ratios of
 * medians.  Timing is open to close, the slowest process counts.  The first
 * round reads every file back through ufs: and checks it, so a fast wrong
 * answer is an error.  -csv appends one row per measurement.
 */
#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

struct opts {
    const char *dir;
    int elmtsize;               /* the size being run */
    long veclen;
    const char *targets;        /* space-separated prefixes besides ufs: */
    const char *hints;          /* k=v,k=v for bbfs opens */
    int breakdown;              /* bbfs_timing on the first round's end-to-end runs */
};

static int rank, nprocs;

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: noncontig [-dir DIR] [-elmtsize B[,B...]] [-veclen N | -mib M]\n"
                "                 [-targets \"bbfs: ...\"] [-hints k=v,k=v] [-repeat R]\n"
                "                 [-warm MIB] [-csv FILE] [-label TEXT] [-breakdown yes|no]\n"
                "  -dir       directory for the test files (default: .)\n"
                "  -elmtsize  bytes per element, k/m suffixes, a comma list runs each (default 8)\n"
                "  -veclen    elements per process (default 131072)\n"
                "  -mib       total MiB per file instead: veclen = M MiB / (elmtsize x procs)\n"
                "  -targets   prefixes compared with stock ufs: (default \"bbfs:\")\n"
                "  -hints     MPI_Info hints for the non-ufs targets\n"
                "  -repeat    rounds of every mode (default 5)\n"
                "  -warm      MiB written and deleted before each timed phase (default 256)\n"
                "  -csv       append one row per measurement to FILE\n"
                "  -label     free text for the CSV's label column (default: none)\n"
                "  -breakdown yes: the first round's end-to-end runs print where their time\n"
                "             went (hint bbfs_timing, on stderr); default no\n");
    /* every process parses the same arguments and gets here: a clean exit
     * (an abort can lose the message on its way through mpiexec) */
    MPI_Finalize();
    exit(2);
}

static unsigned char pattern(long long off)
{
    return (unsigned char) (off * 2654435761u >> 7);
}

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "noncontig [rank %d]: %s: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static MPI_Info make_info(const char *hints)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (!hints)
        return info;
    char *copy = strdup(hints), *save, *kv;
    for (kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            MPI_Info_set(info, kv, eq + 1);
        }
    }
    free(copy);
    return info;
}

/* Write the pattern through MPI-IO; returns the slowest open-to-close time. */
static double run_mpiio(const struct opts *o, const char *fname, int collective, MPI_Info info,
                        const unsigned char *buf, MPI_Datatype ftype)
{
    MPI_File fh;
    MPI_Status st;
    int err;
    long n = o->veclen * o->elmtsize;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if ((err = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_WRONLY, info,
                             &fh)) != MPI_SUCCESS)
        die(fname, err);
    MPI_File_set_view(fh, (MPI_Offset) rank * o->elmtsize, MPI_BYTE, ftype, "native",
                      MPI_INFO_NULL);
    err = collective ? MPI_File_write_all(fh, buf, (int) n, MPI_BYTE, &st)
        : MPI_File_write(fh, buf, (int) n, MPI_BYTE, &st);
    if (err != MPI_SUCCESS)
        die("write", err);
    if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
        die("close", err);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* Read the file back through stock ROMIO and compare with the pattern. */
static void verify(const struct opts *o, const char *path, MPI_Datatype ftype)
{
    MPI_File fh;
    MPI_Status st;
    char name[4200];
    long n = o->veclen * o->elmtsize;
    unsigned char *got = malloc(n);
    int err, bad = 0, anybad;

    snprintf(name, sizeof(name), "ufs:%s", path);
    if ((err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        die(name, err);
    MPI_File_set_view(fh, (MPI_Offset) rank * o->elmtsize, MPI_BYTE, ftype, "native",
                      MPI_INFO_NULL);
    if ((err = MPI_File_read_all(fh, got, (int) n, MPI_BYTE, &st)))
        die("read back", err);
    MPI_File_close(&fh);
    for (long i = 0; i < n && !bad; i++) {
        long long off = (i / o->elmtsize) * (long long) o->elmtsize * nprocs
            + (long long) rank * o->elmtsize + i % o->elmtsize;
        bad = got[i] != pattern(off);
    }
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (rank == 0)
            fprintf(stderr, "noncontig: %s has wrong contents\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(got);
}

static double run_raw(const struct opts *o, const unsigned char *buf)
{
    char path[4200];
    long n = o->veclen * o->elmtsize, done = 0;

    snprintf(path, sizeof(path), "%s/noncontig.raw.%d", o->dir, rank);
    unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) {
        fprintf(stderr, "noncontig: %s: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    while (done < n) {
        long chunk = n - done < (4 << 20) ? n - done : (4 << 20);
        ssize_t w = write(fd, buf + done, chunk);
        if (w <= 0) {
            fprintf(stderr, "noncontig: write %s: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        done += w;
    }
    close(fd);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    unlink(path);
    return tmax;
}

/* Replay pending logs: a read-only open through bbfs replays them. */
static double run_replay(const char *fname)
{
    MPI_File fh;
    int err;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if ((err = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        die(fname, err);
    MPI_File_close(&fh);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}


/* One row of the tables and the CSV: a mode's time in every round. */
struct row {
    char target[32], mode[48];
    int vs;                     /* against ufs: independent (0), collective (1), nothing (-1) */
    double t[64];
};

/* What one timed turn runs; the turns of a round alternate the modes. */
enum kind { RAW, UFS, DEFERRED, END_TO_END };
struct turn {
    enum kind kind;
    int coll;
    const char *prefix;
    int row, replay_row;        /* where its times go */
};

static const char csv_header[] =
    "bench,label,nodes,nprocs,elmtsize,veclen,bytes,target,mode,hints,runs,median_s,min_s,"
    "max_s,spread_pct,mib_s,raw_mib_s,of_raw,vs,ratio";

static long rss_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Figures a size's summary line keeps (first target): ratios of medians. */
struct summary {
    int elmtsize;
    long veclen;
    double raw_mibs, ratio[6];  /* rows in order: deferred, its replay, end to end; independent, then collective */
};

static void run_size(const struct opts *o, int repeat, double warm, const char *label,
                     int nodes, FILE *csv, struct summary *sum, long rss[3])
{
    long n = o->veclen * o->elmtsize;
    double mib = (double) n * nprocs / (1 << 20);
    unsigned char *buf = malloc((size_t) n);
    for (long i = 0; i < n; i++)
        buf[i] = pattern((i / o->elmtsize) * (long long) o->elmtsize * nprocs
                         + (long long) rank * o->elmtsize + i % o->elmtsize);
    MPI_Datatype ftype;
    MPI_Type_vector((int) o->veclen, o->elmtsize, o->elmtsize * nprocs, MPI_BYTE, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Info none = make_info(NULL), hinted = make_info(o->hints);

    static struct row rows[64];
    static struct turn turns[64];
    int nrows = 0, nturns = 0;
#define ROW(tg, md, v) (snprintf(rows[nrows].target, sizeof(rows[0].target), "%s", tg), \
        snprintf(rows[nrows].mode, sizeof(rows[0].mode), "%s", md), rows[nrows].vs = (v), nrows++)
    turns[nturns++] = (struct turn) { RAW, 0, "", ROW("raw", "POSIX write, contiguous", -1), -1 };
    /* bbfs turns first, so that in the first round the memory high-water
     * mark is read before stock ROMIO's two-phase buffers raise it */
    char targets[1024], *save, *prefix;
    snprintf(targets, sizeof(targets), "%s", o->targets);
    static char prefixes[16][32];
    int np = 0;
    for (prefix = strtok_r(targets, " ", &save); prefix && np < 8;
         prefix = strtok_r(NULL, " ", &save), np++) {
        char *p = prefixes[np];
        snprintf(p, sizeof(prefixes[0]), "%s", prefix);
        for (int coll = 0; coll < 2; coll++) {
            const char *m = coll ? "collective" : "independent";
            char label_s[48], replay_s[48];
            snprintf(label_s, sizeof(label_s), "%s, deferred", m);
            snprintf(replay_s, sizeof(replay_s), "%s, its replay", m);
            int d = ROW(p, label_s, coll);
            int rp = ROW(p, replay_s, 1);
            turns[nturns++] = (struct turn) { DEFERRED, coll, p, d, rp };
            turns[nturns++] = (struct turn) { END_TO_END, coll, p, ROW(p, m, coll), -1 };
        }
    }
    int ufs_row[2];
    for (int coll = 0; coll < 2; coll++) {
        ufs_row[coll] = ROW("ufs:", coll ? "collective" : "independent", -1);
        turns[nturns++] = (struct turn) { UFS, coll, "ufs:", ufs_row[coll], -1 };
    }

    if (rank == 0) {
        printf("\nnoncontig: %d processes on %d node%s, %d-byte elements, %ld per process "
               "(%.1f MiB per file) in %s; %d rounds, modes alternating, %.0f MiB warmed "
               "before each\n", nprocs, nodes, nodes == 1 ? "" : "s", o->elmtsize, o->veclen,
               mib, o->dir, repeat, warm);
        fflush(stdout);
    }
    for (int r = 0; r < repeat; r++)
        for (int k = 0; k < nturns; k++) {
            const struct turn *tu = &turns[(k + r) % nturns];
            const char *m = tu->coll ? "collective" : "independent";
            char path[4096], fname[4200];
            snprintf(path, sizeof(path), "%s/noncontig.%s%s.dat", o->dir, tu->prefix, m);
            for (char *c = path + strlen(o->dir) + 1; *c; c++)
                if (*c == ':')
                    *c = '_';
            snprintf(fname, sizeof(fname), "%s%s", tu->prefix, path);
            bench_warm(o->dir, warm, MPI_COMM_WORLD);
            double t;
            switch (tu->kind) {
            case RAW:
                rows[tu->row].t[r] = run_raw(o, buf);
                continue;
            case UFS:
                rows[tu->row].t[r] = run_mpiio(o, fname, tu->coll, none, buf, ftype);
                break;
            case DEFERRED:
                MPI_Info_set(hinted, "bbfs_replay", "never");
                rows[tu->row].t[r] = run_mpiio(o, fname, tu->coll, hinted, buf, ftype);
                MPI_Info_delete(hinted, "bbfs_replay");
                if (rss[1] == 0)        /* logging only, nothing else has run */
                    rss[1] = rss_now();
                bench_warm(o->dir, warm, MPI_COMM_WORLD);
                t = run_replay(fname);
                rows[tu->replay_row].t[r] = t;
                if (rss[2] == 0)        /* before verify's stock collective read */
                    rss[2] = rss_now();
                break;
            case END_TO_END:
                if (r == 0 && o->breakdown)
                    MPI_Info_set(hinted, "bbfs_timing", "true");
                rows[tu->row].t[r] = run_mpiio(o, fname, tu->coll, hinted, buf, ftype);
                if (r == 0 && o->breakdown)
                    MPI_Info_delete(hinted, "bbfs_timing");
                break;
            }
            if (r == 0)
                verify(o, path, ftype);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0)
                unlink(path);
        }

    if (rank == 0) {
        struct bench_stat raw = bench_stat(rows[0].t, repeat), ufs[2];
        for (int coll = 0; coll < 2; coll++)
            ufs[coll] = bench_stat(rows[ufs_row[coll]].t, repeat);
        double raw_mibs = mib / raw.median;
        printf("%-8s %-24s %9s %7s %9s %8s   %s\n", "target", "mode", "median s", "spread",
               "MiB/s", "of raw", "ratio of medians");
        sum->elmtsize = o->elmtsize;
        sum->veclen = o->veclen;
        sum->raw_mibs = raw_mibs;
        int si = 0;
        for (int i = 0; i < nrows; i++) {
            const struct row *rw = &rows[i];
            struct bench_stat s = bench_stat(rw->t, repeat);
            double ratio = rw->vs >= 0 ? ufs[rw->vs].median / s.median : 0;
            const char *vs = rw->vs < 0 ? "" : strstr(rw->mode, ", its replay")
                ? "ufs: write_all" : "ufs: same mode";
            char ratio_s[64] = "";
            if (rw->vs >= 0)
                snprintf(ratio_s, sizeof(ratio_s), "%.2fx vs %s", ratio, vs);
            printf("%-8s %-24s %9.4f %6.0f%% %9.1f %8.3f   %s\n", rw->target, rw->mode,
                   s.median, bench_spread(&s), mib / s.median, raw.median / s.median, ratio_s);
            if (rw->vs >= 0 && !strcmp(rw->target, prefixes[0]) && si < 6)
                sum->ratio[si++] = ratio;
            if (csv)
                fprintf(csv, "noncontig,\"%s\",%d,%d,%d,%ld,%.0f,%s,\"%s\",\"%s\",%d,%.6f,%.6f,"
                        "%.6f,%.1f,%.2f,%.2f,%.4f,\"%s\",%.4f\n", label, nodes, nprocs, o->elmtsize,
                        o->veclen, mib * 1048576, rw->target, rw->mode,
                        strcmp(rw->target, "ufs:") && strcmp(rw->target, "raw") && o->hints
                        ? o->hints : "", repeat, s.median, s.min, s.max, bench_spread(&s),
                        mib / s.median, raw_mibs, raw.median / s.median, vs, ratio);
        }
        fflush(stdout);
    }
    MPI_Type_free(&ftype);
    MPI_Info_free(&none);
    MPI_Info_free(&hinted);
    free(buf);
}

int main(int argc, char **argv)
{
    struct opts o = { ".", 8, 131072, "bbfs:", NULL, 0 };
    const char *csv_path = NULL, *label = "";
    long long sizes[16] = { 8 };
    int nsizes = 1, repeat = 5;
    double warm = 256, total_mib = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "-dir"))
            o.dir = argv[++i];
        else if (!strcmp(argv[i], "-elmtsize")) {
            if ((nsizes = bench_parse_sizes(argv[++i], sizes, 16)) < 1)
                usage();
        } else if (!strcmp(argv[i], "-veclen"))
            o.veclen = atol(argv[++i]);
        else if (!strcmp(argv[i], "-mib"))
            total_mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "-targets"))
            o.targets = argv[++i];
        else if (!strcmp(argv[i], "-hints"))
            o.hints = argv[++i];
        else if (!strcmp(argv[i], "-repeat"))
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-warm"))
            warm = atof(argv[++i]);
        else if (!strcmp(argv[i], "-csv"))
            csv_path = argv[++i];
        else if (!strcmp(argv[i], "-label"))
            label = argv[++i];
        else if (!strcmp(argv[i], "-breakdown")) {
            const char *v = argv[++i];
            if (strcmp(v, "yes") && strcmp(v, "no"))
                usage();
            o.breakdown = !strcmp(v, "yes");
        }
        else
            usage();
    }
    if (o.veclen <= 0 || repeat < 1 || repeat > 64 || warm < 0 || total_mib < 0)
        usage();
    for (int s = 0; s < nsizes; s++) {
        long v = total_mib > 0 ? (long) (total_mib * 1048576 / ((double) sizes[s] * nprocs))
            : o.veclen;
        if (sizes[s] > (1 << 30) || v <= 0 || (double) sizes[s] * v > 2e9)
            usage();
    }
    FILE *csv = bench_csv_open(csv_path, csv_header);
    int nodes = bench_nodes(MPI_COMM_WORLD);

    /* A job's first open of each target pays once for what later opens
     * reuse (across nodes: loading UCX, starting the node's bbserver,
     * connecting): an untimed open and close of a scratch file. */
    {
        char warm_name[4200], *wsave, *wprefix, wtargets[1024];
        MPI_Info hinted = make_info(o.hints);
        snprintf(wtargets, sizeof(wtargets), "%s ufs:", o.targets);
        for (wprefix = strtok_r(wtargets, " ", &wsave); wprefix;
             wprefix = strtok_r(NULL, " ", &wsave)) {
            MPI_File wfh;
            snprintf(warm_name, sizeof(warm_name), "%s%s/noncontig.warmup", wprefix, o.dir);
            if (MPI_File_open(MPI_COMM_WORLD, warm_name, MPI_MODE_CREATE | MPI_MODE_RDWR
                              | MPI_MODE_DELETE_ON_CLOSE, hinted, &wfh) == MPI_SUCCESS)
                MPI_File_close(&wfh);
        }
        MPI_Info_free(&hinted);
    }
    long rss[3] = { rss_now(), 0, 0 };      /* MPI, UCX: what bbfs adds to */
    struct summary sum[16];
    for (int s = 0; s < nsizes; s++) {
        o.elmtsize = (int) sizes[s];
        if (total_mib > 0)
            o.veclen = (long) (total_mib * 1048576 / ((double) o.elmtsize * nprocs));
        run_size(&o, repeat, warm, label, nodes, csv, &sum[s], rss);
    }
    if (rank == 0) {
        printf("\nsummary, %.*s against stock ROMIO (ratios of medians of %d; raw: POSIX "
               "contiguous write, same run):\n", (int) strcspn(o.targets, " "), o.targets,
               repeat);
        printf("%8s %8s %10s %15s %12s %15s %12s %15s\n", "element", "MiB", "raw MiB/s",
               "indep deferred", "indep e2e", "coll deferred", "coll e2e", "replay/write_all");
        for (int s = 0; s < nsizes; s++)
            printf("%8d %8.1f %10.0f %14.2fx %11.2fx %14.2fx %11.2fx %14.2fx\n",
                   sum[s].elmtsize, (double) sum[s].elmtsize * sum[s].veclen * nprocs / 1048576,
                   sum[s].raw_mibs, sum[s].ratio[0], sum[s].ratio[2], sum[s].ratio[3],
                   sum[s].ratio[5], sum[s].ratio[1]);
    }
    long all[3], mx[3];
    all[0] = rss[0];
    all[1] = rss[1] ? rss[1] : rss[0];
    all[2] = rss[2] ? rss[2] : all[1];
    MPI_Reduce(all, mx, 3, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("peak resident memory, largest process (MiB): %.1f before any timed I/O (MPI, "
               "a bbserver connection if used), +%.1f logging the first size (user buffer, "
               "bbfs_buffer_size %s), +%.1f replaying it\n", mx[0] / 1024.0,
               (mx[1] - mx[0]) / 1024.0,
               o.hints && strstr(o.hints, "bbfs_buffer_size") ? "as given" : "4 MiB",
               (mx[2] - mx[1]) / 1024.0);
    if (csv)
        fclose(csv);
    MPI_Finalize();
    return 0;
}
