/* Replay in many small rounds (bbfs_replay_buffer=64k): blocks that straddle
 * round boundaries, both ways of filling a round (blocks of 4000 bytes are
 * read straight into place, blocks of 100 bytes are read and copied), and an
 * epoch with holes and a process overwriting itself (the piece list).
 *
 *   epoch 0  rank 0 writes a background over the whole file
 *   epoch 1  region A: vector of 4000-byte blocks, interleaved by rank
 *   epoch 2  region B: vector of 100-byte blocks, interleaved by rank
 *   epoch 3  region C: three pieces per rank with gaps, the middle one
 *            rewritten by the same rank; 10-byte patches over region A */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define ABLK 4000
#define ANBLK 64
#define BBLK 100
#define BNBLK 2000
#define CPIECE 30000

static void vector_write(MPI_File fh, MPI_Offset base, int blk, int nblk, int tag)
{
    MPI_Datatype ft;
    MPI_Status st;
    size_t n = (size_t) blk * nblk;
    unsigned char *buf = malloc(n);

    for (int b = 0; b < nblk; b++)
        tl_fill(buf + (size_t) b * blk, blk,
                base + ((long long) b * tl_nprocs + tl_rank) * blk, tag);
    MPI_Type_vector(nblk, blk, blk * tl_nprocs, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    TL_MPI(MPI_File_set_view(fh, base + (MPI_Offset) tl_rank * blk, MPI_BYTE, ft, "native",
                             MPI_INFO_NULL));
    TL_MPI(MPI_File_write(fh, buf, (int) n, MPI_BYTE, &st));
    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    free(buf);
}

static void write_at(MPI_File fh, MPI_Offset off, size_t len, int tag)
{
    MPI_Status st;
    unsigned char *buf = malloc(len);
    tl_fill(buf, len, off, tag);
    TL_MPI(MPI_File_write_at(fh, off, buf, (int) len, MPI_BYTE, &st));
    free(buf);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Info info;
    MPI_Offset a = 0, b = a + (MPI_Offset) ABLK * ANBLK * tl_nprocs;
    MPI_Offset c = b + (MPI_Offset) BBLK * BNBLK * tl_nprocs;
    MPI_Offset end = c + (MPI_Offset) 4 * CPIECE * tl_nprocs;

    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_replay_buffer", "64k");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);

    if (tl_rank == 0)
        write_at(fh, 0, (size_t) end, 1);
    tl_sync_barrier_sync(fh);
    vector_write(fh, a, ABLK, ANBLK, 2);
    tl_sync_barrier_sync(fh);
    vector_write(fh, b, BBLK, BNBLK, 3);
    tl_sync_barrier_sync(fh);

    /* Region C: this rank's 4 * CPIECE bytes get pieces 0, 2 (rewritten
     * in part) and 3 minus a gap; piece 1 keeps the background. */
    MPI_Offset mine = c + (MPI_Offset) tl_rank * 4 * CPIECE;
    write_at(fh, mine, CPIECE, 4);
    write_at(fh, mine + 2 * CPIECE, CPIECE, 4);
    write_at(fh, mine + 3 * CPIECE + 5000, CPIECE - 5000, 4);
    write_at(fh, mine + 2 * CPIECE + 7777, 3333, 5);
    for (int k = 0; k < 40; k++)       /* patches inside this rank's A blocks */
        write_at(fh, a + ((MPI_Offset) (k * 37 % ANBLK) * tl_nprocs + tl_rank) * ABLK
                 + (k * 997) % (ABLK - 10), 10, 6 + k % 3);
    tl_sync_barrier_sync(fh);

    /* Everything read back through bbfs before the replay. */
    unsigned char *all = malloc((size_t) end);
    MPI_Status st;
    TL_MPI(MPI_File_read_at_all(fh, 0, all, (int) end, MPI_BYTE, &st));
    for (int r = 0; r < tl_nprocs; r++) {
        MPI_Offset cr = c + (MPI_Offset) r * 4 * CPIECE;
        tl_verify(all + cr + CPIECE, CPIECE, cr + CPIECE, 1, "region C gap (background)");
        tl_verify(all + cr + 2 * CPIECE + 7777, 3333, cr + 2 * CPIECE + 7777, 5,
                  "region C rewrite");
        tl_verify(all + cr + 3 * CPIECE, 5000, cr + 3 * CPIECE, 1, "region C hole");
        tl_verify(all + cr + 3 * CPIECE + 5000, CPIECE - 5000, cr + 3 * CPIECE + 5000, 4,
                  "region C last piece");
    }
    tl_verify(all + b, (size_t) (c - b), b, 3, "region B");
    free(all);
    TL_MPI(MPI_File_close(&fh));        /* replays, 64 KiB per process per round */
    return tl_finish();
}
