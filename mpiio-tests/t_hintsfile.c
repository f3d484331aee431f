/* Hints from ROMIO's hints file (ROMIO_HINTS) reach bbfs like any ROMIO
 * hint, and MPI_Info given at open overrides them. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_key(MPI_File fh, const char *key, const char *want)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    TL_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    if (!want)
        TL_CHECK(!flag, "%s present on a non-bbfs file", key);
    else
        TL_CHECK(flag && !strcmp(value, want), "%s=%s, expected %s from the hints file", key,
                 flag ? value : "(unset)", want);
}

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
    expect_key(fh, "bbfs_consistency", bbfs ? "commit" : NULL);
    expect_key(fh, "bbfs_buffer_size", bbfs ? "1048576" : NULL);
    expect_key(fh, "cb_buffer_size", "2097152");
    TL_MPI(MPI_File_close(&fh));

    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_buffer_size", "2m");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    expect_key(fh, "bbfs_consistency", bbfs ? "commit" : NULL);
    expect_key(fh, "bbfs_buffer_size", bbfs ? "2097152" : NULL);
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
