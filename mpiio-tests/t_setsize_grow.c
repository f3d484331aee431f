/* MPI_File_set_size that grows the file past everything written is logged:
 * the logs stay pending (HDF5 grows the file at every H5Fclose, and with
 * bbfs_replay=never or on_read_open that close must stay as cheap as an
 * append), yet every process sees the new size and zeros in the new tail
 * at once, and the replay gives the file ufs: gives.  A set_size below what
 * some process wrote, even unsynced, still replays first. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOCK 4096

/* The canonical file's size, as a serial tool sees it. */
static long long canonical_size(const char *name)
{
    struct stat sb;
    return stat(tl_path(name), &sb) == 0 ? (long long) sb.st_size : -1;
}

static void expect_size(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset size;
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == want, "%s: size %lld, expected %lld", what, (long long) size,
             (long long) want);
}

/* bbfs_replay=never given through ROMIO_HINTS (the spec) */
static int replay_deferred(void)
{
    MPI_File fh;
    MPI_Info info;
    char v[64];
    int flag = 0;

    if (MPI_File_open(MPI_COMM_SELF, "bbfs:/dev/null", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)
        != MPI_SUCCESS)
        return 0;
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "bbfs_replay", sizeof(v) - 1, v, &flag);
    MPI_Info_free(&info);
    MPI_File_close(&fh);
    return flag && !strcmp(v, "never");
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int bbfs = tl_is_bbfs(name);
    unsigned char buf[BLOCK], got[BLOCK];
    MPI_Offset off = (MPI_Offset) tl_rank * BLOCK, full = (MPI_Offset) tl_nprocs * BLOCK;
    int peer = (tl_rank + 1) % tl_nprocs;
    MPI_File fh;
    MPI_Status st;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    tl_fill(buf, BLOCK, off, 1);
    TL_MPI(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, &st));

    /* grow with the writes still unsynced: every process sees the size */
    TL_MPI(MPI_File_set_size(fh, 3 * full));
    expect_size(fh, 3 * full, "after a grow");
    TL_MPI(MPI_File_read_at(fh, 2 * full + off, got, BLOCK, MPI_BYTE, &st));
    for (int i = 0; i < BLOCK; i++)
        TL_CHECK(got[i] == 0, "grown tail byte %d is %d", i, got[i]);
    if (bbfs)
        TL_CHECK(canonical_size(name) == 0, "the grow went to the canonical file (%lld "
                 "bytes): it should have been logged", canonical_size(name));

    /* writes inside the grown file, a grow to the same size, another grow */
    tl_fill(buf, BLOCK, full + off, 2);
    TL_MPI(MPI_File_write_at_all(fh, full + off, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_size(fh, 3 * full));
    tl_sync_barrier_sync(fh);
    TL_MPI(MPI_File_read_at(fh, full + (MPI_Offset) peer * BLOCK, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, full + (MPI_Offset) peer * BLOCK, 2, "a peer's write after a grow");
    TL_MPI(MPI_File_set_size(fh, 4 * full + 5));
    expect_size(fh, 4 * full + 5, "after a second grow");
    if (bbfs)
        TL_CHECK(canonical_size(name) == 0, "the second grow went to the canonical file");

    TL_MPI(MPI_File_close(&fh));
    /* with bbfs_replay=never (the spec's hints) a close leaves the logs
     * pending: nothing of them reached the canonical file */
    if (bbfs && replay_deferred()) {
        MPI_Barrier(MPI_COMM_WORLD);
        TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 1, "no pending logs after close");
        TL_CHECK(canonical_size(name) == 0, "the close wrote the canonical file");
    }

    /* the next open replays them */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    expect_size(fh, 4 * full + 5, "after close and reopen");
    TL_MPI(MPI_File_read_at(fh, off, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, off, 1, "first block after reopen");
    MPI_Barrier(MPI_COMM_WORLD);        /* before anyone writes past that size */

    /* a "grow" below one process's unsynced write is a truncation: exact */
    if (tl_rank == tl_nprocs - 1) {
        tl_fill(buf, BLOCK, 5 * full, 3);
        TL_MPI(MPI_File_write_at(fh, 5 * full, buf, BLOCK, MPI_BYTE, &st));
    }
    TL_MPI(MPI_File_set_size(fh, 5 * full + 10));
    expect_size(fh, 5 * full + 10, "after a cut of an unsynced write");
    TL_MPI(MPI_File_read_at(fh, 5 * full, got, 10, MPI_BYTE, &st));
    tl_verify(got, 10, 5 * full, 3, "the bytes the cut kept");
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
