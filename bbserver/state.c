/*
 * Saving and loading bbserver's maps (see state.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../logfs/coding.h"
#include "../logfs/crc32c.h"
#include "serve.h"
#include "../logfs/internal.h"

#define STATE_MAGIC "bbserver state 2\n"       /* then the incarnation, u64 */
#define STATE_MAGIC_V1 "bbserver state 1\n"    /* (no incarnation) */
#define BATCH 4096              /* ranges per saved message */

static const uint8_t no_token[BBS_TOKEN_LEN];

struct saver {
    int fd;
    uint64_t at;                /* the state file's length so far */
    const char *file;
    const struct bbs_writer *w;
    uint64_t size;              /* the file's, with its first batch (0 after it) */
    struct bbs_extent e[BATCH];
    uint32_t n;
    struct bbs_buf b;
    int failed;
};

/* Append @p n buffers to the state file (fault point "state-write"). */
static void put(struct saver *s, struct iovec *iov, int n)
{
    size_t done = 0;
    if (!s->failed && logfs_pwritev_full("state-write", s->fd, iov, n, s->at, &done) != 0)
        s->failed = 1;
    s->at += done;
}

static void flush_batch(struct saver *s)
{
    uint8_t hdr[4], crc[4];
    if ((s->n == 0 && s->size == 0) || s->failed)
        return;
    if (bbs_enc_attach(&s->b, 0, no_token, s->file, s->w, s->e, s->n, s->size,
                       bbs_serve_clock(0)) != 0) {
        s->failed = 1;
        return;
    }
    logfs_put32(hdr, (uint32_t) s->b.len);
    logfs_put32(crc, logfs_crc32c_mask(logfs_crc32c(s->b.p, s->b.len)));
    struct iovec iov[3] = { {hdr, 4}, {s->b.p, s->b.len}, {crc, 4} };
    put(s, iov, 3);
    s->n = 0;
    s->size = 0;
}

static int save_range(void *arg, const struct bbs_writer *w, uint64_t start, uint64_t end,
                      uint64_t pos)
{
    struct saver *s = arg;
    if (s->n && (s->n == BATCH || s->w->session != w->session || s->w->rank != w->rank))
        flush_batch(s);
    s->w = w;
    s->e[s->n++] = (struct bbs_extent) { start, end - start, 1, 0, pos };
    return s->failed;
}

static int save_file(void *arg, const char *file)
{
    struct saver *s = arg;
    s->file = file;
    s->n = 0;
    return s->failed;
}

struct save_each {
    struct saver *s;
    const struct bbs_ownmap *m;
};

static int save_one_file(void *arg, const char *file)
{
    static const struct bbs_writer none = { 0, 0, "-", "-" };
    struct save_each *a = arg;
    save_file(a->s, file);
    a->s->w = &none;            /* (a file with a size and no range yet) */
    a->s->size = bbs_own_size(a->m, file);
    bbs_own_ranges(a->m, file, save_range, a->s);
    flush_batch(a->s);
    return a->s->failed;
}

int bbs_state_save(const char *path, struct bbs_ownmap *const *maps, int nmaps,
                   uint64_t incarnation, char *err, size_t errlen)
{
    char tmp[4200];
    struct saver *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory saving the state");
        return -1;
    }
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int) getpid());
    s->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);   /* log paths */
    if (s->fd < 0) {
        snprintf(err, errlen, "cannot write the state file %s: %s", tmp, strerror(errno));
        free(s);
        return -1;
    }
    uint8_t inc[8];
    logfs_put64(inc, incarnation);
    struct iovec magic[2] = { {(void *) STATE_MAGIC, strlen(STATE_MAGIC)}, {inc, 8} };
    put(s, magic, 2);
    for (int i = 0; i < nmaps && !s->failed; i++) {
        struct save_each a = { s, maps[i] };
        bbs_own_each(maps[i], save_one_file, &a);
    }
    uint8_t end[4] = { 0 };
    struct iovec last = { end, 4 };
    put(s, &last, 1);
    if (fsync(s->fd) != 0)
        s->failed = 1;
    if (close(s->fd) != 0)
        s->failed = 1;
    int failed = s->failed;
    bbs_buf_free(&s->b);
    free(s);
    if (failed || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write the state file %s: %s", path,
                 errno ? strerror(errno) : "out of memory");
        unlink(tmp);
        return -1;
    }
    return 0;
}

int bbs_state_load(const char *path, bbs_map_for_fn map_for, void *arg, uint64_t *nfiles,
                   uint64_t *incarnation, char *err, size_t errlen)
{
    char magic[sizeof(STATE_MAGIC)];
    uint8_t hdr[4], crc[4];
    uint8_t *msg = NULL;
    long at = 0;
    int rc = -1;
    char *last = NULL;          /* a file's messages are saved together */
    FILE *f = fopen(path, "r");

    *nfiles = 0;
    *incarnation = 0;
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read the state file %s: %s", path, strerror(errno));
        return -1;
    }
    _Static_assert(sizeof(STATE_MAGIC) == sizeof(STATE_MAGIC_V1), "one magic length");
    uint8_t inc[8];
    int v1 = 0;
    if (fread(magic, 1, strlen(STATE_MAGIC), f) != strlen(STATE_MAGIC)
        || (memcmp(magic, STATE_MAGIC, strlen(STATE_MAGIC)) != 0
            && !(v1 = memcmp(magic, STATE_MAGIC_V1, strlen(STATE_MAGIC_V1)) == 0))) {
        snprintf(err, errlen, "%s is not a bbserver state file; move it away to start "
                 "empty (pending logs are replayed from their seals)", path);
        goto out;
    }
    if (!v1) {
        if (fread(inc, 8, 1, f) != 1)
            goto corrupt;
        *incarnation = logfs_get64(inc);
    }
    for (;;) {
        at = ftell(f);
        if (fread(hdr, 4, 1, f) != 1)
            goto corrupt;
        uint32_t len = logfs_get32(hdr);
        if (len == 0)
            break;
        if (len > BBS_MAX_MSG)
            goto corrupt;
        uint8_t *m = realloc(msg, len + 8);     /* (+ the clock an upgrade adds) */
        if (!m) {
            snprintf(err, errlen, "out of memory loading %s", path);
            goto out;
        }
        msg = m;
        if (fread(msg, len, 1, f) != 1 || fread(crc, 4, 1, f) != 1
            || logfs_crc32c_unmask(logfs_get32(crc)) != logfs_crc32c(msg, len))
            goto corrupt;
        /* A state saved by an older server holds its version's attaches:
         * read them as this version's while the layout is the same (a
         * server of another version is stopped with SIGTERM to upgrade). */
        size_t n = bbs_upgrade_attach(msg, len, len + 8);
        struct bbs_request r;
        char why[256];
        if (bbs_dec_request(msg, n, &r, why, sizeof(why)) != BBS_OK || r.op != BBS_ATTACH)
            goto corrupt;
        bbs_serve_clock(r.clock);       /* stamps given before the restart stay behind */
        struct bbs_ownmap *map = map_for(arg, r.file);
        for (uint32_t i = 0; i < r.nrecords; i++) {
            struct bbs_extent e;
            bbs_record(&r, i, &e);
            if (bbs_own_attach(map, r.file, &r.writer, &e, 1) != BBS_OK) {
                snprintf(err, errlen, "out of memory loading %s", path);
                goto out;
            }
        }
        if (r.size && bbs_own_grow(map, r.file, r.size) != BBS_OK) {
            snprintf(err, errlen, "out of memory loading %s", path);
            goto out;
        }
        if (!last || strcmp(last, r.file) != 0) {
            free(last);
            last = strdup(r.file);
            ++*nfiles;
        }
    }
    rc = 0;
    goto out;
  corrupt:
    snprintf(err, errlen, "the state file %s is damaged at byte %ld; move it away to start "
             "empty (pending logs are replayed from their seals)", path, at);
  out:
    free(last);
    free(msg);
    fclose(f);
    return rc;
}
