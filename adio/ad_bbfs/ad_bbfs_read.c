/*
 * Reads on a logging bbfs file.  For each byte the newest source wins:
 *
 *   1. this process's writes of the current (open) epoch, from its own log;
 *   2. every writer's synced writes (this process's included), newest epoch
 *      first, from the writer's datalog: on one node the other processes'
 *      datalogs are files here (across nodes it is bbserver's job); other
 *      handles' sessions on the file too, placed in time with this one's
 *      (logfs_plan_build_sessions);
 *   3. the canonical file, through the lower driver.
 *
 * Under session consistency (1) covers all of this process's epochs since
 * the open, and (2) holds only other handles' closed sessions (closed while
 * another handle stayed open, so the open could not replay them), looked
 * at once, at the first read after the open.
 *
 * One request may be served from all three.  When (2) is looked at depends
 * on bbfs_consistency:
 *
 *   mpiio    rebuilt from the metalogs after a sync point, when the next read
 *            needs it (so a write-only job never pays for it);
 *   commit   rebuilt before every read (others' syncs are not announced);
 *   posix    rebuilt before every read, including writes not yet synced
 *            (writers flush after every write);
 *   session  once after the open, and only when other sessions were
 *            there: others' writes show only after close and a new open.
 *
 * ("Rebuilt" from the metalogs: while this handle's session is the file's
 * only one, by putting what was logged since the last look over it,
 * build_remote.)
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/manifest.h"
#include "../../logfs/planner.h"
#include "../../logfs/rangemap.h"
#include "../../logfs/reader.h"
#include "../../logfs/writer.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void ADIOI_BBFS_Remote_reset(ADIOI_BBFS_File * bf)
{
    /* (view_sizes and view_marks stay: build_remote refills them, close
     * frees them) */
    logfs_rangemap_destroy(bf->remote);
    bf->remote = NULL;
    bf->remote_solo = 0;
    bf->view_keyed = 0;
    bf->view_lo = bf->view_hi = 0;
    ADIOI_BBFS_NEWS(bf);
    bf->size_keyed = 0;
    ADIOI_BBFS_Datalogs_free(&bf->datalogs);
}

struct remote_build {
    struct logfs_rangemap *map;
    ADIO_Offset end;
    long long pieces;
    struct logfs_strided *runs; /* one epoch's, put in the map together */
    size_t nruns, cap;
};

/* A run of an epoch's domain: gathered, so that the blocks of runs that
 * interleave (HDF5's strided datasets: 4 writers, 2^20 8-byte blocks each)
 * go into the map in file order, as appends, with no merge of pieces. */
static int add_remote_run(void *arg, const struct logfs_replay_run *r)
{
    struct remote_build *rb = arg;

    if (rb->nruns == rb->cap) {
        rb->cap = rb->cap ? 2 * rb->cap : 64;
        rb->runs = ADIOI_Realloc(rb->runs, rb->cap * sizeof(*rb->runs));
    }
    struct logfs_strided *s = &rb->runs[rb->nruns++];
    s->start = r->offset;
    s->len = r->blocklen;
    s->count = r->count;
    s->stride = r->stride;
    s->owner = (int32_t) r->writer;
    s->pos = r->dlog_off;
    rb->pieces += (long long) r->count;
    ADIO_Offset end = (ADIO_Offset) (r->offset + (r->count - 1) * r->stride + r->blocklen);
    if (end > rb->end)
        rb->end = end;
    return 0;
}

/* This handle's writers' metalogs and seals stay open from the first view
 * until the logs end (free_metalogs): a program that reads after every
 * MPI synchronization looks at them each time, and opening, checking and
 * closing two files per writer cost 5x stock's read (call-cost fresh8). */
static struct logfs_kept_log *view_logs(ADIOI_BBFS_File * bf)
{
    if (!bf->view_logs) {
        bf->view_logs = ADIOI_Malloc(sizeof(*bf->view_logs) * bf->nwriters);
        for (int r = 0; r < bf->nwriters; r++)
            bf->view_logs[r] = (struct logfs_kept_log) LOGFS_KEPT_LOG_INIT;
    }
    return bf->view_logs;
}

void ADIOI_BBFS_View_logs_close(ADIOI_BBFS_File * bf)
{
    for (int r = 0; bf->view_logs && r < bf->nwriters; r++)
        logfs_kept_log_close(&bf->view_logs[r]);
    ADIOI_BBFS_FREE(bf->view_logs);
    bf->view_logs = NULL;       /* (free_metalogs runs at each end of the logs) */
}

/* Whether writer r of this handle is this process's writer. */
static int own_metalog(const ADIOI_BBFS_File * bf, int r)
{
    return bf->writer && !strcmp(logfs_writer_metalog_path(bf->writer), bf->metalogs[r]);
}

/* The metalog sizes of this handle's writers, or 0 where one cannot be
 * read: a cheap test of whether anyone logged anything since.  (This
 * process's own, its writer knows.) */
static void metalog_sizes(const ADIOI_BBFS_File * bf, long long *out)
{
    struct stat sb;
    for (int r = 0; r < bf->nwriters; r++) {
        if (own_metalog(bf, r)) {
            out[r] = (long long) logfs_writer_metalog_length(bf->writer);
            continue;
        }
        int fd = bf->view_logs ? bf->view_logs[r].metalog : -1;
        int got = fd >= 0 ? fstat(fd, &sb) : stat(bf->metalogs[r], &sb);
        out[r] = got == 0 ? (long long) sb.st_size : 0;
    }
}

/* Under commit and posix every read must see what others logged up to
 * then; rebuilding the view costs a plan of all the logs, so it is rebuilt
 * only when some metalog grew (reads between writes are the common case:
 * HDF5 reads its metadata in many small reads).  Other handles' sessions
 * are not watched this way: with any, the view is rebuilt every time. */
/* Whether some metalog's size differs from then[] (metalog_sizes').  The
 * sizes it took serve the plan that follows a change (plan_sizes): a
 * second look would cost a system call per writer again, and sizes taken
 * a little earlier are as good (a log that grew in between shows next
 * time). */
static int metalogs_changed(ADIOI_BBFS_File * bf, const long long *then)
{
    if (!bf->sizes_seen)
        bf->sizes_seen = ADIOI_Malloc(sizeof(long long) * bf->nwriters);
    metalog_sizes(bf, bf->sizes_seen);
    int changed = memcmp(bf->sizes_seen, then, sizeof(long long) * bf->nwriters) != 0;
    bf->sizes_seen_valid = changed;
    return changed;
}

/* The metalog sizes before a plan: the ones metalogs_changed just took,
 * else taken now. */
static void plan_sizes(ADIOI_BBFS_File * bf, long long *out)
{
    if (bf->sizes_seen_valid)
        memcpy(out, bf->sizes_seen, sizeof(long long) * bf->nwriters);
    else
        metalog_sizes(bf, out);
    bf->sizes_seen_valid = 0;
}

static int logs_grew(ADIOI_BBFS_File * bf)
{
    if (!bf->remote || !bf->view_sizes || bf->others_live || !bf->metalogs)
        return 1;
    return metalogs_changed(bf, bf->view_sizes);
}

/* Which writer's datalog holds each synced byte, newest epoch winning. */
static int remote_needs_rebuild(ADIOI_BBFS_File * bf)
{
    int c = bf->hints.consistency;
    bf->sizes_seen_valid = 0;   /* (only this call's own look serves its plan) */
    if (bf->acquired) {         /* (causal: ad_bbfs_sync.c) */
        bf->acquired = 0;
        if (logs_grew(bf))
            return 1;
    }
    return bf->remote_stale
        || ((c == ADIOI_BBFS_CONSISTENCY_COMMIT || c == ADIOI_BBFS_CONSISTENCY_POSIX)
            && logs_grew(bf))
        || (ADIOI_BBFS_View_has_own(bf) && bf->own_unflushed);
}

/* The epochs of plan into rb's map, in order (later ones overwrite). */
static int add_plan(struct remote_build *rb, const struct logfs_plan *plan)
{
    uint64_t lo, hi;
    int rc = LOGFS_OK;

    for (uint64_t e = 0; rc == LOGFS_OK && e < logfs_plan_nepochs(plan); e++) {
        struct logfs_resize rs;
        rb->nruns = 0;
        rc = logfs_plan_domain_runs(plan, e, 0, 1, &lo, &hi, add_remote_run, rb);
        if (rc == LOGFS_OK && rb->nruns > 0)
            rc = logfs_rangemap_insert_strided(rb->map, rb->runs, rb->nruns);
        /* a logged set_size only ever grows the file (ADIOI_BBFS_Resize) */
        if (rc == LOGFS_OK && logfs_plan_resize(plan, e, &rs) == LOGFS_OK && rs.present
            && (ADIO_Offset) rs.extend_to > rb->end)
            rb->end = (ADIO_Offset) rs.extend_to;
    }
    ADIOI_BBFS_FREE(rb->runs);
    rb->cap = rb->nruns = 0;
    return rc;
}

/* Whether the view holds this handle's session: not under session
 * consistency, where this process's writes come from its own log and the
 * others' of this handle stay unseen until the close. */
static int own_in_view(const ADIOI_BBFS_File * bf)
{
    /* (a private session's writes are all its writer's: ad_bbfs_private.c) */
    return bf->metalogs && !bf->unpublished
        && bf->hints.consistency != ADIOI_BBFS_CONSISTENCY_SESSION;
}

/* One plan of this handle's session (its writers first, keeping their
 * ranks; not under session consistency, own_in_view) and every other
 * session of the file: other handles still open (not under session), or
 * closed while one was.  Their datalogs are opened now, so that a
 * replay that removes them later cannot break reads of this view.
 * @p sizes: this handle's metalogs' sizes taken before (plan_sizes), which
 * the others' are planned up to, a look at each fewer (this process's own
 * log may have been flushed since: its writer says how far).
 * LOGFS_ENOENT: a session was replayed and removed meanwhile (by the last
 * handle of another job); the caller looks again. */
static int plan_sessions(ADIOI_BBFS_File * bf, const long long *sizes,
                         const struct logfs_plan_opts *po_in, struct logfs_plan **plan,
                         struct logfs_error *le, int *err)
{
    struct logfs_manifest *ms;
    int n, rc = LOGFS_OK, ns = 0, nw = 0;
    int own = own_in_view(bf);
    struct logfs_plan_opts po_all = *po_in, *po = &po_all;

    *plan = NULL;
    /* (under session only closed sessions: an open handle's writes are not
     * promised, and one that synced before this handle's own newer writes
     * went to the file, by atomic mode or a truncation, would hide them) */
    int closed_only = bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_SESSION;
    if ((*err = ADIOI_BBFS_Manifest_others(bf, closed_only, &ms, &n)) != MPI_SUCCESS)
        return LOGFS_EIO;
    bf->others_live = n;
    if (n > 0 || !own)
        po_all.resume = NULL;   /* (the caller sees others_live) */
    for (int i = 0; i < n; i++)
        nw += (int) ms[i].nwriters;
    nw += own ? bf->nwriters : 0;
    if (nw > 0) {
        struct logfs_metalog_src *srcs = ADIOI_Calloc(nw, sizeof(*srcs));
        size_t *counts = ADIOI_Malloc(sizeof(size_t) * (n + 1));
        int at = 0;
        if (own) {
            struct logfs_kept_log *kept = view_logs(bf);
            for (int r = 0; r < bf->nwriters; r++, at++) {
                srcs[at].metalog = bf->metalogs[r];
                srcs[at].kept = &kept[r];
                srcs[at].absent_ok = bf->lazy;  /* (a writer with no files yet released nothing) */
                if (own_metalog(bf, r))
                    srcs[at].size = logfs_writer_metalog_length(bf->writer);
                else if (sizes && sizes[r] > 0)
                    srcs[at].size = (uint64_t) sizes[r];
            }
            counts[ns++] = (size_t) bf->nwriters;
        }
        for (int i = 0; i < n; i++) {
            for (uint32_t w = 0; w < ms[i].nwriters; w++, at++) {
                srcs[at].metalog = ms[i].w[w].metalog;
                srcs[at].absent_ok = ms[i].lazy;
            }
            counts[ns++] = ms[i].nwriters;
        }
        rc = logfs_plan_build_sessions_src(srcs, counts, (size_t) ns, po, plan, le);
        ADIOI_Free(srcs);
        ADIOI_Free(counts);
        /* writer r of this handle is datalog r, read through its writer
         * when it is this process's: only other sessions' are opened now
         * (the last view's serve again when the plan names the same) */
        if (rc == LOGFS_OK && !ADIOI_BBFS_Datalogs_same(&bf->datalogs, *plan)) {
            ADIOI_BBFS_Datalogs_free(&bf->datalogs);
            if (ADIOI_BBFS_Datalogs_add(&bf->datalogs, *plan, own ? bf->nwriters : 0, &rc,
                                        le) < 0) {
                logfs_plan_free(*plan);
                *plan = NULL;
            }
        }
    }
    ADIOI_BBFS_Manifest_free_all(ms, n);
    return rc;
}

/* Whether the plan, made of what this handle's writers logged after the
 * view in bf->remote, extends that view exactly: its ops all come after
 * the view's latest (logfs_plan_key_bounds).  A write that another process
 * made before one the view holds, but logged after the view was built,
 * makes the caller build the view again from scratch. */
static int extends_view(const ADIOI_BBFS_File * bf, const struct logfs_plan *plan)
{
    struct logfs_plan_key first, last;
    if (!logfs_plan_key_bounds(plan, &first, &last) || !bf->view_keyed)
        return 1;
    return logfs_plan_key_cmp(&first, &bf->view_last) >= 0;
}

/* After a view of this handle's session alone: where it stopped reading
 * each metalog, so that the next one reads (and plans) only what was
 * logged since: a program that reads after every synchronization would
 * otherwise read its logs whole each time, a quadratic sum. */
static void note_view_marks(ADIOI_BBFS_File * bf, const struct logfs_plan *plan)
{
    struct logfs_plan_key first, last;
    if (!bf->view_marks)
        bf->view_marks = ADIOI_Malloc(sizeof(*bf->view_marks) * bf->nwriters);
    memset(bf->view_marks, 0, sizeof(*bf->view_marks) * bf->nwriters);
    for (int r = 0; plan && r < bf->nwriters; r++)
        logfs_plan_mark(plan, (uint32_t) r, &bf->view_marks[r]);
    if (plan && logfs_plan_key_bounds(plan, &first, &last)) {
        bf->view_last = last;   /* (not before the last view's: extends_view) */
        bf->view_keyed = 1;
    }
}

/* The view of synced writes: every session of the file in one plan, so
 * that where two handles wrote the same byte the later write wins, here
 * as in the replay that the last handle's close makes of them all.  While
 * this handle's session is the only one, a new view extends the last one
 * by the ops logged since, put over it (when they all come after what it
 * holds: extends_view): each sync, or under collective and posix each
 * collective call, then costs the records logged since, not all so
 * far (a program that writes and reads back at every step would otherwise
 * pay a quadratic sum).  Through a server, the view holds file bytes
 * [lo, hi) only (see ADIOI_BBFS_Log_read). */
static int build_remote(ADIOI_BBFS_File * bf, uint64_t lo, uint64_t hi)
{
    static char myname[] = "ADIOI_BBFS_READ_REMOTE";
    struct logfs_plan *plan = NULL;
    struct logfs_error le;
    struct remote_build rb = { NULL, 0, 0, NULL, 0, 0 };
    int rc = LOGFS_OK, err = MPI_SUCCESS;
    int extend = bf->remote && bf->remote_solo && own_in_view(bf) && bf->view_marks;

    struct logfs_plan_opts po = { 0, ADIOI_BBFS_View_unsealed(bf), NULL };

    if (!extend)
        ADIOI_BBFS_Remote_reset(bf);
    /* (extending, the map stays, and so do the datalogs: plan_sessions) */
    if (bf->metalogs) {
        /* sizes first: what is logged after this point makes them differ */
        if (!bf->view_sizes)
            bf->view_sizes = ADIOI_Malloc(sizeof(long long) * bf->nwriters);
        plan_sizes(bf, bf->view_sizes);
    }
    if (bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_SESSION && !bf->others_live) {
        bf->remote_stale = 0;   /* the open replayed every closed session */
        return MPI_SUCCESS;
    }
    if (bf->metalogs && ADIOI_BBFS_View_has_own(bf)) {
        /* the view then holds this process's own writes too, in order */
        if ((rc = logfs_writer_flush(bf->writer, &le)) != LOGFS_OK)
            return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
        bf->own_unflushed = 0;
    }
    if (bf->srv) {             /* the owners from the file's ownership map */
        if (ADIOI_BBFS_View_unsealed(bf) && bf->writer) {
            /* the view holds this process's own writes too, in order */
            ADIOI_BBFS_Server_attach_own(bf, &err);
            if (err != MPI_SUCCESS)
                return err;
        }
        err = ADIOI_BBFS_Server_view(bf, lo, hi, &bf->remote, &bf->remote_end);
        bf->remote_stale = err != MPI_SUCCESS;
        bf->view_lo = lo;       /* (on failure remote is NULL: no coverage) */
        bf->view_hi = hi;
        return err;
    }
    for (int tries = 0; tries < 3; tries++) {
        po.resume = extend ? bf->view_marks : NULL;
        rc = plan_sessions(bf, bf->metalogs ? bf->view_sizes : NULL, &po, &plan, &le, &err);
        if (err != MPI_SUCCESS) {
            ADIOI_BBFS_Remote_reset(bf);
            return err;
        }
        if (rc == LOGFS_OK && extend && bf->others_live)
            extend = 0;         /* another session appeared: planned whole */
        else if (rc == LOGFS_OK && extend && plan && !extends_view(bf, plan)) {
            /* a write older than the view's latest: from scratch (not a
             * try: it happens once, and the last try must leave a plan) */
            extend = 0;
            logfs_plan_free(plan);
            plan = NULL;
            ADIOI_BBFS_Datalogs_free(&bf->datalogs);
            bf->times.view_restarts++;
            tries--;
            continue;
        }
        if (rc != LOGFS_ENOENT)
            break;
        ADIOI_BBFS_Datalogs_free(&bf->datalogs);
    }
    if (extend) {
        rb.map = bf->remote;    /* (taken: freed below if the build fails) */
        rb.end = bf->remote_end;
    } else {
        logfs_rangemap_destroy(bf->remote);
        bf->view_keyed = 0;
        if (rc == LOGFS_OK)
            rc = logfs_rangemap_create(&rb.map);
    }
    bf->remote = NULL;
    if (rc == LOGFS_OK && plan)
        rc = add_plan(&rb, plan);
    bf->times.view_builds++;
    bf->times.view_pieces += rb.pieces;
    if (rc == LOGFS_OK && !bf->others_live && own_in_view(bf))
        note_view_marks(bf, plan);
    logfs_plan_free(plan);
    if (rc != LOGFS_OK) {
        logfs_rangemap_destroy(rb.map);
        ADIOI_BBFS_Remote_reset(bf);
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, rc == LOGFS_ENOMEM ?
                                    "cannot index other processes' logs" : le.msg);
    }
    bf->remote = rb.map;
    bf->remote_end = rb.end;
    bf->remote_solo = !bf->others_live && own_in_view(bf);
    bf->remote_stale = 0;
    return MPI_SUCCESS;
}

struct read_ctx {
    ADIO_File fd;
    ADIOI_BBFS_File *bf;
    char *packed;               /* the whole request, packed */
    char *dst;                  /* destination of the extent being resolved */
    ADIO_Offset base;           /* file offset of dst[0] */
    int rank;                   /* this process: its datalog is read through its writer */
    int err;                    /* MPI error code */
    struct {                    /* datalog bytes still to read: a run of pieces */
        int log;                /* writer index, or OWN */
        uint64_t dlog;
        char *p;
        size_t len;
    } run;
};

/* The most one lower read moves: ADIO_ReadContig takes an int count, and
 * MPI_Get_count cannot report more than INT_MAX. */
#define LOWER_READ_MAX ((ADIO_Offset) 1 << 30)

static int read_lower(struct read_ctx *c, ADIO_Offset off, ADIO_Offset len)
{
    ADIO_File lo = c->bf->lower;
    char *p = c->dst + (off - c->base);

    while (len > 0) {
        ADIO_Status st;
        int want = (int) (len < LOWER_READ_MAX ? len : LOWER_READ_MAX), got = 0;
        ADIO_ReadContig(lo, p, want, MPI_BYTE, ADIO_EXPLICIT_OFFSET, off, &st, &c->err);
        if (c->err != MPI_SUCCESS)
            return 1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got < 0 || got > want)
            got = 0;
        p += got;
        off += got;
        len -= got;
        if (got < want)
            break;      /* the canonical file ends here */
    }
    /* Past the canonical file's end, but inside the file logs made longer. */
    memset(p, 0, (size_t) len);
    return 0;
}

/* The writer of a piece of this process's own log (not a view's index). */
#define OWN (-1)

/* Read the run of datalog bytes gathered so far. */
static int read_run(struct read_ctx *c)
{
    static char myname[] = "ADIOI_BBFS_READ_DATALOG";
    ADIOI_BBFS_File *bf = c->bf;
    struct logfs_error le;
    int writer = c->run.log;
    size_t len = c->run.len;

    c->run.len = 0;
    if (len == 0)
        return 0;
    bf->times.log_reads++;
    if (writer == OWN) {
        int rc = logfs_writer_read_data(bf->writer, c->run.dlog, c->run.p, len, &le);
        if (rc != LOGFS_OK) {
            c->err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
            return 1;
        }
        return 0;
    }
    if (bf->srv)                /* a writer of the server's view */
        c->err = ADIOI_BBFS_Server_read(bf, writer, c->run.dlog, c->run.p, len);
    else
        c->err = ADIOI_BBFS_Datalogs_read(&bf->datalogs, writer, c->run.dlog, c->run.p, len);
    return c->err != MPI_SUCCESS;
}

/* Pieces that follow one another in a datalog and in the request are read
 * at once: a strided write is logged contiguously, so a reader of its
 * elements through a view reads one run, not one piece per element (a
 * pread per 8-byte element was most of an HDF5-style read-back). */
static int read_datalog(struct read_ctx *c, int writer, uint64_t dlog, ADIO_Offset off,
                        ADIO_Offset len)
{
    ADIOI_BBFS_File *bf = c->bf;
    char *p = c->dst + (off - c->base);

    bf->times.log_read_pieces++;
    if (bf->writer && (writer == OWN || (bf->srv ? ADIOI_BBFS_Server_is_own(bf, writer)
                                         : writer == c->rank && own_in_view(bf))))
        writer = OWN;
    if (c->run.len > 0 && c->run.log == writer && c->run.dlog + c->run.len == dlog
        && c->run.p + c->run.len == p) {
        c->run.len += (size_t) len;
        return 0;
    }
    if (read_run(c))
        return 1;
    c->run.log = writer;
    c->run.dlog = dlog;
    c->run.p = p;
    c->run.len = (size_t) len;
    return 0;
}

static int from_remote(void *arg, const struct logfs_range *r, int is_hole)
{
    struct read_ctx *c = arg;
    ADIO_Offset len = (ADIO_Offset) (r->end - r->start);

    if (is_hole)
        return read_lower(c, (ADIO_Offset) r->start, len);
    return read_datalog(c, r->owner, r->pos, (ADIO_Offset) r->start, len);
}

static int from_own(void *arg, const struct logfs_piece *p)
{
    struct read_ctx *c = arg;
    ADIOI_BBFS_File *bf = c->bf;
    ADIO_Offset off = (ADIO_Offset) p->offset, len = (ADIO_Offset) p->length;

    switch (p->kind) {
        case LOGFS_PIECE_LOG:
            return read_datalog(c, OWN, p->dlog_off, off, len);
        case LOGFS_PIECE_ZERO:
            memset(c->dst + (off - c->base), 0, (size_t) len);
            return 0;
        default:
            if (bf->remote)
                return logfs_rangemap_query(bf->remote, (uint64_t) off, (uint64_t) (off + len),
                                            from_remote, c) != 0;
            return read_lower(c, off, len);
    }
}

static ADIO_Offset current_size(ADIO_File fd, int *error_code);

/* Fill [off, off + len) of the file into dst from the newest sources. */
static int resolve(void *arg, ADIO_Offset off, ADIO_Offset len, ADIO_Offset data_off)
{
    struct read_ctx *c = arg;
    ADIOI_BBFS_File *bf = c->bf;
    struct logfs_piece hole = { (uint64_t) off, (uint64_t) len, LOGFS_PIECE_HOLE, 0, 0 };

    c->dst = c->packed + data_off;
    c->base = off;
    if (bf->writer && !(bf->remote && ADIOI_BBFS_View_unsealed(bf) && own_in_view(bf)))
        /* Own bytes of earlier epochs are in the synced view with everyone's;
         * without one (session consistency) they come from the own log too.
         * Under posix the view holds every write made so far, own ones
         * included, in the order collective calls give them: a write of
         * this process's may have lost to a later one of another's. */
    {
        static char myname[] = "ADIOI_BBFS_READ_OWN";
        int rc = logfs_writer_lookup(bf->writer, (uint64_t) off, (uint64_t) len,
                                     bf->remote && own_in_view(bf) ?
                                     logfs_writer_epoch(bf->writer) : 0, from_own, c);
        /* the lookup's own failure (no memory for the index) must not pass
         * for a read with an unfilled buffer */
        if (rc != 0 && c->err == MPI_SUCCESS)
            c->err = ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, "cannot index this process's "
                                          "own writes");
        return rc != 0;
    }
    return from_own(c, &hole);
}

struct extent {
    uint64_t lo, hi;
};

static int widen(void *arg, ADIO_Offset off, ADIO_Offset len, ADIO_Offset stride,
                 ADIO_Offset count, ADIO_Offset data_off)
{
    struct extent *e = arg;
    uint64_t lo = (uint64_t) off, hi = (uint64_t) (off + (count - 1) * stride + len);
    (void) data_off;
    if (lo < e->lo)
        e->lo = lo;
    if (hi > e->hi)
        e->hi = hi;
    return 0;
}

/* Through a server, a stale view asks the map for the bytes the read
 * touches only: the whole map grows with everything attached since the
 * open (a program that writes a new region and reads it back at every step
 * got every earlier step's pieces with every step's view).  Under mpiio
 * and collective, a later read of other bytes before the next sync point
 * asks for the whole file, once; under session the view is asked for
 * once, whole (it must not change within the session).  [*lo, *hi): what
 * to ask for if a view is built. */
static void view_range(ADIO_File fd, int stale, int file_ptr_type, ADIO_Offset offset,
                       ADIO_Offset nbytes, int contig_call, uint64_t * lo, uint64_t * hi)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct extent e = { UINT64_MAX, 0 };
    ADIO_Offset next_fp;

    *lo = 0;
    *hi = UINT64_MAX;
    if (!bf->srv || nbytes <= 0 || bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_SESSION)
        return;
    if (contig_call) {
        ADIO_Offset start = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind : offset;
        e.lo = (uint64_t) start;
        e.hi = (uint64_t) (start + nbytes);
    } else if (ADIOI_BBFS_Walk_view_runs(fd, file_ptr_type, offset, nbytes, widen, &e,
                                         &next_fp) != 0 || e.lo >= e.hi)
        return;
    if (stale || (e.lo >= bf->view_lo && e.hi <= bf->view_hi)) {
        *lo = e.lo;
        *hi = e.hi;
    }
}

void ADIOI_BBFS_Log_read(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, int contig_call,
                         ADIO_Status * status, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct read_ctx c;
    MPI_Count type_size;
    ADIO_Offset nbytes, next_fp, size;
    int buf_contig;

    MPI_Type_size_x(datatype, &type_size);
    nbytes = (ADIO_Offset) count * type_size;
    memset(&c, 0, sizeof(c));
    c.fd = fd;
    c.bf = bf;
    c.err = MPI_SUCCESS;
    MPI_Comm_rank(fd->comm, &c.rank);
    ADIOI_Datatype_iscontig(datatype, &buf_contig);
    c.packed = buf_contig ? buf : ADIOI_Malloc(nbytes > 0 ? nbytes : 1);

    /* (through a server: not for a read of nothing, nor again for one
     * inside the view) */
    uint64_t lo, hi;
    int stale = remote_needs_rebuild(bf);
    view_range(fd, stale, file_ptr_type, offset, nbytes, contig_call, &lo, &hi);
    if (bf->srv && nbytes <= 0)
        stale = 0;
    else if (bf->srv && bf->remote && (lo < bf->view_lo || hi > bf->view_hi))
        stale = 1;
    if (stale && (*error_code = build_remote(bf, lo, hi)) != MPI_SUCCESS)
        goto fn_exit;
    if (!contig_call && buf_contig) {
        /* ROMIO's own drivers read a contiguous view into a contiguous
         * buffer as one contiguous read, which stops at the end of the file
         * (PnetCDF moves a growing header by the count read_at_all reports) */
        int view_contig;
        ADIOI_Datatype_iscontig(fd->filetype, &view_contig);
        if (view_contig) {
            if (file_ptr_type != ADIO_INDIVIDUAL)
                offset = fd->disp + offset * fd->etype_size;
            contig_call = 1;
        }
    }
    if (contig_call) {
        ADIO_Offset start = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind : offset;
        /* A contiguous read stops at the end of the file, as POSIX's does.
         * The size is at least the logs' end (current_size): a read inside
         * it needs no question to the lower file (a system call a read). */
        ADIO_Offset logs_end = bf->own_end > bf->remote_end ? bf->own_end : bf->remote_end;
        if (start + nbytes > logs_end) {
            size = current_size(fd, error_code);
            if (*error_code != MPI_SUCCESS)
                goto fn_exit;
            if (start + nbytes > size)
                nbytes = start < size ? size - start : 0;
        }
        if (nbytes > 0)
            resolve(&c, start, nbytes, 0);
        next_fp = start + nbytes;
    } else {
        ADIOI_BBFS_Walk_view(fd, file_ptr_type, offset, nbytes, resolve, &c, &next_fp);
    }
    if (c.err == MPI_SUCCESS)
        read_run(&c);
    /* other nodes' pieces, batched */
    if (bf->srv)
        c.err = c.err != MPI_SUCCESS ? (ADIOI_BBFS_Server_flush(bf, 1), c.err)
            : ADIOI_BBFS_Server_flush(bf, 0);
    *error_code = c.err;
    if (*error_code != MPI_SUCCESS)
        goto fn_exit;
    if (!buf_contig) {
        *error_code = ADIOI_BBFS_Unpack(c.packed, nbytes, buf, count, datatype);
        if (*error_code != MPI_SUCCESS)
            goto fn_exit;
    }
    ADIOI_BBFS_Access_done(fd, file_ptr_type, next_fp, status, datatype, nbytes);
  fn_exit:
    if (!buf_contig)
        ADIOI_BBFS_FREE(c.packed);
}

/* The file's size as this process may see it: the canonical file, its own
 * logged bytes, and what others synced. */
static ADIO_Offset current_size(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIO_Fcntl_t fc;
    ADIO_Offset size;

    ADIO_Fcntl(bf->lower, ADIO_FCNTL_GET_FSIZE, &fc, error_code);
    if (*error_code != MPI_SUCCESS)
        return 0;
    size = fc.fsize;
    if (bf->own_end > size)
        size = bf->own_end;
    if (bf->remote_end > size)
        size = bf->remote_end;
    return size;
}

/* One past the last byte the logs in sight write, from plans of them alone,
 * with no view: MPI_File_get_size (HDF5 asks at every close) then costs
 * the records logged since it last asked, not a map of every piece
 * (HDF5's strided datasets: 4M of them, and the read that would need
 * them may never come).  While this handle's session is the file's only
 * one, each plan reads on from where the last stopped (marks of its own,
 * apart from the view's); beside other sessions, it plans them all. */
static int logged_end(ADIOI_BBFS_File * bf, ADIO_Offset * end)
{
    static char myname[] = "ADIOI_BBFS_LOGGED_SIZE";
    struct logfs_plan_opts po = { 0, ADIOI_BBFS_View_unsealed(bf), NULL };
    struct logfs_plan *plan = NULL;
    struct logfs_error le;
    int rc = LOGFS_OK, err = MPI_SUCCESS;
    int resume = bf->size_keyed && own_in_view(bf);

    /* No metalog grew since the last plan: nothing it reads changed
     * (HDF5 asks the size at every flush and close; a plan costs 100 µs,
     * a stat of each metalog 1).  This process's records not yet flushed
     * are in own_end, which the caller adds. */
    if (resume && !bf->others_live && bf->metalogs && bf->size_sizes
        && !metalogs_changed(bf, bf->size_sizes)) {
        *end = bf->size_end;
        return MPI_SUCCESS;
    }
    if (bf->metalogs && ADIOI_BBFS_View_has_own(bf)
        && (rc = logfs_writer_flush(bf->writer, &le)) != LOGFS_OK)
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, le.msg);
    /* (before the plan: a log that grows while it reads shows next time) */
    if (bf->metalogs) {
        if (!bf->size_sizes)
            bf->size_sizes = ADIOI_Malloc(sizeof(long long) * bf->nwriters);
        plan_sizes(bf, bf->size_sizes);
    }
    for (int tries = 0; tries < 3; tries++) {
        po.resume = resume ? bf->size_marks : NULL;
        rc = plan_sessions(bf, bf->metalogs ? bf->size_sizes : NULL, &po, &plan, &le, &err);
        if (err != MPI_SUCCESS)
            return err;
        if (rc == LOGFS_OK && resume && bf->others_live) {
            resume = 0;         /* another session appeared: all of them */
            logfs_plan_free(plan);
            plan = NULL;
            tries--;
            continue;
        }
        if (rc != LOGFS_ENOENT)
            break;
    }
    if (rc != LOGFS_OK)
        return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, rc == LOGFS_ENOMEM ?
                                    "cannot index other processes' logs" : le.msg);
    ADIO_Offset e = resume ? bf->size_end : 0;
    for (uint64_t k = 0; plan && k < logfs_plan_nepochs(plan); k++) {
        struct logfs_resize rs;
        ADIO_Offset x = (ADIO_Offset) logfs_plan_epoch_end(plan, k);
        if (x > e)
            e = x;
        /* a logged set_size only ever grows the file (ADIOI_BBFS_Resize) */
        if (logfs_plan_resize(plan, k, &rs) == LOGFS_OK && rs.present
            && (ADIO_Offset) rs.extend_to > e)
            e = (ADIO_Offset) rs.extend_to;
    }
    bf->size_keyed = !bf->others_live && own_in_view(bf) && plan;
    if (bf->size_keyed) {
        if (!bf->size_marks)
            bf->size_marks = ADIOI_Malloc(sizeof(*bf->size_marks) * bf->nwriters);
        for (int r = 0; r < bf->nwriters; r++)
            logfs_plan_mark(plan, (uint32_t) r, &bf->size_marks[r]);
        bf->size_end = e;
    }
    logfs_plan_free(plan);
    *end = e;
    return MPI_SUCCESS;
}

unsigned long ADIOI_BBFS_news;

ADIO_Offset ADIOI_BBFS_Logged_size(ADIO_File fd, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int c = bf->hints.consistency;
    ADIO_Offset end;

    ADIOI_BBFS_Sync_look(bf);   /* (causal: after an acquire, look again) */
    /* Nothing this process did or heard since the last answer could move
     * the end it may see (ADIOI_BBFS_news), and its model shows others'
     * writes only at such points (not commit or posix, which show them at
     * any time): the logs' end stands, the canonical file's is asked
     * again.  A stat of every metalog a call, 3.6 us (stock: 0.25). */
    if (!bf->srv && bf->size_news == ADIOI_BBFS_news + 1
        && c != ADIOI_BBFS_CONSISTENCY_COMMIT && c != ADIOI_BBFS_CONSISTENCY_POSIX)
        return current_size(fd, error_code);
    if (!remote_needs_rebuild(bf))
        return current_size(fd, error_code);
    /* (a view of a range serves too: the map's answer carries the file's end) */
    if (bf->srv) {
        if ((*error_code = build_remote(bf, 0, UINT64_MAX)) != MPI_SUCCESS)
            return 0;
        return current_size(fd, error_code);
    }
    if ((*error_code = logged_end(bf, &end)) != MPI_SUCCESS)
        return 0;
    /* The view is stale still (its datalogs were listed again with the
     * plan): the next read builds it; its end grows from here. */
    bf->remote_stale = 1;
    if (end > bf->remote_end)
        bf->remote_end = end;
    bf->size_news = ADIOI_BBFS_news + 1;
    return current_size(fd, error_code);
}
