/* Two groups of one job open one file at once, as HDF5's testphdf5
 * (rrobjflushconf) does: the even ranks write it and sync, step after
 * step, through their own communicator; at each step the odd ranks open it
 * read-only through theirs, ask its size, read everything written so far
 * and close it, while the writers still hold it open.
 *
 *     t_split_readers FILE [STEPS [apart]]
 *
 * Run with the writers on one node and the readers on another (cluster.sh's
 * hosts take ranks in turn; "apart" fails the run if a reader shares a
 * host with a writer), node-local logs, and bbfs_consistency posix or
 * mpiio: after the writers' sync and a barrier, the readers must see every
 * byte, and every call must succeed on every process.  A call that fails
 * on one reader only must not leave the other waiting in a collective (the
 * test's own calls are collective: every process reports, nobody hangs). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096

static int world_rank;

static unsigned char pattern(long long off, int step)
{
    return (unsigned char) (off * 7 + step * 13 + 1);
}

/* 1 if err is an error (printed), else 0. */
static int failed(int err, const char *what, int step)
{
    if (err == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "FAIL [rank %d] step %d: %s: %s\n", world_rank, step, what, msg);
    return 1;
}

int main(int argc, char **argv)
{
    int nprocs, bad = 0;
    MPI_Comm group;
    MPI_File fh = MPI_FILE_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || nprocs < 2) {
        if (world_rank == 0)
            fprintf(stderr, "usage: t_split_readers FILE [STEPS] (2 or more processes)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int steps = argc > 2 ? atoi(argv[2]) : 4;
    int reader = world_rank % 2, grank, gsize;
    if (argc > 3 && !strcmp(argv[3], "apart")) {
        char host[256] = "", *hosts = malloc((size_t) nprocs * sizeof(host));
        gethostname(host, sizeof(host) - 1);
        MPI_Allgather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host), MPI_CHAR,
                      MPI_COMM_WORLD);
        for (int r = 0; r < nprocs; r++)
            if (r % 2 != reader && !strcmp(hosts + (size_t) r * sizeof(host), host)) {
                fprintf(stderr, "FAIL [rank %d]: shares host %s with rank %d of the other "
                        "group: run the groups on different nodes\n", world_rank, host, r);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        free(hosts);
    }
    MPI_Comm_split(MPI_COMM_WORLD, reader, world_rank, &group);
    MPI_Comm_rank(group, &grank);
    MPI_Comm_size(group, &gsize);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc(BLOCK);

    if (!reader)
        bad |= failed(MPI_File_open(group, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                                    MPI_INFO_NULL, &fh), "writers' open", 0);
    for (int step = 1; step <= steps; step++) {
        /* each writer adds one block per step, interleaved with the others */
        long long off = ((long long) (step - 1) * gsize + grank) * BLOCK;
        if (!reader && fh != MPI_FILE_NULL) {
            for (int i = 0; i < BLOCK; i++)
                buf[i] = pattern(off + i, step);
            bad |= failed(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                          "write", step);
            bad |= failed(MPI_File_sync(fh), "writers' sync", step);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (reader) {
            int nwriters = nprocs - nprocs / 2;
            long long want = (long long) step * nwriters * BLOCK;
            MPI_Offset size = -1;
            MPI_File rf;
            int err = MPI_File_open(group, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &rf);
            bad |= failed(err, "readers' open", step);
            if (err == MPI_SUCCESS) {
                bad |= failed(MPI_File_get_size(rf, &size), "get_size", step);
                if (size != want) {
                    fprintf(stderr, "FAIL [rank %d] step %d: size %lld, want %lld\n",
                            world_rank, step, (long long) size, want);
                    bad = 1;
                }
                for (long long at = 0; at < want; at += BLOCK) {
                    int wstep = (int) (at / BLOCK / nwriters) + 1;
                    if (failed(MPI_File_read_at(rf, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                               "read", step)) {
                        bad = 1;
                        break;
                    }
                    for (int i = 0; i < BLOCK; i++)
                        if (buf[i] != pattern(at + i, wstep)) {
                            fprintf(stderr, "FAIL [rank %d] step %d: byte %lld is %d, want %d\n",
                                    world_rank, step, at + i, buf[i], pattern(at + i, wstep));
                            bad = 1;
                            break;
                        }
                }
                bad |= failed(MPI_File_close(&rf), "readers' close", step);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!reader && fh != MPI_FILE_NULL)
        bad |= failed(MPI_File_close(&fh), "writers' close", steps);
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("%s: %d steps, %d writers and %d readers\n", anybad ? "FAIL" : "ok", steps,
               nprocs - nprocs / 2, nprocs / 2);
    MPI_Comm_free(&group);
    free(buf);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
