/* Opens after the first on the same processes ask no process for its host
 * name again.  ROMIO's open gathers every process's host name (its
 * aggregators' list: an MPI_Gather and an MPI_Gatherv) and keeps the list
 * on the communicator, so the next open on it gathers nothing; bbfs opens
 * the canonical file through the lower driver on a communicator of its
 * own, new at every open, and lends it the list it kept for the same
 * process group (ad_bbfs_common.c).  Each round opens the file on
 * MPI_COMM_WORLD, on a new duplicate of it, and a file of this process's
 * own on MPI_COMM_SELF, writes and closes; every open after the first
 * round must make no gather.  The gathers are counted by PMPI_Gather and
 * PMPI_Gatherv defined here (linked -rdynamic, they are the ones the MPI
 * library calls).  The runner compares the file with ufs:'s. */
#define _GNU_SOURCE
#include "testlib.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define BLOCK 4096
#define ROUNDS 4

static int gathers;

int PMPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                int root, MPI_Comm comm)
{
    static int (*real)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int,
                       MPI_Comm);
    if (!real)
        *(void **) &real = dlsym(RTLD_NEXT, "PMPI_Gather");
    gathers++;
    return real(sb, sc, st, rb, rc, rt, root, comm);
}

int PMPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int *rc,
                 const int *displs, MPI_Datatype rt, int root, MPI_Comm comm)
{
    static int (*real)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                       MPI_Datatype, int, MPI_Comm);
    if (!real)
        *(void **) &real = dlsym(RTLD_NEXT, "PMPI_Gatherv");
    gathers++;
    return real(sb, sc, st, rb, rc, displs, rt, root, comm);
}

/* Open name on comm, write this process's block of round tag, close;
 * returns the gathers the open made. */
static int round_on(MPI_Comm comm, const char *name, MPI_Offset at, int tag)
{
    unsigned char buf[BLOCK];
    MPI_File fh;
    int before = gathers, made;

    TL_MPI(MPI_File_open(comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    made = gathers - before;
    tl_fill(buf, BLOCK, at, tag);
    TL_MPI(MPI_File_write_at(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));
    return made;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    char own[4200];

    tl_sibling(name, ".own", own, sizeof(own));
    snprintf(own + strlen(own), sizeof(own) - strlen(own), ".%d", tl_rank);
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Comm dup;
        MPI_Offset at = (MPI_Offset) tl_rank * BLOCK;
        int world = round_on(MPI_COMM_WORLD, name, at, r);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        int fresh = round_on(dup, name, at, r + ROUNDS);
        MPI_Comm_free(&dup);
        int self = round_on(MPI_COMM_SELF, own, 0, r);
        if (r > 0) {
            TL_CHECK(world == 0, "round %d: the open on MPI_COMM_WORLD made %d gathers "
                     "(host names asked again)", r, world);
            TL_CHECK(fresh == 0, "round %d: the open on a new duplicate of "
                     "MPI_COMM_WORLD made %d gathers", r, fresh);
            TL_CHECK(self == 0, "round %d: the open on MPI_COMM_SELF made %d gathers", r,
                     self);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_delete(own, MPI_INFO_NULL);
    return tl_finish();
}
