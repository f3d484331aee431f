/*
 * File domains of an epoch: process r of m replays the bytes of byte rank
 * [total * r / m, total * (r + 1) / m), whichever form the epoch has, and
 * hands them to a sink: pieces (adjacent ones of one writer merged) or
 * each writer's strided runs.
 */
#include "plan_internal.h"

#include <stdlib.h>
#include <string.h>

/* Byte rank t of the epoch's @p total bytes split m ways, rounded down. */
static uint64_t cut_point(uint64_t total, uint32_t r, uint32_t m)
{
    return (uint64_t)((unsigned __int128)total * r / m);
}


int plan_sink_piece(struct sink *s, const struct logfs_replay_piece *q)
{
    int rc = 0;
    if (s->piece_fn) {
        struct logfs_replay_piece *pd = &s->pend;
        if (pd->length && pd->writer == q->writer && pd->offset + pd->length == q->offset &&
            pd->dlog_off + pd->length == q->dlog_off) {
            pd->length += q->length;
            return 0;
        }
        if (pd->length)
            rc = s->piece_fn(s->arg, pd);
        *pd = *q;
        return rc;
    }
    struct logfs_replay_run *r = &s->wr[q->writer];
    if (r->count) {
        if (r->count == 1 && q->offset == r->offset + r->blocklen && q->dlog_off == r->dlog_off + r->blocklen) {
            r->blocklen += q->length; /* contiguous: one longer block */
            r->stride = r->blocklen;
            return 0;
        }
        if (q->length == r->blocklen && q->dlog_off == r->dlog_off + r->count * r->blocklen) {
            if (r->count == 1 && q->offset >= r->offset + r->blocklen) {
                r->stride = q->offset - r->offset;
                r->count = 2;
                return 0;
            }
            if (r->count > 1 && q->offset == r->offset + r->count * r->stride) {
                r->count++;
                return 0;
            }
        }
        if ((rc = s->run_fn(s->arg, r)) != 0)
            return rc;
    }
    *r = (struct logfs_replay_run){q->offset, q->length, q->length, 1, q->writer, q->dlog_off};
    return 0;
}

static int sink_flush(struct sink *s)
{
    int rc = 0;
    if (s->piece_fn) {
        if (s->pend.length)
            rc = s->piece_fn(s->arg, &s->pend);
        s->pend.length = 0;
        return rc;
    }
    for (uint32_t w = 0; w < s->nw && !rc; w++)
        if (s->wr[w].count) {
            rc = s->run_fn(s->arg, &s->wr[w]);
            s->wr[w].count = 0;
        }
    return rc;
}

static int domain(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m, uint64_t *lo,
                  uint64_t *hi, struct sink *s)
{
    const struct epoch *ep;
    uint64_t b0, b1;
    int rc;

    *lo = *hi = 0;
    if (e >= p->nepochs || m == 0 || r >= m)
        return LOGFS_EINVAL;
    ep = &p->epochs[e];
    b0 = cut_point(ep->total, r, m);
    b1 = cut_point(ep->total, r + 1, m);
    if (b0 == b1)
        return LOGFS_OK;
    if (ep->compact) {
        *lo = plan_compact_byte_at(ep, b0);
        *hi = plan_compact_byte_at(ep, b1 - 1) + 1;
        rc = plan_compact_domain(ep, *lo, *hi, s);
    } else {
        rc = plan_map_domain(ep, b0, b1, lo, hi, s);
    }
    return rc ? rc : sink_flush(s);
}

int logfs_plan_domain(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                      uint64_t *lo, uint64_t *hi, logfs_replay_fn fn, void *arg)
{
    struct sink s;
    memset(&s, 0, sizeof s);
    s.piece_fn = fn;
    s.arg = arg;
    return domain(p, e, r, m, lo, hi, &s);
}

int logfs_plan_domain_runs(const struct logfs_plan *p, uint64_t e, uint32_t r, uint32_t m,
                           uint64_t *lo, uint64_t *hi, logfs_replay_run_fn fn, void *arg)
{
    struct sink s;
    int rc;
    memset(&s, 0, sizeof s);
    s.run_fn = fn;
    s.arg = arg;
    s.nw = p->nwriters;
    if (!(s.wr = calloc(s.nw, sizeof *s.wr))) {
        *lo = *hi = 0;
        return LOGFS_ENOMEM;
    }
    rc = domain(p, e, r, m, lo, hi, &s);
    free(s.wr);
    return rc;
}

uint64_t logfs_plan_epoch_end(const struct logfs_plan *p, uint64_t e)
{
    if (e >= p->nepochs || p->epochs[e].total == 0)
        return 0;
    const struct epoch *ep = &p->epochs[e];
    if (ep->compact)    /* (byte ranks follow file offsets) */
        return plan_compact_byte_at(ep, ep->total - 1) + 1;
    const struct logfs_replay_piece *last = &ep->pieces[ep->n - 1];
    return last->offset + last->length;
}

int logfs_plan_epoch_compact(const struct logfs_plan *p, uint64_t e)
{
    return e < p->nepochs && p->epochs[e].compact;
}
