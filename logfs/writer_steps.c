/*
 * Steps: a run of collective write calls of one block each, every call at
 * its own order count, kept as one strided group in one WRITE record after
 * an ORDER with a step (format.h).  An application that writes one element
 * per MPI_File_write_at_all (IOR -c -t 8, PnetCDF's per-variable calls)
 * would otherwise log an ORDER and a WRITE record per call: 28 bytes of
 * metalog for 8 of data, which every process of the replay then gathers
 * and parses (the replay of 16384 such calls took 14 ms, that of the same
 * writes as one group 1 ms).
 *
 * How they form (writer.c calls these): a call that made one block is
 * carried as usual; when the order count moves on, the carry waits, and
 * the next call's begin makes it the first step.  Each later call begins
 * stashed beside the steps: at its end, if it made one block that
 * continues them (the same length, the stride, the count's step, its data
 * right after theirs in the datalog), the block joins them; otherwise the
 * steps are queued before its records.  Anything that needs the records
 * (sync, flush, set_size, stamp, close) settles them.
 */
#include "writer_internal.h"

#include "coding.h"
#include "format.h"

void logfs_steps_from_carry(struct logfs_writer *w)
{
    struct logfs_steps *st = &w->steps;

    st->active = 1;
    st->g.offset = w->run_off;
    st->g.blocklen = w->run_len;
    st->g.stride = 0;
    st->g.count = 1;
    st->dlog = w->run_dlog;
    st->seq0 = w->rec_seq;
    st->step = 0;
    w->carry = 0;
    w->single = 0;
}

int logfs_steps_take_call(struct logfs_writer *w)
{
    struct logfs_steps *st = &w->steps;
    struct logfs_group *g = &st->g;

    if (!st->active || w->call_runs != 1 || w->rfill || w->gr.g.count || !w->run_len)
        return 0;
    if (w->run_len != g->blocklen || w->rec_seq <= logfs_steps_last(st) || g->count >= LOGFS_MAX_FILE_END
        || w->run_dlog != st->dlog + g->count * g->blocklen)
        return 0;
    uint64_t dseq = w->rec_seq - logfs_steps_last(st);
    int64_t d = (int64_t)w->run_off - (int64_t)g->offset;      /* (offsets < 2^63) */
    if (g->count == 1) {
        g->stride = d;
        st->step = dseq;
    } else if (dseq != st->step || (__int128)g->count * g->stride != (__int128)d)
        return 0;
    g->count++;
    return 1;
}

int logfs_steps_finish(struct logfs_writer *w, struct logfs_error *err)
{
    struct logfs_steps *st = &w->steps;
    uint8_t pre[20], grp[LOGFS_GROUP_MAX_LEN];
    size_t n;
    int rc;

    if (!st->active)
        return LOGFS_OK;
    st->active = 0;
    if ((rc = logfs_writer_queue_index(w, &st->g, st->dlog, err)))
        return rc;
    /* (a single block is a plain record at its count) */
    uint64_t step = st->g.count > 1 ? st->step : 0;
    if ((rc = logfs_writer_marks(w, st->seq0, step, logfs_steps_last(st), err)))
        return rc;
    n = logfs_put_varint(pre, st->dlog);
    n += logfs_put_varint(pre + n, st->g.count * st->g.blocklen);
    return logfs_writer_queue_record(w, LOGFS_REC_WRITE, pre, n, grp,
                                     logfs_group_encode(grp, &st->g), err);
}

int logfs_steps_index(const struct logfs_writer *w)
{
    const struct logfs_steps *st = &w->steps;

    if (!st->active || !w->ix)
        return LOGFS_OK;
    return logfs_index_group(w->ix, &st->g, st->dlog, w->epoch);
}
