/*
 * bbsctl: talk to a running bbserver from a shell, one request per run:
 * health checks in job scripts, and the tests' client.  See docs/bbserver.md.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bbsctl_drains.h"
#include "client.h"
#include "token.h"

struct block {
    uint64_t start, len;
    uint32_t writer;
    uint64_t pos;
};

static int by_start(const void *a, const void *b)
{
    const struct block *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bbsctl [-S HOST:PORT] [-t TOKEN_FILE] [-T SECONDS] COMMAND [ARGS]\n"
            "Send one request to a bbserver and print the answer.\n"
            "\n"
            "  -S, --server HOST:PORT   the server (default $BBFS_SERVER, else this\n"
            "                           node's: LOGDIR/.bbserver.HOST.addr, LOGDIR\n"
            "                           $BBFS_LOGDIR, $TMPDIR or /tmp, as the driver's)\n"
            "  -t, --token-file FILE    token (default $BBFS_SERVER_TOKEN,\n"
            "                           $BBFS_SERVER_TOKEN_FILE, ~/.bbfs/token)\n"
            "  -T, --timeout SECONDS    wait this long for an answer (default 10);\n"
            "                           wait: this long in all (default: no limit)\n"
            "\n"
            "commands:\n"
            "  ping                       version, pid, files held, requests served\n"
            "  stat FILE                  size, ranges and writers attached to FILE\n"
            "  query FILE [START END]     owners of [START, END) (default: the whole file)\n"
            "  attach FILE SESSION RANK NODE DATALOG OFF LEN POS [COUNT STRIDE]\n"
            "  detach FILE SESSION RANK START END\n"
            "  replayed FILE [SESSION...] forget the sessions' bytes in FILE's map (their\n"
            "                             logs were replayed); with none, the whole map\n"
            "  read PATH OFF LEN          LEN bytes of a log on the server's node, to stdout\n"
            "  export METALOG [salvage]   the metalog's sealed length (and what salvage lost)\n"
            "  remove METALOG             remove a writer's log files (after a replay)\n"
            "  drain FILE...              queue the files' drains: the server's drain thread\n"
            "                             replays their pending logs into them\n"
            "  wait FILE...               until every FILE is canonical: its drain is done\n"
            "                             and no session of it is pending (exit 1 naming\n"
            "                             the file and the error when a drain failed)\n"
            "  status [FILE]              the server's drains: state, MiB done and in all,\n"
            "                             tries, seconds since queued (or since ended)\n"
            "  hold SECONDS               stay connected this long, then ping again (tests)\n"
            "\n"
            "Exit status: 0 done, 1 the server refused or failed (wait: a drain\n"
            "failed), 2 bad usage, 3 no answer (not running, unreachable, timed out).\n");
}

/* This node's server, as the driver finds (or starts) it for a job:
 * the address file it keeps in the log directory.  A job script's
 * "bbsctl wait FILE" needs nothing else.  @return 1 and the address, or 0
 * and why not in @p err. */
static int node_address(char *addr, size_t len, char *err, size_t errlen)
{
    const char *dir = getenv("BBFS_LOGDIR");
    char host[256], file[4400];
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    if (gethostname(host, sizeof(host) - 1) != 0) {
        snprintf(err, errlen, "cannot name this host: %s", strerror(errno));
        return 0;
    }
    host[sizeof(host) - 1] = '\0';
    snprintf(file, sizeof(file), "%s/.bbserver.%s.addr", dir, host);
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(err, errlen, "this node has none running (no %.800s: %s; is BBFS_LOGDIR the "
                 "jobs' log directory?)", file, strerror(errno));
        return 0;
    }
    int got = fgets(addr, (int) len, f) != NULL;
    fclose(f);
    addr[got ? strcspn(addr, " \t\r\n") : 0] = '\0';
    if (!addr[0])
        snprintf(err, errlen, "%.800s is empty", file);
    return addr[0] != '\0';
}

static uint64_t num(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end || !*s) {
        fprintf(stderr, "bbsctl: %s is not a number\n", s);
        exit(2);
    }
    return v;
}

static void need(int argc, int want, const char *cmd)
{
    if (argc != want) {
        fprintf(stderr, "bbsctl: %s takes %d arguments\n", cmd, want - 1);
        usage(stderr);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"server", required_argument, NULL, 'S'},
        {"token-file", required_argument, NULL, 't'},
        {"timeout", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    const char *server = getenv("BBFS_SERVER"), *token_file = NULL;
    double timeout = 10;
    int timeout_given = 0;
    uint8_t token[BBS_TOKEN_LEN];
    char err[1024], source[4096];
    int c;

    while ((c = getopt_long(argc, argv, "+S:t:T:h", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            server = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'T':
            timeout = atof(optarg);
            timeout_given = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    argc -= optind;
    argv += optind;
    if (argc < 1) {
        usage(stderr);
        return 2;
    }
    char node_server[512];
    int node_default = !server || !*server;
    if (node_default && node_address(node_server, sizeof(node_server), err, sizeof(err)))
        server = node_server;
    /* (wait needs no server where nothing is left to drain: the files'
     * sessions say whether they are canonical) */
    int is_wait = !strcmp(argv[0], "wait") && argc >= 2;
    if (!server || !*server) {
        if (is_wait)
            return bbsctl_wait(NULL, NULL, "no bbserver on this node", timeout_given ? timeout
                               : 0, argc - 1, argv + 1);
        fprintf(stderr, "bbsctl: no server: %s; give -S HOST:PORT or set BBFS_SERVER\n", err);
        return 3;
    }
    if (bbs_token_find(token_file, 0, token, source, sizeof(source), err, sizeof(err)) != 0) {
        fprintf(stderr, "bbsctl: %s\n", err);
        return 2;
    }

    const char *cmd = argv[0];
    struct bbs_buf b = { 0 };
    struct bbs_client *cl;
    struct bbs_reply r;
    int enc;
    /* Check the arguments before connecting. */
    if (!strcmp(cmd, "ping"))
        need(argc, 1, cmd);
    else if (!strcmp(cmd, "stat"))
        need(argc, 2, cmd);
    else if (!strcmp(cmd, "replayed")) {
        if (argc < 2)
            need(argc, 2, cmd);
    }
    else if (!strcmp(cmd, "query")) {
        if (argc != 2)
            need(argc, 4, cmd);
    } else if (!strcmp(cmd, "attach")) {
        if (argc != 9)
            need(argc, 11, cmd);
    } else if (!strcmp(cmd, "detach"))
        need(argc, 6, cmd);
    else if (!strcmp(cmd, "read"))
        need(argc, 4, cmd);
    else if (!strcmp(cmd, "export")) {
        if (argc != 3)
            need(argc, 2, cmd);
    } else if (!strcmp(cmd, "hold") || !strcmp(cmd, "remove"))
        need(argc, 2, cmd);
    else if (!strcmp(cmd, "drain") || !strcmp(cmd, "wait")) {
        if (argc < 2)
            need(argc, 2, cmd);
    } else if (!strcmp(cmd, "status")) {
        if (argc > 2)
            need(argc, 2, cmd);
    }
    else {
        fprintf(stderr, "bbsctl: unknown command %s\n", cmd);
        usage(stderr);
        return 2;
    }
    double answer_timeout = !strcmp(cmd, "wait") ? 10 : timeout;
    if (bbs_client_open(server, token, answer_timeout, &cl, err, sizeof(err)) != 0) {
        /* (a server that answered and refused is not a server gone) */
        int answered = strstr(err, "refused") || strstr(err, "another bbfs build");
        /* (the node's server gone, as with its job: what is left to drain
         * is pending, and said so) */
        if (is_wait && node_default && !answered)
            return bbsctl_wait(NULL, NULL, "no bbserver answering on this node",
                               timeout_given ? timeout : 0, argc - 1, argv + 1);
        fprintf(stderr, "bbsctl: %s\n", err);
        return answered ? 1 : 3;
    }
    int drains_rc = -1;
    if (!strcmp(cmd, "drain"))
        drains_rc = bbsctl_drain(cl, token, argc - 1, argv + 1);
    else if (!strcmp(cmd, "wait"))
        drains_rc = bbsctl_wait(cl, token, server, timeout_given ? timeout : 0, argc - 1,
                                argv + 1);
    else if (!strcmp(cmd, "status"))
        drains_rc = bbsctl_status(cl, token, argc == 2 ? argv[1] : NULL);
    if (drains_rc >= 0) {
        bbs_client_close(cl);
        return drains_rc;
    }
    if (!strcmp(cmd, "hold")) {
        printf("connected\n");
        fflush(stdout);
        sleep((unsigned) num(argv[1]));
        cmd = "ping";
    }
    uint64_t id = bbs_client_next_id(cl);
    /* Maps know a file by its real path, as the driver names it; a name
     * that is not there (a test's made-up one) is taken as it is. */
    char real[PATH_MAX];
    const char *file = argc > 1 && realpath(argv[1], real) ? real : argv[1];
    if (!strcmp(cmd, "ping"))
        enc = bbs_enc_ping(&b, id, token);
    else if (!strcmp(cmd, "stat"))
        enc = bbs_enc_stat(&b, id, token, file);
    else if (!strcmp(cmd, "replayed")) {
        uint32_t n = (uint32_t) (argc - 2);
        uint64_t *sessions = calloc(n ? n : 1, sizeof(*sessions));
        for (uint32_t i = 0; sessions && i < n; i++)
            sessions[i] = num(argv[2 + i]);
        enc = sessions ? bbs_enc_replayed(&b, id, token, file, sessions, n) : -1;
        free(sessions);
    }
    else if (!strcmp(cmd, "query"))
        enc = bbs_enc_query(&b, id, token, file, argc == 4 ? num(argv[2]) : 0,
                            argc == 4 ? num(argv[3]) : UINT64_MAX);
    else if (!strcmp(cmd, "attach")) {
        struct bbs_writer w = { num(argv[2]), (uint32_t) num(argv[3]), argv[4], argv[5] };
        struct bbs_extent e = { num(argv[6]), num(argv[7]), argc == 11 ? num(argv[9]) : 1,
            argc == 11 ? num(argv[10]) : 0, num(argv[8])
        };
        enc = bbs_enc_attach(&b, id, token, file, &w, &e, 1, 0, 0);
    } else if (!strcmp(cmd, "detach")) {
        struct bbs_writer w = { num(argv[2]), (uint32_t) num(argv[3]), "-", "-" };
        enc = bbs_enc_detach(&b, id, token, file, &w, num(argv[4]), num(argv[5]));
    } else if (!strcmp(cmd, "export"))
        enc = bbs_enc_export(&b, id, token, argv[1], argc == 3 && !strcmp(argv[2], "salvage"));
    else if (!strcmp(cmd, "remove"))
        enc = bbs_enc_remove(&b, id, token, argv[1]);
    else
        enc = bbs_enc_read(&b, id, token, argv[1], num(argv[2]), num(argv[3]));
    if (enc != 0) {
        fprintf(stderr, "bbsctl: out of memory\n");
        return 1;
    }
    if (bbs_client_call(cl, &b, &r, err, sizeof(err)) != 0) {
        fprintf(stderr, "bbsctl: %s\n", err);
        bbs_client_close(cl);
        return 3;
    }
    int rc = 0;
    if (r.status != BBS_OK) {
        fprintf(stderr, "bbsctl: %s: %s: %s\n", cmd, bbs_status_str(r.status), r.msg);
        rc = 1;
    } else if (!strcmp(cmd, "ping")) {
        printf("version %u pid %u files %" PRIu64 " refused %" PRIu64, r.version, r.pid,
               r.nfiles, r.refused);
        for (int op = 1; op < BBS_NUM_OPS; op++)
            printf(" %s %" PRIu64, bbs_op_name(op), r.requests[op]);
        printf("\n");
    } else if (!strcmp(cmd, "stat"))
        printf("size %" PRIu64 " ranges %" PRIu64 " writers %u\n", r.size, r.nranges,
               r.nwriters);
    else if (!strcmp(cmd, "query")) {
        struct bbs_writer *w = calloc(r.nwriters ? r.nwriters : 1, sizeof(*w));
        struct block *bl = calloc(r.nblocks ? r.nblocks : 1, sizeof(*bl));
        if (!w || !bl) {
            fprintf(stderr, "bbsctl: out of memory for %" PRIu64 " pieces\n", r.nblocks);
            return 1;
        }
        bbs_reply_writers(&r, w);
        /* records of several writers interleave: one line per piece, in
         * file order */
        size_t nb = 0;
        for (uint32_t i = 0; i < r.npieces; i++) {
            struct bbs_piece p;
            bbs_reply_piece(&r, i, &p);
            for (uint64_t k = 0; k < p.e.count; k++)
                bl[nb++] = (struct block) { p.e.off + k * p.e.stride, p.e.len, p.writer,
                    p.e.pos + k * p.e.len };
        }
        qsort(bl, nb, sizeof(*bl), by_start);
        for (size_t i = 0; i < nb; i++)
            printf("%" PRIu64 " %" PRIu64 " session %" PRIu64 " rank %u node %s log %s pos %"
                   PRIu64 "\n", bl[i].start, bl[i].start + bl[i].len, w[bl[i].writer].session,
                   w[bl[i].writer].rank, w[bl[i].writer].node, w[bl[i].writer].datalog,
                   bl[i].pos);
        free(bl);
        if (r.more != UINT64_MAX)
            printf("more from %" PRIu64 "\n", r.more);
        free(w);
    } else if (!strcmp(cmd, "export")) {
        printf("sealed %" PRIu64 "%s%s\n", r.total, *r.warning ? " lost: " : "", r.warning);
    } else if (!strcmp(cmd, "read")) {
        if (fwrite(r.data, 1, r.len, stdout) != r.len)
            rc = 1;
    }
    bbs_buf_free(&b);
    bbs_client_close(cl);
    return rc;
}
