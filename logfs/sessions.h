/*
 * A file's logging sessions on disk.  Every open handle that logs writes is
 * a session with a file id of its own; its manifest (manifest.h) lives in a
 * directory beside the canonical file:
 *
 *     dir/.base.bbfs/<file id, 16 hex digits>.manifest
 *
 * Several handles may log the same file at once, in one job or several
 * (PnetCDF opens a file twice), so each session owns its manifest, and
 * nobody else may replay or remove its logs while it lives.  Its owner (one
 * process of the handle) keeps the manifest open with an open-file-
 * description lock on byte 0 for the session's life: the lock says "live",
 * and the kernel drops it when the owner closes or dies.  A manifest without
 * the lock is pending: left by a deferred close or a crashed job, for the
 * next open or bbfs-replay, which first takes the lock itself (claims the
 * session), so that two jobs never replay one session at once.  Byte 1 is
 * locked while the text is rewritten, so a reader never parses half of it.
 *
 * A new manifest is written under a temporary name and renamed into place
 * after it is locked, so a listed manifest is never empty and unlocked.
 *
 * Releases before this one kept one manifest, dir/.base.bbfs-manifest
 * (logfs_manifest_path); it is listed as a pending session too.
 *
 * Plain POSIX calls: ROMIO's drivers have neither directories nor locks,
 * and the file systems bbfs stacks on (ufs, nfs, lustre, gpfs) are POSIX
 * mounts.  Where the file system refuses such locks, sessions cannot be
 * told apart and every listed session counts as pending.
 */
#ifndef LOGFS_SESSIONS_H
#define LOGFS_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ROMIO's rule for a driver prefix in a file name ("ufs:/a"): a colon
 * after two or more characters (one letter before it is a drive name).
 * @return the length of the prefix with its colon, or 0 for none.  The
 * driver and bbfs-replay both read names by it. */
size_t logfs_name_prefix_len(const char *name);

/* The name a file's sessions are kept beside: @p path with the symbolic
 * links of its last component followed (realpath's answer where the file
 * exists, else the links followed by hand: a link to a file an open is
 * about to create).  Links among the directories need nothing: a name
 * beside the file resolves through them to the same directory.  MPI lets
 * the processes of one open name the file by different strings, and a
 * later job may open it through a link; each name must lead to the same
 * sessions.  (A hard link cannot be told from the file: not followed.)
 * @return 1 if @p path was a link, 0 if not (@p out holds @p path), -1 if
 * @p out is too small. */
int logfs_canonical_name(const char *path, char *out, size_t len);

/* "dir/.base.bbfs" for canonical file @p path.  @return 0, or -1 if @p out is too small */
int logfs_sessions_dir(const char *path, char *out, size_t len);

/* "dir/.base.bbfs/<id>.manifest".  @return 0, or -1 if @p out is too small */
int logfs_session_path(const char *path, uint64_t file_id, char *out, size_t len);

/* A session's manifest as its owner holds it: open and locked. */
struct logfs_session {
    int fd;     /* -1: none */
    char *path; /* the manifest (malloc'ed) */
};

/*
 * Create the manifest of a new session, holding @p text, locked as live.
 * The live lock is shared: several processes of one session may hold it
 * (logfs_session_join), and the session is live while any does.
 * @param[out] s  the session; logfs_session_release() ends the hold
 * @return LOGFS_OK, LOGFS_EEXIST (another process of the session made it
 *         first), LOGFS_ENOENT / LOGFS_EACCES / LOGFS_EROFS / LOGFS_ENOSPC /
 *         LOGFS_EIO (the directory or file cannot be made)
 */
int logfs_session_create(const char *path, uint64_t file_id, const char *text, size_t len,
                         int durable, struct logfs_session *s, struct logfs_error *err);

/*
 * Hold the manifest another process of the session created, live (a lazy
 * session's manifest is made by whichever process first makes log files).
 * @return LOGFS_OK, LOGFS_ENOENT (none), LOGFS_EBUSY (claimed: no longer
 *         live), LOGFS_EACCES, LOGFS_EIO
 */
int logfs_session_join(const char *path, uint64_t file_id, struct logfs_session *s,
                       struct logfs_error *err);

/* Rewrite the manifest of a held session (fdatasync'ed if @p durable). */
int logfs_session_store(struct logfs_session *s, const char *text, size_t len, int durable,
                        struct logfs_error *err);

/* Stop holding the session: its manifest stays, pending.  s->fd becomes -1. */
void logfs_session_release(struct logfs_session *s);

/* Remove the manifest of a held (or claimed) session and release it; the
 * directory goes too once it is empty. */
void logfs_session_remove(struct logfs_session *s);

/* One manifest found beside a file. */
struct logfs_session_info {
    char *path;        /* the manifest */
    int live;          /* some handle holds it */
    int claimed;       /* held alone: a replay or drain claimed it (a handle's
                          hold is shared) */
    int64_t mtime_ns;  /* last written: a deferred close's time, or a session's start */
};

/*
 * The manifests of file @p path, oldest first (then by name).
 * @param[out] out  malloc'ed array (NULL when there is none); free with logfs_sessions_free
 * @return LOGFS_OK (also when there is none), LOGFS_EACCES, LOGFS_EIO, LOGFS_ENOMEM
 */
int logfs_sessions_list(const char *path, struct logfs_session_info **out, size_t *n,
                        struct logfs_error *err);
/* What logfs_sessions_list_except looks for.  Each look for a manifest
 * that is not there is a failed path lookup, and those are dear (about
 * 2 us on tmpfs, a third of a stock open, and a wait for the directory's
 * lock among processes that make files in it): an open and a close of a
 * file with no session made five.  Where the file's directory has no
 * subdirectory (by its link count, on file systems that keep it), neither
 * the listing nor logfs_sessions_lock looks the sessions directory up. */
#define LOGFS_LIST_LEGACY 1u /* an older release's single manifest too (bbfs-replay
                              * and a delete look; the driver's opens do not:
                              * docs/log-format.md) */
#define LOGFS_LIST_NO_DIR 2u /* the caller found no sessions directory under the
                              * lock (LOGFS_SESSIONS_NO_DIR): none to list */
#define LOGFS_LIST_PARENT_TESTED 4u /* the caller made the test of the file's
                                     * directory (logfs_sessions_surely_none_kept
                                     * said maybe): not made again */
/* As logfs_sessions_list, without manifest @p except (a session's own,
 * named by logfs_session_path: no stat, no lock test), looking where
 * @p flags say. */
int logfs_sessions_list_except(const char *path, const char *except, unsigned flags,
                               struct logfs_session_info **out, size_t *n, struct logfs_error *err);

/* As logfs_sessions_list_except, through the sessions directory kept open in
 * *@p kept (-1: none yet) since an earlier listing found it: a handle that
 * lists after every acquire skips the lookup, open, ownership check and
 * close, which were three quarters of a listing's cost (5.7 against 1.5 us
 * on tmpfs).  A kept directory that was removed since (the last session of
 * the file ended; Linux lists a removed directory as ENOENT) is closed and
 * the listing looks the name up again, so a directory made anew at the name
 * is found; bbfs never renames one.  Elsewhere than on Linux nothing is kept.
 * Close it with logfs_sessions_kept_close. */
int logfs_sessions_list_kept(const char *path, const char *except, unsigned flags, int *kept,
                             struct logfs_session_info **out, size_t *n, struct logfs_error *err);
void logfs_sessions_kept_close(int *kept);

/*
 * Whether the file at @p path surely has no sessions (its directory has no
 * subdirectory, where the file system counts them: the listing's own first
 * test), judged through that directory kept open in *@p parent (-1 before
 * the first call): looked up by its path at the first call, as the listing
 * does, and opened at the second.  For a caller that asks again and again
 * (a read-only handle at every acquire): an fstat, not a lookup of the
 * directory's path.  0: maybe (list them).  The kept
 * directory is the one the file was in when first asked, as an open handle's
 * file stays in its directory.  Close it with logfs_sessions_kept_close.
 */
int logfs_sessions_surely_none_kept(const char *path, int *parent);

void logfs_sessions_free(struct logfs_session_info *s, size_t n);

/*
 * Take a pending session over (to replay or delete it): lock it as live.
 * @return LOGFS_OK (s holds it), LOGFS_EBUSY (live: someone else holds it),
 *         LOGFS_ENOENT (gone meanwhile), LOGFS_EIO
 */
int logfs_session_claim(const char *manifest, struct logfs_session *s, struct logfs_error *err);

/*
 * Read a manifest's text (waiting while its owner rewrites it).
 * @param[out] text  malloc'ed, NUL-terminated
 * @return LOGFS_OK, LOGFS_ENOENT, LOGFS_EFORMAT (implausibly large), LOGFS_EIO, LOGFS_ENOMEM
 */
int logfs_session_load(const char *manifest, char **text, size_t *len, struct logfs_error *err);

/*
 * Decisions about a file's sessions (is this close the last one? which
 * pending sessions does this open claim?) are made one at a time: list,
 * decide, then claim or release, under an exclusive flock on the sessions
 * directory, so that two handles closing at once cannot both see the other
 * live and both leave their logs pending.  No system calls of other
 * processes wait on it but these decisions and the removal of the last
 * session's directory (logfs_session_remove), which a decider may be about
 * to publish in.
 * @return a descriptor for logfs_sessions_unlock; LOGFS_SESSIONS_NO_DIR when
 *         there is no directory (no session); -1 when the file system refuses
 *         the lock or the directory kept being replaced (then the decision is
 *         made unlocked, as before)
 */
#define LOGFS_SESSIONS_NO_DIR (-2)
int logfs_sessions_lock(const char *path);
/* The same where the caller knows the directory is there (it made it, or
 * holds a manifest in it): no look at its parent first, which on a
 * parallel file system is one metadata operation of the open or close. */
int logfs_sessions_lock_made(const char *path);
void logfs_sessions_unlock(int fd);

#ifdef __cplusplus
}
#endif

#endif
