/*
 * Replay: the logs of N writers become the canonical file, collectively over
 * M processes (M need not be N).  Every process plans all epochs from all
 * metalogs (the plan is deterministic, so all agree without talking); for
 * each epoch it takes one contiguous file domain of about 1/M of the bytes,
 * reads that domain's pieces from the writers' datalogs (one pread per
 * strided run when the domain is fully covered), and the epoch ends in one
 * collective write on the lower file.  Pieces that touch in the file
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
#include <sys/uio.h>
#include <unistd.h>

#define REPLAY_CHUNK_BYTES ((uint64_t) 4 << 20)       /* datalog bytes read at once */

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
    ADIOI_BBFS_Datalogs logs;   /* every writer's datalog, opened on first use */
    int nwriters;
    char *buf;
    uint64_t buf_cap;
};

/* Where one writer's bytes for a round are, in its datalog. */
struct span {
    uint64_t lo, hi, needed;
    char *data;                 /* [lo, hi) of the datalog, when read at once */
};

/* Read the data of pieces pc[0..n) (file order) into rp->buf, packed.  A
 * process's domain holds about 1/M of each writer's bytes, and a writer's
 * bytes for a domain lie close together in its datalog (strided writes are
 * logged contiguously): so each writer's span is read with one pread when it
 * is not much larger than what is needed, instead of one per piece. */
static int gather_data(struct replay *rp, const struct logfs_replay_piece *pc, size_t n,
                       int *err)
{
    struct span *sp = ADIOI_Calloc(rp->nwriters, sizeof(*sp));
    uint64_t at = 0;
    int rc = -1;

    for (size_t i = 0; i < n; i++) {
        struct span *s = &sp[pc[i].writer];
        if (s->needed == 0 || pc[i].dlog_off < s->lo)
            s->lo = pc[i].dlog_off;
        if (pc[i].dlog_off + pc[i].length > s->hi)
            s->hi = pc[i].dlog_off + pc[i].length;
        s->needed += pc[i].length;
    }
    for (int w = 0; w < rp->nwriters; w++) {
        struct span *s = &sp[w];
        if (s->needed == 0 || s->hi - s->lo > 2 * s->needed + ((uint64_t) 4 << 20))
            continue;
        s->data = ADIOI_Malloc(s->hi - s->lo);
        if ((*err = ADIOI_BBFS_Datalogs_read(&rp->logs, w, s->lo, s->data, s->hi - s->lo)))
            goto fn_exit;
    }
    for (size_t i = 0; i < n; i++) {
        struct span *s = &sp[pc[i].writer];
        if (s->data) {
            memcpy(rp->buf + at, s->data + (pc[i].dlog_off - s->lo), pc[i].length);
        } else if ((*err = ADIOI_BBFS_Datalogs_read(&rp->logs, (int) pc[i].writer,
                                                    pc[i].dlog_off, rp->buf + at,
                                                    pc[i].length))) {
            goto fn_exit;
        }
        at += pc[i].length;
    }
    rc = 0;
  fn_exit:
    for (int w = 0; w < rp->nwriters; w++)
        ADIOI_BBFS_FREE(sp[w].data);
    ADIOI_Free(sp);
    return rc;
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
        v->cap = v->cap ? 2 * v->cap : 64;
        v->r = ADIOI_Realloc(v->r, v->cap * sizeof(*v->r));
    }
    v->r[v->n++] = *r;
    v->bytes += r->blocklen * r->count;
    return 0;
}

/* Blocks at least this long are read straight to their place in the round
 * buffer, LOGFS_READV_MAX blocks per scatter read; shorter ones are read in
 * one piece and copied out, cheaper than an iovec entry per few bytes. */
#define REPLAY_SCATTER_MIN 512

/* Blocks c0..c1 of run r, clipped to [a, b), straight into rp->buf (which
 * mirrors [a, b)).  Only the first and last blocks of the range can be
 * clipped, so the datalog bytes read are consecutive. */
static int scatter_blocks(struct replay *rp, const struct logfs_replay_run *r, uint64_t stride,
                          uint64_t c0, uint64_t c1, uint64_t a, uint64_t b)
{
    struct iovec iov[LOGFS_READV_MAX];
    uint64_t dlog = 0;
    int n = 0;

    for (uint64_t i = c0; i <= c1; i++) {
        uint64_t s = r->offset + i * stride, e = s + r->blocklen;
        uint64_t from = s > a ? s : a, to = e < b ? e : b;
        if (i == c0)
            dlog = r->dlog_off + i * r->blocklen + (from - s);
        iov[n].iov_base = rp->buf + (from - a);
        iov[n++].iov_len = to - from;
    }
    return ADIOI_BBFS_Datalogs_readv(&rp->logs, (int) r->writer, dlog, iov, n);
}

/* Blocks c0..c1 of run r through tmp (one read), then one copy per block. */
static int copy_blocks(struct replay *rp, const struct logfs_replay_run *r, uint64_t stride,
                       uint64_t c0, uint64_t c1, uint64_t a, uint64_t b, char *tmp)
{
    int err = ADIOI_BBFS_Datalogs_read(&rp->logs, (int) r->writer,
                                       r->dlog_off + c0 * r->blocklen, tmp,
                                       (c1 - c0 + 1) * r->blocklen);
    if (err != MPI_SUCCESS)
        return err;
    for (uint64_t i = c0; i <= c1; i++) {
        uint64_t s = r->offset + i * stride, e = s + r->blocklen;
        uint64_t from = s > a ? s : a, to = e < b ? e : b;
        memcpy(rp->buf + (from - a), tmp + (i - c0) * r->blocklen + (from - s), to - from);
    }
    return MPI_SUCCESS;
}

/* Copy the parts of runs that fall in file range [a, b) into rp->buf
 * (which mirrors [a, b)). */
static int fill_range(struct replay *rp, const struct run_vec *v, uint64_t a, uint64_t b,
                      int *err)
{
    char *tmp = NULL;
    uint64_t tmp_cap = 0;

    *err = MPI_SUCCESS;
    for (size_t k = 0; k < v->n && *err == MPI_SUCCESS; k++) {
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
        int scatter = r->blocklen >= REPLAY_SCATTER_MIN;
        uint64_t per = scatter ? LOGFS_READV_MAX
            : (REPLAY_CHUNK_BYTES / r->blocklen ? REPLAY_CHUNK_BYTES / r->blocklen : 1);
        for (uint64_t c0 = ilo; c0 <= ihi && *err == MPI_SUCCESS; c0 += per) {
            uint64_t c1 = c0 + per - 1 < ihi ? c0 + per - 1 : ihi;
            uint64_t len = (c1 - c0 + 1) * r->blocklen;
            if (scatter) {
                *err = scatter_blocks(rp, r, stride, c0, c1, a, b);
                continue;
            }
            if (len > tmp_cap) {
                ADIOI_BBFS_FREE(tmp);
                tmp = ADIOI_Malloc(len);
                tmp_cap = len;
            }
            *err = copy_blocks(rp, r, stride, c0, c1, a, b, tmp);
        }
    }
    ADIOI_BBFS_FREE(tmp);
    return *err == MPI_SUCCESS ? 0 : -1;
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

/* A failed write of the canonical file keeps its class (no space, I/O
 * error) and says what becomes of the data. */
static int canonical_write_failed(const char *myname, const char *canonical, int w_err)
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

int ADIOI_BBFS_Replay(MPI_Comm comm, ADIO_File lower, const char *canonical,
                      char *const *metalogs, const int *counts, int nsessions,
                      const uint64_t * promised, const ADIOI_BBFS_Hints * h)
{
    int nwriters = 0;
    size_t *ncounts = ADIOI_Malloc(sizeof(size_t) * nsessions);
    for (int i = 0; i < nsessions; i++) {
        ncounts[i] = (size_t) counts[i];
        nwriters += counts[i];
    }
    struct logfs_plan_opts po = { h->salvage, 0 };
    int progress = h->progress;
    uint64_t round_bytes = (uint64_t) h->replay_buffer;
    static char myname[] = "ADIOI_BBFS_REPLAY";
    struct replay rp = { comm, lower, NULL, { 0, NULL, NULL }, nwriters, NULL, 0 };
    struct logfs_error le;
    struct piece_vec v = { NULL, 0, 0, round_bytes };
    struct run_vec rv = { NULL, 0, 0, 0 };
    int rank, nprocs, rc, err = MPI_SUCCESS, failed;
    double t0 = MPI_Wtime();
    uint64_t total = 0;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    rc = logfs_plan_build_sessions((const char *const *) metalogs, ncounts, (size_t) nsessions,
                                   &po, &rp.plan, &le);
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
    MPI_Allreduce(&rc, &failed, 1, MPI_INT, MPI_MAX, comm);
    if (failed != LOGFS_OK) {
        if (err == MPI_SUCCESS)
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_IO, "**io", "bbfs: another process cannot "
                                       "read the logs of %s", canonical);
        goto fn_exit;
    }

    for (int w = 0; h->salvage && rank == 0 && w < nwriters; w++) {
        const char *warn = logfs_plan_warning(rp.plan, (uint32_t) w);
        if (warn)
            fprintf(stderr, "bbfs replay %s: writer %d not fully recovered: %s\n", canonical, w,
                    warn);
    }
    int add_rc;
    struct logfs_error add_le;
    ADIOI_BBFS_Datalogs_add(&rp.logs, rp.plan, INT_MAX, &add_rc, &add_le);      /* opens nothing */
    uint64_t nepochs = logfs_plan_nepochs(rp.plan);
    for (uint64_t e = 0; e < nepochs; e++) {
        struct logfs_resize rs;
        uint64_t lo, hi, mine = 0;
        logfs_plan_resize(rp.plan, e, &rs);
        /* Dense if this process's runs cover its whole domain (runs never
         * share a byte); otherwise the piece list, merged into blocks. */
        rv.n = 0;
        rv.bytes = 0;
        int plan_rc = logfs_plan_domain_runs(rp.plan, e, (uint32_t) rank, (uint32_t) nprocs,
                                             &lo, &hi, collect_run, &rv);
        if (logfs_fault("replay-plan") == ENOMEM)
            plan_rc = LOGFS_ENOMEM;
        int dense = plan_rc == LOGFS_OK && rv.bytes == hi - lo;
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
        long long mine_st[3] = { err != MPI_SUCCESS, (long long) need,
                                 mine ? (long long) hi : 0 }, all_st[3];
        MPI_Allreduce(mine_st, all_st, 3, MPI_LONG_LONG, MPI_MAX, comm);
        if (all_st[0]) {
            if (err == MPI_SUCCESS)
                err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_IO, "**io", "bbfs: replay failed on another "
                                           "process");
            break;
        }
        long long rounds = all_st[1];
        size_t next = 0;
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
        if (all_st[2] > 0 && (rs_err = resize_to(&rp, (uint64_t) all_st[2], 1)) != MPI_SUCCESS
            && err == MPI_SUCCESS)
            err = rs_err;
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
            if (err == MPI_SUCCESS && npc > 0
                && (dense ? fill_range(&rp, &rv, whole.offset, whole.offset + bytes, &my_err)
                    : gather_data(&rp, pc, npc, &my_err)) != 0)
                err = my_err;
            /* The write is collective: a process that failed still takes
             * part, with nothing to write, and says so at the next check. */
            logfs_fault("replay-round");        /* (kill only) */
            int w_err = write_round(&rp, pc, err == MPI_SUCCESS ? npc : 0,
                                    err == MPI_SUCCESS ? bytes : 0);
            int injected = logfs_fault("canonical-write");
            if (injected && w_err == MPI_SUCCESS)
                w_err = ADIOI_Err_create_code(myname, canonical, injected);
            if (w_err != MPI_SUCCESS && err == MPI_SUCCESS)
                err = canonical_write_failed(myname, canonical, w_err);
        }
        if (rs.present && (rs_err = resize_to(&rp, rs.extend_to, 1)) != MPI_SUCCESS
            && err == MPI_SUCCESS)
            err = rs_err;
        total += logfs_plan_epoch_bytes(rp.plan, e);
        logfs_fault("replay-epoch-done");       /* (kill only) between two epochs */
        if (progress && rank == 0) {
            double t = MPI_Wtime() - t0;
            fprintf(stderr, "bbfs replay %s: epoch %llu/%llu, %.1f MiB, %.1f MiB/s\n",
                    canonical, (unsigned long long) e + 1, (unsigned long long) nepochs,
                    total / 1048576.0, t > 0 ? total / 1048576.0 / t : 0.0);
        }
    }
    /* The logs are deleted after this.  With bbfs_durable they were on disk,
     * so the canonical file must be too before they go; without, both live
     * in the page cache and a process crash loses neither. */
    if (err == MPI_SUCCESS && h->durable)
        ADIO_Flush(lower, &err);

  fn_exit:
    ADIOI_BBFS_Datalogs_free(&rp.logs);
    ADIOI_BBFS_FREE(rp.buf);
    ADIOI_BBFS_FREE(v.p);
    ADIOI_BBFS_FREE(rv.r);
    logfs_plan_free(rp.plan);
    return err;
}
