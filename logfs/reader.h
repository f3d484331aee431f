/*
 * The metalog reader.  Its rules (LevelDB's, plus a header, epochs and a seal):
 *  - an incomplete record at the end of the file is a clean end: the writer
 *    died while appending it.  logfs_reader_torn_bytes() says how many bytes
 *    were ignored;
 *  - except before the sealed length (seal.h): logfs_reader_open() reads
 *    the seal beside the metalog, and a record stream that ends before the
 *    length the writer sealed at its last sync or close (a record whose
 *    length runs past the end of the file or past the sealed length, or a
 *    file shorter than the sealed length) is LOGFS_ECORRUPT: a damaged
 *    length field or a truncation, not a torn tail.  Without a valid seal
 *    (none: older logs, memory sources; or no valid slot) the rule above
 *    holds for the whole file;
 *  - a checksum mismatch, or a record whose checksum is right but whose
 *    content is malformed, is corruption: logfs_reader_next() returns
 *    LOGFS_ECORRUPT with the record's offset and the number of bytes dropped.
 *    The reader stops there: a damaged length field cannot be trusted to
 *    find the next record, and replaying records past a gap could apply a
 *    later epoch without an earlier one.  Every byte from the bad record to
 *    the end of the file is dropped;
 *  - an unknown record type is LOGFS_ETYPE and an unknown format version is
 *    LOGFS_EVERSION, both also stopping the reader;
 *  - no input makes it read out of bounds or allocate more than
 *    LOGFS_MAX_PAYLOAD plus a read window.
 * Errors are sticky: once next() failed it keeps returning the same code.
 */
#ifndef LOGFS_READER_H
#define LOGFS_READER_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "extents.h"
#include "seal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct logfs_reader;

struct logfs_header {
    uint32_t version;  /* format version (LOGFS_FORMAT_VERSION) */
    uint64_t file_id;  /* the canonical file's id */
    uint32_t rank;     /* writer rank */
    uint32_t nwriters; /* number of writers */
};

struct logfs_record {
    int type;          /* enum logfs_rec_type (format.h) */
    uint64_t offset;   /* where the record starts in the metalog */
    uint32_t length;   /* payload bytes */
    uint64_t epoch;    /* epoch the record belongs to (SYNC/CLOSE: the one they close) */
    union {
        struct {
            uint64_t dlog_off;     /* datalog offset of the first data byte */
            uint64_t nbytes;       /* data bytes covered */
            const uint8_t *groups; /* encoded groups: use logfs_group_iter_init() */
            size_t groups_len;     /* valid until the next call on the reader */
            uint64_t ngroups;      /* number of groups */
            uint64_t seq_step;     /* > 0: one group whose block i was made at
                                    * the ORDER's seq + i * seq_step */
        } write;
        struct {
            uint64_t epoch;    /* epoch closed */
            uint64_t dlog_len; /* datalog length at that point */
        } sync;                /* SYNC and CLOSE */
        struct {
            uint64_t size;     /* new file size */
        } setsize;
        struct {
            uint64_t seq;      /* collective calls entered (ORDER, format.h) */
            uint64_t step;     /* > 0: the count's step per block of the next WRITE */
        } order;
        struct {
            uint64_t clock;    /* nanoseconds on the file's shared clock (STAMP) */
            uint64_t process;  /* the writing process (0: not given) */
        } stamp;
    } u;
};

/*
 * Open a metalog file, read its seal (logfs_seal_path(path), if there is one)
 * and its header record.
 * @param path      metalog path
 * @param[out] out  the reader, NULL on failure
 * @return LOGFS_OK, LOGFS_ENOENT/LOGFS_EACCES/LOGFS_EIO (metalog, or a seal
 *         that exists but cannot be read), LOGFS_EFORMAT (no header, bad
 *         magic), LOGFS_EVERSION, LOGFS_ECORRUPT (also: a sealed metalog
 *         cut inside its header), LOGFS_ENOMEM
 */
int logfs_reader_open(const char *path, struct logfs_reader **out, struct logfs_error *err);

/* As logfs_reader_open, over @p len bytes at @p data, which must outlive the
 * reader.  There is no seal: the whole input follows the torn-tail rule. */
int logfs_reader_open_mem(const void *data, size_t len, struct logfs_reader **out,
                          struct logfs_error *err);

/* A metalog and its seal kept open by a caller that reads the log again
 * and again (a view of others' writes looked at after every MPI
 * synchronization): a reader borrows them instead of opening both by path,
 * checking their owner, and closing them each time.  -1: not open yet. */
struct logfs_kept_log {
    int metalog, seal;
    struct logfs_header header; /* as read the first time */
    uint64_t header_end;        /* 0: not read yet */
};
#define LOGFS_KEPT_LOG_INIT {-1, -1, {0, 0, 0, 0}, 0}

/* As logfs_reader_open, through (and filling in) @p kept; the reader does
 * not close them. */
int logfs_reader_open_kept(const char *path, struct logfs_kept_log *kept,
                           struct logfs_reader **out, struct logfs_error *err);

/* As logfs_reader_open_kept, reading no further than @p size, the size the
 * caller saw (0: looked at here), which saves that look where the seal is
 * within it (a seal past it: looked at here, as without a size). */
int logfs_reader_open_kept_upto(const char *path, struct logfs_kept_log *kept, uint64_t size,
                                struct logfs_reader **out, struct logfs_error *err);

/* Close what @p kept holds and set it to -1s. */
void logfs_kept_log_close(struct logfs_kept_log *kept);

/* Free the reader (closing its file unless it was borrowed). NULL is fine. */
void logfs_reader_close(struct logfs_reader *r);

/* @return the header read at open. */
const struct logfs_header *logfs_reader_header(const struct logfs_reader *r);

/*
 * Read the next record after the header.
 * @param[out] rec  the record (pointers valid until the next call)
 * @return LOGFS_OK, LOGFS_END at a clean end (after CLOSE, at end of file, or
 *         before a torn record; never before the sealed length),
 *         LOGFS_ECORRUPT, LOGFS_ETYPE, LOGFS_EIO, LOGFS_ENOMEM
 */
int logfs_reader_next(struct logfs_reader *r, struct logfs_record *rec, struct logfs_error *err);

/* @return bytes of an incomplete trailing record ignored (valid after LOGFS_END). */
uint64_t logfs_reader_torn_bytes(const struct logfs_reader *r);

/* @return offset of the corrupt record, after LOGFS_ECORRUPT/LOGFS_ETYPE. */
uint64_t logfs_reader_bad_offset(const struct logfs_reader *r);

/* @return bytes dropped from the corrupt record to the end of the file. */
uint64_t logfs_reader_dropped_bytes(const struct logfs_reader *r);

/* @return nonzero once a CLOSE record was read. */
int logfs_reader_saw_close(const struct logfs_reader *r);

/* @return the offset just past the last record read (after open: past
 *         the header). */
uint64_t logfs_reader_position(const struct logfs_reader *r);

/* @return size of the metalog being read. */
uint64_t logfs_reader_size(const struct logfs_reader *r);

/* @return the sealed length the reader enforces: the metalog offset just
 *         past the last SYNC/CLOSE its writer sealed, or 0 when no valid
 *         seal of this log exists. */
uint64_t logfs_reader_sealed_length(const struct logfs_reader *r);

/* @param[out] out  the seal as read at open (may be NULL)
 * @return its state (enum logfs_seal_state): NONE, UNKNOWN, VALID, or
 *         FOREIGN (a valid seal of another log, ignored) */
int logfs_reader_seal(const struct logfs_reader *r, struct logfs_seal *out);

/* ---- reading on where an earlier reader stopped ------------------------- */

/* A reader's place between two records, with what the records before it
 * left behind (the open epoch, the last ORDER and STAMP, the end of the
 * data they cover): a later reader of the same metalog, grown since, goes
 * on from there instead of reading those records again, as a view of live
 * logs that looks again after every synchronization does. */
struct logfs_reader_mark {
    uint64_t pos;       /* 0: no mark (read from the start) */
    uint64_t epoch, order_seq, order_step, stamp, dlog_end;
    int closed;
};

/* @param[out] m  where @p r stands: just past the last record next() gave */
void logfs_reader_get_mark(const struct logfs_reader *r, struct logfs_reader_mark *m);

/*
 * Go on from @p m, a mark taken on a reader of this same metalog (the
 * caller knows it is the same: same path within one session of the file).
 * A mark with pos 0 changes nothing.
 * @return LOGFS_OK; LOGFS_EINVAL when the mark lies before the end of the
 *         header or past the end of the file (the log shrank since), or the
 *         reader has already stopped
 */
int logfs_reader_resume(struct logfs_reader *r, const struct logfs_reader_mark *m,
                        struct logfs_error *err);

/* ---- datalogs, read back at replay time ---------------------------------- */

struct logfs_datalog_reader;

/* @return the malloc'ed path of the datalog beside @p metalog
 *         ("NAME.metalog" gives "NAME.datalog"), or NULL out of memory. */
char *logfs_datalog_path(const char *metalog);

/* Open a datalog for reading.  @return LOGFS_OK or the open error. */
int logfs_datalog_reader_open(const char *path, struct logfs_datalog_reader **out,
                              struct logfs_error *err);

/*
 * Read @p len bytes at datalog offset @p off into @p buf.
 * @return LOGFS_OK, LOGFS_ESHORT if the datalog ends first (data lost with
 *         an unsynced crash), LOGFS_EIO
 */
int logfs_datalog_reader_pread(struct logfs_datalog_reader *dr, uint64_t off, void *buf,
                               size_t len, struct logfs_error *err);

/* Most buffers one logfs_datalog_reader_preadv takes (the usual IOV_MAX). */
#define LOGFS_READV_MAX 1024

struct iovec;

/*
 * Read consecutive datalog bytes from @p off into @p iovcnt buffers in turn
 * (a scatter read: data logged back to back lands straight where it goes).
 * @return as logfs_datalog_reader_pread; LOGFS_EINVAL past LOGFS_READV_MAX
 */
int logfs_datalog_reader_preadv(struct logfs_datalog_reader *dr, uint64_t off,
                                const struct iovec *iov, int iovcnt, struct logfs_error *err);

/* Close it; NULL is fine. */
void logfs_datalog_reader_close(struct logfs_datalog_reader *dr);

/* ---- a metalog for a process that cannot open it ------------------------ */

/*
 * The part of the metalog at @p path that a replay uses, as bytes to send
 * to processes that cannot open the file (a writer's log on another node's
 * own storage): its header and every record up to the end of its last
 * sealed epoch (its last SYNC or CLOSE record), checked against the seal as
 * logfs_reader_open checks it.  A plan built from these bytes
 * (logfs_plan_build_src) is the plan built from the file (without
 * include_unsealed: the bytes end at the last sealed epoch).
 * With @p salvage, damage ends the bytes at the last sealed epoch before
 * it, and *warning (malloc'ed) says what was lost, as the planner's
 * salvage does; without, the reader's error is returned.
 * @return LOGFS_OK with *out (malloc'ed) and *len; a reader error;
 *         LOGFS_EIO, LOGFS_ENOMEM
 */
int logfs_metalog_export(const char *path, int salvage, void **out, size_t *len, char **warning,
                         struct logfs_error *err);

/* Whether opening metalog @p path failed with @p rc because its writer has
 * not made it yet, or not yet with its header (a lazy session's writer,
 * logfs_writer_opts.lazy_files, killed while making its files). */
int logfs_metalog_unmade(const char *path, int rc);

#ifdef __cplusplus
}
#endif

#endif
