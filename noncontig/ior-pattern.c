/*
 * ior-pattern — IOR's access patterns on bbfs: against stock ROMIO (ufs:) in
 * the same MPICH.  IOR is not packaged in Debian; this makes the calls an
 * IOR run of the same parameters makes (segments of one block per process,
 * each block written and then read back in transfers of t bytes, one
 * open-to-close phase each), so that its figures can be set against stock
 * ROMIO here, like with like.
 *
 *   fpp-4k   -F -t 4k -b 1m: a file per process on MPI_COMM_SELF
 *   fpp-8    -F -t 8 -b 32k: the same with 8-byte transfers
 *   ind-8    -t 8 -b 32k: one shared file, independent calls
 *   coll-8   -c -t 8 -b 32k: one shared file, write_at_all / read_at_all
 *
 * Offsets as IOR's: in a shared file, transfer i of process r in segment s
 * is at s*P*b + r*b + i*t; in a file per process, at s*b + i*t.  The write
 * phase runs from the open through the close (with bbfs's default hints the
 * close makes the file canonical), the read phase from a read-only open
 * through its close; each process reads back its own block, as IOR does
 * without -C, and checks every byte.  Times are the slowest process's; ufs:
 * and bbfs: alternate, -repeats times each, after a warm-up round and with
 * memory warmed (bench.h).  The table gives MB/s (median, min-max) and
 * bbfs's median against ufs:'s (above 1: bbfs is faster).
 *
 * usage: mpiexec -n 4 ior-pattern [-dir DIR] [-repeats R] [-segments S]
 *                                 [-cases fpp-4k,fpp-8,ind-8,coll-8]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int rank, nprocs;

enum { FPP_4K, FPP_8, IND_8, COLL_8, NCASES };
static const char *const case_names[NCASES] = { "fpp-4k", "fpp-8", "ind-8", "coll-8" };
static const struct pattern {
    long long t, b;             /* transfer and block sizes */
    int fpp, coll;              /* -F, -c */
    const char *ior;            /* the IOR options it stands for */
} patterns[NCASES] = {
    {4096, 1 << 20, 1, 0, "-F -t 4k -b 1m"},
    {8, 32 << 10, 1, 0, "-F -t 8 -b 32k"},
    {8, 32 << 10, 0, 0, "-t 8 -b 32k"},
    {8, 32 << 10, 0, 1, "-c -t 8 -b 32k"},
};

/* The byte at offset off of process r's data: every transfer differs. */
static unsigned char byte_at(long long off, int r)
{
    return (unsigned char) (off * 131 + r * 29 + off / 4096);
}

static MPI_Offset offset_of(const struct pattern *p, int seg, long long i)
{
    return p->fpp ? (MPI_Offset) seg * p->b + i * p->t
        : ((MPI_Offset) seg * nprocs + rank) * p->b + i * p->t;
}

/* This process's file of pattern p in round `round` (its own with -F). */
static void name_of(char *out, size_t len, const struct pattern *p, const char *prefix,
                    const char *dir, int round)
{
    snprintf(out, len, "%s%s/ior-%s.%d.%d", prefix, dir, prefix[0] == 'b' ? "b" : "u", round,
             p->fpp ? rank : 0);
}

/* One phase (write or read) of pattern p in the file of the prefix; the
 * slowest process's seconds. */
static double phase(const struct pattern *p, const char *prefix, const char *dir, int round,
                    int segments, int reading, unsigned char *buf)
{
    char name[4200];
    MPI_File fh;
    long long n = p->b / p->t;

    name_of(name, sizeof(name), p, prefix, dir, round);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    bench_check(MPI_File_open(p->fpp ? MPI_COMM_SELF : MPI_COMM_WORLD, name,
                              reading ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_WRONLY,
                              MPI_INFO_NULL, &fh), "ior-pattern", name);
    for (int s = 0; s < segments; s++)
        for (long long i = 0; i < n; i++) {
            MPI_Offset off = offset_of(p, s, i);
            unsigned char *at = buf + ((long long) s * p->b + i * p->t);
            int err;
            if (reading)
                err = p->coll ? MPI_File_read_at_all(fh, off, at, (int) p->t, MPI_BYTE,
                                                     MPI_STATUS_IGNORE)
                    : MPI_File_read_at(fh, off, at, (int) p->t, MPI_BYTE, MPI_STATUS_IGNORE);
            else
                err = p->coll ? MPI_File_write_at_all(fh, off, at, (int) p->t, MPI_BYTE,
                                                      MPI_STATUS_IGNORE)
                    : MPI_File_write_at(fh, off, at, (int) p->t, MPI_BYTE, MPI_STATUS_IGNORE);
            bench_check(err, "ior-pattern", reading ? "read" : "write");
        }
    bench_check(MPI_File_close(&fh), "ior-pattern", "close");
    return bench_slowest(t0, MPI_COMM_WORLD);
}

static void fill(const struct pattern *p, int segments, unsigned char *buf)
{
    for (int s = 0; s < segments; s++)
        for (long long j = 0; j < p->b; j++)
            buf[(long long) s * p->b + j] = byte_at(offset_of(p, s, 0) + j, rank);
}

/* Every byte read back is the one written, or the run stops. */
static void check(const struct pattern *p, const char *prefix, int segments,
                  const unsigned char *buf)
{
    for (int s = 0; s < segments; s++)
        for (long long j = 0; j < p->b; j++) {
            long long off = offset_of(p, s, 0) + j;
            if (buf[(long long) s * p->b + j] != byte_at(off, rank)) {
                fprintf(stderr, "ior-pattern: %s on %s: process %d read %d at offset %lld, "
                        "not the %d it wrote\n", p->ior, prefix, rank,
                        buf[(long long) s * p->b + j], off, byte_at(off, rank));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
}

static void remove_files(const struct pattern *p, const char *prefix, const char *dir,
                         int round)
{
    char name[4200];
    MPI_Barrier(MPI_COMM_WORLD);
    if (p->fpp || rank == 0) {
        name_of(name, sizeof(name), p, prefix, dir, round);
        MPI_File_delete(name, MPI_INFO_NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: ior-pattern [-dir DIR] [-repeats R] [-segments S] "
                "[-cases fpp-4k,fpp-8,ind-8,coll-8]\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp", *cases_s = NULL;
    const char *const prefixes[2] = { "ufs:", "bbfs:" };
    int repeats = 5, segments = 2, round = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &dir}, {"-repeats", 'i', &repeats}, {"-segments", 'i', &segments},
        {"-cases", 's', &cases_s},
    };
    int use[NCASES];
    if (bench_options(argc, argv, opts, 4) != 0 || repeats < 1 || segments < 1
        || bench_choose(cases_s, case_names, NCASES, use) < 1)
        usage();

    bench_warm(dir, 64, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ior-pattern: %d processes, %d segments, %d runs of each case in each mode, "
               "alternating (MB/s of all processes' data, the slowest process's time; "
               "ratio above 1: bbfs faster)\n", nprocs, segments, repeats);
    for (int k = 0; k < NCASES; k++) {
        if (!use[k])
            continue;
        const struct pattern *p = &patterns[k];
        size_t bytes = (size_t) segments * (size_t) p->b;
        unsigned char *want = malloc(bytes), *got = malloc(bytes);
        double *t = calloc((size_t) 4 * repeats, sizeof(double)), mb =
            (double) bytes * nprocs / 1e6;
        fill(p, segments, want);
        for (int r = -1; r < repeats; r++)     /* (r = -1: the warm-up round) */
            for (int m = 0; m < 2; m++) {
                round++;
                double w = phase(p, prefixes[m], dir, round, segments, 0, want);
                memset(got, 0, bytes);
                double rd = phase(p, prefixes[m], dir, round, segments, 1, got);
                check(p, prefixes[m], segments, got);
                remove_files(p, prefixes[m], dir, round);
                if (r >= 0) {
                    t[(0 * 2 + m) * repeats + r] = mb / w;
                    t[(1 * 2 + m) * repeats + r] = mb / rd;
                }
            }
        if (rank == 0)
            for (int ph = 0; ph < 2; ph++) {
                struct bench_stat s[2];
                for (int m = 0; m < 2; m++)
                    s[m] = bench_stat(t + (ph * 2 + m) * repeats, repeats);
                printf("%-7s %-5s %-16s ufs: %8.2f (%.2f-%.2f)  bbfs: %8.2f (%.2f-%.2f)  "
                       "%6.2fx\n", case_names[k], ph ? "read" : "write", p->ior, s[0].median,
                       s[0].min, s[0].max, s[1].median, s[1].min, s[1].max,
                       s[0].median > 0 ? s[1].median / s[0].median : 0.0);
            }
        if (rank == 0)
            fflush(stdout);
        free(want);
        free(got);
        free(t);
    }
    MPI_Finalize();
    return 0;
}
