/*
 * logfs error codes.  Every logfs call returns one of these; calls that can
 * fail for a reason worth explaining also fill a struct logfs_error with a
 * message naming the file, the offset or the limit involved.
 *
 * The list is an X-macro so that the enum, the names, the descriptions and
 * the errno each code corresponds to can never drift apart.
 */
#ifndef LOGFS_ERRORS_H
#define LOGFS_ERRORS_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, errno it maps to (0 = none), description) */
#define LOGFS_ERROR_LIST(X)                                                   \
    X(LOGFS_OK,        0,        "success")                                   \
    X(LOGFS_END,       0,        "end of log (not an error)")                 \
    X(LOGFS_EINVAL,    EINVAL,   "invalid argument")                          \
    X(LOGFS_ENOMEM,    ENOMEM,   "out of memory")                             \
    X(LOGFS_ENOENT,    ENOENT,   "no such file or directory")                 \
    X(LOGFS_EACCES,    EACCES,   "permission denied")                         \
    X(LOGFS_EEXIST,    EEXIST,   "log file already exists")                   \
    X(LOGFS_ENOTDIR,   ENOTDIR,  "log directory is not a directory")          \
    X(LOGFS_EROFS,     EROFS,    "log directory is on a read-only file system") \
    X(LOGFS_ENOSPC,    ENOSPC,   "no space left for the log")                 \
    X(LOGFS_EIO,       EIO,      "I/O error on a log file")                   \
    X(LOGFS_ERANGE,    EOVERFLOW, "offset or length out of range")            \
    X(LOGFS_ESTATE,    EINVAL,   "call not allowed in the current state")     \
    X(LOGFS_EFORMAT,   EILSEQ,   "not a bbfs metalog (bad magic or no header record)") \
    X(LOGFS_EVERSION,  EILSEQ,   "unsupported metalog format version")        \
    X(LOGFS_ETYPE,     EILSEQ,   "unknown metalog record type")               \
    X(LOGFS_ECORRUPT,  EILSEQ,   "metalog corrupted (checksum mismatch or malformed record)") \
    X(LOGFS_ESHORT,    EIO,      "datalog shorter than its metalog says")     \
    X(LOGFS_EMISMATCH, EINVAL,   "metalogs do not belong to the same file and writer set") \
    X(LOGFS_ELOST,     EIO,      "a metalog seals fewer epochs than its writer closed it with") \
    X(LOGFS_EBUSY,     EBUSY,    "the logs belong to a handle that is still open")

enum logfs_status {
#define LOGFS_X_ENUM(name, err, desc) name,
    LOGFS_ERROR_LIST(LOGFS_X_ENUM)
#undef LOGFS_X_ENUM
    LOGFS_NUM_STATUS
};

/* Longest message a struct logfs_error holds, including the NUL. */
#define LOGFS_ERRMSG_MAX 320

/*
 * Details of a failure.  Callers pass a pointer to one (or NULL when they
 * only want the return code); logfs fills it only when it returns an error.
 */
struct logfs_error {
    int code;                    /* the enum logfs_status value returned */
    int sys_errno;               /* errno of the failing system call, or 0 */
    char msg[LOGFS_ERRMSG_MAX];  /* human-readable, names the file/offset */
};

/* @return "LOGFS_ENOSPC" etc.; "LOGFS_?" for an unknown code. */
const char *logfs_status_name(int code);

/* @return the one-line description of @p code. */
const char *logfs_strerror(int code);

/* @return the errno that corresponds to @p code (0 for LOGFS_OK/LOGFS_END). */
int logfs_status_errno(int code);

/* @return the logfs code for a system errno (unknown ones become LOGFS_EIO). */
int logfs_status_from_errno(int sys_errno);

#ifdef __cplusplus
}
#endif

#endif
