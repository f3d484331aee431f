/*
 * The token clients present to bbserver: BBS_TOKEN_LEN random bytes, kept
 * as hex in a file only its owner can read (0600), or passed to a job in
 * the environment (BBFS_SERVER_TOKEN).  Whoever can read the token file is
 * the user the server serves, so the file's mode is checked, not trusted.
 */
#ifndef BBSERVER_TOKEN_H
#define BBSERVER_TOKEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BBS_TOKEN_HEX (2 * BBS_TOKEN_LEN)

/* Parse BBS_TOKEN_HEX hex digits (surrounding white space allowed).
 * @return 0, or -1 with why in err. */
int bbs_token_parse(const char *hex, uint8_t *token, char *err, size_t errlen);

/* Hex of a token into out (BBS_TOKEN_HEX + 1 bytes). */
void bbs_token_hex(const uint8_t *token, char *out);

/* Read a token file.  It must be a regular file that group and others
 * cannot read or write.  @return 0, or -1 with why in err (ENOENT in
 * *missing when the file does not exist, else 0). */
int bbs_token_load(const char *path, uint8_t *token, int *missing, char *err, size_t errlen);

/* Make a new random token and write it to path, created 0600 (not
 * replacing an existing file; then it loads that one, so two servers
 * started at once agree).  @return 0, or -1 with why in err. */
int bbs_token_create(const char *path, uint8_t *token, char *err, size_t errlen);

/*
 * The token to use: from the file given (path not NULL), else the
 * environment's BBFS_SERVER_TOKEN (hex), else the file named by
 * BBFS_SERVER_TOKEN_FILE, else $HOME/.bbfs/token.  With create, a missing
 * default file (and its directory, 0700) is made.  source gets where it
 * came from (for messages).  @return 0, or -1 with why in err.
 */
int bbs_token_find(const char *path, int create, uint8_t *token, char *source,
                   size_t sourcelen, char *err, size_t errlen);

/*
 * bbs_token_find(NULL, ...) for a process that asks again and again (the
 * driver, at every open): the token read from a file is kept in k, and
 * served again while an lstat of the file finds it unchanged (its
 * identity, size, mode and times).  One lstat where a find makes five
 * system calls; on a home directory over NFS those are round trips to its
 * server, from every process at every open of a file.  A file replaced, rewritten or
 * chmod-ed is read again (and its mode checked again).  k starts zeroed.
 */
struct bbs_token_kept {
    int valid;
    char path[4096];
    struct stat st;
    uint8_t token[BBS_TOKEN_LEN];
};
int bbs_token_find_kept(struct bbs_token_kept *k, int create, uint8_t *token, char *source,
                        size_t sourcelen, char *err, size_t errlen);

/* Token files read by bbs_token_find_kept (for tests). */
extern unsigned long bbs_token_loads;

#ifdef __cplusplus
}
#endif

#endif
