/* One file, named differently by its processes: MPI lets the processes of
 * an open reach the file through different names (here a symbolic link in
 * another directory), and a later open may use yet another.  bbfs keeps
 * its sessions and logs beside the file's name, so each name must lead to
 * the same ones:
 *  1. odd processes open the file through the link, even ones by its name:
 *     interleaved writes, then each appends a record through the shared
 *     pointer (which bbfs names itself only where all names are alike);
 *     after a barrier each reads the next process's blocks;
 *  2. every process through the link, bbfs_replay never: more writes,
 *     left pending;
 *     An open with MPI_MODE_CREATE through the link then fails (bbfs looks
 *     at such a name only after the lower open, where it did not look for
 *     the file's pending logs);
 *  3. a read-only open by the file's own name must find them (else it
 *     reads the file without them: zeros) and make the file canonical.
 * Then no manifest may remain under either name.  First, a link to a file
 * not made yet: MPI_MODE_EXCL through it fails as on the lower driver
 * (O_EXCL does not follow a link), and leaves no file. */
#include "testlib.h"
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLK 40
#define K 16
#define REC 512

static void open_as(const char *name, int amode, const char *replay, MPI_File *fh)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (replay)
        MPI_Info_set(info, "bbfs_replay", replay);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode, info, fh));
    MPI_Info_free(&info);
}

static void write_blocks(MPI_File fh, MPI_Offset base, int tag)
{
    unsigned char buf[BLK];
    for (int k = 0; k < K; k++) {
        MPI_Offset off = base + ((MPI_Offset) k * tl_nprocs + tl_rank) * BLK;
        tl_fill(buf, BLK, off, tag);
        TL_MPI(MPI_File_write_at(fh, off, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE));
    }
}

static void check_blocks(MPI_File fh, MPI_Offset base, int of, int tag, const char *what)
{
    unsigned char buf[BLK];
    for (int k = 0; k < K; k++) {
        MPI_Offset off = base + ((MPI_Offset) k * tl_nprocs + of) * BLK;
        memset(buf, 0, BLK);
        TL_MPI(MPI_File_read_at(fh, off, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE));
        tl_verify(buf, BLK, off, tag, what);
    }
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *path = tl_path(name);
    size_t prefix = (size_t) (path - name);
    char dir[4096], base[4096], link_dir[4096], alias[8192], target[4200];
    unsigned char rec[REC], got[REC];
    const MPI_Offset region = (MPI_Offset) K * tl_nprocs * BLK;
    MPI_File fh;
    MPI_Offset size;

    snprintf(dir, sizeof dir, "%s", path);
    snprintf(base, sizeof base, "%s", path);
    const char *top = dirname(dir), *file = basename(base);
    snprintf(link_dir, sizeof link_dir, "%s/alias", top);
    snprintf(alias, sizeof alias, "%.*s%s/%s.link", (int) prefix, name, link_dir, file);
    snprintf(target, sizeof target, "../%s", file);
    if (tl_rank == 0) {
        TL_CHECK(mkdir(link_dir, 0755) == 0, "mkdir %s failed", link_dir);
        TL_CHECK(symlink(target, alias + prefix) == 0, "symlink %s failed", alias + prefix);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 0 */
    char dangling[8200], dangling_target[8192];
    snprintf(dangling, sizeof dangling, "%s.new", alias);
    if (tl_rank == 0)
        TL_CHECK(symlink("../new-file", dangling + prefix) == 0, "symlink %s failed",
                 dangling + prefix);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_File_open(MPI_COMM_WORLD, dangling, MPI_MODE_CREATE | MPI_MODE_EXCL |
                           MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    TL_CHECK(rc != MPI_SUCCESS, "MPI_MODE_EXCL through a link to no file succeeded");
    tl_expect_class(rc, MPI_ERR_FILE_EXISTS, "MPI_MODE_EXCL through a link to no file");
    snprintf(dangling_target, sizeof dangling_target, "%s/new-file", top);
    TL_CHECK(access(dangling_target, F_OK) != 0, "the failed open made %s", dangling_target);

    /* 1 */
    open_as(tl_rank % 2 ? alias : name, MPI_MODE_CREATE | MPI_MODE_RDWR, NULL, &fh);
    write_blocks(fh, 0, 1);
    tl_fill(rec, REC, 0, 2);    /* (alike everywhere: any order gives one file) */
    TL_MPI(MPI_File_seek_shared(fh, region, MPI_SEEK_SET));
    TL_MPI(MPI_File_write_shared(fh, rec, REC, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    check_blocks(fh, 0, (tl_rank + 1) % tl_nprocs, 1, "the next process's block, after a barrier");
    TL_MPI(MPI_File_close(&fh));

    /* 2 */
    const MPI_Offset second = region + (MPI_Offset) tl_nprocs * REC;
    open_as(alias, MPI_MODE_RDWR, "never", &fh);
    write_blocks(fh, second, 3);
    TL_MPI(MPI_File_close(&fh));

    /* 2b: an open that may create the file through the link looks at the
     * name after it (bbfs: so as not to wait behind other creates), where
     * its open did not look for the file's pending logs: it must fail, and
     * leave them. */
    if (tl_is_bbfs(name)) {
        int err = MPI_File_open(MPI_COMM_WORLD, alias, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh);
        TL_CHECK(err != MPI_SUCCESS, "MPI_MODE_CREATE through the link to a file with pending "
                 "logs succeeded (it would write past them)");
        tl_expect_class(err, MPI_ERR_FILE_IN_USE, "MPI_MODE_CREATE through the link to a file "
                        "with pending logs");
    }

    /* 3 */
    open_as(name, MPI_MODE_RDONLY, NULL, &fh);
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == second + region, "the file holds %lld bytes, expected %lld: %s",
             (long long) size, (long long) (second + region),
             size < second + region ? "the logs left by the open through the link were not "
             "found by the file's own name" : "a shared-pointer record landed past the others");
    for (int r = 0; r < tl_nprocs; r++) {
        memset(got, 0, REC);
        TL_MPI(MPI_File_read_at(fh, region + (MPI_Offset) r * REC, got, REC, MPI_BYTE,
                                MPI_STATUS_IGNORE));
        TL_CHECK(memcmp(got, rec, REC) == 0, "shared-pointer record %d is missing (two "
                 "processes' pointers were not one)", r);
    }
    check_blocks(fh, 0, tl_rank, 1, "a block of the first open");
    check_blocks(fh, second, (tl_rank + 1) % tl_nprocs, 3,
                 "a block left pending through the link, read by the file's own name");
    TL_MPI(MPI_File_close(&fh));

    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0 && tl_is_bbfs(name)) {
        char m[8192];
        TL_CHECK(tl_manifests(path, m, sizeof m) == 0, "a manifest is left: %s", m);
        TL_CHECK(tl_manifests(alias + prefix, m, sizeof m) == 0, "a manifest is left beside "
                 "the link: %s", m);
    }
    return tl_finish();
}
