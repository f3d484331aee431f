/*
 * workloads — the consistency-models paper's synthetic workloads (Wang,
 * Mohror, Snir; Tables 7-8 and the deep-learning case), N processes on one
 * shared file, under every bbfs_consistency and stock ROMIO:
 *
 *   cn-w  every process writes m accesses of s bytes, contiguously (N-to-1)
 *   sn-w  the same accesses strided: access i of process r at (i N + r) s
 *   cc-r  the first half writes as cn-w; after the sync point the second
 *         half reads one writer's region each, contiguously
 *   cs-r  the same writes; the readers read strided, across every writer
 *   dl    every process preloads -samples samples of -dlsize bytes, then
 *         reads m samples chosen at random from everyone's
 *
 * Modes: bbfs: with bbfs_consistency mpiio (sync-barrier-sync), session
 * (close, then open for the reads), commit (writers sync, barrier), posix
 * (barrier) and collective (one MPI_File_sync), all with independent calls
 * and bbfs_replay=never (the logs are the burst buffer, as in the paper);
 * ufs: independent and collective (write_at_all / read_at_all, processes
 * without an access take part with none), sync-barrier-sync.
 *
 * A phase's time runs from its start (the open, for writes) through its
 * sync point, the slowest process counts; modes alternate in a rotated
 * order each round, -repeat rounds, with -warm MiB written and deleted
 * before each run (bench.h).  Every read checks its bytes.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int rank, nprocs;

enum workload { CN_W, SN_W, CC_R, CS_R, DL, NWORKLOADS };
static const char *const workload_names[] = { "cn-w", "sn-w", "cc-r", "cs-r", "dl" };

struct mode {
    const char *name, *prefix, *consistency;    /* consistency NULL: ufs */
    int coll;
};
static const struct mode all_modes[] = {
    {"mpiio", "bbfs:", "mpiio", 0},
    {"session", "bbfs:", "session", 0},
    {"commit", "bbfs:", "commit", 0},
    {"posix", "bbfs:", "posix", 0},
    {"collective", "bbfs:", "collective", 0},
    {"ufs-indep", "ufs:", NULL, 0},
    {"ufs-coll", "ufs:", NULL, 1},
};
#define NMODES (int) (sizeof(all_modes) / sizeof(all_modes[0]))

struct params {
    const char *dir;
    enum workload w;
    long long s;                /* access size */
    int m;                      /* accesses per process per phase */
    int samples;                /* dl: samples each process preloads */
};

static unsigned char pattern(long long off)
{
    return (unsigned char) ((unsigned long long) off * 2654435761u >> 11);
}

/* Access i of this process in phase (0 write, 1 read): its offset, or -1
 * when this process has none in that phase. */
static long long offset(const struct params *p, int phase, int i, unsigned *seed)
{
    int half = nprocs / 2, writers = p->w <= SN_W || p->w == DL ? nprocs : half;
    if (p->w == DL) {
        long long nsamples = (long long) nprocs * p->samples;
        if (phase == 0)
            return i < p->samples ? ((long long) rank * p->samples + i) * p->s : -1;
        return (long long) (rand_r(seed) % (unsigned) nsamples) * p->s;
    }
    if (phase == 0) {
        if (rank >= writers)
            return -1;
        return p->w == SN_W ? ((long long) i * nprocs + rank) * p->s
            : ((long long) rank * p->m + i) * p->s;
    }
    if (p->w <= SN_W || rank < half)
        return -1;
    int reader = rank - half, readers = nprocs - half;
    if (p->w == CC_R)
        return ((long long) (reader % writers) * p->m + i) * p->s;
    return ((long long) (i * readers + reader) % ((long long) writers * p->m)) * p->s;
}

static void fail(const char *what)
{
    fprintf(stderr, "workloads [rank %d]: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A phase's accesses: off[i] < 0 is none (a collective mode still takes
 * part, with no bytes). */
static void access_phase(MPI_File fh, int write, int coll, const long long *off, int n,
                         unsigned char *buf, long long s)
{
    for (int i = 0; i < n; i++) {
        int has = off[i] >= 0, err = MPI_SUCCESS;
        MPI_Offset o = has ? off[i] : 0;
        int count = has ? (int) s : 0;
        if (coll)
            err = write ? MPI_File_write_at_all(fh, o, buf + i * s, count, MPI_BYTE,
                                                MPI_STATUS_IGNORE)
                : MPI_File_read_at_all(fh, o, buf + i * s, count, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (has)
            err = write ? MPI_File_write_at(fh, o, buf + i * s, count, MPI_BYTE,
                                            MPI_STATUS_IGNORE)
                : MPI_File_read_at(fh, o, buf + i * s, count, MPI_BYTE, MPI_STATUS_IGNORE);
        if (err)
            fail(write ? "a write failed" : "a read failed");
    }
}

/* One run: seconds of the write and the read phase (slowest process; read
 * -1 when there is none), -2 on a wrong byte. */
static void run(const struct params *p, const struct mode *md, unsigned char *wbuf,
                unsigned char *rbuf, unsigned seed, double t[2])
{
    char name[4200];
    MPI_Info info;
    MPI_File fh;
    int n = p->w == DL ? (p->samples > p->m ? p->samples : p->m) : p->m;
    int accesses[2] = { p->w == DL ? p->samples : p->m, p->m };
    long long off[2][n > 0 ? n : 1];
    int bad = 0, allbad;

    for (int ph = 0; ph < 2; ph++)
        for (int i = 0; i < accesses[ph]; i++)
            off[ph][i] = offset(p, ph, i, &seed);
    for (int i = 0; i < accesses[0]; i++)
        if (off[0][i] >= 0)
            for (long long b = 0; b < p->s; b++)
                wbuf[i * p->s + b] = pattern(off[0][i] + b);
    snprintf(name, sizeof(name), "%s%s/workloads.dat", md->prefix, p->dir);
    MPI_Info_create(&info);
    if (md->consistency) {
        MPI_Info_set(info, "bbfs_consistency", md->consistency);
        MPI_Info_set(info, "bbfs_replay", "never");
    }
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh))
        fail("cannot open the file for the write phase");
    access_phase(fh, 1, md->coll, off[0], accesses[0], wbuf, p->s);
    const char *c = md->consistency ? md->consistency : "mpiio";
    if (!strcmp(c, "session"))
        MPI_File_close(&fh);
    else if (!strcmp(c, "mpiio")) {
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_sync(fh);
    } else if (!strcmp(c, "commit")) {
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(c, "collective"))
        MPI_File_sync(fh);
    else
        MPI_Barrier(MPI_COMM_WORLD);
    t[0] = bench_slowest(t0, MPI_COMM_WORLD);
    t[1] = -1;
    if (p->w != CN_W && p->w != SN_W) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (!strcmp(c, "session")
            && MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh))
            fail("cannot open the file for the read phase");
        access_phase(fh, 0, md->coll, off[1], accesses[1], rbuf, p->s);
        t[1] = bench_slowest(t0, MPI_COMM_WORLD);
        for (int i = 0; i < accesses[1] && !bad; i++)
            for (long long b = 0; off[1][i] >= 0 && b < p->s && !bad; b++)
                bad = rbuf[i * p->s + b] != pattern(off[1][i] + b);
    }
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (allbad)
        t[0] = t[1] = -2;
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);   /* (and the pending logs) */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_free(&info);
}

/* Bytes a phase moves in all (the figure bandwidths are made of). */
static double phase_bytes(const struct params *p, int phase)
{
    int half = nprocs / 2;
    if (p->w == DL)
        return (double) nprocs * (phase ? p->m : p->samples) * p->s;
    if (p->w <= SN_W)
        return phase ? 0 : (double) nprocs * p->m * p->s;
    return (double) (phase ? nprocs - half : half) * p->m * p->s;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: workloads [-dir DIR] [-workload W[,W...]] [-size S[,S...]]\n"
                "                 [-accesses M] [-modes M[,M...]] [-dlsize B] [-samples N]\n"
                "                 [-repeat R] [-warm MIB] [-csv FILE] [-label TEXT]\n"
                "  -workload  cn-w, sn-w, cc-r, cs-r, dl (default: all)\n"
                "  -size      access sizes, k/m suffixes (default 8k,8m; dl uses -dlsize)\n"
                "  -accesses  accesses per process per phase (default 10, as the paper)\n"
                "  -modes     mpiio, session, commit, posix, collective, ufs-indep,\n"
                "             ufs-coll (default: all)\n"
                "  -dlsize    dl sample bytes (default 116k); -samples: preloaded per process"
                " (default 32)\n"
                "  -repeat    rounds (default 5); -warm: MiB warmed before each run"
                " (default 256)\n"
                "  -csv       append one row per measurement; -label: its label column\n"
                "needs 2 or more processes (cc-r and cs-r split them into writers and"
                " readers)\n");
    /* every process parses the same arguments and gets here: a clean exit
     * (an abort can lose the message on its way through mpiexec) */
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = ".", *csv_path = NULL, *label = "", *wl = NULL;
    const char *modes_s = NULL;
    long long sizes[8] = { 8 << 10, 8 << 20 }, dlsize = 116 << 10;
    int nsizes = 2, m = 10, samples = 32, repeat = 5;
    double warm = 256;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        const char *a = argv[i], *v = argv[++i];
        long long one[1];
        if (!strcmp(a, "-dir"))
            dir = v;
        else if (!strcmp(a, "-workload"))
            wl = v;
        else if (!strcmp(a, "-size")) {
            if ((nsizes = bench_parse_sizes(v, sizes, 8)) < 1)
                usage();
        } else if (!strcmp(a, "-accesses"))
            m = atoi(v);
        else if (!strcmp(a, "-modes"))
            modes_s = v;
        else if (!strcmp(a, "-dlsize")) {
            if (bench_parse_sizes(v, one, 1) != 1)
                usage();
            dlsize = one[0];
        } else if (!strcmp(a, "-samples"))
            samples = atoi(v);
        else if (!strcmp(a, "-repeat"))
            repeat = atoi(v);
        else if (!strcmp(a, "-warm"))
            warm = atof(v);
        else if (!strcmp(a, "-csv"))
            csv_path = v;
        else if (!strcmp(a, "-label"))
            label = v;
        else
            usage();
    }
    const char *mode_names[NMODES];
    int chosen[NMODES], use[NMODES], nuse = 0, wanted[NWORKLOADS];
    for (int k = 0; k < NMODES; k++)
        mode_names[k] = all_modes[k].name;
    if (bench_choose(modes_s, mode_names, NMODES, chosen) < 1
        || bench_choose(wl, workload_names, NWORKLOADS, wanted) < 1)
        usage();
    for (int k = 0; k < NMODES; k++)
        if (chosen[k])
            use[nuse++] = k;
    if (m < 1 || samples < 1 || repeat < 1 || repeat > 64 || warm < 0
        || nprocs < 2 || dlsize < 1 || dlsize > (1 << 30))
        usage();
    for (int s = 0; s < nsizes; s++)
        if (sizes[s] > (1 << 30) || sizes[s] * (m > samples ? m : samples) > (1ll << 31))
            usage();

    FILE *csv = bench_csv_open(csv_path, "bench,label,nodes,nprocs,workload,size,accesses,"
                               "samples,mode,phase,runs,median_s,min_s,max_s,spread_pct,"
                               "mib_s,vs_ufs_indep,vs_ufs_coll");
    int nodes = bench_nodes(MPI_COMM_WORLD);
    long long maxs = dlsize;
    for (int s = 0; s < nsizes; s++)
        maxs = sizes[s] > maxs ? sizes[s] : maxs;
    size_t cap = (size_t) maxs * (size_t) (m > samples ? m : samples);
    unsigned char *wbuf = malloc(cap), *rbuf = malloc(cap);
    if (!wbuf || !rbuf)
        fail("out of memory for the access buffers");
    memset(wbuf, 1, cap);       /* (touched: no page faults inside a phase) */
    memset(rbuf, 1, cap);
    int failed = 0;

    for (int w = 0; w < NWORKLOADS; w++)
        for (int s = 0; s < (w == DL ? 1 : nsizes) && wanted[w]; s++) {
            struct params p = { dir, (enum workload) w, w == DL ? dlsize : sizes[s], m, samples };
            static double t[NMODES][2][64];
            for (int r = 0; r < repeat; r++)
                for (int k = 0; k < nuse; k++) {
                    int mk = use[(k + r) % nuse];
                    double tt[2];
                    bench_warm(dir, warm, MPI_COMM_WORLD);
                    run(&p, &all_modes[mk], wbuf, rbuf,
                        (unsigned) (rank * 7919 + r * 104729 + 1), tt);
                    t[mk][0][r] = tt[0];
                    t[mk][1][r] = tt[1];
                    failed |= tt[0] == -2;
                }
            if (rank != 0)
                continue;
            printf("\n%s: %d processes on %d node%s, %d accesses of %lld bytes per process "
                   "per phase%s; %d rounds, modes alternating, %.0f MiB warmed before each\n",
                   workload_names[w], nprocs, nodes, nodes == 1 ? "" : "s", m, p.s,
                   w == DL ? " (reads; the preload writes -samples each)" : "", repeat, warm);
            printf("%-11s %-5s %9s %7s %9s %10s %10s\n", "mode", "phase", "median s", "spread",
                   "MiB/s", "vs indep", "vs coll");
            for (int ph = 0; ph < 2; ph++) {
                if (phase_bytes(&p, ph) == 0)
                    continue;
                struct bench_stat ufs[2] = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
                for (int k = 0; k < nuse; k++)
                    if (!all_modes[use[k]].consistency)
                        ufs[all_modes[use[k]].coll] = bench_stat(t[use[k]][ph], repeat);
                for (int k = 0; k < nuse; k++) {
                    const struct mode *md = &all_modes[use[k]];
                    struct bench_stat st = bench_stat(t[use[k]][ph], repeat);
                    double mibs = phase_bytes(&p, ph) / 1048576 / st.median;
                    double vs[2];
                    for (int c = 0; c < 2; c++)
                        vs[c] = ufs[c].median > 0 && st.median > 0 ? ufs[c].median / st.median : 0;
                    if (st.median < 0) {
                        printf("%-11s %-5s  WRONG DATA READ BACK\n", md->name,
                               ph ? "read" : "write");
                        continue;
                    }
                    printf("%-11s %-5s %9.4f %6.0f%% %9.1f %9.2fx %9.2fx\n", md->name,
                           ph ? "read" : "write", st.median, bench_spread(&st), mibs, vs[0],
                           vs[1]);
                    if (csv)
                        fprintf(csv, "workloads,\"%s\",%d,%d,%s,%lld,%d,%d,%s,%s,%d,%.6f,%.6f,"
                                "%.6f,%.1f,%.2f,%.4f,%.4f\n", label, nodes, nprocs,
                                workload_names[w], p.s, m, w == DL ? samples : 0, md->name,
                                ph ? "read" : "write", repeat, st.median, st.min, st.max,
                                bench_spread(&st), mibs, vs[0], vs[1]);
                }
            }
            fflush(stdout);
        }
    if (csv)
        fclose(csv);
    free(wbuf);
    free(rbuf);
    MPI_Finalize();
    return failed;
}
