/*
 * Attaching through bbserver: each process notes the runs it logs and, at
 * a sync point (a sync, a release, a collective's boundary, a close that
 * leaves its logs pending), attaches them to the file's ownership map, so
 * that others' queries see them (ad_bbfs_server.c); the answer's clock
 * orders the writes after (ADIOI_BBFS_Clock, the STAMP record).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../bbserver/client.h"
#include "../../logfs/reader.h"
#include "../../logfs/writer.h"
#include "ad_bbfs_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This process's handles with notes not yet attached.  A write through
 * one handle after writes through another (PnetCDF's collective and
 * independent handles of one file) must reach the map after them, as the
 * logs' STAMP records order them for the replay: the others' notes are
 * attached first (ADIOI_BBFS_Server_switch). */
static ADIOI_BBFS_Server *dirty;

static void set_dirty(ADIOI_BBFS_Server * s, int on)
{
    if (s->is_dirty == on)
        return;
    if (on) {
        s->next_dirty = dirty;
        dirty = s;
    } else
        for (ADIOI_BBFS_Server ** pp = &dirty; *pp; pp = &(*pp)->next_dirty)
            if (*pp == s) {
                *pp = s->next_dirty;
                break;
            }
    s->is_dirty = on;
}

/* Each logged run is noted as it is written (ADIOI_BBFS_Server_note), in
 * write order, and an attach sends the notes since the last one: the
 * server applies them in that order, so a later write of this process wins
 * as it does in its own index.  A run that continues the last note's
 * stride with equal blocks and contiguous data extends it, so a vector
 * written block by block (HDF5's independent strided writes) is one
 * record, not one per block. */
void ADIOI_BBFS_Server_note(ADIOI_BBFS_File * bf, uint64_t off, uint64_t len, uint64_t stride,
                            uint64_t count, uint64_t pos)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s || len == 0 || count == 0)
        return;
    if (count > 1 && ((int64_t) stride < 0 || stride < len)) {
        /* a run that goes backwards or overlaps itself: block by block,
         * in order (an extent's blocks go forwards and never overlap) */
        for (uint64_t k = 0; k < count; k++)
            ADIOI_BBFS_Server_note(bf, off + k * stride, len, 0, 1, pos + k * len);
        return;
    }
    if (count > BBS_MAX_PIECES) {
        /* more blocks than one attach request may carry: several notes,
         * so that the attach can always send the next one */
        for (uint64_t k = 0; k < count; k += BBS_MAX_PIECES)
            ADIOI_BBFS_Server_note(bf, off + k * stride, len, stride,
                                   count - k < BBS_MAX_PIECES ? count - k : BBS_MAX_PIECES,
                                   pos + k * len);
        return;
    }
    if (count == 1)
        stride = 0;
    struct bbs_extent *last = s->nnotes ? &s->notes[s->nnotes - 1] : NULL;
    if (last && last->len == len && last->pos + last->count * last->len == pos
        && s->notes_pieces + count <= BBS_MAX_PIECES) {
        uint64_t step = last->count > 1 ? last->stride : off - last->off;
        uint64_t next = last->off + last->count * step;
        if (off > last->off && off == next && step >= len && (count == 1 || stride == step)) {
            last->stride = step;
            last->count += count;
            s->notes_pieces += count;
            return;
        }
    }
    if (s->nnotes == s->capnotes) {
        s->capnotes = s->capnotes ? 2 * s->capnotes : 256;
        s->notes = ADIOI_Realloc(s->notes, sizeof(*s->notes) * s->capnotes);
    }
    s->notes[s->nnotes++] = (struct bbs_extent) { off, len, count, stride, pos };
    s->notes_pieces += count;
    set_dirty(s, 1);
}

static void attach(ADIOI_BBFS_File * bf, int *error_code);
static int send_notes(ADIOI_BBFS_File * bf, const char *datalog, uint64_t * heard);

void ADIOI_BBFS_Server_note_size(ADIOI_BBFS_File * bf, uint64_t size)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s || size <= s->grown)
        return;
    s->grown = size;
    set_dirty(s, 1);
}

void ADIOI_BBFS_Server_attach(ADIO_File fd, int *error_code)
{
    attach(ADIOI_BBFS_Private(fd), error_code);
}

void ADIOI_BBFS_Server_attach_own(ADIOI_BBFS_File * bf, int *error_code)
{
    attach(bf, error_code);
}

void ADIOI_BBFS_Server_attach_closed(ADIOI_BBFS_File * bf, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SERVER_ATTACH";
    ADIOI_BBFS_Server *s = bf->srv;
    uint64_t heard;             /* (the writer is closed: no stamp waits for it) */

    *error_code = MPI_SUCCESS;
    if (!s || !bf->metalogs || (s->nnotes == 0 && s->grown == 0))
        return;
    /* (the datalog beside this process's metalog, which the notes name) */
    char *datalog = logfs_datalog_path(bf->metalogs[s->rank]);
    *error_code = datalog ? send_notes(bf, datalog, &heard)
        : ADIOI_BBFS_Err_server(myname, __LINE__, "out of memory attaching");
    free(datalog);
}

void ADIOI_BBFS_Server_notes_end(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s)
        return;
    s->nnotes = 0;
    s->grown = 0;
    s->notes_pieces = 0;
    set_dirty(s, 0);
}

void ADIOI_BBFS_Server_switch(ADIOI_BBFS_File * bf)
{
    for (ADIOI_BBFS_Server * s = dirty, *next; s; s = next) {
        next = s->next_dirty;
        if (s->bf != bf) {
            int err;            /* (shows at that handle's next sync or close) */
            attach(s->bf, &err);
        }
    }
}

void ADIOI_BBFS_Server_clock_stale(ADIOI_BBFS_File * bf)
{
    if (bf->srv)
        bf->srv->clock_heard = 0;
}

void ADIOI_BBFS_Server_clock_hear(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    char err[1024];

    /* (unconnected, its writes are stamped later, by the attach that
     * publishes them (ADIOI_BBFS_Order_switch); a close that replays them
     * from memory asks for that clock unattached, and needs none: its
     * session was the file's only one) */
    if (!s || s->clock_heard || s->unconnected)
        return;
    /* A failure leaves the clock as it was (the attach or query that
     * follows fails too, and says why); not tried again before the next
     * sync, so that a lost server costs one time-out here. */
    if (bbs_enc_ping(&b, 0, s->nodes.token) == 0)
        ADIOI_BBFS_Server_map_call(s, &b, &r, err, sizeof(err), 0);
    bbs_buf_free(&b);
    s->clock_heard = 1;
}

/* The notes to the map, as writer w of the session (its datalog holds
 * their bytes), in batches within the server's limits, in order; *heard:
 * the clock of the first answer.  @return MPI_SUCCESS, or why not (the
 * notes stay: the next sync point tries again). */
static int send_notes(ADIOI_BBFS_File * bf, const char *datalog, uint64_t * heard)
{
    static char myname[] = "ADIOI_BBFS_SERVER_ATTACH";
    ADIOI_BBFS_Server *s = bf->srv;
    struct bbs_writer w;
    char err[1024];

    w.session = bf->file_id;
    w.rank = (uint32_t) s->rank;
    w.node = s->node_addr;
    w.datalog = datalog;
    if (ADIOI_BBFS_Server_connect(s, err, sizeof(err)) != 0)
        return ADIOI_BBFS_Err_server(myname, __LINE__, err);
    size_t at = 0;
    *heard = 0;
    do {                        /* (once with no notes: a grow alone) */
        size_t n = 0;
        uint64_t pieces = 0;
        while (at + n < s->nnotes && n < BBS_MAX_RECORDS
               && pieces + s->notes[at + n].count <= BBS_MAX_PIECES)
            pieces += s->notes[at + n++].count;
        struct bbs_buf b = { 0 };
        struct bbs_reply r;
        /* (the clock now: later than the stamps of every write attached) */
        int failed = bbs_enc_attach(&b, ++s->attaches, s->nodes.token, s->map_name, &w,
                                    s->notes + at, (uint32_t) n, s->grown,
                                    ADIOI_BBFS_Clock()) != 0;
        if (failed)
            snprintf(err, sizeof(err), "out of memory attaching");
        else
            failed = ADIOI_BBFS_Server_map_call(s, &b, &r, err, sizeof(err), 1) != 0;
        bbs_buf_free(&b);
        if (failed) {
            char msg[1400];
            snprintf(msg, sizeof(msg), "%s; what was written is safe in the logs: a close "
                     "leaves them pending, and the next open of the file (which restarts "
                     "this node's server) or bbfs-replay replays them", err);
            return ADIOI_BBFS_Err_server(myname, __LINE__, msg);
        }
        if (!*heard)
            *heard = r.clock;
        at += n;
    } while (at < s->nnotes);
    s->nnotes = 0;
    s->grown = 0;
    s->notes_pieces = 0;
    set_dirty(s, 0);
    return MPI_SUCCESS;
}

static void attach(ADIOI_BBFS_File * bf, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SERVER_ATTACH";
    ADIOI_BBFS_Server *s = bf->srv;

    *error_code = MPI_SUCCESS;
    if (!s || !bf->writer || (s->nnotes == 0 && s->grown == 0))
        return;
    /* the bytes must be in the datalog before anyone reads them (and the
     * records of a stamp that waits for this attach's clock after it) */
    struct logfs_error le;
    int later = logfs_writer_stamp_pending(bf->writer);
    int rc = later ? logfs_writer_flush_data(bf->writer, &le)
        : logfs_writer_flush(bf->writer, &le);
    if (rc != LOGFS_OK) {
        *error_code = ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, le.msg);
        return;
    }
    uint64_t heard;
    *error_code = send_notes(bf, logfs_writer_datalog_path(bf->writer), &heard);
    if (*error_code != MPI_SUCCESS || !later)
        return;
    /* The server's clock at the first batch: after every write attached
     * before, and before every one attached after (no two answers share a
     * clock, bbserver/serve.h): the stamp of the writes since the acquire.
     * (Without one, the flush asks the server again.) */
    if (heard)
        rc = logfs_writer_stamp_fill(bf->writer, heard, &le);
    if (rc == LOGFS_OK)
        rc = logfs_writer_flush(bf->writer, &le);
    if (rc != LOGFS_OK)         /* (attached; the records go at the next flush) */
        *error_code = ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, le.msg);
}
