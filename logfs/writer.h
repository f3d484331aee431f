/*
 * The log writer: one per (file, writer process).  It owns a datalog (raw
 * bytes, append only) and a metalog (checksummed records, see format.h), and
 * a local index that answers read-your-writes lookups.
 *
 * A write call is described incrementally, so the caller can walk a
 * flattened MPI datatype without building a list:
 *
 *     logfs_writer_begin_write(w, &e);
 *     for each (file offset, length, bytes) in order:
 *         logfs_writer_add_extent(w, off, len, bytes, &e);
 *     logfs_writer_end_write(w, &e);
 *
 * Contiguous pieces are merged, and runs of equal length at a constant
 * stride become one (offset, blocklen, stride, count) group, so a vector of
 * a million blocks costs a few bytes of metalog.  A caller that already
 * knows the pattern passes it whole with logfs_writer_add_run(): one copy
 * of the data and O(1) bookkeeping instead of a call per block.
 *
 * Epochs: the writer starts in epoch 0; logfs_writer_sync() closes the
 * current epoch and opens the next.
 *
 * Files: dir/name.datalog, dir/name.metalog and dir/name.sealed (the seal,
 * see seal.h: how far the metalog is known complete, rewritten at every sync
 * and at close).  logfs_log_remove() removes all of them.  Nothing here is thread-safe: one writer
 * is used by one thread at a time.
 */
#ifndef LOGFS_WRITER_H
#define LOGFS_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

struct logfs_writer;

#define LOGFS_DEFAULT_BUFFER_SIZE ((size_t)4 << 20)

enum logfs_pmem_mode {
    LOGFS_PMEM_AUTO = 0, /* map the datalog; use the pmem path if pmem_is_pmem says so */
    LOGFS_PMEM_NEVER = 1 /* always ordinary writes */
};

struct logfs_writer_opts {
    const char *dir;        /* log directory; must exist unless create_dir */
    const char *name;       /* file stem: logs are dir/name.{datalog,metalog,sealed} */
    uint64_t file_id;       /* stored in the header; the planner checks it matches */
    uint32_t rank;          /* this writer, 0 <= rank < nwriters */
    uint32_t nwriters;      /* writers of this file (>= 1) */
    size_t buffer_size;     /* aggregation buffer; 0 = LOGFS_DEFAULT_BUFFER_SIZE */
    int durable;            /* nonzero: fdatasync the logs and the seal at sync points and close */
    int pmem;               /* enum logfs_pmem_mode */
    int create_dir;         /* nonzero: create dir (one level, mode 0700) if missing */
    int dir_checked;        /* nonzero: the caller has just found dir a writable
                               directory; no second look (ignored with create_dir) */
    int exclusive;          /* nonzero: fail with LOGFS_EEXIST if the logs exist */
    int track_index;        /* nonzero: keep the read-your-writes index (default 1) */
    uint64_t max_datalog_bytes; /* 0 = unlimited; beyond it: LOGFS_ENOSPC */
    uint64_t max_metalog_bytes; /* 0 = unlimited; beyond it: LOGFS_ENOSPC */
    uint64_t process;       /* identifies the writing process in STAMP records
                               (same for all its logs; 0 = unknown) */
    int carry_calls;        /* nonzero: a write call's last group stays open, so that
                               the next call's blocks can continue its stride (10^6
                               separate 8-byte calls make one strided group); its
                               record is queued at the next sync, flush, set_size,
                               order or stamp change, or a call that breaks it */
    int lazy_files;         /* nonzero: no file is made until a byte must reach one (a
                               flush or sync, the close, a full buffer): a log that is
                               never flushed lives in memory only (logfs_writer_end_in_memory) */
    /* (lazy_files) called once the files exist, before anything is written
     * to them; a failure fails that flush, and the next one calls it again */
    int (*on_create)(void *arg, struct logfs_error *err);
    void *on_create_arg;
};

/* Fill @p o with the defaults (everything 0 / NULL except track_index = 1, nwriters = 1). */
void logfs_writer_opts_init(struct logfs_writer_opts *o);

/*
 * Create the logs and the seal (files 0600; an old seal of the same name is
 * removed first, or, with exclusive, emptied once the metalog is created)
 * and write the header record.
 * @param o         options; dir and name are required
 * @param[out] out  the writer, or NULL on failure
 * @param[out] err  details on failure (may be NULL)
 * @return LOGFS_OK, LOGFS_ENOENT / LOGFS_ENOTDIR (no log directory),
 *         LOGFS_EACCES / LOGFS_EROFS (not writable), LOGFS_EEXIST,
 *         LOGFS_ENOSPC, LOGFS_EINVAL, LOGFS_ENOMEM, LOGFS_EIO
 */
int logfs_writer_open(const struct logfs_writer_opts *o, struct logfs_writer **out,
                      struct logfs_error *err);

/* @return nonzero once the log's files exist (always, unless lazy_files). */
int logfs_writer_has_files(const struct logfs_writer *w);

/*
 * Make the files of a lazy_files writer now (and call on_create), as the
 * first flush would; nothing if they exist.
 * @return as logfs_writer_open, or what on_create returned
 */
int logfs_writer_create_files(struct logfs_writer *w, struct logfs_error *err);

/*
 * End a log whose files were never made, as logfs_writer_close would (the
 * CLOSE record), in memory: @p metalog gets the bytes its metalog file would
 * hold, valid until logfs_writer_abandon, and logfs_writer_read_data still
 * reads its data.  Nothing can be logged after, a flush does nothing, and logfs_writer_close still
 * makes the files and writes the log to them, closed (when what was to
 * replay it from memory failed).
 * @return LOGFS_OK, LOGFS_ESTATE (its files exist: close it), LOGFS_ENOMEM
 */
int logfs_writer_end_in_memory(struct logfs_writer *w, const void **metalog, size_t *len,
                               struct logfs_error *err);

/* Start describing one write call.  @return LOGFS_OK or LOGFS_ESTATE (already in one). */
int logfs_writer_begin_write(struct logfs_writer *w, struct logfs_error *err);

/*
 * Append one extent of the current call: @p len bytes at @p data go to file
 * offset @p off.  Extents may come in any order; later ones win where they
 * overlap.  On failure the call is over: extents already accepted may be
 * logged (as MPI allows for a failed write), the rest are not.
 * @return LOGFS_OK, LOGFS_ESTATE (no call open), LOGFS_ERANGE
 *         (off + len > LOGFS_MAX_FILE_END), LOGFS_ENOSPC, LOGFS_EIO, LOGFS_ENOMEM
 */
int logfs_writer_add_extent(struct logfs_writer *w, uint64_t off, uint64_t len,
                            const void *data, struct logfs_error *err);

/*
 * Append @p count blocks of @p blocklen bytes of the current call: block i
 * goes to file offset off + i * stride (stride may be any value, as in a
 * struct logfs_group), and the data is contiguous: count * blocklen bytes
 * at @p data, block after block.  The result (datalog, metalog records,
 * lookups) is exactly that of add_extent for each block in order, but the
 * bytes go to the datalog in one append (written directly, without the
 * buffer, when large) and the blocks are recorded as one group, or merged
 * into the group being built when they continue it.  blocklen == 0 or
 * count == 0 adds nothing.
 * @return LOGFS_OK, LOGFS_ESTATE (no call open), LOGFS_ERANGE (a block
 *         outside [0, LOGFS_MAX_FILE_END), or count * blocklen > SIZE_MAX),
 *         LOGFS_ENOSPC, LOGFS_EIO, LOGFS_ENOMEM; on failure the call is
 *         over, as for add_extent
 */
int logfs_writer_add_run(struct logfs_writer *w, uint64_t off, uint64_t blocklen, int64_t stride,
                         uint64_t count, const void *data, struct logfs_error *err);

/* Finish the call: its WRITE record(s) are queued behind its data. */
int logfs_writer_end_write(struct logfs_writer *w, struct logfs_error *err);

/* One contiguous write: begin + add_extent + end. */
int logfs_writer_write(struct logfs_writer *w, uint64_t off, const void *data, uint64_t len,
                       struct logfs_error *err);

/*
 * Close the current epoch: data, then metadata, then the seal (the metalog
 * length just past the SYNC record) reach the files (and the disk, if
 * durable) before this returns; then the next epoch begins.
 * @return LOGFS_OK, LOGFS_ESTATE (inside a write call), LOGFS_ENOSPC, LOGFS_EIO
 */
int logfs_writer_sync(struct logfs_writer *w, struct logfs_error *err);

/* Log MPI_File_set_size(@p size), ordered after the writes before it. */
int logfs_writer_set_size(struct logfs_writer *w, uint64_t size, struct logfs_error *err);

/*
 * The handle has entered its @p seq-th collective call (counting from 1):
 * the writes that follow are ordered after every process's writes made
 * before that call, within one epoch (the ORDER record, format.h).  Costs
 * nothing until the next write or set_size.
 * @return LOGFS_OK, LOGFS_ESTATE (inside a write call), LOGFS_EINVAL (@p seq
 *         smaller than before)
 */
int logfs_writer_order(struct logfs_writer *w, uint64_t seq, struct logfs_error *err);

/*
 * The writes that follow were made after time @p clock (nanoseconds) on a
 * clock every handle of the file shares (the STAMP record, format.h): the
 * start of an epoch, or a switch of this process from another handle of
 * the file to this one.  Costs nothing until the next write or set_size.
 * @return LOGFS_OK, LOGFS_ESTATE (inside a write call), LOGFS_EINVAL
 *         (@p clock smaller than before)
 */
int logfs_writer_stamp(struct logfs_writer *w, uint64_t clock, struct logfs_error *err);

/* Where a stamp whose clock is known only later gets it (below). */
typedef uint64_t (*logfs_clock_fn)(void *arg);

/*
 * As logfs_writer_stamp, with a clock learnt later: the writes that follow
 * get a STAMP record whose clock logfs_writer_stamp_fill gives before the
 * record reaches the metalog file.  (A reader across nodes learns the clock
 * from the server's answer to the attach that makes those writes visible:
 * one round trip instead of a clock's and the attach's.)  Whatever writes
 * the records out first (a full queue, a sync, a flush, the close) asks
 * @p clock_fn then; so does a logfs_writer_stamp.  One at a time: a second
 * call while one is pending changes nothing.  Costs nothing until the
 * next write or set_size.
 * @return LOGFS_OK, LOGFS_ESTATE (inside a write call)
 */
int logfs_writer_stamp_later(struct logfs_writer *w, logfs_clock_fn clock_fn, void *arg,
                             struct logfs_error *err);

/* @return nonzero while a stamp_later waits for its clock */
int logfs_writer_stamp_pending(const struct logfs_writer *w);

/*
 * Give the pending stamp (if any) @p clock, or the last clock given if that
 * is later: the writes since logfs_writer_stamp_later were made after it.
 * @return LOGFS_OK, LOGFS_ESTATE (inside a write call)
 */
int logfs_writer_stamp_fill(struct logfs_writer *w, uint64_t clock, struct logfs_error *err);

/* Make all queued records reach the metalog file (no epoch change, no fdatasync). */
int logfs_writer_flush(struct logfs_writer *w, struct logfs_error *err);

/* Make the data written so far reach the datalog file, not yet the records
 * that describe it (a pending stamp's records wait for their clock). */
int logfs_writer_flush_data(struct logfs_writer *w, struct logfs_error *err);

/*
 * Write the CLOSE record (which closes the open epoch), flush, seal, and free
 * the writer.  The writer is freed even when an error is returned.
 */
int logfs_writer_close(struct logfs_writer *w, struct logfs_error *err);

/* Free the writer without writing anything more: what a crash leaves. */
void logfs_writer_abandon(struct logfs_writer *w);

/* @return the current (open) epoch. */
uint64_t logfs_writer_epoch(const struct logfs_writer *w);

/* What the writer's records touch, every write call since the open (also
 * calls that failed) and any set_size (summary.h). */
const struct logfs_summary *logfs_writer_summary(const struct logfs_writer *w);

/* @return bytes appended to the datalog so far. */
uint64_t logfs_writer_datalog_length(const struct logfs_writer *w);

/* @return nonzero if the datalog uses the pmem path. */
int logfs_writer_is_pmem(const struct logfs_writer *w);

/* @return the metalog / datalog / seal path (owned by the writer). */
const char *logfs_writer_metalog_path(const struct logfs_writer *w);
const char *logfs_writer_datalog_path(const struct logfs_writer *w);
const char *logfs_writer_seal_path(const struct logfs_writer *w);

/* The metalog path a writer with options dir and name has (malloc'ed; NULL
 * when out of memory): for a caller that names another process's log. */
char *logfs_writer_metalog_path_of(const char *dir, const char *name);

/* @return the metalog length recorded by the last seal (0 before the first sync). */
uint64_t logfs_writer_sealed_length(const struct logfs_writer *w);

/* @return the bytes in the metalog file: its size, as this writer made it
 * (0: no file yet, a lazy writer's), without asking the file system. */
uint64_t logfs_writer_metalog_length(const struct logfs_writer *w);

/*
 * Remove every file of one writer's log: the seal, the metalog at
 * @p metalog_path and the datalog beside it (NAME.metalog -> NAME.sealed,
 * NAME.datalog), in that order.  Missing files are fine.  Not for a log
 * whose writer is still open.
 * @return LOGFS_OK, or the first failure (the other files are still tried):
 *         LOGFS_EACCES, LOGFS_EROFS, LOGFS_EIO, LOGFS_ENOMEM
 */
int logfs_log_remove(const char *metalog_path, struct logfs_error *err);

/* ---- read-your-writes ---------------------------------------------------- */

enum logfs_piece_kind {
    LOGFS_PIECE_HOLE = 0, /* not in this writer's logs: read it elsewhere */
    LOGFS_PIECE_LOG = 1,  /* in this writer's datalog at dlog_off */
    LOGFS_PIECE_ZERO = 2  /* cut by this writer's set_size: reads as zeros */
};

struct logfs_piece {
    uint64_t offset;   /* file offset */
    uint64_t length;   /* bytes */
    int kind;          /* enum logfs_piece_kind */
    uint64_t epoch;    /* epoch that wrote/cut it (LOG and ZERO) */
    uint64_t dlog_off; /* datalog offset of the first byte (LOG) */
};

/*
 * Called for each piece of a lookup, in file order.
 * @return 0 to continue, nonzero to stop (the lookup returns that value)
 */
typedef int (*logfs_piece_fn)(void *arg, const struct logfs_piece *p);

/*
 * Which bytes of [off, off + len) this writer's logs hold.  Later writes
 * win.  Bytes last written in an epoch before @p min_epoch are reported as
 * holes: the caller knows newer data may exist elsewhere (e.g. another
 * writer's, after a sync).  Adjacent holes are reported as one.
 *
 * Every write is seen, synced or not, including the extents already added
 * in a call still open.  The index is built lazily: writes only queue their
 * groups (O(1) per group), and the first lookup after them inserts the
 * queued groups block by block, so a writer that never looks up never pays
 * for the index.
 * @return LOGFS_OK, LOGFS_ESTATE (index not tracked), LOGFS_ENOMEM (the
 *         index could not be brought up to date; a later lookup retries),
 *         or what @p fn returned
 */
int logfs_writer_lookup(const struct logfs_writer *w, uint64_t off, uint64_t len,
                        uint64_t min_epoch, logfs_piece_fn fn, void *arg);

/* Copy @p len bytes at datalog offset @p dlog_off (buffered or not) into @p buf. */
int logfs_writer_read_data(struct logfs_writer *w, uint64_t dlog_off, void *buf, size_t len,
                           struct logfs_error *err);

#ifdef __cplusplus
}
#endif

#endif
