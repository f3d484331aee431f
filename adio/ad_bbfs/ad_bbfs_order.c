/*
 * The order of writes that the logs keep beyond their epochs: around
 * collective calls (a count of their boundaries), in time under posix
 * consistency, and across this process's handles of a file (a STAMP at
 * every switch).  The replay planner applies it (logfs/planner.c).  The
 * collective model's visibility at each collective call is here too.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/writer.h"

/* Every process enters the same collective calls in the same order, so
 * counting their boundaries orders the writes around each call on every
 * process: writes before call k, in it, and after it have the counts
 * 2k-2, 2k-1 and 2k.  HDF5 writes a chunk's fill values in one
 * write_at_all and its data in the next, or with independent writes after
 * the call and a barrier; ROMIO over a POSIX file applies them in that
 * order, and the later ones win here too. */
static void order_boundary(ADIOI_BBFS_File * bf)
{
    bf->boundaries++;
    if (bf->writer)
        /* cannot fail: outside a write call, and the count only grows */
        logfs_writer_order(bf->writer, bf->boundaries, NULL);
}

/* With a server, the map keeps the later attach of a byte, so the writes
 * before, in and after each collective call reach it in that order: what
 * each process wrote is attached at every boundary before anyone goes on.
 * (Errors show at the next sync or close, which attach the same notes
 * again.)  The collective model does this at entry already.  A handle
 * that logs no writes (read-only: alike on every process) has nothing to
 * put in order, and its collective reads make no barrier. */
static void attach_at_boundary(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int err;

    /* (unconnected: a handle of one process, whose writes others see
     * only after a release, which attaches them) */
    if (!ADIOI_BBFS_Server_connected(bf) || !bf->log_writes)
        return;
    if (bf->writer)
        ADIOI_BBFS_Server_attach(fd, &err);
    MPI_Barrier(fd->comm);
}

void ADIOI_BBFS_Collective_end(ADIO_File fd)
{
    order_boundary(ADIOI_BBFS_Private(fd));
    attach_at_boundary(fd);
}

void ADIOI_BBFS_Collective_begin(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    order_boundary(bf);
    if (bf->hints.consistency != ADIOI_BBFS_CONSISTENCY_COLLECTIVE) {
        attach_at_boundary(fd);
        return;
    }
    /* The collective model: what every process wrote before this call is
     * visible to reads in and after it.  Each flushes its log, and no one
     * goes on before all have (a flush that fails shows at the next sync
     * or close, which write the same records again). */
    if (bf->writer)
        logfs_writer_flush(bf->writer, NULL);
    if (bf->writer) {
        int err;                /* (shows at the next sync or close, as above) */
        ADIOI_BBFS_Server_attach(fd, &err);
    }
    MPI_Barrier(fd->comm);
    ADIOI_BBFS_NEWS(bf);
    bf->others_live = 1;
}

/* The clock for a stamp that could not wait for the release's attach (the
 * log's queue filled, or a sync came first): the map's server heard now. */
static uint64_t heard_clock(void *arg)
{
    ADIOI_BBFS_Server_clock_hear(arg);
    return ADIOI_BBFS_Clock();
}

/* The handle of this process that logged last (compared, never used). */
static const ADIOI_BBFS_File *last_handle;

void ADIOI_BBFS_Order_switch(ADIOI_BBFS_File * bf)
{
    int posix = bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_POSIX;

    ADIOI_BBFS_Sync_look(bf);   /* (causal: after an acquire, stamp) */
    if (!posix && last_handle != bf) {
        ADIOI_BBFS_Server_switch(bf);   /* (with a server) the others' writes first */
        /* Another handle wrote last: this process's writes through two
         * handles of a file keep their program order when their sessions
         * are replayed together (PnetCDF writes the header through its
         * collective handle, the data through its MPI_COMM_SELF one).  Any
         * switch stamps, so that A, then another file, then B still does. */
        bf->stamp_due = 1;
        bf->stamp_later = 0;
    }
    last_handle = bf;
    if (!posix && !bf->stamp_due)
        return;
    /* (causal through a server after an acquire; and a handle that has
     * not found its server yet, whose writes others see only once an
     * attach publishes them: ordered after every write attached before) */
    if (!posix && (bf->stamp_later || (bf->srv && !ADIOI_BBFS_Server_connected(bf)))) {
        logfs_writer_stamp_later(bf->writer, heard_clock, bf, NULL);
        bf->stamp_due = bf->stamp_later = 0;
        return;
    }
    if (posix)
        /* Every write in time order, as a POSIX file system keeps them:
         * HDF5 writes the same bytes from two processes with only a
         * barrier between (a chunk's fill, then its data; metadata).
         * With a server, each write hears its clock first (one more round
         * trip): the barrier may order it after another node's write. */
        ADIOI_BBFS_Server_clock_stale(bf);
    /* The first write after a sync (or the log's start, or a switch)
     * stamps: with a server, after hearing its clock since that sync. */
    ADIOI_BBFS_Server_clock_hear(bf);
    logfs_writer_stamp(bf->writer, ADIOI_BBFS_Clock(), NULL);
    bf->stamp_due = 0;
}
