/* A handle whose own writes went to the file early (a truncating set_size
 * replays them first) must still read them back, though another handle
 * of the file that stays open synced older writes to the same bytes.
 * Under session consistency the open handle's writes are not promised to
 * this one, and must not hide its own.
 *
 * K (all processes) writes each process's block, syncs; barrier; H (all
 * processes, opened after) writes the same blocks anew and a little past
 * them, and cuts that off again with set_size (a size below unsynced
 * writes: H's logs go to the file first); each process reads its block
 * through H.  H then writes its blocks once more (the last close replays
 * K's logs, which are older), and the runner compares the file with ufs:.
 * (The cut spares K's bytes: a truncation below another open handle's
 * synced writes is not undone in the file when that handle's logs are
 * replayed later; docs/hints.md.) */
#include "testlib.h"
#include <stdlib.h>

#define BLOCK 8192

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File k, h;
    MPI_Status st;
    MPI_Offset mine = (MPI_Offset) tl_rank * BLOCK, end = (MPI_Offset) tl_nprocs * BLOCK;
    unsigned char *buf = malloc(BLOCK), *got = malloc(BLOCK);
    int rw = MPI_MODE_RDWR;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, rw | MPI_MODE_CREATE, MPI_INFO_NULL, &k));
    tl_fill(buf, BLOCK, mine, 1);
    TL_MPI(MPI_File_write_at(k, mine, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(k));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, rw, MPI_INFO_NULL, &h));
    tl_fill(buf, BLOCK, mine, 2);
    TL_MPI(MPI_File_write_at(h, mine, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_write_at(h, end + mine, buf, 100, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_size(h, end));
    TL_MPI(MPI_File_read_at(h, mine, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, mine, 2, "own write, after the cut sent it to the file");
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_write_at(h, mine, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&h));
    TL_MPI(MPI_File_close(&k));
    free(buf);
    free(got);
    return tl_finish();
}
