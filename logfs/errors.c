/* The tables behind errors.h, generated from the same X-macro list. */
#include "errors.h"
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {
#define X(name, err, desc) #name,
    LOGFS_ERROR_LIST(X)
#undef X
};

static const char *const descs[] = {
#define X(name, err, desc) desc,
    LOGFS_ERROR_LIST(X)
#undef X
};

static const int errnos[] = {
#define X(name, err, desc) err,
    LOGFS_ERROR_LIST(X)
#undef X
};

static int valid(int code)
{
    return code >= 0 && code < LOGFS_NUM_STATUS;
}

const char *logfs_status_name(int code)
{
    return valid(code) ? names[code] : "LOGFS_?";
}

const char *logfs_strerror(int code)
{
    return valid(code) ? descs[code] : "unknown logfs status";
}

int logfs_status_errno(int code)
{
    return valid(code) ? errnos[code] : EIO;
}

int logfs_status_from_errno(int e)
{
    switch (e) {
    case 0: return LOGFS_OK;
    case ENOENT: return LOGFS_ENOENT;
    case EACCES: case EPERM: return LOGFS_EACCES;
    case EEXIST: return LOGFS_EEXIST;
    case ENOTDIR: return LOGFS_ENOTDIR;
    case EROFS: return LOGFS_EROFS;
    case ENOSPC: case EDQUOT: case EFBIG: return LOGFS_ENOSPC;
    case ENOMEM: return LOGFS_ENOMEM;
    case EINVAL: return LOGFS_EINVAL;
    case EOVERFLOW: return LOGFS_ERANGE;
    default: return LOGFS_EIO;
    }
}

int logfs_fail(struct logfs_error *err, int code, int sys_errno, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        int n;
        err->code = code;
        err->sys_errno = sys_errno;
        va_start(ap, fmt);
        n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* Callers match on the code; the message just has to say why. */
        if (n >= 0 && (size_t)n < sizeof err->msg - 8 && sys_errno)
            snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", strerror(sys_errno));
    }
    return code;
}

int logfs_fail_errno(struct logfs_error *err, int sys_errno, const char *what, const char *path)
{
    return logfs_fail(err, logfs_status_from_errno(sys_errno), sys_errno, "%s %s", what, path);
}
