/* Files per process on MPI_COMM_SELF take the lower driver of the last
 * file opened in the same directory instead of ROMIO's detection, and
 * check it on the opened file (ad_bbfs_lower.c).  Each process, in the
 * test's directory:
 *
 *   1. makes file 0 (the driver found by detection), then file 1 with
 *      MPI_MODE_EXCL, file 2 with MPI_MODE_DELETE_ON_CLOSE and file 3
 *      through a symbolic link into a directory of its own (all guessed);
 *      writes each and closes it;
 *   2. opens file 1 again with MPI_MODE_EXCL, which must fail with
 *      MPI_ERR_FILE_EXISTS;
 *   3. reads files 0, 1 and 3 back (3 through the link and at its
 *      target), and file 2 must be gone;
 *   4. writes its block of the shared file, which must equal a ufs: run's.
 *
 * With BBFS_FAULT=lower-guess:EIO every guess is taken as wrong, so each
 * guessed open is closed and made again with the file's own driver (the
 * file exists by then: MPI_MODE_EXCL must not fail the second open).
 * With T_LOWER_GUESS_PAUSED=1 (and BBFS_FAULT=lower-guess:pause, which
 * makes each guessed open half a second late), the opens of files 1-3
 * must be late and file 0's not: the guess is made where it should be. */
#include "testlib.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 4096
#define FILES 4

static double open_file(const char *name, int amode, MPI_File * fh)
{
    double t0 = MPI_Wtime();
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, amode, MPI_INFO_NULL, fh));
    return MPI_Wtime() - t0;
}

static void read_back(const char *name, int tag, const char *what)
{
    unsigned char buf[BLOCK];
    MPI_File fh;
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_read_at(fh, 0, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));
    tl_verify(buf, BLOCK, 0, tag, what);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const int paused = getenv("T_LOWER_GUESS_PAUSED") != NULL;
    char files[FILES][4200], target[4200], suffix[64];
    unsigned char buf[BLOCK];
    double took[FILES];
    MPI_File fh;
    struct stat st;

    /* 1: four files of this process */
    for (int i = 0; i < FILES; i++) {
        snprintf(suffix, sizeof suffix, ".self.%d.%d", tl_rank, i);
        tl_sibling(name, suffix, files[i], sizeof files[i]);
    }
    snprintf(suffix, sizeof suffix, ".dir.%d", tl_rank);
    tl_sibling(name, suffix, target, sizeof target);
    TL_CHECK(mkdir(tl_path(target), 0700) == 0 || errno == EEXIST, "mkdir %s: %s",
             tl_path(target), strerror(errno));
    strncat(target, "/linked", sizeof target - strlen(target) - 1);
    unlink(tl_path(files[3]));
    TL_CHECK(symlink(tl_path(target), tl_path(files[3])) == 0, "symlink %s: %s",
             tl_path(files[3]), strerror(errno));
    const int modes[FILES] = {
        MPI_MODE_CREATE | MPI_MODE_WRONLY,
        MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
        MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_RDWR,
        MPI_MODE_CREATE | MPI_MODE_WRONLY,
    };
    for (int i = 0; i < FILES; i++) {
        took[i] = open_file(files[i], modes[i], &fh);
        tl_fill(buf, BLOCK, 0, 10 + i);
        TL_MPI(MPI_File_write_at(fh, 0, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        if (i == 2) {           /* a scratch file reads its own writes */
            memset(buf, 0, BLOCK);
            TL_MPI(MPI_File_read_at(fh, 0, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            tl_verify(buf, BLOCK, 0, 12, "the delete-on-close file");
        }
        TL_MPI(MPI_File_close(&fh));
    }
    if (paused) {
        TL_CHECK(took[0] < 0.4, "file 0's open took %.3f s: it should have been detected, "
                 "not guessed (no directory seen before)", took[0]);
        for (int i = 1; i < FILES; i++)
            TL_CHECK(took[i] >= 0.4, "file %d's open took %.3f s: it was not guessed from "
                     "file 0's directory", i, took[i]);
    }

    /* 2: an exclusive create of an existing file */
    int err = MPI_File_open(MPI_COMM_SELF, files[1], modes[1], MPI_INFO_NULL, &fh);
    tl_expect_class(err, MPI_ERR_FILE_EXISTS, "MPI_MODE_EXCL of an existing file");

    /* 3: what each holds */
    read_back(files[0], 10, "file 0");
    read_back(files[1], 11, "file 1 (MPI_MODE_EXCL)");
    read_back(files[3], 13, "file 3, through its link");
    read_back(target, 13, "file 3, at the link's target");
    TL_CHECK(stat(tl_path(files[2]), &st) != 0 && errno == ENOENT,
             "the delete-on-close file %s is still there", tl_path(files[2]));
    TL_CHECK(lstat(tl_path(files[3]), &st) == 0 && S_ISLNK(st.st_mode),
             "%s is no longer a symbolic link", tl_path(files[3]));

    /* 4: the shared file */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                         &fh));
    tl_fill(buf, BLOCK, (long long) tl_rank * BLOCK, 1);
    TL_MPI(MPI_File_write_at(fh, (MPI_Offset) tl_rank * BLOCK, buf, BLOCK, MPI_BYTE,
                             MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));
    for (int i = 0; i < FILES; i++)
        unlink(tl_path(files[i]));
    unlink(tl_path(target));
    return tl_finish();
}
