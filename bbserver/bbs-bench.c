/*
 * bbs-bench: attach and query throughput and latency against a running
 * bbserver.  C client processes (fork) each connect and, for the given
 * seconds, alternate an attach of B ranges of their own and a query of
 * the B ranges just attached (so each query walks B pieces).  Prints, per
 * operation, ranges per second over all clients and the p50 and p99
 * latency of one message, as text and one CSV line (for docs/).
 *
 *   bbs-bench -S HOST:PORT [-c CLIENTS] [-b BATCH] [-s SECONDS] [-t TOKEN_FILE]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "ucx.h"
#include "token.h"

#define MAX_SAMPLES (1 << 20)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* One client: latencies (s) of attaches then queries, written to fd as
 * counts then doubles. */
static int client(const char *addr, const uint8_t *token, int me, int batch, double secs,
                  int fd)
{
    struct bbs_client *c;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    char err[1024], log[64];
    double *lat[2];
    uint32_t n[2] = { 0, 0 };
    struct bbs_extent *e = calloc((size_t) batch, sizeof(*e));

    lat[0] = malloc(sizeof(double) * MAX_SAMPLES);
    lat[1] = malloc(sizeof(double) * MAX_SAMPLES);
    if (!e || !lat[0] || !lat[1] || bbs_client_open(addr, token, 10, &c, err, sizeof(err))) {
        fprintf(stderr, "bbs-bench: client %d: %s\n", me, e ? err : "out of memory");
        return 1;
    }
    snprintf(log, sizeof(log), "/bench/client%d.datalog", me);
    struct bbs_writer w = { 1, (uint32_t) me, "bench:1", log };
    uint64_t round = 0;
    double end = bbs_now() + secs;
    while (bbs_now() < end && n[1] < MAX_SAMPLES) {
        /* this client's B ranges of 64 bytes, interleaved with the others' */
        uint64_t base = round++ * (uint64_t) batch * 64 * 8;
        for (int i = 0; i < batch; i++)
            e[i] = (struct bbs_extent) { base + ((uint64_t) i * 8 + (uint64_t) me % 8) * 64, 64,
                1, 0, (uint64_t) i * 64 };
        double t0 = bbs_now();
        bbs_enc_attach(&b, bbs_client_next_id(c), token, "/bench/file", &w, e, (uint32_t) batch, 0,
                       0);
        if (bbs_client_call(c, &b, &r, err, sizeof(err)) != 0 || r.status != BBS_OK) {
            fprintf(stderr, "bbs-bench: attach: %s\n", r.status ? r.msg : err);
            return 1;
        }
        double t1 = bbs_now();
        bbs_enc_query(&b, bbs_client_next_id(c), token, "/bench/file", base,
                      base + (uint64_t) batch * 64 * 8);
        if (bbs_client_call(c, &b, &r, err, sizeof(err)) != 0 || r.status != BBS_OK) {
            fprintf(stderr, "bbs-bench: query: %s\n", r.status ? r.msg : err);
            return 1;
        }
        double t2 = bbs_now();
        lat[0][n[0]++] = t1 - t0;
        lat[1][n[1]++] = t2 - t1;
    }
    bbs_client_close(c);
    for (int k = 0; k < 2; k++)
        if (write(fd, &n[k], sizeof(n[k])) != sizeof(n[k])
            || write(fd, lat[k], sizeof(double) * n[k]) != (ssize_t) (sizeof(double) * n[k]))
            return 1;
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *q = p;
    while (n) {
        ssize_t k = read(fd, q, n);
        if (k <= 0)
            return -1;
        q += k;
        n -= (size_t) k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *addr = getenv("BBFS_SERVER"), *token_file = NULL;
    int clients = 1, batch = 1, c;
    double secs = 3;
    uint8_t token[BBS_TOKEN_LEN];
    char err[1024], source[4096];

    while ((c = getopt(argc, argv, "S:c:b:s:t:h")) != -1) {
        switch (c) {
        case 'S': addr = optarg; break;
        case 'c': clients = atoi(optarg); break;
        case 'b': batch = atoi(optarg); break;
        case 's': secs = atof(optarg); break;
        case 't': token_file = optarg; break;
        default:
            fprintf(c == 'h' ? stdout : stderr, "usage: bbs-bench -S HOST:PORT [-c CLIENTS] "
                    "[-b BATCH] [-s SECONDS] [-t TOKEN_FILE]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (!addr || clients < 1 || clients > 256 || batch < 1 || batch > 65536 || secs <= 0) {
        fprintf(stderr, "bbs-bench: give -S HOST:PORT; 1-256 clients, batch 1-65536\n");
        return 2;
    }
    if (bbs_token_find(token_file, 0, token, source, sizeof(source), err, sizeof(err))) {
        fprintf(stderr, "bbs-bench: %s\n", err);
        return 2;
    }
    int fds[256];
    pid_t pids[256];
    for (int i = 0; i < clients; i++) {
        int p[2];
        if (pipe(p) != 0)
            return 1;
        if ((pids[i] = fork()) == 0) {
            close(p[0]);
            _exit(client(addr, token, i, batch, secs, p[1]));
        }
        close(p[1]);
        fds[i] = p[0];
    }
    double *all[2] = { NULL, NULL };
    size_t tot[2] = { 0, 0 };
    int failed = 0;
    for (int i = 0; i < clients; i++)
        for (int k = 0; k < 2; k++) {
            uint32_t n;
            if (read_all(fds[i], &n, sizeof(n)) != 0) {
                failed = 1;
                break;
            }
            all[k] = realloc(all[k], sizeof(double) * (tot[k] + n));
            if (!all[k] || read_all(fds[i], all[k] + tot[k], sizeof(double) * n) != 0)
                return 1;
            tot[k] += n;
        }
    for (int i = 0; i < clients; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    if (failed || !tot[0] || !tot[1]) {
        fprintf(stderr, "bbs-bench: a client failed\n");
        return 1;
    }
    static const char *const name[2] = { "attach", "query" };
    double p50[2], p99[2], rate[2];
    for (int k = 0; k < 2; k++) {
        qsort(all[k], tot[k], sizeof(double), cmp_double);
        p50[k] = all[k][tot[k] / 2] * 1e6;
        p99[k] = all[k][(size_t) (tot[k] * 0.99)] * 1e6;
        double busy = 0;
        for (size_t i = 0; i < tot[k]; i++)
            busy += all[k][i];
        /* ranges per second of the server: each client spends busy/clients
         * of the run in this operation */
        rate[k] = (double) tot[k] * batch / (busy / clients);
        printf("%-6s %d clients, %5d ranges/message: %10.0f ranges/s, %8.0f messages/s, "
               "p50 %6.1f us, p99 %6.1f us\n", name[k], clients, batch, rate[k],
               rate[k] / batch, p50[k], p99[k]);
    }
    printf("total  %zu round trips\n", tot[0] + tot[1]);
    printf("csv,bbserver,%s,%d,%d,%.0f,%.1f,%.1f,%.0f,%.1f,%.1f\n", addr, clients, batch,
           rate[0], p50[0], p99[0], rate[1], p50[1], p99[1]);
    return 0;
}
