/*
 * Log writer: turns write calls into datalog bytes and metalog records.
 * Ordering rule: a metalog record only reaches the file after the datalog
 * bytes it points at (every metalog flush flushes the datalog first), and a
 * SYNC record only after those bytes are durable when `durable` is set; the
 * seal is rewritten only after the SYNC/CLOSE record is in the metalog (and
 * durable, when `durable` is set).
 */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coding.h"
#include "datalog.h"
#include "fault.h"
#include "extents.h"
#include "format.h"
#include "frame.h"
#include "index.h"
#include "internal.h"
#include "seal.h"
#include "writer_internal.h"

void logfs_writer_opts_init(struct logfs_writer_opts *o)
{
    memset(o, 0, sizeof *o);
    o->nwriters = 1;
    o->track_index = 1;
}

static int mreserve(struct logfs_writer *w, size_t more, struct logfs_error *err)
{
    uint8_t *b = logfs_grow(w->mbuf, &w->mcap, w->mfill + more, 1, 4096);
    if (!b)
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to queue a metalog record");
    w->mbuf = b;
    return LOGFS_OK;
}

/* The SYNC records of syncs that found their epoch empty (seal_epoch),
 * before any later record: epochs line up across writers by their SYNC
 * records, so each still counts, in order. */
static int pay_owed_syncs(struct logfs_writer *w, struct logfs_error *err)
{
    while (w->syncs_owed) {
        uint8_t p[20];
        size_t n = logfs_epoch_end_payload(p, w->epoch - w->syncs_owed, w->owed_dlen);
        int rc = mreserve(w, LOGFS_REC_HEADER_LEN + n, err);
        if (rc)
            return rc;
        w->mfill += logfs_frame_put(w->mbuf + w->mfill, LOGFS_REC_SYNC, p, n, NULL, 0);
        w->syncs_owed--;
    }
    return LOGFS_OK;
}

static int queue_record(struct logfs_writer *w, int type, const uint8_t *a, size_t alen,
                        const uint8_t *b, size_t blen, size_t *at, struct logfs_error *err)
{
    int rc = pay_owed_syncs(w, err);
    if (!rc)
        rc = mreserve(w, LOGFS_REC_HEADER_LEN + alen + blen, err);
    if (rc)
        return rc;
    if (at)
        *at = w->mfill;
    w->mfill += logfs_frame_put(w->mbuf + w->mfill, type, a, alen, b, blen);
    return LOGFS_OK;
}

/* Queue one record whose payload is @p a followed by @p b. */
int logfs_writer_queue_record(struct logfs_writer *w, int type, const uint8_t *a, size_t alen,
                              const uint8_t *b, size_t blen, struct logfs_error *err)
{
    return queue_record(w, type, a, alen, b, blen, NULL, err);
}

int logfs_writer_queue_record_at(struct logfs_writer *w, int type, const uint8_t *a,
                                 size_t alen, size_t *at, struct logfs_error *err)
{
    return queue_record(w, type, a, alen, NULL, 0, at, err);
}

/* A STAMP record's payload: the clock as a varint of fixed width (ten
 * bytes, which any clock fits), so that a pending stamp's record can be
 * written again in place with its clock; then the process. */
static size_t stamp_payload(const struct logfs_writer *w, uint8_t *s, uint64_t clock, int fixed)
{
    size_t n = 0;
    if (fixed) {
        for (int i = 0; i < 9; i++)
            s[n++] = (uint8_t)(((clock >> (7 * i)) & 0x7f) | 0x80);
        s[n++] = (uint8_t)(clock >> 63);
    } else
        n = logfs_put_varint(s, clock);
    if (w->process)
        n += logfs_put_varint(s + n, w->process);
    return n;
}

void logfs_writer_fill_later(struct logfs_writer *w, uint64_t clock)
{
    if (clock < w->stamp)
        clock = w->stamp;
    if (w->slot_queued) {
        uint8_t s[20];
        size_t n = stamp_payload(w, s, clock, 1);
        logfs_frame_put(w->mbuf + w->slot, LOGFS_REC_STAMP, s, n, NULL, 0);
    }
    w->stamp = clock;
    if (w->slot_queued)         /* (else the next write's STAMP says it) */
        w->stamp_logged = clock;
    w->later = w->slot_queued = 0;
}

int logfs_writer_flush_meta(struct logfs_writer *w, struct logfs_error *err)
{
    int rc = logfs_writer_ensure_files(w, err);
    return rc ? rc : logfs_writer_write_queued(w, err);
}

/* Data first, then the records that point at it. */
int logfs_writer_write_queued(struct logfs_writer *w, struct logfs_error *err)
{
    int rc = logfs_datalog_flush(&w->dl, err);
    if (rc || w->mfill == 0)
        return rc;
    if (w->slot_queued)
        logfs_writer_fill_later(w, w->later_fn(w->later_arg));
    if (w->max_meta && w->mflushed + w->mfill > w->max_meta)
        return logfs_fail(err, LOGFS_ENOSPC, ENOSPC, "metalog %s would exceed its limit of %llu bytes",
                          w->mpath, (unsigned long long)w->max_meta);
    /* (The data is in the datalog file now, its records not yet.) */
    int e = logfs_pwrite_full("metalog-write", w->mfd, w->mbuf, w->mfill, w->mflushed);
    if (e) {
        /* Keep the file a clean prefix of records; the queue stays for a retry. */
        if (ftruncate(w->mfd, (off_t)w->mflushed) < 0) {
            /* A torn tail is still read as a clean end, so this is not fatal. */
        }
        return logfs_fail_errno(err, e, "cannot append to metalog", w->mpath);
    }
    w->mflushed += w->mfill;
    w->mfill = 0;
    return LOGFS_OK;
}

static void reset_call(struct logfs_writer *w)
{
    w->in_call = 0;
    w->carried_in = 0;
    w->stashed = 0;
    w->call_runs = 0;
    w->run_len = 0;
    w->rfill = 0;
    w->rec_nbytes = 0;
    logfs_grouper_init(&w->gr);
}

int logfs_writer_begin_write(struct logfs_writer *w, struct logfs_error *err)
{
    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "begin_write inside a write call");
    if (w->carry && w->rec_seq == w->order_seq) {
        /* go on with the last call's group and run */
        w->carry = 0;
        w->single = 0;
        w->in_call = 1;
        w->carried_in = 1;
        w->call_runs = 0;
        return LOGFS_OK;
    }
    if (w->carry)               /* (one block of one call, at another count) */
        logfs_steps_from_carry(w);
    int stash = 0;
    if (w->steps.active) {
        int rc = logfs_steps_last(&w->steps) != w->order_seq ? LOGFS_OK
            : logfs_steps_finish(w, err);
        if (rc)
            return rc;
        stash = w->steps.active;
    }
    reset_call(w);
    w->in_call = 1;
    w->stashed = stash;
    w->rec_seq = w->order_seq;
    w->next_dlog = w->dl.len;
    return LOGFS_OK;
}

/* STAMP and ORDER records go just before the first WRITE or SETSIZE they
 * mark: syncs, switches and collective calls that write nothing cost
 * nothing. */
int logfs_writer_marks(struct logfs_writer *w, uint64_t seq, uint64_t step, uint64_t last,
                       struct logfs_error *err)
{
    uint8_t p[20];
    size_t n;
    int rc;
    if (w->stamp != w->stamp_logged || (w->later && !w->slot_queued)) {
        uint8_t s[20];
        size_t n = stamp_payload(w, s, w->stamp, w->later), at;
        if ((rc = logfs_writer_queue_record_at(w, LOGFS_REC_STAMP, s, n, &at, err)))
            return rc;
        w->stamp_logged = w->stamp;
        if (w->later) {
            w->slot_queued = 1;
            w->slot = at;
        }
    }
    if (seq == w->order_logged && !step)
        return LOGFS_OK;
    n = logfs_put_varint(p, seq);
    if (step)
        n += logfs_put_varint(p + n, step);
    if ((rc = logfs_writer_queue_record(w, LOGFS_REC_ORDER, p, n, NULL, 0, err)))
        return rc;
    w->order_logged = step ? last : seq;
    return LOGFS_OK;
}

static int finish_record(struct logfs_writer *w, struct logfs_error *err)
{
    uint8_t pre[20];
    size_t n;
    int rc;
    if (w->rfill == 0)
        return LOGFS_OK;
    /* (steps open beside this call were made before it) */
    if ((rc = logfs_steps_finish(w, err)) || (rc = logfs_writer_marks(w, w->rec_seq, 0, 0, err)))
        return rc;
    n = logfs_put_varint(pre, w->rec_dlog);
    n += logfs_put_varint(pre + n, w->rec_nbytes);
    rc = logfs_writer_queue_record(w, LOGFS_REC_WRITE, pre, n, w->rbuf, w->rfill, err);
    w->rfill = 0;
    w->rec_nbytes = 0;
    return rc;
}

int logfs_writer_queue_index(struct logfs_writer *w, const struct logfs_group *g, uint64_t dlog,
                             struct logfs_error *err)
{
    if (w->ix && logfs_index_queue(w->ix, g, dlog, w->epoch))
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for the local index");
    return LOGFS_OK;
}

static int emit_group(struct logfs_writer *w, const struct logfs_group *g, struct logfs_error *err)
{
    uint64_t bytes = g->count * g->blocklen;
    /* (steps this call began beside were written before it: their index
     * entries and records go first, or the index would let their older
     * bytes win over this call's) */
    int rc = logfs_steps_finish(w, err);
    if (rc)
        return rc;
    /* (room before the index entry: a group the index holds is in a record) */
    if (w->rfill + LOGFS_GROUP_MAX_LEN > w->rcap) {
        uint8_t *b = logfs_grow(w->rbuf, &w->rcap, w->rfill + LOGFS_GROUP_MAX_LEN, 1, 512);
        if (!b)
            return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a write record");
        w->rbuf = b;
    }
    if ((rc = logfs_writer_queue_index(w, g, w->next_dlog, err)))
        return rc;
    if (w->rfill == 0)
        w->rec_dlog = w->next_dlog;
    w->rfill += logfs_group_encode(w->rbuf + w->rfill, g);
    w->rec_nbytes += bytes;
    w->next_dlog += bytes;
    return w->rfill >= LOGFS_WRITE_RECORD_SOFT_MAX ? finish_record(w, err) : LOGFS_OK;
}

static int close_run(struct logfs_writer *w, struct logfs_error *err)
{
    struct logfs_group done;
    if (w->run_len == 0)
        return LOGFS_OK;
    uint64_t len = w->run_len;
    w->run_len = 0;
    if (logfs_grouper_push(&w->gr, w->run_off, len, &done))
        return emit_group(w, &done, err);
    return LOGFS_OK;
}

/* The open group and run into the record, and the record into the queue. */
static int finish_call(struct logfs_writer *w, struct logfs_error *err)
{
    struct logfs_group done;
    int rc;

    if ((rc = close_run(w, err)))
        return rc;
    if (logfs_grouper_finish(&w->gr, &done) && (rc = emit_group(w, &done, err)))
        return rc;
    return finish_record(w, err);
}

/* The records a carried call still holds, queued (see carry). */
int logfs_writer_settle(struct logfs_writer *w, struct logfs_error *err)
{
    int rc = logfs_steps_finish(w, err);        /* (older than any carry) */
    if (rc || !w->carry)
        return rc;
    w->carry = 0;
    w->single = 0;
    rc = finish_call(w, err);
    reset_call(w);
    return rc;
}

/* A call that fails keeps what earlier calls carried into it (their data
 * is in the datalog and their calls returned): its groups so far are
 * recorded, as a failed write's bytes may be, and nothing after. */
static void fail_call(struct logfs_writer *w)
{
    if (w->carried_in)
        finish_call(w, NULL);
    reset_call(w);
}

int logfs_writer_add_extent(struct logfs_writer *w, uint64_t off, uint64_t len,
                            const void *data, struct logfs_error *err)
{
    uint64_t at = w->dl.len;
    int rc;

    if (!w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "add_extent outside a write call");
    if (len == 0)
        return LOGFS_OK;
    if (off >= LOGFS_MAX_FILE_END || len > LOGFS_MAX_FILE_END - off || len > SIZE_MAX) {
        fail_call(w);
        return logfs_fail(err, LOGFS_ERANGE, EOVERFLOW, "extent at %llu of %llu bytes ends past 2^63",
                          (unsigned long long)off, (unsigned long long)len);
    }
    logfs_summary_note_run(&w->summary, off, len, 0, 1);
    if ((rc = logfs_datalog_append(&w->dl, data, (size_t)len, err)))
        goto fail;
    logfs_fault("write-extent"); /* (kill only) a write call half logged */
    if (w->run_len && off == w->run_off + w->run_len) {
        w->run_len += len; /* contiguous in the file and, by construction, in the datalog */
        return LOGFS_OK;
    }
    if ((rc = close_run(w, err)))
        goto fail;
    w->run_off = off;
    w->run_len = len;
    w->run_dlog = at;
    w->call_runs++;
    return LOGFS_OK;
fail:
    fail_call(w);
    return rc;
}

int logfs_writer_add_run(struct logfs_writer *w, uint64_t off, uint64_t blocklen, int64_t stride,
                         uint64_t count, const void *data, struct logfs_error *err)
{
    struct logfs_group g = {off, blocklen, stride, count}, done[2];
    __int128 last;
    uint64_t at = w->dl.len;
    int rc, n;

    if (!w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "add_run outside a write call");
    if (blocklen == 0 || count == 0)
        return LOGFS_OK;
    last = (__int128)off + (__int128)(count - 1) * stride;
    if (off >= LOGFS_MAX_FILE_END || blocklen > LOGFS_MAX_FILE_END || count > LOGFS_MAX_FILE_END ||
        off + blocklen > LOGFS_MAX_FILE_END || last < 0 ||
        last + (__int128)blocklen > (__int128)LOGFS_MAX_FILE_END ||
        (__int128)count * blocklen > (__int128)SIZE_MAX) {
        fail_call(w);
        return logfs_fail(err, LOGFS_ERANGE, EOVERFLOW,
                          "run at %llu of %llu blocks of %llu bytes ends outside [0, 2^63)",
                          (unsigned long long)off, (unsigned long long)count, (unsigned long long)blocklen);
    }
    if (count == 1 || stride == (int64_t)blocklen) /* one contiguous extent */
        return logfs_writer_add_extent(w, off, count * blocklen, data, err);
    logfs_summary_note_run(&w->summary, off, blocklen, stride, count);
    if ((rc = logfs_datalog_append(&w->dl, data, (size_t)(count * blocklen), err)))
        goto fail;
    w->call_runs += count;
    /* Exactly what add_extent per block would do: block 0 may continue the
     * open run; blocks 0 .. count-2 then go to the grouper; the last block
     * stays open as the run, so a following contiguous extent extends it. */
    if (w->run_len && off == w->run_off + w->run_len) {
        w->run_len += blocklen;
    } else {
        if ((rc = close_run(w, err)))
            goto fail;
        w->run_off = off;
        w->run_len = blocklen;
        w->run_dlog = at;
    }
    if ((rc = close_run(w, err)))
        goto fail;
    if (count > 2) {
        g.offset = off + (uint64_t)stride;
        g.count = count - 2;
        n = logfs_grouper_push_group(&w->gr, &g, done);
        for (int i = 0; i < n; i++)
            if ((rc = emit_group(w, &done[i], err)))
                goto fail;
    }
    w->run_off = (uint64_t)last;
    w->run_len = blocklen;
    w->run_dlog = at + (count - 1) * blocklen;
    return LOGFS_OK;
fail:
    fail_call(w);
    return rc;
}

int logfs_writer_end_write(struct logfs_writer *w, struct logfs_error *err)
{
    int rc = LOGFS_OK;

    if (!w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "end_write outside a write call");
    if (!w->carry_calls) {
        rc = finish_call(w, err);
        reset_call(w);
    } else if (w->stashed && logfs_steps_take_call(w)) {
        reset_call(w);          /* (its block went on the steps) */
    } else {
        /* (steps it did not join go before its records) */
        rc = w->stashed ? logfs_steps_finish(w, err) : LOGFS_OK;
        w->single = !w->carried_in && w->call_runs == 1 && w->rfill == 0 && w->gr.g.count == 0;
        w->in_call = 0;
        w->carried_in = 0;
        w->stashed = 0;
        w->carry = 1;           /* the next call may continue the stride */
    }
    if (rc == LOGFS_OK && w->mfill >= META_FLUSH_AT)
        rc = logfs_writer_flush_meta(w, err);
    return rc;
}

int logfs_writer_write(struct logfs_writer *w, uint64_t off, const void *data, uint64_t len,
                       struct logfs_error *err)
{
    int rc = logfs_writer_begin_write(w, err);
    if (!rc)
        rc = logfs_writer_add_extent(w, off, len, data, err);
    if (!rc)
        rc = logfs_writer_end_write(w, err);
    return rc;
}

int logfs_writer_set_size(struct logfs_writer *w, uint64_t size, struct logfs_error *err)
{
    uint8_t p[10];
    int rc;
    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "set_size inside a write call");
    if (size > LOGFS_MAX_FILE_END)
        return logfs_fail(err, LOGFS_ERANGE, EOVERFLOW, "set_size beyond 2^63");
    logfs_summary_note_size(&w->summary);
    if ((rc = logfs_writer_settle(w, err)))
        return rc;
    struct logfs_group cut = {size, 0, 0, 0};
    if ((rc = logfs_writer_queue_index(w, &cut, 0, err)))
        return rc;
    if ((rc = logfs_writer_marks(w, w->order_seq, 0, 0, err)))
        return rc;
    rc = logfs_writer_queue_record(w, LOGFS_REC_SETSIZE, p, logfs_put_varint(p, size), NULL, 0, err);
    if (!rc && w->mfill >= META_FLUSH_AT)
        rc = logfs_writer_flush_meta(w, err);
    return rc;
}

int logfs_writer_order(struct logfs_writer *w, uint64_t seq, struct logfs_error *err)
{
    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "order inside a write call");
    if (seq < w->order_seq)
        return logfs_fail(err, LOGFS_EINVAL, 0, "collective call count going backwards (%llu after %llu)",
                          (unsigned long long)seq, (unsigned long long)w->order_seq);
    /* The carried records belong before it, unless they may become the
     * first of steps, or are steps (the next call decides). */
    int wait = (w->carry && w->single) || (w->steps.active && !w->carry);
    if (seq != w->order_seq && !wait) {
        int rc = logfs_writer_settle(w, err);
        if (rc)
            return rc;
    }
    w->order_seq = seq;
    return LOGFS_OK;
}

int logfs_writer_stamp(struct logfs_writer *w, uint64_t clock, struct logfs_error *err)
{
    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "stamp inside a write call");
    if (clock < w->stamp)
        return logfs_fail(err, LOGFS_EINVAL, 0, "clock going backwards (%llu after %llu)",
                          (unsigned long long)clock, (unsigned long long)w->stamp);
    if (clock != w->stamp || w->later) {
        int rc = logfs_writer_settle(w, err);
        if (rc)
            return rc;
    }
    if (w->later)       /* (a clock for now is one for the writes before) */
        logfs_writer_fill_later(w, clock);
    w->stamp = clock;
    return LOGFS_OK;
}

int logfs_writer_stamp_later(struct logfs_writer *w, logfs_clock_fn clock_fn, void *arg,
                             struct logfs_error *err)
{
    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "stamp inside a write call");
    if (w->later)
        return LOGFS_OK;
    int rc = logfs_writer_settle(w, err);    /* (the records before keep the last clock) */
    if (rc)
        return rc;
    w->later = 1;
    w->later_fn = clock_fn;
    w->later_arg = arg;
    return LOGFS_OK;
}

int logfs_writer_stamp_pending(const struct logfs_writer *w)
{
    return w->later;
}

int logfs_writer_stamp_fill(struct logfs_writer *w, uint64_t clock, struct logfs_error *err)
{
    if (w->in_call)
        return logfs_fail(err, LOGFS_ESTATE, 0, "stamp inside a write call");
    if (!w->later)
        return LOGFS_OK;
    int rc = logfs_writer_settle(w, err);    /* (their records take the clock too) */
    if (rc)
        return rc;
    logfs_writer_fill_later(w, clock);
    return LOGFS_OK;
}

int logfs_writer_flush_data(struct logfs_writer *w, struct logfs_error *err)
{
    return logfs_datalog_flush(&w->dl, err);
}

int logfs_writer_flush(struct logfs_writer *w, struct logfs_error *err)
{
    int rc;
    if (w->ended)       /* (ended in memory: only a close writes it out) */
        return LOGFS_OK;
    if (!w->in_call && (rc = logfs_writer_settle(w, err)))
        return rc;
    return logfs_writer_flush_meta(w, err);
}

/* The index with everything logged so far: queued groups, and inside a
 * write call the group and run still being built (entered again when
 * they are queued later, which gives the same result). */
static int catch_up(const struct logfs_writer *w)
{
    int rc = logfs_index_catch_up(w->ix);
    int open = w->in_call || w->carry;
    if (rc == LOGFS_OK)
        rc = logfs_steps_index(w);
    if (rc == LOGFS_OK && open && w->gr.g.count)
        rc = logfs_index_group(w->ix, &w->gr.g, w->next_dlog, w->epoch);
    if (rc == LOGFS_OK && open && w->run_len)
        rc = logfs_index_add(w->ix, w->run_off, w->run_len, w->epoch, w->run_dlog);
    return rc;
}

int logfs_writer_lookup(const struct logfs_writer *w, uint64_t off, uint64_t len,
                        uint64_t min_epoch, logfs_piece_fn fn, void *arg)
{
    if (!w->ix)
        return LOGFS_ESTATE;
    if (catch_up(w))
        return LOGFS_ENOMEM;
    if (off >= LOGFS_MAX_FILE_END)
        return LOGFS_ERANGE;
    if (len > LOGFS_MAX_FILE_END - off)
        len = LOGFS_MAX_FILE_END - off;
    return logfs_index_lookup(w->ix, off, len, min_epoch, fn, arg);
}

int logfs_writer_read_data(struct logfs_writer *w, uint64_t dlog_off, void *buf, size_t len,
                           struct logfs_error *err)
{
    return logfs_datalog_read(&w->dl, dlog_off, buf, len, err);
}
