/*
 * Reads of other writers' bytes through the server's view (ad_bbfs_server.c
 * builds the view): a datalog on this node is read directly; another
 * node's through that node's bbserver, batched at the end of each read
 * call (pieces close together in a log go in one request) and kept in a
 * cache of aligned chunks (bbfs_read_cache).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../bbserver/proto.h"
#include "ad_bbfs_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int local_log(ADIOI_BBFS_Server * s, const char *path)
{
    for (int i = 0; i < s->nlogs; i++)
        if (strcmp(s->logs[i].path, path) == 0)
            return s->logs[i].fd;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    s->logs = ADIOI_Realloc(s->logs, sizeof(*s->logs) * (s->nlogs + 1));
    s->logs[s->nlogs].path = ADIOI_Strdup(path);
    s->logs[s->nlogs].fd = fd;
    s->nlogs++;
    return fd;
}

int ADIOI_BBFS_Server_is_own(const ADIOI_BBFS_File * bf, int writer)
{
    const ADIOI_BBFS_Server *s = bf->srv;
    return writer >= 0 && writer < s->nwriters && s->writers[writer].session == bf->file_id
        && (int) s->writers[writer].rank == s->rank;
}

int ADIOI_BBFS_Server_read(ADIOI_BBFS_File * bf, int writer, uint64_t pos, void *buf,
                           size_t len)
{
    static char myname[] = "ADIOI_BBFS_SERVER_READ";
    ADIOI_BBFS_Server *s = bf->srv;
    char err[1024];

    if (writer < 0 || writer >= s->nwriters)
        return ADIOI_BBFS_Err_server(myname, __LINE__, "a piece of the view names no writer");
    const struct bbs_writer *w = &s->writers[writer];
    int fd = s->force_remote ? -1 : local_log(s, w->datalog);
    if (fd >= 0) {
        size_t got = 0;
        while (got < len) {
            ssize_t k = pread(fd, (char *) buf + got, len - got, (off_t) (pos + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                snprintf(err, sizeof(err), "reading %s at %llu: %s", w->datalog,
                         (unsigned long long) (pos + got), k < 0 ? strerror(errno)
                         : "shorter than the server's map says");
                return ADIOI_BBFS_Err_server(myname, __LINE__, err);
            }
            got += (size_t) k;
        }
        return MPI_SUCCESS;
    }
    /* another node's log (or forced): through that node's server, at the
     * flush, with its neighbours in the log */
    if (s->nfar == s->capfar) {
        s->capfar = s->capfar ? 2 * s->capfar : 64;
        s->far = ADIOI_Realloc(s->far, s->capfar * sizeof(*s->far));
    }
    s->far[s->nfar++] = (struct far_read) { writer, pos, buf, len };
    return MPI_SUCCESS;
}

static int by_log_position(const void *a, const void *b)
{
    const struct far_read *x = a, *y = b;
    if (x->writer != y->writer)
        return x->writer < y->writer ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static struct chunk *cached(ADIOI_BBFS_Server * s, const char *datalog, uint64_t idx)
{
    for (size_t i = 0; i < s->ncache; i++)
        if (s->cache[i].datalog && s->cache[i].idx == idx
            && strcmp(s->cache[i].datalog, datalog) == 0)
            return &s->cache[i];
    return NULL;
}

/* Chunk idx of writer w's log, with at least need bytes, from the cache or
 * its node's server.  A cached chunk shorter than that was fetched when
 * the log was: only what the log has grown by since comes (a program that
 * reads back each step's writes would otherwise fetch the chunk's earlier
 * steps again at every step). */
static int chunk_of(ADIOI_BBFS_Server * s, int writer, uint64_t idx, uint64_t need,
                    struct chunk **out)
{
    const struct bbs_writer *w = &s->writers[writer];
    uint64_t lo = idx * ADIOI_BBFS_READ_CHUNK, hi = lo + ADIOI_BBFS_READ_CHUNK;
    struct chunk *c = cached(s, w->datalog, idx);
    if (c && c->len >= need) {
        *out = c;
        return MPI_SUCCESS;
    }
    if (hi > s->log_end[writer])
        hi = s->log_end[writer] > lo + need ? s->log_end[writer] : lo + need;
    uint64_t have = c ? c->len : 0;
    if (!c) {
        c = &s->cache[s->next_out];     /* the oldest goes */
        s->next_out = (s->next_out + 1) % s->ncache;
        c->data = c->data ? c->data : ADIOI_Malloc(ADIOI_BBFS_READ_CHUNK);
    }
    ADIOI_BBFS_FREE(c->datalog);
    c->datalog = NULL;          /* (free until the read succeeds) */
    int err = ADIOI_BBFS_Nodes_read(&s->nodes, w->node, w->datalog, lo + have, c->data + have,
                                    hi - lo - have);
    if (err != MPI_SUCCESS)
        return err;
    c->datalog = ADIOI_Strdup(w->datalog);
    c->idx = idx;
    c->len = hi - lo;
    *out = c;
    return MPI_SUCCESS;
}

/* One far read through the cache, chunk by chunk. */
static int read_cached(ADIOI_BBFS_Server * s, const struct far_read *f)
{
    for (uint64_t at = f->pos; at < f->pos + f->len;) {
        uint64_t idx = at / ADIOI_BBFS_READ_CHUNK, in = at - idx * ADIOI_BBFS_READ_CHUNK;
        uint64_t n = ADIOI_BBFS_READ_CHUNK - in < f->pos + f->len - at ? ADIOI_BBFS_READ_CHUNK - in : f->pos + f->len - at;
        struct chunk *c;
        int err = chunk_of(s, f->writer, idx, in + n, &c);
        if (err != MPI_SUCCESS)
            return err;
        memcpy(f->dest + (at - f->pos), c->data + in, n);
        at += n;
    }
    return MPI_SUCCESS;
}

/* Pieces of one writer's log closer than this are read with one request
 * (the bytes between them come along): a strided write is logged
 * contiguously, so a reader of its blocks asks once, not once per block. */
#define FAR_GAP ((uint64_t) 64 << 10)

void ADIOI_BBFS_Server_reads_begin(ADIOI_BBFS_Server * s, long long cache_bytes)
{
    s->ncache = (size_t) (cache_bytes / (long long) ADIOI_BBFS_READ_CHUNK);
    s->cache = s->ncache ? ADIOI_Calloc(s->ncache, sizeof(*s->cache)) : NULL;
}

void ADIOI_BBFS_Server_reads_prune(ADIOI_BBFS_Server * s)
{
    int kept = 0;
    for (int i = 0; i < s->nlogs; i++) {
        int named = 0;
        for (int w = 0; w < s->nwriters && !named; w++)
            named = strcmp(s->writers[w].datalog, s->logs[i].path) == 0;
        if (named) {
            s->logs[kept++] = s->logs[i];
            continue;
        }
        close(s->logs[i].fd);
        ADIOI_Free(s->logs[i].path);
    }
    s->nlogs = kept;
}

void ADIOI_BBFS_Server_reads_end(ADIOI_BBFS_Server * s)
{
    for (int i = 0; i < s->nlogs; i++) {
        close(s->logs[i].fd);
        ADIOI_Free(s->logs[i].path);
    }
    ADIOI_BBFS_FREE(s->logs);
    ADIOI_BBFS_FREE(s->far);
    for (size_t i = 0; i < s->ncache; i++) {
        ADIOI_BBFS_FREE(s->cache[i].datalog);
        ADIOI_BBFS_FREE(s->cache[i].data);
    }
    ADIOI_BBFS_FREE(s->cache);
}

int ADIOI_BBFS_Server_flush(ADIOI_BBFS_File * bf, int discard)
{
    ADIOI_BBFS_Server *s = bf->srv;
    int err = MPI_SUCCESS;
    char *span = NULL;

    if (!s || s->nfar == 0)
        return MPI_SUCCESS;
    if (discard) {
        s->nfar = 0;
        return MPI_SUCCESS;
    }
    qsort(s->far, s->nfar, sizeof(*s->far), by_log_position);
    if (s->ncache) {            /* small reads through the cache */
        size_t keep = 0;
        for (size_t i = 0; i < s->nfar && err == MPI_SUCCESS; i++)
            if (s->far[i].len * 2 < s->ncache * ADIOI_BBFS_READ_CHUNK)
                err = read_cached(s, &s->far[i]);
            else
                s->far[keep++] = s->far[i];
        s->nfar = err == MPI_SUCCESS ? keep : 0;
    }
    for (size_t i = 0, j; i < s->nfar && err == MPI_SUCCESS; i = j) {
        uint64_t lo = s->far[i].pos, hi = lo + s->far[i].len;
        for (j = i + 1; j < s->nfar && s->far[j].writer == s->far[i].writer
             && s->far[j].pos <= hi + FAR_GAP
             && (s->far[j].pos + s->far[j].len > hi ? s->far[j].pos + s->far[j].len : hi) - lo
             <= BBS_MAX_READ; j++)
            if (s->far[j].pos + s->far[j].len > hi)
                hi = s->far[j].pos + s->far[j].len;
        const struct bbs_writer *w = &s->writers[s->far[i].writer];
        if (j == i + 1) {       /* alone: straight into place */
            err = ADIOI_BBFS_Nodes_read(&s->nodes, w->node, w->datalog, lo, s->far[i].dest,
                                        s->far[i].len);
            continue;
        }
        span = ADIOI_Realloc(span, (size_t) (hi - lo));
        err = ADIOI_BBFS_Nodes_read(&s->nodes, w->node, w->datalog, lo, span, hi - lo);
        for (size_t k = i; k < j && err == MPI_SUCCESS; k++)
            memcpy(s->far[k].dest, span + (s->far[k].pos - lo), s->far[k].len);
    }
    ADIOI_BBFS_FREE(span);
    s->nfar = 0;
    return err;
}
