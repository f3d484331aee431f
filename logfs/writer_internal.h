/*
 * The log writer's state, shared by writer.c and writer_steps.c (nothing
 * outside the writer includes this).
 */
#ifndef LOGFS_WRITER_INTERNAL_H
#define LOGFS_WRITER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coding.h"
#include "datalog.h"
#include "extents.h"
#include "index.h"
#include "writer.h"

/* Queued metalog records are written out once they exceed this. */
#define META_FLUSH_AT ((size_t)64 << 10)

struct logfs_writer {
    struct logfs_datalog dl;
    struct logfs_summary summary; /* what its records touch (logfs_writer_summary) */
    int mfd;
    char *mpath;
    uint8_t *mbuf;       /* queued records, not yet in the metalog file */
    size_t mfill, mcap;
    uint64_t mflushed;   /* bytes in the metalog file */
    uint64_t max_meta;
    int durable;
    uint64_t epoch;
    uint64_t order_seq;     /* collective calls entered (logfs_writer_order) */
    uint64_t order_logged;  /* the seq of the last ORDER record queued */
    uint64_t stamp;         /* the last clock given (logfs_writer_stamp) */
    uint64_t stamp_logged;  /* the clock of the last STAMP record queued */
    uint64_t process;       /* written in every STAMP (opts.process) */
    /* a stamp whose clock comes later (logfs_writer_stamp_later): pending
     * until filled; its record, once queued, at mbuf[slot] */
    int later;
    logfs_clock_fn later_fn;
    void *later_arg;
    int slot_queued;
    size_t slot;

    int sfd;             /* the seal file */
    char *spath;
    uint64_t seal_seq;   /* seals written so far */
    uint64_t sealed;     /* metalog length the last seal recorded */
    int seal_unsynced;   /* durable, and the last seal's fdatasync failed */
    /* Syncs of epochs that queued no record: their SYNC records are queued
     * before the next record, at the datalog length they ended (the seal
     * already covers every record before them). */
    uint64_t syncs_owed, owed_dlen;
    uint64_t file_id;    /* identity, repeated in every seal */
    uint32_t rank, nwriters;

    int in_call;
    /* The last call's open group and run, kept past end_write so that the
     * next call's blocks can continue its stride: HDF5 writes a strided
     * selection as one 8-byte write_at per element, and 10^6 such calls
     * become one strided group, not 10^6 records (replayed 10x faster).
     * Anything that needs the records (a sync, flush, set_size, a new
     * order or stamp, close) or fails a call settles them first; a new
     * order waits while the carry is one call's one block (see steps). */
    int carry;
    int carry_calls;            /* (opts) carry at all */
    int carried_in;             /* this call goes on with a carried group */
    uint64_t rec_seq;           /* the order count of the open call's blocks */
    uint64_t call_runs;         /* runs this call started */
    int single;                 /* the carry is one block, of one call */
    uint64_t run_off, run_len, run_dlog; /* contiguous run being extended */
    struct logfs_grouper gr;
    uint8_t *rbuf;       /* groups of the WRITE record being built (grown as they come:
                          * a handle that writes a few blocks needs a few hundred bytes,
                          * not the record's 256 KiB bound) */
    size_t rfill, rcap;
    uint64_t rec_dlog, rec_nbytes;
    uint64_t next_dlog;  /* datalog offset of the first byte no group covers yet */

    /* Collective calls of one block each, one call per order count (an
     * 8-byte write_at_all per element): the blocks of a stride, each at
     * its own count, in one WRITE record after an ORDER with a step
     * (writer_steps.c), where each call would cost an ORDER and a WRITE
     * record of its own.  A call that begins while they are open is
     * stashed beside them: it joins them at its end if it is one block
     * that continues them, else they are queued before its records. */
    struct logfs_steps {
        int active;
        struct logfs_group g;   /* the blocks */
        uint64_t dlog;          /* datalog offset of block 0 (back to back) */
        uint64_t seq0, step;    /* block i's count: seq0 + i * step */
    } steps;
    int stashed;                /* this call began beside open steps */

    struct logfs_index *ix; /* read-your-writes (NULL: not tracked) */

    /* lazy_files: how to make the files when they are first needed */
    int lazy;                   /* the files do not exist yet */
    int announced;              /* on_create succeeded (or there is none) */
    int ended;                  /* by logfs_writer_end_in_memory */
    int announcing;             /* (ensure_files writing what was queued) */
    int exclusive, use_pmem;
    char *dir;
    int (*on_create)(void *arg, struct logfs_error *err);
    void *on_create_arg;
};

/* writer.c, for writer_steps.c and writer_files.c */
int logfs_writer_settle(struct logfs_writer *w, struct logfs_error *err);
/* the files exist (ensure_files), then everything queued reaches them */
int logfs_writer_flush_meta(struct logfs_writer *w, struct logfs_error *err);
/* everything queued into the existing files: data, then records */
int logfs_writer_write_queued(struct logfs_writer *w, struct logfs_error *err);
void logfs_writer_fill_later(struct logfs_writer *w, uint64_t clock);
/* writer_files.c: the files exist (made now if lazy), and on_create said yes */
int logfs_writer_ensure_files(struct logfs_writer *w, struct logfs_error *err);
int logfs_writer_queue_record(struct logfs_writer *w, int type, const uint8_t *a, size_t alen,
                              const uint8_t *b, size_t blen, struct logfs_error *err);
/* The same, and where in the queue the record begins (after any SYNC
 * records owed before it), for a record written again in place. */
int logfs_writer_queue_record_at(struct logfs_writer *w, int type, const uint8_t *a,
                                 size_t alen, size_t *at, struct logfs_error *err);
/* The payload of a SYNC or CLOSE record: the epoch it ends and the
 * datalog's length there; @p p holds 20 bytes. */
static inline size_t logfs_epoch_end_payload(uint8_t *p, uint64_t epoch, uint64_t dlen)
{
    size_t n = logfs_put_varint(p, epoch);
    return n + logfs_put_varint(p + n, dlen);
}
/* The STAMP and ORDER records due before a record of writes made at order
 * count @p seq; @p step > 0: its blocks go on at that step, up to @p last. */
int logfs_writer_marks(struct logfs_writer *w, uint64_t seq, uint64_t step, uint64_t last,
                       struct logfs_error *err);
int logfs_writer_queue_index(struct logfs_writer *w, const struct logfs_group *g, uint64_t dlog,
                             struct logfs_error *err);

/* writer_steps.c */
/* The order count of the last step's block. */
static inline uint64_t logfs_steps_last(const struct logfs_steps *st)
{
    return st->seq0 + (st->g.count - 1) * st->step;
}
/* At a call's begin: the carry (one block, of another count) becomes the
 * first of the steps. */
void logfs_steps_from_carry(struct logfs_writer *w);
/* At the end of a stashed call: 1 if its one block joined the steps (the
 * call then holds nothing), 0 if it is not such a block. */
int logfs_steps_take_call(struct logfs_writer *w);
/* The steps' records into the queue (nothing open after). */
int logfs_steps_finish(struct logfs_writer *w, struct logfs_error *err);
/* The steps into the read-your-writes index. */
int logfs_steps_index(const struct logfs_writer *w);

#endif
