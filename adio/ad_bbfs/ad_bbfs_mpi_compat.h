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

/* A user's noncontiguous buffer of any size (count elements of type) to
 * a contiguous one of `size` bytes and back (ad_bbfs_mpi_compat.c): MPI-4's
 * large-count pack calls where the library has them; Open MPI 5.0 has
 * none, and its MPI_Pack cannot take one element of 2 GiB or more. */
int ADIOI_BBFS_Pack(const void *buf, MPI_Aint count, MPI_Datatype type, char *packed,
                    MPI_Aint size);
int ADIOI_BBFS_Unpack(const char *packed, MPI_Aint size, void *buf, MPI_Aint count,
                      MPI_Datatype type);

#endif /* AD_BBFS_MPI_COMPAT_H_INCLUDED */
