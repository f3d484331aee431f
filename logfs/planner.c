/*
 * Replay planner.  Each writer's epoch is first built in a map of its own
 * (so its SETSIZE cuts only its earlier bytes), then folded into the epoch's
 * map in rank order (so the higher rank wins any overlap), then flattened to
 * an array with byte prefix sums for cutting domains.
 */
#include "planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extents.h"
#include "format.h"
#include "internal.h"
#include "rangemap.h"
#include "reader.h"

struct epoch {
    struct logfs_rangemap *map; /* while building */
    struct logfs_replay_piece *pieces;
    uint64_t *prefix;           /* bytes before pieces[i] */
    size_t n;
    uint64_t total;
    struct logfs_resize rs;
};

struct logfs_plan {
    uint64_t file_id;
    uint32_t nwriters;
    char **datalogs;
    char **warnings;
    struct epoch *epochs;
    size_t nepochs, cap;
};

/* What one writer did in its current epoch. */
struct wepoch {
    struct logfs_rangemap *map;
    struct logfs_resize rs;
    int dirty;
};

static int grow_epochs(struct logfs_plan *p, uint64_t need)
{
    if (need <= p->nepochs)
        return LOGFS_OK;
    if (need > p->cap) {
        size_t cap = p->cap ? p->cap : 8;
        while (cap < need)
            cap *= 2;
        struct epoch *e = realloc(p->epochs, cap * sizeof *e);
        if (!e)
            return LOGFS_ENOMEM;
        p->epochs = e;
        p->cap = cap;
    }
    memset(p->epochs + p->nepochs, 0, (need - p->nepochs) * sizeof *p->epochs);
    p->nepochs = need;
    return LOGFS_OK;
}

static int fold_range(void *arg, const struct logfs_range *r, int is_hole)
{
    (void)is_hole;
    return logfs_rangemap_insert(arg, r->start, r->end, r->owner, r->pos);
}

/* Fold writer epoch @p w into epoch @p e of the plan and reset it. */
static int fold(struct logfs_plan *p, uint64_t e, struct wepoch *w)
{
    struct epoch *ep;
    int rc;
    if (!w->dirty)
        return LOGFS_OK;
    if ((rc = grow_epochs(p, e + 1)))
        return rc;
    ep = &p->epochs[e];
    if (!ep->map && (rc = logfs_rangemap_create(&ep->map)))
        return rc;
    if ((rc = logfs_rangemap_walk(w->map, fold_range, ep->map)))
        return rc;
    if (w->rs.present) {
        if (!ep->rs.present) {
            ep->rs = w->rs;
        } else {
            if (w->rs.truncate_to < ep->rs.truncate_to)
                ep->rs.truncate_to = w->rs.truncate_to;
            if (w->rs.extend_to > ep->rs.extend_to)
                ep->rs.extend_to = w->rs.extend_to;
        }
    }
    logfs_rangemap_destroy(w->map);
    memset(w, 0, sizeof *w);
    return logfs_rangemap_create(&w->map);
}

static int add_write(struct wepoch *w, uint32_t rank, const struct logfs_record *rec)
{
    struct logfs_group_iter it;
    struct logfs_group g;
    uint64_t dlog = rec->u.write.dlog_off;
    int rc;

    w->dirty = 1;
    logfs_group_iter_init(&it, rec->u.write.groups, rec->u.write.groups_len);
    while (logfs_group_next(&it, &g) == 1) {
        if (g.stride == (int64_t)g.blocklen) {
            /* Back-to-back blocks are one range. */
            uint64_t len = g.count * g.blocklen;
            if ((rc = logfs_rangemap_insert(w->map, g.offset, g.offset + len, (int32_t)rank, dlog)))
                return rc;
            dlog += len;
            continue;
        }
        for (uint64_t i = 0; i < g.count; i++) {
            uint64_t off = logfs_group_block(&g, i);
            if ((rc = logfs_rangemap_insert(w->map, off, off + g.blocklen, (int32_t)rank, dlog)))
                return rc;
            dlog += g.blocklen;
        }
    }
    return LOGFS_OK;
}

static int set_size(struct wepoch *w, uint64_t size)
{
    w->dirty = 1;
    if (!w->rs.present || size < w->rs.truncate_to)
        w->rs.truncate_to = size;
    w->rs.present = 1;
    w->rs.extend_to = size;
    if (size >= LOGFS_MAX_FILE_END)
        return LOGFS_OK;
    return logfs_rangemap_remove(w->map, size, LOGFS_MAX_FILE_END);
}

static int read_writer(struct logfs_plan *p, struct logfs_reader *r, const char *path,
                       const struct logfs_plan_opts *o, struct logfs_error *err)
{
    uint32_t rank = logfs_reader_header(r)->rank;
    struct wepoch w = {0};
    struct logfs_record rec;
    uint64_t epoch = 0;
    int rc;

    if (logfs_rangemap_create(&w.map))
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    for (;;) {
        struct logfs_error e;
        rc = logfs_reader_next(r, &rec, &e);
        if (rc == LOGFS_END) {
            if (o->include_unsealed)
                rc = fold(p, epoch, &w);
            else
                rc = LOGFS_OK;
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
            rc = set_size(&w, rec.u.setsize.size);
            break;
        case LOGFS_REC_SYNC:
        case LOGFS_REC_CLOSE:
            /* An empty sealed epoch still counts: epochs line up across writers. */
            rc = grow_epochs(p, epoch + 1);
            if (!rc)
                rc = fold(p, epoch, &w);
            epoch++;
            break;
        }
        if (rc) {
            if (rc == LOGFS_ENOMEM)
                logfs_fail(err, rc, 0, "no memory to plan replay of %s", path);
            break;
        }
    }
    logfs_rangemap_destroy(w.map);
    return rc;
}

struct flat_ctx {
    struct epoch *ep;
    size_t i;
};

static int flatten_one(void *arg, const struct logfs_range *r, int is_hole)
{
    struct flat_ctx *c = arg;
    (void)is_hole;
    c->ep->pieces[c->i] = (struct logfs_replay_piece){r->start, r->end - r->start, (uint32_t)r->owner, r->pos};
    c->ep->prefix[c->i] = c->ep->total;
    c->ep->total += r->end - r->start;
    c->i++;
    return 0;
}

static int flatten(struct epoch *ep)
{
    struct flat_ctx c = {ep, 0};
    if (!ep->map)
        return LOGFS_OK;
    ep->n = logfs_rangemap_count(ep->map);
    ep->pieces = malloc((ep->n ? ep->n : 1) * sizeof *ep->pieces);
    ep->prefix = malloc((ep->n ? ep->n : 1) * sizeof *ep->prefix);
    if (!ep->pieces || !ep->prefix)
        return LOGFS_ENOMEM;
    logfs_rangemap_walk(ep->map, flatten_one, &c);
    logfs_rangemap_destroy(ep->map);
    ep->map = NULL;
    return LOGFS_OK;
}

static char *datalog_path(const char *metalog)
{
    size_t n = strlen(metalog), k = strlen(".metalog");
    char *s = malloc(n + sizeof ".datalog");
    if (!s)
        return NULL;
    if (n >= k && !strcmp(metalog + n - k, ".metalog"))
        n -= k;
    memcpy(s, metalog, n);
    strcpy(s + n, ".datalog");
    return s;
}

int logfs_plan_build(const char *const *metalogs, size_t n, const struct logfs_plan_opts *o,
                     struct logfs_plan **out, struct logfs_error *err)
{
    static const struct logfs_plan_opts defaults = {0, 0};
    struct logfs_reader **rd = NULL;
    struct logfs_plan *p;
    int rc = LOGFS_OK;

    *out = NULL;
    if (!o)
        o = &defaults;
    if (n == 0 || n > INT32_MAX)
        return logfs_fail(err, LOGFS_EINVAL, 0, "replay needs at least one metalog");
    p = calloc(1, sizeof *p);
    rd = calloc(n, sizeof *rd);
    if (!p || !rd || !(p->datalogs = calloc(n, sizeof *p->datalogs)) ||
        !(p->warnings = calloc(n, sizeof *p->warnings))) {
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
        goto out;
    }
    p->nwriters = (uint32_t)n;
    /* Open all first: the headers must agree before anything is planned. */
    for (size_t i = 0; i < n; i++) {
        struct logfs_reader *r;
        const struct logfs_header *h;
        if ((rc = logfs_reader_open(metalogs[i], &r, err)))
            goto out;
        h = logfs_reader_header(r);
        if (i == 0)
            p->file_id = h->file_id;
        if (h->file_id != p->file_id || h->nwriters != n || rd[h->rank]) {
            rc = logfs_fail(err, LOGFS_EMISMATCH, 0,
                            "metalog %s (file id %llu, rank %u of %u) does not fit with the other %zu",
                            metalogs[i], (unsigned long long)h->file_id, h->rank, h->nwriters, n - 1);
            logfs_reader_close(r);
            goto out;
        }
        rd[h->rank] = r;
        if (!(p->datalogs[h->rank] = datalog_path(metalogs[i]))) {
            rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
            goto out;
        }
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = read_writer(p, rd[i], p->datalogs[i], o, err);
    for (size_t e = 0; e < p->nepochs && !rc; e++)
        if ((rc = flatten(&p->epochs[e])))
            logfs_fail(err, rc, 0, "no memory to plan replay");
out:
    if (rd)
        for (size_t i = 0; i < n; i++)
            logfs_reader_close(rd[i]);
    free(rd);
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
        logfs_rangemap_destroy(p->epochs[e].map);
        free(p->epochs[e].pieces);
        free(p->epochs[e].prefix);
    }
    for (uint32_t i = 0; p->datalogs && i < p->nwriters; i++)
        free(p->datalogs[i]);
    for (uint32_t i = 0; p->warnings && i < p->nwriters; i++)
        free(p->warnings[i]);
    free(p->datalogs);
    free(p->warnings);
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

/* Byte rank t of the epoch's @p total bytes split m ways, rounded down. */
static uint64_t cut_point(uint64_t total, uint32_t r, uint32_t m)
{
    return (uint64_t)((unsigned __int128)total * r / m);
}

int logfs_plan_domain(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                      uint64_t *lo, uint64_t *hi, logfs_replay_fn fn, void *arg)
{
    const struct epoch *ep;
    uint64_t b0, b1;
    size_t i, lo_i = 0, hi_i;

    *lo = *hi = 0;
    if (e >= p->nepochs || m == 0 || r >= m)
        return LOGFS_EINVAL;
    ep = &p->epochs[e];
    b0 = cut_point(ep->total, r, m);
    b1 = cut_point(ep->total, r + 1, m);
    if (b0 == b1)
        return LOGFS_OK;
    /* Last piece starting at or before byte rank b0. */
    hi_i = ep->n;
    while (hi_i - lo_i > 1) {
        size_t mid = lo_i + (hi_i - lo_i) / 2;
        if (ep->prefix[mid] <= b0)
            lo_i = mid;
        else
            hi_i = mid;
    }
    for (i = lo_i; i < ep->n && ep->prefix[i] < b1; i++) {
        struct logfs_replay_piece q = ep->pieces[i];
        uint64_t skip = b0 > ep->prefix[i] ? b0 - ep->prefix[i] : 0;
        uint64_t stop = ep->prefix[i] + q.length > b1 ? b1 - ep->prefix[i] : q.length;
        int rc;
        q.offset += skip;
        q.dlog_off += skip;
        q.length = stop - skip;
        if (i == lo_i)
            *lo = q.offset;
        *hi = q.offset + q.length;
        if ((rc = fn(arg, &q)) != 0)
            return rc;
    }
    return LOGFS_OK;
}
