/*
 * open-rounds — N rounds of one open-to-close sequence, for counting what
 * each costs the parallel file system (tools/pfs-ops.sh runs it under
 * strace): the system calls that name the file's directory, or a file or
 * directory in it, per round.  No timing.
 *
 *   shared   open (create) + 4 KiB write at rank * 4 KiB + close of
 *            DIR/sh.I on MPI_COMM_WORLD
 *   self     the same of DIR/se.I.RANK on MPI_COMM_SELF
 *   make-ro  (set-up for rdonly) DIR/ro.I written as shared
 *   rdonly   read-only open + 4 KiB read of the next process's block +
 *            close of DIR/ro.I
 *
 * usage: mpiexec -n P open-rounds PREFIX:DIR N CASE
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLK 4096

static void check(int rc, const char *what, const char *name)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "open-rounds: %s %s: %s\n", what, name, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 4 || atoi(argv[2]) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: open-rounds PREFIX:DIR N shared|self|make-ro|rdonly\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1], *what = argv[3];
    int n = atoi(argv[2]), self = !strcmp(what, "self"), rdonly = !strcmp(what, "rdonly");
    int make_ro = !strcmp(what, "make-ro");
    if (!self && !rdonly && !make_ro && strcmp(what, "shared")) {
        if (rank == 0)
            fprintf(stderr, "open-rounds: no case %s (shared, self, make-ro, rdonly)\n", what);
        MPI_Finalize();
        return 2;
    }
    char buf[BLK], name[4200];
    memset(buf, 'r' + rank % 8, sizeof(buf));
    for (int i = 0; i < n; i++) {
        MPI_File fh;
        MPI_Offset at = (MPI_Offset) (rdonly ? (rank + 1) % nprocs : rank) * BLK;
        if (self)
            snprintf(name, sizeof(name), "%s/se.%d.%d", dir, i, rank);
        else
            snprintf(name, sizeof(name), "%s/%s.%d", dir, rdonly || make_ro ? "ro" : "sh", i);
        check(MPI_File_open(self ? MPI_COMM_SELF : MPI_COMM_WORLD, name,
                            rdonly ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh), "open", name);
        if (rdonly)
            check(MPI_File_read_at(fh, at, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE), "read", name);
        else
            check(MPI_File_write_at(fh, self ? 0 : at, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE),
                  "write", name);
        check(MPI_File_close(&fh), "close", name);
    }
    MPI_Finalize();
    return 0;
}
