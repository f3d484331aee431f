/* Small POSIX wrappers: the retry loops every log write and read needs. */
#define _GNU_SOURCE
#include "internal.h"

#include <limits.h>
#include <sys/uio.h>

#include "fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int logfs_pwritev_full(const char *point, int fd, struct iovec *iov, int nv, uint64_t off,
                       size_t *done)
{
    size_t total = 0;
    for (int i = 0; i < nv; i++)
        total += iov[i].iov_len;
    size_t first = total;
    *done = 0;
    int e = point ? logfs_fault_write(point, total, &first) : 0;
    if (e)
        return e;
    while (nv > 0 && iov[0].iov_len == 0)
        iov++, nv--;
    while (nv > 0) {
        ssize_t n;
        if (*done == 0 && first < total) {
            /* The fault: the first call moves only @p first bytes. */
            struct iovec one = {iov[0].iov_base, first < iov[0].iov_len ? first : iov[0].iov_len};
            n = pwritev(fd, &one, 1, (off_t)off);
        } else {
            n = pwritev(fd, iov, nv < IOV_MAX ? nv : IOV_MAX, (off_t)off);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return ENOSPC; /* write() making no progress means the device is full */
        *done += (size_t)n;
        off += (uint64_t)n;
        while (nv > 0 && (size_t)n >= iov[0].iov_len) {
            n -= (ssize_t)iov[0].iov_len;
            iov++, nv--;
        }
        if (nv > 0) {
            iov[0].iov_base = (char *)iov[0].iov_base + n;
            iov[0].iov_len -= (size_t)n;
        }
    }
    return 0;
}

int logfs_pwrite_full(const char *point, int fd, const void *buf, size_t len, uint64_t off)
{
    struct iovec v = {(void *)buf, len};
    size_t done;
    return logfs_pwritev_full(point, fd, &v, 1, off, &done);
}

int logfs_fsync_dir(const char *dir)
{
    int e = logfs_fault("dir-fsync");
    if (e)
        return e;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    e = fsync(fd) < 0 ? errno : 0;
    close(fd);
    return e;
}

int logfs_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return -1;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

void *logfs_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t c = *cap ? *cap : first;
    if (need <= *cap)
        return array;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            return NULL;
        c *= 2;
    }
    void *a = realloc(array, c * elem);
    if (a)
        *cap = c;
    return a;
}

char *logfs_path_join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 3;
    char *s = malloc(n);
    if (s) {
        strcpy(s, dir);
        strcat(s, "/");
        strcat(s, name);
        if (*suffix) {
            strcat(s, ".");
            strcat(s, suffix);
        }
    }
    return s;
}

int logfs_is_metalog_name(const char *path)
{
    size_t n = strlen(path), k = strlen(".metalog");
    return n > k && !strcmp(path + n - k, ".metalog");
}

char *logfs_sibling_path(const char *metalog, const char *suffix)
{
    size_t n = strlen(metalog), k = strlen(".metalog");
    char *s = malloc(n + strlen(suffix) + 2);
    if (!s)
        return NULL;
    if (n >= k && !strcmp(metalog + n - k, ".metalog"))
        n -= k;
    memcpy(s, metalog, n);
    s[n] = '.';
    strcpy(s + n + 1, suffix);
    return s;
}

int logfs_open_own(const char *path, int flags, mode_t mode, const char *what, int *fd,
                   struct logfs_error *err)
{
    struct stat st;
    /* Truncate only once the file is known to be ours.  No access time:
     * nothing reads a log's, and the check whether to update it was a
     * tenth of an 8-byte read's system call through the logs (the kernel
     * refuses the flag for a file of another user: tried again without,
     * so that the owner check below says what is wrong). */
    int f = open(path, (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC | O_NOATIME, mode);
    if (f < 0 && errno == EPERM)
        f = open(path, (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC, mode);

    *fd = -1;
    if (f < 0 && errno == ELOOP)
        return logfs_fail(err, LOGFS_EACCES, 0, "%s %s: a symbolic link; bbfs never follows one "
                          "there (it could point anywhere): remove it", what, path);
    if (f < 0)
        return logfs_fail_errno(err, errno, what, path);
    if (fstat(f, &st) < 0) {
        int e = errno;
        close(f);
        return logfs_fail_errno(err, e, what, path);
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(f);
        if (!S_ISREG(st.st_mode))
            return logfs_fail(err, LOGFS_EACCES, 0, "%s %s: not a regular file", what, path);
        return logfs_fail(err, LOGFS_EACCES, 0, "%s %s: it belongs to another user (uid %u), "
                          "not to this one (uid %u): not trusted; remove it if it is not yours",
                          what, path, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    /* Only a file that has bytes: on ext4, truncating to zero (even an
     * empty file) makes the close start writeback of everything written
     * since (its auto_da_alloc heuristic), 35 ms for a 16 MiB datalog. */
    if ((flags & O_TRUNC) && st.st_size > 0 && ftruncate(f, 0) < 0) {
        int e = errno;
        close(f);
        return logfs_fail_errno(err, e, what, path);
    }
    *fd = f;
    return LOGFS_OK;
}

int logfs_hidden_sibling(const char *path, const char *suffix, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    size_t baselen = strlen(path + dirlen), sufflen = strlen(suffix);
    if (dirlen + 1 + baselen + sufflen + 1 > len)
        return -1;
    memcpy(out, path, dirlen);
    out[dirlen] = '.';
    memcpy(out + dirlen + 1, path + dirlen, baselen);
    memcpy(out + dirlen + 1 + baselen, suffix, sufflen + 1);
    return 0;
}
