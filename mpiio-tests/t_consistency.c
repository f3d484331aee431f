/* The five consistency models side by side, one file each, same code:
 * rank 1 writes a block; rank 0 reads it back at different points and
 * checks what each model promises (bbfs_consistency):
 *
 *   posix    visible as soon as the write returned (barrier only)
 *   commit   visible once the writer synced (the reader need not sync)
 *   mpiio    visible after sync-barrier-sync
 *   collective  not after a barrier alone; visible after any collective
 *            call (no sync), as well as after sync-barrier-sync
 *   session  not visible after syncs; visible after close and reopen
 *
 * In every model the writer reads its own write back after its sync.
 *
 * On ufs: (the reference, POSIX semantics) every read sees the data, so
 * the "not visible" check runs on bbfs only.  Needs 2 or more processes. */
#include "testlib.h"
#include <stdio.h>
#include <string.h>

#define BLOCK 4096

static int read_block(MPI_File fh, unsigned char *got)
{
    MPI_Status st;
    memset(got, 0xEE, BLOCK);
    TL_MPI(MPI_File_read_at(fh, 0, got, BLOCK, MPI_BYTE, &st));
    for (int i = 0; i < BLOCK; i++)
        if (got[i] != tl_byte(i, 1))
            return 0;
    return 1;
}

static void one_model(const char *name, const char *model, int bbfs)
{
    char fname[4200];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    unsigned char buf[BLOCK], got[BLOCK];
    int seen = -1;

    snprintf(fname, sizeof(fname), "%s.%s", name, model);
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_consistency", model);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    if (tl_rank == 1) {
        tl_fill(buf, BLOCK, 0, 1);
        TL_MPI(MPI_File_write_at(fh, 0, buf, BLOCK, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0 && !strcmp(model, "posix"))
        TL_CHECK(read_block(fh, got), "posix: write not visible after barrier");
    if (!strcmp(model, "collective")) {
        if (tl_rank == 0 && bbfs)
            TL_CHECK(!read_block(fh, got), "collective: visible after a barrier alone");
        /* the writer flushes when it enters the collective call below */
        MPI_Barrier(MPI_COMM_WORLD);
        /* any collective data access, here one that moves nothing */
        TL_MPI(MPI_File_read_at_all(fh, 0, got, 0, MPI_BYTE, &st));
        if (tl_rank == 0)
            TL_CHECK(read_block(fh, got), "collective: not visible after a collective call");
    }
    if (tl_rank == 1)
        TL_MPI(MPI_File_sync(fh));      /* the writer's half of a sync point */
    else if (tl_rank != 0)
        TL_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0 && !strcmp(model, "commit"))
        TL_CHECK(read_block(fh, got), "commit: synced write not visible");
    if (tl_rank == 0) {
        TL_MPI(MPI_File_sync(fh));
        seen = read_block(fh, got);
        if (!strcmp(model, "mpiio") || !strcmp(model, "collective"))
            TL_CHECK(seen, "%s: not visible after sync-barrier-sync", model);
        if (!strcmp(model, "session") && bbfs)
            TL_CHECK(!seen, "session: visible before close/open");
    }
    /* Whatever the model, a process always reads its own writes, synced too. */
    if (tl_rank == 1)
        TL_CHECK(read_block(fh, got), "%s: the writer does not read its own synced write",
                 model);
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, info, &fh));
    if (tl_rank == 0)
        TL_CHECK(read_block(fh, got), "%s: not visible after close and reopen", model);
    TL_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *models[] = { "posix", "commit", "mpiio", "session", "collective" };
    MPI_File fh;
    MPI_Status st;

    TL_CHECK(tl_nprocs >= 2, "needs at least 2 processes");
    /* MPI_File_sync is collective: every rank calls it once per model. */
    for (int m = 0; m < 5; m++)
        one_model(name, models[m], tl_is_bbfs(name));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_write_at_all(fh, tl_rank, "c", 1, MPI_CHAR, &st));
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
