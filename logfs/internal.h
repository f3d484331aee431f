/*
 * Helpers shared by the logfs sources and not part of the public API.
 */
#ifndef LOGFS_INTERNAL_H
#define LOGFS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"

#if defined(__GNUC__)
#define LOGFS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LOGFS_PRINTF(a, b)
#endif

/* Fill @p err (if not NULL) and return @p code, so failures read `return logfs_fail(...)`. */
int logfs_fail(struct logfs_error *err, int code, int sys_errno, const char *fmt, ...)
    LOGFS_PRINTF(4, 5);

/* logfs_fail for a failed system call on @p path: the code follows errno. */
int logfs_fail_errno(struct logfs_error *err, int sys_errno, const char *what, const char *path);

struct iovec;

/* pwritev() the @p nv buffers of @p iov at @p off until all are written,
 * retrying short writes and EINTR; @p iov is used up on the way.  @p point
 * names the write's fault point (fault.h), or is NULL.  *@p done is the
 * bytes written, also on failure (the file then has them, and nothing the
 * caller may count on after them).  @return 0 or errno. */
int logfs_pwritev_full(const char *point, int fd, struct iovec *iov, int nv, uint64_t off,
                       size_t *done);

/* logfs_pwritev_full of one buffer. */
int logfs_pwrite_full(const char *point, int fd, const void *buf, size_t len, uint64_t off);

/* fsync(2) the directory @p dir, so that the names made in it survive a
 * crash (fault point "dir-fsync").  @return 0 or errno. */
int logfs_fsync_dir(const char *dir);

/* pread() until done; @return 0, errno, or -1 when the file ends first. */
int logfs_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* open(2) a log or manifest file (O_NOFOLLOW and O_CLOEXEC added) only if
 * it is a regular file of this user: a symbolic link at the name, or a file
 * someone else left there, is refused with LOGFS_EACCES and a message
 * naming @p what and @p path.  Files bbfs creates are its user's. */
int logfs_open_own(const char *path, int flags, mode_t mode, const char *what, int *fd,
                   struct logfs_error *err);

/* An array of @p elem-byte elements with room for @p need of them: if
 * *cap is smaller, the capacity doubles from @p first (or *cap) until it
 * is not.  @return the array, moved or not, with *cap updated; or NULL
 * when out of memory (the array and *cap unchanged). */
void *logfs_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first);

/* @return malloc'ed "dir/name.suffix", or NULL when out of memory. */
char *logfs_path_join(const char *dir, const char *name, const char *suffix);

/* 1 if @p path is a metalog's name: something, then ".metalog". */
int logfs_is_metalog_name(const char *path);

/* @return malloc'ed path of another file of the log of @p metalog:
 *         "NAME.metalog" becomes "NAME.suffix" (other paths get ".suffix"
 *         appended), or NULL when out of memory. */
char *logfs_sibling_path(const char *metalog, const char *suffix);

/* "dir/.base" + @p suffix for file @p path ("dir/base"), in @p out: the
 * names bbfs keeps beside a canonical file (sessions directory, an older
 * release's manifest).  Every open and close makes several, so no printf.
 * @return 0, or -1 if @p out is too small */
int logfs_hidden_sibling(const char *path, const char *suffix, char *out, size_t len);

#endif
