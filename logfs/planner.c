/*
 * Replay planner.  Within an epoch the ops of each writer are taken in
 * segments of one collective-call count (ORDER records, format.h) and one
 * STAMP clock, in the order (count, clock, rank): a write made after a
 * collective call wins over every process's writes made before it, then
 * the later by the clock (under posix consistency every write is stamped,
 * so a POSIX file's order holds), and otherwise the higher rank wins.  A
 * segment with a SETSIZE is first built in a map of its own (so
 * the cut takes only that writer's earlier bytes), then folded into the
 * epoch's map, which is flattened to an array with byte prefix sums for
 * cutting domains.
 */
#include "plan_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "reader.h"

/* What one writer did in its current epoch. */
struct wepoch {
    uint64_t seq;      /* the last ORDER's count (kept across epochs) */
    uint64_t stamp;    /* the last STAMP's clock (kept across epochs) */
    struct op *ops;
    size_t nops, capops;
    uint64_t max_end;  /* end of the furthest block written so far */
    int need_map;
    struct logfs_resize rs;
    int dirty;
};

int plan_grow_epochs(struct logfs_plan *p, uint64_t need)
{
    if (need <= p->nepochs)
        return LOGFS_OK;
    struct epoch *e = logfs_grow(p->epochs, &p->cap, need, sizeof *e, 8);
    if (!e)
        return LOGFS_ENOMEM;
    p->epochs = e;
    memset(p->epochs + p->nepochs, 0, (need - p->nepochs) * sizeof *p->epochs);
    p->nepochs = need;
    return LOGFS_OK;
}

int plan_push_ops(struct op **ops, size_t *n, size_t *cap, const struct op *add, size_t k)
{
    if (k == 0)
        return LOGFS_OK; /* an epoch without writes has no array at all */
    struct op *o = logfs_grow(*ops, cap, *n + k, sizeof *o, 16);
    if (!o)
        return LOGFS_ENOMEM;
    *ops = o;
    memcpy(*ops + *n, add, k * sizeof *add);
    *n += k;
    return LOGFS_OK;
}

void plan_merge_resize(struct logfs_resize *into, const struct logfs_resize *r)
{
    if (!r->present)
        return;
    if (!into->present) {
        *into = *r;
        return;
    }
    if (r->truncate_to < into->truncate_to)
        into->truncate_to = r->truncate_to;
    if (r->extend_to > into->extend_to)
        into->extend_to = r->extend_to;
}

static void note_key(struct logfs_plan *p, uint64_t e, const struct op *o)
{
    struct logfs_plan_key k = {e, o->seq, o->stamp, o->writer};
    if (!p->has_keys || plan_key_order(&k, &p->key_min) < 0)
        p->key_min = k;
    if (!p->has_keys || plan_key_order(&k, &p->key_max) > 0)
        p->key_max = k;
    p->has_keys = 1;
}

/* Fold writer epoch @p w into epoch @p e of the plan and reset it. */
static int fold(struct logfs_plan *p, uint64_t e, struct wepoch *w)
{
    struct epoch *ep;
    int rc;
    if (!w->dirty)
        return LOGFS_OK;
    if ((rc = plan_grow_epochs(p, e + 1)))
        return rc;
    ep = &p->epochs[e];
    const struct op *in = w->ops;
    size_t k = w->nops;
    const struct op *first = ep->nops ? &ep->ops[0] : in;
    for (size_t i = 0; i < k && !ep->mixed; i++)
        ep->mixed = in[i].seq != first->seq || in[i].stamp != first->stamp;
    for (size_t i = 0; i < k; i++)
        note_key(p, e, &in[i]);
    if ((rc = plan_push_ops(&ep->ops, &ep->nops, &ep->capops, in, k)))
        return rc;
    ep->need_map |= w->need_map;
    plan_merge_resize(&ep->rs, &w->rs);
    w->nops = 0;
    w->max_end = 0;
    w->need_map = 0;
    w->dirty = 0;
    memset(&w->rs, 0, sizeof w->rs);
    return LOGFS_OK;
}

/* One past the last byte of group @p g (a valid, decoded group). */
static uint64_t group_end(const struct logfs_group *g)
{
    uint64_t last = logfs_group_block(g, g->count - 1);
    return (last > g->offset ? last : g->offset) + g->blocklen;
}

static int add_write(struct wepoch *w, uint32_t rank, const struct logfs_record *rec)
{
    struct logfs_group_iter it;
    struct op o = {{0, 0, 0, 0}, rec->u.write.dlog_off, w->seq, w->stamp, rank};
    uint64_t step = rec->u.write.seq_step;
    int rc;

    w->dirty = 1;
    logfs_group_iter_init(&it, rec->u.write.groups, rec->u.write.groups_len);
    while (logfs_group_next(&it, &o.g) == 1) {
        uint64_t end = group_end(&o.g);
        if (end > w->max_end)
            w->max_end = end;
        if (step) {
            /* A block per collective call, each at its own count (the
             * reader checked: one group): an op each, as separate ORDER
             * and WRITE records would have made. */
            struct logfs_group g = o.g;
            o.g.count = 1;
            o.g.stride = 0;
            for (uint64_t i = 0; i < g.count; i++) {
                o.g.offset = logfs_group_block(&g, i);
                o.seq = w->seq + i * step;
                if ((rc = plan_push_ops(&w->ops, &w->nops, &w->capops, &o, 1)))
                    return rc;
                o.dlog += g.blocklen;
            }
            w->seq = o.seq;
            continue;
        }
        if (o.g.count == 1)
            o.g.stride = 0;
        if ((rc = plan_push_ops(&w->ops, &w->nops, &w->capops, &o, 1)))
            return rc;
        o.dlog += o.g.count * o.g.blocklen;
    }
    return LOGFS_OK;
}

static int set_size(struct wepoch *w, uint32_t rank, uint64_t size)
{
    struct op o = {{size, 0, 0, 0}, 0, w->seq, w->stamp, rank};
    w->dirty = 1;
    if (!w->rs.present || size < w->rs.truncate_to)
        w->rs.truncate_to = size;
    w->rs.present = 1;
    w->rs.extend_to = size;
    if (w->max_end > size)
        w->need_map = 1; /* it discards some of this writer's bytes */
    return plan_push_ops(&w->ops, &w->nops, &w->capops, &o, 1);
}

/* Writer rank's ops (rank: its header's, or 0 for a one_writer plan). */
static int read_writer(struct logfs_plan *p, struct logfs_reader *r, uint32_t rank,
                       const char *path, const struct logfs_plan_opts *o, struct logfs_error *err)
{
    struct wepoch w;
    struct logfs_record rec;
    uint64_t epoch = 0;
    int rc;

    memset(&w, 0, sizeof w);
    if (o->resume && o->resume[rank].pos) {
        const struct logfs_reader_mark *m = &o->resume[rank];
        if ((rc = logfs_reader_resume(r, m, err)))
            return rc;
        epoch = m->epoch;
        w.seq = m->order_seq;
        w.stamp = m->stamp;
        p->sealed[rank] = epoch;
    }
    logfs_reader_get_mark(r, &p->marks[rank]);
    for (;;) {
        struct logfs_error e;
        rc = logfs_reader_next(r, &rec, &e);
        if (rc == LOGFS_END) {
            rc = LOGFS_OK;
            if (o->include_unsealed) {
                rc = fold(p, epoch, &w);
                logfs_reader_get_mark(r, &p->marks[rank]);
            }
            break;
        }
        if (rc) {
            if (!o->salvage) {
                if (err)
                    *err = e;
                break;
            }
            p->warnings[rank] = strdup(e.msg);
            rc = p->warnings[rank] ? LOGFS_OK : LOGFS_ENOMEM;
            break;
        }
        switch (rec.type) {
        case LOGFS_REC_WRITE:
            rc = add_write(&w, rank, &rec);
            break;
        case LOGFS_REC_SETSIZE:
            rc = set_size(&w, rank, rec.u.setsize.size);
            break;
        case LOGFS_REC_ORDER:
            w.seq = rec.u.order.seq;
            break;
        case LOGFS_REC_STAMP:
            w.stamp = rec.u.stamp.clock;
            if (rec.u.stamp.process)
                p->procs[rank] = rec.u.stamp.process;
            break;
        case LOGFS_REC_SYNC:
        case LOGFS_REC_CLOSE:
            /* An empty sealed epoch still counts: epochs line up across writers. */
            rc = plan_grow_epochs(p, epoch + 1);
            if (!rc)
                rc = fold(p, epoch, &w);
            p->sealed[rank] = ++epoch;
            logfs_reader_get_mark(r, &p->marks[rank]);
            break;
        }
        if (rc) {
            if (rc == LOGFS_ENOMEM)
                logfs_fail(err, rc, 0, "no memory to plan replay of %s", path);
            break;
        }
    }
    free(w.ops);
    return rc;
}

int plan_finish_epoch(struct epoch *ep, unsigned flags)
{
    int rc = 0;
    if (!ep->need_map && !(flags & LOGFS_PLAN_NO_COMPACT))
        rc = plan_compact(ep);
    if (rc == 0)
        rc = plan_with_map(ep);
    else if (rc == 1)
        rc = LOGFS_OK;
    free(ep->ops);
    ep->ops = NULL;
    ep->nops = ep->capops = 0;
    return rc;
}

int logfs_plan_build(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                     struct logfs_plan **out, struct logfs_error *err)
{
    return logfs_plan_build_flags(metalogs, n, o, 0, out, err);
}


/* Read the metalogs of one session into a new plan whose epochs still hold
 * their ops (not yet finished). */
int plan_load_session(const struct logfs_metalog_src *logs, size_t n,
                      const struct logfs_plan_opts *o, struct logfs_plan **out,
                      struct logfs_error *err)
{
    struct logfs_reader **rd = NULL;
    unsigned char *absent = NULL;
    struct logfs_plan *p;
    int rc = LOGFS_OK, have_id = 0;

    *out = NULL;
    if (n == 0 || n > INT32_MAX)
        return logfs_fail(err, LOGFS_EINVAL, 0, "replay needs at least one metalog");
    p = calloc(1, sizeof *p);
    rd = calloc(n, sizeof *rd);
    absent = calloc(n, 1);
    if (!p || !rd || !absent || !(p->datalogs = calloc(n, sizeof *p->datalogs)) ||
        !(p->warnings = calloc(n, sizeof *p->warnings)) ||
        !(p->sealed = calloc(n, sizeof *p->sealed)) || !(p->procs = calloc(n, sizeof *p->procs)) ||
        !(p->marks = calloc(n, sizeof *p->marks))) {
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
        goto out;
    }
    p->nwriters = (uint32_t)n;
    /* Open all first: the headers must agree before anything is planned. */
    for (size_t i = 0; i < n; i++) {
        struct logfs_reader *r;
        const struct logfs_header *h;
        if (logs[i].gone) {
            if (!o->salvage) {
                rc = logfs_fail(err, LOGFS_ENOENT, 0, "metalog %s is gone", logs[i].metalog);
                goto out;
            }
            continue;   /* (its place is filled below, once every header is in) */
        }
        rc = logs[i].data ? logfs_reader_open_mem(logs[i].data, logs[i].len, &r, err)
                          : logfs_reader_open_kept_upto(logs[i].metalog, logs[i].kept,
                                                        logs[i].size, &r, err);
        if (rc && logs[i].absent_ok && !logs[i].data && logfs_metalog_unmade(logs[i].metalog, rc)) {
            rc = LOGFS_OK; /* (its place is filled below, as a gone writer's, without a warning) */
            absent[i] = 1;
            continue;
        }
        /* (a lazy writer wrote its header since the first look: look again,
         * at its size now) */
        if (rc == LOGFS_EFORMAT && logs[i].absent_ok && !logs[i].data)
            rc = logfs_reader_open_kept(logs[i].metalog, logs[i].kept, &r, err);
        if (rc)
            goto out;
        h = logfs_reader_header(r);
        if (!have_id)
            p->file_id = h->file_id;
        have_id = 1;
        uint32_t at = o->one_writer ? 0 : h->rank;
        if (h->file_id != p->file_id || (o->one_writer ? n != 1 : h->nwriters != n) || rd[at]) {
            rc = logfs_fail(err, LOGFS_EMISMATCH, 0,
                            "metalog %s (file id %llu, rank %u of %u) does not fit with the other %zu",
                            logs[i].metalog, (unsigned long long)h->file_id, h->rank, h->nwriters, n - 1);
            logfs_reader_close(r);
            goto out;
        }
        rd[at] = r;
        if (!(p->datalogs[at] = logfs_datalog_path(logs[i].metalog))) {
            rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
            goto out;
        }
    }
    /* A gone writer takes its place in the session (writers are listed in
     * rank order), unless a header claimed it; so does a lazy one with no
     * log yet, with nothing to say about it. */
    for (size_t i = 0; i < n && !rc; i++) {
        if (!logs[i].gone && !absent[i])
            continue;
        if (rd[i]) {
            rc = logfs_fail(err, LOGFS_EMISMATCH, 0, "metalog %s is gone, and another "
                            "metalog claims its rank %zu", logs[i].metalog, i);
            break;
        }
        if (absent[i])
            continue; /* (no datalog either: logfs_plan_datalog says NULL) */
        char msg[LOGFS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "its metalog %s is gone (nobody can read it): nothing "
                 "it wrote was replayed", logs[i].metalog);
        if (!(p->datalogs[i] = logfs_datalog_path(logs[i].metalog)) ||
            !(p->warnings[i] = strdup(msg)))
            rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    }
    for (size_t i = 0; i < n && !rc; i++)
        if (rd[i])
            rc = read_writer(p, rd[i], (uint32_t)i, p->datalogs[i], o, err);
out:
    if (rd)
        for (size_t i = 0; i < n; i++)
            logfs_reader_close(rd[i]);
    free(rd);
    free(absent);
    if (rc) {
        logfs_plan_free(p);
        return rc;
    }
    *out = p;
    return LOGFS_OK;
}

struct logfs_metalog_src *plan_sources(const char *const *metalogs, size_t n)
{
    struct logfs_metalog_src *s = calloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; s && i < n; i++)
        s[i].metalog = metalogs[i];
    return s;
}

int logfs_plan_build_flags(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                           unsigned flags, struct logfs_plan **out, struct logfs_error *err)
{
    struct logfs_metalog_src *s = plan_sources(metalogs, n);
    int rc;

    *out = NULL;
    if (!s)
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    rc = logfs_plan_build_src(s, n, o, flags, out, err);
    free(s);
    return rc;
}

int logfs_plan_build_src(const struct logfs_metalog_src *logs, size_t n,
                         const struct logfs_plan_opts *o, unsigned flags, struct logfs_plan **out,
                         struct logfs_error *err)
{
    static const struct logfs_plan_opts defaults = {0, 0, NULL, 0};
    struct logfs_plan *p;
    int rc = plan_load_session(logs, n, o ? o : &defaults, &p, err);

    *out = NULL;
    if (rc)
        return rc;
    for (size_t e = 0; e < p->nepochs && !rc; e++)
        if ((rc = plan_finish_epoch(&p->epochs[e], flags)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
    if (rc) {
        logfs_plan_free(p);
        return rc;
    }
    *out = p;
    return LOGFS_OK;
}

void logfs_plan_free(struct logfs_plan *p)
{
    if (!p)
        return;
    for (size_t e = 0; e < p->nepochs; e++) {
        free(p->epochs[e].ops);
        free(p->epochs[e].pieces);
        free(p->epochs[e].prefix);
        plan_free_compact(&p->epochs[e]);
    }
    for (uint32_t i = 0; p->datalogs && i < p->nwriters; i++)
        free(p->datalogs[i]);
    for (uint32_t i = 0; p->warnings && i < p->nwriters; i++)
        free(p->warnings[i]);
    free(p->datalogs);
    free(p->warnings);
    free(p->sealed);
    free(p->procs);
    free(p->marks);
    free(p->epochs);
    free(p);
}

uint64_t logfs_plan_nepochs(const struct logfs_plan *p)
{
    return p->nepochs;
}

uint32_t logfs_plan_nwriters(const struct logfs_plan *p)
{
    return p->nwriters;
}

uint64_t logfs_plan_file_id(const struct logfs_plan *p)
{
    return p->file_id;
}

const char *logfs_plan_datalog(const struct logfs_plan *p, uint32_t rank)
{
    return rank < p->nwriters ? p->datalogs[rank] : NULL;
}

const char *logfs_plan_warning(const struct logfs_plan *p, uint32_t rank)
{
    return rank < p->nwriters ? p->warnings[rank] : NULL;
}

uint64_t logfs_plan_writer_epochs(const struct logfs_plan *p, uint32_t rank)
{
    return rank < p->nwriters ? p->sealed[rank] : 0;
}

void logfs_plan_mark(const struct logfs_plan *p, uint32_t rank, struct logfs_reader_mark *m)
{
    if (rank < p->nwriters && p->marks)
        *m = p->marks[rank];
    else
        memset(m, 0, sizeof *m);
}

int logfs_plan_key_bounds(const struct logfs_plan *p, struct logfs_plan_key *min,
                          struct logfs_plan_key *max)
{
    if (!p->has_keys)
        return 0;
    *min = p->key_min;
    *max = p->key_max;
    return 1;
}

int logfs_plan_key_cmp(const struct logfs_plan_key *a, const struct logfs_plan_key *b)
{
    return plan_key_order(a, b);
}

int logfs_plan_check_sealed(const struct logfs_plan *p, const uint64_t *promised,
                            struct logfs_error *err)
{
    for (uint32_t w = 0; w < p->nwriters; w++)
        if (p->sealed[w] < promised[w])
            return logfs_fail(err, LOGFS_ELOST, 0,
                              "writer %" PRIu32 " closed its log after %" PRIu64 " epochs, but "
                              "its metalog seals only %" PRIu64 ": synced data is missing "
                              "(a truncated, or older copy of the log?)",
                              w, promised[w], p->sealed[w]);
    return LOGFS_OK;
}

uint64_t logfs_plan_epoch_bytes(const struct logfs_plan *p, uint64_t e)
{
    return e < p->nepochs ? p->epochs[e].total : 0;
}

int logfs_plan_resize(const struct logfs_plan *p, uint64_t e, struct logfs_resize *rs)
{
    if (e >= p->nepochs)
        return LOGFS_EINVAL;
    *rs = p->epochs[e].rs;
    return LOGFS_OK;
}
