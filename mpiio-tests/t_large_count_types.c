/* File views and memory types built by MPI-4's large-count constructors
 * (MPI_Type_vector_c, ..._c), as mpi4py builds every type.  MPICH 4.0.2's
 * ROMIO decoded them with MPI_Type_get_envelope, which fails for such a type,
 * and aborted with "Out of memory in flatten.c" at the first view, on ufs:
 * as on bbfs: (adio/mpich-patches/mpich-type-c-int-contents.patch).
 *
 * Region k of the file is written through a view of constructor k: rank r
 * owns 8-byte block r of every row of P blocks, NB rows, so the ranks
 * together fill the region.  Odd regions are written collectively.  Every
 * rank reads every region back, plainly and through its own view. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

/* Open MPI 5.0 is an MPI-3.1 library, without the large-count calls: this
 * program then only says so, and fails (make check-ompi leaves it out). */
#if MPI_VERSION >= 4

#define NB 32
#define BL 8
#define GAP 5           /* memory: BL bytes of data, GAP bytes of hole */
#define TAG 9

enum { VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK, STRUCT,
       SUBARRAY, DARRAY, CONTIGUOUS, RESIZED, NKINDS };
static const char *const kind_name[NKINDS] = {
    "vector_c", "hvector_c", "indexed_c", "hindexed_c", "indexed_block_c",
    "hindexed_block_c", "struct_c", "subarray_c", "darray_c", "contiguous_c",
    "resized_c"
};

/* The filetype of constructor `kind` for this rank, and where its view
 * starts relative to the region (the constructors that cannot say "my
 * column" by themselves start at the rank's column). */
static MPI_Datatype view_type(int kind, MPI_Offset *shift)
{
    const MPI_Count P = tl_nprocs, row = P * BL;
    MPI_Count len[NB], disp_el[NB];
    MPI_Datatype types[NB], t = MPI_DATATYPE_NULL, inner;
    for (int i = 0; i < NB; i++) {
        len[i] = BL;
        disp_el[i] = i * row;
        types[i] = MPI_BYTE;
    }
    *shift = (MPI_Offset) tl_rank * BL;
    switch (kind) {
    case VECTOR: MPI_Type_vector_c(NB, BL, row, MPI_BYTE, &t); break;
    case HVECTOR: MPI_Type_create_hvector_c(NB, BL, row, MPI_BYTE, &t); break;
    case INDEXED: MPI_Type_indexed_c(NB, len, disp_el, MPI_BYTE, &t); break;
    case HINDEXED: MPI_Type_create_hindexed_c(NB, len, disp_el, MPI_BYTE, &t); break;
    case INDEXED_BLOCK:
        MPI_Type_create_indexed_block_c(NB, BL, disp_el, MPI_BYTE, &t);
        break;
    case HINDEXED_BLOCK:
        MPI_Type_create_hindexed_block_c(NB, BL, disp_el, MPI_BYTE, &t);
        break;
    case STRUCT: MPI_Type_create_struct_c(NB, len, disp_el, types, &t); break;
    case SUBARRAY: {
        MPI_Count sizes[2] = { NB, row }, sub[2] = { NB, BL }, start[2] = { 0, tl_rank * BL };
        MPI_Type_create_subarray_c(2, sizes, sub, start, MPI_ORDER_C, MPI_BYTE, &t);
        *shift = 0;
        break;
    }
    case DARRAY: {
        MPI_Count gsizes[2] = { NB, row };
        int distribs[2] = { MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC };
        int dargs[2] = { MPI_DISTRIBUTE_DFLT_DARG, BL }, psizes[2] = { 1, tl_nprocs };
        MPI_Type_create_darray_c(tl_nprocs, tl_rank, 2, gsizes, distribs, dargs, psizes,
                                 MPI_ORDER_C, MPI_BYTE, &t);
        *shift = 0;
        break;
    }
    case CONTIGUOUS:        /* a large-count type inside another one */
        MPI_Type_contiguous_c(BL, MPI_BYTE, &inner);
        MPI_Type_vector_c(NB, 1, P, inner, &t);
        MPI_Type_free(&inner);
        break;
    case RESIZED:           /* one block, tiled NB times by the view */
        MPI_Type_contiguous_c(BL, MPI_BYTE, &inner);
        MPI_Type_create_resized_c(inner, 0, row, &t);
        MPI_Type_free(&inner);
        break;
    }
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const long long region = (long long) NB * tl_nprocs * BL;
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype mtype;
    MPI_Type_create_hvector_c(NB, BL, BL + GAP, MPI_BYTE, &mtype);
    MPI_Type_commit(&mtype);
    size_t mlen = (size_t) NB * (BL + GAP);
    unsigned char *mem = malloc(mlen), *all = malloc(region);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    for (int k = 0; k < NKINDS; k++) {
        MPI_Offset shift;
        MPI_Datatype ft = view_type(k, &shift);
        long long base = k * region;
        memset(mem, 0xee, mlen);
        for (int i = 0; i < NB; i++)
            tl_fill(mem + (size_t) i * (BL + GAP), BL,
                    base + (long long) i * tl_nprocs * BL + tl_rank * BL, TAG);
        TL_MPI(MPI_File_set_view(fh, base + shift, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        if (k % 2)
            TL_MPI(MPI_File_write_all(fh, mem, 1, mtype, &st));
        else
            TL_MPI(MPI_File_write(fh, mem, 1, mtype, &st));
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        TL_CHECK(count == NB * BL, "%s view: wrote %d of %d bytes", kind_name[k], count,
                 NB * BL);
        tl_sync_barrier_sync(fh);

        memset(mem, 0, mlen);
        TL_MPI(MPI_File_read_at_all(fh, 0, mem, 1, mtype, &st));
        for (int i = 0; i < NB; i++)
            tl_verify(mem + (size_t) i * (BL + GAP), BL,
                      base + (long long) i * tl_nprocs * BL + tl_rank * BL, TAG,
                      kind_name[k]);
        TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        TL_MPI(MPI_File_read_at(fh, base, all, (int) region, MPI_BYTE, &st));
        tl_verify(all, region, base, TAG, kind_name[k]);
        MPI_Type_free(&ft);
    }
    TL_MPI(MPI_File_close(&fh));
    MPI_Type_free(&mtype);
    free(mem);
    free(all);
    return tl_finish();
}

#else
#include <stdio.h>
int main(void)
{
    fprintf(stderr, "t_large_count_types: this MPI (MPI_VERSION %d) has no MPI-4 "
            "large-count constructors to test\n", MPI_VERSION);
    return 1;
}
#endif
