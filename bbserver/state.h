/*
 * bbserver's state across a restart: at SIGTERM every file's ranges are
 * written to a state file, and loaded at the next start.  The file is a
 * sequence of ATTACH messages (the wire format, so the same decoder checks
 * it), each framed with its length and a crc32c, after a magic line and
 * (version 2) the server's incarnation; it is written under a temporary
 * name and renamed into place.  The server removes it once loaded: a crash
 * later must not bring back a map older than the one it lost.
 *
 * After a crash (no state saved) the map starts empty: the pending logs
 * are still on the nodes and their manifests name them, and the next open
 * or bbfs-replay replays them from the logs' seals, so no synced data is
 * lost; only what other processes of a still-running job had attached
 * must be attached again (docs/bbserver.md).
 */
#ifndef BBSERVER_STATE_H
#define BBSERVER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ownmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which map a loaded file goes to. */
typedef struct bbs_ownmap *(*bbs_map_for_fn)(void *arg, const char *file);

/* @return 0, or -1 with why in err. */
int bbs_state_save(const char *path, struct bbs_ownmap *const *maps, int nmaps,
                   uint64_t incarnation, char *err, size_t errlen);

/* A missing file is an empty state.  @return 0 (files loaded in *nfiles,
 * the saved incarnation in *incarnation: 0 when none, or from a version-1
 * file), or -1 with why in err (the maps may then hold part of the
 * state). */
int bbs_state_load(const char *path, bbs_map_for_fn map_for, void *arg, uint64_t *nfiles,
                   uint64_t *incarnation, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
