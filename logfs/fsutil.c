/* Small POSIX wrappers: the retry loops every log write and read needs. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int logfs_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return ENOSPC; /* write() making no progress means the device is full */
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
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
