/*
 * What differs between the MPI libraries the driver is built into: MPICH
 * 4.0.2's ROMIO (tools/build-mpich.sh) and Open MPI 5.0's io/romio341
 * component, ROMIO 3.4.1 (tools/build-ompi.sh).  Everything the driver
 * needs that is not the same in both is named here once; the driver's
 * sources have no #if of their own for it.
 */
#ifndef AD_BBFS_MPI_COMPAT_H_INCLUDED
#define AD_BBFS_MPI_COMPAT_H_INCLUDED

/* (after adio.h: its romioconf.h sets the feature macros, such as
 * _GNU_SOURCE, before any system header) */
#include "adio.h"
#include <limits.h>

/* The storage synchronization hooks (consistency "causal"): the state each
 * library's patch adds, under its own name. */
#ifdef OPEN_MPI
/* adio/ompi-patches/ompi-sync-hooks.patch, ompi/runtime/ompi_sync_hooks.h.
 * Declared here rather than included: that header needs Open MPI's
 * internal configuration (ompi_config.h), which ROMIO's does not mix
 * with. */
struct ompi_sync_hooks {
    int release_pending;
    int acquire_active;
    void (*release) (void);
    void (*acquire) (void);
};
extern struct ompi_sync_hooks ompi_sync_hooks;
#define ADIOI_BBFS_sync_hooks ompi_sync_hooks
#else
/* adio/mpich-patches/mpich-sync-hooks.patch (Makefile.mk puts MPICH's
 * src/include last on the include path) */
#include "mpir_sync_hooks.h"
#define ADIOI_BBFS_sync_hooks MPIR_sync_hooks
#endif

/* ROMIO's flush fsyncs only a file its driver marked as written (ROMIO 4;
 * 3.4.1 fsyncs every open file). */
#ifdef OPEN_MPI
#define ADIOI_BBFS_MARK_WRITTEN(fd) ((void) (fd))
#else
#define ADIOI_BBFS_MARK_WRITTEN(fd) ((fd)->dirty_write = 1)
#endif

/* Packing a user's noncontiguous buffer of any size into a contiguous one
 * (outsize bytes) and back: MPI-4's large-count calls where the library
 * has them; Open MPI 5.0 has not, so there the buffer goes in pieces of
 * whole elements under 2 GiB each.  (An element of 2 GiB or more cannot be
 * packed there: MPI_ERR_COUNT.) */
#ifdef OPEN_MPI
static inline int ADIOI_BBFS_Pack_pieces(int pack, void *user, MPI_Aint count,
                                         MPI_Datatype type, char *packed, MPI_Aint size)
{
    MPI_Aint lb, extent;
    MPI_Count type_size;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_size_x(type, &type_size);
    if (type_size == 0 || count == 0)
        return MPI_SUCCESS;
    MPI_Aint per = INT_MAX / type_size;
    if (per == 0)
        return MPI_ERR_COUNT;
    for (MPI_Aint done = 0; done < count;) {
        int n = (int) (count - done < per ? count - done : per), pos = 0, err;
        char *u = (char *) user + done * extent;
        char *p = packed + done * type_size;
        int room = (int) (n * type_size);
        (void) size;
        err = pack ? MPI_Pack(u, n, type, p, room, &pos, MPI_COMM_SELF)
            : MPI_Unpack(p, room, &pos, u, n, type, MPI_COMM_SELF);
        if (err != MPI_SUCCESS)
            return err;
        done += n;
    }
    return MPI_SUCCESS;
}
#define ADIOI_BBFS_Pack(buf, count, type, packed, size) \
    ADIOI_BBFS_Pack_pieces(1, (void *) (buf), count, type, packed, size)
#define ADIOI_BBFS_Unpack(packed, size, buf, count, type) \
    ADIOI_BBFS_Pack_pieces(0, buf, count, type, packed, size)
#else
static inline int ADIOI_BBFS_Pack(const void *buf, MPI_Aint count, MPI_Datatype type,
                                  char *packed, MPI_Aint size)
{
    MPI_Count pos = 0;
    return MPI_Pack_c(buf, count, type, packed, size, &pos, MPI_COMM_SELF);
}

static inline int ADIOI_BBFS_Unpack(const char *packed, MPI_Aint size, void *buf,
                                    MPI_Aint count, MPI_Datatype type)
{
    MPI_Count pos = 0;
    return MPI_Unpack_c(packed, size, &pos, buf, count, type, MPI_COMM_SELF);
}
#endif

#endif /* AD_BBFS_MPI_COMPAT_H_INCLUDED */
