/* One file written by two jobs at once (run by two-jobs.sh): each job is a
 * session of its own; the second job's close, while the first is still
 * open, leaves its logs pending, and the first job's close replays both in
 * the order the writes were made.  The second job also reads what the
 * first synced before it started.
 *
 *   t_twojobs first|second FILE DIR   (DIR: marker files between the jobs)
 *
 * first:  writes region 0, syncs, says "A-synced"; waits for "B-done";
 *         writes region 2 and the first half of region 1 again; closes.
 * second: waits for "A-synced"; reads region 0; writes region 1; closes;
 *         says "B-done".
 * The file must hold region 0 (tag 1), region 1 (first half tag 3 from the
 * first job, which wrote it later; second half tag 2), region 2 (tag 4). */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REGION 16384

static void mark(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f)
        fclose(f);
}

static void wait_for(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    for (int i = 0; i < 6000 && access(p, F_OK) != 0; i++)
        usleep(10000);
    TL_CHECK(access(p, F_OK) == 0, "the other job never said %s", name);
}

/* This process's share of region k: REGION / nprocs bytes. */
static void put(MPI_File fh, int region, int tag, MPI_Offset from, MPI_Offset len)
{
    MPI_Offset share = REGION / tl_nprocs, o = (MPI_Offset) region * REGION + tl_rank * share;
    unsigned char *buf = malloc(share);
    MPI_Status st;
    if (o + share <= (MPI_Offset) region * REGION + from ||
        o >= (MPI_Offset) region * REGION + from + len) {
        free(buf);
        return;
    }
    tl_fill(buf, share, o, tag);
    TL_MPI(MPI_File_write_at(fh, o, buf, (int) share, MPI_BYTE, &st));
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: t_twojobs first|second FILE DIR\n");
        return 2;
    }
    const char *role = argv[1], *dir = argv[3];
    argv[1] = argv[2];          /* tl_init takes the file name from argv[1] */
    argc = 2;
    const char *name = tl_init(&argc, &argv);
    int first = strcmp(role, "first") == 0;
    MPI_File fh;
    MPI_Status st;

    if (!first && tl_rank == 0)
        wait_for(dir, "A-synced");
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    if (first) {
        put(fh, 0, 1, 0, REGION);
        TL_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        if (tl_rank == 0) {
            mark(dir, "A-synced");
            wait_for(dir, "B-done");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        TL_MPI(MPI_File_sync(fh));
        put(fh, 2, 4, 0, REGION);
        put(fh, 1, 3, 0, REGION / 2);
    } else {
        unsigned char *got = malloc(REGION);
        TL_MPI(MPI_File_read_at(fh, 0, got, REGION, MPI_BYTE, &st));
        tl_verify(got, REGION, 0, 1, "the second job reads what the first synced");
        free(got);
        put(fh, 1, 2, 0, REGION);
    }
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (!first && tl_rank == 0) {
        if (tl_is_bbfs(name))
            TL_CHECK(tl_manifests(tl_path(name), NULL, 0) == 2,
                     "the second job's close while the first is open must leave its logs pending");
        mark(dir, "B-done");
    }
    return tl_finish();
}
