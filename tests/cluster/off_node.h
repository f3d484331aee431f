/* For the cluster tests: which processes run on another node than rank 0. */
#ifndef TESTS_CLUSTER_OFF_NODE_H
#define TESTS_CLUSTER_OFF_NODE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A malloc'ed array: [r] is 1 if process r of MPI_COMM_WORLD runs on
 * another host than rank 0.  Aborts the job, saying why, when every
 * process runs on one host.  Collective. */
static int *off_rank0_node(void)
{
    int rank, nprocs, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char host[256] = "", *hosts = malloc((size_t) nprocs * sizeof(host));
    int *off = malloc(sizeof(int) * (size_t) nprocs);
    gethostname(host, sizeof(host) - 1);
    MPI_Allgather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host), MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < nprocs; r++) {
        off[r] = strcmp(hosts + (size_t) r * sizeof(host), hosts) != 0;
        n += off[r];
    }
    if (n == 0) {
        if (rank == 0)
            fprintf(stderr, "FAIL: every process runs on %s: run on 2 or more nodes "
                    "(tests/cluster/cluster.sh)\n", hosts);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(hosts);
    return off;
}

#endif
