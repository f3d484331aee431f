/*
 * bbfs_replay=background (docs/drain.md): the close seals every process's
 * logs and leaves the session pending, as `never` does; process 0, once it
 * heard that every log is sealed, hands the file to its node's bbserver
 * (found, or started as the multi-node path starts it), whose drain
 * thread writes the canonical file while the application goes on.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../bbserver/proto.h"
#include "../../logfs/drain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ask this node's server to drain path.  The token is read once, and the
 * server found for a log directory is asked again directly at the next
 * close (finding it pings it: a round trip more per close); a call that
 * fails finds it again (it may have been restarted, or idled out and
 * started anew). */
static int ask_server(const ADIOI_BBFS_File * bf, const char *path, char *err, size_t errlen)
{
    static char known_dir[PATH_MAX], known_addr[256];
    static ADIOI_BBFS_Nodes nodes;      /* (the token, read at the first close) */
    static int have_token;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    int rc = -1;
    if (!have_token
        && !(have_token = ADIOI_BBFS_Nodes_init(&nodes, 0, err, errlen) == 0))
        return -1;
    nodes.timeout = (double) bf->hints.server_timeout;
    if (bbs_enc_drain(&b, 0, nodes.token, path) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (known_addr[0] && !strcmp(known_dir, bf->hints.logdir))
        rc = ADIOI_BBFS_Nodes_call(&nodes, known_addr, &b, &r, err, errlen);
    if (rc != 0) {
        known_addr[0] = 0;
        rc = ADIOI_BBFS_Server_find_node(&nodes, bf->hints.logdir, known_addr,
                                         sizeof(known_addr), NULL, err, errlen);
        if (rc == 0)
            rc = ADIOI_BBFS_Nodes_call(&nodes, known_addr, &b, &r, err, errlen);
        if (rc == 0)
            snprintf(known_dir, sizeof(known_dir), "%s", bf->hints.logdir);
        else
            known_addr[0] = 0;
    }
    bbs_buf_free(&b);
    return rc;
}

/* Without a server, this process drains the file before the close
 * returns: slower than the hand-over, never wrong.  The others' read
 * locks on the session go as their closes end: a busy session is tried
 * again for up to the server time-out (a handle of the file that stays
 * open replays it at its own close). */
static void drain_here(const ADIOI_BBFS_File * bf, const char *path, const char *why)
{
    struct logfs_drain_opts o = { 0 };
    struct logfs_error le = { 0 };
    double t0 = MPI_Wtime(), nap = 0.001;
    int rc;
    static int said;

    if (!said++)
        fprintf(stderr, "bbfs: %s: no bbserver to drain it in the background (%s); the close "
                "drains it instead\n", path, why);
    o.durable = bf->hints.durable;
    while ((rc = logfs_drain_file(path, &o, NULL, &le)) == LOGFS_EBUSY
           && MPI_Wtime() - t0 < (double) bf->hints.server_timeout) {
        ADIOI_BBFS_Nap(&nap, 0.1);
    }
    if (rc != LOGFS_OK && rc != LOGFS_EBUSY)
        fprintf(stderr, "bbfs: %s: the close's drain failed (%s); the logs stay pending: the "
                "next open, or bbfs-replay %s, replays them\n", path, le.msg, path);
}

void ADIOI_BBFS_Drain_hand_over(const ADIOI_BBFS_File * bf)
{
    char path[PATH_MAX], err[1024];
    /* (the server names drains by the file's real path, as bbsctl does) */
    if (!realpath(bf->canonical, path)) {
        fprintf(stderr, "bbfs: %s: %s; its logs stay pending: the next open, or bbfs-replay, "
                "replays them\n", bf->canonical, strerror(errno));
        return;
    }
    if (ask_server(bf, path, err, sizeof(err)) != 0)
        drain_here(bf, path, err);
}
