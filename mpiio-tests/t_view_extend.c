/* A process's view of the synced writes is extended, not rebuilt, by what
 * the writers logged since it was last built (under collective and posix
 * consistency, at every collective call or write; under mpiio, at every
 * sync point).  Two things must hold:
 *
 *  1. (the file the runner compares with ufs:) STEPS rounds, each of which
 *     overwrites every block of the region from another rank than the
 *     round before, half a block shifted every other round, so that the
 *     new pieces cut the view's old ones: every read after the round's
 *     visibility point (sync-barrier-sync, a collective call, or nothing
 *     under posix) sees that round's bytes and the half blocks the round
 *     left alone.
 *  2. (under collective and posix only, with the view read from the logs
 *     rather than a bbserver's map; in a scratch file) a write that
 *     comes before the view's latest one in the replay's order, though
 *     logged after the view was built: rank 1 writes a block and logs it,
 *     rank 0 reads it, writes the block itself and reads it back.  In the
 *     collective model the writes between two collective calls are ordered
 *     by the clock of their epoch's start (the sync), then by rank; the
 *     rank that sleeps before the sync starts its epoch later, and rounds
 *     alternate which one.  When it is rank 1, rank 0's write comes first
 *     in that order, and a view extended by it alone would show it; what
 *     rank 0 reads must be what the file holds after the replay.
 */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 64
#define HALF (BLOCK / 2)
#define STEPS 12
#define RACES 8

static int consistency_is(MPI_File fh, const char *model)
{
    char v[MPI_MAX_INFO_VAL + 1];
    return tl_info_get(fh, "bbfs_consistency", v) && !strcmp(v, model);
}

/* Whether others' writes are seen through a bbserver's ownership map
 * (several nodes, or forced): get_info's bbfs_map_server. */
static int through_server(MPI_File fh)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = tl_info_get(fh, "bbfs_map_server", v);

    TL_CHECK(flag && (!strcmp(v, "none") || !strcmp(v, "unconnected") || strchr(v, ':')),
             "get_info shows bbfs_map_server as \"none\", \"unconnected\" or a host:port "
             "(got %s)",
             flag ? v : "nothing");
    return strcmp(v, "none") != 0;
}

/* What makes this round's writes visible to every process. */
static void make_visible(MPI_File fh, int collective, int posix)
{
    MPI_Status st;
    char none;

    if (collective)
        TL_MPI(MPI_File_read_at_all(fh, 0, &none, 0, MPI_BYTE, &st));
    else if (posix)
        MPI_Barrier(MPI_COMM_WORLD);
    else
        tl_sync_barrier_sync(fh);
}

static void overwrite_rounds(MPI_File fh, int collective, int posix)
{
    int nblocks = 4 * tl_nprocs, nhalves = 2 * nblocks + 1;
    int tag_of[2 * 4 * 64 + 1];
    unsigned char got[HALF];
    MPI_Status st;
    char what[128];

    TL_CHECK(tl_nprocs <= 64, "at most 64 processes");
    memset(tag_of, 0, sizeof(tag_of));
    for (int s = 0; s < STEPS; s++) {
        int tag = 20 + s, shift = (s % 2) * HALF;
        /* this rank's blocks of the round, in one collective call */
        MPI_Datatype blocks;
        MPI_Type_vector(nblocks / tl_nprocs, BLOCK, BLOCK * tl_nprocs, MPI_BYTE, &blocks);
        MPI_Type_commit(&blocks);
        int first = ((tl_rank - s) % tl_nprocs + tl_nprocs) % tl_nprocs;
        MPI_Offset at = shift + (MPI_Offset) first * BLOCK;
        TL_MPI(MPI_File_set_view(fh, at, MPI_BYTE, blocks, "native", MPI_INFO_NULL));
        unsigned char *mine = malloc((size_t) nblocks / tl_nprocs * BLOCK);
        for (int k = 0; k < nblocks / tl_nprocs; k++)
            tl_fill(mine + k * BLOCK, BLOCK, at + (MPI_Offset) k * tl_nprocs * BLOCK, tag);
        TL_MPI(MPI_File_write_all(fh, mine, nblocks / tl_nprocs * BLOCK, MPI_BYTE, &st));
        free(mine);
        TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&blocks);
        for (int h = s % 2; h < s % 2 + 2 * nblocks; h++)
            tag_of[h] = tag;

        make_visible(fh, collective, posix);
        for (int h = 0; h < nhalves; h++) {
            if (!tag_of[h])
                continue;
            TL_MPI(MPI_File_read_at(fh, (MPI_Offset) h * HALF, got, HALF, MPI_BYTE, &st));
            snprintf(what, sizeof(what), "round %d, half block %d (written in round %d)", s, h,
                     tag_of[h] - 20);
            tl_verify(got, HALF, (long long) h * HALF, tag_of[h], what);
        }
    }
}

/* Part 2: what rank 0 reads after its own write equals the replayed file. */
static void late_writes(const char *name)
{
    char race[4096];
    unsigned char buf[BLOCK], got[BLOCK], a[BLOCK], b[BLOCK];
    int read_tag[RACES];
    MPI_File fh;
    MPI_Status st;
    char what[128];

    tl_sibling(name, ".race", race, sizeof(race));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, race, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    for (int i = 0; i < RACES; i++) {
        MPI_Offset at = (MPI_Offset) i * BLOCK;
        tl_fill(a, BLOCK, at, 100 + i);
        tl_fill(b, BLOCK, at, 200 + i);
        if (tl_rank == i % 2)
            usleep(5000);       /* this rank's epoch starts later */
        TL_MPI(MPI_File_sync(fh));
        if (tl_rank == 1) {
            TL_MPI(MPI_File_write_at(fh, at, a, BLOCK, MPI_BYTE, &st));
            TL_MPI(MPI_File_read_at(fh, at, got, 1, MPI_BYTE, &st));     /* (logs it) */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        read_tag[i] = 0;
        if (tl_rank == 0) {
            TL_MPI(MPI_File_read_at(fh, at, got, BLOCK, MPI_BYTE, &st));
            TL_MPI(MPI_File_write_at(fh, at, b, BLOCK, MPI_BYTE, &st));
            TL_MPI(MPI_File_read_at(fh, at, got, BLOCK, MPI_BYTE, &st));
            read_tag[i] = !memcmp(got, a, BLOCK) ? 100 + i : !memcmp(got, b, BLOCK) ? 200 + i : -1;
            TL_CHECK(read_tag[i] > 0, "race %d: rank 0 read neither rank 1's bytes nor its own",
                     i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, race, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (tl_rank == 0)
        for (int i = 0; i < RACES; i++) {
            TL_MPI(MPI_File_read_at(fh, (MPI_Offset) i * BLOCK, buf, BLOCK, MPI_BYTE, &st));
            snprintf(what, sizeof(what), "race %d: the replayed file holds what rank 0 read "
                     "(the bytes of round %d)", i, read_tag[i]);
            tl_verify(buf, BLOCK, (long long) i * BLOCK, read_tag[i], what);
        }
    TL_MPI(MPI_File_close(&fh));
    if (tl_rank == 0)
        TL_MPI(MPI_File_delete(race, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    int collective = consistency_is(fh, "collective"), posix = consistency_is(fh, "posix");
    int server = tl_is_bbfs(name) && through_server(fh);
    overwrite_rounds(fh, collective, posix);
    TL_MPI(MPI_File_close(&fh));
    /* (through a server the map keeps the later attach of a byte, which
     * agrees with the replay for the writes MPI orders, not for these) */
    if (collective || posix || !tl_is_bbfs(name)) {
        if (!server)
            late_writes(name);
    }
    return tl_finish();
}
