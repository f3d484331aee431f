/* Shared file pointer: ordered writes place ranks in rank order, shared
 * writes each land somewhere whole, seek_shared and get_position_shared
 * agree, read_ordered reads back in order. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define REC 1000

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
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
