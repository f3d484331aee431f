/*
 * model-cost — what bbfs_consistency costs a program that reads back what
 * other processes wrote, HDF5-style: STEPS rounds, each a collective write
 * of this process's interleaved elements (write_at_all through a vector
 * view) and a collective read of the next process's elements (read_at_all).
 * Every read checks its bytes, so a model that shows stale data fails.
 *
 *   mpiio       sync, barrier, sync between the write and the read (what
 *               MPI-IO requires of a correct program)
 *   collective  nothing between: every collective call makes earlier
 *               writes visible (bbfs_consistency collective)
 *   posix       nothing between: every write is visible (bbfs_consistency
 *               posix)
 *   causal      nothing between, default hints: the collective calls'
 *               own synchronization orders the read after the writes
 *               (bbfs_consistency causal, the default)
 *   ufs:        stock ROMIO, with the same sync-barrier-sync as mpiio
 *
 * Modes alternate, REPEATS times each, after a warm-up round that touches
 * the memory; the table gives the median, min and max seconds of the open
 * to close time of the slowest process, and the median against ufs:.
 *
 * usage: mpiexec -n 4 model-cost [-dir DIR] [-elmtsize B] [-veclen N]
 *                                [-steps S] [-repeats R]
 *                                [-modes ufs,mpiio,collective,posix,causal]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int rank, nprocs;

struct mode {
    const char *key;            /* -modes */
    const char *name;
    const char *prefix;
    const char *consistency;    /* NULL: not bbfs */
    int sync;                   /* sync-barrier-sync before each read */
};

static const struct mode modes[] = {
    {"ufs", "ufs: sync-barrier-sync", "ufs:", NULL, 1},
    {"mpiio", "bbfs: mpiio, sync-barrier-sync", "bbfs:", "mpiio", 1},
    {"collective", "bbfs: collective, no sync", "bbfs:", "collective", 0},
    {"posix", "bbfs: posix, no sync", "bbfs:", "posix", 0},
    {"causal", "bbfs: default (causal), no sync", "bbfs:", NULL, 0},
};
#define NMODES (int) (sizeof(modes) / sizeof(modes[0]))

static unsigned char pattern(long long off, int step)
{
    return (unsigned char) (off * 31 + step * 7 + 1);
}

/* One run: open, STEPS write/read rounds, close.  Returns the slowest
 * process's seconds, or -1 on a wrong byte. */
static double run(const struct mode *m, const char *dir, int elmt, long veclen, int steps,
                  unsigned char *buf)
{
    char name[4096];
    MPI_Info info;
    MPI_File fh;
    MPI_Datatype vec;
    int bad = 0, allbad;
    double t0, t, tmax;
    int next = (rank + 1) % nprocs;

    snprintf(name, sizeof(name), "%s%s/model-cost.dat", m->prefix, dir);
    MPI_Info_create(&info);
    if (m->consistency)
        MPI_Info_set(info, "bbfs_consistency", m->consistency);
    MPI_Type_vector((int) veclen, elmt, elmt * nprocs, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    bench_check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                "model-cost", "open");
    for (int s = 0; s < steps; s++) {
        MPI_Offset base = (MPI_Offset) s * veclen * elmt * nprocs;
        for (long i = 0; i < veclen; i++)
            for (int b = 0; b < elmt; b++)
                buf[i * elmt + b] = pattern(base + (i * nprocs + rank) * elmt + b, s);
        MPI_File_set_view(fh, base + (MPI_Offset) rank * elmt, MPI_BYTE, vec, "native", info);
        bench_check(MPI_File_write_at_all(fh, 0, buf, (int) (veclen * elmt), MPI_BYTE,
                                          MPI_STATUS_IGNORE), "model-cost", "write");
        if (m->sync) {
            bench_check(MPI_File_sync(fh), "model-cost", "sync");
            MPI_Barrier(MPI_COMM_WORLD);
            bench_check(MPI_File_sync(fh), "model-cost", "sync");
        }
        MPI_File_set_view(fh, base + (MPI_Offset) next * elmt, MPI_BYTE, vec, "native", info);
        memset(buf, 0, (size_t) (veclen * elmt));
        bench_check(MPI_File_read_at_all(fh, 0, buf, (int) (veclen * elmt), MPI_BYTE,
                                         MPI_STATUS_IGNORE), "model-cost", "read");
        for (long i = 0; i < veclen && !bad; i++)
            for (int b = 0; b < elmt; b++)
                if (buf[i * elmt + b] != pattern(base + (i * nprocs + next) * elmt + b, s))
                    bad = 1;
    }
    bench_check(MPI_File_close(&fh), "model-cost", "close");
    t = MPI_Wtime() - t0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Type_free(&vec);
    MPI_Info_free(&info);
    return allbad ? -1 : tmax;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: model-cost [-dir DIR] [-elmtsize B] [-veclen N] [-steps S] "
                "[-repeats R] [-modes ufs,mpiio,collective,posix,causal]\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";
    int elmt = 8, steps = 16, repeats = 5;
    long veclen = 16384;
    const char *modes_s = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &dir}, {"-elmtsize", 'i', &elmt}, {"-veclen", 'l', &veclen},
        {"-steps", 'i', &steps}, {"-repeats", 'i', &repeats}, {"-modes", 's', &modes_s},
    };
    if (bench_options(argc, argv, opts, 6) != 0)
        usage();
    const char *keys[NMODES];
    int use[NMODES];
    for (int k = 0; k < NMODES; k++)
        keys[k] = modes[k].key;
    if (bench_choose(modes_s, keys, NMODES, use) < 1)
        usage();
    if (elmt < 1 || veclen < 1 || steps < 1 || repeats < 1) {
        if (rank == 0)
            fprintf(stderr, "model-cost: sizes, steps and repeats must be positive\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc((size_t) (veclen * elmt));
    double *t = calloc((size_t) NMODES * repeats, sizeof(double));
    int failed = 0;

    memset(buf, 1, (size_t) (veclen * elmt));   /* warm the buffer's pages */
    for (int k = 0; k < NMODES; k++)            /* and each mode's code paths */
        if (use[k])
            run(&modes[k], dir, elmt, veclen, 1, buf);
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < NMODES; k++) {
            if (!use[k])
                continue;
            bench_warm(dir, 256, MPI_COMM_WORLD);
            t[k * repeats + r] = run(&modes[k], dir, elmt, veclen, steps, buf);
            failed |= t[k * repeats + r] < 0;
        }
    if (rank == 0) {
        double ufs_med = 0;
        printf("model-cost: %d processes, %d steps of a %d-byte x %ld interleaved write_at_all "
               "and a read_at_all of the next process's elements (%.1f MiB per step), %d runs "
               "each\n", nprocs, steps, elmt, veclen,
               (double) elmt * veclen * nprocs / 1048576.0, repeats);
        printf("%-34s %9s %9s %9s %10s\n", "mode", "median s", "min s", "max s", "vs ufs:");
        for (int k = 0; k < NMODES; k++) {
            if (!use[k])
                continue;
            struct bench_stat st = bench_stat(t + k * repeats, repeats);
            if (k == 0)
                ufs_med = st.median;
            if (st.median < 0)
                printf("%-34s  WRONG DATA READ BACK\n", modes[k].name);
            else
                printf("%-34s %9.4f %9.4f %9.4f %9.2fx\n", modes[k].name, st.median, st.min,
                       st.max, st.median > 0 && ufs_med > 0 ? ufs_med / st.median : 0.0);
        }
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return failed;
}
