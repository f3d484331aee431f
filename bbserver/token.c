/*
 * Tokens (see token.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "token.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int bbs_token_parse(const char *hex, uint8_t *token, char *err, size_t errlen)
{
    while (isspace((unsigned char) *hex))
        hex++;
    for (int i = 0; i < BBS_TOKEN_LEN; i++) {
        int hi = hexval((unsigned char) hex[2 * i]), lo = hi < 0 ? -1 : hexval((unsigned char) hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(err, errlen, "a bbserver token is %d hex digits", BBS_TOKEN_HEX);
            return -1;
        }
        token[i] = (uint8_t) (hi << 4 | lo);
    }
    for (hex += BBS_TOKEN_HEX; *hex; hex++)
        if (!isspace((unsigned char) *hex)) {
            snprintf(err, errlen, "a bbserver token is %d hex digits; more follow",
                     BBS_TOKEN_HEX);
            return -1;
        }
    return 0;
}

void bbs_token_hex(const uint8_t *token, char *out)
{
    for (int i = 0; i < BBS_TOKEN_LEN; i++)
        sprintf(out + 2 * i, "%02x", token[i]);
    out[BBS_TOKEN_HEX] = 0;
}

int bbs_token_load(const char *path, uint8_t *token, int *missing, char *err, size_t errlen)
{
    char text[BBS_TOKEN_HEX + 64];
    struct stat st;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    *missing = 0;
    if (fd < 0) {
        *missing = errno == ENOENT;
        snprintf(err, errlen, "cannot open the token file %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        snprintf(err, errlen, "the token file %s must be a regular file only its owner can "
                 "read (chmod 600 %s)", path, path);
        close(fd);
        return -1;
    }
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n < 0) {
        snprintf(err, errlen, "cannot read the token file %s: %s", path, strerror(errno));
        return -1;
    }
    text[n] = 0;
    char why[128];
    if (bbs_token_parse(text, token, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "the token file %s: %s", path, why);
        return -1;
    }
    return 0;
}

int bbs_token_create(const char *path, uint8_t *token, char *err, size_t errlen)
{
    char hex[BBS_TOKEN_HEX + 2];
    int missing;

    if (getrandom(token, BBS_TOKEN_LEN, 0) != BBS_TOKEN_LEN) {
        snprintf(err, errlen, "no random bytes for a token: %s", strerror(errno));
        return -1;
    }
    bbs_token_hex(token, hex);
    strcat(hex, "\n");
    /* Written under a temporary name and linked into place, so a reader
     * never sees half a token and an existing file is never replaced. */
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int) getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create the token file %s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t len = strlen(hex);
    int ok = write(fd, hex, len) == (ssize_t) len && fsync(fd) == 0;
    close(fd);
    if (ok && link(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        if (e == EEXIST)
            return bbs_token_load(path, token, &missing, err, errlen);
        snprintf(err, errlen, "cannot create the token file %s: %s", path, strerror(e));
        return -1;
    }
    unlink(tmp);
    if (!ok) {
        snprintf(err, errlen, "cannot write the token file %s", tmp);
        return -1;
    }
    return 0;
}

/* The token file to use (see bbs_token_find) into out, and whether it is
 * the default one, whose directory a create makes; 1 where the
 * environment gives the token itself (BBFS_SERVER_TOKEN). */
static int token_path(const char *path, char *out, size_t len, int *is_default, char *err,
                      size_t errlen)
{
    const char *env = getenv("BBFS_SERVER_TOKEN");

    *is_default = 0;
    if (!path && env && *env)
        return 1;
    if (!path)
        path = getenv("BBFS_SERVER_TOKEN_FILE");
    if (path && *path) {
        snprintf(out, len, "%s", path);
        return 0;
    }
    const char *home = getenv("HOME");
    if (!home || !*home) {
        snprintf(err, errlen, "no token: set BBFS_SERVER_TOKEN or BBFS_SERVER_TOKEN_FILE "
                 "(HOME is not set for the default ~/.bbfs/token)");
        return -1;
    }
    snprintf(out, len, "%s/.bbfs/token", home);
    *is_default = 1;
    return 0;
}

/* Load the file at path; where it is missing and create is set, make it
 * (and, for the default file, its directory, 0700). */
static int load_or_create(const char *path, int is_default, int create, uint8_t *token,
                          char *err, size_t errlen)
{
    int missing;

    if (bbs_token_load(path, token, &missing, err, errlen) == 0)
        return 0;
    if (!missing || !create)
        return -1;
    if (is_default) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    return bbs_token_create(path, token, err, errlen);
}

int bbs_token_find(const char *path, int create, uint8_t *token, char *source,
                   size_t sourcelen, char *err, size_t errlen)
{
    char file[4096];
    int is_default, rc = token_path(path, file, sizeof(file), &is_default, err, errlen);

    if (rc == 1) {
        snprintf(source, sourcelen, "BBFS_SERVER_TOKEN");
        return bbs_token_parse(getenv("BBFS_SERVER_TOKEN"), token, err, errlen);
    }
    if (rc != 0)
        return -1;
    snprintf(source, sourcelen, "%s", file);
    return load_or_create(file, is_default, create, token, err, errlen);
}

unsigned long bbs_token_loads;

/* The same file, unchanged: its identity, size and both times. */
static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size
        && a->st_mode == b->st_mode && a->st_mtim.tv_sec == b->st_mtim.tv_sec
        && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec
        && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int bbs_token_find_kept(struct bbs_token_kept *k, int create, uint8_t *token, char *source,
                        size_t sourcelen, char *err, size_t errlen)
{
    char file[4096];
    struct stat before, after;
    int is_default, rc = token_path(NULL, file, sizeof(file), &is_default, err, errlen);

    if (rc != 0) {
        k->valid = 0;
        return rc == 1 ? bbs_token_find(NULL, create, token, source, sourcelen, err, errlen)
            : -1;
    }
    snprintf(source, sourcelen, "%s", file);
    /* (lstat: a link is not served, as bbs_token_load refuses one) */
    int seen = lstat(file, &before) == 0;
    if (k->valid && seen && !strcmp(k->path, file) && same_file(&before, &k->st)) {
        memcpy(token, k->token, BBS_TOKEN_LEN);
        return 0;
    }
    k->valid = 0;
    bbs_token_loads++;
    if (load_or_create(file, is_default, create, token, err, errlen) != 0)
        return -1;
    /* (kept only if the file did not change while it was read: else the
     * next find reads it again) */
    if (seen && lstat(file, &after) == 0 && same_file(&before, &after)
        && strlen(file) < sizeof(k->path)) {
        snprintf(k->path, sizeof(k->path), "%s", file);
        k->st = after;
        memcpy(k->token, token, BBS_TOKEN_LEN);
        k->valid = 1;
    }
    return 0;
}
