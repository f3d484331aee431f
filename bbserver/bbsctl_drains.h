/*
 * bbsctl's commands about background drains (docs/bbserver.md): queue
 * them, list them, and wait until files are canonical.  Each returns
 * bbsctl's exit status: 0 done, 1 refused or failed (said on stderr),
 * 3 no answer or timed out.
 */
#ifndef BBSERVER_BBSCTL_DRAINS_H
#define BBSERVER_BBSCTL_DRAINS_H

#include <stdint.h>

#include "client.h"

/* Queue each file's drain; print where each stands. */
int bbsctl_drain(struct bbs_client *cl, const uint8_t *token, int nfiles, char **files);

/* Print the server's drains (file NULL: all of them). */
int bbsctl_status(struct bbs_client *cl, const uint8_t *token, const char *file);

/*
 * Wait until every file is canonical: its drain on this server is done
 * (or it never had one) and no session of it is pending.  A failed drain,
 * or pending sessions nobody drains, settle a file with status 1 (named,
 * with what to run).  Prints "canonical FILE" for each that made it.
 * @param cl       NULL where no server runs: the sessions alone tell
 * @param server   the server's name in messages
 * @param timeout  seconds (0: no limit); 3 when it runs out
 */
int bbsctl_wait(struct bbs_client *cl, const uint8_t *token, const char *server,
                double timeout, int nfiles, char **files);

#endif
