/* A session stays live until its whole close is done: no replay or drain may
 * claim it while a process of the handle still closes.
 *
 * One node, no server, several processes: each process's logs wait in
 * memory, and whichever process first makes log files at the close makes
 * the session's manifest, the others join it.  A close that leaves the logs
 * pending (bbfs_replay=never, on_read_open, background, and background is
 * the default with MPI_MODE_UNIQUE_OPEN) used to let a process that had
 * closed let go of the manifest before process 0 held it.  A drain (the
 * node's server, for the previous session of the file) or a read-only open
 * elsewhere then claimed the session, replayed what it found, and removed
 * the logs process 0 was still writing: that close failed with "logs
 * removed while the file was open", or "was claimed by a replay".
 *
 * Here process 0 is late in its first close (BBFS_FAULT=close-begin:pause),
 * and process 1, as soon as its own close returns, opens the file alone
 * read-only, which replays any session it can claim.  Before, it claimed
 * this one, replayed the three logs it found and removed them: process 0's
 * close then named logs that were gone, and the last open failed.  The
 * file is then opened, written and closed again at once several times (a
 * reopen right after a background close), read back and checked, and left
 * for the runner's comparison once drained.
 *
 * Opened with MPI_MODE_UNIQUE_OPEN, so bbfs_replay is background unless
 * ROMIO_HINTS says otherwise (t_close_held_never.mpi). */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIECE 8
#define NPIECES 512             /* per process and round */
#define ROUNDS 6

/* Process 1, right after its first close returned (while process 0 may
 * still be in its own): an open of its own, read-only, as another job's
 * would be.  It replays the pending sessions it may take, and reads; this
 * process's own pieces must be there.  (Process 0's need not be yet.) */
static void read_own_alone(const char *name, long long size)
{
    unsigned char *got = malloc((size_t) size);
    MPI_File fh;
    MPI_Status st;
    struct timespec ts = { 0, 100 * 1000 * 1000 };  /* (the others' closes done too) */
    nanosleep(&ts, NULL);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_read_at(fh, 0, got, (int) size, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    for (long long piece = tl_rank; piece * PIECE < size; piece += tl_nprocs)
        tl_verify(got + piece * PIECE, PIECE, piece * PIECE, 1, "own piece, read alone");
    free(got);
}

static void wait_drained(const char *path)
{
    int left = 1;
    for (int ms = 0; ms < 60000 && (left = tl_each_manifest(path, NULL, NULL)); ms += 10) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    TL_CHECK(!left, "%d sessions of %s still pending 60 s after the last close", left, path);
}

static unsigned char *round_buffer(int tag)
{
    unsigned char *buf = malloc((size_t) NPIECES * PIECE);
    for (int i = 0; i < NPIECES; i++)
        tl_fill(buf + (size_t) i * PIECE, PIECE, ((long long) i * tl_nprocs + tl_rank) * PIECE,
                tag);
    return buf;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
    long long size = (long long) NPIECES * PIECE * tl_nprocs;
    MPI_Datatype vec;
    MPI_File fh;
    MPI_Status st;

    MPI_Type_vector(NPIECES, PIECE, PIECE * tl_nprocs, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    for (int round = 1; round <= ROUNDS; round++) {
        TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode, MPI_INFO_NULL, &fh));
        TL_MPI(MPI_File_set_view(fh, (MPI_Offset) tl_rank * PIECE, MPI_BYTE, vec, "native",
                                 MPI_INFO_NULL));
        unsigned char *buf = round_buffer(round);
        TL_MPI(MPI_File_write(fh, buf, NPIECES * PIECE, MPI_BYTE, &st));
        free(buf);
        /* (the first close pauses on process 0: t_close_held.mpi) */
        TL_MPI(MPI_File_close(&fh));
        if (round == 1 && tl_rank == 1)
            read_own_alone(name, size);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *got = malloc((size_t) size);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_read_at_all(fh, 0, got, (int) size, MPI_BYTE, &st));
    tl_verify(got, (size_t) size, 0, ROUNDS, "the file after the last round");
    TL_MPI(MPI_File_close(&fh));
    free(got);
    /* the runner compares the file itself next: the drain must be done */
    if (tl_rank == 0 && tl_is_bbfs(name))
        wait_drained(tl_path(name));
    MPI_Type_free(&vec);
    return tl_finish();
}
