/*
 * The manifest: a small text file beside the canonical file that exists
 * while logs are pending.  It says which logs hold the file's newer bytes,
 * so that delete, a later open and bbfs-replay find them:
 *
 *     bbfs-manifest 2
 *     file_id 00c0ffee12345678
 *     writers 2
 *     writer 0 node17 3 /local/bb/out.dat.00c0ffee12345678.0.metalog
 *     writer 1 node17 3 /local/bb/out.dat.00c0ffee12345678.1.metalog
 *
 * Each writer line: rank, host, the epochs its log sealed when the writer
 * closed the file (0 while it has not: a writer that crashed leaves 0, and
 * its seal file says what its syncs covered), metalog path.  A replay that
 * finds fewer sealed epochs in a metalog than its manifest line promises
 * knows the log lost synced data.  Version 1 manifests (no epochs) are
 * read as epochs 0.
 *
 * Version 3 adds an optional last line, "replayed": the logs' data is in
 * the canonical file, and what is left of them only has to be removed.  A
 * replay marks its manifests so before it removes any log, so that a crash
 * while it cleans up never makes a later open replay a session again (over
 * newer data) or fail on its missing logs.
 *
 * Version 4 adds, after the writers, a line per writer whose node runs a
 * bbserver that serves its logs to other nodes ("server 1 node18:40123"),
 * so that a replay on nodes that cannot open them reaches them.
 *
 * Version 5 adds, after those, "map node17:40123": the bbserver holding the
 * file's ownership map, where the session attaches what it syncs.  Another
 * handle opened on the file meanwhile (another communicator of the job, on
 * other nodes) takes its map from there, so that both attach to and ask
 * one map.
 *
 * Version 6 adds, after those, "durable": the writers made their logs
 * durable (bbfs_durable), so whoever replays them makes the canonical file
 * durable before it removes them, whatever its own hints say.
 *
 * Version 7 adds, after those, "lazy": the writers (all on one node, in
 * one log directory) make their log files only when a byte must first
 * reach them (a release, a full buffer, a sync).  Process 0 made a canary
 * beside writer 0's metalog first (logfs_manifest_canary): while the
 * canary is there, the directory is the one the writers logged to, and a
 * writer whose metalog is missing and whose line promises no epoch made
 * none (an empty log); without it, the directory was lost, and so were
 * the logs.
 *
 * The other files of a writer's log (datalog, seal) are named after its
 * metalog (see writer.h).  Paths may not contain newlines; hosts may not
 * contain blanks.
 */
#ifndef LOGFS_MANIFEST_H
#define LOGFS_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOGFS_MANIFEST_VERSION 7
#define LOGFS_MANIFEST_HOST_MAX 256

struct logfs_manifest_writer {
    char host[LOGFS_MANIFEST_HOST_MAX]; /* where the logs are (node-local storage) */
    char *metalog;                      /* absolute path of the metalog (malloc'ed) */
    uint64_t epochs;                    /* sealed at the writer's close; 0: not closed */
    char server[LOGFS_MANIFEST_HOST_MAX]; /* its node's bbserver, host:port ("": none) */
};

struct logfs_manifest {
    uint64_t file_id;                   /* the id in every metalog header */
    uint32_t nwriters;                  /* writers, ranks 0 .. nwriters-1 */
    struct logfs_manifest_writer *w;    /* nwriters entries, by rank */
    int replayed;                       /* the data is in the file; remove the rest */
    int durable;                        /* the logs were made durable (bbfs_durable) */
    int lazy;                           /* writers make their files when first needed */
    char map[LOGFS_MANIFEST_HOST_MAX];  /* the server of the file's map ("": none) */
};

/*
 * Allocate an empty manifest for @p nwriters writers.
 * @return LOGFS_OK, LOGFS_EINVAL (0 writers), LOGFS_ENOMEM
 */
int logfs_manifest_init(struct logfs_manifest *m, uint64_t file_id, uint32_t nwriters);

/* 1 if @p metalog may be named in a manifest: absolute, ending in
 * ".metalog", without "." or ".." components or newlines. */
int logfs_manifest_metalog_ok(const char *metalog);

/* Set writer @p rank's host and metalog path (copied; it must pass
 * logfs_manifest_metalog_ok).  @return LOGFS_OK, LOGFS_EINVAL, LOGFS_ENOMEM */
int logfs_manifest_set(struct logfs_manifest *m, uint32_t rank, const char *host,
                       const char *metalog);

/* Set writer @p rank's server address (no blanks).
 * @return LOGFS_OK, LOGFS_EINVAL */
int logfs_manifest_set_server(struct logfs_manifest *m, uint32_t rank, const char *server);

/* Set the server of the file's map (no blanks).  @return LOGFS_OK, LOGFS_EINVAL */
int logfs_manifest_set_map(struct logfs_manifest *m, const char *server);

/*
 * Render @p m as text.
 * @param[out] text  malloc'ed, NUL-terminated; the caller frees it
 * @param[out] len   its length without the NUL
 * @return LOGFS_OK, LOGFS_EINVAL (a writer missing, a newline in a path), LOGFS_ENOMEM
 */
int logfs_manifest_format(const struct logfs_manifest *m, char **text, size_t *len);

/*
 * Parse manifest text.  Every line is checked; anything unexpected is
 * LOGFS_ECORRUPT with the line number in @p err.
 * @return LOGFS_OK, LOGFS_EFORMAT (not a manifest), LOGFS_EVERSION, LOGFS_ECORRUPT, LOGFS_ENOMEM
 */
int logfs_manifest_parse(const char *text, size_t len, struct logfs_manifest *m,
                         struct logfs_error *err);

/* Free what init/parse allocated; the struct may be reused. */
void logfs_manifest_free(struct logfs_manifest *m);

/* The canary of a lazy session whose writer 0 has metalog @p metalog0
 * (".lazy" in place of ".metalog"), malloc'ed; NULL if out of memory. */
char *logfs_manifest_canary(const char *metalog0);

/* Whether a lazy session's writer that promised nothing may have made no
 * log: @p m is lazy and its canary is there (the log directory is the one
 * its writers had). */
int logfs_manifest_lazy_unmade_ok(const struct logfs_manifest *m);

/* Remove the canary beside @p metalog0 (after the session's logs); one
 * already gone is fine. */
void logfs_manifest_canary_remove(const char *metalog0);

/*
 * The manifest's name for canonical file @p path: "dir/.base.bbfs-manifest".
 * @return 0, or -1 if @p out (of size @p len) is too small
 */
int logfs_manifest_path(const char *path, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
