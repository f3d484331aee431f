/*
 * bbfs_timing: where a handle's time went, printed by rank 0 at close, so a
 * user (and noncontig) can see which part of an end-to-end run to blame:
 * the open, the logged writes, the syncs, and the close split into its
 * agreement and the replay's parts (reading the metalogs and building the
 * plan, planning each epoch, reading the datalogs, the exchange between
 * processes and the collective writes).  Each part is the slowest
 * process's, so the parts need not add up to the close.
 */
#include "ad_bbfs.h"

void ADIOI_BBFS_Times_report(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    const ADIOI_BBFS_Times *t = &bf->times;
    double mine[9] = { t->open, t->log, t->sync, t->close, t->metalogs, t->plan, t->read,
        t->exchange, t->write
    }, max[9];
    /* calls, wants and bytes moved or read are summed; the rest are alike
     * everywhere */
    long long sum_in[5] = { t->calls, t->wants, t->moved, t->read_direct, t->own_replays },
        sum[5];
    long long max_in[3] = { t->epochs, t->rounds, t->metalog_bytes }, most[3];
    int rank;

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Reduce(mine, max, 9, MPI_DOUBLE, MPI_MAX, 0, fd->comm);
    MPI_Reduce(sum_in, sum, 5, MPI_LONG_LONG, MPI_SUM, 0, fd->comm);
    MPI_Reduce(max_in, most, 3, MPI_LONG_LONG, MPI_MAX, 0, fd->comm);
    long long view_in[5] = { t->view_builds, t->view_pieces, t->log_reads, t->log_read_pieces,
        t->view_restarts
    };
    long long view[5];
    MPI_Reduce(view_in, view, 5, MPI_LONG_LONG, MPI_MAX, 0, fd->comm);
    if (rank != 0)
        return;
    double replay = max[4] + max[5] + max[6] + max[7] + max[8];
    fprintf(stderr, "bbfs timing %s (slowest process per part, seconds): open %.4f, "
            "log %.4f (%lld write calls), sync %.4f, close %.4f = replay %.4f [metalogs "
            "and plan %.4f, epoch planning %.4f, datalog reads %.4f, exchange %.4f, "
            "writes %.4f] + the rest %.4f\n", fd->filename, max[0], max[1], sum[0],
            max[2], max[3], replay, max[4], max[5], max[6], max[7], max[8],
            max[3] > replay ? max[3] - replay : 0.0);
    if (view[0] > 0)
        fprintf(stderr, "bbfs view %s: %lld views of synced writes built (%lld again from "
                "scratch), %lld pieces put in them, %lld datalog reads for %lld pieces read "
                "(largest process)\n", fd->filename, view[0], view[4], view[1], view[2], view[3]);
    if (most[0] > 0)
        fprintf(stderr, "bbfs counts %s: %lld epochs in %lld exchange rounds, %lld metalog "
                "bytes gathered by each process, %lld datalog ranges asked of other "
                "processes and %lld bytes sent to them, %lld bytes read from the logs "
                "directly (all processes), %lld replays of a process's own log alone\n",
                fd->filename, most[0], most[1], most[2], sum[1], sum[2], sum[3], sum[4]);
}
