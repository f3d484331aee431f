/*
 * Metalog reader.  Records are read through a window: the whole input for
 * memory sources, a refillable buffer for files.
 */
#define _GNU_SOURCE
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coding.h"
#include "frame.h"
#include "format.h"
#include "internal.h"
#include "seal.h"

#define WINDOW ((size_t)1 << 20)
/* The first read: the header, and all of a small log.  A reader that goes
 * on from a mark (logfs_reader_resume) reads little of what it skips. */
#define FIRST_WINDOW ((size_t)4 << 10)

struct logfs_reader {
    int fd;                 /* -1 for memory sources */
    int borrowed;           /* fd is the caller's (logfs_reader_open_kept) */
    char *path;
    const uint8_t *mem;     /* memory source */
    uint8_t *win;           /* file window holding [win_off, win_off + win_len) */
    size_t win_cap, win_len;
    uint64_t win_off;
    uint64_t size;          /* input length */
    uint64_t pos;           /* next record */
    struct logfs_header hdr;
    uint64_t epoch;         /* open epoch */
    uint64_t order_seq;     /* the last ORDER record's seq (0: none yet) */
    uint64_t order_step;    /* the last ORDER's step, until its WRITE */
    uint64_t stamp;         /* the last STAMP record's clock (0: none yet) */
    uint64_t dlog_end;      /* end of the data the last WRITE covered */
    int closed;
    int status;             /* sticky result once not LOGFS_OK */
    struct logfs_error saved;
    uint64_t torn, bad_off, dropped;
    struct logfs_seal seal; /* as read at open (file sources only) */
    uint64_t sealed;        /* seal.length when the seal is VALID, else 0 */
};

/* Point *p at @p n bytes of input starting at @p off (caller checked bounds). */
static int fetch(struct logfs_reader *r, uint64_t off, size_t n, const uint8_t **p,
                 struct logfs_error *err)
{
    if (r->mem) {
        *p = r->mem + off;
        return LOGFS_OK;
    }
    if (off >= r->win_off && off + n <= r->win_off + r->win_len) {
        *p = r->win + (off - r->win_off);
        return LOGFS_OK;
    }
    size_t window = r->win_cap ? WINDOW : FIRST_WINDOW;
    size_t want = n > window ? n : window;
    if (want > r->size - off)
        want = (size_t)(r->size - off);
    if (want > r->win_cap) {
        uint8_t *b = realloc(r->win, want);
        if (!b)
            return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to read metalog %s", r->path);
        r->win = b;
        r->win_cap = want;
    }
    int e = logfs_pread_full(r->fd, r->win, want, off);
    if (e)
        return logfs_fail(err, e < 0 ? LOGFS_EIO : logfs_status_from_errno(e), e < 0 ? 0 : e,
                          "cannot read metalog %s at offset %llu%s", r->path, (unsigned long long)off,
                          e < 0 ? ": file shrank while being read" : "");
    r->win_off = off;
    r->win_len = want;
    *p = r->win;
    return LOGFS_OK;
}

static int stop(struct logfs_reader *r, int code, struct logfs_error *err)
{
    r->status = code;
    if (err)
        r->saved = *err;
    else
        r->saved.code = code;
    return code;
}

static int corrupt(struct logfs_reader *r, uint64_t off, const char *why, struct logfs_error *err)
{
    struct logfs_error e;
    r->bad_off = off;
    r->dropped = r->size - off;
    logfs_fail(&e, LOGFS_ECORRUPT, 0, "metalog %s: %s at offset %llu: %llu bytes dropped",
               r->path, why, (unsigned long long)off, (unsigned long long)r->dropped);
    if (err)
        *err = e;
    r->saved = e;
    r->status = LOGFS_ECORRUPT;
    return LOGFS_ECORRUPT;
}

static int corruptf(struct logfs_reader *r, uint64_t off, struct logfs_error *err, const char *fmt,
                    ...) LOGFS_PRINTF(4, 5);

static int corruptf(struct logfs_reader *r, uint64_t off, struct logfs_error *err, const char *fmt,
                    ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return corrupt(r, off, why, err);
}

/* The record stream ends (the file ends, or a record claims bytes the file
 * does not have) at r->pos, before the sealed length: what looks like a torn
 * tail is damage to records a sync completed. */
static int end_before_seal(struct logfs_reader *r, struct logfs_error *err)
{
    if (r->size < r->sealed)
        return corruptf(r, r->pos, err,
                        "metalog truncated below its sealed length %llu (file has %llu bytes): "
                        "a synced part is damaged",
                        (unsigned long long)r->sealed, (unsigned long long)r->size);
    return corruptf(r, r->pos, err,
                    "record runs past the end of the file before the sealed length %llu: "
                    "a synced part is damaged (bad length field)",
                    (unsigned long long)r->sealed);
}

/* Frame one record: LOGFS_OK with type/payload, LOGFS_END for a clean or
 * torn end, or an error.  Before the sealed length there is no torn end. */
static int frame(struct logfs_reader *r, int *type, const uint8_t **payload, uint32_t *len,
                 struct logfs_error *err)
{
    const uint8_t *h;
    uint64_t left = r->size - r->pos;
    int rc;

    if (r->pos < r->sealed && left < LOGFS_REC_HEADER_LEN)
        return end_before_seal(r, err);
    if (left == 0)
        return LOGFS_END;
    if (left < LOGFS_REC_HEADER_LEN) {
        r->torn = left;
        return LOGFS_END;
    }
    if ((rc = fetch(r, r->pos, LOGFS_REC_HEADER_LEN, &h, err)))
        return rc;
    uint32_t n = logfs_frame_len(h);
    uint8_t t = h[8];
    if (n > LOGFS_MAX_PAYLOAD)
        return corrupt(r, r->pos, "record length beyond the format's limit", err);
    /* The writer seals at record boundaries, so no record crosses the sealed length. */
    if (r->pos < r->sealed && LOGFS_REC_HEADER_LEN + (uint64_t)n > r->sealed - r->pos) {
        if (n > left - LOGFS_REC_HEADER_LEN && r->size < r->sealed)
            return end_before_seal(r, err);
        return corruptf(r, r->pos, err,
                        "record length %u runs past the sealed length %llu: a synced part is damaged",
                        n, (unsigned long long)r->sealed);
    }
    if (n > left - LOGFS_REC_HEADER_LEN) {
        if (r->pos < r->sealed)
            return end_before_seal(r, err);
        r->torn = left;
        return LOGFS_END;
    }
    if ((rc = fetch(r, r->pos, LOGFS_REC_HEADER_LEN + (size_t)n, &h, err)))
        return rc;
    if (!logfs_frame_intact(h, n))
        return corrupt(r, r->pos, "checksum mismatch", err);
    *type = t;
    *payload = h + LOGFS_REC_HEADER_LEN;
    *len = n;
    return LOGFS_OK;
}

static int parse_header(struct logfs_reader *r, struct logfs_error *err)
{
    const uint8_t *p;
    uint32_t n;
    int type, rc = frame(r, &type, &p, &n, err);
    if (rc == LOGFS_END)
        return logfs_fail(err, LOGFS_EFORMAT, 0, "metalog %s has no complete header record", r->path);
    if (rc == LOGFS_ECORRUPT && r->sealed)
        return rc; /* a sealed metalog whose header is cut or damaged */
    if (rc)
        return rc;
    if (type != LOGFS_REC_HEADER || n < LOGFS_MAGIC_LEN + 4 || memcmp(p, LOGFS_MAGIC, LOGFS_MAGIC_LEN))
        return logfs_fail(err, LOGFS_EFORMAT, 0, "%s is not a bbfs metalog (no header record)", r->path);
    r->hdr.version = logfs_get32(p + 8);
    if (r->hdr.version < LOGFS_FORMAT_VERSION_MIN || r->hdr.version > LOGFS_FORMAT_VERSION)
        return logfs_fail(err, LOGFS_EVERSION, 0, "metalog %s has format version %u; this build reads %u to %u",
                          r->path, r->hdr.version, LOGFS_FORMAT_VERSION_MIN, LOGFS_FORMAT_VERSION);
    if (n != LOGFS_HEADER_PAYLOAD_LEN)
        return corrupt(r, r->pos, "header record of the wrong size", err);
    r->hdr.file_id = logfs_get64(p + 12);
    r->hdr.rank = logfs_get32(p + 20);
    r->hdr.nwriters = logfs_get32(p + 24);
    if (r->hdr.nwriters == 0 || r->hdr.rank >= r->hdr.nwriters)
        return corrupt(r, r->pos, "header with rank outside the writer count", err);
    r->pos += LOGFS_REC_HEADER_LEN + n;
    return LOGFS_OK;
}

static int finish_open(struct logfs_reader *r, struct logfs_kept_log *kept,
                       struct logfs_reader **out, struct logfs_error *err)
{
    int rc = LOGFS_OK;
    /* (a writer writes its header once, first: a kept log's stays read) */
    if (kept && kept->header_end) {
        r->hdr = kept->header;
        r->pos = kept->header_end;
    } else if ((rc = parse_header(r, err)) == LOGFS_OK && kept) {
        kept->header = r->hdr;
        kept->header_end = r->pos;
    }
    if (rc) {
        logfs_reader_close(r);
        return rc;
    }
    /* A seal of another log (left behind by one of another file or writer
     * set) says nothing about this one. */
    if (r->seal.state == LOGFS_SEAL_VALID &&
        (r->seal.file_id != r->hdr.file_id || r->seal.rank != r->hdr.rank ||
         r->seal.nwriters != r->hdr.nwriters)) {
        r->seal.state = LOGFS_SEAL_FOREIGN;
        r->sealed = 0;
    }
    *out = r;
    return LOGFS_OK;
}

int logfs_reader_open(const char *path, struct logfs_reader **out, struct logfs_error *err)
{
    return logfs_reader_open_kept(path, NULL, out, err);
}

int logfs_reader_open_kept(const char *path, struct logfs_kept_log *kept,
                           struct logfs_reader **out, struct logfs_error *err)
{
    return logfs_reader_open_kept_upto(path, kept, 0, out, err);
}

int logfs_reader_open_kept_upto(const char *path, struct logfs_kept_log *kept, uint64_t size,
                                struct logfs_reader **out, struct logfs_error *err)
{
    struct logfs_reader *r;
    struct stat st;
    int rc;

    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a metalog reader");
    }
    r->fd = kept ? kept->metalog : -1;
    if (r->fd < 0 && (rc = logfs_open_own(path, O_RDONLY, 0, "cannot open metalog", &r->fd,
                                          err))) {
        logfs_reader_close(r);
        return rc;
    }
    if (kept) {
        kept->metalog = r->fd;
        r->borrowed = 1;
    }
    /* The seal before the size: a live writer appends to the metalog before
     * it seals, so the size seen after the seal is never below it.  (A size
     * the caller saw before serves where the seal is within it; a seal past
     * it is of a sync since, or of bytes cut off the log: looked at here.) */
    if (kept)
        rc = logfs_seal_read_kept(path, &kept->seal, &r->seal, err);
    else
        rc = logfs_seal_read(path, &r->seal, err);
    if (rc) {
        logfs_reader_close(r);
        return rc;
    }
    int look = size == 0 || (r->seal.state == LOGFS_SEAL_VALID && r->seal.length > size);
    if (look && fstat(r->fd, &st) < 0) {
        rc = logfs_fail_errno(err, errno, "cannot open metalog", path);
        logfs_reader_close(r);
        return rc;
    }
    r->size = look ? (uint64_t)st.st_size : size;
    if (r->seal.state == LOGFS_SEAL_VALID)
        r->sealed = r->seal.length;
    return finish_open(r, kept, out, err);
}

int logfs_reader_open_mem(const void *data, size_t len, struct logfs_reader **out,
                          struct logfs_error *err)
{
    struct logfs_reader *r;
    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup("(memory)"))) {
        free(r);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a metalog reader");
    }
    r->fd = -1;
    /* A zero-length source still needs a non-NULL base for the window logic. */
    r->mem = data ? data : (const uint8_t *)"";
    r->size = len;
    return finish_open(r, NULL, out, err);
}

void logfs_kept_log_close(struct logfs_kept_log *kept)
{
    if (kept->metalog >= 0)
        close(kept->metalog);
    if (kept->seal >= 0)
        close(kept->seal);
    kept->metalog = kept->seal = -1;
    kept->header_end = 0;
}

void logfs_reader_close(struct logfs_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0 && !r->borrowed)
        close(r->fd);
    free(r->win);
    free(r->path);
    free(r);
}

static int parse_write(struct logfs_reader *r, const uint8_t *p, uint32_t n,
                       struct logfs_record *rec, struct logfs_error *err)
{
    const uint8_t *q = p, *end = p + n;
    struct logfs_group_iter it;
    struct logfs_group g;
    uint64_t sum = 0, ngroups = 0;
    int k;

    if (logfs_get_varint(&q, end, &rec->u.write.dlog_off) ||
        logfs_get_varint(&q, end, &rec->u.write.nbytes))
        return corrupt(r, rec->offset, "truncated WRITE record", err);
    logfs_group_iter_init(&it, q, (size_t)(end - q));
    while ((k = logfs_group_next(&it, &g)) == 1) {
        unsigned __int128 bytes = (unsigned __int128)g.count * g.blocklen;
        if (bytes > LOGFS_MAX_FILE_END - sum)
            return corrupt(r, rec->offset, "WRITE record covers more than 2^63 bytes", err);
        sum += (uint64_t)bytes;
        ngroups++;
    }
    if (k < 0 || ngroups == 0)
        return corrupt(r, rec->offset, "malformed extent group in WRITE record", err);
    if (sum != rec->u.write.nbytes)
        return corrupt(r, rec->offset, "WRITE record whose groups do not add up to its byte count", err);
    if (rec->u.write.dlog_off < r->dlog_end || rec->u.write.dlog_off > UINT64_MAX - sum)
        return corrupt(r, rec->offset, "WRITE record pointing backwards in the datalog", err);
    if (r->order_step) {
        /* (the ORDER before said: one group, a block per collective call) */
        struct logfs_group_iter one;
        logfs_group_iter_init(&one, q, (size_t)(end - q));
        logfs_group_next(&one, &g);
        if (ngroups != 1 || g.count < 2 ||
            (unsigned __int128)(g.count - 1) * r->order_step > UINT64_MAX - r->order_seq)
            return corrupt(r, rec->offset, "WRITE record after an ORDER with a step is not one "
                           "group of blocks", err);
        rec->u.write.seq_step = r->order_step;
        r->order_seq += (g.count - 1) * r->order_step;
        r->order_step = 0;
    }
    r->dlog_end = rec->u.write.dlog_off + sum;
    rec->u.write.groups = q;
    rec->u.write.groups_len = (size_t)(end - q);
    rec->u.write.ngroups = ngroups;
    return LOGFS_OK;
}

int logfs_reader_next(struct logfs_reader *r, struct logfs_record *rec, struct logfs_error *err)
{
    const uint8_t *p, *q;
    uint32_t n;
    int type, rc;
    struct logfs_error local;

    if (!err)
        err = &local; /* the message is also kept for later, sticky calls */
    if (r->status) {
        if (err && r->status != LOGFS_END)
            *err = r->saved;
        return r->status;
    }
    if (r->closed) {
        if (r->pos < r->sealed)
            return corruptf(r, r->pos, err, "CLOSE record before the sealed length %llu",
                            (unsigned long long)r->sealed);
        r->torn = r->size - r->pos; /* anything after CLOSE is ignored */
        return stop(r, LOGFS_END, NULL);
    }
    memset(rec, 0, sizeof *rec);
    rec->offset = r->pos;
    rc = frame(r, &type, &p, &n, err);
    if (rc == LOGFS_END)
        return stop(r, LOGFS_END, NULL);
    if (rc)
        return r->status ? rc : stop(r, rc, err);
    rec->type = type;
    rec->length = n;
    rec->epoch = r->epoch;
    q = p;
    if (r->order_step && type != LOGFS_REC_WRITE)
        return corrupt(r, rec->offset, "ORDER record with a step not followed by its WRITE", err);
    switch (type) {
    case LOGFS_REC_WRITE:
        if ((rc = parse_write(r, p, n, rec, err)))
            return rc;
        break;
    case LOGFS_REC_SYNC:
    case LOGFS_REC_CLOSE:
        if (logfs_get_varint(&q, p + n, &rec->u.sync.epoch) ||
            logfs_get_varint(&q, p + n, &rec->u.sync.dlog_len) || q != p + n)
            return corrupt(r, rec->offset, "malformed SYNC/CLOSE record", err);
        if (rec->u.sync.epoch != r->epoch)
            return corrupt(r, rec->offset, "epoch out of sequence", err);
        if (rec->u.sync.dlog_len < r->dlog_end)
            return corrupt(r, rec->offset, "SYNC/CLOSE before the end of the data it closes", err);
        r->epoch++;
        if (type == LOGFS_REC_CLOSE)
            r->closed = 1;
        break;
    case LOGFS_REC_SETSIZE:
        if (logfs_get_varint(&q, p + n, &rec->u.setsize.size) || q != p + n ||
            rec->u.setsize.size > LOGFS_MAX_FILE_END)
            return corrupt(r, rec->offset, "malformed SETSIZE record", err);
        break;
    case LOGFS_REC_ORDER:
        if (r->hdr.version < 2)
            return corrupt(r, rec->offset, "ORDER record in a version 1 metalog", err);
        /* (with a step, block 0 may be at count 0: made before any call) */
        if (logfs_get_varint(&q, p + n, &rec->u.order.seq) ||
            (q != p + n && (r->hdr.version < 4 || logfs_get_varint(&q, p + n, &rec->u.order.step) ||
                            rec->u.order.step == 0)) ||
            q != p + n || (rec->u.order.seq == 0 && rec->u.order.step == 0))
            return corrupt(r, rec->offset, "malformed ORDER record", err);
        if (rec->u.order.seq < r->order_seq)
            return corrupt(r, rec->offset, "ORDER record going backwards", err);
        r->order_seq = rec->u.order.seq;
        r->order_step = rec->u.order.step;
        break;
    case LOGFS_REC_STAMP:
        if (r->hdr.version < 3)
            return corrupt(r, rec->offset, "STAMP record in a version 1 or 2 metalog", err);
        if (logfs_get_varint(&q, p + n, &rec->u.stamp.clock) ||
            (q != p + n && logfs_get_varint(&q, p + n, &rec->u.stamp.process)) || q != p + n)
            return corrupt(r, rec->offset, "malformed STAMP record", err);
        if (rec->u.stamp.clock < r->stamp)
            return corrupt(r, rec->offset, "STAMP record going backwards", err);
        r->stamp = rec->u.stamp.clock;
        break;
    case LOGFS_REC_HEADER:
        return corrupt(r, rec->offset, "second header record", err);
    default:
        r->bad_off = r->pos;
        r->dropped = r->size - r->pos;
        logfs_fail(err, LOGFS_ETYPE, 0,
                   "metalog %s: unknown record type %d at offset %llu (written by a newer bbfs?)",
                   r->path, type, (unsigned long long)r->pos);
        return stop(r, LOGFS_ETYPE, err);
    }
    /* The seal was written just after the SYNC/CLOSE that closed its last epoch. */
    if (r->pos + LOGFS_REC_HEADER_LEN + n == r->sealed &&
        (type == LOGFS_REC_WRITE || type == LOGFS_REC_SETSIZE || type == LOGFS_REC_ORDER ||
         type == LOGFS_REC_STAMP ||
         r->epoch != r->seal.epochs))
        return corruptf(r, rec->offset, err,
                        "the sealed length %llu does not end the SYNC/CLOSE of epoch %llu",
                        (unsigned long long)r->sealed, (unsigned long long)r->seal.epochs - 1);
    r->pos += LOGFS_REC_HEADER_LEN + n;
    return LOGFS_OK;
}

const struct logfs_header *logfs_reader_header(const struct logfs_reader *r)
{
    return &r->hdr;
}

uint64_t logfs_reader_torn_bytes(const struct logfs_reader *r)
{
    return r->torn;
}

uint64_t logfs_reader_bad_offset(const struct logfs_reader *r)
{
    return r->bad_off;
}

uint64_t logfs_reader_dropped_bytes(const struct logfs_reader *r)
{
    return r->dropped;
}

int logfs_reader_saw_close(const struct logfs_reader *r)
{
    return r->closed;
}

uint64_t logfs_reader_position(const struct logfs_reader *r)
{
    return r->pos;
}

uint64_t logfs_reader_size(const struct logfs_reader *r)
{
    return r->size;
}

uint64_t logfs_reader_sealed_length(const struct logfs_reader *r)
{
    return r->sealed;
}

void logfs_reader_get_mark(const struct logfs_reader *r, struct logfs_reader_mark *m)
{
    m->pos = r->pos;
    m->epoch = r->epoch;
    m->order_seq = r->order_seq;
    m->order_step = r->order_step;
    m->stamp = r->stamp;
    m->dlog_end = r->dlog_end;
    m->closed = r->closed;
}

int logfs_reader_resume(struct logfs_reader *r, const struct logfs_reader_mark *m,
                        struct logfs_error *err)
{
    if (m->pos == 0)
        return LOGFS_OK;
    if (r->status || m->pos < r->pos || m->pos > r->size)
        return logfs_fail(err, LOGFS_EINVAL, 0, "metalog %s: cannot go on from offset %llu "
                          "(%llu bytes long, header ends at %llu)%s", r->path,
                          (unsigned long long)m->pos, (unsigned long long)r->size,
                          (unsigned long long)r->pos, m->pos > r->size ? ": the log shrank" : "");
    r->pos = m->pos;
    r->epoch = m->epoch;
    r->order_seq = m->order_seq;
    r->order_step = m->order_step;
    r->stamp = m->stamp;
    r->dlog_end = m->dlog_end;
    r->closed = m->closed;
    return LOGFS_OK;
}

int logfs_reader_seal(const struct logfs_reader *r, struct logfs_seal *out)
{
    if (out)
        *out = r->seal;
    return r->seal.state;
}
