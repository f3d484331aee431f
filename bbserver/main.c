/*
 * bbserver: the per-node ownership and log server of bbfs.  Options are
 * described in docs/bbserver.md and by --help.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"
#include "token.h"

#define MAX_LOGDIRS 16

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bbserver [options]\n"
            "Serve bbfs's ownership map and this node's logs to other nodes over UCX.\n"
            "\n"
            "  -l, --listen HOST         address or name to listen on (default: this host's name)\n"
            "  -p, --port N              port (default 0: any free port; see --address-file)\n"
            "  -d, --logdir DIR          serve log reads below DIR (repeatable, up to %d;\n"
            "                            default $BBFS_LOGDIR, else $TMPDIR, else /tmp)\n"
            "  -t, --token-file FILE     clients must present the token in FILE (0600); default\n"
            "                            $BBFS_SERVER_TOKEN, $BBFS_SERVER_TOKEN_FILE, ~/.bbfs/token\n"
            "                            (created if missing)\n"
            "  -w, --workers N           worker threads (default 2)\n"
            "  -u, --poll-us US          after handling messages, poll this many microseconds\n"
            "                            for more (yielding the core) before sleeping in epoll;\n"
            "                            0 to 1000000, default 20, 0: sleep at once\n"
            "  -s, --state FILE          save the map here at SIGTERM, load it at start\n"
            "  -a, --address-file FILE   write host:port here once listening; without --port,\n"
            "                            the port a previous server wrote there is tried first\n"
            "  -i, --idle-limit SECONDS  exit after this long with no client, no file in the\n"
            "                            map and no log (.metalog) in the log directories\n"
            "                            (default 0: never)\n"
            "  -j, --drain-journal FILE  keep the files still to drain here, and drain the\n"
            "                            ones it names at start (default: none)\n"
            "  -n, --drain-nice N        the drain thread's niceness, 0 to 19 (default 10:\n"
            "                            below the job's processes)\n"
            "  -k, --drain-threads N     threads a drain uses, 1 to 16 (default 2)\n"
            "  -r, --drain-rate MB/S     drain at most this many MB of logged data per\n"
            "                            second (default $BBFS_DRAIN_RATE, else 0: no limit;\n"
            "                            the environment reaches servers the driver starts)\n"
            "  -v, --verbose             log connections\n"
            "  -h, --help                this text\n"
            "\n"
            "Exit status: 0 after SIGTERM/SIGINT or the idle limit, 1 on a runtime error,\n"
            "2 on bad usage.\n", MAX_LOGDIRS);
}

/* A whole number from lo to hi, or 0 after saying what to give. */
static int int_option(const char *name, const char *arg, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v < lo || v > hi) {
        fprintf(stderr, "bbserver: %s %s: give %ld to %ld\n", name, arg, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"port", required_argument, NULL, 'p'},
        {"logdir", required_argument, NULL, 'd'},
        {"token-file", required_argument, NULL, 't'},
        {"workers", required_argument, NULL, 'w'},
        {"poll-us", required_argument, NULL, 'u'},
        {"state", required_argument, NULL, 's'},
        {"address-file", required_argument, NULL, 'a'},
        {"idle-limit", required_argument, NULL, 'i'},
        {"drain-journal", required_argument, NULL, 'j'},
        {"drain-nice", required_argument, NULL, 'n'},
        {"drain-threads", required_argument, NULL, 'k'},
        {"drain-rate", required_argument, NULL, 'r'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    struct bbs_server_opts o;
    const char *logdirs[MAX_LOGDIRS];
    const char *token_file = NULL;
    char host[256], err[512], source[4096];
    int c;

    memset(&o, 0, sizeof(o));
    o.workers = 2;
    o.poll_us = 20;
    o.drain_nice = 10;
    o.drain_threads = 2;
    const char *rate = getenv("BBFS_DRAIN_RATE");
    if (rate && *rate && (o.drain_rate = strtod(rate, NULL) * 1e6) < 0)
        o.drain_rate = 0;
    o.logdirs = logdirs;
    while ((c = getopt_long(argc, argv, "l:p:d:t:w:u:s:a:i:j:n:k:r:vh", opts, NULL)) != -1) {
        char *end;
        long v;
        switch (c) {
        case 'l':
            o.listen = optarg;
            break;
        case 'p':
            if (!int_option("--port", optarg, 0, 65535, &v))
                return 2;
            o.port = (uint16_t) v;
            break;
        case 'd':
            if (o.nlogdirs == MAX_LOGDIRS) {
                fprintf(stderr, "bbserver: at most %d --logdir\n", MAX_LOGDIRS);
                return 2;
            }
            logdirs[o.nlogdirs++] = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'w':
            if (!int_option("--workers", optarg, 1, 64, &v))
                return 2;
            o.workers = (int) v;
            break;
        case 'u':
            if (!int_option("--poll-us", optarg, 0, 1000000, &v))
                return 2;
            o.poll_us = (int) v;
            break;
        case 's':
            o.state = optarg;
            break;
        case 'a':
            o.address_file = optarg;
            break;
        case 'i':
            o.idle_limit = strtod(optarg, &end);
            if (!*optarg || *end || o.idle_limit < 0) {
                fprintf(stderr, "bbserver: --idle-limit %s: give seconds, 0 for never\n",
                        optarg);
                return 2;
            }
            break;
        case 'j':
            o.drain_journal = optarg;
            break;
        case 'n':
            if (!int_option("--drain-nice", optarg, 0, 19, &v))
                return 2;
            o.drain_nice = (int) v;
            break;
        case 'k':
            if (!int_option("--drain-threads", optarg, 1, 16, &v))
                return 2;
            o.drain_threads = (int) v;
            break;
        case 'r':
            o.drain_rate = strtod(optarg, &end) * 1e6;
            if (!*optarg || *end || o.drain_rate < 0) {
                fprintf(stderr, "bbserver: --drain-rate %s: give MB per second, 0 for no "
                        "limit\n", optarg);
                return 2;
            }
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bbserver: unexpected argument %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!o.listen) {
        if (gethostname(host, sizeof(host)) != 0) {
            perror("bbserver: gethostname");
            return 1;
        }
        host[sizeof(host) - 1] = 0;
        o.listen = host;
    }
    if (o.nlogdirs == 0) {
        const char *d = getenv("BBFS_LOGDIR");
        if (!d || !*d)
            d = getenv("TMPDIR");
        logdirs[o.nlogdirs++] = d && *d ? d : "/tmp";
    }
    if (bbs_token_find(token_file, 1, o.token, source, sizeof(source), err, sizeof(err)) != 0) {
        fprintf(stderr, "bbserver: %s\n", err);
        return 1;
    }
    /* A restarted server takes its old port back (server.c) while the
     * killed one's connections linger in TIME_WAIT. */
    setenv("UCX_CM_REUSEADDR", "y", 0);
    return bbs_server_run(&o);
}
