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
#include "ad_bbfs_exchange.h"
#include "adioi.h"
#include "../../logfs/planner.h"
#include "../../logfs/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most writers a replay reads directly (each process may open them all). */
#define DIRECT_MAX_WRITERS 256

/* (an error only one process saw would otherwise reach the others as
 * "failed on another process", without what to do) */
int ADIOI_BBFS_Exchange_agree_message(MPI_Comm comm, const char *myname, int err, int derived)
{
    struct {
        int cls;
        char msg[MPI_MAX_ERROR_STRING];
    } m;
    int rank, nprocs, first, mine;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    if (nprocs == 1)
        return err;             /* (alone: its own message; an own-log replay's case) */
    derived = derived && err != MPI_SUCCESS;
    mine = err == MPI_SUCCESS ? INT_MAX : derived ? nprocs + rank : rank;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX)
        return MPI_SUCCESS;
    if (first >= nprocs)
        first -= nprocs;
    memset(&m, 0, sizeof(m));
    if (rank == first) {
        MPI_Error_class(err, &m.cls);
        ADIOI_BBFS_Error_text(err, 0, m.msg, sizeof(m.msg));
    }
    MPI_Bcast(&m, (int) sizeof(m), MPI_BYTE, first, comm);
    if (err != MPI_SUCCESS && (!derived || rank == first))
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
    if (x->nprocs == 1)
        memcpy(all, mine, slot);
    else
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
    if ((err = choose_hosts(x, canonical, metalogs, servers, salvage, myname)) != MPI_SUCCESS)
        goto fn_fail;
    if (!x->direct) {           /* (direct rounds exchange nothing) */
        x->scount = ADIOI_Calloc(x->nprocs, sizeof(int));
        x->rcount = ADIOI_Calloc(x->nprocs, sizeof(int));
        x->sdispl = ADIOI_Calloc(x->nprocs, sizeof(int));
        x->rdispl = ADIOI_Calloc(x->nprocs, sizeof(int));
        x->sbytes = ADIOI_Calloc(x->nprocs, sizeof(long long));
        x->rbytes = ADIOI_Calloc(x->nprocs, sizeof(long long));
    }
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
    if ((err = ADIOI_BBFS_Exchange_agree_message(comm, myname, err, 0)) != MPI_SUCCESS)
        goto fn_fail;
    if (salvage && x->nprocs > 1)       /* (writers only their hosts found out of reach) */
        MPI_Allreduce(MPI_IN_PLACE, x->gone, nwriters, MPI_UNSIGNED_CHAR, MPI_MAX, comm);

    all_lens = ADIOI_Malloc(sizeof(long long) * (nwriters ? nwriters : 1));
    if (x->nprocs == 1)
        memcpy(all_lens, lens, sizeof(long long) * (size_t) nwriters);
    else
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
    x->metalog_bytes = total;
    if (x->nprocs == 1 && mine) {
        bytes = mine;           /* (alone: its own bytes are all) */
        mine = NULL;
    } else {
        bytes = ADIOI_Malloc(total ? total : 1);
        MPI_Allgatherv(mine, (int) nmine, MPI_BYTE, bytes, counts, displs, MPI_BYTE, comm);
    }

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
        &x->spans, &x->said };
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        ADIOI_BBFS_FREE(bufs[i]->p);
    ADIOI_Free(x);
}
