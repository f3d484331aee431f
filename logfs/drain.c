/* A replay plan applied with POSIX calls by one process (drain.h). */
#include "drain.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "planner.h"
#include "reader.h"

#define DEFAULT_WINDOW ((uint64_t)16 << 20)
#define DEFAULT_GAP ((uint64_t)64 << 10)

/* A run as the plan gives it (count blocks at a stride), staged: its
 * bytes are at `at` in the stage (which moves as it grows).  Interleaved
 * small pieces stay a few runs; they become pieces (one per block, three
 * words each) only where a domain must be sorted. */
struct run {
    uint64_t offset, blocklen, stride, count;
    size_t at;
};

/* One block of a run, staged. */
struct piece {
    uint64_t offset;
    uint64_t length;
    size_t at;
};

/* What a thread's domains are staged and gathered in: the runs' bytes as
 * read (stage), the runs, their blocks as pieces where a domain is sorted,
 * and the span written at once (buf).  A drain's own, or kept for the
 * next (logfs_drain_buffers). */
struct thread_buffers {
    unsigned char *stage, *buf;
    size_t stage_cap, cap;
    struct run *runs;
    size_t runs_cap;
    struct piece *pieces;
    size_t pieces_cap;
};

struct domain {
    const struct logfs_plan *plan;
    const struct logfs_drain_opts *o;
    struct logfs_datalog_reader **readers; /* by writer, opened at first use */
    struct thread_buffers *b;
    size_t staged, nruns, npieces;         /* in b's stage, runs and pieces */
    uint64_t nblocks;                      /* the runs' blocks */
    struct logfs_error *err;
};

static int reader_of(struct domain *d, uint32_t w, struct logfs_datalog_reader **out)
{
    if (!d->readers[w]) {
        const char *path = logfs_plan_datalog(d->plan, w);
        if (!path)
            return logfs_fail(d->err, LOGFS_EINVAL, 0, "writer %u has bytes in the plan and no "
                              "datalog", w);
        int rc = logfs_datalog_reader_open(path, &d->readers[w], d->err);
        if (rc)
            return rc;
    }
    *out = d->readers[w];
    return LOGFS_OK;
}

/* A run's bytes, read with one pread, staged. */
static int take_run(void *arg, const struct logfs_replay_run *r)
{
    struct domain *d = arg;
    struct logfs_datalog_reader *dr = NULL;
    uint64_t bytes = r->count * r->blocklen;
    const char *far = d->o->far_servers ? d->o->far_servers[r->writer] : NULL;
    int rc = far ? LOGFS_OK : reader_of(d, r->writer, &dr);

    if (rc)
        return rc;
    unsigned char *s = logfs_grow(d->b->stage, &d->b->stage_cap, d->staged + bytes, 1, 1 << 20);
    struct run *q = logfs_grow(d->b->runs, &d->b->runs_cap, d->nruns + 1, sizeof(*q), 64);
    if (s)
        d->b->stage = s;
    if (q)
        d->b->runs = q;
    if (!s || !q)
        return logfs_fail(d->err, LOGFS_ENOMEM, 0, "no memory to stage %llu bytes of a drain",
                          (unsigned long long)bytes);
    if (far)
        rc = d->o->far->read(d->o->far->arg, far, logfs_plan_datalog(d->plan, r->writer),
                             r->dlog_off, d->b->stage + d->staged, bytes, d->err);
    else
        rc = logfs_datalog_reader_pread(dr, r->dlog_off, d->b->stage + d->staged, bytes, d->err);
    if (rc)
        return rc;
    d->b->runs[d->nruns++] = (struct run){ r->offset, r->blocklen, r->stride, r->count, d->staged };
    d->nblocks += r->count;
    d->staged += bytes;
    return LOGFS_OK;
}

/* The runs' blocks as pieces, to be sorted. */
static int expand_runs(struct domain *d)
{
    d->npieces = 0;
    if (!d->nblocks)
        return LOGFS_OK;
    struct piece *p = logfs_grow(d->b->pieces, &d->b->pieces_cap, d->nblocks, sizeof(*p), 1024);
    if (!p)
        return logfs_fail(d->err, LOGFS_ENOMEM, 0, "no memory to sort %llu pieces of a drain",
                          (unsigned long long)d->nblocks);
    d->b->pieces = p;
    d->npieces = 0;
    for (size_t k = 0; k < d->nruns; k++) {
        const struct run *r = &d->b->runs[k];
        for (uint64_t i = 0; i < r->count; i++)
            p[d->npieces++] = (struct piece){ r->offset + i * r->stride, r->blocklen,
                                              r->at + (size_t)(i * r->blocklen) };
    }
    return LOGFS_OK;
}

/* One pwrite of len bytes at lo. */
static int put(struct domain *d, int fd, const unsigned char *b, size_t len, uint64_t lo,
               struct logfs_drain_stats *st)
{
    int e = logfs_pwrite_full("drain-write", fd, b, len, lo);
    if (e)
        return logfs_fail(d->err, logfs_status_from_errno(e), e, "cannot write the file: %s",
                          strerror(e));
    st->writes++;
    return LOGFS_OK;
}

/* The buffer a span of len bytes is gathered in, or NULL (said in d->err). */
static unsigned char *span_buffer(struct domain *d, size_t len)
{
    unsigned char *b = logfs_grow(d->b->buf, &d->b->cap, len, 1, 1 << 20);
    if (!b)
        logfs_fail(d->err, LOGFS_ENOMEM, 0, "no memory for a drain's span of %zu bytes", len);
    else
        d->b->buf = b;
    return b;
}

/* A domain its runs cover whole: every block put in place, run by run (no
 * sort), and one pwrite. */
static int write_whole(struct domain *d, int fd, uint64_t lo, uint64_t hi,
                       struct logfs_drain_stats *st)
{
    size_t len = (size_t)(hi - lo);
    if (d->nruns == 1 && d->b->runs[0].count == 1)
        return put(d, fd, d->b->stage, len, lo, st);
    unsigned char *b = span_buffer(d, len);
    if (!b)
        return LOGFS_ENOMEM;
    for (size_t k = 0; k < d->nruns; k++) {
        const struct run *r = &d->b->runs[k];
        unsigned char *to = b + (r->offset - lo);
        const unsigned char *from = d->b->stage + r->at;
        if (r->blocklen == 8)   /* (interleaved 8-byte elements: a word each) */
            for (uint64_t i = 0; i < r->count; i++)
                memcpy(to + i * r->stride, from + i * 8, 8);
        else
            for (uint64_t i = 0; i < r->count; i++)
                memcpy(to + i * r->stride, from + i * r->blocklen, (size_t)r->blocklen);
    }
    return put(d, fd, b, len, lo, st);
}

static int by_offset(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Write pieces [first, last), all within [lo, hi), as one span: the gaps
 * between them read from the file first (bytes past its end read as zeros,
 * as a hole there would), then each piece over them (in any order), then
 * one pwrite. */
static int write_span(struct domain *d, int fd, size_t first, size_t last, uint64_t lo,
                      uint64_t hi, struct logfs_drain_stats *st)
{
    const struct piece *p = d->b->pieces;
    size_t len = (size_t)(hi - lo);
    const unsigned char *out = d->b->stage + p[first].at;

    if (last - first > 1) {
        unsigned char *b = span_buffer(d, len);
        if (!b)
            return LOGFS_ENOMEM;
        uint64_t covered = 0;
        for (size_t i = first; i < last; i++)
            covered += p[i].length;
        if (covered < len) {
            ssize_t got;
            size_t at = 0;
            while (at < len && ((got = pread(fd, b + at, len - at, (off_t)(lo + at))) > 0
                                || (got < 0 && errno == EINTR)))
                at += got > 0 ? (size_t)got : 0;
            if (at < len && got < 0)
                return logfs_fail(d->err, logfs_status_from_errno(errno), errno,
                                  "cannot read the file to fill a drain's gaps: %s",
                                  strerror(errno));
            memset(b + at, 0, len - at);
            st->gap_bytes += len - covered;
        }
        for (size_t i = first; i < last; i++)
            memcpy(b + (p[i].offset - lo), d->b->stage + p[i].at, (size_t)p[i].length);
        out = b;
    }
    return put(d, fd, out, len, lo, st);
}

/* The staged pieces into the file, in file order, in as few writes as the
 * gaps allow. */
static int write_domain(struct domain *d, int fd, const struct logfs_drain_opts *o,
                        uint64_t lo, uint64_t hi, struct logfs_drain_stats *st)
{
    /* A domain its runs cover whole (a dense pattern, as an interleaved
     * file's: runs never share a byte, so as many bytes as it spans) is one
     * span, its blocks put in place unsorted. */
    if (d->nruns && hi - lo == d->staged && hi - lo <= 2 * o->window)
        return write_whole(d, fd, lo, hi, st);
    int rc = expand_runs(d);
    if (rc || !d->npieces)
        return rc;
    const struct piece *p = d->b->pieces;
    qsort(d->b->pieces, d->npieces, sizeof(*p), by_offset);
    size_t first = 0;
    for (size_t i = 1; i <= d->npieces; i++) {
        if (i < d->npieces) {
            uint64_t end = p[i - 1].offset + p[i - 1].length;
            uint64_t gap = p[i].offset - end;
            uint64_t span = p[i].offset + p[i].length - p[first].offset;
            /* (a span no larger than the window plus what the gaps add) */
            if (gap == 0 || (!o->no_gaps && gap <= o->max_gap && span <= 2 * o->window))
                continue;
        }
        rc = write_span(d, fd, first, i, p[first].offset, p[i - 1].offset + p[i - 1].length, st);
        if (rc)
            return rc;
        first = i;
    }
    return LOGFS_OK;
}

static int resize(int fd, uint64_t to, int grow_only, struct logfs_error *err)
{
    struct stat sb;
    if (grow_only && (fstat(fd, &sb) < 0 || (uint64_t)sb.st_size >= to))
        return LOGFS_OK;
    if (ftruncate(fd, (off_t)to) < 0)
        return logfs_fail(err, logfs_status_from_errno(errno), errno, "cannot set the file's "
                          "size to %llu: %s", (unsigned long long)to, strerror(errno));
    return LOGFS_OK;
}

/* One epoch's domains, taken in turn by the drain's threads: disjoint file
 * ranges, so they go to the file in any order; the next epoch waits for
 * all of them (it may write the same bytes). */
struct epoch_work {
    const struct logfs_plan *p;
    int fd;
    const struct logfs_drain_opts *o;
    uint64_t e;
    uint32_t m, next;           /* domains; the next one to take */
    int stop;                   /* a thread failed, or progress said stop */
    pthread_mutex_t lock;       /* (progress: one call at a time, in order of bytes) */
    uint64_t done, total;
};

struct logfs_drain_buffers {
    struct thread_buffers t[LOGFS_DRAIN_MAX_THREADS];
};

struct logfs_drain_buffers *logfs_drain_buffers_new(void)
{
    return calloc(1, sizeof(struct logfs_drain_buffers));
}

size_t logfs_drain_buffers_bytes(const struct logfs_drain_buffers *b)
{
    size_t n = 0;
    for (int k = 0; b && k < LOGFS_DRAIN_MAX_THREADS; k++)
        n += b->t[k].stage_cap + b->t[k].cap + b->t[k].runs_cap * sizeof(struct run)
            + b->t[k].pieces_cap * sizeof(struct piece);
    return n;
}

static void buffers_free(struct thread_buffers *t)
{
    free(t->stage);
    free(t->buf);
    free(t->runs);
    free(t->pieces);
    memset(t, 0, sizeof *t);
}

void logfs_drain_buffers_free(struct logfs_drain_buffers *b)
{
    for (int k = 0; b && k < LOGFS_DRAIN_MAX_THREADS; k++)
        buffers_free(&b->t[k]);
    free(b);
}

/* What one thread of a drain keeps across domains and epochs. */
struct worker {
    struct epoch_work *w;
    struct domain d;
    struct thread_buffers own;  /* d.b where the drain keeps none */
    struct logfs_drain_stats st;
    struct logfs_error err;
    int rc;
    pthread_t thread;
};

static void *drain_domains(void *arg)
{
    struct worker *k = arg;
    struct epoch_work *w = k->w;
    for (;;) {
        uint32_t r = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
        if (r >= w->m || __atomic_load_n(&w->stop, __ATOMIC_RELAXED))
            break;
        uint64_t lo, hi;
        k->d.staged = k->d.npieces = k->d.nruns = 0;
        k->d.nblocks = 0;
        int rc = logfs_plan_domain_runs(w->p, w->e, r, w->m, &lo, &hi, take_run, &k->d);
        if (!rc)
            rc = write_domain(&k->d, w->fd, w->o, lo, hi, &k->st);
        k->st.bytes += k->d.staged;
        if (!rc && w->o->progress) {
            pthread_mutex_lock(&w->lock);
            w->done += k->d.staged;
            rc = w->o->progress(w->o->arg, w->done, w->total);
            pthread_mutex_unlock(&w->lock);
        }
        if (rc) {
            k->rc = rc;
            __atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

/* Domains of an epoch: about a window of logged bytes each, and with
 * several threads at least one per thread (of a MiB or more). */
static uint32_t domains_of(uint64_t bytes, const struct logfs_drain_opts *o)
{
    uint64_t m = (bytes + o->window - 1) / o->window, per_thread = (uint64_t)1 << 20;
    uint64_t want = bytes / per_thread < (uint64_t)o->threads ? bytes / per_thread
        : (uint64_t)o->threads;
    return (uint32_t)(m > want ? m : want ? want : 1);
}

int logfs_drain(const struct logfs_plan *p, int fd, const struct logfs_drain_opts *opts,
                struct logfs_drain_stats *stats, struct logfs_error *err)
{
    struct logfs_drain_opts o = opts ? *opts : (struct logfs_drain_opts){0};
    struct epoch_work w = {0};
    struct worker ks[LOGFS_DRAIN_MAX_THREADS];
    uint64_t nep = logfs_plan_nepochs(p);
    uint32_t nw = logfs_plan_nwriters(p) ? logfs_plan_nwriters(p) : 1;
    int rc = LOGFS_OK, nk;

    if (!o.window)
        o.window = DEFAULT_WINDOW;
    if (!o.max_gap)
        o.max_gap = DEFAULT_GAP;
    if (o.threads < 1)
        o.threads = 1;
    if (o.threads > LOGFS_DRAIN_MAX_THREADS)
        o.threads = LOGFS_DRAIN_MAX_THREADS;
    w.p = p;
    w.fd = fd;
    w.o = &o;
    pthread_mutex_init(&w.lock, NULL);
    for (uint64_t e = 0; e < nep; e++)
        w.total += logfs_plan_epoch_bytes(p, e);
    memset(ks, 0, sizeof ks);
    for (nk = 0; nk < o.threads; nk++) {
        ks[nk].w = &w;
        ks[nk].d.plan = p;
        ks[nk].d.o = &o;
        ks[nk].d.err = &ks[nk].err;
        ks[nk].d.b = o.keep ? &o.keep->t[nk] : &ks[nk].own;
        if (!(ks[nk].d.readers = calloc(nw, sizeof(*ks[nk].d.readers)))) {
            rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to drain");
            break;
        }
    }
    for (uint64_t e = 0; e < nep && !rc; e++) {
        struct logfs_resize rs;
        if ((rc = logfs_plan_resize(p, e, &rs)))
            break;
        if (rs.present && (rc = resize(fd, rs.truncate_to, 0, err)))
            break;
        w.e = e;
        w.m = domains_of(logfs_plan_epoch_bytes(p, e), &o);
        w.next = 0;
        /* (the caller's thread is one of them) */
        int started = 1;
        for (; started < nk && (uint32_t)started < w.m; started++)
            if (pthread_create(&ks[started].thread, NULL, drain_domains, &ks[started]) != 0)
                break;
        drain_domains(&ks[0]);
        for (int t = 1; t < started; t++)
            pthread_join(ks[t].thread, NULL);
        for (int t = 0; t < nk && !rc; t++)
            if ((rc = ks[t].rc) != LOGFS_OK && err)
                *err = ks[t].err;
        /* (never shortens: pieces written after the SETSIZE stand) */
        if (!rc && rs.present)
            rc = resize(fd, rs.extend_to, 1, err);
        if (!rc)
            ks[0].st.epochs++;
    }
    if (!rc && o.durable && fsync(fd) < 0)
        rc = logfs_fail(err, logfs_status_from_errno(errno), errno, "cannot make the file "
                        "durable (fsync): %s", strerror(errno));
    struct logfs_drain_stats st = {0};
    for (int t = 0; t < nk; t++) {
        st.bytes += ks[t].st.bytes;
        st.writes += ks[t].st.writes;
        st.gap_bytes += ks[t].st.gap_bytes;
        st.epochs += ks[t].st.epochs;
        for (uint32_t r = 0; ks[t].d.readers && r < logfs_plan_nwriters(p); r++)
            logfs_datalog_reader_close(ks[t].d.readers[r]);
        free(ks[t].d.readers);
        buffers_free(&ks[t].own);    /* (none where the drain keeps them) */
    }
    pthread_mutex_destroy(&w.lock);
    if (stats)
        *stats = st;
    return rc;
}
