/* MPI_File_delete removes the file; a later open without CREATE fails with
 * MPI_ERR_NO_SUCH_FILE; DELETE_ON_CLOSE removes a second file at close.
 * The file under test itself is left holding a small marker so the runner
 * can compare it. */
#include "testlib.h"
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    char doomed[4096], onclose[4096];
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[512];

    tl_sibling(name, ".doomed", doomed, sizeof(doomed));
    tl_sibling(name, ".onclose", onclose, sizeof(onclose));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, doomed, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    tl_fill(buf, sizeof(buf), tl_rank * 512, 1);
    TL_MPI(MPI_File_write_at_all(fh, tl_rank * 512, buf, 512, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    TL_CHECK(access(tl_path(doomed), F_OK) == 0, "%s missing before delete", tl_path(doomed));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        TL_MPI(MPI_File_delete(doomed, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_CHECK(access(tl_path(doomed), F_OK) != 0, "%s still exists after delete",
             tl_path(doomed));
    int err = MPI_File_open(MPI_COMM_WORLD, doomed, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    tl_expect_class(err, MPI_ERR_NO_SUCH_FILE, "reopen of deleted file");
    if (tl_rank == 0) {
        err = MPI_File_delete(doomed, MPI_INFO_NULL);
        tl_expect_class(err, MPI_ERR_NO_SUCH_FILE, "second delete");
    }

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, onclose,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_write_at_all(fh, tl_rank * 512, buf, 512, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_CHECK(access(tl_path(onclose), F_OK) != 0, "DELETE_ON_CLOSE left %s",
             tl_path(onclose));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_write_at_all(fh, tl_rank * 512, buf, 512, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
