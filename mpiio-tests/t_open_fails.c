/* An open whose canonical file fails to open on one process only (fault
 * point lower-open, on the rank the spec names): the open must fail on
 * every process, with MPI_ERR_IO, none waiting in a collective that the
 * failed one skipped; the same open again then works.  bbfs agrees the
 * lower open's outcome in its own next agreement (the server's, the logs'
 * start) or leaves it to ADIO_Open's, so a test that hangs or returns
 * success anywhere is the failure this catches.
 *
 *   1. an open for writing: each process writes its block, closes
 *   2. a read-only open: each process reads every block
 *   3. an open for writing on MPI_COMM_SELF (on process 0 alone; the others
 *      only wait), which appends a block
 *
 * T_OPEN_FAILS=N (the spec's environment, with BBFS_FAULT=lower-open#N)
 * names the step whose first open fails; on ufs: none does. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLK 4096

static int failing;

/* Opens name on comm, the step's first try failing where the spec says. */
static MPI_File open_step(int step, MPI_Comm comm, const char *name, int amode)
{
    MPI_File fh;
    int err = MPI_File_open(comm, name, amode, MPI_INFO_NULL, &fh);
    if (step == failing) {
        int n, failed = err != MPI_SUCCESS, all;
        MPI_Comm_size(comm, &n);
        MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, comm);
        TL_CHECK(all == n, "step %d: the open failed on %d of %d processes", step, all, n);
        tl_expect_class(err, MPI_ERR_IO, "an open whose lower file failed on one process");
        TL_MPI(MPI_File_open(comm, name, amode, MPI_INFO_NULL, &fh));   /* (the fault was once) */
    } else
        TL_MPI(err);
    return fh;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *f = getenv("T_OPEN_FAILS");
    unsigned char buf[BLK];
    MPI_File fh;

    failing = tl_is_bbfs(name) && f ? atoi(f) : 0;
    fh = open_step(1, MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    tl_fill(buf, BLK, (long long) tl_rank * BLK, 1);
    TL_MPI(MPI_File_write_at(fh, (MPI_Offset) tl_rank * BLK, buf, BLK, MPI_BYTE,
                             MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));

    fh = open_step(2, MPI_COMM_WORLD, name, MPI_MODE_RDONLY);
    for (int r = 0; r < tl_nprocs; r++) {
        char what[64];
        TL_MPI(MPI_File_read_at(fh, (MPI_Offset) r * BLK, buf, BLK, MPI_BYTE,
                                MPI_STATUS_IGNORE));
        snprintf(what, sizeof(what), "step 2: process %d's block", r);
        tl_verify(buf, BLK, (long long) r * BLK, 1, what);
    }
    TL_MPI(MPI_File_close(&fh));

    if (tl_rank == 0) {
        fh = open_step(3, MPI_COMM_SELF, name, MPI_MODE_WRONLY);
        tl_fill(buf, BLK, (long long) tl_nprocs * BLK, 2);
        TL_MPI(MPI_File_write_at(fh, (MPI_Offset) tl_nprocs * BLK, buf, BLK, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
        TL_MPI(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return tl_finish();
}
