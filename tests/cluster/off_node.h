/* For the cluster tests: which processes run on another node than rank 0,
 * the error and block checks they share, and the files by which a test and
 * the script that runs it take turns. */
#ifndef TESTS_CLUSTER_OFF_NODE_H
#define TESTS_CLUSTER_OFF_NODE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A malloc'ed array: [r] is 1 if process r of MPI_COMM_WORLD runs on
 * another host than rank 0; *n: how many do.  Collective. */
static inline int *off_rank0_hosts(int *n)
{
    int nprocs;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char host[256] = "", *hosts = malloc((size_t) nprocs * sizeof(host));
    int *off = malloc(sizeof(int) * (size_t) nprocs);
    gethostname(host, sizeof(host) - 1);
    MPI_Allgather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host), MPI_CHAR, MPI_COMM_WORLD);
    *n = 0;
    for (int r = 0; r < nprocs; r++) {
        off[r] = strcmp(hosts + (size_t) r * sizeof(host), hosts) != 0;
        *n += off[r];
    }
    free(hosts);
    return off;
}

/* As off_rank0_hosts, but aborts the job, saying why, when every process
 * runs on one host.  Collective. */
static inline int *off_rank0_node(void)
{
    int rank, n;
    int *off = off_rank0_hosts(&n);
    if (n == 0) {
        char host[256] = "";
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        gethostname(host, sizeof(host) - 1);
        if (rank == 0)
            fprintf(stderr, "FAIL: every process runs on %s: run on 2 or more nodes "
                    "(tests/cluster/cluster.sh)\n", host);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return off;
}

/* 1 (the error printed, with the process and what failed) unless err is
 * MPI_SUCCESS. */
static inline int cluster_failed(int err, const char *what)
{
    if (err == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "FAIL [rank %d]: %s: %s\n", rank, what, msg);
    return 1;
}

/* Read len bytes at off through fh: 1 (the first difference printed) if
 * they are not want's. */
static inline int cluster_expect(MPI_File fh, long long off, const unsigned char *want, int len,
                          const char *when)
{
    unsigned char *got = calloc((size_t) len, 1);
    int bad = cluster_failed(MPI_File_read_at(fh, off, got, len, MPI_BYTE, MPI_STATUS_IGNORE),
                             when);
    for (int i = 0; i < len && !bad; i++)
        if (got[i] != want[i]) {
            int rank;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            fprintf(stderr, "FAIL [rank %d]: %s: byte %lld is %d, want %d\n", rank, when,
                    off + i, got[i], want[i]);
            bad = 1;
        }
    free(got);
    return bad;
}

/* Makes DIR/NAME (empty): a sign for whoever waits for it. */
static inline void cluster_touch(const char *dir, const char *name)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f)
        fclose(f);
}

/* 1 once DIR/NAME exists, 0 if it did not come within 120 s. */
static inline int cluster_wait_file(const char *dir, const char *name)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    for (int i = 0; stat(p, &st) != 0; i++) {
        if (i > 2400)
            return 0;
        usleep(50000);
    }
    return 1;
}

#endif
