/* ROMIO_FSTYPE_FORCE=bbfs: runs an unmodified program on bbfs: every name,
 * plain or with a driver prefix, goes to bbfs, and bbfs finds the lower
 * driver as if the variable were not set ("bbfs:nfs:/p" still forces nfs).
 * The program uses plain paths, as an unmodified binary would; the name it
 * is given only says where.  Scratch files ROMIO opens itself (the shared
 * file pointer of write_ordered) and MPI_File_delete go through bbfs too.
 *
 * Without the variable (the ufs: reference run) the same calls run on
 * stock ROMIO, and the runner compares the files. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096

static int forced;

/* Under the variable, every open file must be a bbfs file over `lower`. */
static void expect_driver(MPI_File fh, const char *lower, const char *what)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;

    TL_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "bbfs_consistency", MPI_MAX_INFO_VAL, v, &flag);
    TL_CHECK(flag == forced, "%s: bbfs hints %s under ROMIO_FSTYPE_FORCE=%s", what,
             flag ? "shown" : "missing", forced ? "bbfs:" : "(unset)");
    if (forced) {
        MPI_Info_get(info, "bbfs_lower_filesystem_type", MPI_MAX_INFO_VAL, v, &flag);
        TL_CHECK(flag && strstr(v, lower), "%s: lower driver is '%s', expected %s", what,
                 flag ? v : "(none)", lower);
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    const char *plain = tl_path(name);
    unsigned char *buf = malloc(BLOCK), *got = malloc(BLOCK);
    char other[4096];
    MPI_File fh;
    MPI_Status st;

    forced = force && !strcmp(force, "bbfs:");
    TL_CHECK(!tl_is_bbfs(name) || forced, "run this test with ROMIO_FSTYPE_FORCE=bbfs: on "
             "bbfs variants (the spec's env line)");

    /* the main file: a plain path, as an unmodified program names it */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, plain, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    expect_driver(fh, "UFS", "plain path");
    tl_fill(buf, BLOCK, (long long) tl_rank * BLOCK, 1);
    TL_MPI(MPI_File_write_at_all(fh, (MPI_Offset) tl_rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    /* the shared file pointer lives in a scratch file ROMIO opens itself */
    MPI_Offset base = (MPI_Offset) tl_nprocs * BLOCK;
    TL_MPI(MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
    tl_fill(buf, BLOCK, base + (long long) tl_rank * BLOCK, 2);
    TL_MPI(MPI_File_write_ordered(fh, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, plain, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    expect_driver(fh, "UFS", "plain path, read-only");
    int peer = (tl_rank + 1) % tl_nprocs;
    TL_MPI(MPI_File_read_at(fh, (MPI_Offset) peer * BLOCK, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, (long long) peer * BLOCK, 1, "write_at_all block");
    TL_MPI(MPI_File_read_at(fh, base + (MPI_Offset) peer * BLOCK, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, base + (long long) peer * BLOCK, 2, "write_ordered block");
    TL_MPI(MPI_File_close(&fh));

    /* a driver prefix: ROMIO applies the variable over it, bbfs detects */
    snprintf(other, sizeof(other), "ufs:%s.ufs", plain);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                         MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    expect_driver(fh, "UFS", other);
    TL_MPI(MPI_File_close(&fh));

    /* bbfs:nfs: still forces the lower driver */
    snprintf(other, sizeof(other), "bbfs:nfs:%s.nfs", plain);
    if (forced) {
        TL_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh));
        expect_driver(fh, "NFS", other);
        if (tl_rank == 0)
            TL_MPI(MPI_File_write_at(fh, 0, buf, BLOCK, MPI_BYTE, &st));
        TL_MPI(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        /* delete: a plain path through bbfs, logs and manifest included */
        snprintf(other, sizeof(other), "%s.nfs", plain);
        if (tl_rank == 0)
            TL_MPI(MPI_File_delete(other, MPI_INFO_NULL));
        MPI_Barrier(MPI_COMM_WORLD);
        TL_CHECK(MPI_File_open(MPI_COMM_SELF, other, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)
                 != MPI_SUCCESS, "%s still exists after MPI_File_delete", other);
    }
    free(buf);
    free(got);
    return tl_finish();
}
