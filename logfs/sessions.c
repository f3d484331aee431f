/*
 * Session manifests on disk: naming, the live lock, listing (sessions.h).
 */
#define _GNU_SOURCE
#include "sessions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "fault.h"
#include "internal.h"
#include "manifest.h"

size_t logfs_name_prefix_len(const char *name)
{
    const char *colon = strchr(name, ':');
    return colon && colon > name + 1 ? (size_t)(colon - name) + 1 : 0;
}

#define LIVE_BYTE 0
#define TEXT_BYTE 1
#define SUFFIX ".manifest"
/* A manifest is a few lines per writer; anything this large is not one. */
#define MANIFEST_MAX ((off_t)1 << 28)

static int copy_name(const char *src, char *out, size_t len)
{
    size_t n = strlen(src);
    if (n + 1 > len)
        return -1;
    memcpy(out, src, n + 1);
    return 0;
}

int logfs_canonical_name(const char *path, char *out, size_t len)
{
    struct stat st;
    char cur[PATH_MAX], target[PATH_MAX], joined[2 * PATH_MAX];

    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return copy_name(path, out, len);
    if (realpath(path, cur))
        return copy_name(cur, out, len) ? -1 : 1;
    if (copy_name(path, cur, sizeof cur))
        return -1;
    for (int hops = 0; hops < 40; hops++) {     /* (Linux's own limit) */
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            break;
        target[n] = '\0';
        const char *slash = strrchr(cur, '/');
        if (target[0] == '/' || !slash)
            snprintf(joined, sizeof joined, "%s", target);
        else
            snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - cur), cur, target);
        if (copy_name(joined, cur, sizeof cur))
            return -1;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break;
    }
    return copy_name(cur, out, len) ? -1 : 1;
}

int logfs_sessions_dir(const char *path, char *out, size_t len)
{
    return logfs_hidden_sibling(path, ".bbfs", out, len);
}

int logfs_session_path(const char *path, uint64_t file_id, char *out, size_t len)
{
    char dir[4096];
    if (logfs_sessions_dir(path, dir, sizeof dir))
        return -1;
    int n = snprintf(out, len, "%s/%016" PRIx64 SUFFIX, dir, file_id);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* File systems whose directories count their subdirectories in their link
 * count (2 + subdirectories), kept exact while a lookup could see them:
 * not NFS (its attributes are cached apart from its lookups), not btrfs or
 * overlayfs (1 or another directory's count). */
static int counts_subdirs(long magic)
{
    return magic == 0x01021994 /* tmpfs */ || magic == 0xEF53 /* ext2/3/4 */
        || magic == 0x58465342 /* xfs */ || magic == 0x0BD00BD0; /* lustre */
}

/* Whether the directory that would hold sessions directory @p dir has no
 * subdirectory at all, so that @p dir cannot exist.  A sessions directory
 * is named after its file, so looking it up is looking up a name never seen
 * before, which waits for the directory's lock behind every create and
 * remove of its other processes; a stat of the directory itself waits for
 * none.  (A symbolic link there is not a subdirectory: it is not followed
 * either, and making the directory refuses it.) */
/* The parent directory's path of sessions directory @p dir into @p out. */
static int parent_of(const char *dir, char *out, size_t len)
{
    const char *slash = strrchr(dir, '/');
    size_t n = !slash ? 1 : slash == dir ? 1 : (size_t)(slash - dir);
    if (n >= len)
        return 1;
    memcpy(out, slash ? dir : ".", n);
    out[n] = '\0';
    return 0;
}

/* Whether a directory of stat @p st (of a file system statfs_of tells, if
 * need be) has no subdirectory. */
static int no_subdirs(const struct stat *st, int (*statfs_of)(const void *, struct statfs *),
                      const void *which)
{
    /* (the file system of each device, as a process keeps opening files on
     * the same few) */
    static _Thread_local struct { dev_t dev; int counts, used; } seen[4];
    static _Thread_local unsigned next;
    struct statfs sf;

    if (!S_ISDIR(st->st_mode) || st->st_nlink != 2)
        return 0;
    for (unsigned i = 0; i < sizeof seen / sizeof seen[0]; i++)
        if (seen[i].used && seen[i].dev == st->st_dev)
            return seen[i].counts;
    if (statfs_of(which, &sf) < 0)
        return 0;
    unsigned i = next++ % (sizeof seen / sizeof seen[0]);
    seen[i].dev = st->st_dev;
    seen[i].counts = counts_subdirs((long)sf.f_type);
    seen[i].used = 1;
    return seen[i].counts;
}

static int statfs_path(const void *path, struct statfs *sf)
{
    return statfs(path, sf);
}

static int statfs_fd(const void *fd, struct statfs *sf)
{
    return fstatfs(*(const int *)fd, sf);
}

/* Whether the directory that would hold sessions directory @p dir has no
 * subdirectory at all, so that @p dir cannot exist.  A sessions directory
 * is named after its file, so looking it up is looking up a name never seen
 * before, which waits for the directory's lock behind every create and
 * remove of its other processes; a stat of the directory itself waits for
 * none.  (A symbolic link there is not a subdirectory: it is not followed
 * either, and making the directory refuses it.) */
static int parent_has_no_subdirs(const char *dir)
{
    char parent[4096];
    struct stat st;

    if (parent_of(dir, parent, sizeof parent) || stat(parent, &st) < 0)
        return 0;
    return no_subdirs(&st, statfs_path, parent);
}

/* (*parent: -1 not asked yet; -3 asked once; -2 could not be opened) */
int logfs_sessions_surely_none_kept(const char *path, int *parent)
{
    char dir[4096], pdir[4096];
    struct stat st;

    if (*parent < 0) {          /* (the names only until the directory is kept) */
        if (*parent == -2 || logfs_sessions_dir(path, dir, sizeof dir))
            return 0;
        if (*parent == -1) {    /* (once only: a lookup costs less than an open) */
            *parent = -3;
            return parent_has_no_subdirs(dir);
        }
        int fd = parent_of(dir, pdir, sizeof pdir) ? -1
            : open(pdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if ((*parent = fd >= 0 ? fd : -2) < 0)
            return 0;
    }
    if (fstat(*parent, &st) < 0)
        return 0;
    return no_subdirs(&st, statfs_fd, parent);
}

/* The manifest directory must be a directory of this user, not a symbolic
 * link: manifests name files a replay reads and removes.  Judged on what
 * lstat (dir_is_own) or fstat of it opened without following a link
 * (fd_dir_is_own) said. */
static int dir_stat_is_own(const struct stat *st, const char *dir, struct logfs_error *err)
{
    if (!S_ISDIR(st->st_mode) || st->st_uid != geteuid())
        return logfs_fail(err, LOGFS_EACCES, 0, "manifest directory %s %s, not a directory of "
                          "this user (uid %u): not trusted; remove it if it is not yours", dir,
                          S_ISLNK(st->st_mode) ? "is a symbolic link"
                          : S_ISDIR(st->st_mode) ? "belongs to another user" : "is not a directory",
                          (unsigned)geteuid());
    return LOGFS_OK;
}

/* A missing one is fine (LOGFS_ENOENT is returned, without a message). */
static int dir_is_own(const char *dir, struct logfs_error *err)
{
    struct stat st;
    if (lstat(dir, &st) < 0)
        return errno == ENOENT ? LOGFS_ENOENT : logfs_fail_errno(err, errno, "cannot look at", dir);
    return dir_stat_is_own(&st, dir, err);
}

static int fd_dir_is_own(int fd, const char *dir, struct logfs_error *err)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return logfs_fail_errno(err, errno, "cannot look at", dir);
    return dir_stat_is_own(&st, dir, err);
}

/* Open-file-description locks: a second open of the file, even in the same
 * process, conflicts, and closing any other descriptor leaves them. */
static int lock_byte(int fd, int cmd, short type, off_t byte)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = byte;
    fl.l_len = 1;
    int rc;
    while ((rc = fcntl(fd, cmd, &fl)) < 0 && errno == EINTR)
        ;
    return rc;
}

/* Where the file system refuses such locks, sessions cannot be held: the
 * manifest still records the logs (sessions.h says what that costs). */
static int locks_unsupported(int e)
{
    return e == EINVAL || e == ENOLCK || e == EOPNOTSUPP;
}

/* The text into the manifest open at fd: in place under the text lock
 * (a reader never parses half of it), or, fresh, into a new file nobody
 * can name yet (it is linked into place after). */
static int write_text(int fd, const char *text, size_t len, int durable, int fresh,
                      const char *path, struct logfs_error *err)
{
    int e;
    if (fresh) {
        e = logfs_pwrite_full("manifest-write", fd, text, len, 0);
        if (e == 0 && durable && fdatasync(fd) < 0)
            e = errno;
        return e ? logfs_fail_errno(err, e, "cannot write the manifest", path) : LOGFS_OK;
    }
    if (lock_byte(fd, F_OFD_SETLKW, F_WRLCK, TEXT_BYTE) < 0 && !locks_unsupported(errno))
        return logfs_fail_errno(err, errno, "cannot lock the manifest", path);
    if (!(e = logfs_pwrite_full("manifest-rewrite", fd, text, len, 0))) {
        logfs_fault("manifest-truncate"); /* (kill only) the new text, the old one's tail */
        if (ftruncate(fd, (off_t)len) < 0)
            e = errno;
    }
    if (e == 0 && durable && fdatasync(fd) < 0)
        e = errno;
    lock_byte(fd, F_OFD_SETLK, F_UNLCK, TEXT_BYTE);
    return e ? logfs_fail_errno(err, e, "cannot write the manifest", path) : LOGFS_OK;
}

int logfs_session_create(const char *path, uint64_t file_id, const char *text, size_t len,
                         int durable, struct logfs_session *s, struct logfs_error *err)
{
    char dir[4096], final[4200], tmp[4300];
    int fd, rc;

    s->fd = -1;
    s->path = NULL;
    if (logfs_sessions_dir(path, dir, sizeof dir) || logfs_session_path(path, file_id, final, sizeof final))
        return logfs_fail(err, LOGFS_EINVAL, ENAMETOOLONG, "file name too long for a manifest: %s", path);
    /* (a directory this call made is this user's: only one found there
     * is looked at) */
    if (mkdir(dir, 0700) < 0) {
        if (errno != EEXIST)
            return logfs_fail_errno(err, errno, "cannot create the manifest directory", dir);
        if ((rc = dir_is_own(dir, err)) && rc != LOGFS_ENOENT)
            return rc;
    }
    /* (a name of this process's: the processes of a lazy session may
     * publish at once, and the link below chooses one) */
    snprintf(tmp, sizeof tmp, "%s/.new-%016" PRIx64 "-%ld", dir, file_id, (long)getpid());
    /* A concurrent delete of the last session may remove the directory
     * between the mkdir and the create: make it again, once. */
    fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT && (mkdir(dir, 0700) == 0 || errno == EEXIST))
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return logfs_fail_errno(err, errno, "cannot create the manifest", tmp);
    if (lock_byte(fd, F_OFD_SETLK, F_RDLCK, LIVE_BYTE) < 0 && !locks_unsupported(errno)) {
        rc = logfs_fail_errno(err, errno, "cannot lock the manifest", tmp);
        goto fail;
    }
    if ((rc = write_text(fd, text, len, durable, 1, tmp, err)))
        goto fail;
    if (link(tmp, final) < 0) { /* unlike rename, never replaces a session's manifest */
        rc = errno == EEXIST ? logfs_fail(err, LOGFS_EEXIST, EEXIST, "%s exists", final)
            : logfs_fail_errno(err, errno, "cannot publish the manifest", final);
        goto fail;
    }
    unlink(tmp);
    /* (a durable session's manifest must name its logs after a crash) */
    int e = durable ? logfs_fsync_dir(dir) : 0;
    if (e) {
        unlink(final);
        rc = logfs_fail_errno(err, e, "cannot fsync the manifest directory", dir);
        goto fail_closed;
    }
    if (!(s->path = strdup(final))) {
        unlink(final);
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a manifest path");
        goto fail_closed;
    }
    s->fd = fd;
    return LOGFS_OK;
fail:
    unlink(tmp);
fail_closed:
    close(fd);
    return rc;
}

/* Open @p manifest and hold it with a lock of @p type on the live byte:
 * shared (a process of the session) or exclusive (a claim).  A conflicting
 * lock is LOGFS_EBUSY, said as @p busy ("%s" the manifest). */
static int hold(const char *manifest, short type, const char *busy, struct logfs_session *s,
                struct logfs_error *err)
{
    s->fd = -1;
    s->path = NULL;
    int fd, rc = logfs_open_own(manifest, O_RDWR, 0, "cannot open the manifest", &fd, err);
    if (rc)
        return rc;
    if (lock_byte(fd, F_OFD_SETLK, type, LIVE_BYTE) < 0 && !locks_unsupported(errno)) {
        int e = errno;
        close(fd);
        if (e == EAGAIN || e == EACCES)
            return logfs_fail(err, LOGFS_EBUSY, e, busy, manifest);
        return logfs_fail_errno(err, e, "cannot lock the manifest", manifest);
    }
    if (!(s->path = strdup(manifest))) {
        close(fd);
        return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory for a manifest path");
    }
    s->fd = fd;
    return LOGFS_OK;
}

int logfs_session_join(const char *path, uint64_t file_id, struct logfs_session *s,
                       struct logfs_error *err)
{
    char final[4200];

    s->fd = -1;
    s->path = NULL;
    if (logfs_session_path(path, file_id, final, sizeof final))
        return logfs_fail(err, LOGFS_EINVAL, ENAMETOOLONG, "file name too long for a manifest: %s", path);
    return hold(final, F_RDLCK, "%s was claimed by a replay", s, err);
}

int logfs_session_store(struct logfs_session *s, const char *text, size_t len, int durable,
                        struct logfs_error *err)
{
    if (s->fd < 0)
        return logfs_fail(err, LOGFS_ESTATE, 0, "manifest not held");
    return write_text(s->fd, text, len, durable, 0, s->path, err);
}

void logfs_session_release(struct logfs_session *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->path);
    s->path = NULL;
}

/* The sessions directory dir, locked: the one locked must still be the one
 * at the path (a directory removed meanwhile is made again by the next
 * publisher), so a removed one is let go and the new one taken.  -1 if
 * there is none or the file system refuses locks.  @p made: the caller
 * knows the directory is there, having just made it or holding a manifest
 * in it: its parent is not looked at first. */
static int lock_dir(const char *dir, int made)
{
    struct stat locked, there;

    if (!made && parent_has_no_subdirs(dir))
        return LOGFS_SESSIONS_NO_DIR;
    for (int tries = 0; tries < 5; tries++) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return errno == ENOENT ? LOGFS_SESSIONS_NO_DIR : -1;
        int rc;
        while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
            ;
        if (rc < 0) { /* the file system refuses: go on unlocked */
            close(fd);
            return -1;
        }
        if (fstat(fd, &locked) == 0 && stat(dir, &there) == 0 && locked.st_dev == there.st_dev &&
            locked.st_ino == there.st_ino)
            return fd;
        close(fd);
    }
    return -1;
}

/* The last session's directory goes under its lock: a holder of the lock
 * may be about to publish a manifest in it, having decided from what it
 * saw there whether it is alone, so the removal waits for it and then
 * finds the directory no longer empty (ENOTEMPTY).  Unlocked where the
 * file system refuses locks. */
static void remove_dir_locked(const char *dir)
{
    int fd = lock_dir(dir, 1);  /* (its manifest was in it a moment ago) */
    rmdir(dir);
    logfs_sessions_unlock(fd);
}

void logfs_session_remove(struct logfs_session *s)
{
    if (s->path) {
        unlink(s->path);
        /* The directory goes with its last manifest (ENOTEMPTY otherwise);
         * an old release's manifest (".base.bbfs-manifest") has none. */
        char *slash = strrchr(s->path, '/');
        size_t l = strlen(s->path);
        if (slash && l > strlen(SUFFIX) && !strcmp(s->path + l - strlen(SUFFIX), SUFFIX)) {
            *slash = '\0';
            remove_dir_locked(s->path);
        }
    }
    logfs_session_release(s);
}

/* Whether some other open file description holds the live lock (at all,
 * or, claimed, alone). */
static void lock_state(const char *manifest, int *live, int *claimed)
{
    int fd = open(manifest, O_RDONLY | O_CLOEXEC);
    struct flock fl;
    *live = *claimed = 0;
    if (fd < 0)
        return;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = LIVE_BYTE;
    fl.l_len = 1;
    *live = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    /* (a shared lock asked for conflicts only with an exclusive one) */
    *claimed = *live && fl.l_type == F_WRLCK;
    close(fd);
}

static int add(struct logfs_session_info **v, size_t *n, size_t *cap, const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return errno == ENOENT ? LOGFS_OK : LOGFS_EIO; /* gone meanwhile: ended */
    struct logfs_session_info *nv = logfs_grow(*v, cap, *n + 1, sizeof *nv, 4);
    if (!nv)
        return LOGFS_ENOMEM;
    *v = nv;
    struct logfs_session_info *s = &(*v)[*n];
    if (!(s->path = strdup(path)))
        return LOGFS_ENOMEM;
    s->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    lock_state(path, &s->live, &s->claimed);
    (*n)++;
    return LOGFS_OK;
}

static int older_first(const void *a, const void *b)
{
    const struct logfs_session_info *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

int logfs_sessions_list(const char *path, struct logfs_session_info **out, size_t *n,
                        struct logfs_error *err)
{
    return logfs_sessions_list_except(path, NULL, LOGFS_LIST_LEGACY, out, n, err);
}

/* Call fn(arg, name) for each name in open directory dfd, until one
 * returns nonzero (in *rc); dfd is closed.  @return 0, or the errno of a
 * failed listing.  (getdents64 itself on Linux: readdir's fdopendir costs
 * three system calls more, an fstat and two fcntl, and a view of others'
 * writes lists the sessions after every acquire.) */
/* Each name in directory dfd, from its start; the fd is closed, unless
 * @p keep (Linux only). */
static int each_name(int dfd, int keep, int (*fn)(void *, const char *), void *arg, int *rc)
{
    int e = 0;
#ifdef __linux__
    if (keep && lseek(dfd, 0, SEEK_SET) < 0)
        return errno;
    union {
        char b[8192];
        struct dirent64 align;
    } buf;
    for (;;) {
        ssize_t got = getdents64(dfd, buf.b, sizeof buf.b);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            e = got < 0 ? errno : 0;
            break;
        }
        for (ssize_t at = 0; at < got && !*rc;) {
            const struct dirent64 *d = (const struct dirent64 *)(buf.b + at);
            at += d->d_reclen;
            *rc = fn(arg, d->d_name);
        }
        if (*rc)
            break;
    }
    if (!keep)
        close(dfd);
#else
    (void)keep;
    DIR *d = fdopendir(dfd);
    if (!d) {
        e = errno;
        close(dfd);
        return e;
    }
    struct dirent *de;
    errno = 0;
    while (!*rc && (de = readdir(d)) != NULL)
        *rc = fn(arg, de->d_name);
    e = !*rc && errno ? errno : 0;
    closedir(d);
#endif
    return e;
}

struct manifest_names {
    const char *dir, *except;
    struct logfs_session_info **v;
    size_t *n, *cap;
};

/* A name of the sessions directory: a manifest is listed (not except). */
static int add_manifest(void *arg, const char *name)
{
    struct manifest_names *m = arg;
    char one[4400];
    size_t l = strlen(name);
    if (l <= strlen(SUFFIX) || name[0] == '.' || strcmp(name + l - strlen(SUFFIX), SUFFIX))
        return LOGFS_OK;
    snprintf(one, sizeof one, "%s/%s", m->dir, name);
    return m->except && !strcmp(one, m->except) ? LOGFS_OK : add(m->v, m->n, m->cap, one);
}

void logfs_sessions_kept_close(int *kept)
{
    if (*kept >= 0)
        close(*kept);
    *kept = -1;
}

int logfs_sessions_list_except(const char *path, const char *except, unsigned flags,
                               struct logfs_session_info **out, size_t *n, struct logfs_error *err)
{
    return logfs_sessions_list_kept(path, except, flags, NULL, out, n, err);
}

int logfs_sessions_list_kept(const char *path, const char *except, unsigned flags, int *kept,
                             struct logfs_session_info **out, size_t *n, struct logfs_error *err)
{
    char dir[4096], legacy[4200];
    struct logfs_session_info *v = NULL;
    size_t cap = 0;
    int rc = LOGFS_OK;

    *out = NULL;
    *n = 0;
#ifndef __linux__
    kept = NULL;        /* (each_name's fdopendir takes the fd) */
#endif
    if (logfs_sessions_dir(path, dir, sizeof dir)
        || ((flags & LOGFS_LIST_LEGACY) && logfs_manifest_path(path, legacy, sizeof legacy)))
        return logfs_fail(err, LOGFS_EINVAL, ENAMETOOLONG, "file name too long for a manifest: %s", path);
    /* (through the directory kept since an earlier listing, if it still
     * lists: else removed since it was kept, or unreadable now, and looked
     * up by its name below) */
    int listed = 0;
    if (kept && *kept >= 0) {
        struct manifest_names m = { dir, except, &v, n, &cap };
        int e = each_name(*kept, 1, add_manifest, &m, &rc);
        listed = rc || !e;
        if (!listed) {
            logfs_sessions_kept_close(kept);
            logfs_sessions_free(v, *n);
            v = NULL;
            *n = cap = 0;
        }
    }
    if (!rc && (flags & LOGFS_LIST_LEGACY) && access(legacy, F_OK) == 0)
        rc = add(&v, n, &cap, legacy);
    if (listed)
        goto done;
    /* No lookup of the directory when its parent has no subdirectories (the
     * usual case: every open and close asks) or the caller knows there is
     * none; the checks of dir_is_own on what was opened, else. */
    int none = !rc && ((flags & LOGFS_LIST_NO_DIR)
                       || (!(flags & LOGFS_LIST_PARENT_TESTED) && parent_has_no_subdirs(dir)));
    int dfd = rc || none ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int own = rc ? rc : none || (dfd < 0 && errno == ENOENT) ? LOGFS_ENOENT
        : dfd < 0 ? dir_is_own(dir, err) : fd_dir_is_own(dfd, dir, err);
    if (own != LOGFS_OK && own != LOGFS_ENOENT) {
        if (dfd >= 0)
            close(dfd);
        logfs_sessions_free(v, *n);
        *n = 0;
        return own;
    }
    if (!rc && dfd >= 0) {
        struct manifest_names m = { dir, except, &v, n, &cap };
        int e = each_name(dfd, kept != NULL, add_manifest, &m, &rc);
        if (kept && !rc && !e)
            *kept = dfd;
        else if (kept)
            close(dfd);
        /* ENOENT: the last session's removal took the directory after it
         * was opened here; rmdir takes only an empty one, so it listed
         * nothing at that moment, which is a true answer. */
        if (!rc && e && e != ENOENT)
            rc = logfs_fail_errno(err, e, "cannot list the manifests in", dir);
    } else if (dfd >= 0)
        close(dfd);
done:
    if (rc) {
        logfs_sessions_free(v, *n);
        *n = 0;
        return rc == LOGFS_ENOMEM ? logfs_fail(err, rc, 0, "no memory to list manifests") : rc;
    }
    if (*n > 1)
        qsort(v, *n, sizeof *v, older_first);
    *out = v;
    return LOGFS_OK;
}

void logfs_sessions_free(struct logfs_session_info *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i].path);
    free(s);
}

int logfs_session_claim(const char *manifest, struct logfs_session *s, struct logfs_error *err)
{
    return hold(manifest, F_WRLCK, "%s belongs to a handle that is still open", s, err);
}

int logfs_session_load(const char *manifest, char **text, size_t *len, struct logfs_error *err)
{
    struct stat st;
    int fd, e = logfs_open_own(manifest, O_RDONLY, 0, "cannot open the manifest", &fd, err);
    *text = NULL;
    *len = 0;
    if (e)
        return e;
    lock_byte(fd, F_OFD_SETLKW, F_RDLCK, TEXT_BYTE); /* unsupported: read as it is */
    if (fstat(fd, &st) < 0)
        e = errno;
    else if (st.st_size > MANIFEST_MAX)
        e = -2;
    else if (!(*text = malloc((size_t)st.st_size + 1)))
        e = ENOMEM;
    else if ((e = logfs_pread_full(fd, *text, (size_t)st.st_size, 0)) == 0) {
        (*text)[st.st_size] = '\0';
        *len = (size_t)st.st_size;
    }
    close(fd); /* drops the read lock */
    if (e == 0)
        return LOGFS_OK;
    free(*text);
    *text = NULL;
    if (e == -2)
        return logfs_fail(err, LOGFS_EFORMAT, 0, "manifest %s is implausibly large", manifest);
    if (e == -1)
        return logfs_fail(err, LOGFS_EIO, 0, "manifest %s changed size while read", manifest);
    return logfs_fail_errno(err, e, "cannot read the manifest", manifest);
}

static int sessions_lock(const char *path, int made)
{
    char dir[4096];

    if (logfs_sessions_dir(path, dir, sizeof dir))
        return -1;
    return lock_dir(dir, made);
}

int logfs_sessions_lock(const char *path)
{
    return sessions_lock(path, 0);
}

int logfs_sessions_lock_made(const char *path)
{
    return sessions_lock(path, 1);
}

void logfs_sessions_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* drops the flock */
}
