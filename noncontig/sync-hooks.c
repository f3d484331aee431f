/*
 * sync-hooks — what MPI's synchronization hooks (bbfs_consistency causal,
 * adio/mpich-patches/mpich-sync-hooks.patch) cost the MPI calls they sit
 * in: an 8-byte ping-pong (ranks 0 and 1, 2 and 3, ...) and an 8-byte
 * MPI_Allreduce on all processes, ITERS times each, in three states:
 *
 *   idle      no bbfs file open: each hook is a load and a branch
 *   open      a causal bbfs file open, nothing written: each receive and
 *             collective counts an acquire (a call)
 *   written   the same, and a 64-byte write before every message: each
 *             send and collective first releases it (the log tail flushed)
 *
 * States alternate, REPEATS times each, after a warm-up; the table gives
 * the median (min, max) microseconds per operation on rank 0.  Run it
 * with the MPICH whose libmpi has no hooks too (LD_LIBRARY_PATH) to
 * compare idle with no hooks at all (docs/benchmarks.md).
 *
 * usage: mpiexec -n 4 sync-hooks [-dir DIR] [-iters N] [-repeats R]
 *                                [-states idle,open,written]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"


enum { IDLE, OPEN, WRITTEN, NSTATES };
static const char *const state_names[] = { "idle", "open", "written" };
static int rank, nprocs;

/* Microseconds per round trip (ping-pong) and per allreduce. */
static void run(int state, const char *dir, int iters, double *pp, double *ar)
{
    char name[4200];
    MPI_File fh = MPI_FILE_NULL;
    char piece[64];
    double x = 1, y;
    int peer = rank ^ 1;

    memset(piece, rank + 1, sizeof(piece));
    if (state != IDLE) {
        snprintf(name, sizeof(name), "bbfs:%s/sync-hooks.dat", dir);
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh);
    }
    MPI_Offset at = (MPI_Offset) rank * sizeof(piece);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (peer >= nprocs)
            break;
        if (state == WRITTEN)
            MPI_File_write_at(fh, at, piece, sizeof(piece), MPI_BYTE, MPI_STATUS_IGNORE);
        if (rank & 1) {
            MPI_Recv(&y, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&x, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
        } else {
            MPI_Send(&x, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&y, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    *pp = (MPI_Wtime() - t0) / iters * 1e6;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (state == WRITTEN)
            MPI_File_write_at(fh, at, piece, sizeof(piece), MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    *ar = (MPI_Wtime() - t0) / iters * 1e6;
    if (fh != MPI_FILE_NULL) {
        MPI_File_close(&fh);
        if (rank == 0)
            MPI_File_delete(name, MPI_INFO_NULL);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *dir = ".", *states_arg = "idle,open,written";
    int iters = 20000, repeats = 5;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &dir}, {"-iters", 'i', &iters}, {"-repeats", 'i', &repeats},
        {"-states", 's', &states_arg},
    };
    if (bench_options(argc, argv, opts, 4) != 0 || nprocs < 2 || iters < 1 || repeats < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 4 sync-hooks [-dir DIR] [-iters N] "
                    "[-repeats R] [-states idle,open,written]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int on[NSTATES] = { 0 };
    for (int s = 0; s < NSTATES; s++)
        on[s] = strstr(states_arg, state_names[s]) != NULL;
    double *pp = calloc((size_t) (NSTATES * repeats), sizeof(double));
    double *ar = calloc((size_t) (NSTATES * repeats), sizeof(double));
    double skip_pp, skip_ar;
    run(IDLE, dir, iters / 10 + 1, &skip_pp, &skip_ar);        /* warm-up */
    for (int r = 0; r < repeats; r++)
        for (int s = 0; s < NSTATES; s++)
            if (on[s])
                run(s, dir, iters, &pp[s * repeats + r], &ar[s * repeats + r]);
    if (rank == 0) {
        printf("sync-hooks: %d processes, %d iterations, %d repeats; microseconds per "
               "operation on rank 0, median (min-max)\n", nprocs, iters, repeats);
        printf("%-8s %-26s %-26s\n", "state", "8 B ping-pong round trip", "8 B allreduce");
        for (int s = 0; s < NSTATES; s++) {
            if (!on[s])
                continue;
            double *a = pp + s * repeats, *b = ar + s * repeats;
            qsort(a, (size_t) repeats, sizeof(double), by_value);
            qsort(b, (size_t) repeats, sizeof(double), by_value);
            char x[64], y[64];
            snprintf(x, sizeof(x), "%.2f (%.2f-%.2f)", a[repeats / 2], a[0], a[repeats - 1]);
            snprintf(y, sizeof(y), "%.2f (%.2f-%.2f)", b[repeats / 2], b[0], b[repeats - 1]);
            printf("%-8s %-26s %-26s\n", state_names[s], x, y);
        }
    }
    free(pp);
    free(ar);
    MPI_Finalize();
    return 0;
}
