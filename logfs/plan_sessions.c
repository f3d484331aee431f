/*
 * One plan from several sessions of a file (logs left pending by closes
 * while another handle was open, or by deferred replay): each session is
 * read on its own, every op is given a place in time by the session and
 * process rules below, and all of them go through one range map.
 */
#include "plan_internal.h"

#include <stdlib.h>
#include <string.h>

/* A run: one writer's ops of one (epoch, collective-call) group under one
 * STAMP; runs are placed in time, and their ops with them. */
struct run {
    uint64_t raw;      /* its STAMP clock */
    uint64_t place;    /* its place in time (>= raw) */
    uint64_t proc;     /* the writing process (0: unknown) */
    uint32_t session, writer;
    size_t group;      /* groups count across all sessions, in order */
};

struct runs {
    struct run *r;
    size_t n, cap;
    size_t *group_first; /* group g's runs: [group_first[g], group_first[g + 1]) */
    size_t ngroups, gcap;
    size_t *session_first_group; /* session s: groups [sfg[s], sfg[s + 1]) */
};

static int push_run(struct runs *rs, const struct run *r)
{
    struct run *v = logfs_grow(rs->r, &rs->cap, rs->n + 1, sizeof *v, 64);
    if (!v)
        return LOGFS_ENOMEM;
    rs->r = v;
    rs->r[rs->n++] = *r;
    return LOGFS_OK;
}

static int new_group(struct runs *rs)
{
    size_t *v = logfs_grow(rs->group_first, &rs->gcap, rs->ngroups + 2, sizeof *v, 64);
    if (!v)
        return LOGFS_ENOMEM;
    rs->group_first = v;
    rs->group_first[rs->ngroups++] = rs->n;
    rs->group_first[rs->ngroups] = rs->n;
    return LOGFS_OK;
}

/* Cut session @p s (plan @p p, writers from @p base) into groups and runs;
 * each op's seq becomes the index of its run. */
static int cut_runs(struct runs *rs, struct logfs_plan *p, uint32_t s, uint32_t base)
{
    int rc = LOGFS_OK;
    for (size_t e = 0; e < p->nepochs && !rc; e++) {
        struct epoch *ep = &p->epochs[e];
        size_t i = 0;
        if ((rc = plan_sort_ops(ep->ops, ep->nops)))
            break;
        while (i < ep->nops && !rc) {
            uint64_t seq = ep->ops[i].seq;
            size_t j;
            if ((rc = new_group(rs)))
                break;
            for (j = i; j < ep->nops && ep->ops[j].seq == seq && !rc; j++) {
                struct op *o = &ep->ops[j];
                if (j == i || o[-1].writer != o->writer || o[-1].stamp != o->stamp) {
                    struct run r = {o->stamp, o->stamp, p->procs[o->writer], s, base + o->writer,
                                    rs->ngroups - 1};
                    rc = push_run(rs, &r);
                    rs->group_first[rs->ngroups] = rs->n;
                }
                o[0].seq = rs->n - 1; /* (o[0]: seq of later ops is still compared above) */
            }
            i = j;
        }
    }
    return rc;
}

/* A run in a process's order: (process, clock, group, run index). */
struct in_process {
    uint64_t proc, raw;
    size_t group, run;
};

static int by_process(const void *x, const void *y)
{
    const struct in_process *a = x, *b = y;
    if (a->proc != b->proc)
        return a->proc < b->proc ? -1 : 1;
    if (a->raw != b->raw)
        return a->raw < b->raw ? -1 : 1;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* One pass of the session rule: every group after every earlier group of
 * its session, and a writer's runs within a group in their order.
 * @return nonzero if a place moved. */
static int session_pass(struct runs *rs, size_t nsessions, uint64_t *last)
{
    int moved = 0;
    for (size_t s = 0; s < nsessions; s++) {
        uint64_t before = 0; /* the latest place of the groups so far */
        int any = 0;
        for (size_t g = rs->session_first_group[s]; g < rs->session_first_group[s + 1]; g++) {
            uint64_t most = before;
            for (size_t k = rs->group_first[g]; k < rs->group_first[g + 1]; k++) {
                struct run *r = &rs->r[k];
                uint64_t at = any ? before + 1 : 0;
                if (last[r->writer] != UINT64_MAX && last[r->writer] + 1 > at)
                    at = last[r->writer] + 1; /* the writer's earlier run */
                if (r->place < at) {
                    r->place = at;
                    moved = 1;
                }
                last[r->writer] = r->place;
                if (r->place > most)
                    most = r->place;
            }
            if (rs->group_first[g + 1] > rs->group_first[g]) {
                before = most;
                any = 1;
            }
        }
    }
    return moved;
}

/* One pass of the process rule: a process's runs, in the order it made
 * them (by its clock), each later than the one before. */
static int process_pass(struct runs *rs, const struct in_process *order, size_t n)
{
    int moved = 0;
    for (size_t i = 1; i < n; i++) {
        struct run *a = &rs->r[order[i - 1].run], *b = &rs->r[order[i].run];
        if (a->proc == b->proc && b->place <= a->place) {
            b->place = a->place + 1;
            moved = 1;
        }
    }
    return moved;
}

/*
 * Give every op of the sessions its place in time (in op.seq).  Three rules,
 * applied until none moves a place (or a bound on the passes, for logs of
 * racy programs whose rules contradict each other: the result is still the
 * same on every replayer):
 *  - a run is placed no earlier than its STAMP clock;
 *  - within a session, the groups of (epoch, collective-call count) follow
 *    each other as in a plan of the session alone: each is placed after
 *    every run of the groups before it;
 *  - a process's runs, in every session, follow each other in the order it
 *    made them (its clock strictly increases and stamps every switch of
 *    handle), even where the session rule moved one of them later (a
 *    process that lags behind the others in collective calls does that).
 * So a run another session began after one ended (sync, barrier, sync) is
 * placed after it, and a process's writes through two handles keep their
 * program order.
 */
static int place_in_time(struct logfs_plan **ps, size_t nsessions, const size_t *counts)
{
    struct runs rs;
    struct in_process *order = NULL;
    size_t nproc = 0, total = 0;
    uint64_t *last = NULL;
    uint32_t base = 0;
    int rc = LOGFS_OK;

    memset(&rs, 0, sizeof rs);
    for (size_t s = 0; s < nsessions; s++)
        total += counts[s];
    rs.session_first_group = calloc(nsessions + 1, sizeof *rs.session_first_group);
    last = malloc(total * sizeof *last);
    if (!rs.session_first_group || !last)
        rc = LOGFS_ENOMEM;
    for (size_t s = 0; s < nsessions && !rc; s++) {
        rs.session_first_group[s] = rs.ngroups;
        rc = cut_runs(&rs, ps[s], (uint32_t)s, base);
        base += (uint32_t)counts[s];
        rs.session_first_group[s + 1] = rs.ngroups;
    }
    if (!rc && rs.n && !(order = malloc(rs.n * sizeof *order)))
        rc = LOGFS_ENOMEM;
    if (!rc) {
        for (size_t k = 0; k < rs.n; k++)
            if (rs.r[k].proc)
                order[nproc++] = (struct in_process){rs.r[k].proc, rs.r[k].raw, rs.r[k].group, k};
        qsort(order, nproc, sizeof *order, by_process);
        for (int pass = 0; pass < 64; pass++) {
            for (size_t w = 0; w < total; w++)
                last[w] = UINT64_MAX;
            int moved = session_pass(&rs, nsessions, last);
            moved |= process_pass(&rs, order, nproc);
            if (!moved)
                break;
        }
        for (size_t s = 0; s < nsessions; s++)
            for (size_t e = 0; e < ps[s]->nepochs; e++)
                for (size_t i = 0; i < ps[s]->epochs[e].nops; i++) {
                    struct op *o = &ps[s]->epochs[e].ops[i];
                    o->seq = rs.r[o->seq].place;
                }
    }
    free(order);
    free(last);
    free(rs.r);
    free(rs.group_first);
    free(rs.session_first_group);
    return rc;
}

/* Move session @p s's ops, writers and resizes into plan @p m (one epoch),
 * its writers becoming m's writers [base, base + s->nwriters). */
static int absorb(struct logfs_plan *m, struct logfs_plan *s, uint32_t base)
{
    struct epoch *all = &m->epochs[0];
    int rc;

    for (uint32_t w = 0; w < s->nwriters; w++) {
        m->datalogs[base + w] = s->datalogs[w];
        m->warnings[base + w] = s->warnings[w];
        m->sealed[base + w] = s->sealed[w];
        s->datalogs[w] = s->warnings[w] = NULL;
    }
    for (size_t e = 0; e < s->nepochs; e++) {
        struct epoch *ep = &s->epochs[e];
        for (size_t i = 0; i < ep->nops; i++)
            ep->ops[i].writer += base;
        if ((rc = plan_push_ops(&all->ops, &all->nops, &all->capops, ep->ops, ep->nops)))
            return rc;
        plan_merge_resize(&all->rs, &ep->rs);
    }
    return LOGFS_OK;
}

int logfs_plan_build_sessions(const char *const *metalogs, const size_t *counts, size_t nsessions,
                              const struct logfs_plan_opts *o, struct logfs_plan **out,
                              struct logfs_error *err)
{
    size_t n = 0;
    struct logfs_metalog_src *s;
    int rc;

    *out = NULL;
    for (size_t i = 0; i < nsessions; i++)
        if ((n += counts[i]) < counts[i])
            return logfs_fail(err, LOGFS_EINVAL, 0, "session %zu: bad writer count", i);
    if (!(s = plan_sources(metalogs, n)))
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    rc = logfs_plan_build_sessions_src(s, counts, nsessions, o, out, err);
    free(s);
    return rc;
}

int logfs_plan_build_sessions_src(const struct logfs_metalog_src *logs, const size_t *counts,
                                  size_t nsessions, const struct logfs_plan_opts *o,
                                  struct logfs_plan **out, struct logfs_error *err)
{
    static const struct logfs_plan_opts defaults = {0, 0, NULL, 0};
    struct logfs_plan *m = NULL;
    size_t total = 0, at = 0;
    int rc = LOGFS_OK;

    *out = NULL;
    if (nsessions == 1)
        return logfs_plan_build_src(logs, counts[0], o, 0, out, err);
    if (!o)
        o = &defaults;
    if (o->resume)
        return logfs_fail(err, LOGFS_EINVAL, 0, "reading on from marks needs a plan of one session");
    for (size_t i = 0; i < nsessions; i++) {
        if (counts[i] == 0 || counts[i] > INT32_MAX - total)
            return logfs_fail(err, LOGFS_EINVAL, 0, "session %zu: bad writer count %zu", i, counts[i]);
        total += counts[i];
    }
    if (total == 0)
        return logfs_fail(err, LOGFS_EINVAL, 0, "replay needs at least one metalog");
    m = calloc(1, sizeof *m);
    if (!m || !(m->datalogs = calloc(total, sizeof *m->datalogs)) ||
        !(m->warnings = calloc(total, sizeof *m->warnings)) ||
        !(m->sealed = calloc(total, sizeof *m->sealed)) || plan_grow_epochs(m, 1)) {
        logfs_plan_free(m);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    }
    m->nwriters = (uint32_t)total;
    struct logfs_plan **ps = calloc(nsessions, sizeof *ps);
    if (!ps)
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to plan replay");
    for (size_t i = 0; i < nsessions && !rc; i++) {
        rc = plan_load_session(logs + at, counts[i], o, &ps[i], err);
        at += counts[i];
    }
    if (!rc) {
        m->file_id = ps[0]->file_id;
        if ((rc = place_in_time(ps, nsessions, counts)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
    }
    at = 0;
    for (size_t i = 0; i < nsessions && !rc; i++) {
        if ((rc = absorb(m, ps[i], (uint32_t)at)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
        at += counts[i];
    }
    for (size_t i = 0; ps && i < nsessions; i++)
        logfs_plan_free(ps[i]);
    free(ps);
    if (!rc) {
        /* every op through the range map, in its place in time */
        m->epochs[0].need_map = 1;
        m->epochs[0].mixed = 1;
        if ((rc = plan_finish_epoch(&m->epochs[0], 0)))
            logfs_fail(err, rc, 0, "no memory to plan replay");
    }
    if (rc) {
        logfs_plan_free(m);
        return rc;
    }
    *out = m;
    return LOGFS_OK;
}
