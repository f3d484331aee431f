/*
 * bbserver's wire format: requests and replies as little-endian bytes.
 * Plain C, no UCX: the server, the client library in the driver, the unit
 * tests and the fuzzer all use these functions, so the decoder is the one
 * place where untrusted bytes are checked.
 *
 * Every message:   magic u32 | version u16 | op u16 | id u64
 * then a request:  token[BBS_TOKEN_LEN] | body
 *      a reply:    status u16 | clock u64 | incarnation u64 | message str |
 *                  body (only when status is OK)
 * A str is u32 length (counting its NUL) then the bytes, NUL-terminated
 * with no NUL inside; an empty str is length 0.
 *
 * The decoder checks every field and length before use: a message that is
 * short, long, has an unknown op, a bad string, a count that does not match
 * the bytes, a range that wraps or a record past a limit is refused as
 * BBS_EMSG with a message naming the field.
 */
#ifndef BBSERVER_PROTO_H
#define BBSERVER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BBS_MAGIC 0x31534242u   /* "BBS1" */
#define BBS_VERSION 5       /* 2: query replies carry strided records;
                             * 3: REPLAYED names the sessions replayed;
                             * 4: the clock (ATTACH, every reply), the
                             *    server's incarnation (every reply);
                             * 5: DRAIN queues and answers at once, DRAINS */
#define BBS_ATTACH_SINCE 1  /* the oldest version whose ATTACH this one reads (upgraded) */
#define BBS_TOKEN_LEN 32
/* Limits a server enforces on one message (a client splits above them). */
#define BBS_MAX_PATH 4096
#define BBS_MAX_RECORDS (1u << 20)      /* extent records in one attach */
#ifndef BBS_MAX_PIECES                  /* (the fuzz target builds with fewer) */
#define BBS_MAX_PIECES (1ull << 24)     /* pieces those records expand to */
#endif
#define BBS_MAX_READ (64u << 20)        /* bytes in one read reply */
#define BBS_MAX_QUERY_PIECES (1u << 20) /* blocks one query reply's records hold */
#define BBS_MAX_SESSIONS (1u << 16)     /* sessions one REPLAYED names */
#define BBS_MAX_DRAINS 4096               /* drains one DRAINS reply lists */
#define BBS_MAX_MSG (BBS_MAX_READ + 4096)

/* X(name, description): the status a reply carries. */
#define BBS_STATUS_LIST(X)                                                    \
    X(BBS_OK,       "success")                                                \
    X(BBS_EMSG,     "malformed message")                                      \
    X(BBS_EVERSION, "protocol version not supported by this server")          \
    X(BBS_ETOKEN,   "wrong token: the server belongs to another job or user") \
    X(BBS_ENOFILE,  "the server holds nothing for this file")                 \
    X(BBS_ENOMEM,   "the server is out of memory")                            \
    X(BBS_EIO,      "I/O error reading a log on the server's node")           \
    X(BBS_ELIMIT,   "the request exceeds a limit of the server")              \
    X(BBS_EPERM,    "the path is not a log in the server's log directories")  \
    X(BBS_ESHORT,   "the log is shorter than the bytes asked for")                \
    X(BBS_EBUSY,    "a handle of the file is open: its close replays the logs")

enum bbs_status {
#define BBS_X_ENUM(name, desc) name,
    BBS_STATUS_LIST(BBS_X_ENUM)
#undef BBS_X_ENUM
    BBS_NUM_STATUS
};

/* @return the op's name ("ping", ...; "?" for no op). */
const char *bbs_op_name(int op);

/* @return the status's description ("unknown status" past the list). */
const char *bbs_status_str(int status);

enum bbs_op {
    BBS_PING = 1,   /* -> server version, pid, files held */
    BBS_ATTACH,     /* a writer's extents become visible: file, writer, size, records, clock */
    BBS_QUERY,      /* owners of [start, end) of a file -> writers and pieces */
    BBS_DETACH,     /* forget a writer's extents in [start, end) */
    BBS_STAT,       /* a file's size (end of the last attached byte) */
    BBS_REPLAYED,   /* sessions' logs went to the canonical file: drop their bytes */
    BBS_READ,       /* bytes of a datalog on the server's node */
    BBS_EXPORT,     /* a metalog's sealed part, for a replay on other nodes */
    BBS_REMOVE,     /* remove a replayed (or deleted) writer's log files */
    BBS_DRAIN,      /* queue a file's drain: its pending logs into it, by the server */
    BBS_DRAINS,     /* where the server's drains stand (one file's, or all) */
    BBS_NUM_OPS
};

/* Who wrote: a process of one session (job) of a file, and where its
 * datalog is (a path on the node whose server is `node`). */
struct bbs_writer {
    uint64_t session;
    uint32_t rank;
    const char *node;       /* that node's server address, "host:port" */
    const char *datalog;
};

/* count blocks of len bytes, at off, off + stride, ...; in the datalog at
 * pos, pos + len, ... (a strided write is one record, not count pairs). */
struct bbs_extent {
    uint64_t off, len, count, stride, pos;
};

/* One past the last byte of e's last block (e valid: count >= 1). */
static inline uint64_t bbs_extent_end(const struct bbs_extent *e)
{
    return e->off + (e->count - 1) * e->stride + e->len;
}

/* A record of a query's answer: the blocks e describes are writer's, at
 * e.pos, e.pos + e.len, ... in its log.  The server folds the pieces of a
 * strided write back into one record, so a reader of an interleaved file
 * gets a record per writer, not a pair per block. */
struct bbs_piece {
    struct bbs_extent e;
    uint32_t writer;        /* index into the reply's writers */
};

/* A decoded request.  Pointers point into the message bytes. */
struct bbs_request {
    uint16_t op;
    uint64_t id;
    uint8_t token[BBS_TOKEN_LEN];
    const char *file;           /* ATTACH QUERY DETACH STAT REPLAYED DRAIN; DRAINS
                                 * ("": every file) */
    struct bbs_writer writer;   /* ATTACH DETACH */
    uint64_t start, end;        /* QUERY DETACH; READ: offset, offset + length */
    uint64_t size;              /* ATTACH: the file is at least this long (set_size) */
    uint32_t nrecords;          /* ATTACH (0 when it only grows the file) */
    const uint8_t *records;     /* ATTACH: read them with bbs_record() */
    uint64_t npieces;           /* ATTACH: what the records expand to */
    uint32_t nsessions;         /* REPLAYED (0: every session of the file) */
    const uint8_t *sessions;    /* REPLAYED: read them with bbs_session() */
    const char *path;           /* READ: the datalog; EXPORT, REMOVE: the metalog */
    uint8_t salvage;            /* EXPORT: end at damage instead of failing */
    uint64_t clock;             /* ATTACH: the writer's clock (bbs_serve_clock) */
};

/* Where one file's drain stands on a server (bbserver/drains.h says what
 * the fields mean).  In a decoded reply the strings point into it. */
struct bbs_drain_rec {
    const char *path;
    const char *error;          /* "" unless failed or held */
    uint8_t state;              /* enum bbs_drain_state */
    uint32_t tries;
    uint64_t done, total, epochs, writes;
    uint64_t age_ms;
};

/* A decoded reply. */
struct bbs_reply {
    uint16_t op;
    uint64_t id;
    uint16_t status;
    const char *msg;            /* what went wrong, for the user ("" if OK) */
    uint64_t clock;             /* the server's clock when it replied (0: none) */
    uint64_t incarnation;       /* which life of the server's maps replied (0: none) */
    /* PING */
    uint32_t version, pid;
    uint64_t nfiles;
    uint64_t requests[BBS_NUM_OPS];     /* served, by op */
    uint64_t refused;
    /* QUERY: writers and records of pieces (read with bbs_reply_writer /
     * _piece); more: where to continue when the answer was cut at a limit */
    uint32_t nwriters;
    uint32_t npieces;           /* records */
    uint64_t nblocks;           /* the blocks they hold */
    const uint8_t *writers, *pieces;
    uint64_t more;              /* UINT64_MAX: the answer is complete */
    uint64_t size;              /* QUERY, STAT: the file's size in the map */
    /* STAT */
    uint64_t nranges;
    /* READ, EXPORT (its first len bytes; READ of the metalog gets the
     * rest up to total) */
    const uint8_t *data;
    uint64_t len;
    uint64_t total;             /* EXPORT: bytes of the sealed part */
    const char *warning;        /* EXPORT with salvage: what was lost ("" if nothing) */
    /* DRAIN (one), DRAINS: drain records, read with bbs_reply_drains */
    uint32_t ndrains;
    const uint8_t *drains;
    size_t drains_len;
};

/* Counters of what a server was asked, told by PING (tests assert on
 * them).  A server's workers share one: updated with atomic adds. */
struct bbs_stats {
    uint64_t requests[BBS_NUM_OPS];
    uint64_t refused;           /* bad token, malformed, bad version */
};

/* A growing encode buffer; an allocation failure sticks (failed) and the
 * finishing call reports it, so encoders need no check per field. */
struct bbs_buf {
    uint8_t *p;
    size_t len, cap;
    int failed;
};

void bbs_buf_free(struct bbs_buf *b);

/* Requests.  Each starts b afresh.  @return 0, or -1 when out of memory. */
int bbs_enc_ping(struct bbs_buf *b, uint64_t id, const uint8_t *token);
/* ATTACH: n extents (0 to BBS_MAX_RECORDS), and size: the file is at least
 * that long (a writer's set_size that grew it; 0: no claim); clock: the
 * writer's clock now, no earlier than the stamps of the writes attached
 * (0: none). */
int bbs_enc_attach(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                   const struct bbs_writer *w, const struct bbs_extent *e, uint32_t n,
                   uint64_t size, uint64_t clock);
int bbs_enc_query(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                  uint64_t start, uint64_t end);
int bbs_enc_detach(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                   const struct bbs_writer *w, uint64_t start, uint64_t end);
int bbs_enc_stat(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file);
/* REPLAYED: the n sessions (0 to BBS_MAX_SESSIONS) are in the canonical
 * file now; n = 0 names every session of the file. */
int bbs_enc_replayed(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file,
                     const uint64_t *sessions, uint32_t n);
int bbs_enc_read(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *path,
                 uint64_t off, uint64_t len);
int bbs_enc_export(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *metalog,
                   int salvage);
int bbs_enc_remove(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *metalog);
/* DRAIN: the canonical file (an absolute POSIX path). */
int bbs_enc_drain(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file);
/* DRAINS: one file's drain, or every one the server knows (file NULL). */
int bbs_enc_drains(struct bbs_buf *b, uint64_t id, const uint8_t *token, const char *file);

/* Replies.  bbs_rep_begin writes the header (and msg when status is not
 * OK); OK replies then append their body with the calls below. */
int bbs_rep_begin(struct bbs_buf *b, uint16_t op, uint64_t id, uint16_t status,
                  const char *msg);
/* Set a finished reply's clock and incarnation (bbs_rep_begin leaves
 * them 0). */
void bbs_rep_set_server(struct bbs_buf *b, uint64_t clock, uint64_t incarnation);
/* PING: who the server is and what it was asked so far. */
int bbs_rep_ping(struct bbs_buf *b, uint32_t pid, uint64_t nfiles,
                 const struct bbs_stats *stats);
int bbs_rep_stat(struct bbs_buf *b, uint64_t size, uint64_t nranges, uint32_t nwriters);
/* READ: room for len bytes at the end, to read the log into. */
uint8_t *bbs_rep_read_room(struct bbs_buf *b, uint64_t len);
/* EXPORT: the sealed part's length and what salvage lost, then the first
 * bytes with bbs_rep_read_room (at most BBS_MAX_READ of them). */
int bbs_rep_export(struct bbs_buf *b, uint64_t total, const char *warning);
/* QUERY: writers first, then records of pieces, then the continuation point. */
int bbs_rep_query_begin(struct bbs_buf *b, uint32_t nwriters);
int bbs_rep_query_writer(struct bbs_buf *b, const struct bbs_writer *w);
int bbs_rep_query_pieces(struct bbs_buf *b, const struct bbs_piece *p, uint32_t n,
                         uint64_t more, uint64_t size);
/* DRAIN, DRAINS: how many records, then each (at most BBS_MAX_DRAINS;
 * DRAIN: one). */
int bbs_rep_drains_begin(struct bbs_buf *b, uint32_t n);
int bbs_rep_drain(struct bbs_buf *b, const struct bbs_drain_rec *d);
/* ATTACH, DETACH, REPLAYED, REMOVE: no body. */

/* Decoding.  @return BBS_OK, or BBS_EMSG / BBS_EVERSION with why in err
 * (errlen bytes, NUL-terminated). */
int bbs_dec_request(const void *msg, size_t len, struct bbs_request *r, char *err,
                    size_t errlen);
int bbs_dec_reply(const void *msg, size_t len, struct bbs_reply *r, char *err, size_t errlen);

/* Session i of a decoded REPLAYED (i < nsessions). */
uint64_t bbs_session(const struct bbs_request *r, uint32_t i);
/* Record i of a decoded attach (i < nrecords; checked by the decoder). */
void bbs_record(const struct bbs_request *r, uint32_t i, struct bbs_extent *e);
/* A decoded query reply's writers, all nwriters of them, into w[]. */
void bbs_reply_writers(const struct bbs_reply *r, struct bbs_writer *w);
/* A decoded DRAIN or DRAINS reply's records, all ndrains of them, into d[]. */
void bbs_reply_drains(const struct bbs_reply *r, struct bbs_drain_rec *d);
/* Record i of a decoded query reply (i < npieces). */
void bbs_reply_piece(const struct bbs_reply *r, uint32_t i, struct bbs_piece *p);

/* An ATTACH request of an older version (since BBS_ATTACH_SINCE) becomes
 * this version's in place, so that a state file saved by an older server
 * loads: versions before 4 gain a clock of 0 at the end, which needs 8
 * bytes of room past len (cap: msg's size).  Anything else is left alone.
 * @return the message's length now. */
size_t bbs_upgrade_attach(void *msg, size_t len, size_t cap);

/* The op a message claims, without decoding it (0 if too short). */
uint16_t bbs_peek_op(const void *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif
