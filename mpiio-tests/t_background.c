/* bbfs_replay=background as a checkpoint uses it (mpiio-tests/server-drain.sh):
 * every process writes 8-byte pieces interleaved with the others' through a
 * vector view, in two epochs (the second rewrites a quarter of the first),
 * closes, and at once opens the file again read-only and checks every byte:
 * the open sees the right bytes while the node's server still drains.
 *
 * usage: t_background FILE [SHOWN [draining] [rewrite] [no-read-back]]   SHOWN: the
 * bbfs_replay MPI_File_get_info must show (default "background";
 * "on_close" where it falls back); draining: before the read-back, wait
 * until the server's drain holds the session (else the read-only open may
 * find it pending and replay it itself, which is right too, but not the
 * case under test); rewrite: then, while the drain still holds it, open the
 * file again with the default bbfs_replay=on_close, rewrite an eighth of
 * every process's pieces and close: the file must be canonical, the new
 * bytes over the drained ones, when that close returns (it waits for the
 * drain and replays its own after); no-read-back: end after the close,
 * the drain still running (tests/cluster/drain-nodes.sh kills its server
 * then). */
#include "testlib.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIECE 8
#define NPIECES 16384           /* per process and epoch */

/* The byte at offset off after both epochs (tag 1, then tag 2 over the
 * first quarter of every process's pieces). */
static int rewritten;            /* the rewrite (tag 3) was made */

static unsigned char want_at(long long off)
{
    long long piece = off / PIECE, nth = piece / tl_nprocs;
    return tl_byte(off, rewritten && nth < NPIECES / 8 ? 3 : nth < NPIECES / 4 ? 2 : 1);
}

/* Whether some other process holds the manifest exclusively: a drain's
 * claim (a handle's live lock is shared). */
static void claimed(const char *manifest, void *arg)
{
    int fd = open(manifest, O_RDONLY), *held = arg;
    struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
    if (fd >= 0 && fcntl(fd, F_GETLK, &l) == 0 && l.l_type == F_WRLCK)
        *held = 1;
    if (fd >= 0)
        close(fd);
}

static void wait_draining(const char *path)
{
    int held = 0;
    for (int i = 0; i < 20000 && !held; i++) {
        if (tl_each_manifest(path, claimed, &held) == 0)
            TL_CHECK(0, "the file was drained before the read-back could overlap the drain");
        if (!held) {
            struct timespec ts = { 0, 500 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    TL_CHECK(held, "no drain held the session after 10 s");
}

static void write_epoch(MPI_File fh, int tag, int npieces)
{
    unsigned char *buf = malloc((size_t) npieces * PIECE);
    for (int i = 0; i < npieces; i++)
        tl_fill(buf + (size_t) i * PIECE, PIECE,
                ((long long) i * tl_nprocs + tl_rank) * PIECE, tag);
    MPI_Status st;
    TL_MPI(MPI_File_write_at_all(fh, 0, buf, npieces * PIECE, MPI_BYTE, &st));
    free(buf);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *shown = argc > 2 ? argv[2] : "background";
    int draining = 0, rewrite = 0, read_back = 1;
    for (int a = 3; a < argc; a++) {
        draining |= !strcmp(argv[a], "draining");
        rewrite |= !strcmp(argv[a], "rewrite");
        read_back &= strcmp(argv[a], "no-read-back") != 0;
    }
    MPI_Datatype vec;
    MPI_Info info;
    MPI_File fh;
    long long size = (long long) NPIECES * PIECE * tl_nprocs;

    MPI_Type_vector(NPIECES, PIECE, PIECE * tl_nprocs, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_replay", "background");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    tl_expect_info(fh, "bbfs_replay", tl_is_bbfs(name) ? shown : TL_FOREIGN_HINT("background"));
    TL_MPI(MPI_File_set_view(fh, (MPI_Offset) tl_rank * PIECE, MPI_BYTE, vec, "native",
                             MPI_INFO_NULL));
    write_epoch(fh, 1, NPIECES);
    tl_sync_barrier_sync(fh);
    write_epoch(fh, 2, NPIECES / 4);
    TL_MPI(MPI_File_close(&fh));
    if (!read_back) {
        MPI_Type_free(&vec);
        return tl_finish();
    }

    /* read back at once: the drain may still run */
    if (draining && tl_is_bbfs(name) && tl_rank == 0)
        wait_draining(tl_path(name));
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *got = malloc((size_t) size);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_Offset fsize;
    TL_MPI(MPI_File_get_size(fh, &fsize));
    TL_CHECK(fsize == size, "size %lld right after the close, expected %lld",
             (long long) fsize, size);
    MPI_Status st;
    TL_MPI(MPI_File_read_at_all(fh, 0, got, (int) size, MPI_BYTE, &st));
    for (long long off = 0; off < size; off++)
        TL_CHECK(got[off] == want_at(off), "byte %lld is %u right after the close, expected %u",
                 off, got[off], want_at(off));
    TL_MPI(MPI_File_close(&fh));

    if (rewrite) {
        if (draining && tl_is_bbfs(name) && tl_rank == 0)
            wait_draining(tl_path(name));
        MPI_Barrier(MPI_COMM_WORLD);
        TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        TL_MPI(MPI_File_set_view(fh, (MPI_Offset) tl_rank * PIECE, MPI_BYTE, vec, "native",
                                 MPI_INFO_NULL));
        write_epoch(fh, 3, NPIECES / 8);
        TL_MPI(MPI_File_close(&fh));
        rewritten = 1;
        if (tl_rank == 0) {     /* the canonical file itself, at once */
            FILE *f = fopen(tl_path(name), "rb");
            TL_CHECK(f && fread(got, 1, (size_t) size, f) == (size_t) size,
                     "cannot read %lld bytes of %s right after the on_close close", size,
                     tl_path(name));
            fclose(f);
            for (long long off = 0; off < size; off++)
                TL_CHECK(got[off] == want_at(off), "byte %lld of the file is %u right after "
                         "the on_close close, expected %u", off, got[off], want_at(off));
        }
    }
    free(got);
    MPI_Type_free(&vec);
    return tl_finish();
}
