/* What a test across emulated nodes relies on (tests/cluster/cluster.sh):
 *
 *     t_nodes NODES LOCALDIR
 *
 * every process runs on one of NODES distinct hosts, round-robin as hydra
 * places them; MPI_COMM_TYPE_SHARED groups exactly the processes of one
 * host; LOCALDIR is private to each node (a file every process leaves
 * there is seen by the processes of its node only) and /dev/shm too; and
 * data crosses nodes (an allgather of host names). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL [rank %d] ", rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static int visible(const char *dir, int r)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/t_nodes.%d", dir, r);
    return access(p, F_OK) == 0;
}

static void leave(const char *dir, int r)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/t_nodes.%d", dir, r);
    FILE *f = fopen(p, "w");
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    int rank, size, nnodes, local_size, distinct = 0, all_ok;
    char host[64] = "", *hosts;
    MPI_Comm node;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: t_nodes NODES LOCALDIR\n");
        MPI_Finalize();
        return 2;
    }
    nnodes = atoi(argv[1]);
    gethostname(host, sizeof host - 1);
    hosts = calloc(size, sizeof host);
    MPI_Allgather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            first &= strcmp(hosts + q * sizeof host, hosts + r * sizeof host) != 0;
        distinct += first;
    }
    CHECK(distinct == (size < nnodes ? size : nnodes), "%d distinct hosts, expected %d",
          distinct, nnodes);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local_size);
    int same = 0;
    for (int r = 0; r < size; r++)
        same += strcmp(hosts + r * sizeof host, host) == 0;
    CHECK(local_size == same, "MPI_COMM_TYPE_SHARED has %d processes, %d share host %s",
          local_size, same, host);

    /* node-local storage and /dev/shm: seen on the own node only */
    leave(argv[2], rank);
    leave("/dev/shm", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        int mine = strcmp(hosts + r * sizeof host, host) == 0;
        CHECK(visible(argv[2], r) == mine, "rank %d's file in %s is %s here on %s", r, argv[2],
              mine ? "missing" : "visible", host);
        CHECK(visible("/dev/shm", r) == mine, "rank %d's file in /dev/shm is %s here on %s", r,
              mine ? "missing" : "visible", host);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    char p[4200];
    snprintf(p, sizeof p, "%s/t_nodes.%d", argv[2], rank);
    unlink(p);
    snprintf(p, sizeof p, "/dev/shm/t_nodes.%d", rank);
    unlink(p);

    MPI_Allreduce(&failures, &all_ok, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_ok == 0)
        printf("ok: %d processes on %d nodes, node-local storage private\n", size, distinct);
    free(hosts);
    MPI_Finalize();
    return all_ok != 0;
}
