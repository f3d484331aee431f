/* 2-D global array, each rank a block of rows x cols via a subarray file
 * type (C order), written and read collectively; then a darray view
 * (block-cyclic) of a second array. */
#include "testlib.h"
#include <stdlib.h>

#define GR 48     /* divisible by the 1, 2, 3 rows of process grids used */
#define GC 96

static int check_and_fill(int *mem, int n, int tag, int fill)
{
    for (int i = 0; i < n; i++) {
        if (fill)
            mem[i] = -1;
        else if (mem[i] == -1)
            return 0;
    }
    (void) tag;
    return 1;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype sub, dar;
    int dims[2] = { 0, 0 };
    MPI_Dims_create(tl_nprocs, 2, dims);
    int gsizes[2] = { GR, GC };
    int coords[2] = { tl_rank / dims[1], tl_rank % dims[1] };
    int lsizes[2] = { GR / dims[0], GC / dims[1] };
    int starts[2] = { coords[0] * lsizes[0], coords[1] * lsizes[1] };
    int n = lsizes[0] * lsizes[1];
    int *mem = malloc(sizeof(int) * GR * GC);

    /* element value = its global index: a misplaced element is visible */
    for (int i = 0; i < lsizes[0]; i++)
        for (int j = 0; j < lsizes[1]; j++)
            mem[i * lsizes[1] + j] = (starts[0] + i) * GC + starts[1] + j;
    MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
    TL_MPI(MPI_File_write_all(fh, mem, n, MPI_INT, &st));

    /* darray: second array right after the first, block-cyclic(4) rows */
    int distribs[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK };
    int dargs[2] = { 4, MPI_DISTRIBUTE_DFLT_DARG };
    int psizes[2] = { tl_nprocs, 1 };
    MPI_Type_create_darray(tl_nprocs, tl_rank, 2, gsizes, distribs, dargs, psizes,
                           MPI_ORDER_C, MPI_INT, &dar);
    MPI_Type_commit(&dar);
    int dsize;
    MPI_Type_size(dar, &dsize);
    int dn = dsize / (int) sizeof(int);
    /* global index of my k-th darray element: rows r with (r/4)%P == rank */
    int k = 0;
    for (int r = 0; r < GR; r++)
        if ((r / 4) % tl_nprocs == tl_rank)
            for (int c = 0; c < GC; c++)
                mem[k++] = 100000 + r * GC + c;
    TL_CHECK(k == dn, "darray holds %d elements, expected %d", dn, k);
    TL_MPI(MPI_File_set_view(fh, (MPI_Offset) sizeof(int) * GR * GC, MPI_INT, dar, "native",
                             MPI_INFO_NULL));
    TL_MPI(MPI_File_write_all(fh, mem, dn, MPI_INT, &st));
    tl_sync_barrier_sync(fh);

    /* read both arrays whole, on every rank */
    TL_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    check_and_fill(mem, GR * GC, 0, 1);
    TL_MPI(MPI_File_read_at_all(fh, 0, mem, GR * GC, MPI_INT, &st));
    for (int i = 0; i < GR * GC; i++)
        TL_CHECK(mem[i] == i, "subarray element %d holds %d", i, mem[i]);
    TL_MPI(MPI_File_read_at_all(fh, GR * GC, mem, GR * GC, MPI_INT, &st));
    for (int i = 0; i < GR * GC; i++)
        TL_CHECK(mem[i] == 100000 + i, "darray element %d holds %d", i, mem[i]);
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&sub);
    MPI_Type_free(&dar);
    free(mem);
    return tl_finish();
}
