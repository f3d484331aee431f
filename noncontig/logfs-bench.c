/*
 * logfs-bench: the logfs performance figures, all from one run on one
 * directory, each next to the baseline it is judged against:
 *   1. 64 KiB appends through a logfs writer vs a plain write() loop
 *      (target: >= 90%);
 *   2. 8-byte strided pieces logged by logfs vs one pwrite() per piece into
 *      the canonical layout (target: >= 5x);
 *   3. add_run of a million 8-byte blocks (target: >= 100 M blocks/s);
 *   4. replay planning of 4 writers x a million interleaved 8-byte pieces:
 *      plan_build + one replayer's plan_domain, compact (target: well under
 *      0.2 s) and, with one overlapping piece, through the range map;
 *   5. range map inserts per second and bytes per live extent
 *      (targets: >= 1M/s, <= 64 B).
 * It is a benchmark, not a test: it prints, it does not judge.
 *
 * usage: logfs-bench [-d DIR] [-m MIB] [-n PIECES] [-r REPEATS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logfs.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const struct logfs_error *e)
{
    fprintf(stderr, "logfs-bench: %s: %s\n", what, e ? e->msg : "failed");
    exit(1);
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    if (!p)
        die("malloc", NULL);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void remove_logs(const char *dir, const char *name)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s.datalog", dir, name);
    unlink(buf);
    snprintf(buf, sizeof buf, "%s/%s.metalog", dir, name);
    unlink(buf);
}

static struct logfs_writer *open_writer(const char *dir, const char *name, int track)
{
    struct logfs_writer_opts o;
    struct logfs_writer *w;
    struct logfs_error e;
    logfs_writer_opts_init(&o);
    o.dir = dir;
    o.name = name;
    o.track_index = track;
    if (logfs_writer_open(&o, &w, &e))
        die("open writer", &e);
    return w;
}

/* Seconds for `total` bytes of 64 KiB write()s, including close. */
static double plain_appends(const char *dir, const char *buf, size_t total)
{
    char *p = path_in(dir, "plain.dat");
    double t0 = now();
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("open plain file", NULL);
    for (size_t done = 0; done < total; done += 65536)
        if (write(fd, buf, 65536) != 65536)
            die("write", NULL);
    close(fd);
    double t = now() - t0;
    unlink(p);
    free(p);
    return t;
}

static double logfs_appends(const char *dir, const char *buf, size_t total)
{
    struct logfs_error e;
    double t0 = now();
    struct logfs_writer *w = open_writer(dir, "bench64k", 1);
    for (size_t done = 0; done < total; done += 65536)
        if (logfs_writer_write(w, done, buf, 65536, &e))
            die("logfs write", &e);
    if (logfs_writer_close(w, &e))
        die("logfs close", &e);
    double t = now() - t0;
    remove_logs(dir, "bench64k");
    return t;
}

static double pwrite_pieces(const char *dir, size_t n, uint64_t stride)
{
    char *p = path_in(dir, "pieces.dat");
    uint64_t v = 0x0123456789abcdefull;
    double t0 = now();
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("open pieces file", NULL);
    for (size_t i = 0; i < n; i++)
        if (pwrite(fd, &v, 8, (off_t)(i * stride)) != 8)
            die("pwrite", NULL);
    close(fd);
    double t = now() - t0;
    unlink(p);
    free(p);
    return t;
}

/* Pieces go in calls of `per_call` blocks, as a vector datatype would. */
static double logfs_pieces(const char *dir, size_t n, uint64_t stride, size_t per_call, int track,
                           uint64_t *meta_bytes)
{
    struct logfs_error e;
    uint64_t v = 0x0123456789abcdefull;
    double t0 = now();
    struct logfs_writer *w = open_writer(dir, "benchstrided", track);
    for (size_t i = 0; i < n;) {
        if (logfs_writer_begin_write(w, &e))
            die("begin_write", &e);
        for (size_t k = 0; k < per_call && i < n; k++, i++)
            if (logfs_writer_add_extent(w, i * stride, 8, &v, &e))
                die("add_extent", &e);
        if (logfs_writer_end_write(w, &e))
            die("end_write", &e);
    }
    if (logfs_writer_close(w, &e))
        die("logfs close", &e);
    double t = now() - t0;
    char *m = path_in(dir, "benchstrided.metalog");
    FILE *f = fopen(m, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        *meta_bytes = (uint64_t)ftell(f);
        fclose(f);
    }
    free(m);
    remove_logs(dir, "benchstrided");
    return t;
}

static double best(double a, double b)
{
    return a < b ? a : b;
}

/* One call, one add_run of n 8-byte blocks at stride 32 (the noncontig
 * pattern of one rank of 4).  Returns seconds for begin + add_run + end. */
static double logfs_run(const char *dir, size_t n, const char *data, int track)
{
    struct logfs_error e;
    struct logfs_writer *w = open_writer(dir, "benchrun", track);
    double t0 = now();
    if (logfs_writer_begin_write(w, &e) || logfs_writer_add_run(w, 8, 8, 32, n, data, &e) ||
        logfs_writer_end_write(w, &e))
        die("add_run", &e);
    double t = now() - t0;
    if (logfs_writer_close(w, &e))
        die("logfs close", &e);
    remove_logs(dir, "benchrun");
    return t;
}

/* The noncontig pattern's logs: nw writers, each one call of n 8-byte
 * pieces, rank r's piece i at (i * nw + r) * 8; with `overlap`, rank nw-1
 * also rewrites rank 0's piece 0 (one overlapping piece). */
static void noncontig_logs(const char *dir, uint32_t nw, size_t n, int overlap, const char *data)
{
    struct logfs_error e;
    for (uint32_t r = 0; r < nw; r++) {
        struct logfs_writer_opts o;
        struct logfs_writer *w;
        char name[32];
        snprintf(name, sizeof name, "benchplan%u", r);
        logfs_writer_opts_init(&o);
        o.dir = dir;
        o.name = name;
        o.rank = r;
        o.nwriters = nw;
        o.track_index = 0;
        if (logfs_writer_open(&o, &w, &e) || logfs_writer_begin_write(w, &e) ||
            logfs_writer_add_run(w, r * 8, 8, nw * 8, n, data, &e) || logfs_writer_end_write(w, &e) ||
            (overlap && r == nw - 1 && logfs_writer_write(w, 0, data, 8, &e)) || logfs_writer_close(w, &e))
            die("noncontig logs", &e);
    }
}

struct count_ctx {
    uint64_t calls, bytes;
};

static int count_piece(void *arg, const struct logfs_replay_piece *p)
{
    struct count_ctx *c = arg;
    c->calls++;
    c->bytes += p->length;
    return 0;
}

static int count_run(void *arg, const struct logfs_replay_run *r)
{
    struct count_ctx *c = arg;
    c->calls++;
    c->bytes += r->count * r->blocklen;
    return 0;
}

/* Seconds for what one replayer of m does before copying: plan_build over
 * all metalogs, then its domain of epoch 0 (as pieces, or as runs). */
static double plan_one(const char *dir, uint32_t nw, uint32_t m, int runs, unsigned flags, int *compact,
                       struct count_ctx *c)
{
    char *paths[64];
    struct logfs_plan *p;
    struct logfs_error e;
    uint64_t lo, hi;
    for (uint32_t r = 0; r < nw; r++) {
        char name[32];
        snprintf(name, sizeof name, "benchplan%u.metalog", r);
        paths[r] = path_in(dir, name);
    }
    memset(c, 0, sizeof *c);
    double t0 = now();
    if (logfs_plan_build_flags((const char *const *)paths, nw, NULL, flags, &p, &e))
        die("plan_build", &e);
    int rc = runs ? logfs_plan_domain_runs(p, 0, 0, m, &lo, &hi, count_run, c)
                  : logfs_plan_domain(p, 0, 0, m, &lo, &hi, count_piece, c);
    if (rc)
        die("plan_domain", NULL);
    double t = now() - t0;
    *compact = logfs_plan_epoch_compact(p, 0);
    logfs_plan_free(p);
    for (uint32_t r = 0; r < nw; r++)
        free(paths[r]);
    return t;
}

static void bench_plan(const char *dir, size_t n, int reps)
{
    const uint32_t nw = 4;
    char *data = malloc(n * 8);
    struct count_ctx c;
    int compact;
    if (!data)
        die("malloc", NULL);
    memset(data, 0x3c, n * 8);
    for (int overlap = 0; overlap < 2; overlap++) {
        noncontig_logs(dir, nw, n, overlap, data);
        double tp = 1e30, tr = 1e30;
        struct count_ctx cp, cr;
        for (int r = 0; r < reps; r++) {
            tp = best(tp, plan_one(dir, nw, nw, 0, 0, &compact, &cp));
            tr = best(tr, plan_one(dir, nw, nw, 1, 0, &compact, &cr));
        }
        printf("replay plan, %u writers x %zu interleaved 8-byte pieces%s (%s): plan_build + plan_domain "
               "(replayer 0 of %u) %.3f s, %llu pieces; with plan_domain_runs %.3f s, %llu runs\n",
               nw, n, overlap ? " + 1 overlapping piece" : "", compact ? "compact" : "range map", nw, tp,
               (unsigned long long)cp.calls, tr, (unsigned long long)cr.calls);
        if (!overlap) {
            double ts = plan_one(dir, nw, nw, 0, LOGFS_PLAN_NO_COMPACT, &compact, &c);
            printf("  same logs forced through the range map: %.3f s\n", ts);
        }
    }
    for (uint32_t r = 0; r < nw; r++) {
        char name[32];
        snprintf(name, sizeof name, "benchplan%u", r);
        remove_logs(dir, name);
    }
    free(data);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void bench_rangemap(size_t n)
{
    struct logfs_rangemap *m;
    uint64_t seed = 88172645463325252ull;
    double t0, t_app, t_rand;

    if (logfs_rangemap_create(&m))
        die("rangemap", NULL);
    t0 = now();
    for (size_t i = 0; i < n; i++)
        logfs_rangemap_insert(m, i * 16, i * 16 + 8, (int32_t)(i & 7), i * 8);
    t_app = now() - t0;
    double per_app = (double)logfs_rangemap_memory(m) / (double)logfs_rangemap_count(m);
    size_t count_app = logfs_rangemap_count(m);
    logfs_rangemap_destroy(m);

    if (logfs_rangemap_create(&m))
        die("rangemap", NULL);
    t0 = now();
    for (size_t i = 0; i < n; i++) {
        uint64_t s = rng_next(&seed) % (n * 64);
        logfs_rangemap_insert(m, s, s + 1 + rng_next(&seed) % 48, (int32_t)(i & 7), rng_next(&seed));
    }
    t_rand = now() - t0;
    double per_rand = (double)logfs_rangemap_memory(m) / (double)logfs_rangemap_count(m);
    printf("range map: %zu appends %.2f M/s (%zu extents, %.1f B/extent); "
           "%zu random overlapping inserts %.2f M/s (%zu live extents, %.1f B/extent) "
           "(targets >= 1 M/s, <= 64 B)\n",
           n, n / t_app / 1e6, count_app, per_app, n, n / t_rand / 1e6, logfs_rangemap_count(m), per_rand);
    logfs_rangemap_destroy(m);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    size_t mib = 512, pieces = 1 << 20;
    int reps = 3, c;

    while ((c = getopt(argc, argv, "d:m:n:r:h")) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'm': mib = strtoull(optarg, NULL, 10); break;
        case 'n': pieces = strtoull(optarg, NULL, 10); break;
        case 'r': reps = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-d DIR] [-m MIB] [-n PIECES] [-r REPEATS]\n", argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    char *buf = malloc(65536);
    if (!buf)
        die("malloc", NULL);
    for (int i = 0; i < 65536; i++)
        buf[i] = (char)(i * 13);
    size_t total = mib << 20;
    printf("logfs-bench: dir %s, best of %d runs after a warm-up, alternating order\n", dir, reps);

    /* Warm-up: in a VM, page-cache pages the guest never touched are slow
     * the first time, so whichever side runs first on fresh memory loses.
     * One untimed run each, then alternate which side goes first. */
    plain_appends(dir, buf, total);
    logfs_appends(dir, buf, total);
    double tp = 1e30, tl = 1e30;
    for (int r = 0; r < reps; r++) {
        if (r % 2) {
            tl = best(tl, logfs_appends(dir, buf, total));
            tp = best(tp, plain_appends(dir, buf, total));
        } else {
            tp = best(tp, plain_appends(dir, buf, total));
            tl = best(tl, logfs_appends(dir, buf, total));
        }
    }
    printf("64 KiB appends, %zu MiB: write() loop %.0f MiB/s, logfs %.0f MiB/s = %.1f%% (target >= 90%%)\n", mib,
           mib / tp, mib / tl, 100.0 * tp / tl);

    double tw = 1e30, ts = 1e30, tsn = 1e30, ts1 = 1e30;
    uint64_t meta = 0, meta1 = 0;
    for (int r = 0; r < reps; r++) {
        tw = best(tw, pwrite_pieces(dir, pieces, 64));
        ts = best(ts, logfs_pieces(dir, pieces, 64, 4096, 1, &meta));
        tsn = best(tsn, logfs_pieces(dir, pieces, 64, 4096, 0, &meta));
        ts1 = best(ts1, logfs_pieces(dir, pieces, 64, pieces, 1, &meta1));
    }
    printf("8-byte pieces at stride 64, %zu pieces: pwrite per piece %.2f M/s; logfs %.2f M/s = %.1fx "
           "(index off: %.2f M/s = %.1fx) (target >= 5x)\n",
           pieces, pieces / tw / 1e6, pieces / ts / 1e6, tw / ts, pieces / tsn / 1e6, tw / tsn);
    printf("metalog size: %llu bytes for %zu calls of 4096 pieces; %llu bytes for one call of %zu pieces "
           "(%.2f M/s, %.1fx)\n",
           (unsigned long long)meta, (pieces + 4095) / 4096, (unsigned long long)meta1, pieces,
           pieces / ts1 / 1e6, tw / ts1);

    char *rundata = malloc(pieces * 8);
    if (!rundata)
        die("malloc", NULL);
    memset(rundata, 0x5a, pieces * 8);
    double tr = 1e30, trn = 1e30;
    for (int r = 0; r < reps + 1; r++) {
        tr = best(tr, logfs_run(dir, pieces, rundata, 1));
        trn = best(trn, logfs_run(dir, pieces, rundata, 0));
    }
    printf("add_run of %zu 8-byte blocks at stride 32: %.0f M blocks/s = %.2f GiB/s (index off: %.0f M blocks/s) "
           "(target >= 100 M blocks/s)\n",
           pieces, pieces / tr / 1e6, pieces * 8.0 / tr / (1 << 30), pieces / trn / 1e6);
    free(rundata);

    bench_plan(dir, pieces, reps);
    bench_rangemap(1000000);
    free(buf);
    return 0;
}
