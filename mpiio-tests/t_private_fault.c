/* A private session's close replays from memory; when that replay fails
 * (BBFS_FAULT=canonical-write:EIO:once, from the spec), nothing is lost:
 * the close fails with MPI_ERR_IO, the logs go to their files and stay
 * pending, and the next open replays them.
 *
 * Each process writes three overlapping pieces to a file of its own on
 * MPI_COMM_SELF and closes it (on ufs: the close succeeds); a read-only
 * open then checks the file.  The file the runner compares is written the
 * same way by process 0 alone (the fault spent), and read back by all. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 20000

static void write_and_close(const char *name, int fails)
{
    unsigned char *buf = malloc(LEN);
    MPI_File fh;
    int err;

    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                         &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    tl_fill(buf, LEN, 0, 1);
    TL_MPI(MPI_File_write_at(fh, 0, buf, LEN, MPI_BYTE, MPI_STATUS_IGNORE));
    tl_fill(buf, 5000, 3000, 2);
    TL_MPI(MPI_File_write_at(fh, 3000, buf, 5000, MPI_BYTE, MPI_STATUS_IGNORE));
    tl_fill(buf, 100, LEN, 3);
    TL_MPI(MPI_File_write_at(fh, LEN, buf, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    err = MPI_File_close(&fh);
    if (fails) {
        const char *msg = tl_expect_class(err, MPI_ERR_IO, "a close whose replay failed");
        TL_CHECK(strstr(msg, "nothing is lost") != NULL,
                 "the close's error does not say the logs are kept: %s", msg);
    } else
        TL_MPI(err);
    free(buf);
}

static void check(const char *name)
{
    unsigned char *buf = malloc(LEN + 100);
    MPI_File fh;
    MPI_Offset size;

    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == LEN + 100, "%s: size %lld, want %d", name, (long long) size, LEN + 100);
    TL_MPI(MPI_File_read_at(fh, 0, buf, LEN + 100, MPI_BYTE, MPI_STATUS_IGNORE));
    tl_verify(buf, 3000, 0, 1, "before the second piece");
    tl_verify(buf + 3000, 5000, 3000, 2, "the second piece");
    tl_verify(buf + 8000, LEN - 8000, 8000, 1, "after the second piece");
    tl_verify(buf + LEN, 100, LEN, 3, "the third piece");
    TL_MPI(MPI_File_close(&fh));
    free(buf);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    char mine[4096];
    int bbfs = tl_is_bbfs(name);

    snprintf(mine, sizeof(mine), "%s.own%d", name, tl_rank);
    write_and_close(mine, bbfs);
    if (bbfs) {
        char m[4096];
        TL_CHECK(tl_manifests(tl_path(mine), m, sizeof(m)) == 1,
                 "no pending session after a failed replay from memory");
    }
    check(mine);
    if (tl_rank == 0)
        write_and_close(name, 0);       /* (the fault fired once, above) */
    MPI_Barrier(MPI_COMM_WORLD);
    check(name);
    return tl_finish();
}
