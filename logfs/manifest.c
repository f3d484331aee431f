/*
 * Manifest text: format and parse (see manifest.h for the layout).
 */
#include "manifest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int logfs_manifest_init(struct logfs_manifest *m, uint64_t file_id, uint32_t nwriters)
{
    memset(m, 0, sizeof(*m));
    if (nwriters == 0)
        return LOGFS_EINVAL;
    m->w = calloc(nwriters, sizeof(*m->w));
    if (!m->w)
        return LOGFS_ENOMEM;
    m->file_id = file_id;
    m->nwriters = nwriters;
    return LOGFS_OK;
}

/* A manifest names files that a replay reads and then removes: only
 * absolute paths of metalogs, without "." or ".." components, so that a
 * damaged or planted manifest cannot make a replay remove /etc/passwd. */
int logfs_manifest_metalog_ok(const char *metalog)
{
    size_t n = strlen(metalog), k = strlen(".metalog");
    if (metalog[0] != '/' || strchr(metalog, '\n') || !logfs_is_metalog_name(metalog)
        || metalog[n - k - 1] == '/')
        return 0;
    for (const char *c = metalog; (c = strchr(c, '/')) != NULL; c++)
        if (!strncmp(c, "/./", 3) || !strncmp(c, "/../", 4))
            return 0;
    return 1;
}

int logfs_manifest_set(struct logfs_manifest *m, uint32_t rank, const char *host,
                       const char *metalog)
{
    if (rank >= m->nwriters || strlen(host) >= LOGFS_MANIFEST_HOST_MAX || strpbrk(host, " \t\n")
        || !host[0] || !logfs_manifest_metalog_ok(metalog))
        return LOGFS_EINVAL;
    char *copy = strdup(metalog);
    if (!copy)
        return LOGFS_ENOMEM;
    free(m->w[rank].metalog);
    m->w[rank].metalog = copy;
    snprintf(m->w[rank].host, sizeof(m->w[rank].host), "%s", host);
    return LOGFS_OK;
}

int logfs_manifest_set_server(struct logfs_manifest *m, uint32_t rank, const char *server)
{
    if (rank >= m->nwriters || strlen(server) >= LOGFS_MANIFEST_HOST_MAX
        || strpbrk(server, " \t\n"))
        return LOGFS_EINVAL;
    snprintf(m->w[rank].server, sizeof(m->w[rank].server), "%s", server);
    return LOGFS_OK;
}

int logfs_manifest_set_map(struct logfs_manifest *m, const char *server)
{
    if (strlen(server) >= LOGFS_MANIFEST_HOST_MAX || strpbrk(server, " \t\n"))
        return LOGFS_EINVAL;
    snprintf(m->map, sizeof(m->map), "%s", server);
    return LOGFS_OK;
}

int logfs_manifest_format(const struct logfs_manifest *m, char **text, size_t *len)
{
    size_t cap = 128 + strlen(m->map);
    for (uint32_t r = 0; r < m->nwriters; r++) {
        if (!m->w[r].metalog)
            return LOGFS_EINVAL;
        cap += 96 + strlen(m->w[r].host) + strlen(m->w[r].server) + strlen(m->w[r].metalog);
    }
    char *out = malloc(cap);
    if (!out)
        return LOGFS_ENOMEM;
    size_t n = (size_t) snprintf(out, cap, "bbfs-manifest %d\nfile_id %016" PRIx64 "\nwriters %" PRIu32 "\n",
                                 LOGFS_MANIFEST_VERSION, m->file_id, m->nwriters);
    for (uint32_t r = 0; r < m->nwriters; r++)
        n += (size_t) snprintf(out + n, cap - n, "writer %" PRIu32 " %s %" PRIu64 " %s\n", r,
                               m->w[r].host, m->w[r].epochs, m->w[r].metalog);
    for (uint32_t r = 0; r < m->nwriters; r++)
        if (m->w[r].server[0])
            n += (size_t) snprintf(out + n, cap - n, "server %" PRIu32 " %s\n", r,
                                   m->w[r].server);
    if (m->map[0])
        n += (size_t) snprintf(out + n, cap - n, "map %s\n", m->map);
    if (m->durable)
        n += (size_t) snprintf(out + n, cap - n, "durable\n");
    if (m->lazy)
        n += (size_t) snprintf(out + n, cap - n, "lazy\n");
    if (m->replayed)
        n += (size_t) snprintf(out + n, cap - n, "replayed\n");
    *text = out;
    *len = n;
    return LOGFS_OK;
}

/* Next line of [*p, end) without its newline, NUL-terminated in buf. */
static int next_line(const char **p, const char *end, char *buf, size_t cap)
{
    const char *nl = memchr(*p, '\n', (size_t) (end - *p));
    size_t n;
    if (!nl)
        return -1;              /* no complete line: a torn manifest */
    n = (size_t) (nl - *p);
    if (n >= cap)
        return -1;
    memcpy(buf, *p, n);
    buf[n] = '\0';
    *p = nl + 1;
    return 0;
}

int logfs_manifest_parse(const char *text, size_t len, struct logfs_manifest *m,
                         struct logfs_error *err)
{
    const char *p = text, *end = text + len;
    char line[8192], host[LOGFS_MANIFEST_HOST_MAX], path[8000];
    int version, lineno = 1, rc;
    uint64_t id;
    uint32_t n, rank;

    memset(m, 0, sizeof(*m));
    if (next_line(&p, end, line, sizeof(line)) || sscanf(line, "bbfs-manifest %d", &version) != 1)
        return logfs_fail(err, LOGFS_EFORMAT, 0, "not a bbfs manifest (first line \"%.40s\")",
                          len ? line : "");
    if (version < 1 || version > LOGFS_MANIFEST_VERSION)
        return logfs_fail(err, LOGFS_EVERSION, 0, "manifest version %d, this bbfs reads 1 to %d",
                          version, LOGFS_MANIFEST_VERSION);
    lineno++;
    if (next_line(&p, end, line, sizeof(line)) || sscanf(line, "file_id %" SCNx64, &id) != 1)
        return logfs_fail(err, LOGFS_ECORRUPT, 0, "manifest line %d: expected file_id", lineno);
    lineno++;
    if (next_line(&p, end, line, sizeof(line)) || sscanf(line, "writers %" SCNu32, &n) != 1
        || n == 0 || n > (1u << 24))
        return logfs_fail(err, LOGFS_ECORRUPT, 0, "manifest line %d: expected writers N", lineno);
    /* every writer takes a line of at least 8 bytes: a count the text
     * cannot hold is damage, and must not cost an allocation that large
     * (found by fuzzing: "writers 9999999" asked for 2.7 GB) */
    if (n > (size_t) (end - p) / 8)
        return logfs_fail(err, LOGFS_ECORRUPT, 0, "manifest line %d: %" PRIu32 " writers, but "
                          "only %zu bytes follow", lineno, n, (size_t) (end - p));
    if ((rc = logfs_manifest_init(m, id, n)) != LOGFS_OK)
        return logfs_fail(err, rc, 0, "manifest: cannot allocate %" PRIu32 " writers", n);
    for (uint32_t k = 0; k < n; k++) {
        lineno++;
        uint64_t epochs = 0;
        int ok = next_line(&p, end, line, sizeof(line)) == 0
            && (version == 1
                ? sscanf(line, "writer %" SCNu32 " %255s %7999[^\n]", &rank, host, path) == 3
                : sscanf(line, "writer %" SCNu32 " %255s %" SCNu64 " %7999[^\n]", &rank, host,
                         &epochs, path) == 4)
            && rank == k && logfs_manifest_set(m, rank, host, path) == LOGFS_OK;
        if (!ok) {
            logfs_manifest_free(m);
            return logfs_fail(err, LOGFS_ECORRUPT, 0,
                              "manifest line %d: expected \"writer %" PRIu32 " HOST %s/PATH.metalog\""
                              " (an absolute path without . or .. parts)",
                              lineno, k, version == 1 ? "" : "EPOCHS ");
        }
        m->w[k].epochs = epochs;
    }
    /* Then (version 4) the servers, by rank, (version 5) the map's,
     * (version 6) "durable", (version 7) "lazy", and "replayed".  Anything else is the tail of a longer text this one was
     * written over (a writer killed before it trimmed the file). */
    int have = next_line(&p, end, line, sizeof(line)) == 0;
    for (int64_t last = -1; version >= 4 && have; have = next_line(&p, end, line,
                                                                    sizeof(line)) == 0) {
        if (sscanf(line, "server %" SCNu32 " %255s", &rank, host) != 2 || (int64_t) rank <= last
            || logfs_manifest_set_server(m, rank, host) != LOGFS_OK)
            break;
        last = rank;
    }
    if (version >= 5 && have && sscanf(line, "map %255s", host) == 1
        && logfs_manifest_set_map(m, host) == LOGFS_OK)
        have = next_line(&p, end, line, sizeof(line)) == 0;
    if (version >= 6 && have && !strcmp(line, "durable")) {
        m->durable = 1;
        have = next_line(&p, end, line, sizeof(line)) == 0;
    }
    if (version >= 7 && have && !strcmp(line, "lazy")) {
        m->lazy = 1;
        have = next_line(&p, end, line, sizeof(line)) == 0;
    }
    if (version >= 3 && have && !strcmp(line, "replayed"))
        m->replayed = 1;
    return LOGFS_OK;
}

void logfs_manifest_free(struct logfs_manifest *m)
{
    for (uint32_t r = 0; m->w && r < m->nwriters; r++)
        free(m->w[r].metalog);
    free(m->w);
    memset(m, 0, sizeof(*m));
}

int logfs_manifest_path(const char *path, char *out, size_t len)
{
    return logfs_hidden_sibling(path, ".bbfs-manifest", out, len);
}

char *logfs_manifest_canary(const char *metalog0)
{
    return logfs_sibling_path(metalog0, "lazy");
}

int logfs_manifest_lazy_unmade_ok(const struct logfs_manifest *m)
{
    if (!m->lazy || !m->nwriters)
        return 0;
    char *canary = logfs_manifest_canary(m->w[0].metalog);
    int here = canary && access(canary, F_OK) == 0;
    free(canary);
    return here;
}

void logfs_manifest_canary_remove(const char *metalog0)
{
    char *canary = logfs_manifest_canary(metalog0);
    if (canary)
        unlink(canary);
    free(canary);
}
