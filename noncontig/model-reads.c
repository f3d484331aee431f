/*
 * model-reads — the consistency-models paper's read comparison: after a
 * write phase, every process reads ACCESSES blocks of SIZE bytes at random
 * from the other processes' data, one MPI_File_read_at each.  What differs
 * between the models is what a read costs:
 *
 *   session   the write phase ends with close; the reads follow an open
 *             (the view is asked for once, at the open).  No other handle
 *             is open, so that open replays the pending logs first and the
 *             reads are reads of the canonical file
 *   session, logs kept
 *             the same with a second handle of the file open throughout:
 *             the logs stay pending (the open may not replay them under a
 *             live handle), so the reads take the data path the other
 *             models take, and only the model's cost differs (the paper's
 *             comparison)
 *   mpiio     sync-barrier-sync, then the reads (asked once, lazily)
 *   commit    sync, barrier, then the reads (asked before every read)
 *   ufs:      stock ROMIO, sync-barrier-sync, for reference
 *
 * Run it across nodes (each node with its own BBFS_LOGDIR) to make every
 * bbfs mode read others' data through bbserver.  Modes alternate, REPEATS
 * times each, after a warm-up run of each; the table gives the median, min
 * and max of the slowest process's read-phase seconds, reads per second,
 * and each mode against commit.  Every read checks its bytes.
 *
 * usage: mpiexec -n 4 model-reads [-dir DIR] [-size BYTES] [-accesses M]
 *                                 [-blocks B] [-repeats R]
 *   -blocks: blocks each process writes (default 64), read back at random
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int rank, nprocs;

struct mode {
    const char *name, *prefix, *consistency;    /* consistency NULL: not bbfs */
    int reopen;                 /* close and open between the phases */
    int keep;                   /* hold another handle open throughout */
};

static const struct mode modes[] = {
    {"bbfs: session (close, open)", "bbfs:", "session", 1, 0},
    {"bbfs: session, logs kept", "bbfs:", "session", 1, 1},
    {"bbfs: mpiio (sync-barrier-sync)", "bbfs:", "mpiio", 0, 0},
    {"bbfs: commit (sync, barrier)", "bbfs:", "commit", 0, 0},
    {"ufs: (sync-barrier-sync)", "ufs:", NULL, 0, 0},
};
#define NMODES (int) (sizeof(modes) / sizeof(modes[0]))

static unsigned char pattern(long long off)
{
    return (unsigned char) (off * 131 + (off >> 12) + 7);
}

/* A failed call ends the run with its message: files return errors by
 * default, and every later run would fail the same way, slowly.  (Not
 * MPI_ERRORS_ARE_FATAL on MPI_FILE_NULL: MPICH 4.0.2's ROMIO then crashes
 * on the failed delete of a file that is not there.) */
static void check(int err, const char *what)
{
    bench_check(err, "model-reads", what);
}

/* One run; returns the slowest process's read-phase seconds, -1 on a wrong
 * byte. */
static double run(const struct mode *m, const char *dir, long size, int accesses, int blocks,
                  unsigned char *buf, unsigned seed)
{
    char name[4096];
    MPI_Info info;
    MPI_File fh, keeper = MPI_FILE_NULL;
    int bad = 0, allbad;
    double t0, t, tmax;
    long long region = (long long) size * blocks;

    snprintf(name, sizeof(name), "%s%s/model-reads.dat", m->prefix, dir);
    MPI_Info_create(&info);
    if (m->consistency) {
        MPI_Info_set(info, "bbfs_consistency", m->consistency);
        MPI_Info_set(info, "bbfs_replay", "never");     /* the reads are the subject */
    }
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "open");
    if (m->keep)
        check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &keeper), "open a second handle");
    for (int b = 0; b < blocks; b++) {
        long long off = region * rank + (long long) b * size;
        for (long i = 0; i < size; i++)
            buf[i] = pattern(off + i);
        check(MPI_File_write_at(fh, off, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    }
    if (m->reopen) {
        check(MPI_File_close(&fh), "close");
        check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh), "open again");
    } else {
        check(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        if (strcmp(m->consistency ? m->consistency : "", "commit") != 0)
            check(MPI_File_sync(fh), "sync");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int a = 0; a < accesses && !bad; a++) {
        int who = (rank + 1 + (int) (rand_r(&seed) % (unsigned) (nprocs - 1))) % nprocs;
        long long off = region * who + (long long) (rand_r(&seed) % (unsigned) blocks) * size;
        check(MPI_File_read_at(fh, off, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE), "read");
        for (long i = 0; i < size && !bad; i++)
            bad = buf[i] != pattern(off + i);
    }
    t = MPI_Wtime() - t0;
    check(MPI_File_close(&fh), "close");
    if (m->keep)
        check(MPI_File_close(&keeper), "close the second handle");
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);   /* (and the pending logs) */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_free(&info);
    return allbad ? -1 : tmax;
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";
    long size = 8192;
    int accesses = 200, blocks = 64, repeats = 5;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const struct bench_opt opts[] = {
        {"-dir", 's', &dir}, {"-size", 'l', &size}, {"-accesses", 'i', &accesses},
        {"-blocks", 'i', &blocks}, {"-repeats", 'i', &repeats},
    };
    if (bench_options(argc, argv, opts, 5) != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: model-reads [-dir DIR] [-size BYTES] [-accesses M] "
                    "[-blocks B] [-repeats R]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (size < 1 || size > (1 << 30) || accesses < 1 || blocks < 1 || repeats < 1
        || nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "model-reads: sizes, counts and repeats must be positive (size "
                    "at most 1 GiB), on 2 or more processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc((size_t) size);
    double *t = calloc((size_t) NMODES * repeats, sizeof(double));
    int failed = 0;

    memset(buf, 1, (size_t) size);
    for (int k = 0; k < NMODES; k++)    /* warm memory and each mode's paths */
        run(&modes[k], dir, size, accesses < 8 ? accesses : 8, blocks, buf, 1);
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < NMODES; k++) {
            bench_warm(dir, 256, MPI_COMM_WORLD);
            t[k * repeats + r] = run(&modes[k], dir, size, accesses, blocks, buf,
                                     (unsigned) (rank * 7919 + r * 104729 + 1));
            failed |= t[k * repeats + r] < 0;
        }
    if (rank == 0) {
        double commit_med = 0;
        struct bench_stat st[NMODES];
        for (int k = 0; k < NMODES; k++) {
            st[k] = bench_stat(t + k * repeats, repeats);
            if (!strcmp(modes[k].consistency ? modes[k].consistency : "", "commit"))
                commit_med = st[k].median;
        }
        printf("model-reads: %d processes, each %d random reads of %ld bytes from the others' "
               "data (%d blocks each), %d runs per mode\n", nprocs, accesses, size, blocks,
               repeats);
        printf("%-36s %9s %9s %9s %11s %10s\n", "mode", "median s", "min s", "max s",
               "reads/s", "vs commit");
        for (int k = 0; k < NMODES; k++) {
            double med = st[k].median;
            if (med < 0)
                printf("%-36s  WRONG DATA READ BACK\n", modes[k].name);
            else
                printf("%-36s %9.4f %9.4f %9.4f %11.0f %9.2fx\n", modes[k].name, med, st[k].min,
                       st[k].max, med > 0 ? (double) accesses * nprocs / med : 0,
                       med > 0 ? commit_med / med : 0.0);
        }
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return failed;
}
