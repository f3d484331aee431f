/*
 * noncontig — the LogFS paper's benchmark: every process writes a vector of
 * small elements, interleaved round-robin with the other processes, so the
 * file is noncontiguous for everyone.  One run measures, on the same files
 * system and with the same pattern:
 *
 *   raw    each process writes its bytes contiguously with POSIX write()
 *          (best of three runs)
 *          (what the device gives to an easy pattern)
 *   ufs:   stock ROMIO, independent and collective
 *   bbfs:  the same calls through bbfs (and any extra prefixes given), three
 *          ways: end to end (replay at close, the default), with replay
 *          deferred (bbfs_replay=never: open to close leaves the logs), and
 *          the replay of those logs (a read-only open through bbfs), which
 *          is compared with stock ROMIO's collective write of the pattern
 *
 * and prints bandwidth and ratios (against ufs:, and the fraction of raw).
 * Timing is open to close, the slowest process counts.  Every file written
 * is read back through ufs: and checked, so a fast wrong answer is an error.
 */
#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct opts {
    const char *dir;
    int elmtsize;
    long veclen;
    const char *targets;        /* space-separated prefixes besides ufs: */
    const char *hints;          /* k=v,k=v for bbfs opens */
};

static int rank, nprocs;

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: noncontig [-dir DIR] [-elmtsize BYTES] [-veclen COUNT]\n"
                "                 [-targets \"bbfs: ...\"] [-hints k=v,k=v]\n"
                "  -dir       directory for the test files (default: .)\n"
                "  -elmtsize  bytes per element (default 8)\n"
                "  -veclen    elements per process (default 131072)\n"
                "  -targets   prefixes compared with stock ufs: (default \"bbfs:\")\n"
                "  -hints     MPI_Info hints for the non-ufs targets\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
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

static void row(const char *target, const char *mode, double t, double mib,
                const char *vs_what, double vs, double raw)
{
    char vs_s[48] = "";
    if (rank != 0)
        return;
    if (vs_what)
        snprintf(vs_s, sizeof(vs_s), "%.2fx %s", vs, vs_what);
    printf("%-8s %-24s %8.3f %9.1f %9.3gx   %s\n", target, mode, t, mib / t, raw / t, vs_s);
    fflush(stdout);
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

int main(int argc, char **argv)
{
    struct opts o = { ".", 8, 131072, "bbfs:", NULL };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "-dir"))
            o.dir = argv[++i];
        else if (!strcmp(argv[i], "-elmtsize"))
            o.elmtsize = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-veclen"))
            o.veclen = atol(argv[++i]);
        else if (!strcmp(argv[i], "-targets"))
            o.targets = argv[++i];
        else if (!strcmp(argv[i], "-hints"))
            o.hints = argv[++i];
        else
            usage();
    }
    if (o.elmtsize <= 0 || o.veclen <= 0 || (double) o.elmtsize * o.veclen > 2e9)
        usage();

    long n = o.veclen * o.elmtsize;
    unsigned char *buf = malloc((size_t) n);
    for (long i = 0; i < n; i++)
        buf[i] = pattern((i / o.elmtsize) * (long long) o.elmtsize * nprocs
                         + (long long) rank * o.elmtsize + i % o.elmtsize);
    MPI_Datatype ftype;
    MPI_Type_vector((int) o.veclen, o.elmtsize, o.elmtsize * nprocs, MPI_BYTE, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Info none = make_info(NULL), hinted = make_info(o.hints);
    double mib = (double) n * nprocs / (1 << 20);

    if (rank == 0) {
        printf("noncontig: %d processes, %d-byte elements, %ld per process "
               "(%.1f MiB total) in %s\n", nprocs, o.elmtsize, o.veclen, mib, o.dir);
        printf("%-8s %-24s %8s %9s %10s   %s\n", "target", "mode", "seconds", "MiB/s",
               "of raw", "ratio");
    }
    /* The device's best of three: the first run also pays for warming up
     * the file system (page cache, allocation), which would flatter every
     * ratio against it. */
    double raw = run_raw(&o, buf);
    for (int k = 0; k < 2; k++) {
        double t = run_raw(&o, buf);
        raw = t < raw ? t : raw;
    }
    row("raw", "POSIX write, contiguous", raw, mib, NULL, 0, raw);

    /* bbfs first, so the memory high-water mark can be read (after the
     * first bbfs run: logging and replay) before stock ROMIO's two-phase
     * buffers raise it; rows are printed afterwards. */
    struct result {
        char target[32], mode[80], vs_what[32];
        double t;
        int vs_mode;            /* 0: vs ufs independent, 1: collective, -1: none */
    } res[64];
    int nres = 0;
    char targets[1024];
    snprintf(targets, sizeof(targets), "%s ufs:", o.targets);
    double ufs_time[2] = { 0, 0 };
    long rss_write = 0, rss_replay = 0, rss_start;
    /* A job's first bbfs open pays once for what later opens reuse (across
     * nodes: loading UCX, starting the node's bbserver, connecting): an
     * untimed open and close of a scratch file, so the first mode timed
     * does not carry it. */
    {
        char warm[4200], *wsave, *wprefix, wtargets[1024];
        snprintf(wtargets, sizeof(wtargets), "%s", o.targets);
        for (wprefix = strtok_r(wtargets, " ", &wsave); wprefix;
             wprefix = strtok_r(NULL, " ", &wsave)) {
            MPI_File wfh;
            snprintf(warm, sizeof(warm), "%s%s/noncontig.warmup", wprefix, o.dir);
            if (MPI_File_open(MPI_COMM_WORLD, warm, MPI_MODE_CREATE | MPI_MODE_RDWR
                              | MPI_MODE_DELETE_ON_CLOSE, hinted, &wfh) == MPI_SUCCESS)
                MPI_File_close(&wfh);
        }
    }
    {
        struct rusage ru;       /* MPI, the user buffer: what bbfs adds to */
        getrusage(RUSAGE_SELF, &ru);
        rss_start = ru.ru_maxrss;
    }
    char *save, *prefix;
    for (prefix = strtok_r(targets, " ", &save); prefix; prefix = strtok_r(NULL, " ", &save)) {
        int is_ufs = !strcmp(prefix, "ufs:");
        for (int coll = 0; coll < 2 && nres < 60; coll++) {
            const char *mode = coll ? "collective" : "independent";
            char path[4096], fname[4200];
            snprintf(path, sizeof(path), "%s/noncontig.%s%s.dat", o.dir, prefix, mode);
            for (char *c = path + strlen(o.dir) + 1; *c; c++)
                if (*c == ':')
                    *c = '_';
            snprintf(fname, sizeof(fname), "%s%s", prefix, path);
#define RESULT(m, time, vsw, vsm) do { struct result *r_ = &res[nres++]; \
        snprintf(r_->target, sizeof(r_->target), "%s", prefix); \
        snprintf(r_->mode, sizeof(r_->mode), "%s", m); \
        snprintf(r_->vs_what, sizeof(r_->vs_what), "%s", vsw); \
        r_->t = time; r_->vs_mode = vsm; } while (0)
            if (is_ufs) {
                ufs_time[coll] = run_mpiio(&o, fname, coll, none, buf, ftype);
                verify(&o, path, ftype);
                RESULT(mode, ufs_time[coll], "", -1);
            } else {
                char label[64];
                struct rusage ru;
                /* replay deferred: open to close leaves the logs, then replay */
                MPI_Info_set(hinted, "bbfs_replay", "never");
                double t = run_mpiio(&o, fname, coll, hinted, buf, ftype);
                MPI_Info_delete(hinted, "bbfs_replay");
                getrusage(RUSAGE_SELF, &ru);
                if (rss_write == 0)     /* logging only, nothing else has run */
                    rss_write = ru.ru_maxrss;
                snprintf(label, sizeof(label), "%s, deferred", mode);
                RESULT(label, t, "vs ufs: same mode", coll);
                t = run_replay(fname);
                getrusage(RUSAGE_SELF, &ru);
                if (rss_replay == 0)    /* before verify's stock collective read */
                    rss_replay = ru.ru_maxrss;
                verify(&o, path, ftype);
                RESULT("replay of it", t, "vs ufs: write_all", 1);
                /* end to end: replay at close, the default */
                t = run_mpiio(&o, fname, coll, hinted, buf, ftype);
                verify(&o, path, ftype);
                RESULT(mode, t, "vs ufs: same mode", coll);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0)
                unlink(path);
        }
    }
    for (int i = 0; i < nres; i++)
        row(res[i].target, res[i].mode, res[i].t, mib, res[i].vs_mode < 0 ? NULL : res[i].vs_what,
            res[i].vs_mode < 0 ? 0 : ufs_time[res[i].vs_mode] / res[i].t, raw);
    long rss[4] = { rss_start, rss_write, rss_replay, 0 }, maxrss[4];
    struct rusage ru0;
    getrusage(RUSAGE_SELF, &ru0);
    rss[3] = ru0.ru_maxrss;
    MPI_Reduce(rss, maxrss, 4, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("peak resident memory, largest process (MiB): %.1f before any I/O (MPI, "
               "user buffer, a bbserver connection if used), +%.1f logging "
               "(bbfs_buffer_size %s), +%.1f replaying, %.1f at "
               "the end with stock ROMIO's runs\n", maxrss[0] / 1024.0,
               (maxrss[1] - maxrss[0]) / 1024.0,
               o.hints && strstr(o.hints, "bbfs_buffer_size") ? "as given" : "4 MiB",
               (maxrss[2] - maxrss[1]) / 1024.0, maxrss[3] / 1024.0);
    MPI_Type_free(&ftype);
    MPI_Info_free(&none);
    MPI_Info_free(&hinted);
    free(buf);
    MPI_Finalize();
    return 0;
}
