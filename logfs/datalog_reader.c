/* Reading datalogs back (replay, and readers of another writer's data). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "readmap.h"
#include "reader.h"

char *logfs_datalog_path(const char *metalog)
{
    return logfs_sibling_path(metalog, "datalog");
}

struct logfs_datalog_reader {
    int fd;
    char *path;
    struct logfs_readmap map; /* small reads: no system call */
};

int logfs_datalog_reader_open(const char *path, struct logfs_datalog_reader **out,
                              struct logfs_error *err)
{
    struct logfs_datalog_reader *dr = calloc(1, sizeof *dr);
    *out = NULL;
    if (!dr || !(dr->path = strdup(path))) {
        free(dr);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a datalog reader");
    }
    int rc = logfs_open_own(path, O_RDONLY, 0, "cannot open datalog", &dr->fd, err);
    if (rc) {
        free(dr->path);
        free(dr);
        return rc;
    }
    logfs_readmap_init(&dr->map);
    *out = dr;
    return LOGFS_OK;
}

int logfs_datalog_reader_pread(struct logfs_datalog_reader *dr, uint64_t off, void *buf,
                               size_t len, struct logfs_error *err)
{
    if (logfs_readmap_copy(&dr->map, dr->fd, off, buf, len, 0))
        return LOGFS_OK;
    int e = logfs_pread_full(dr->fd, buf, len, off);
    if (e < 0)
        return logfs_fail(err, LOGFS_ESHORT, 0, "datalog %s ends before offset %llu", dr->path,
                          (unsigned long long)(off + len));
    if (e)
        return logfs_fail_errno(err, e, "cannot read datalog", dr->path);
    return LOGFS_OK;
}

int logfs_datalog_reader_preadv(struct logfs_datalog_reader *dr, uint64_t off,
                                const struct iovec *iov, int iovcnt, struct logfs_error *err)
{
    struct iovec part[LOGFS_READV_MAX];
    int n = 0;

    if (iovcnt > LOGFS_READV_MAX)
        return logfs_fail(err, LOGFS_EINVAL, 0, "%d buffers in one datalog read (at most %d)",
                          iovcnt, LOGFS_READV_MAX);
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len > 0)
            part[n++] = iov[i];
    /* A short read leaves the rest of the vector to the next call. */
    struct iovec *v = part;
    while (n > 0) {
        ssize_t got = preadv(dr->fd, v, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return logfs_fail_errno(err, errno, "cannot read datalog", dr->path);
        if (got == 0) {
            uint64_t want = off;
            for (int i = 0; i < n; i++)
                want += v[i].iov_len;
            return logfs_fail(err, LOGFS_ESHORT, 0, "datalog %s ends before offset %llu",
                              dr->path, (unsigned long long)want);
        }
        off += (uint64_t)got;
        while (n > 0 && (size_t)got >= v->iov_len) {
            got -= (ssize_t)v->iov_len;
            v++;
            n--;
        }
        if (n > 0) {
            v->iov_base = (char *)v->iov_base + got;
            v->iov_len -= (size_t)got;
        }
    }
    return LOGFS_OK;
}

void logfs_datalog_reader_close(struct logfs_datalog_reader *dr)
{
    if (!dr)
        return;
    logfs_readmap_drop(&dr->map);
    close(dr->fd);
    free(dr->path);
    free(dr);
}
