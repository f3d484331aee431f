/* For the tests that kill a bbserver under a running job: the pid of this
 * node's server (the one its address file in BBFS_LOGDIR names). */
#ifndef TESTS_CLUSTER_NODE_SERVER_H
#define TESTS_CLUSTER_NODE_SERVER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "token.h"

/* The pid of the server whose address this node's file holds; -1 (why
 * printed) when none answers. */
static int node_server_pid(void)
{
    char host[256], addrfile[4400], addr[300] = "", err[512], src[4096];
    uint8_t token[BBS_TOKEN_LEN];
    struct bbs_client *cl;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    const char *dir = getenv("BBFS_LOGDIR");
    int pid = -1;

    gethostname(host, sizeof(host));
    snprintf(addrfile, sizeof(addrfile), "%s/.bbserver.%s.addr", dir ? dir : "/tmp", host);
    FILE *f = fopen(addrfile, "r");
    if (!f || !fgets(addr, sizeof(addr), f)) {
        fprintf(stderr, "FAIL: no server address in %s\n", addrfile);
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    addr[strcspn(addr, "\n")] = 0;
    if (bbs_token_find(NULL, 0, token, src, sizeof(src), err, sizeof(err)) == 0
        && bbs_client_open(addr, token, 10, &cl, err, sizeof(err)) == 0) {
        if (bbs_enc_ping(&b, bbs_client_next_id(cl), token) == 0
            && bbs_client_call(cl, &b, &r, err, sizeof(err)) == 0 && r.status == BBS_OK)
            pid = (int) r.pid;
        bbs_client_close(cl);
    }
    bbs_buf_free(&b);
    if (pid < 0)
        fprintf(stderr, "FAIL: server %s: %s\n", addr, err);
    return pid;
}

#endif
