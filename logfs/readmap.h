/*
 * Small reads of a log file through a read-only mapping of it.
 *
 * An 8-byte read of synced log data costs a pread: a system call, as
 * stock ROMIO's read of the canonical file does, plus the driver's lookup
 * of where the bytes are.  Copied from a mapping of the file, it costs no
 * system call, and such reads run faster than stock's.  Only for small
 * reads (a big one is as fast through pread, and faults no pages in one at
 * a time), only on local file systems (a log directory is node-local; a
 * network file system's mapping may lag behind what its pread returns),
 * and only inside the size the file had when last looked at: the mapping
 * never touches a page past the file's end, which would raise SIGBUS
 * rather than report a short read.  Log files only grow while mapped (a
 * datalog is append-only until it is removed, and a removed file stays
 * mapped), so a byte inside that size stays readable.
 */
#ifndef LOGFS_READMAP_H
#define LOGFS_READMAP_H

#include <stddef.h>
#include <stdint.h>

/* Reads of at most this many bytes go through the mapping. */
#define LOGFS_READMAP_MAX ((size_t)64 << 10)
/* ... from this small read of a file on: a reader that reads once (a
 * replay's own log, a read after each release) preads, and does not pay
 * for a mapping (statfs, fstat, mmap, munmap) it would not use again. */
#define LOGFS_READMAP_AFTER 4

struct logfs_readmap {
    uint8_t *base;    /* the mapping, or NULL */
    size_t window;    /* its length: may pass the file's end, never touched there */
    uint64_t known;   /* bytes the file held when last looked at */
    int usable;       /* -1: not asked yet; 0: pread only; 1: mapped reads */
    unsigned small_reads; /* before the mapping (LOGFS_READMAP_AFTER) */
};

void logfs_readmap_init(struct logfs_readmap *m);

/*
 * Copy [off, off + n) of the file open as @p fd into @p buf from the
 * mapping.  @p known: bytes the caller knows the file holds (the writer's
 * own flushed length), or 0 to look (fstat) when the range passes what
 * was seen before.  @return 1 if copied; 0 if the caller must pread (a big
 * read, a file system without mapped reads, a range past the file's end:
 * the pread then reports it).
 */
int logfs_readmap_copy(struct logfs_readmap *m, int fd, uint64_t off, void *buf, size_t n,
                       uint64_t known);

/* Unmap (before the file's descriptor is closed or another file's taken). */
void logfs_readmap_drop(struct logfs_readmap *m);

#endif
