/*
 * call-cost — what one MPI-IO call costs on bbfs: against stock ROMIO (ufs:)
 * in the same MPICH, call family by call family, with the collectives each
 * makes inside the library.
 *
 *   open      open (create) + 4 KiB write + close of a new shared file
 *   self      the same, one file per process on MPI_COMM_SELF
 *   rdonly    read-only open + 4 KiB read + close of a finished file
 *   coll8     open, 4096 write_at_all of 8 B (interleaved), close
 *   read8     8 B independent reads of canonical data (a finished file)
 *   own8      8 B independent reads of this process's own writes, same handle
 *   synced8   8 B independent reads of the next process's synced writes
 *   fresh8    8 B write, MPI_Barrier, 8 B read of the next process's new
 *             write (ordered by the barrier alone: bbfs's default model
 *             makes it visible; each read looks at the others' logs again)
 *   readall8  8 B read_at_all of canonical data
 *   sync      MPI_File_sync with nothing written since the last
 *   size      MPI_File_get_size
 *
 * Each case runs ITERS times in a timed loop (an iteration: the call or
 * the open-to-close sequence named above), the slowest process's time
 * divided by ITERS; bbfs: and ufs: alternate, REPEATS times each, after a
 * warm-up round.  The table gives the median, min and max microseconds per
 * iteration and bbfs's median against ufs:'s (above 1: bbfs costs more).
 *
 * The last column counts, on process 0 in one more iteration after the
 * timed ones (the first open of a process learns what later ones keep), the
 * collective calls and communicator dups the MPI library made inside
 * (ROMIO and the driver call PMPI_ entry points through the dynamic
 * linker: this program defines them, counts and passes each on).  Calls
 * the program itself makes are not counted.  With CALL_COST_TRACE set,
 * process 0 (CALL_COST_TRACE_RANK: that one) names each on stderr with the
 * function that made it.
 *
 * usage: mpiexec -n 4 call-cost [-dir DIR] [-repeats R] [-iters N]
 *                               [-cases open,self,...]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int rank, nprocs;
static long counted;            /* collectives the library made inside */
static int tracing;             /* CALL_COST_TRACE set: name each, and its caller */
static int traced_rank;         /* (CALL_COST_TRACE_RANK, else process 0) */
static int timing;              /* (inside the timed part of a run) */

/* Collectives on one process (MPI_COMM_SELF, the driver's own name
 * resolution on process 0) cost no communication: not counted. */
static int among_several(MPI_Comm c)
{
    int n = 0;
    PMPI_Comm_size(c, &n);
    return n > 1;
}

/* The caller as library and offset: addr2line -f -e LIB OFFSET names it
 * where the symbol is not exported; with the microseconds since the last
 * traced call ended (the library's own work between collectives, or the
 * program's) and inside this one (waiting for the others, mostly). */
static double traced_end;
static void trace(const char *name, void *from, double began)
{
    Dl_info di;
    double now = PMPI_Wtime();
    if (rank == traced_rank && timing && dladdr(from, &di))
        fprintf(stderr, "call-cost: %s from %s (%s +%#lx) after %.0f us, in it %.0f us\n", name,
                di.dli_sname ? di.dli_sname : "?", di.dli_fname,
                (unsigned long) ((char *) from - (char *) di.dli_fbase),
                (began - traced_end) * 1e6, (now - began) * 1e6);
    traced_end = now;
}

/* Each wrapper counts one call and passes it on to the library's own (every
 * wrapper names its communicator c). */
#define PASS_ON(ret, name, params, args) \
    ret name params \
    { \
        static ret (*real) params; \
        if (!real) \
            *(void **) &real = dlsym(RTLD_NEXT, #name); \
        if (!among_several(c)) \
            return real args; \
        counted++; \
        double began = tracing ? PMPI_Wtime() : 0; \
        ret rc = real args; \
        if (tracing) \
            trace(#name, __builtin_return_address(0), began); \
        return rc; \
    }

PASS_ON(int, PMPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                              MPI_Comm c), (s, r, n, t, op, c))
PASS_ON(int, PMPI_Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c),
        (b, n, t, root, c))
PASS_ON(int, PMPI_Barrier, (MPI_Comm c), (c))
PASS_ON(int, PMPI_Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn,
                              MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c))
PASS_ON(int, PMPI_Allgatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
                               const int *d, MPI_Datatype rt, MPI_Comm c),
        (s, sn, st, r, rn, d, rt, c))
PASS_ON(int, PMPI_Gather, (const void *s, int sn, MPI_Datatype st, void *r, int rn,
                           MPI_Datatype rt, int root, MPI_Comm c),
        (s, sn, st, r, rn, rt, root, c))
PASS_ON(int, PMPI_Gatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
                            const int *d, MPI_Datatype rt, int root, MPI_Comm c),
        (s, sn, st, r, rn, d, rt, root, c))
PASS_ON(int, PMPI_Scatter, (const void *s, int sn, MPI_Datatype st, void *r, int rn,
                            MPI_Datatype rt, int root, MPI_Comm c),
        (s, sn, st, r, rn, rt, root, c))
PASS_ON(int, PMPI_Alltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn,
                             MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c))
PASS_ON(int, PMPI_Alltoallv, (const void *s, const int *sn, const int *sd, MPI_Datatype st,
                              void *r, const int *rn, const int *rd, MPI_Datatype rt,
                              MPI_Comm c), (s, sn, sd, st, r, rn, rd, rt, c))
PASS_ON(int, PMPI_Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                           MPI_Comm c), (s, r, n, t, op, root, c))
PASS_ON(int, PMPI_Reduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t,
                                         MPI_Op op, MPI_Comm c), (s, r, n, t, op, c))
PASS_ON(int, PMPI_Scan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
        (s, r, n, t, op, c))
PASS_ON(int, PMPI_Exscan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                           MPI_Comm c), (s, r, n, t, op, c))
PASS_ON(int, PMPI_Comm_dup, (MPI_Comm c, MPI_Comm * d), (c, d))
PASS_ON(int, PMPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm * d),
        (c, color, key, d))

#define BLK 4096
#define SMALL 8
#define NSMALL 4096

struct ctx {
    const char *prefix;         /* "bbfs:" or "ufs:" */
    const char *dir;
    int iters;
    int round;                  /* fresh names each run */
    unsigned char *buf;
};

static void name_of(char *out, size_t n, const struct ctx *c, const char *what, int i)
{
    snprintf(out, n, "%s%s/cc-%s.%s%d.%d", c->prefix, c->dir, what, c->prefix[0] == 'b'
             ? "b" : "u", c->round, i);
}

static MPI_File open_or_die(MPI_Comm comm, const char *name, int amode)
{
    MPI_File fh;
    bench_check(MPI_File_open(comm, name, amode, MPI_INFO_NULL, &fh), "call-cost", name);
    return fh;
}

/* A file of NSMALL interleaved 8-byte elements per process (closed: with
 * bbfs's default hints the close made it canonical). */
static void make_small_file(const char *name, unsigned char *buf)
{
    MPI_File fh = open_or_die(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    for (int i = 0; i < NSMALL; i++)
        bench_check(MPI_File_write_at(fh, ((MPI_Offset) i * nprocs + rank) * SMALL,
                                      buf, SMALL, MPI_BYTE, MPI_STATUS_IGNORE),
                    "call-cost", "write");
    bench_check(MPI_File_close(&fh), "call-cost", "close");
}

static void small_reads(MPI_File fh, int of, int n, int coll, unsigned char *buf)
{
    for (int i = 0; i < n; i++) {
        MPI_Offset off = ((MPI_Offset) (i % NSMALL) * nprocs + of) * SMALL;
        bench_check(coll ? MPI_File_read_at_all(fh, off, buf, SMALL, MPI_BYTE,
                                                MPI_STATUS_IGNORE)
                    : MPI_File_read_at(fh, off, buf, SMALL, MPI_BYTE, MPI_STATUS_IGNORE),
                    "call-cost", "read");
    }
}

/* Each iteration writes a new value to this process's element i, and
 * after a barrier reads the next process's: the value it wrote in this
 * iteration, or the run stops with an error. */
static void fresh_reads(MPI_File fh, int next, int n, unsigned char *buf)
{
    for (int i = 0; i < n; i++) {
        MPI_Offset at = (MPI_Offset) (i % NSMALL) * nprocs;
        memset(buf, (unsigned char) (i * 7 + rank), SMALL);
        bench_check(MPI_File_write_at(fh, (at + rank) * SMALL, buf, SMALL, MPI_BYTE,
                                      MPI_STATUS_IGNORE), "call-cost", "write");
        MPI_Barrier(MPI_COMM_WORLD);
        bench_check(MPI_File_read_at(fh, (at + next) * SMALL, buf, SMALL, MPI_BYTE,
                                     MPI_STATUS_IGNORE), "call-cost", "read");
        if (buf[0] != (unsigned char) (i * 7 + next) || buf[SMALL - 1] != buf[0]) {
            fprintf(stderr, "call-cost: fresh8: process %d read %d, not the value %d that "
                    "process %d wrote before the barrier\n", rank, buf[0],
                    (unsigned char) (i * 7 + next), next);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

enum { OPEN, SELF, RDONLY, COLL8, READ8, OWN8, SYNCED8, FRESH8, READALL8, SYNC, SIZE, NCASES };
static const char *const case_names[NCASES] = {
    "open", "self", "rdonly", "coll8", "read8", "own8", "synced8", "fresh8", "readall8", "sync",
    "size"
};
static const char *const case_what[NCASES] = {
    "open + 4 KiB write + close, shared file",
    "open + 4 KiB write + close, MPI_COMM_SELF",
    "read-only open + 4 KiB read + close",
    "open, 4096 x 8 B write_at_all, close",
    "8 B read_at, canonical data",
    "8 B read_at, own writes",
    "8 B read_at, next process's synced writes",
    "8 B write, barrier, read of the next's",
    "8 B read_at_all, canonical data",
    "MPI_File_sync, nothing new",
    "MPI_File_get_size",
};

/* One run of case k: iters iterations timed (the slowest process's
 * seconds per iteration); the counted collectives of the timed part on
 * process 0 go to *coll. */
static double run(int k, struct ctx *c, long *coll)
{
    char name[4200];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset size;
    int n = c->iters, next = (rank + 1) % nprocs;
    double t0;
    long before;

    c->round++;
    /* set-up, not timed */
    if (k == RDONLY || k == READ8 || k == READALL8) {
        name_of(name, sizeof(name), c, case_names[k], 0);
        if (k == RDONLY) {
            fh = open_or_die(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY);
            bench_check(MPI_File_write_at(fh, (MPI_Offset) rank * BLK, c->buf, BLK, MPI_BYTE,
                                          MPI_STATUS_IGNORE), "call-cost", "write");
            bench_check(MPI_File_close(&fh), "call-cost", "close");
        } else {
            make_small_file(name, c->buf);
            fh = open_or_die(MPI_COMM_WORLD, name, MPI_MODE_RDONLY);
        }
    } else if (k == OWN8 || k == SYNCED8 || k == FRESH8 || k == SYNC || k == SIZE) {
        name_of(name, sizeof(name), c, case_names[k], 0);
        fh = open_or_die(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR);
        for (int i = 0; i < NSMALL; i++)
            bench_check(MPI_File_write_at(fh, ((MPI_Offset) i * nprocs + rank) * SMALL,
                                          c->buf, SMALL, MPI_BYTE, MPI_STATUS_IGNORE),
                        "call-cost", "write");
        bench_check(MPI_File_sync(fh), "call-cost", "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        bench_check(MPI_File_sync(fh), "call-cost", "sync");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    before = counted;
    timing = 1;
    t0 = traced_end = MPI_Wtime();
    switch (k) {
    case OPEN:
    case SELF:
        for (int i = 0; i < n; i++) {
            char p[4200];
            name_of(p, sizeof(p), c, case_names[k], k == SELF ? i * nprocs + rank : i);
            fh = open_or_die(k == SELF ? MPI_COMM_SELF : MPI_COMM_WORLD, p,
                             MPI_MODE_CREATE | MPI_MODE_WRONLY);
            bench_check(MPI_File_write_at(fh, k == SELF ? 0 : (MPI_Offset) rank * BLK, c->buf,
                                          BLK, MPI_BYTE, MPI_STATUS_IGNORE), "call-cost",
                        "write");
            bench_check(MPI_File_close(&fh), "call-cost", "close");
        }
        break;
    case RDONLY:
        for (int i = 0; i < n; i++) {
            fh = open_or_die(MPI_COMM_WORLD, name, MPI_MODE_RDONLY);
            bench_check(MPI_File_read_at(fh, (MPI_Offset) next * BLK, c->buf, BLK, MPI_BYTE,
                                         MPI_STATUS_IGNORE), "call-cost", "read");
            bench_check(MPI_File_close(&fh), "call-cost", "close");
        }
        break;
    case COLL8:
        for (int i = 0; i < n; i++) {
            char p[4200];
            name_of(p, sizeof(p), c, case_names[k], i);
            fh = open_or_die(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY);
            for (int j = 0; j < NSMALL; j++)
                bench_check(MPI_File_write_at_all(fh, ((MPI_Offset) j * nprocs + rank) * SMALL,
                                                  c->buf, SMALL, MPI_BYTE, MPI_STATUS_IGNORE),
                            "call-cost", "write_at_all");
            bench_check(MPI_File_close(&fh), "call-cost", "close");
        }
        break;
    case READ8:
    case SYNCED8:
        small_reads(fh, next, n, 0, c->buf);
        break;
    case OWN8:
        small_reads(fh, rank, n, 0, c->buf);
        break;
    case FRESH8:
        fresh_reads(fh, next, n, c->buf);
        break;
    case READALL8:
        small_reads(fh, next, n, 1, c->buf);
        break;
    case SYNC:
        for (int i = 0; i < n; i++)
            bench_check(MPI_File_sync(fh), "call-cost", "sync");
        break;
    case SIZE:
        for (int i = 0; i < n; i++)
            bench_check(MPI_File_get_size(fh, &size), "call-cost", "get_size");
        break;
    }
    *coll = counted - before;
    if (tracing && rank == traced_rank)
        fprintf(stderr, "call-cost: the end, %.0f us after the last, %.0f us in all\n",
                (MPI_Wtime() - traced_end) * 1e6, (MPI_Wtime() - t0) * 1e6);
    timing = 0;
    double t = bench_slowest(t0, MPI_COMM_WORLD) / n;
    MPI_Bcast(coll, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (fh != MPI_FILE_NULL)
        bench_check(MPI_File_close(&fh), "call-cost", "close");
    /* clean up, not timed */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int files = k == OPEN || k == COLL8 ? n : k == SELF ? n * nprocs : 1;
        for (int i = 0; i < files; i++) {
            name_of(name, sizeof(name), c, case_names[k], i);
            MPI_File_delete(name, MPI_INFO_NULL);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: call-cost [-dir DIR] [-repeats R] [-iters N] [-cases "
                "open,self,rdonly,coll8,read8,own8,synced8,fresh8,readall8,sync,size]\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp", *cases_s = NULL;
    int repeats = 7, iters = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &dir}, {"-repeats", 'i', &repeats}, {"-iters", 'i', &iters},
        {"-cases", 's', &cases_s},
    };
    int use[NCASES];
    if (bench_options(argc, argv, opts, 4) != 0 || repeats < 1 || iters < 0
        || bench_choose(cases_s, case_names, NCASES, use) < 1)
        usage();
    /* iterations per run: the open-to-close cases are long, the reads short */
    static const int default_iters[NCASES] = { 20, 20, 20, 1, 4096, 4096, 4096, 512, 512, 200, 200 };
    struct ctx ctx[2] = {{"ufs:", dir, 0, 0, NULL}, {"bbfs:", dir, 0, 0, NULL}};
    unsigned char *buf = malloc(BLK);
    memset(buf, 0x5a, BLK);
    double *t = calloc((size_t) NCASES * 2 * repeats, sizeof(double));
    long coll[NCASES][2];

    bench_warm(dir, 64, MPI_COMM_WORLD);
    if (rank == 0)
        printf("call-cost: %d processes, %d runs of each case in each mode, alternating "
               "(microseconds per iteration, the slowest process's)\n", nprocs, repeats);
    for (int k = 0; k < NCASES; k++) {
        if (!use[k])
            continue;
        for (int m = 0; m < 2; m++) {
            long unused;
            ctx[m].iters = 1;
            ctx[m].buf = buf;
            run(k, &ctx[m], &unused);   /* warm-up */
            ctx[m].iters = iters ? iters : default_iters[k];
        }
        for (int r = 0; r < repeats; r++)
            for (int m = 0; m < 2; m++) {
                long unused;
                t[(k * 2 + m) * repeats + r] = run(k, &ctx[m], &unused) * 1e6;
            }
        /* the count, in the steady state: the first open of a process
         * learns what later ones keep (ROMIO's host names, bbfs's log
         * directory probe) */
        for (int m = 0; m < 2; m++) {
            int timed = ctx[m].iters;
            ctx[m].iters = 1;
            tracing = getenv("CALL_COST_TRACE") != NULL;
            traced_rank = getenv("CALL_COST_TRACE_RANK") ? atoi(getenv("CALL_COST_TRACE_RANK")) : 0;
            if (tracing && rank == traced_rank)
                fprintf(stderr, "call-cost: %s on %s\n", case_names[k], ctx[m].prefix);
            run(k, &ctx[m], &coll[k][m]);
            tracing = 0;
            ctx[m].iters = timed;
        }
        if (rank == 0) {
            struct bench_stat s[2];
            for (int m = 0; m < 2; m++)
                s[m] = bench_stat(t + (k * 2 + m) * repeats, repeats);
            printf("%-9s %-42s ufs: %9.1f (%.1f-%.1f)  bbfs: %9.1f (%.1f-%.1f)  %5.2fx   "
                   "collectives %ld vs %ld\n", case_names[k], case_what[k], s[0].median,
                   s[0].min, s[0].max, s[1].median, s[1].min, s[1].max,
                   s[0].median > 0 ? s[1].median / s[0].median : 0.0, coll[k][1], coll[k][0]);
            fflush(stdout);
        }
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
