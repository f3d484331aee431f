/* Hints from ROMIO's hints file (ROMIO_HINTS) reach bbfs like any ROMIO
 * hint, and MPI_Info given at open overrides them. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int bbfs = tl_is_bbfs(name);
    char hints[4096];
    MPI_File fh;
    MPI_Info info;

    snprintf(hints, sizeof(hints), "%s.hints", tl_path(name));
    if (tl_rank == 0) {
        FILE *f = fopen(hints, "w");
        TL_CHECK(f != NULL, "cannot write %s", hints);
        fprintf(f, "bbfs_consistency commit\nbbfs_buffer_size 1m\ncb_buffer_size 2097152\n");
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    setenv("ROMIO_HINTS", hints, 1);    /* read at the first open */

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    tl_expect_info(fh, "bbfs_consistency", bbfs ? "commit" : TL_FOREIGN_HINT("commit"));
    tl_expect_info(fh, "bbfs_buffer_size", bbfs ? "1048576" : TL_FOREIGN_HINT("1m"));
    tl_expect_info(fh, "cb_buffer_size", "2097152");
    TL_MPI(MPI_File_close(&fh));

    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_buffer_size", "2m");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    tl_expect_info(fh, "bbfs_consistency", bbfs ? "commit" : TL_FOREIGN_HINT("commit"));
    tl_expect_info(fh, "bbfs_buffer_size", bbfs ? "2097152" : TL_FOREIGN_HINT("2m"));
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
