/* Shared file pointer: ordered writes place ranks in rank order, shared
 * writes each land somewhere whole, seek_shared and get_position_shared
 * agree, read_ordered reads back in order; ordered calls back to back, of
 * sizes that differ by process and call, each find the pointer where the
 * last one left it. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define REC 1000
#define ROUNDS 64

/* The bytes process r moves in ordered call k of the back-to-back part. */
static int ordered_size(int k, int r)
{
    return 1 + (k * 7 + r * 13) % 97;
}

/* Where process r's piece of call k lands, from base. */
static MPI_Offset ordered_offset(MPI_Offset base, int k, int r, int nprocs)
{
    MPI_Offset off = base;
    for (int j = 0; j < k; j++)
        for (int p = 0; p < nprocs; p++)
            off += ordered_size(j, p);
    for (int p = 0; p < r; p++)
        off += ordered_size(k, p);
    return off;
}

/* Ordered calls back to back, with nothing between them: the next call
 * may take the shared pointer only after every process moved it past this
 * one.  ROMIO's ordered calls relied on the collective access inside them
 * to keep processes together; bbfs logs a collective write with no
 * communication, and the ordered call then makes a barrier of its own
 * (romio-unsynced-collectives.patch): without it, process 0 took the
 * pointer of call k+1 before the last process had moved it past call k,
 * and pieces landed over each other. */
static void back_to_back(MPI_File fh, MPI_Offset base)
{
    MPI_Status st;
    unsigned char buf[128], got[128];
    MPI_Offset pos, end = ordered_offset(base, ROUNDS, 0, tl_nprocs);

    TL_MPI(MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
    for (int k = 0; k < ROUNDS; k++) {
        int n = ordered_size(k, tl_rank);
        MPI_Offset off = ordered_offset(base, k, tl_rank, tl_nprocs);
        tl_fill(buf, n, off, 3);
        if (k % 4 == 3) {       /* the split form too */
            TL_MPI(MPI_File_write_ordered_begin(fh, buf, n, MPI_BYTE));
            TL_MPI(MPI_File_write_ordered_end(fh, buf, &st));
        } else
            TL_MPI(MPI_File_write_ordered(fh, buf, n, MPI_BYTE, &st));
    }
    TL_MPI(MPI_File_get_position_shared(fh, &pos));
    TL_CHECK(pos == end, "shared pointer at %lld after %d ordered writes, expected %lld",
             (long long) pos, ROUNDS, (long long) end);
    tl_sync_barrier_sync(fh);
    /* every piece where the order puts it, as this process reads it alone */
    for (int k = 0; k < ROUNDS; k++)
        for (int r = 0; r < tl_nprocs; r++) {
            MPI_Offset off = ordered_offset(base, k, r, tl_nprocs);
            TL_MPI(MPI_File_read_at(fh, off, got, ordered_size(k, r), MPI_BYTE, &st));
            tl_verify(got, ordered_size(k, r), off, 3, "ordered write back to back");
        }
    /* and read back to back the same way */
    TL_MPI(MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
    for (int k = 0; k < ROUNDS; k++) {
        int n = ordered_size(k, tl_rank);
        if (k % 4 == 1) {
            TL_MPI(MPI_File_read_ordered_begin(fh, got, n, MPI_BYTE));
            TL_MPI(MPI_File_read_ordered_end(fh, got, &st));
        } else
            TL_MPI(MPI_File_read_ordered(fh, got, n, MPI_BYTE, &st));
        tl_verify(got, n, ordered_offset(base, k, tl_rank, tl_nprocs), 3,
                  "ordered read back to back");
    }
    TL_MPI(MPI_File_get_position_shared(fh, &pos));
    TL_CHECK(pos == end, "shared pointer at %lld after %d ordered reads, expected %lld",
             (long long) pos, ROUNDS, (long long) end);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[REC], got[REC];
    MPI_Offset pos;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    /* ordered: rank r's record at r*REC */
    tl_fill(buf, REC, (MPI_Offset) tl_rank * REC, 1);
    TL_MPI(MPI_File_write_ordered(fh, buf, REC, MPI_BYTE, &st));
    /* write_ordered passes a token but does not synchronise at the end */
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_get_position_shared(fh, &pos));
    TL_CHECK(pos == (MPI_Offset) tl_nprocs * REC, "shared pointer at %lld after ordered",
             (long long) pos);
    MPI_Barrier(MPI_COMM_WORLD);

    /* shared, independent: records land in some order; each is tagged with
     * the writer's rank in its first byte so it can be recognised. */
    memset(buf, 0x40 + tl_rank, REC);
    TL_MPI(MPI_File_write_shared(fh, buf, REC, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_get_position_shared(fh, &pos));
    TL_CHECK(pos == 2 * (MPI_Offset) tl_nprocs * REC, "shared pointer at %lld",
             (long long) pos);
    MPI_Barrier(MPI_COMM_WORLD);
    tl_sync_barrier_sync(fh);
    if (tl_rank == 0) {
        int seen = 0;
        for (int k = 0; k < tl_nprocs; k++) {
            TL_MPI(MPI_File_read_at(fh, (MPI_Offset) (tl_nprocs + k) * REC, got, REC,
                                    MPI_BYTE, &st));
            int w = got[0] - 0x40;
            TL_CHECK(w >= 0 && w < tl_nprocs, "record %d has no writer tag", k);
            for (int i = 0; i < REC; i++)
                TL_CHECK(got[i] == got[0], "record %d torn at byte %d", k, i);
            seen |= 1 << w;
        }
        TL_CHECK(seen == (1 << tl_nprocs) - 1, "not every rank's shared record is present");
    }
    /* The shared-write region's order is not deterministic: overwrite it in
     * rank order so the file can be compared byte for byte. */
    TL_MPI(MPI_File_seek_shared(fh, (MPI_Offset) tl_nprocs * REC, MPI_SEEK_SET));
    tl_fill(buf, REC, (MPI_Offset) (tl_nprocs + tl_rank) * REC, 2);
    TL_MPI(MPI_File_write_ordered(fh, buf, REC, MPI_BYTE, &st));

    /* read_ordered from the start returns each rank's first record */
    TL_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    TL_MPI(MPI_File_read_ordered(fh, got, REC, MPI_BYTE, &st));
    tl_verify(got, REC, (MPI_Offset) tl_rank * REC, 1, "read_ordered");

    back_to_back(fh, 2 * (MPI_Offset) tl_nprocs * REC);
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
