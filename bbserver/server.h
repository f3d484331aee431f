/*
 * The bbserver daemon: UCX transport around bbs_serve.
 *
 * One thread talks (UCX worker, listener, endpoints); idle, it sleeps in
 * epoll on the worker's event fd (ucp_worker_arm), a wake-up eventfd and a
 * signalfd.  After handling messages it polls for poll_us more, yielding
 * the core at each empty poll, before it sleeps.  Worker threads each own
 * a FIFO queue and a share of the files (by hash of the name), so one
 * file's requests run in order on one thread and the maps need no locks.
 */
#ifndef BBSERVER_SERVER_H
#define BBSERVER_SERVER_H

#include <stdint.h>

#include "proto.h"

/* Active message ids: requests to the server, replies to the client. */
#define BBS_AM_REQUEST 17
#define BBS_AM_REPLY 18

struct bbs_server_opts {
    const char *listen;         /* host or address to listen on */
    uint16_t port;              /* 0: any free port */
    uint8_t token[BBS_TOKEN_LEN];
    const char *const *logdirs; /* READ serves files below these */
    int nlogdirs;
    int workers;                /* worker threads */
    int poll_us;                /* poll this long for more before sleeping */
    const char *state;          /* saved at SIGTERM, loaded at start; NULL: none */
    const char *address_file;   /* "host:port" written here once listening */
    double idle_limit;          /* exit after this many seconds with no file and
                                 * no client; 0: never */
    const char *drain_journal;  /* files still to drain (drains.h); NULL: none */
    int drain_nice;             /* the drain threads' niceness */
    int drain_threads;          /* threads a drain uses */
    double drain_rate;          /* logged bytes per second it drains (0: no limit) */
    int verbose;
};

/* Run until SIGTERM/SIGINT (or the idle limit).  @return the exit code. */
int bbs_server_run(const struct bbs_server_opts *o);

#endif
