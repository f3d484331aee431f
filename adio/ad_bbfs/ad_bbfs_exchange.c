/*
 * Replay across nodes: a writer's logs live on its node's own storage, so
 * only processes on that node can read them.  Each writer gets a host, a
 * process that can open its logs; hosts send their writers' sealed
 * metalogs to everyone (one allgather: every process plans the whole
 * replay, logfs_plan_build_sessions_src), and in every round they read the
 * datalog bytes other processes' domains need and send them over MPI.  So
 * the data crosses the network once, as in LogFS, and no process opens a
 * log its node does not hold.  On one node, or with a log directory every
 * node shares, every process can read every log, and the hosts are spread
 * evenly over the processes.
 *
 * When every process can open every log, nothing need cross the network:
 * each process reads the ranges its domain wants itself (direct), and a
 * round is local (the hosts still send the metalogs, once).  Otherwise a
 * process still reads what it wants of the logs on its own node itself:
 * only other nodes' bytes go through the exchange.
 *
 * A writer whose logs no process of this job can open (a later job, or
 * bbfs-replay, on other nodes) is hosted all the same, by the process with
 * the fewest writers: it gets the metalog and the datalog's bytes from the
 * bbserver of the writer's node, which the manifest names.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/planner.h"
#include "../../logfs/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most writers a replay reads directly (each process may open them all). */
#define DIRECT_MAX_WRITERS 256

/* One datalog range a process wants in this round, as sent to its host. */
struct want {
    uint64_t writer, off, len;
};

/* Where the wanted bytes go, in order: count blocks of len bytes at dest,
 * dest + stride, ... (a round wants only what it places). */
struct place {
    char *dest;
    uint64_t len, count, stride;
};

struct ADIOI_BBFS_Exchange {
    MPI_Comm comm;
    int rank, nprocs, nwriters;
    int direct;                 /* every process reads its wants itself */
    int *host;                  /* by writer: the process that reads its logs */
    unsigned char *here;        /* by writer: this process can open its logs too, and
                                 * reads its own wants of them */
    char **far;                 /* by writer: its node's server, when the host cannot
                                 * open its logs (NULL: it can) */
    unsigned char *gone;        /* by writer: nobody can read its logs and no server
                                 * serves them (salvage only: planned without it) */
    const unsigned char *lazy;  /* by writer (or NULL): of a lazy session, promised
                                 * nothing: with no log anywhere, it made none */
    unsigned char *absent;      /* by writer: lazy, and no process has its log */
    ADIOI_BBFS_Nodes nodes;     /* for calls to those servers */
    ADIOI_BBFS_Datalogs *logs;  /* (the replay's) datalogs, of hosted writers only */
    struct want *want;
    size_t nwant, capwant;
    struct place *place;
    size_t nplace, capplace;
    uint64_t wanted;            /* bytes of all wants */
    long long rounds, metalog_bytes, wants, moved, read_direct; /* (bbfs_timing's counts) */
    /* Per-round buffers, kept for the replay's next rounds: one
     * allocation per replay, not several per round. */
    int *scount, *rcount, *sdispl, *rdispl;
    long long *sbytes, *rbytes;
    struct buf {
        void *p;
        size_t cap;
    } sorted, slot, asked, back, got, span, spans;
};

/* b with room for n bytes (its contents are not kept). */
static void *room(struct buf *b, size_t n)
{
    if (n > b->cap) {
        ADIOI_BBFS_FREE(b->p);
        b->cap = n > 2 * b->cap ? n : 2 * b->cap;
        b->p = ADIOI_Malloc(b->cap);
    }
    return b->p;
}

/* An error every process reports alike: the first failing process's class
 * and message, broadcast from it (an error only it saw would otherwise reach
 * the others as "failed on another process", without what to do). */
static int agree_message(MPI_Comm comm, const char *myname, int err)
{
    struct {
        int cls;
        char msg[MPI_MAX_ERROR_STRING];
    } m;
    int rank, first, mine;

    MPI_Comm_rank(comm, &rank);
    mine = err != MPI_SUCCESS ? rank : INT_MAX;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX)
        return MPI_SUCCESS;
    memset(&m, 0, sizeof(m));
    if (rank == first) {
        MPI_Error_class(err, &m.cls);
        ADIOI_BBFS_Error_text(err, 0, m.msg, sizeof(m.msg));
    }
    MPI_Bcast(&m, (int) sizeof(m), MPI_BYTE, first, comm);
    if (err != MPI_SUCCESS)
        return err;
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, m.cls,
                                "**io", "%s", m.msg);
}

/* Writer w's logs are this process's, in memory (a private session). */
static int in_memory(const ADIOI_BBFS_Exchange * x, int w)
{
    return x->logs->mem && x->logs->mem->index == w;
}

/* Each writer's host: of the processes that can open its metalog, the one
 * with the fewest writers so far (then the lowest rank); when none can, of
 * all processes, through the server of the writer's node.  A writer nobody
 * can reach fails the replay, or, with salvage, is left out (its node's
 * storage is lost, and the others' synced data is still worth having). */
static int choose_hosts(ADIOI_BBFS_Exchange * x, const char *canonical, char *const *metalogs,
                        char *const *servers, int salvage, const char *myname)
{
    /* per process: which metalogs it can open, then whether it may read
     * logs directly (not under bbfs_force_remote) */
    const size_t slot = (size_t) x->nwriters + 1;
    unsigned char *mine = ADIOI_Calloc(slot, 1);
    unsigned char *all = ADIOI_Malloc((size_t) x->nprocs * slot);
    int *load = ADIOI_Calloc(x->nprocs, sizeof(int)), err = MPI_SUCCESS;

    for (int w = 0; w < x->nwriters; w++)
        mine[w] = in_memory(x, w) || access(metalogs[w], R_OK) == 0;
    mine[x->nwriters] = (unsigned char) (x->direct != 0);
    MPI_Allgather(mine, (int) slot, MPI_UNSIGNED_CHAR, all, (int) slot, MPI_UNSIGNED_CHAR,
                  x->comm);
    /* (the byte of the process and writer, or its direct flag at writer
     * nwriters) */
#define SEES(p, w) all[(size_t) (p) * slot + (size_t) (w)]
    int everywhere = 1;
    for (int p = 0; p < x->nprocs; p++)
        for (int w = 0; w <= x->nwriters; w++)
            everywhere &= SEES(p, w);
    /* Direct reads open the datalog of every writer in a domain: past a
     * node's worth of writers (a log directory many nodes share) that
     * nears the open-file limit, and the hosts' exchange opens fewer.
     * (bbfs_force_remote, set by the environment: everything through the
     * exchange, on every process if on any, as the rounds of one replay
     * are either direct everywhere or exchanged everywhere.) */
    int may_read_here = x->direct, nhere = 0;
    x->direct = everywhere && x->nwriters <= DIRECT_MAX_WRITERS;
    for (int w = 0; w < x->nwriters; w++)
        nhere += mine[w];
    if (may_read_here && nhere <= DIRECT_MAX_WRITERS)
        memcpy(x->here, mine, (size_t) x->nwriters);
    for (int w = 0; w < x->nwriters && err == MPI_SUCCESS; w++) {
        int best = -1;
        for (int p = 0; p < x->nprocs; p++)
            if (SEES(p, w) && (best < 0 || load[p] < load[best]))
                best = p;
        if (best < 0 && x->lazy && x->lazy[w]) {
            x->absent[w] = 1;   /* (planned as an empty log) */
            continue;
        }
        if (best < 0 && servers && servers[w] && *servers[w]) {
            for (int p = 0; p < x->nprocs; p++)
                if (best < 0 || load[p] < load[best])
                    best = p;
            x->far[w] = ADIOI_Strdup(servers[w]);
        }
        if (best < 0 && salvage) {
            x->gone[w] = 1;
            if (x->rank == 0)
                fprintf(stderr, "bbfs replay %s: writer %d not recovered: no process can "
                        "read its log %s and no bbserver serves it; the other writers are "
                        "replayed without it (salvage)\n", canonical, w, metalogs[w]);
        }
        else if (best < 0)
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_NO_SUCH_FILE, "**io", "bbfs: no process of "
                                       "this job can open a log, and no bbserver serves it: "
                                       "run bbfs-replay on its node (if that storage is lost, "
                                       "bbfs-replay --salvage replays the other writers "
                                       "without it); the log: %s", metalogs[w]);
        else {
            x->host[w] = best;
            load[best]++;
        }
    }
    ADIOI_Free(mine);
    ADIOI_Free(all);
#undef SEES
    ADIOI_Free(load);
    return err;             /* the same on every process: all computed it */
}

int ADIOI_BBFS_Exchange_begin(MPI_Comm comm, const char *canonical, char *const *metalogs,
                              char *const *servers, int nwriters, int salvage, double timeout,
                              int direct, const unsigned char *lazy, ADIOI_BBFS_Datalogs * logs,
                              ADIOI_BBFS_Exchange ** out, struct logfs_metalog_src **srcs,
                              char **bytes_out)
{
    static char myname[] = "ADIOI_BBFS_EXCHANGE";
    ADIOI_BBFS_Exchange *x = ADIOI_Calloc(1, sizeof(*x));
    struct logfs_error le;
    long long *lens = NULL, *all_lens = NULL;
    int *counts = NULL, *displs = NULL;
    char *mine = NULL, *bytes = NULL;
    size_t nmine = 0;
    int err;

    *out = NULL;
    *srcs = NULL;
    *bytes_out = NULL;
    x->comm = comm;
    x->nwriters = nwriters;
    x->direct = direct;
    x->logs = logs;
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->nprocs);
    x->host = ADIOI_Calloc(nwriters ? nwriters : 1, sizeof(int));
    x->here = ADIOI_Calloc(nwriters ? nwriters : 1, 1);
    x->far = ADIOI_Calloc(nwriters ? nwriters : 1, sizeof(char *));
    x->gone = ADIOI_Calloc(nwriters ? nwriters : 1, 1);
    x->absent = ADIOI_Calloc(nwriters ? nwriters : 1, 1);
    x->lazy = lazy;
    x->scount = ADIOI_Calloc(x->nprocs, sizeof(int));
    x->rcount = ADIOI_Calloc(x->nprocs, sizeof(int));
    x->sdispl = ADIOI_Calloc(x->nprocs, sizeof(int));
    x->rdispl = ADIOI_Calloc(x->nprocs, sizeof(int));
    x->sbytes = ADIOI_Calloc(x->nprocs, sizeof(long long));
    x->rbytes = ADIOI_Calloc(x->nprocs, sizeof(long long));
    if ((err = choose_hosts(x, canonical, metalogs, servers, salvage, myname)) != MPI_SUCCESS)
        goto fn_fail;
    int far_here = 0;
    for (int w = 0; w < nwriters; w++)
        far_here |= x->far[w] && x->host[w] == x->rank;
    if (far_here) {
        char why[512];
        if (ADIOI_BBFS_Nodes_init(&x->nodes, timeout, why, sizeof(why)) != 0)
            err = ADIOI_BBFS_Err_server(myname, __LINE__, why);
    }

    /* The hosted metalogs, exported back to back. */
    lens = ADIOI_Calloc(nwriters ? nwriters : 1, sizeof(long long));
    for (int w = 0; w < nwriters && err == MPI_SUCCESS; w++) {
        void *b;
        size_t len;
        char *warn = NULL;
        int rc;
        if (x->gone[w] || x->absent[w] || x->host[w] != x->rank)
            continue;
        if (x->far[w]) {
            err = ADIOI_BBFS_Nodes_export(&x->nodes, x->far[w], metalogs[w], salvage, &b, &len,
                                          &warn);
            if (err != MPI_SUCCESS && salvage) {
                /* (a dead node's server: its logs are out of reach) */
                char msg[MPI_MAX_ERROR_STRING];
                ADIOI_BBFS_Error_text(err, 1, msg, sizeof(msg));        /* (the stack's last line) */
                fprintf(stderr, "bbfs replay %s: writer %d not recovered: %s; the other "
                        "writers are replayed without it (salvage)\n", canonical, w, msg);
                x->gone[w] = 1;
                err = MPI_SUCCESS;
                continue;
            }
            if (err != MPI_SUCCESS)
                break;
            rc = LOGFS_OK;
        } else if (in_memory(x, w)) {
            len = x->logs->mem->len;
            b = malloc(len ? len : 1);
            rc = b ? LOGFS_OK : LOGFS_ENOMEM;
            if (b)
                memcpy(b, x->logs->mem->metalog, len);
            else
                snprintf(le.msg, sizeof(le.msg), "no memory for a metalog of %zu bytes", len);
        } else {
            rc = logfs_metalog_export(metalogs[w], salvage, &b, &len, &warn, &le);
            /* (a lazy writer killed while it made its files: no header,
             * so nothing released; sent as no bytes, planned as no log) */
            if (rc != LOGFS_OK && x->lazy && x->lazy[w] && logfs_metalog_unmade(metalogs[w], rc)) {
                b = NULL;
                len = 0;
                rc = LOGFS_OK;
            }
        }
        if (rc != LOGFS_OK) {
            char msg[LOGFS_ERRMSG_MAX + PATH_MAX];
            snprintf(msg, sizeof(msg), "cannot replay the logs of %s: %s", canonical, le.msg);
            err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
            break;
        }
        if (warn)
            fprintf(stderr, "bbfs replay %s: writer %d not fully recovered: %s\n", canonical, w,
                    warn);
        free(warn);
        mine = ADIOI_Realloc(mine, nmine + len + 1);
        if (len)
            memcpy(mine + nmine, b, len);
        free(b);
        nmine += len;
        lens[w] = (long long) len;
    }
    if (err == MPI_SUCCESS && nmine > INT_MAX)
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_IO, "**io", "bbfs: the metalogs one process sends "
                                   "for the replay exceed 2 GiB; replay with more processes");
    if ((err = agree_message(comm, myname, err)) != MPI_SUCCESS)
        goto fn_fail;
    if (salvage)    /* (writers only their hosts found out of reach) */
        MPI_Allreduce(MPI_IN_PLACE, x->gone, nwriters, MPI_UNSIGNED_CHAR, MPI_MAX, comm);

    all_lens = ADIOI_Malloc(sizeof(long long) * (nwriters ? nwriters : 1));
    MPI_Allreduce(lens, all_lens, nwriters, MPI_LONG_LONG, MPI_SUM, comm);
    counts = ADIOI_Calloc(x->nprocs, sizeof(int));
    displs = ADIOI_Calloc(x->nprocs, sizeof(int));
    long long total = 0;
    for (int w = 0; w < nwriters; w++) {
        counts[x->host[w]] += (int) all_lens[w];
        total += all_lens[w];
    }
    if (total > INT_MAX) {
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_IO, "**io", "bbfs: the replay's metalogs exceed "
                                   "2 GiB in all");
        goto fn_fail;
    }
    for (int p = 1; p < x->nprocs; p++)
        displs[p] = displs[p - 1] + counts[p - 1];
    bytes = ADIOI_Malloc(total ? total : 1);
    x->metalog_bytes = total;
    MPI_Allgatherv(mine, (int) nmine, MPI_BYTE, bytes, counts, displs, MPI_BYTE, comm);

    /* Each writer's bytes: its host's part, in writer order. */
    struct logfs_metalog_src *s = ADIOI_Calloc(nwriters ? nwriters : 1, sizeof(*s));
    long long *at = ADIOI_Calloc(x->nprocs, sizeof(long long));
    for (int w = 0; w < nwriters; w++) {
        int h = x->host[w];
        s[w].metalog = metalogs[w];
        s[w].data = x->gone[w] ? NULL : bytes + displs[h] + at[h];
        s[w].len = (size_t) all_lens[w];
        s[w].gone = x->gone[w];
        if (x->absent[w] || (x->lazy && x->lazy[w] && !s[w].gone && all_lens[w] == 0)) {
            /* (every process finds no file, as nobody did; or one with no
             * header: planned from the file, as an empty log) */
            s[w].data = NULL;
            s[w].absent_ok = 1;
        }
        at[h] += all_lens[w];
    }
    ADIOI_Free(at);
    *srcs = s;
    *bytes_out = bytes;
    *out = x;
    err = MPI_SUCCESS;
    goto fn_exit;

  fn_fail:
    ADIOI_BBFS_Exchange_end(x);
    ADIOI_BBFS_FREE(bytes);
  fn_exit:
    ADIOI_BBFS_FREE(mine);
    ADIOI_BBFS_FREE(lens);
    ADIOI_BBFS_FREE(all_lens);
    ADIOI_BBFS_FREE(counts);
    ADIOI_BBFS_FREE(displs);
    return err;
}

int ADIOI_BBFS_Exchange_gone(const ADIOI_BBFS_Exchange * x, int writer)
{
    return x->gone[writer];
}

void ADIOI_BBFS_Exchange_want(ADIOI_BBFS_Exchange * x, int writer, uint64_t off, uint64_t len)
{
    struct want *last = x->nwant ? &x->want[x->nwant - 1] : NULL;

    x->wanted += len;
    if (last && last->writer == (uint64_t) writer && last->off + last->len == off) {
        last->len += len;       /* the datalog continues: one read */
        return;
    }
    if (x->nwant == x->capwant) {
        x->capwant = x->capwant ? 2 * x->capwant : 256;
        x->want = ADIOI_Realloc(x->want, x->capwant * sizeof(*x->want));
    }
    x->want[x->nwant++] = (struct want) { (uint64_t) writer, off, len };
}

void ADIOI_BBFS_Exchange_place(ADIOI_BBFS_Exchange * x, char *dest, uint64_t len,
                               uint64_t count, uint64_t stride)
{
    if (len == 0 || count == 0)
        return;
    if (x->nplace == x->capplace) {
        x->capplace = x->capplace ? 2 * x->capplace : 256;
        x->place = ADIOI_Realloc(x->place, x->capplace * sizeof(*x->place));
    }
    x->place[x->nplace++] = (struct place) { dest, len, count, stride };
}

/* Host side: bytes of a hosted writer's datalog, from this node's storage
 * or through the server of the writer's node. */
static int read_log(ADIOI_BBFS_Exchange * x, int writer, uint64_t off, void *buf, size_t len)
{
    if (x->far[writer])
        return ADIOI_BBFS_Nodes_read(&x->nodes, x->far[writer], x->logs->paths[writer], off, buf,
                                     len);
    return ADIOI_BBFS_Datalogs_read(x->logs, writer, off, buf, len);
}

/* Host side (or, direct, the owner itself): read the wants of one process
 * (in order) into out.  A domain holds about 1/M of each writer's bytes,
 * close together in its datalog (strided writes are logged contiguously),
 * so a writer's span is read with one pread when it is not much larger
 * than what is wanted, instead of one per want (HDF5's 2^20 separate
 * 8-byte writes per process are 2^20 wants that tile one span). */
static int serve(ADIOI_BBFS_Exchange * x, const struct want *w, size_t n, char *out)
{
    struct span {
        uint64_t lo, hi, needed, wants;
        char *data;             /* the span, when read at once */
        int whole;              /* read at once */
    } *sp = room(&x->spans, sizeof(*sp) * (x->nwriters ? x->nwriters : 1));
    uint64_t dense = 0;
    char *scratch;
    int err = MPI_SUCCESS;

    memset(sp, 0, sizeof(*sp) * x->nwriters);

    for (size_t i = 0; i < n; i++) {
        struct span *s = &sp[w[i].writer];
        if (s->needed == 0 || w[i].off < s->lo)
            s->lo = w[i].off;
        if (w[i].off + w[i].len > s->hi)
            s->hi = w[i].off + w[i].len;
        s->needed += w[i].len;
        s->wants++;
    }
    for (int k = 0; k < x->nwriters; k++) {
        struct span *s = &sp[k];
        if (s->wants < 2 || s->hi - s->lo > 2 * s->needed + ((uint64_t) 4 << 20))
            continue;           /* nothing, one want (one read anyway), or too sparse */
        s->whole = 1;
        dense += s->hi - s->lo;
    }
    scratch = room(&x->span, dense ? dense : 1);
    for (int k = 0; k < x->nwriters && err == MPI_SUCCESS; k++) {
        struct span *s = &sp[k];
        if (!s->whole)
            continue;
        s->data = scratch;
        scratch += s->hi - s->lo;
        err = read_log(x, k, s->lo, s->data, s->hi - s->lo);
    }
    for (size_t i = 0; i < n && err == MPI_SUCCESS; i++) {
        struct span *s = &sp[w[i].writer];
        if (s->data)
            memcpy(out, s->data + (w[i].off - s->lo), w[i].len);
        else
            err = read_log(x, (int) w[i].writer, w[i].off, out, w[i].len);
        out += w[i].len;
    }
    return err;
}

/* count blocks of len bytes, packed at src, to dest, stride apart.  The
 * usual element sizes get fixed-size moves the compiler makes into plain
 * loads and stores: a memcpy call per 8-byte element was 40% of a replay. */
#define COPY_BLOCKS(size) \
    for (uint64_t k = 0; k < count; k++) \
        memcpy(dest + k * stride, src + k * (size), (size))
static void copy_strided(char *dest, const char *src, uint64_t len, uint64_t count,
                         uint64_t stride)
{
    switch (len) {
    case 4:
        COPY_BLOCKS(4);
        break;
    case 8:
        COPY_BLOCKS(8);
        break;
    case 16:
        COPY_BLOCKS(16);
        break;
    default:
        COPY_BLOCKS(len);
    }
}
#undef COPY_BLOCKS

/* Owner side: the wanted bytes to their places.  Want i's bytes are at
 * got + start[i]; the places take the wants' bytes in want order. */
static void scatter(ADIOI_BBFS_Exchange * x, const char *got, const uint64_t * start)
{
    size_t wi = 0;
    uint64_t wpos = 0;

    for (size_t i = 0; i < x->nplace; i++) {
        const struct place *p = &x->place[i];
        uint64_t k = 0;
        while (k < p->count && wi < x->nwant) {
            /* the blocks that lie whole in the current want, at once */
            uint64_t whole = (x->want[wi].len - wpos) / p->len;
            if (whole > p->count - k)
                whole = p->count - k;
            if (whole > 0) {
                copy_strided(p->dest + k * p->stride, got + start[wi] + wpos, p->len, whole,
                             p->stride);
                k += whole;
                wpos += whole * p->len;
                if (wpos == x->want[wi].len) {
                    wi++;
                    wpos = 0;
                }
                continue;
            }
            /* a block that begins in this want and ends in later ones */
            char *dest = p->dest + k * p->stride;
            uint64_t need = p->len;
            while (need > 0 && wi < x->nwant) {
                uint64_t n = x->want[wi].len - wpos;
                if (n > need)
                    n = need;
                memcpy(dest, got + start[wi] + wpos, n);
                dest += n;
                need -= n;
                wpos += n;
                if (wpos == x->want[wi].len) {
                    wi++;
                    wpos = 0;
                }
            }
            k++;
        }
    }
}

static int round_exchange(ADIOI_BBFS_Exchange * x, int failed);

/* A round when this process can open every log: its wants, read here. */
static int round_direct(ADIOI_BBFS_Exchange * x, int failed)
{
    int err = MPI_SUCCESS;
    if (!failed && x->nwant) {
        char *got = room(&x->got, x->wanted);
        uint64_t *start = ADIOI_Malloc(sizeof(uint64_t) * x->nwant);
        uint64_t at = 0;
        for (size_t i = 0; i < x->nwant; i++) {
            start[i] = at;
            at += x->want[i].len;
            x->read_direct += (long long) x->want[i].len;
        }
        err = serve(x, x->want, x->nwant, got);
        if (err == MPI_SUCCESS)
            scatter(x, got, start);
        ADIOI_Free(start);
    }
    x->rounds++;
    x->nwant = x->nplace = 0;
    x->wanted = 0;
    return err;
}

int ADIOI_BBFS_Exchange_round(ADIOI_BBFS_Exchange * x, int failed)
{
    if (x->direct)
        return round_direct(x, failed);
    return round_exchange(x, failed);
}

/* Who reads a want of writer w's log for this process. */
static int source_of(const ADIOI_BBFS_Exchange * x, uint64_t w)
{
    return x->here[w] ? x->rank : x->host[w];
}

static int round_exchange(ADIOI_BBFS_Exchange * x, int failed)
{
    static char myname[] = "ADIOI_BBFS_EXCHANGE_ROUND";
    int np = x->nprocs, err = MPI_SUCCESS;
    int *scount = x->scount, *rcount = x->rcount, *sdispl = x->sdispl, *rdispl = x->rdispl;
    long long *sbytes = x->sbytes, *rbytes = x->rbytes;
    struct want *sorted, *asked;
    char *back, *got;
    size_t *slot;

    for (int p = 0; p < np; p++) {
        scount[p] = rcount[p] = sdispl[p] = rdispl[p] = 0;
        sbytes[p] = rbytes[p] = 0;
    }

    if (failed) {               /* take part, wanting nothing */
        x->nwant = x->nplace = 0;
        x->wanted = 0;
    }
    /* Wants by host, keeping each host's wants in order; a log on this
     * node is read here (the alltoallv copies them to this process). */
    for (size_t i = 0; i < x->nwant; i++) {
        int h = source_of(x, x->want[i].writer);
        scount[h]++;
        sbytes[h] += (long long) x->want[i].len;
        if (h == x->rank && x->host[x->want[i].writer] != x->rank)
            x->read_direct += (long long) x->want[i].len;
    }
    for (int p = 1; p < np; p++)
        sdispl[p] = sdispl[p - 1] + scount[p - 1];
    sorted = room(&x->sorted, sizeof(*sorted) * (x->nwant ? x->nwant : 1));
    slot = room(&x->slot, sizeof(size_t) * (x->nwant ? x->nwant : 1));
    {
        int *fill = ADIOI_Calloc(np, sizeof(int));
        for (size_t i = 0; i < x->nwant; i++) {
            int h = source_of(x, x->want[i].writer);
            slot[i] = (size_t) (sdispl[h] + fill[h]++);
            sorted[slot[i]] = x->want[i];
        }
        ADIOI_Free(fill);
    }
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, x->comm);
    x->rounds++;
    for (int p = 0; p < np; p++)
        if (p != x->rank)
            x->wants += scount[p];
    int nasked = 0;
    for (int p = 0; p < np; p++) {
        rdispl[p] = nasked;
        nasked += rcount[p];
    }
    asked = room(&x->asked, sizeof(*asked) * (nasked ? nasked : 1));
    /* (as three integers each: no datatype to create and free every round) */
    for (int p = 0; p < np; p++) {
        scount[p] *= 3;
        sdispl[p] *= 3;
        rcount[p] *= 3;
        rdispl[p] *= 3;
    }
    MPI_Alltoallv(sorted, scount, sdispl, MPI_UINT64_T, asked, rcount, rdispl, MPI_UINT64_T,
                  x->comm);
    for (int p = 0; p < np; p++) {
        scount[p] /= 3;
        sdispl[p] /= 3;
        rcount[p] /= 3;
        rdispl[p] /= 3;
    }

    /* Serve: what each process asked, read from the hosted datalogs. */
    long long out_total = 0;
    for (int p = 0; p < np; p++)
        for (int i = rdispl[p]; i < rdispl[p] + rcount[p]; i++)
            rbytes[p] += (long long) asked[i].len;
    for (int p = 0; p < np; p++)
        out_total += rbytes[p];
    int too_big = out_total > INT_MAX, any_big;
    for (int p = 0; p < np; p++)
        too_big |= sbytes[p] > INT_MAX;
    MPI_Allreduce(&too_big, &any_big, 1, MPI_INT, MPI_MAX, x->comm);
    if (any_big) {
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_IO, "**io", "bbfs: a replay round would move more "
                                   "than 2 GiB from one process; lower bbfs_replay_buffer");
        goto fn_exit;
    }
    back = room(&x->back, out_total ? out_total : 1);
    {
        long long at = 0;
        for (int p = 0; p < np && err == MPI_SUCCESS; p++) {
            err = serve(x, asked + rdispl[p], (size_t) rcount[p], back + at);
            at += rbytes[p];
        }
    }
    /* Bytes back, as counts and displacements in bytes. */
    {
        int at = 0;
        for (int p = 0; p < np; p++) {
            rcount[p] = (int) rbytes[p];        /* now: bytes this process sends p */
            rdispl[p] = at;
            at += rcount[p];
        }
        at = 0;
        for (int p = 0; p < np; p++) {
            scount[p] = (int) sbytes[p];        /* now: bytes this process gets from p */
            sdispl[p] = at;
            at += scount[p];
        }
        for (int p = 0; p < np; p++)
            if (p != x->rank)
                x->moved += rcount[p];
        got = room(&x->got, x->wanted ? x->wanted : 1);
        MPI_Alltoallv(back, rcount, rdispl, MPI_BYTE, got, scount, sdispl, MPI_BYTE, x->comm);
    }
    /* A host that could not read fails the round for everyone, with its
     * message (the owners would otherwise write what they did not get). */
    err = agree_message(x->comm, myname, err);
    if (err == MPI_SUCCESS && x->nwant) {
        /* got holds each host's wants in slot order: where each want starts */
        uint64_t *start = ADIOI_Malloc(sizeof(uint64_t) * x->nwant);
        {
            uint64_t *off_of_slot = ADIOI_Malloc(sizeof(uint64_t) * x->nwant);
            uint64_t at = 0;
            for (size_t k = 0; k < x->nwant; k++) {
                off_of_slot[k] = at;
                at += sorted[k].len;
            }
            for (size_t i = 0; i < x->nwant; i++)
                start[i] = off_of_slot[slot[i]];
            ADIOI_Free(off_of_slot);
        }
        scatter(x, got, start);
        ADIOI_Free(start);
    }

  fn_exit:
    x->nwant = x->nplace = 0;
    x->wanted = 0;
    return err;
}

void ADIOI_BBFS_Exchange_count(const ADIOI_BBFS_Exchange * x, ADIOI_BBFS_Times * times)
{
    if (!x || !times)
        return;
    times->rounds += x->rounds;
    times->metalog_bytes += x->metalog_bytes;
    times->wants += x->wants;
    times->moved += x->moved;
    times->read_direct += x->read_direct;
}

void ADIOI_BBFS_Exchange_end(ADIOI_BBFS_Exchange * x)
{
    if (!x)
        return;
    for (int w = 0; x->far && w < x->nwriters; w++)
        ADIOI_BBFS_FREE(x->far[w]);
    ADIOI_BBFS_FREE(x->far);
    ADIOI_BBFS_FREE(x->gone);
    ADIOI_BBFS_FREE(x->absent);
    ADIOI_BBFS_FREE(x->host);
    ADIOI_BBFS_FREE(x->here);
    ADIOI_BBFS_FREE(x->want);
    ADIOI_BBFS_FREE(x->place);
    ADIOI_BBFS_FREE(x->scount);
    ADIOI_BBFS_FREE(x->rcount);
    ADIOI_BBFS_FREE(x->sdispl);
    ADIOI_BBFS_FREE(x->rdispl);
    ADIOI_BBFS_FREE(x->sbytes);
    ADIOI_BBFS_FREE(x->rbytes);
    struct buf *bufs[] = { &x->sorted, &x->slot, &x->asked, &x->back, &x->got, &x->span,
        &x->spans };
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        ADIOI_BBFS_FREE(bufs[i]->p);
    ADIOI_Free(x);
}
