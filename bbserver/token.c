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

int bbs_token_find(const char *path, int create, uint8_t *token, char *source,
                   size_t sourcelen, char *err, size_t errlen)
{
    char def[4096];
    const char *env = getenv("BBFS_SERVER_TOKEN");
    int missing;

    if (!path && env && *env) {
        snprintf(source, sourcelen, "BBFS_SERVER_TOKEN");
        return bbs_token_parse(env, token, err, errlen);
    }
    if (!path)
        path = getenv("BBFS_SERVER_TOKEN_FILE");
    if (!path || !*path) {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            snprintf(err, errlen, "no token: set BBFS_SERVER_TOKEN or BBFS_SERVER_TOKEN_FILE "
                     "(HOME is not set for the default ~/.bbfs/token)");
            return -1;
        }
        snprintf(def, sizeof(def), "%s/.bbfs", home);
        if (create && mkdir(def, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", def, strerror(errno));
            return -1;
        }
        snprintf(def, sizeof(def), "%s/.bbfs/token", home);
        path = def;
    }
    snprintf(source, sourcelen, "%s", path);
    if (bbs_token_load(path, token, &missing, err, errlen) == 0)
        return 0;
    if (missing && create)
        return bbs_token_create(path, token, err, errlen);
    return -1;
}
