#define _GNU_SOURCE
/* Opening errors: a missing directory is MPI_ERR_NO_SUCH_FILE, an unknown
 * forced lower driver (and bbfs over bbfs) is MPI_ERR_BAD_FILE naming it, a
 * directory the user may not write is MPI_ERR_ACCESS.  Root ignores
 * permissions, so the last check drops to an unprivileged uid first. */
#include "testlib.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *path = tl_path(name);
    int bbfs = tl_is_bbfs(name);
    size_t prefix_len = (size_t) (path - name);
    char bad[4096], rodir[4096];
    MPI_File fh;
    MPI_Status st;
    int err;

    /* the file under test: written normally */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_write_at_all(fh, tl_rank, "E", 1, MPI_CHAR, &st));
    TL_MPI(MPI_File_close(&fh));

    snprintf(bad, sizeof(bad), "%.*s%s.nodir/sub/file", (int) prefix_len, name, path);
    err = MPI_File_open(MPI_COMM_WORLD, bad, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh);
    tl_expect_class(err, MPI_ERR_NO_SUCH_FILE, "open in a missing directory");

    if (bbfs) {
        snprintf(bad, sizeof(bad), "bbfs:frobfs:%s.x", path);
        err = MPI_File_open(MPI_COMM_WORLD, bad, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh);
        const char *msg = tl_expect_class(err, MPI_ERR_BAD_FILE, "unknown lower driver");
        TL_CHECK(strstr(msg, "frobfs"), "message does not name the driver: %s", msg);
        snprintf(bad, sizeof(bad), "bbfs:bbfs:%s.x", path);
        err = MPI_File_open(MPI_COMM_WORLD, bad, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh);
        msg = tl_expect_class(err, MPI_ERR_BAD_FILE, "bbfs over bbfs");
        TL_CHECK(strstr(msg, "stack on itself"), "unclear message: %s", msg);
    }

    snprintf(rodir, sizeof(rodir), "%s.rodir", path);
    if (tl_rank == 0) {
        TL_CHECK(mkdir(rodir, 0555) == 0 || errno == EEXIST, "mkdir %s: %s", rodir,
                 strerror(errno));
        chmod(rodir, 0555);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (geteuid() == 0)
        TL_CHECK(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0,
                 "cannot drop root privileges: %s", strerror(errno));
    snprintf(bad, sizeof(bad), "%.*s%s/file", (int) prefix_len, name, rodir);
    err = MPI_File_open(MPI_COMM_WORLD, bad, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh);
    tl_expect_class(err, MPI_ERR_ACCESS, "open in a read-only directory");
    return tl_finish();
}
