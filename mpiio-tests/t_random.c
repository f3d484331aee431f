/* Random operations against a model of the file.  Every process derives
 * every process's operations from one seed, so each keeps the whole file's
 * expected contents and checks every read against it; the runner then
 * compares the final file with the ufs: run.
 *
 * The file is 2P zones.  In epoch e, zone z belongs to rank (z + e) % 2P
 * when that is below P, and to nobody otherwise: a process writes only in
 * its zone (contiguous, strided through a vector view, collectively,
 * nonblocking), and may read its zone and the unowned ones at any time
 * (nobody else writes there in the epoch, so MPI-IO defines what it sees).
 * After the epoch's sync-barrier-sync every byte is defined: each process
 * reads random ranges anywhere and checks the size.  Some epochs start with
 * MPI_File_set_size (shrink or grow).  T_RANDOM_SEED=N picks
 * another sequence (the suite runs the default one).
 *
 * The soak (soak.sh) runs it longer: T_RANDOM_EPOCHS=N epochs (default 6),
 * stopping early once T_RANDOM_SECONDS have passed (all processes at the
 * same epoch), and prints how many epochs ran and the largest resident
 * memory of a process after epoch 10 and at the end. */
#include "testlib.h"
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZONE 16384
#define EPOCHS 6
#define OPS 24

static uint64_t rng, seed;    /* seed: T_RANDOM_SEED, to explore locally */

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static long pick(long lo, long hi)     /* in [lo, hi] */
{
    return lo + (long) (next() % (uint64_t) (hi - lo + 1));
}

static int nzones;
static unsigned char *model;
static long model_size;

static int owner(int zone, int epoch)
{
    int r = (zone + epoch) % nzones;
    return r < tl_nprocs ? r : -1;
}

static int zone_of(int rank, int epoch)
{
    for (int z = 0; z < nzones; z++)
        if (owner(z, epoch) == rank)
            return z;
    return -1;
}

/* One strided or contiguous write: blocks of blen bytes every stride,
 * starting at off. */
struct op {
    int kind;                   /* 0 write_at, 1 vector view, 2 iwrite_at */
    long off, blen, stride, count;
    unsigned seed;
};

static void op_data(const struct op *o, unsigned char *buf)
{
    for (long i = 0; i < o->blen * o->count; i++)
        buf[i] = (unsigned char) (o->seed * 31u + (unsigned) i * 7u + (unsigned) (i >> 8));
}

static void model_apply(const struct op *o, const unsigned char *buf)
{
    for (long b = 0; b < o->count; b++) {
        long at = o->off + b * o->stride;
        memcpy(model + at, buf + b * o->blen, (size_t) o->blen);
        if (at + o->blen > model_size)
            model_size = at + o->blen;
    }
}

/* Operation k of rank r in epoch e, inside zone z: the same on every process. */
static struct op make_op(int r, int e, int k, int z)
{
    struct op o;
    rng = ((uint64_t) r << 40) ^ ((uint64_t) e << 20) ^ (uint64_t) k ^ 0x5eedULL ^ seed;
    o.kind = (int) pick(0, 2);
    o.seed = (unsigned) next();
    o.blen = o.kind == 1 ? pick(1, 300) : pick(1, 3000);
    o.stride = o.kind == 1 ? o.blen + pick(1, 200) : o.blen;
    long room = ZONE - o.blen;
    o.count = o.kind == 1 ? pick(1, room / o.stride + 1) : 1;
    o.off = (long) z * ZONE + pick(0, ZONE - ((o.count - 1) * o.stride + o.blen));
    return o;
}

/* The epoch's collective write of rank r: one contiguous piece. */
static struct op collective_op(int r, int e, int z)
{
    struct op o = make_op(r, e, OPS, z);
    o.kind = 0;
    o.count = 1;
    o.stride = o.blen;
    return o;
}

/* Every process runs every operation slot, and set_view is collective: so
 * each slot sets a view on every process, a vector for a strided write and
 * the plain byte view otherwise. */
static void do_op(MPI_File fh, const struct op *o, unsigned char *buf)
{
    MPI_Status st;
    MPI_Request rq;
    MPI_Datatype v = MPI_BYTE;
    int n = (int) (o->blen * o->count);

    op_data(o, buf);
    if (o->kind == 1) {
        MPI_Type_vector((int) o->count, (int) o->blen, (int) o->stride, MPI_BYTE, &v);
        MPI_Type_commit(&v);
    }
    TL_MPI(MPI_File_set_view(fh, o->kind == 1 ? o->off : 0, MPI_BYTE, v, "native",
                             MPI_INFO_NULL));
    if (o->kind == 0) {
        TL_MPI(MPI_File_write_at(fh, o->off, buf, n, MPI_BYTE, &st));
    } else if (o->kind == 2) {
        TL_MPI(MPI_File_iwrite_at(fh, o->off, buf, n, MPI_BYTE, &rq));
        TL_MPI(MPI_Wait(&rq, &st));
    } else {
        TL_MPI(MPI_File_write(fh, buf, n, MPI_BYTE, &st));
        MPI_Type_free(&v);
    }
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

static void check_read(MPI_File fh, long off, long len, const char *when)
{
    MPI_Status st;
    int count;
    unsigned char *got = malloc((size_t) len);
    memset(got, 0xA5, (size_t) len);
    TL_MPI(MPI_File_read_at(fh, off, got, (int) len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    long want = off + len <= model_size ? len : (off < model_size ? model_size - off : 0);
    TL_CHECK(count == want, "%s: read of %ld at %ld returned %d bytes, expected %ld", when, len,
             off, count, want);
    for (long i = 0; i < want; i++)
        TL_CHECK(got[i] == model[off + i], "%s: byte %ld is %d, expected %d", when, off + i,
                 got[i], model[off + i]);
    free(got);
}

/* MPI_File_set_size at the start of an epoch: epochs 2 and 5 cut the file
 * somewhere in its first 3/4 (then rank 0 writes a new background over the
 * cut part, so no one writes past the end and leaves a hole), epochs 3 and 6
 * grow it by up to a zone of zeros. */
static void resize(MPI_File fh, int e, long total)
{
    MPI_Status st;
    MPI_Offset size;

    rng = 0x512eULL ^ ((uint64_t) e << 4) ^ seed;
    long to = e % 3 == 2 ? pick(total / 8, total * 3 / 4) : total + pick(1, ZONE);
    TL_MPI(MPI_File_set_size(fh, to));
    if (to > model_size)
        memset(model + model_size, 0, (size_t) (to - model_size));
    model_size = to;
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == to, "epoch %d: size %lld after set_size(%ld)", e, (long long) size, to);
    check_read(fh, to - 100 > 0 ? to - 100 : 0, 300, "across the new end");
    MPI_Barrier(MPI_COMM_WORLD);       /* everyone looked before rank 0 writes */
    if (to < total) {
        unsigned char *bg = malloc((size_t) (total - to));
        tl_fill(bg, (size_t) (total - to), to, 3 + e);
        if (tl_rank == 0)
            TL_MPI(MPI_File_write_at(fh, to, bg, (int) (total - to), MPI_BYTE, &st));
        memcpy(model + to, bg, (size_t) (total - to));
        model_size = total;
        free(bg);
        tl_sync_barrier_sync(fh);
    }
}

/* Anonymous resident memory of this process, KiB (VmRSS on kernels without
 * RssAnon; 0 if unknown).  Not VmRSS: that also counts the pages of MPI's
 * own shared-memory segment, fixed in size at MPI_Init, which a replay's
 * all-to-all exchanges touch more of as the run goes on (RssShmem grew
 * 1.7 -> 3.2 MiB over a 40 s soak while RssAnon stayed at 7.5-7.7 MiB). */
static long rss_kib(void)
{
    char line[256];
    long kib = 0, anon = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            continue;
        if (sscanf(line, "RssAnon: %ld", &anon) == 1)
            break;
    }
    if (f)
        fclose(f);
    if (anon >= 0)
        kib = anon;
    return kib;
}

/* Open file descriptors of this process (0 if unknown). */
static long open_fds(void)
{
    long n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d) {
        closedir(d);
        n--;            /* (the directory's own) */
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    long total;

    seed = getenv("T_RANDOM_SEED") ? strtoull(getenv("T_RANDOM_SEED"), NULL, 0) << 48 : 0;
    nzones = 2 * tl_nprocs;
    total = (long) nzones * ZONE;
    model = calloc((size_t) (total + ZONE), 1);    /* room for a grown file */
    unsigned char *buf = malloc(ZONE);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    /* Epoch 0's background: every byte defined (stock ROMIO can leave
     * garbage in holes). */
    unsigned char *bg = malloc((size_t) total);
    tl_fill(bg, (size_t) total, 0, 3);
    if (tl_rank == 0)
        TL_MPI(MPI_File_write_at(fh, 0, bg, (int) total, MPI_BYTE, &st));
    memcpy(model, bg, (size_t) total);
    model_size = total;
    free(bg);
    tl_sync_barrier_sync(fh);

    const char *ne = getenv("T_RANDOM_EPOCHS"), *ns = getenv("T_RANDOM_SECONDS");
    int epochs = ne ? atoi(ne) : EPOCHS, done = 0;
    double limit = ns ? atof(ns) : 0, t0 = MPI_Wtime();
    long rss_warm = 0, fds_warm = 0;
    for (int e = 1; e <= epochs; e++) {
        int mine = zone_of(tl_rank, e);
        if (e % 3 != 1)
            resize(fh, e, total);
        for (int k = 0; k < OPS; k++) {
            struct op o = make_op(tl_rank, e, k, mine);
            do_op(fh, &o, buf);
            model_apply(&o, buf);
            /* my zone, or a zone nobody writes this epoch */
            rng = ((uint64_t) tl_rank << 32) ^ ((uint64_t) e << 16) ^ (uint64_t) k ^ 0xbeefULL ^ seed;
            int z = pick(0, 1) ? mine : (int) pick(0, nzones - 1);
            if (owner(z, e) >= 0 && z != mine)
                z = mine;
            long len = pick(1, ZONE);
            check_read(fh, (long) z * ZONE + pick(0, ZONE - len), len, "within the epoch");
        }
        /* One collective write, each rank in its zone, then the epoch ends. */
        struct op c = collective_op(tl_rank, e, mine);
        op_data(&c, buf);
        TL_MPI(MPI_File_write_at_all(fh, c.off, buf, (int) c.blen, MPI_BYTE, &st));
        model_apply(&c, buf);
        tl_sync_barrier_sync(fh);
        /* Now everyone's writes of the epoch are defined for everyone. */
        for (int r = 0; r < tl_nprocs; r++) {
            if (r == tl_rank)
                continue;
            for (int k = 0; k <= OPS; k++) {
                struct op o = k < OPS ? make_op(r, e, k, zone_of(r, e))
                    : collective_op(r, e, zone_of(r, e));
                op_data(&o, buf);
                model_apply(&o, buf);
            }
        }
        rng = 0xfeedULL ^ ((uint64_t) e << 8) ^ (uint64_t) tl_rank ^ seed;
        for (int k = 0; k < 4; k++) {
            long len = pick(1, 3 * ZONE);
            check_read(fh, pick(0, total - 1), len, "after the sync");
        }
        MPI_Offset size;
        TL_MPI(MPI_File_get_size(fh, &size));
        TL_CHECK(size == model_size, "epoch %d: size %lld, expected %ld", e, (long long) size,
                 model_size);
        done = e;
        if (e == 10) {
            rss_warm = rss_kib();
            fds_warm = open_fds();
        }
        int stop = limit > 0 && MPI_Wtime() - t0 > limit;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop)
            break;
    }
    if (ne) {
        long mem[4] = { rss_warm, rss_kib(), fds_warm, open_fds() }, all[4];
        MPI_Allreduce(mem, all, 4, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (tl_rank == 0)
            printf("soak: %d epochs in %.1f s; largest anonymous resident memory of a process after "
                   "epoch 10: %ld KiB, at the end: %ld KiB; most open descriptors after epoch 10: "
                   "%ld, at the end: %ld\n", done, MPI_Wtime() - t0, all[0], all[1], all[2],
                   all[3]);
    }
    TL_MPI(MPI_File_close(&fh));
    free(model);
    free(buf);
    return tl_finish();
}
