/* Deferred replay and pending logs.
 *
 * 1. A file closed with bbfs_replay=on_read_open is not replayed at close:
 *    its manifest stays and the canonical file is still empty.  The next read-only open through bbfs
 *    replays it, reads see the data, and afterwards the canonical file is a
 *    plain file with the data and the manifest and logs are gone.
 * 2. MPI_File_delete of a file whose logs are pending removes the file, the
 *    manifest and the logs. */
#include "testlib.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 50000

static int manifest_exists(const char *path)
{
    return tl_manifests(path, NULL, 0) > 0;
}

/* Log files in BBFS_LOGDIR whose names start with the file's base name. */
static int logs_of(const char *path)
{
    const char *dir = getenv("BBFS_LOGDIR"), *base = strrchr(path, '/') + 1;
    DIR *d = opendir(dir ? dir : "/tmp");
    struct dirent *e;
    int n = 0;
    size_t bl = strlen(base);
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, base, bl) && e->d_name[bl] == '.'
            && (strstr(e->d_name, ".metalog") || strstr(e->d_name, ".datalog")))
            n++;
    if (d)
        closedir(d);
    return n;
}

static long long posix_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long) st.st_size : -1;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *path = tl_path(name);
    int bbfs = tl_is_bbfs(name);
    MPI_File fh;
    MPI_Status st;
    unsigned char *buf = malloc(BLOCK);
    long long total = (long long) tl_nprocs * BLOCK;
    MPI_Offset off = (MPI_Offset) tl_rank * BLOCK;

    /* 1. replay deferred to the next read-only open */
    MPI_Info later;
    MPI_Info_create(&later);
    MPI_Info_set(later, "bbfs_replay", "on_read_open");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, later, &fh));
    MPI_Info_free(&later);
    tl_fill(buf, BLOCK, off, 1);
    TL_MPI(MPI_File_write_at_all(fh, off, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (bbfs && tl_rank == 0) {
        TL_CHECK(manifest_exists(path), "no manifest after a deferred close");
        TL_CHECK(posix_size(path) == 0, "canonical file has %lld bytes before replay",
                 posix_size(path));
        TL_CHECK(logs_of(path) == 2 * tl_nprocs, "%d log files, expected %d", logs_of(path),
                 2 * tl_nprocs);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    unsigned char *all = malloc(total);
    TL_MPI(MPI_File_read_at_all(fh, 0, all, (int) total, MPI_BYTE, &st));
    tl_verify(all, total, 0, 1, "read after replay at read-only open");
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0) {
        TL_CHECK(!manifest_exists(path), "manifest left after replay");
        TL_CHECK(posix_size(path) == total, "canonical file has %lld bytes, expected %lld",
                 posix_size(path), total);
        FILE *f = fopen(path, "rb");
        TL_CHECK(f && fread(all, 1, total, f) == (size_t) total, "cannot read %s", path);
        fclose(f);
        tl_verify(all, total, 0, 1, "canonical file read with stdio");
        TL_CHECK(logs_of(path) == 0, "%d log files left after replay", logs_of(path));
    }

    /* 2. delete with logs pending */
    char doomed[4200];
    MPI_Info info;
    tl_sibling(name, ".pending", doomed, sizeof(doomed));
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_replay", "never");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, doomed, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    MPI_Info_free(&info);
    TL_MPI(MPI_File_write_at_all(fh, off, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0) {
        if (bbfs)
            TL_CHECK(manifest_exists(tl_path(doomed)) && logs_of(tl_path(doomed)) > 0,
                     "bbfs_replay=never left no pending logs");
        TL_MPI(MPI_File_delete(doomed, MPI_INFO_NULL));
        TL_CHECK(access(tl_path(doomed), F_OK) != 0, "file survived delete");
        TL_CHECK(!manifest_exists(tl_path(doomed)), "manifest survived delete");
        TL_CHECK(logs_of(tl_path(doomed)) == 0, "%d log files survived delete",
                 logs_of(tl_path(doomed)));
    }
    free(all);
    free(buf);
    return tl_finish();
}
