/*
 * The datalog sink of one writer (internal).  Bytes are appended, never
 * rewritten.  Two back ends, chosen once at open:
 *  - write path: bytes gather in an aggregation buffer that goes to the file
 *    in large sequential pwrite()s;
 *  - pmem path: the file is mapped with pmem_map_file (grown in chunks) and
 *    bytes are copied in with pmem_memcpy_nodrain, made persistent by one
 *    pmem_drain before any metalog record points at them.
 */
#ifndef LOGFS_DATALOG_H
#define LOGFS_DATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "readmap.h"

struct logfs_datalog {
    int fd;
    char *path;
    uint64_t len;       /* logical length: every byte appended so far */
    uint64_t flushed;   /* bytes already in the file (write path) */
    uint64_t max_bytes; /* 0 = no limit; beyond it appends fail with ENOSPC */
    int durable;        /* fdatasync at sync points */
    /* write path */
    uint8_t *buf;
    size_t cap, fill;
    size_t alloc;       /* bytes of buf allocated so far (grows to cap) */
    /* pmem path */
    int is_pmem;
    uint8_t *map;
    size_t map_len;
    /* small reads of flushed bytes (not persistent memory's) */
    struct logfs_readmap rmap;
    /* made without its file (logfs_datalog_init): asked for it when the
     * first byte must reach it */
    int (*need_file)(void *arg, struct logfs_error *err);
    void *need_file_arg;
};

/*
 * A datalog in memory only: appends gather in the buffer (whatever fits,
 * big ones too) and the file is made, through need_file, when a byte must
 * reach it (a full buffer, a flush, a sync).  Reads work either way.
 */
int logfs_datalog_init(struct logfs_datalog *dl, const char *path, size_t buffer_size,
                       uint64_t max_bytes, int durable, struct logfs_error *err);

/*
 * Create (truncate) the file of an initialized datalog, mode 0600; what was
 * appended is still buffered (or, on the pmem path, copied into the map).
 * On failure the datalog is as before and no file is left.
 * @param use_pmem   nonzero: map it and use the pmem path if pmem_is_pmem agrees
 * @param exclusive  nonzero: fail with LOGFS_EEXIST if the file exists
 */
int logfs_datalog_create(struct logfs_datalog *dl, int use_pmem, int exclusive,
                         struct logfs_error *err);

/*
 * Init + create: the datalog at @p path, with its file.
 * @param use_pmem     nonzero: map it and use the pmem path if pmem_is_pmem agrees
 * @param buffer_size  aggregation buffer bytes for the write path
 * @param exclusive    nonzero: fail with LOGFS_EEXIST if the file exists
 */
int logfs_datalog_open(struct logfs_datalog *dl, const char *path, int use_pmem,
                       size_t buffer_size, uint64_t max_bytes, int durable, int exclusive,
                       struct logfs_error *err);

/* Append @p n bytes; fails with LOGFS_ENOSPC (nothing appended) past max_bytes. */
int logfs_datalog_append(struct logfs_datalog *dl, const void *data, size_t n,
                         struct logfs_error *err);

/* Make every appended byte reach the file (write path) or persistence (pmem). */
int logfs_datalog_flush(struct logfs_datalog *dl, struct logfs_error *err);

/* Flush, then fdatasync if durable (pmem needs nothing more). */
int logfs_datalog_sync(struct logfs_datalog *dl, struct logfs_error *err);

/* Copy @p n bytes at datalog offset @p off, wherever they are now. */
int logfs_datalog_read(struct logfs_datalog *dl, uint64_t off, void *buf, size_t n,
                       struct logfs_error *err);

/* Flush, trim the file to its logical length, release.  Always releases. */
int logfs_datalog_close(struct logfs_datalog *dl, struct logfs_error *err);

/* Release without flushing (a crash, as far as the files are concerned). */
void logfs_datalog_abandon(struct logfs_datalog *dl);

#endif
