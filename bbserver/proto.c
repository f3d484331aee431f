/*
 * bbserver's wire format (see proto.h).  The decoder reads through a cursor
 * that fails once and stays failed, recording the first field that did not
 * fit, so each decode reads straight down the layout and checks once.
 */
#include "proto.h"
#include "bigbuf.h"
#include "drains.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../logfs/coding.h"

#define REPLY_BIT 0x8000u
#define HEADER_LEN (4 + 2 + 2 + 8)
#define RECORD_LEN (5 * 8)
#define PIECE_LEN (RECORD_LEN + 4)
#define MAX_NODE 256

const char *bbs_status_str(int status)
{
    static const char *const desc[] = {
#define BBS_X_DESC(name, d) d,
        BBS_STATUS_LIST(BBS_X_DESC)
#undef BBS_X_DESC
    };
    if (status < 0 || status >= BBS_NUM_STATUS)
        return "unknown status";
    return desc[status];
}

/* --- encoding ------------------------------------------------------------ */

void bbs_buf_free(struct bbs_buf *b)
{
    bbs_big_give(b->p, b->cap);
    memset(b, 0, sizeof(*b));
}

/* A buffer of a megabyte and more comes from the kept ones (bigbuf.h), at
 * the size asked for rounded up to a megabyte or twice the old one, not
 * the next power of two: a read's reply is 64 MiB and a few bytes. */
static int grow_big(struct bbs_buf *b, size_t need)
{
    size_t cap = (need + BBS_BIG - 1) / BBS_BIG * BBS_BIG;
    if (cap < 2 * b->cap)
        cap = 2 * b->cap;
    uint8_t *p = bbs_big_take(cap, &cap);
    if (!p)
        return -1;
    if (b->len)
        memcpy(p, b->p, b->len);
    bbs_big_give(b->p, b->cap);
    b->p = p;
    b->cap = cap;
    return 0;
}

static int grow_small(struct bbs_buf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static uint8_t *grow(struct bbs_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    size_t need = b->len + n;
    if (need > b->cap && (need >= BBS_BIG ? grow_big(b, need) : grow_small(b, need)) != 0) {
        b->failed = 1;
        return NULL;
    }
    uint8_t *at = b->p + b->len;
    b->len += n;
    return at;
}

static void put8(struct bbs_buf *b, uint8_t v)
{
    uint8_t *p = grow(b, 1);
    if (p)
        p[0] = v;
}

static void put16(struct bbs_buf *b, uint16_t v)
{
    uint8_t *p = grow(b, 2);
    if (p) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
    }
}

static void put32(struct bbs_buf *b, uint32_t v)
{
    uint8_t *p = grow(b, 4);
    if (p)
        logfs_put32(p, v);
}

static void put64(struct bbs_buf *b, uint64_t v)
{
    uint8_t *p = grow(b, 8);
    if (p)
        logfs_put64(p, v);
}

static void put_bytes(struct bbs_buf *b, const void *d, size_t n)
{
    uint8_t *p = grow(b, n);
    if (p && n)
        memcpy(p, d, n);
}

static void put_str(struct bbs_buf *b, const char *s)
{
    size_t n = s && *s ? strlen(s) + 1 : 0;
    put32(b, (uint32_t) n);
    put_bytes(b, s, n);
}

static void put_header(struct bbs_buf *b, uint16_t op, uint64_t id)
{
    b->len = 0;
    b->failed = 0;
    put32(b, BBS_MAGIC);
    put16(b, BBS_VERSION);
    put16(b, op);
    put64(b, id);
}

static void put_request(struct bbs_buf *b, uint16_t op, uint64_t id, const uint8_t *token)
{
    put_header(b, op, id);
    put_bytes(b, token, BBS_TOKEN_LEN);
}

static void put_writer(struct bbs_buf *b, const struct bbs_writer *w)
{
    put64(b, w->session);
    put32(b, w->rank);
    put_str(b, w->node);
    put_str(b, w->datalog);
}

/* An attach's records and a query reply's both (RECORD_LEN bytes). */
static void put_extent(struct bbs_buf *b, const struct bbs_extent *e)
{
    put64(b, e->off);
    put64(b, e->len);
    put64(b, e->count);
    put64(b, e->stride);
    put64(b, e->pos);
}

static void get_extent(const uint8_t *p, struct bbs_extent *e)
{
    e->off = logfs_get64(p);
    e->len = logfs_get64(p + 8);
    e->count = logfs_get64(p + 16);
    e->stride = logfs_get64(p + 24);
    e->pos = logfs_get64(p + 32);
}

static int done(const struct bbs_buf *b)
{
    return b->failed ? -1 : 0;
}

int bbs_enc_ping(struct bbs_buf *b, uint64_t id, const uint8_t *token)
{
    put_request(b, BBS_PING, id, token);
    return done(b);
}

int bbs_enc_attach(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                   const struct bbs_writer *w, const struct bbs_extent *e, uint32_t n,
                   uint64_t size, uint64_t clock)
{
    put_request(b, BBS_ATTACH, id, token);
    put_str(b, file);
    put_writer(b, w);
    put64(b, size);
    put32(b, n);
    for (uint32_t i = 0; i < n; i++)
        put_extent(b, &e[i]);
    put64(b, clock);
    return done(b);
}

int bbs_enc_query(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                  uint64_t start, uint64_t end)
{
    put_request(b, BBS_QUERY, id, token);
    put_str(b, file);
    put64(b, start);
    put64(b, end);
    return done(b);
}

int bbs_enc_detach(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                   const struct bbs_writer *w, uint64_t start, uint64_t end)
{
    put_request(b, BBS_DETACH, id, token);
    put_str(b, file);
    put_writer(b, w);
    put64(b, start);
    put64(b, end);
    return done(b);
}

int bbs_enc_stat(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file)
{
    put_request(b, BBS_STAT, id, token);
    put_str(b, file);
    return done(b);
}

int bbs_enc_replayed(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                     const uint64_t *sessions, uint32_t n)
{
    put_request(b, BBS_REPLAYED, id, token);
    put_str(b, file);
    put32(b, n);
    for (uint32_t i = 0; i < n; i++)
        put64(b, sessions[i]);
    return done(b);
}

int bbs_enc_read(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *path,
                 uint64_t off, uint64_t len)
{
    put_request(b, BBS_READ, id, token);
    put_str(b, path);
    put64(b, off);
    put64(b, len);
    return done(b);
}

int bbs_enc_export(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *metalog,
                   int salvage)
{
    put_request(b, BBS_EXPORT, id, token);
    put_str(b, metalog);
    put8(b, salvage ? 1 : 0);
    return done(b);
}

int bbs_enc_remove(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *metalog)
{
    put_request(b, BBS_REMOVE, id, token);
    put_str(b, metalog);
    return done(b);
}

int bbs_enc_drain(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file)
{
    put_request(b, BBS_DRAIN, id, token);
    put_str(b, file);
    return done(b);
}

int bbs_enc_drains(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file)
{
    put_request(b, BBS_DRAINS, id, token);
    put_str(b, file && *file ? file : NULL);
    return done(b);
}

int bbs_rep_drains_begin(struct bbs_buf *b, uint32_t n)
{
    put32(b, n);
    return done(b);
}

int bbs_rep_drain(struct bbs_buf *b, const struct bbs_drain_rec *d)
{
    put_str(b, d->path);
    put_str(b, d->error && *d->error ? d->error : NULL);
    put8(b, d->state);
    put32(b, d->tries);
    put64(b, d->done);
    put64(b, d->total);
    put64(b, d->epochs);
    put64(b, d->writes);
    put64(b, d->age_ms);
    return done(b);
}

int bbs_rep_begin(struct bbs_buf *b, uint16_t op, uint64_t id, uint16_t status,
                  const char *msg)
{
    put_header(b, (uint16_t) (op | REPLY_BIT), id);
    put16(b, status);
    put64(b, 0);                /* the clock and incarnation: bbs_rep_set_server */
    put64(b, 0);
    put_str(b, status == BBS_OK ? NULL : msg);
    return done(b);
}

void bbs_rep_set_server(struct bbs_buf *b, uint64_t clock, uint64_t incarnation)
{
    if (!b->failed && b->len >= HEADER_LEN + 2 + 16) {
        logfs_put64(b->p + HEADER_LEN + 2, clock);
        logfs_put64(b->p + HEADER_LEN + 10, incarnation);
    }
}

int bbs_rep_ping(struct bbs_buf *b, uint32_t pid, uint64_t nfiles,
                 const struct bbs_stats *stats)
{
    put32(b, BBS_VERSION);
    put32(b, pid);
    put64(b, nfiles);
    put32(b, BBS_NUM_OPS);
    for (int op = 0; op < BBS_NUM_OPS; op++)
        put64(b, stats ? __atomic_load_n(&stats->requests[op], __ATOMIC_RELAXED) : 0);
    put64(b, stats ? __atomic_load_n(&stats->refused, __ATOMIC_RELAXED) : 0);
    return done(b);
}

int bbs_rep_stat(struct bbs_buf *b, uint64_t size, uint64_t nranges, uint32_t nwriters)
{
    put64(b, size);
    put64(b, nranges);
    put32(b, nwriters);
    return done(b);
}

int bbs_rep_export(struct bbs_buf *b, uint64_t total, const char *warning)
{
    put64(b, total);
    put_str(b, warning && *warning ? warning : NULL);
    return done(b);
}

uint8_t *bbs_rep_read_room(struct bbs_buf *b, uint64_t len)
{
    put64(b, len);
    return grow(b, (size_t) len);
}

int bbs_rep_query_begin(struct bbs_buf *b, uint32_t nwriters)
{
    put32(b, nwriters);
    return done(b);
}

int bbs_rep_query_writer(struct bbs_buf *b, const struct bbs_writer *w)
{
    put_writer(b, w);
    return done(b);
}

int bbs_rep_query_pieces(struct bbs_buf *b, const struct bbs_piece *p, uint32_t n,
                         uint64_t more, uint64_t size)
{
    put32(b, n);
    for (uint32_t i = 0; i < n; i++) {
        put_extent(b, &p[i].e);
        put32(b, p[i].writer);
    }
    put64(b, more);
    put64(b, size);
    return done(b);
}

/* --- decoding ------------------------------------------------------------ */

struct cursor {
    const uint8_t *p, *end;
    char *err;
    size_t errlen;
    int failed;
};

static void fail(struct cursor *c, const char *fmt, ...)
{
    va_list ap;
    if (c->failed)
        return;
    c->failed = 1;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
}

static const uint8_t *take(struct cursor *c, size_t n, const char *what)
{
    if (c->failed)
        return NULL;
    if ((size_t) (c->end - c->p) < n) {
        fail(c, "message ends inside %s", what);
        return NULL;
    }
    const uint8_t *at = c->p;
    c->p += n;
    return at;
}

static uint8_t get8(struct cursor *c, const char *what)
{
    const uint8_t *p = take(c, 1, what);
    return p ? p[0] : 0;
}

static uint16_t get16(struct cursor *c, const char *what)
{
    const uint8_t *p = take(c, 2, what);
    return p ? (uint16_t) (p[0] | p[1] << 8) : 0;
}

static uint32_t get32(struct cursor *c, const char *what)
{
    const uint8_t *p = take(c, 4, what);
    return p ? logfs_get32(p) : 0;
}

static uint64_t get64(struct cursor *c, const char *what)
{
    const uint8_t *p = take(c, 8, what);
    return p ? logfs_get64(p) : 0;
}

/* A str of at most max bytes; empty only if may_be_empty. */
static const char *get_str(struct cursor *c, const char *what, size_t max, int may_be_empty)
{
    uint32_t n = get32(c, what);
    if (c->failed)
        return NULL;
    if (n == 0) {
        if (!may_be_empty)
            fail(c, "%s is empty", what);
        return "";
    }
    if (n > max + 1) {
        fail(c, "%s is %u bytes, over the limit of %zu", what, n, max);
        return NULL;
    }
    const uint8_t *s = take(c, n, what);
    if (!s)
        return NULL;
    if (s[n - 1] != 0 || memchr(s, 0, n - 1)) {
        fail(c, "%s is not one NUL-terminated string", what);
        return NULL;
    }
    return (const char *) s;
}

static void get_writer(struct cursor *c, struct bbs_writer *w)
{
    w->session = get64(c, "the writer's session");
    w->rank = get32(c, "the writer's rank");
    w->node = get_str(c, "the writer's node", MAX_NODE, 0);
    w->datalog = get_str(c, "the writer's datalog", BBS_MAX_PATH, 0);
}

static void get_drain(struct cursor *c, struct bbs_drain_rec *d)
{
    d->path = get_str(c, "the drained file", BBS_MAX_PATH, 0);
    d->error = get_str(c, "the drain's error", 1024, 1);
    d->state = get8(c, "the drain's state");
    d->tries = get32(c, "the drain's tries");
    d->done = get64(c, "the bytes drained");
    d->total = get64(c, "the bytes to drain");
    d->epochs = get64(c, "the epochs drained");
    d->writes = get64(c, "the drain's writes");
    d->age_ms = get64(c, "the drain's age");
}

/* [start, end) non-empty. */
static void check_range(struct cursor *c, uint64_t start, uint64_t end, const char *what)
{
    if (!c->failed && start >= end)
        fail(c, "%s [%llu, %llu) is empty or reversed", what, (unsigned long long) start,
             (unsigned long long) end);
}

static void check_end(struct cursor *c)
{
    if (!c->failed && c->p != c->end)
        fail(c, "%zu bytes after the end of the message", (size_t) (c->end - c->p));
}

/* An extent must lie within a signed 64-bit file (MPI_Offset) and its
 * datalog bytes too; count > 1 needs stride >= len (pieces never overlap
 * within a record).  @return the pieces it adds, 0 when refused. */
static uint64_t check_extent(struct cursor *c, const struct bbs_extent *e, uint32_t i)
{
    const uint64_t lim = (uint64_t) INT64_MAX;
    if (e->len == 0 || e->count == 0) {
        fail(c, "record %u has no bytes (len %llu, count %llu)", i,
             (unsigned long long) e->len, (unsigned long long) e->count);
        return 0;
    }
    if (e->count > 1 && e->stride < e->len) {
        fail(c, "record %u: stride %llu is shorter than its blocks (%llu)", i,
             (unsigned long long) e->stride, (unsigned long long) e->len);
        return 0;
    }
    uint64_t span = e->count > 1 ? e->stride : 0;
    if (e->len > lim || e->off > lim - e->len
        || (e->count > 1 && (e->count - 1 > (lim - e->len - e->off) / span))
        || e->count > lim / e->len || e->pos > lim - e->count * e->len) {
        fail(c, "record %u lies past the largest file offset", i);
        return 0;
    }
    return e->count;
}

const char *bbs_op_name(int op)
{
    static const char *const names[] = { "?", "ping", "attach", "query", "detach", "stat",
        "replayed", "read", "export", "remove", "drain", "drains"
    };
    return op > 0 && op < BBS_NUM_OPS ? names[op] : "?";
}

static int get_header(struct cursor *c, uint16_t *op, uint64_t *id, int reply)
{
    uint32_t magic = get32(c, "the header");
    uint16_t version = get16(c, "the header");
    *op = get16(c, "the header");
    *id = get64(c, "the header");
    if (c->failed)
        return BBS_EMSG;
    if (magic != BBS_MAGIC) {
        fail(c, "not a bbserver message (magic %#x)", magic);
        return BBS_EMSG;
    }
    if (version != BBS_VERSION) {
        fail(c, "protocol version %u; this side speaks %u", version, BBS_VERSION);
        return BBS_EVERSION;
    }
    if (!!(*op & REPLY_BIT) != reply) {
        fail(c, reply ? "a request where a reply was expected"
             : "a reply where a request was expected");
        return BBS_EMSG;
    }
    *op &= (uint16_t) ~REPLY_BIT;
    if (*op == 0 || *op >= BBS_NUM_OPS) {
        fail(c, "unknown operation %u", *op);
        return BBS_EMSG;
    }
    return BBS_OK;
}

static void cursor_init(struct cursor *c, const void *msg, size_t len, char *err, size_t errlen)
{
    c->p = msg;
    c->end = c->p + len;
    c->err = err;
    c->errlen = errlen;
    c->failed = 0;
    if (errlen)
        err[0] = 0;
}

int bbs_dec_request(const void *msg, size_t len, struct bbs_request *r, char *err,
                    size_t errlen)
{
    struct cursor c;
    int st;

    memset(r, 0, sizeof(*r));
    cursor_init(&c, msg, len, err, errlen);
    if (len > BBS_MAX_MSG) {
        fail(&c, "message of %zu bytes, over the limit of %u", len, BBS_MAX_MSG);
        return BBS_EMSG;
    }
    if ((st = get_header(&c, &r->op, &r->id, 0)) != BBS_OK)
        return st;
    const uint8_t *tok = take(&c, BBS_TOKEN_LEN, "the token");
    if (tok)
        memcpy(r->token, tok, BBS_TOKEN_LEN);
    switch (r->op) {
    case BBS_PING:
        break;
    case BBS_ATTACH:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 0);
        get_writer(&c, &r->writer);
        r->size = get64(&c, "the size");
        r->nrecords = get32(&c, "the record count");
        if (c.failed)
            break;
        if (r->size > (uint64_t) INT64_MAX) {
            fail(&c, "size %llu past the largest file offset", (unsigned long long) r->size);
            break;
        }
        if (r->nrecords > BBS_MAX_RECORDS) {
            fail(&c, "%u records; an attach carries at most %u", r->nrecords, BBS_MAX_RECORDS);
            break;
        }
        if ((size_t) (c.end - c.p) != (size_t) r->nrecords * RECORD_LEN + 8) {
            fail(&c, "%u records and the clock need %zu bytes, the message has %zu",
                 r->nrecords, (size_t) r->nrecords * RECORD_LEN + 8, (size_t) (c.end - c.p));
            break;
        }
        r->records = c.p;
        for (uint32_t i = 0; i < r->nrecords && !c.failed; i++) {
            struct bbs_extent e;
            bbs_record(r, i, &e);
            r->npieces += check_extent(&c, &e, i);
            if (r->npieces > BBS_MAX_PIECES)
                fail(&c, "the records expand to more than %llu pieces; split the attach",
                     (unsigned long long) BBS_MAX_PIECES);
        }
        c.p += (size_t) r->nrecords * RECORD_LEN;
        r->clock = get64(&c, "the clock");
        break;
    case BBS_QUERY:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 0);
        r->start = get64(&c, "the range");
        r->end = get64(&c, "the range");
        check_range(&c, r->start, r->end, "the queried range");
        break;
    case BBS_DETACH:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 0);
        get_writer(&c, &r->writer);
        r->start = get64(&c, "the range");
        r->end = get64(&c, "the range");
        check_range(&c, r->start, r->end, "the detached range");
        break;
    case BBS_STAT:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 0);
        break;
    case BBS_REPLAYED:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 0);
        r->nsessions = get32(&c, "the session count");
        if (c.failed)
            break;
        if (r->nsessions > BBS_MAX_SESSIONS) {
            fail(&c, "%u sessions; a replayed message names at most %u", r->nsessions,
                 BBS_MAX_SESSIONS);
            break;
        }
        r->sessions = take(&c, (size_t) r->nsessions * 8, "the sessions");
        break;
    case BBS_READ: {
        r->path = get_str(&c, "the datalog path", BBS_MAX_PATH, 0);
        uint64_t off = get64(&c, "the offset"), n = get64(&c, "the length");
        if (c.failed)
            break;
        if (n == 0 || n > BBS_MAX_READ || off > (uint64_t) INT64_MAX - n)
            fail(&c, "a read of %llu bytes at %llu (1 to %u bytes, within the file)",
                 (unsigned long long) n, (unsigned long long) off, BBS_MAX_READ);
        r->start = off;
        r->end = off + n;
        break;
    }
    case BBS_EXPORT:
        r->path = get_str(&c, "the metalog path", BBS_MAX_PATH, 0);
        r->salvage = get8(&c, "the salvage flag");
        if (!c.failed && r->salvage > 1)
            fail(&c, "salvage flag %u (0 or 1)", r->salvage);
        break;
    case BBS_REMOVE:
        r->path = get_str(&c, "the metalog path", BBS_MAX_PATH, 0);
        break;
    case BBS_DRAIN:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 0);
        break;
    case BBS_DRAINS:
        r->file = get_str(&c, "the file name", BBS_MAX_PATH, 1);
        break;
    }
    check_end(&c);
    if (c.failed) {
        /* name the operation too: "attach: record 3 ..." */
        if (errlen) {
            char tmp[256];
            snprintf(tmp, sizeof(tmp), "%s", err);
            snprintf(err, errlen, "%s: %s", bbs_op_name(r->op), tmp);
        }
        return BBS_EMSG;
    }
    return BBS_OK;
}

int bbs_dec_reply(const void *msg, size_t len, struct bbs_reply *r, char *err, size_t errlen)
{
    struct cursor c;
    int st;

    memset(r, 0, sizeof(*r));
    cursor_init(&c, msg, len, err, errlen);
    if (len > BBS_MAX_MSG) {
        fail(&c, "message of %zu bytes, over the limit of %u", len, BBS_MAX_MSG);
        return BBS_EMSG;
    }
    if ((st = get_header(&c, &r->op, &r->id, 1)) != BBS_OK)
        return st;
    r->status = get16(&c, "the status");
    r->clock = get64(&c, "the clock");
    r->incarnation = get64(&c, "the incarnation");
    r->msg = get_str(&c, "the message", 1024, 1);
    if (!c.failed && r->status >= BBS_NUM_STATUS)
        fail(&c, "unknown status %u", r->status);
    if (!c.failed && r->status == BBS_OK && *r->msg)
        fail(&c, "a message with success");
    if (c.failed || r->status != BBS_OK) {
        check_end(&c);
        return c.failed ? BBS_EMSG : BBS_OK;
    }
    r->more = UINT64_MAX;
    switch (r->op) {
    case BBS_PING:
        r->version = get32(&c, "the version");
        r->pid = get32(&c, "the pid");
        r->nfiles = get64(&c, "the file count");
        {
            /* an older or newer server counts other ops: keep what both know */
            uint32_t nops = get32(&c, "the op count");
            if (!c.failed && nops > 256)
                fail(&c, "%u op counters", nops);
            for (uint32_t op = 0; op < nops && !c.failed; op++) {
                uint64_t v = get64(&c, "the op counters");
                if (op < BBS_NUM_OPS)
                    r->requests[op] = v;
            }
            r->refused = get64(&c, "the refused count");
        }
        break;
    case BBS_QUERY: {
        r->nwriters = get32(&c, "the writer count");
        r->writers = c.p;
        if (!c.failed && r->nwriters > BBS_MAX_QUERY_PIECES)
            fail(&c, "%u writers", r->nwriters);
        for (uint32_t i = 0; i < r->nwriters && !c.failed; i++) {
            struct bbs_writer w;
            get_writer(&c, &w);
        }
        r->npieces = get32(&c, "the piece count");
        if (c.failed)
            break;
        if (r->npieces > BBS_MAX_QUERY_PIECES
            || (size_t) (c.end - c.p) < (size_t) r->npieces * PIECE_LEN) {
            fail(&c, "%u pieces do not fit in the message", r->npieces);
            break;
        }
        r->pieces = c.p;
        c.p += (size_t) r->npieces * PIECE_LEN;
        for (uint32_t i = 0; i < r->npieces && !c.failed; i++) {
            struct bbs_piece p;
            bbs_reply_piece(r, i, &p);
            r->nblocks += check_extent(&c, &p.e, i);
            if (!c.failed && p.writer >= r->nwriters)
                fail(&c, "record %u names writer %u of %u", i, p.writer, r->nwriters);
            if (!c.failed && r->nblocks > BBS_MAX_QUERY_PIECES)
                fail(&c, "the records expand to more than %u pieces", BBS_MAX_QUERY_PIECES);
        }
        r->more = get64(&c, "the continuation");
        r->size = get64(&c, "the size");
        break;
    }
    case BBS_STAT:
        r->size = get64(&c, "the size");
        r->nranges = get64(&c, "the range count");
        r->nwriters = get32(&c, "the writer count");
        break;
    case BBS_READ:
        r->len = get64(&c, "the length");
        if (!c.failed && r->len > BBS_MAX_READ)
            fail(&c, "%llu bytes of data, over the limit", (unsigned long long) r->len);
        r->data = take(&c, (size_t) r->len, "the data");
        break;
    case BBS_EXPORT:
        r->total = get64(&c, "the sealed length");
        r->warning = get_str(&c, "the warning", 1024, 1);
        r->len = get64(&c, "the length");
        if (!c.failed && (r->len > BBS_MAX_READ || r->len > r->total))
            fail(&c, "%llu bytes of a %llu-byte metalog, over the limit",
                 (unsigned long long) r->len, (unsigned long long) r->total);
        r->data = take(&c, (size_t) r->len, "the data");
        break;
    case BBS_DRAIN:
    case BBS_DRAINS:
        r->ndrains = get32(&c, "the drain count");
        r->drains = c.p;
        if (!c.failed && (r->ndrains > BBS_MAX_DRAINS || (r->op == BBS_DRAIN && r->ndrains != 1)))
            fail(&c, "%u drain records", r->ndrains);
        for (uint32_t i = 0; i < r->ndrains && !c.failed; i++) {
            struct bbs_drain_rec d;
            get_drain(&c, &d);
            if (!c.failed && (d.state == 0 || d.state >= BBS_DRAIN_NUM_STATES))
                fail(&c, "drain record %u: state %u", i, d.state);
        }
        r->drains_len = (size_t) (c.p - r->drains);
        break;
    default:
        break;
    }
    check_end(&c);
    return c.failed ? BBS_EMSG : BBS_OK;
}

uint64_t bbs_session(const struct bbs_request *r, uint32_t i)
{
    return logfs_get64(r->sessions + (size_t) i * 8);
}

void bbs_record(const struct bbs_request *r, uint32_t i, struct bbs_extent *e)
{
    get_extent(r->records + (size_t) i * RECORD_LEN, e);
}

void bbs_reply_drains(const struct bbs_reply *r, struct bbs_drain_rec *d)
{
    struct cursor c;
    char err[8];
    cursor_init(&c, r->drains, r->drains_len, err, sizeof(err));
    for (uint32_t i = 0; i < r->ndrains; i++)
        get_drain(&c, &d[i]);
}

void bbs_reply_writers(const struct bbs_reply *r, struct bbs_writer *w)
{
    struct cursor c;
    char err[8];
    cursor_init(&c, r->writers, (size_t) (r->pieces - r->writers), err, sizeof(err));
    for (uint32_t i = 0; i < r->nwriters; i++)
        get_writer(&c, &w[i]);
}

void bbs_reply_piece(const struct bbs_reply *r, uint32_t i, struct bbs_piece *p)
{
    const uint8_t *q = r->pieces + (size_t) i * PIECE_LEN;
    get_extent(q, &p->e);
    p->writer = logfs_get32(q + RECORD_LEN);
}

size_t bbs_upgrade_attach(void *msg, size_t len, size_t cap)
{
    uint8_t *p = msg;
    if (len < HEADER_LEN || logfs_get32(p) != BBS_MAGIC || (p[6] | p[7] << 8) != BBS_ATTACH)
        return len;
    unsigned version = (unsigned) (p[4] | p[5] << 8);
    if (version < BBS_ATTACH_SINCE || version >= BBS_VERSION || (version < 4 && cap < len + 8))
        return len;
    p[4] = (uint8_t) (BBS_VERSION & 0xff);
    p[5] = (uint8_t) (BBS_VERSION >> 8);
    if (version < 4) {
        logfs_put64(p + len, 0);        /* no clock */
        len += 8;
    }
    return len;
}

uint16_t bbs_peek_op(const void *msg, size_t len)
{
    const uint8_t *p = msg;
    if (len < HEADER_LEN)
        return 0;
    return (uint16_t) ((p[6] | p[7] << 8) & ~REPLY_BIT);
}
