/* Atomic mode: concurrent overlapping writes of whole records; each record
 * read back is entirely one writer's (no interleaving), and get_atomicity
 * reports the mode.  Finally rank order is imposed so the file compares. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define REC 65536

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    int flag;
    unsigned char *buf = malloc(REC), *got = malloc(REC);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_set_atomicity(fh, 1));
    TL_MPI(MPI_File_get_atomicity(fh, &flag));
    TL_CHECK(flag == 1, "atomicity not set");
    memset(buf, 'A' + tl_rank, REC);
    for (int round = 0; round < 5; round++)
        TL_MPI(MPI_File_write_at(fh, 0, buf, REC, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_read_at(fh, 0, got, REC, MPI_BYTE, &st));
    for (int i = 0; i < REC; i++)
        TL_CHECK(got[i] == got[0], "atomic record mixes writers at byte %d", i);
    TL_CHECK(got[0] >= 'A' && got[0] < 'A' + tl_nprocs, "record from no writer");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0) {
        tl_fill(buf, REC, 0, 1);
        TL_MPI(MPI_File_write_at(fh, 0, buf, REC, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_read_at(fh, 0, got, REC, MPI_BYTE, &st));
    tl_verify(got, REC, 0, 1, "atomic mode read after barrier");
    TL_MPI(MPI_File_set_atomicity(fh, 0));
    TL_MPI(MPI_File_get_atomicity(fh, &flag));
    TL_CHECK(flag == 0, "atomicity not cleared");
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    free(got);
    return tl_finish();
}
