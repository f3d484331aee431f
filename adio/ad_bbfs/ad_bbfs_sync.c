/*
 * MPI's own synchronization as the storage model's (bbfs_consistency
 * causal, the default; docs/consistency.md): the handlers of MPICH's
 * storage synchronization hooks (adio/mpich-patches/mpich-sync-hooks.patch).
 *
 * Release, before anything leaves a process (a send, a collective's entry):
 * each causal handle's writes since its last release reach its logs (the
 * datalog and the metalog's records: no fsync, no new epoch) and, where a
 * server holds the file's map, the map.  Acquire, after a process received
 * (a receive, a wait or test, a blocking collective's exit): its causal
 * handles' views are stale, so the next read looks again, and the next
 * write stamps a clock that comes after the writes released before (across
 * nodes, the stamp waits in the log's queue and takes the clock of the
 * server's answer to the attach that releases it: no round trip of its
 * own; docs/reliability.md, clocks).  So a write that happens before a
 * read through MPI communication is visible to that read, and a write that
 * MPI orders after another lands after it.
 *
 * Until a causal handle is open, or has written, each hook costs MPICH a
 * load and a branch.  An acquire only counts; handles compare the count
 * when they next read or write.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "adio_extern.h"
#include "../../logfs/writer.h"

static ADIOI_BBFS_File *causal;         /* open causal handles, by next_causal */
static unsigned long acquires;          /* acquires since the process started */
static int releasing;                   /* (a release is under way: MPI calls it makes) */

static void release(void)
{
    if (releasing)
        return;
    releasing = 1;
    ADIOI_BBFS_sync_hooks.release_pending = 0;
    for (ADIOI_BBFS_File * bf = causal; bf; bf = bf->next_causal) {
        if (!bf->unreleased || !bf->writer)
            continue;
        /* The barrier of this handle's own MPI_File_close (ROMIO's, before
         * the driver's close: romio-release-at-close.patch) orders its
         * processes only against each other, all closing it; the close
         * then makes every write canonical, or visible (a deferred one),
         * before any of them returns.  Released there, a lazy session's
         * writes would make its files for nothing. */
        if (ADIOI_Closing != ADIO_FILE_NULL && ADIOI_Closing->fs_ptr == bf)
            continue;
        /* A failure shows at the handle's next sync or close, which flush
         * and attach the same writes again; this MPI call is not its. */
        int err;
        if (bf->srv)
            ADIOI_BBFS_Server_attach_own(bf, &err);     /* (flushes first) */
        else
            logfs_writer_flush(bf->writer, NULL);
        bf->unreleased = 0;
    }
    releasing = 0;
}

static void acquire(void)
{
    acquires++;
}

void ADIOI_BBFS_Sync_join(ADIOI_BBFS_File * bf)
{
    if (bf->hints.consistency != ADIOI_BBFS_CONSISTENCY_CAUSAL)
        return;
    bf->seen_acquires = acquires;
    bf->next_causal = causal;
    causal = bf;
    bf->in_causal = 1;
    ADIOI_BBFS_sync_hooks.release = release;
    ADIOI_BBFS_sync_hooks.acquire = acquire;
    ADIOI_BBFS_sync_hooks.acquire_active = 1;
}

void ADIOI_BBFS_Sync_leave(ADIOI_BBFS_File * bf)
{
    if (!bf->in_causal)
        return;
    for (ADIOI_BBFS_File ** pp = &causal; *pp; pp = &(*pp)->next_causal)
        if (*pp == bf) {
            *pp = bf->next_causal;
            break;
        }
    bf->in_causal = 0;
    if (!causal) {
        ADIOI_BBFS_sync_hooks.acquire_active = 0;
        ADIOI_BBFS_sync_hooks.release_pending = 0;
    }
}

void ADIOI_BBFS_Sync_wrote(ADIOI_BBFS_File * bf)
{
    if (!bf->in_causal)
        return;
    bf->unreleased = 1;
    ADIOI_BBFS_sync_hooks.release_pending = 1;
}

void ADIOI_BBFS_Sync_look(ADIOI_BBFS_File * bf)
{
    if (!bf->in_causal || bf->seen_acquires == acquires)
        return;
    bf->seen_acquires = acquires;
    /* Others may have released since: the next read looks again.  On one
     * node (the logs in sight) only if a log grew, as posix's reads do:
     * a release flushes before its message leaves, so a release that
     * came before this acquire shows in its writer's metalog now.  A
     * handle without logs (read-only) looks at every live session, if
     * one is published (a release publishes first): else it reads the
     * file as it did, on the lower driver's own paths (a collective read
     * of a finished file stays the lower driver's); through a server the
     * map answers. */
    if (!bf->metalogs && ADIOI_BBFS_No_session(bf))
        bf->others_live = 0;
    else if (bf->srv || !bf->metalogs) {
        ADIOI_BBFS_NEWS(bf);
        bf->others_live = 1;
    } else {
        bf->acquired = 1;
        ADIOI_BBFS_news++;
    }
    /* and this process's next writes come after theirs: through a server,
     * stamped with the clock of the answer to the attach that releases
     * them (which comes after every write attached before, and before
     * every write attached after), not with one more round trip for the
     * clock at the first write (ad_bbfs_order.c) */
    if (!bf->stamp_due && bf->srv)
        bf->stamp_later = 1;
    bf->stamp_due = 1;
    ADIOI_BBFS_Server_clock_stale(bf);
}
