/*
 * Replay: the logs of N writers become the canonical file, collectively over
 * M processes (M need not be N).  Every process plans all epochs from all
 * metalogs, which the processes that can read them (each writer's host, on
 * the writer's node) send to everyone (ad_bbfs_exchange.c); the plan is
 * deterministic, so all agree.  For each epoch a process takes one
 * contiguous file domain of about 1/M of the bytes, gets that domain's
 * bytes from the writers' hosts over MPI (one datalog range per strided run
 * when the domain is fully covered), and the epoch ends in one collective
 * write on the lower file.  Pieces that touch in the file
 * are merged, so the interleaved small pieces of a noncontig pattern become
 * one large contiguous block per process and ROMIO's two-phase I/O has no
 * holes to read around.  Epochs are applied in order.  Replay only reads
 * the logs, so a replay that died part way is simply run again.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/fault.h"
#include "../../logfs/planner.h"
#include "../../logfs/reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct piece_vec {
    struct logfs_replay_piece *p;
    size_t n, cap;
    uint64_t max;               /* longest piece kept: a round's bytes */
};

/* Rounds the piece list takes when each round gets whole pieces while
 * they fit (as the replay loop fills them). */
static uint64_t packed_rounds(const struct piece_vec *v, uint64_t round)
{
    uint64_t rounds = 0, bytes = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (bytes > 0 && bytes + v->p[i].length > round) {
            rounds++;
            bytes = 0;
        }
        bytes += v->p[i].length;
    }
    return rounds + (bytes > 0);
}

/* Pieces longer than a round are cut, so that no round holds more than
 * bbfs_replay_buffer bytes and every length fits an int (the planner
 * merges adjacent blocks: a checkpoint's pieces reach gigabytes). */
static int collect(void *arg, const struct logfs_replay_piece *p)
{
    struct piece_vec *v = arg;
    struct logfs_replay_piece q = *p;

    while (q.length > 0) {
        if (v->n == v->cap) {
            v->cap = v->cap ? 2 * v->cap : 1024;
            v->p = ADIOI_Realloc(v->p, v->cap * sizeof(*v->p));
        }
        v->p[v->n] = q;
        if (q.length > v->max)
            v->p[v->n].length = v->max;
        q.offset += v->p[v->n].length;
        q.dlog_off += v->p[v->n].length;
        q.length -= v->p[v->n].length;
        v->n++;
    }
    return 0;
}

struct replay {
    MPI_Comm comm;
    ADIO_File lower;
    struct logfs_plan *plan;
    ADIOI_BBFS_Datalogs logs;   /* the hosted writers' datalogs, opened on first use */
    ADIOI_BBFS_Exchange *x;     /* the data of the others, from their hosts */
    int nwriters;
    char *buf;
    uint64_t buf_cap;
    long long solo_rounds, solo_read;   /* (bbfs_timing's counts, solo) */
};

/* The data of pieces pc[0..n) (file order), packed into rp->buf. */
static void want_pieces(struct replay *rp, const struct logfs_replay_piece *pc, size_t n)
{
    uint64_t at = 0;

    for (size_t i = 0; i < n; i++) {
        ADIOI_BBFS_Exchange_want(rp->x, (int) pc[i].writer, pc[i].dlog_off, pc[i].length);
        ADIOI_BBFS_Exchange_place(rp->x, rp->buf + at, pc[i].length, 1, 0);
        at += pc[i].length;
    }
}

/* The same, alone with a log in memory (solo, below): read straight from
 * the writer, nothing to exchange. */
static int read_pieces_solo(struct replay *rp, const struct logfs_replay_piece *pc, size_t n)
{
    uint64_t at = 0;
    int err = MPI_SUCCESS;

    for (size_t i = 0; i < n && err == MPI_SUCCESS; i++) {
        err = ADIOI_BBFS_Datalogs_read(&rp->logs, (int) pc[i].writer, pc[i].dlog_off,
                                       rp->buf + at, (size_t) pc[i].length);
        at += pc[i].length;
    }
    rp->solo_read += (long long) at;
    return err;
}

/* ---- dense epochs: the domain is fully covered ------------------------
 * The usual case (every byte of a process's domain written by someone, as
 * in an interleaved noncontig pattern): the domain's runs are placed
 * straight into a buffer that mirrors the file range, one pread per run,
 * with no per-piece list and no sorting. */

struct run_vec {
    struct logfs_replay_run *r;
    size_t n, cap;
    uint64_t bytes;
};

static int collect_run(void *arg, const struct logfs_replay_run *r)
{
    struct run_vec *v = arg;

    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->r = ADIOI_Realloc(v->r, v->cap * sizeof(*v->r));
    }
    v->r[v->n++] = *r;
    v->bytes += r->blocklen * r->count;
    return 0;
}

/* The parts of runs that fall in file range [a, b), into rp->buf (which
 * mirrors [a, b)): one datalog range per run (a run's blocks are
 * consecutive in its datalog), placed block by block with a stride. */
static void want_range(struct replay *rp, const struct run_vec *v, uint64_t a, uint64_t b)
{
    for (size_t k = 0; k < v->n; k++) {
        const struct logfs_replay_run *r = &v->r[k];
        uint64_t stride = r->stride ? r->stride : r->blocklen, ilo, ihi;
        if (r->offset >= b || r->offset + (r->count - 1) * stride + r->blocklen <= a)
            continue;
        ilo = r->offset + r->blocklen > a ? 0 : (a - r->offset - r->blocklen) / stride + 1;
        ihi = (b - 1 - r->offset) / stride;
        if (ihi > r->count - 1)
            ihi = r->count - 1;
        if (ilo > ihi)
            continue;
        /* Only the first and the last block can be clipped, and only what
         * falls in [a, b) is asked for: a large block (a contiguous write
         * bigger than a round) was read, or sent, whole in every round. */
        uint64_t s_lo = r->offset + ilo * stride, s_hi = r->offset + ihi * stride;
        uint64_t head = a > s_lo ? a - s_lo : 0;
        uint64_t tail = s_hi + r->blocklen > b ? s_hi + r->blocklen - b : 0;
        ADIOI_BBFS_Exchange_want(rp->x, (int) r->writer, r->dlog_off + ilo * r->blocklen + head,
                                 (ihi - ilo + 1) * r->blocklen - head - tail);
        if (ilo == ihi) {
            ADIOI_BBFS_Exchange_place(rp->x, rp->buf + (s_lo + head - a),
                                      r->blocklen - head - tail, 1, 0);
            continue;
        }
        ADIOI_BBFS_Exchange_place(rp->x, rp->buf + (s_lo + head - a), r->blocklen - head, 1, 0);
        if (ihi > ilo + 1)
            ADIOI_BBFS_Exchange_place(rp->x, rp->buf + (r->offset + (ilo + 1) * stride - a),
                                      r->blocklen, ihi - ilo - 1, stride);
        ADIOI_BBFS_Exchange_place(rp->x, rp->buf + (s_hi - a), r->blocklen - tail, 1, 0);
    }
}

/* One collective write of pieces (file order, disjoint) whose data is
 * packed in rp->buf. */
static int write_round(struct replay *rp, const struct logfs_replay_piece *pc, size_t n,
                       uint64_t bytes)
{
    ADIO_File lo = rp->lower;
    ADIO_Status st;
    MPI_Datatype ftype = MPI_BYTE;
    ADIO_Offset start = 0;
    int err = MPI_SUCCESS, nblocks = 0;

    if (n > 0) {
        int *lens = ADIOI_Malloc(sizeof(int) * n);
        MPI_Aint *disps = ADIOI_Malloc(sizeof(MPI_Aint) * n);
        for (size_t i = 0; i < n; i++) {
            if (nblocks > 0 && (uint64_t) disps[nblocks - 1] + lens[nblocks - 1] == pc[i].offset
                && (uint64_t) lens[nblocks - 1] + pc[i].length < (1u << 30)) {
                lens[nblocks - 1] += (int) pc[i].length;
                continue;
            }
            disps[nblocks] = (MPI_Aint) pc[i].offset;
            lens[nblocks] = (int) pc[i].length;
            nblocks++;
        }
        if (nblocks == 1) {
            start = disps[0];
        } else {
            MPI_Type_create_hindexed(nblocks, lens, disps, MPI_BYTE, &ftype);
            MPI_Type_commit(&ftype);
        }
        ADIOI_BBFS_FREE(lens);
        ADIOI_BBFS_FREE(disps);
    }
    lo->disp = 0;
    lo->etype = MPI_BYTE;
    lo->etype_size = 1;
    lo->filetype = ftype;
    ADIO_WriteStridedColl(lo, rp->buf, (int) bytes, MPI_BYTE, ADIO_EXPLICIT_OFFSET, start, &st,
                          &err);
    lo->filetype = MPI_BYTE;
    if (ftype != MPI_BYTE)
        MPI_Type_free(&ftype);
    return err;
}

/* A dense domain's round (at most one piece), written by this process
 * alone. */
static int write_own(struct replay *rp, const struct logfs_replay_piece *pc, size_t n)
{
    ADIO_Status st;
    int err = MPI_SUCCESS;

    if (n == 0 || pc[0].length == 0)
        return MPI_SUCCESS;
    ADIO_WriteContig(rp->lower, rp->buf, (int) pc[0].length, MPI_BYTE, ADIO_EXPLICIT_OFFSET,
                     (ADIO_Offset) pc[0].offset, &st, &err);
    return err;
}

/* A failed write of the canonical file keeps its class (no space, I/O
 * error) and says what becomes of the data. */
int ADIOI_BBFS_Err_canonical_write(const char *myname, const char *canonical, int w_err)
{
    char why[MPI_MAX_ERROR_STRING];
    int cls, len;

    MPI_Error_class(w_err, &cls);
    MPI_Error_string(cls, why, &len);   /* the class's words: MPICH cuts long messages */
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, cls, "**io",
                                "bbfs: replay cannot write the file (%s); nothing is lost: the "
                                "logs stay for a reopen or bbfs-replay once it has room or "
                                "works: %s", why, canonical);
}

/* Apply one SETSIZE effect (resize collectively, as MPI_File_set_size does). */
static int resize_to(struct replay *rp, uint64_t size, int only_grow)
{
    static char myname[] = "ADIOI_BBFS_REPLAY_RESIZE";
    ADIO_Fcntl_t fc;
    long long cur[2] = { 0, MPI_SUCCESS };      /* size, process 0's error class */
    int rank, err = MPI_SUCCESS;

    MPI_Comm_rank(rp->comm, &rank);
    if (only_grow) {
        if (rank == 0) {
            ADIO_Fcntl(rp->lower, ADIO_FCNTL_GET_FSIZE, &fc, &err);
            cur[0] = err == MPI_SUCCESS ? fc.fsize : 0;
            if (err != MPI_SUCCESS) {
                int cls;
                MPI_Error_class(err, &cls);
                cur[1] = cls;
            }
        }
        MPI_Bcast(cur, 2, MPI_LONG_LONG, 0, rp->comm);
        if (cur[1] != MPI_SUCCESS)
            return rank == 0 ? err : MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                          myname, __LINE__, (int) cur[1],
                                                          "**io", "bbfs: cannot get the "
                                                          "file size on process 0 (see its "
                                                          "error)");
        if ((uint64_t) cur[0] >= size)
            return MPI_SUCCESS;
    }
    ADIO_Resize(rp->lower, (ADIO_Offset) size, &err);
    return err;
}

/* Salvage: what each writer left out took with it, so that whoever reads
 * the file knows which data is missing: its node (server) and the epochs
 * the manifest says its syncs and close had covered. */
static void report_lost(const ADIOI_BBFS_Exchange * x, const char *canonical,
                        char *const *metalogs, char *const *servers, const uint64_t * promised,
                        int nwriters)
{
    for (int w = 0; w < nwriters; w++) {
        if (!ADIOI_BBFS_Exchange_gone(x, w))
            continue;
        char epochs[96] = "every epoch it wrote";
        if (promised && promised[w])
            snprintf(epochs, sizeof(epochs), "epochs 1-%llu (synced or closed) and any it had "
                     "not synced", (unsigned long long) promised[w]);
        fprintf(stderr, "bbfs replay %s: lost: writer %d's %s, on %s%s (log %s); the file "
                "lacks them unless that node's storage comes back and bbfs-replay runs "
                "there\n", canonical, w, epochs, servers && servers[w] && *servers[w]
                ? "the node of bbserver " : "its node", servers && servers[w] && *servers[w]
                ? servers[w] : "", metalogs[w]);
    }
}

/* Alone, every process still makes the lower file's flush, whatever its
 * own outcome: with romio_synchronizing_flush the flush is a barrier of
 * the lower file's communicator, which every process of it enters. */
static void flush_anyway(ADIO_File lower)
{
    int ignored;
    ADIO_Flush(lower, &ignored);
}

/* A round of pieces (file order, disjoint, their data packed in rp->buf)
 * written by this process alone, one contiguous write per run of pieces
 * that touch (the own-log replay: ad_bbfs_pending.c's OWN_PIECES_MAX
 * keeps their number small). */
static int write_pieces_own(struct replay *rp, const struct logfs_replay_piece *pc, size_t n)
{
    ADIO_Status st;
    uint64_t at = 0;
    int err = MPI_SUCCESS;

    for (size_t i = 0; i < n && err == MPI_SUCCESS;) {
        uint64_t len = pc[i].length;
        size_t j = i + 1;
        while (j < n && pc[j - 1].offset + pc[j - 1].length == pc[j].offset
               && len + pc[j].length < (1u << 30))
            len += pc[j++].length;
        ADIO_WriteContig(rp->lower, rp->buf + at, (int) len, MPI_BYTE, ADIO_EXPLICIT_OFFSET,
                         (ADIO_Offset) pc[i].offset, &st, &err);
        at += len;
        i = j;
    }
    return err;
}

/* The replay of the logs of nsessions sessions, collective over comm; or,
 * alone, of this process's own log over MPI_COMM_SELF, writing the lower
 * file (whose communicator is larger) only with independent calls. */
static int replay_logs(MPI_Comm comm, ADIO_File lower, const char *canonical,
                       char *const *metalogs, char *const *servers, const int *counts,
                       int nsessions, const uint64_t * promised, const unsigned char *lazy,
                       const ADIOI_BBFS_Memlog * mem, const ADIOI_BBFS_Hints * h,
                       ADIOI_BBFS_Times * times, int alone)
{
    int nwriters = 0;
    size_t *ncounts = ADIOI_Malloc(sizeof(size_t) * nsessions);
    for (int i = 0; i < nsessions; i++) {
        ncounts[i] = (size_t) counts[i];
        nwriters += counts[i];
    }
    struct logfs_plan_opts po = { h->salvage, 0, NULL, alone };
    int progress = h->progress;
    uint64_t round_bytes = (uint64_t) h->replay_buffer;
    static char myname[] = "ADIOI_BBFS_REPLAY";
    struct replay rp = { comm, lower, NULL, { 0, NULL, NULL, mem }, NULL, nwriters, NULL, 0 };
    struct logfs_error le;
    struct piece_vec v = { NULL, 0, 0, round_bytes };
    struct run_vec rv = { NULL, 0, 0, 0 };
    int rank, nprocs, rc, err = MPI_SUCCESS;
    double t0 = MPI_Wtime(), lap = t0;
    uint64_t total = 0;
    int flushed = 0;
    int derived = 0;            /* err only says that another process failed */
    /* the seconds since the last lap go to part f of times */
#define LAP(f) do { if (times) { double now_ = MPI_Wtime(); times->f += now_ - lap; \
            lap = now_; } } while (0)

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    /* Solo: one process replays one writer whose logs are in its memory (a
     * private session's close): everything is here, and nothing is
     * exchanged; the plan and the writes are every replay's. */
    int solo = nprocs == 1 && nwriters == 1 && mem && mem->index == 0 && lower->is_open;
    /* Every writer's metalog, from the process that can read it. */
    struct logfs_metalog_src *srcs = NULL;
    char *meta_bytes = NULL;
    if (solo) {
        srcs = ADIOI_Calloc(1, sizeof(*srcs));
        srcs->metalog = metalogs[0];
        srcs->data = mem->metalog;
        srcs->len = mem->len;
    } else
        err = ADIOI_BBFS_Exchange_begin(comm, canonical, metalogs, servers, nwriters,
                                        h->salvage, h->server_timeout,
                                        !ADIOI_BBFS_Force_remote(h), lazy, &rp.logs, &rp.x,
                                        &srcs, &meta_bytes);
    if (err != MPI_SUCCESS) {
        ADIOI_Free(ncounts);
        goto fn_exit;
    }
    if (h->salvage && rank == 0 && rp.x)
        report_lost(rp.x, canonical, metalogs, servers, promised, nwriters);
    rc = logfs_plan_build_sessions_src(srcs, ncounts, (size_t) nsessions, &po, &rp.plan, &le);
    ADIOI_Free(srcs);
    ADIOI_BBFS_FREE(meta_bytes);        /* (none solo) */
    ADIOI_Free(ncounts);
    /* Logs that lost epochs their writers had closed fail the replay; with
     * salvage, what they still hold is replayed and the loss reported. */
    if (rc == LOGFS_OK && promised && (rc = logfs_plan_check_sealed(rp.plan, promised, &le))
        && h->salvage) {
        if (rank == 0)
            fprintf(stderr, "bbfs replay %s: %s\n", canonical, le.msg);
        rc = LOGFS_OK;
    }
    if (rc != LOGFS_OK) {
        char msg[LOGFS_ERRMSG_MAX + PATH_MAX];
        snprintf(msg, sizeof(msg), "cannot replay the logs of %s: %s", canonical, le.msg);
        err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
    }
    /* Every process planned the same bytes; one that could not (no
     * memory) says so at the first epoch's reduction, below, where all
     * stop together.  (The plan is the same everywhere: so is its count of
     * epochs, where none failed.) */
    int plan_failed = rc != LOGFS_OK;
    uint64_t nepochs = 0;
    if (!plan_failed) {
        /* (damage a salvage skipped was reported by the writer's host) */
        int add_rc;
        struct logfs_error add_le;
        ADIOI_BBFS_Datalogs_add(&rp.logs, rp.plan, INT_MAX, &add_rc, &add_le);  /* opens nothing */
        nepochs = logfs_plan_nepochs(rp.plan);
    }
    if (times)
        times->epochs += (long long) nepochs;
    LAP(metalogs);
    /* (at least one pass: its reduction agrees the planning) */
    for (uint64_t e = 0; e < nepochs || e == 0; e++) {
        struct logfs_resize rs = { 0, 0, 0 };
        uint64_t lo = 0, hi = 0, mine = 0;
        int have = e < nepochs;         /* (false: nothing to replay, or no plan here) */
        if (have)
            logfs_plan_resize(rp.plan, e, &rs);
        /* Dense if this process's runs cover its whole domain (runs never
         * share a byte); otherwise the piece list, merged into blocks. */
        rv.n = 0;
        rv.bytes = 0;
        /* (solo reads each piece from memory: the piece list) */
        int plan_rc = have && !solo ? logfs_plan_domain_runs(rp.plan, e, (uint32_t) rank,
                                                             (uint32_t) nprocs, &lo, &hi,
                                                             collect_run, &rv) : LOGFS_OK;
        if (have && logfs_fault("replay-plan") == ENOMEM)
            plan_rc = LOGFS_ENOMEM;
        int dense = !solo && plan_rc == LOGFS_OK && rv.bytes == hi - lo;
        v.n = 0;
        if (dense)
            mine = rv.bytes;
        else if (plan_rc == LOGFS_OK) {
            plan_rc = logfs_plan_domain(rp.plan, e, (uint32_t) rank, (uint32_t) nprocs, &lo, &hi,
                                        collect, &v);
            for (size_t i = 0; i < v.n; i++)
                mine += v.p[i].length;
        }
        /* A share this process cannot plan would be a share nobody writes:
         * the replay fails everywhere (below) and the logs stay. */
        if (plan_rc != LOGFS_OK && err == MPI_SUCCESS) {
            char msg[PATH_MAX + 160];
            snprintf(msg, sizeof(msg), "cannot plan this process's share of epoch %llu of the "
                     "replay of %s (out of memory?); the logs are kept for the next open or "
                     "bbfs-replay", (unsigned long long) e, canonical);
            err = ADIOI_BBFS_Err_logfs(myname, __LINE__, plan_rc, msg);
        }
        if (plan_rc != LOGFS_OK) {
            mine = 0;
            v.n = 0;
        }

        /* Rounds of at most bbfs_replay_buffer bytes bound the memory.  One
         * reduction per epoch both sizes the rounds and tells everyone
         * whether any process has failed so far (then all stop together).
         * Whole pieces go into a round while they fit, so this process needs
         * as many rounds as that packing takes, which may be more than its
         * bytes divided by the round (three pieces of 0.6 rounds take three). */
        uint64_t need = dense ? (mine + round_bytes - 1) / round_bytes : packed_rounds(&v, round_bytes);
        /* (and whether some process's domain has holes, or no lower file
         * open for independent writes: then the writes are collective) */
        long long mine_st[5] = { err != MPI_SUCCESS, (long long) need,
                                 mine ? (long long) hi : 0, !dense || !lower->is_open,
                                 plan_failed }, all_st[5];
        if (nprocs == 1)
            memcpy(all_st, mine_st, sizeof(all_st));
        else
            MPI_Allreduce(mine_st, all_st, 5, MPI_LONG_LONG, MPI_MAX, comm);
        /* Every domain dense: each process writes its own, contiguous, on
         * its own; a collective write would exchange nothing, and cost two
         * allgathers and, before it, growing the file to the epoch's end
         * (for the holes it reads: there are none).  The next epoch's
         * reduction comes after every write of this one, as the next
         * collective write would. */
        int independent = alone || solo || !all_st[3];
        if (all_st[0] && err == MPI_SUCCESS)
            derived = 1;
        if (all_st[0] && all_st[4] && err == MPI_SUCCESS)
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_IO, "**io", "bbfs: another process cannot "
                                       "read the logs of %s", canonical);
        if (all_st[0]) {
            if (err == MPI_SUCCESS)
                err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_IO, "**io", "bbfs: replay failed on another "
                                           "process");
            break;
        }
        if (!have)
            break;              /* (no epoch at all, alike everywhere) */
        long long rounds = all_st[1];
        size_t next = 0;
        LAP(plan);
        /* Resizes are collective too: everyone calls them, errors are
         * reported at the next check. */
        int rs_err = MPI_SUCCESS;
        if (rs.present && (rs_err = resize_to(&rp, rs.truncate_to, 0)) != MPI_SUCCESS
            && err == MPI_SUCCESS)
            err = rs_err;
        /* The file first reaches the epoch's end: a collective write reads
         * the holes between pieces to write them back (two-phase I/O), and
         * what it reads past the end of the file is not zeros but whatever
         * its buffer held (a one-byte hole between two jobs' data came out
         * 0xff: two-jobs.sh). */
        if (!independent && all_st[2] > 0
            && (rs_err = resize_to(&rp, (uint64_t) all_st[2], 1)) != MPI_SUCCESS
            && err == MPI_SUCCESS)
            err = rs_err;
        LAP(write);             /* (resizes write the file) */
        for (long long k = 0; k < rounds; k++) {
            struct logfs_replay_piece whole;
            const struct logfs_replay_piece *pc = NULL;
            size_t npc = 0;
            uint64_t bytes = 0;
            int my_err = MPI_SUCCESS;
            if (dense) {
                uint64_t a = lo + (uint64_t) k * round_bytes, b = a + round_bytes;
                if (b > hi)
                    b = hi;
                if (a < b) {
                    whole.offset = a;
                    whole.length = bytes = b - a;
                    pc = &whole;
                    npc = 1;
                }
            } else {
                size_t first = next;
                while (next < v.n && (bytes == 0 || bytes + v.p[next].length <= round_bytes))
                    bytes += v.p[next++].length;
                pc = v.p + first;
                npc = next - first;
            }
            if (bytes > rp.buf_cap) {
                ADIOI_BBFS_FREE(rp.buf);
                rp.buf = ADIOI_Malloc(bytes);
                rp.buf_cap = bytes;
            }
            if (err == MPI_SUCCESS && npc > 0) {
                if (solo)
                    my_err = read_pieces_solo(&rp, pc, npc);
                else if (dense)
                    want_range(&rp, &rv, whole.offset, whole.offset + bytes);
                else
                    want_pieces(&rp, pc, npc);
            }
            LAP(read);
            /* Every process takes part in every round's exchange. */
            if (!solo)
                my_err = ADIOI_BBFS_Exchange_round(rp.x, err != MPI_SUCCESS);
            else
                rp.solo_rounds++;
            LAP(exchange);
            if (my_err != MPI_SUCCESS && err == MPI_SUCCESS)
                err = my_err;
            /* The write is collective: a process that failed still takes
             * part, with nothing to write, and says so at the next check. */
            logfs_fault("replay-round");        /* (kill only) */
            int w_err = (alone || solo) && !dense
                ? write_pieces_own(&rp, pc, err == MPI_SUCCESS ? npc : 0)
                : independent ? write_own(&rp, pc, err == MPI_SUCCESS ? npc : 0)
                : write_round(&rp, pc, err == MPI_SUCCESS ? npc : 0,
                              err == MPI_SUCCESS ? bytes : 0);
            int injected = logfs_fault("canonical-write");
            if (injected && w_err == MPI_SUCCESS)
                w_err = ADIOI_Err_create_code(myname, canonical, injected);
            if (w_err != MPI_SUCCESS && err == MPI_SUCCESS)
                err = ADIOI_BBFS_Err_canonical_write(myname, canonical, w_err);
            LAP(write);
        }
        if (rs.present && (rs_err = resize_to(&rp, rs.extend_to, 1)) != MPI_SUCCESS
            && err == MPI_SUCCESS)
            err = rs_err;
        LAP(write);
        total += logfs_plan_epoch_bytes(rp.plan, e);
        logfs_fault("replay-epoch-done");       /* (kill only) between two epochs */
        if (progress && rank == 0) {
            double t = MPI_Wtime() - t0;
            fprintf(stderr, "bbfs replay %s: epoch %llu/%llu, %.1f MiB, %.1f MiB/s\n",
                    canonical, (unsigned long long) e + 1, (unsigned long long) nepochs,
                    total / 1048576.0, t > 0 ? total / 1048576.0 / t : 0.0);
        }
    }
    /* (rounds across nodes agree no errors of their own: a host that could
     * not read told the processes it served, and its message reaches all
     * here) */
    err = ADIOI_BBFS_Exchange_agree(rp.x, myname, err, derived);
    /* The logs are deleted after this.  With bbfs_durable they were on disk,
     * so the canonical file must be too before they go; without, both live
     * in the page cache and a process crash loses neither. */
    if (h->durable) {
        /* (the last epoch's errors were not agreed yet, and the flush can
         * be collective: romio_synchronized_flush) */
        err = ADIOI_BBFS_Agree_error(comm, myname, err);
        /* ROMIO's flush fsyncs only a file its driver marked as written,
         * and only the generic contiguous write marks it (the nfs, lustre
         * and xfs drivers' writes never do): this replay wrote it. */
        ADIOI_BBFS_MARK_WRITTEN(lower);
        if (err == MPI_SUCCESS)
            ADIO_Flush(lower, &err);
        else if (alone)
            flush_anyway(lower);
        flushed = 1;
    }
    LAP(write);
#undef LAP

  fn_exit:
    if (alone && h->durable && !flushed)
        flush_anyway(lower);
    ADIOI_BBFS_Exchange_count(rp.x, times);
    if (times) {
        times->rounds += rp.solo_rounds;
        times->read_direct += rp.solo_read;
    }
    ADIOI_BBFS_Exchange_end(rp.x);
    ADIOI_BBFS_Datalogs_free(&rp.logs);
    ADIOI_BBFS_FREE(rp.buf);
    ADIOI_BBFS_FREE(v.p);
    ADIOI_BBFS_FREE(rv.r);
    logfs_plan_free(rp.plan);
    return err;
}

int ADIOI_BBFS_Replay(MPI_Comm comm, ADIO_File lower, const char *canonical,
                      char *const *metalogs, char *const *servers, const int *counts,
                      int nsessions, const uint64_t * promised, const unsigned char *lazy,
                      const ADIOI_BBFS_Memlog * mem, const ADIOI_BBFS_Hints * h,
                      ADIOI_BBFS_Times * times)
{
    return replay_logs(comm, lower, canonical, metalogs, servers, counts, nsessions, promised,
                       lazy, mem, h, times, 0);
}

int ADIOI_BBFS_Replay_own(ADIO_File lower, const char *canonical, char *metalog, char *server,
                          const ADIOI_BBFS_Memlog * mem, const ADIOI_BBFS_Hints * h,
                          ADIOI_BBFS_Times * times)
{
    int one = 1;
    ADIOI_BBFS_Memlog alone;    /* (writer 0 of the plan of this log alone) */
    if (mem) {
        alone = *mem;
        alone.index = 0;
    }
    if (times)
        times->own_replays++;
    return replay_logs(MPI_COMM_SELF, lower, canonical, &metalog, &server, &one, 1, NULL, NULL,
                       mem ? &alone : NULL, h, times, 1);
}
