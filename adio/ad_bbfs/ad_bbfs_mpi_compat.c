/*
 * The parts of ad_bbfs_mpi_compat.h that are code: packing a user's
 * noncontiguous buffer.
 */
#include "ad_bbfs.h"
#include "adioi.h"

#include <string.h>

#ifdef OPEN_MPI
/* By ROMIO's flattened form of the type (cached per type, as its own
 * strided I/O uses it): one memcpy a block, any size. */
static void copy_typed(int pack, char *user, MPI_Aint count, MPI_Datatype type, char *packed)
{
    ADIOI_Flatlist_node *flat = ADIOI_Flatten_and_find(type);
    MPI_Aint lb, extent;

    MPI_Type_get_extent(type, &lb, &extent);
    for (MPI_Aint e = 0; e < count; e++)
        for (MPI_Count b = 0; b < flat->count; b++) {
            char *u = user + e * extent + flat->indices[b];
            if (pack)
                memcpy(packed, u, flat->blocklens[b]);
            else
                memcpy(u, packed, flat->blocklens[b]);
            packed += flat->blocklens[b];
        }
}

int ADIOI_BBFS_Pack(const void *buf, MPI_Aint count, MPI_Datatype type, char *packed,
                    MPI_Aint size)
{
    (void) size;
    copy_typed(1, (char *) buf, count, type, packed);
    return MPI_SUCCESS;
}

int ADIOI_BBFS_Unpack(const char *packed, MPI_Aint size, void *buf, MPI_Aint count,
                      MPI_Datatype type)
{
    (void) size;
    copy_typed(0, buf, count, type, (char *) packed);
    return MPI_SUCCESS;
}
#else
int ADIOI_BBFS_Pack(const void *buf, MPI_Aint count, MPI_Datatype type, char *packed,
                    MPI_Aint size)
{
    MPI_Count pos = 0;
    return MPI_Pack_c(buf, count, type, packed, size, &pos, MPI_COMM_SELF);
}

int ADIOI_BBFS_Unpack(const char *packed, MPI_Aint size, void *buf, MPI_Aint count,
                      MPI_Datatype type)
{
    MPI_Count pos = 0;
    return MPI_Unpack_c(packed, size, &pos, buf, count, type, MPI_COMM_SELF);
}
#endif
