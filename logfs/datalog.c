/* Datalog sink: aggregation buffer + pwrite, or a pmem mapping. */
#define _GNU_SOURCE
#include "datalog.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fault.h"
#include "internal.h"

/* The mapping grows by doubling, from the buffer size up to this step. */
#define PMEM_MAX_GROW ((size_t)1 << 30)

/* Appends at least this big skip the buffer: copying them costs more than
 * the system call it would save (measured: a 64 KiB copy-then-write ran at
 * 60% of a plain write() loop, the direct path at par). */
#define DIRECT_MIN ((size_t)64 << 10)

/* The buffer's first size; it doubles up to the datalog's cap. */
#define BUF_START ((size_t)64 << 10)

static int map_at_least(struct logfs_datalog *dl, uint64_t need, struct logfs_error *err)
{
    size_t len = dl->map_len ? dl->map_len : dl->cap;
    size_t mapped;
    int is_pmem;
    void *p;

    while (len < need)
        len += len < PMEM_MAX_GROW ? len : PMEM_MAX_GROW;
    if (dl->max_bytes && len > dl->max_bytes)
        len = dl->max_bytes > need ? dl->max_bytes : need;
    size_t old = dl->map_len;
    if (dl->map)
        pmem_unmap(dl->map, dl->map_len);
    dl->map = NULL;
    dl->map_len = 0;
    /* PMEM_FILE_CREATE on an existing file resizes it to len. */
    p = pmem_map_file(dl->path, len, PMEM_FILE_CREATE, 0600, &mapped, &is_pmem);
    if (!p) {
        /* (A full device.)  Map the old length again, so that what was
         * appended stays readable and the next append fails the same clean
         * way; failing that, reads go through the file descriptor. */
        int e = errno;
        if (old && (p = pmem_map_file(dl->path, old, PMEM_FILE_CREATE, 0600, &mapped, &is_pmem))) {
            dl->map = p;
            dl->map_len = mapped;
        }
        return logfs_fail_errno(err, e, "cannot map datalog", dl->path);
    }
    dl->map = p;
    dl->map_len = mapped;
    dl->is_pmem = is_pmem;
    return LOGFS_OK;
}

/* The probe's answer for the last file system asked about: the probe costs
 * 1-2 ms (mostly unmapping its temporary file), a third of an open, and a
 * process opens its logs on one file system again and again. */
static pthread_mutex_t probed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int known;
    dev_t dev;
    int is_pmem;
} probed;

/* Ask libpmem about the datalog's file system with an unnamed temporary
 * file, so a datalog that ends up on the write path was never fallocated
 * and truncated (on ext4 that made later appends run at half speed). */
static int probe_pmem(const char *path, int fd, int *is_pmem, struct logfs_error *err)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *dir;
    size_t mapped;
    void *p;
    struct stat st;
    int have_dev = fstat(fd, &st) == 0, known = 0;

    pthread_mutex_lock(&probed_lock);
    if (have_dev && probed.known && probed.dev == st.st_dev) {
        *is_pmem = probed.is_pmem;
        known = 1;
    }
    pthread_mutex_unlock(&probed_lock);
    if (known)
        return LOGFS_OK;
    if (!(dir = malloc(n + 1)))
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a path");
    memcpy(dir, slash ? path : ".", n);
    dir[n] = '\0';
    if (n == 0)
        strcpy(dir, "/");
    p = pmem_map_file(dir, 4096, PMEM_FILE_CREATE | PMEM_FILE_TMPFILE, 0600, &mapped, is_pmem);
    if (!p) {
        int rc = logfs_fail_errno(err, errno, "cannot probe for persistent memory in", dir);
        free(dir);
        return rc;
    }
    pmem_unmap(p, mapped);
    free(dir);
    if (have_dev) {
        pthread_mutex_lock(&probed_lock);
        probed.known = 1;
        probed.dev = st.st_dev;
        probed.is_pmem = *is_pmem;
        pthread_mutex_unlock(&probed_lock);
    }
    return LOGFS_OK;
}

int logfs_datalog_init(struct logfs_datalog *dl, const char *path, size_t buffer_size,
                       uint64_t max_bytes, int durable, struct logfs_error *err)
{
    memset(dl, 0, sizeof *dl);
    dl->fd = -1;
    logfs_readmap_init(&dl->rmap);
    dl->max_bytes = max_bytes;
    dl->durable = durable;
    dl->cap = buffer_size;
    dl->path = strdup(path);
    /* (it grows to cap as appends need: a handle that writes 4 KiB and
     * closes took 4 MiB from the heap and gave it back every time) */
    dl->alloc = buffer_size < BUF_START ? buffer_size : BUF_START;
    dl->buf = malloc(dl->alloc);
    if (!dl->path || !dl->buf) {
        logfs_datalog_abandon(dl);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a %zu-byte datalog buffer",
                          buffer_size);
    }
    return LOGFS_OK;
}

int logfs_datalog_create(struct logfs_datalog *dl, int use_pmem, int exclusive,
                         struct logfs_error *err)
{
    int rc, fd;
    if ((rc = logfs_open_own(dl->path, O_RDWR | O_CREAT | O_TRUNC | (exclusive ? O_EXCL : 0),
                             0600, "cannot create datalog", &fd, err)))
        return rc;
    dl->fd = fd;
    int is_pmem = 0;
    if (use_pmem && (rc = probe_pmem(dl->path, dl->fd, &is_pmem, err)))
        goto fail;
    /* Not persistent memory: ordinary writes beat memcpy + msync. */
    if (is_pmem) {
        if ((rc = map_at_least(dl, dl->len > 0 ? dl->len : 1, err)))
            goto fail;
        if (dl->is_pmem) {
            /* (what was appended before the file existed) */
            pmem_memcpy_nodrain(dl->map, dl->buf, dl->fill);
            dl->fill = 0;
            free(dl->buf);
            dl->buf = NULL;
            return LOGFS_OK;
        }
        pmem_unmap(dl->map, dl->map_len); /* libpmem changed its mind */
        dl->map = NULL;
        dl->map_len = 0;
        if (ftruncate(dl->fd, 0) < 0) {
            rc = logfs_fail_errno(err, errno, "cannot truncate datalog", dl->path);
            goto fail;
        }
    }
    return LOGFS_OK;
fail:
    close(dl->fd);
    dl->fd = -1;
    unlink(dl->path);
    return rc;
}

int logfs_datalog_open(struct logfs_datalog *dl, const char *path, int use_pmem,
                       size_t buffer_size, uint64_t max_bytes, int durable, int exclusive,
                       struct logfs_error *err)
{
    int rc = logfs_datalog_init(dl, path, buffer_size, max_bytes, durable, err);
    if (!rc && (rc = logfs_datalog_create(dl, use_pmem, exclusive, err)))
        logfs_datalog_abandon(dl);
    return rc;
}

/* A datalog made without its file gets it from its owner at the first
 * byte that must reach it. */
static int need_file(struct logfs_datalog *dl, struct logfs_error *err)
{
    if (dl->fd >= 0)
        return LOGFS_OK;
    if (!dl->need_file)
        return logfs_fail(err, LOGFS_ESTATE, 0, "datalog %s has no file", dl->path);
    return dl->need_file(dl->need_file_arg, err);
}

/* Write the buffered bytes and then @p n caller bytes at the end of what
 * the file holds, in one pwritev: no copy.  On failure the buffered bytes
 * count as written as far as they got, the caller's not at all: the file's
 * tail past them is garbage the next write goes over. */
static int write_out(struct logfs_datalog *dl, const uint8_t *p, size_t n, struct logfs_error *err)
{
    size_t done;
    /* (first: making the file may write the buffer out, the iov is after) */
    int rc = need_file(dl, err);
    if (rc)
        return rc;
    if (dl->is_pmem) { /* the file made just now is persistent memory: mapped, not written */
        if (n && dl->len + n > dl->map_len && (rc = map_at_least(dl, dl->len + n, err)))
            return rc;
        if (n)
            pmem_memcpy_nodrain(dl->map + dl->len, p, n);
        pmem_drain();
        return LOGFS_OK;
    }
    struct iovec iov[2] = {{dl->buf, dl->fill}, {(void *)p, n}};
    int e = logfs_pwritev_full("datalog-write", dl->fd, iov, 2, dl->flushed, &done);

    if (e) {
        size_t kept = done < dl->fill ? done : dl->fill;
        memmove(dl->buf, dl->buf + kept, dl->fill - kept);
        dl->fill -= kept;
        dl->flushed += kept;
        return logfs_fail_errno(err, e, "cannot append to datalog", dl->path);
    }
    dl->flushed += dl->fill + n;
    dl->fill = 0;
    return LOGFS_OK;
}

int logfs_datalog_flush(struct logfs_datalog *dl, struct logfs_error *err)
{
    if (dl->is_pmem) {
        pmem_drain();
        return LOGFS_OK;
    }
    return dl->fill ? write_out(dl, NULL, 0, err) : LOGFS_OK;
}

int logfs_datalog_append(struct logfs_datalog *dl, const void *data, size_t n,
                         struct logfs_error *err)
{
    const uint8_t *p = data;
    int rc;

    if (dl->max_bytes && (dl->len + n > dl->max_bytes || dl->len + n < dl->len))
        return logfs_fail(err, LOGFS_ENOSPC, ENOSPC,
                          "datalog %s would exceed its limit of %llu bytes", dl->path,
                          (unsigned long long)dl->max_bytes);
    if (dl->is_pmem) {
        if (dl->len + n > dl->map_len && (rc = map_at_least(dl, dl->len + n, err)))
            return rc;
        pmem_memcpy_nodrain(dl->map + dl->len, p, n);
        dl->len += n;
        return LOGFS_OK;
    }
    /* (without its file yet, whatever fits is kept: no file may be needed) */
    int keep = dl->fd < 0 && dl->fill + n <= dl->cap;
    if (!keep && (n >= DIRECT_MIN || n >= dl->cap)) {
        /* Big, or would overflow the buffer anyway: write without copying. */
        if ((rc = write_out(dl, p, n, err)))
            return rc;
        dl->len += n;
        return LOGFS_OK;
    }
    if (dl->fill + n > dl->alloc && dl->alloc < dl->cap) {
        size_t want = dl->alloc;
        while (want < dl->fill + n && want < dl->cap)
            want = want > dl->cap / 2 ? dl->cap : 2 * want;
        uint8_t *b = realloc(dl->buf, want);
        if (!b)
            return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a %zu-byte datalog buffer", want);
        dl->buf = b;
        dl->alloc = want;
    }
    while (n > 0) {
        size_t k = dl->cap - dl->fill;
        if (k > n)
            k = n;
        memcpy(dl->buf + dl->fill, p, k);
        dl->fill += k;
        dl->len += k;
        p += k;
        n -= k;
        /* (a full buffer without its file waits for the next byte) */
        if (dl->fill == dl->cap && (dl->fd >= 0 || n > 0) && (rc = logfs_datalog_flush(dl, err)))
            return rc; /* the bytes stay buffered; a later flush retries */
        if (dl->is_pmem) /* (the file that flush made is persistent memory: the rest is mapped) */
            return n ? logfs_datalog_append(dl, p, n, err) : LOGFS_OK;
    }
    return LOGFS_OK;
}

int logfs_datalog_sync(struct logfs_datalog *dl, struct logfs_error *err)
{
    int rc = logfs_datalog_flush(dl, err);
    if (rc || !dl->durable || dl->is_pmem)
        return rc;
    if ((rc = need_file(dl, err)))
        return rc;
    if (fdatasync(dl->fd) < 0)
        return logfs_fail_errno(err, errno, "cannot fdatasync datalog", dl->path);
    return LOGFS_OK;
}

int logfs_datalog_read(struct logfs_datalog *dl, uint64_t off, void *buf, size_t n,
                       struct logfs_error *err)
{
    uint8_t *out = buf;
    if (off > dl->len || n > dl->len - off)
        return logfs_fail(err, LOGFS_ESHORT, 0, "datalog %s holds %llu bytes, read asks up to %llu",
                          dl->path, (unsigned long long)dl->len, (unsigned long long)(off + n));
    if (dl->is_pmem && dl->map && off + n <= dl->map_len) {
        memcpy(out, dl->map + off, n);
        return LOGFS_OK;
    }
    if (dl->is_pmem) { /* the mapping was lost to a failed remap: the file has it all */
        int e = logfs_pread_full(dl->fd, out, n, off);
        return e ? logfs_fail_errno(err, e < 0 ? EIO : e, "cannot read datalog", dl->path) : LOGFS_OK;
    }
    if (off < dl->flushed) {
        size_t k = dl->flushed - off < n ? (size_t)(dl->flushed - off) : n;
        int e = logfs_readmap_copy(&dl->rmap, dl->fd, off, out, k, dl->flushed) ? 0
            : logfs_pread_full(dl->fd, out, k, off);
        if (e)
            return logfs_fail_errno(err, e < 0 ? EIO : e, "cannot read datalog", dl->path);
        out += k;
        off += k;
        n -= k;
    }
    if (n > 0)
        memcpy(out, dl->buf + (off - dl->flushed), n);
    return LOGFS_OK;
}

int logfs_datalog_close(struct logfs_datalog *dl, struct logfs_error *err)
{
    int rc = logfs_datalog_flush(dl, err);
    if (!rc && dl->is_pmem && ftruncate(dl->fd, (off_t)dl->len) < 0)
        rc = logfs_fail_errno(err, errno, "cannot trim datalog", dl->path);
    if (!rc && dl->durable && fdatasync(dl->fd) < 0)
        rc = logfs_fail_errno(err, errno, "cannot fdatasync datalog", dl->path);
    /* (a network file system may report a failed write-back only here) */
    int fd = dl->fd, e = logfs_fault("datalog-close");
    dl->fd = -1;
    if (fd >= 0 && close(fd) < 0 && !e)
        e = errno;
    if (e && !rc)
        rc = logfs_fail_errno(err, e, "cannot close datalog", dl->path);
    logfs_datalog_abandon(dl);
    return rc;
}

void logfs_datalog_abandon(struct logfs_datalog *dl)
{
    if (dl->map)
        pmem_unmap(dl->map, dl->map_len);
    logfs_readmap_drop(&dl->rmap);
    if (dl->fd >= 0)
        close(dl->fd);
    free(dl->buf);
    free(dl->path);
    memset(dl, 0, sizeof *dl);
    dl->fd = -1;
}
