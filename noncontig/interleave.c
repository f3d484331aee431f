/*
 * interleave — writes and MPI messages interleaved, as a simulation does:
 * ROUNDS rounds, each process writing WRITES small pieces of its own (ELMT
 * bytes each, interleaved with the others' in the file; one by default,
 * more for a step that writes several variables or cells between two
 * messages), then one 8-byte MPI_Allreduce
 * (or, -exchange neighbour, an MPI_Sendrecv with each neighbour); every
 * READ_EVERY rounds each process reads the next process's latest piece and
 * checks it, so a mode that shows stale data fails.
 *
 *   causal   bbfs: default hints: the allreduce is the synchronization
 *   mpiio    bbfs_consistency mpiio, with the syncs it needs to be right:
 *            sync, allreduce, sync before each read round
 *   posix    bbfs_consistency posix: every write flushed (and, across
 *            nodes, put in the map), every read looks
 *   ufs      stock ROMIO, with mpiio's syncs
 *
 * Modes alternate, REPEATS times each, after a warm-up; the table gives the
 * median (min-max) seconds of the slowest process from open to close, and
 * each mode against causal.
 *
 * usage: mpiexec -n 4 interleave [-dir DIR] [-elmtsize B] [-rounds N]
 *                                [-writes W] [-read-every K] [-repeats R]
 *                                [-exchange allreduce|neighbour]
 *                                [-modes causal,mpiio,posix,ufs]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int rank, nprocs;

struct mode {
    const char *key, *prefix, *consistency;     /* consistency NULL: not bbfs */
    int sync;                                   /* sync, exchange, sync before reads */
};

static const struct mode modes[] = {
    {"causal", "bbfs:", NULL, 0},
    {"mpiio", "bbfs:", "mpiio", 1},
    {"posix", "bbfs:", "posix", 0},
    {"ufs", "ufs:", NULL, 1},
};
#define NMODES (int) (sizeof(modes) / sizeof(modes[0]))

static unsigned char pattern(long long off, int round)
{
    return (unsigned char) (off * 13 + round * 5 + 1);
}

static void exchange(int neighbour)
{
    double x = rank, y = 0, z = 0;
    if (!neighbour) {
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return;
    }
    int up = (rank + 1) % nprocs, down = (rank + nprocs - 1) % nprocs;
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, up, 1, &y, 1, MPI_DOUBLE, down, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, down, 2, &z, 1, MPI_DOUBLE, up, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* One run: the slowest process's seconds, or -1 on a wrong byte. */
static double run(const struct mode *m, const char *dir, int elmt, int rounds, int writes,
                  int every, int neighbour, unsigned char *buf)
{
    char name[4200];
    MPI_Info info;
    MPI_File fh;
    int bad = 0, allbad, next = (rank + 1) % nprocs;

    snprintf(name, sizeof(name), "%s%s/interleave.dat", m->prefix, dir);
    MPI_Info_create(&info);
    if (m->consistency)
        MPI_Info_set(info, "bbfs_consistency", m->consistency);
    MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    bench_check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                "interleave", "open");
    for (int r = 0; r < rounds; r++) {
        for (int w = 0; w < writes; w++) {
            MPI_Offset at = (((MPI_Offset) r * writes + w) * nprocs + rank) * elmt;
            for (int b = 0; b < elmt; b++)
                buf[b] = pattern(at + b, r);
            bench_check(MPI_File_write_at(fh, at, buf, elmt, MPI_BYTE, MPI_STATUS_IGNORE),
                        "interleave", "write");
        }
        int reads = (r + 1) % every == 0;
        if (reads && m->sync)
            bench_check(MPI_File_sync(fh), "interleave", "sync");
        exchange(neighbour);
        if (!reads)
            continue;
        if (m->sync)
            bench_check(MPI_File_sync(fh), "interleave", "sync");
        MPI_Offset theirs = (((MPI_Offset) r * writes + writes - 1) * nprocs + next) * elmt;
        memset(buf, 0, (size_t) elmt);
        bench_check(MPI_File_read_at(fh, theirs, buf, elmt, MPI_BYTE, MPI_STATUS_IGNORE),
                    "interleave", "read");
        for (int b = 0; b < elmt && !bad; b++)
            bad = buf[b] != pattern(theirs + b, r);
    }
    bench_check(MPI_File_close(&fh), "interleave", "close");
    double t = bench_slowest(t0, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Info_free(&info);
    return allbad ? -1 : t;
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp", *modes_s = NULL, *ex = "allreduce";
    int elmt = 64, rounds = 2000, writes = 1, every = 10, repeats = 5;
    const char *const names[NMODES] = { "causal", "mpiio", "posix", "ufs" };
    int chosen[NMODES];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &dir}, {"-elmtsize", 'i', &elmt}, {"-rounds", 'i', &rounds},
        {"-writes", 'i', &writes}, {"-read-every", 'i', &every}, {"-repeats", 'i', &repeats},
        {"-exchange", 's', &ex}, {"-modes", 's', &modes_s},
    };
    int bad_args = bench_options(argc, argv, opts, 8) != 0;
    int neighbour = !strcmp(ex, "neighbour");
    if (bad_args || elmt < 1 || rounds < 1 || writes < 1 || every < 1 || repeats < 1 || nprocs < 2
        || (!neighbour && strcmp(ex, "allreduce"))
        || bench_choose(modes_s, names, NMODES, chosen) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 4 interleave [-dir DIR] [-elmtsize B] "
                    "[-rounds N] [-writes W] [-read-every K] [-repeats R] [-exchange allreduce|neighbour] "
                    "[-modes causal,mpiio,posix,ufs]\n");
        MPI_Finalize();
        return 2;
    }
    unsigned char *buf = malloc((size_t) elmt);
    double *t = calloc((size_t) (NMODES * repeats), sizeof(double));
    bench_warm(dir, 64, MPI_COMM_WORLD);
    for (int m = 0; m < NMODES; m++)       /* warm-up: one short run of each */
        if (chosen[m])
            run(&modes[m], dir, elmt, rounds / 10 + 1, writes, every, neighbour, buf);
    for (int r = 0; r < repeats; r++)
        for (int m = 0; m < NMODES; m++)
            if (chosen[m])
                t[m * repeats + r] = run(&modes[m], dir, elmt, rounds, writes, every, neighbour,
                                         buf);
    if (rank == 0) {
        struct bench_stat base = bench_stat(t, repeats);
        printf("interleave: %d processes on %d node(s), %d rounds of %d %d-byte write(s) and "
               "an %s, reads every %d rounds; %d repeats\n", nprocs, bench_nodes(MPI_COMM_WORLD),
               rounds, writes, elmt, neighbour ? "exchange with both neighbours" : "8-byte allreduce",
               every, repeats);
        printf("%-8s %-28s %s\n", "mode", "seconds, median (min-max)", "against causal");
        for (int m = 0; m < NMODES; m++) {
            if (!chosen[m])
                continue;
            struct bench_stat s = bench_stat(t + m * repeats, repeats);
            char col[64];
            snprintf(col, sizeof(col), "%.3f (%.3f-%.3f)", s.median, s.min, s.max);
            if (s.median < 0)
                printf("%-8s %-28s %s\n", names[m], "FAILED: stale data", "");
            else if (chosen[0] && base.median > 0)
                printf("%-8s %-28s %.2fx\n", names[m], col, s.median / base.median);
            else
                printf("%-8s %s\n", names[m], col);
        }
    } else
        bench_nodes(MPI_COMM_WORLD);
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
