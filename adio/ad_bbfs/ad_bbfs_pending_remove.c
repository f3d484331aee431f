/*
 * After a replay, the replayed sessions go: every manifest is marked
 * replayed, then every log is removed, then the manifests.  A crash at any
 * point leaves either sessions to replay again, whole, or marked ones whose
 * leftovers the next open or bbfs-replay removes (docs/reliability.md,
 * crash matrix).  Process 0 tells the map's server which sessions' bytes
 * are in the file now before any log goes, and every process waits for
 * that: a process out of the close first, opening the file again on its
 * own, would otherwise be sent by the map to logs already removed.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/fault.h"
#include "../../logfs/manifest.h"
#include "../../logfs/sessions.h"

#include <stdio.h>

static void remove_manifests(ADIOI_BBFS_File * bf, ADIOI_BBFS_Pending * p, int with_own)
{
    for (int i = 0; i < p->n; i++)
        logfs_session_remove(&p->claims[i]);
    if (with_own)
        ADIOI_BBFS_Manifest_remove(bf);
}

/* Process 0: mark every replayed session's manifest so.  @return 1 if all
 * are marked. */
static int mark_replayed(ADIOI_BBFS_File * bf, ADIOI_BBFS_Pending * p, struct logfs_manifest *m,
                         int with_own)
{
    int all = 1;

    for (int i = 0; i < p->n; i++) {
        char *text;
        size_t len;
        if (m[i].replayed)
            continue;
        m[i].replayed = 1;
        all = all && logfs_manifest_format(&m[i], &text, &len) == LOGFS_OK;
        if (all) {
            all = logfs_session_store(&p->claims[i], text, len, bf->hints.durable, NULL)
                == LOGFS_OK;
            free(text);
        }
    }
    /* (a lazy session's manifest may have been made by another process
     * since the close's look, as logs went to files: or by none) */
    if (with_own && all && bf->manifest_lazy)
        ADIOI_BBFS_Manifest_join(bf);
    if (with_own && all && ADIOI_BBFS_Manifest_held(bf)) {
        bf->manifest->replayed = 1;
        all = ADIOI_BBFS_Manifest_publish(bf) == MPI_SUCCESS;
    }
    return all;
}

/* remove_replayed where the session is this handle's alone and none of its
 * writers made log files (a lazy session replayed from memory): only the
 * manifest goes, then the canary, on process 0, with no collective.  (Logs
 * with files go on every process at once, below: process 0 alone freed
 * them one after the other, and a replay of 64 MiB at close took 20% longer.) */
static void remove_manifest_only(ADIOI_BBFS_File * bf, ADIOI_BBFS_Pending * p, int rank)
{
    logfs_fault("replayed");    /* (kill only) in the file, and the logs in memory */
    if (rank != 0)
        return;
    ADIOI_BBFS_Server_replayed(bf);
    if (!ADIOI_BBFS_Manifest_held(bf))  /* (nobody made one, nor the canary) */
        return;
    remove_manifests(bf, p, 1);
    if (bf->lazy)               /* (a crash before this leaves a canary, no manifest) */
        logfs_manifest_canary_remove(bf->metalogs[0]);
}

/* After a replay: the manifests are marked replayed, then the logs go,
 * then the manifests.  A crash at any point leaves either sessions to
 * replay again, whole, or marked ones whose leftovers the next open or
 * bbfs-replay removes: never a session replayed again, alone, over newer
 * writes of the others, nor a manifest whose logs are missing.  If a mark
 * cannot be written, the manifests go first (orphaned logs at worst). */
static void remove_replayed(ADIO_File fd, ADIOI_BBFS_Pending * p, struct logfs_manifest *m,
                            int with_own)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int rank, nprocs, marked = 0, nw = 0;

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &nprocs);
    if (p->n == 0 && with_own && p->nfiles == 0) {
        remove_manifest_only(bf, p, rank);
        return;
    }
    /* which logs no process of this job can reach (before anyone removes) */
    for (int i = 0; i < p->n; i++)
        nw += (int) m[i].nwriters;
    unsigned char *here = ADIOI_Calloc(nw ? nw : 1, 1), *far = ADIOI_Calloc(nw ? nw : 1, 1);
    for (int i = 0, at = 0; i < p->n; at += (int) m[i].nwriters, i++)
        ADIOI_BBFS_Manifest_reach(&m[i], here + at);
    if (nw > 0)                 /* (every process knows p->n: none, with the own alone) */
        MPI_Allreduce(here, far, nw, MPI_UNSIGNED_CHAR, MPI_MAX, fd->comm);
    for (int k = 0; k < nw; k++)
        far[k] = !far[k];
    logfs_fault("replayed");    /* (kill only) in the file, and still in the logs */
    if (rank == 0)
        marked = mark_replayed(bf, p, m, with_own);
    /* (a lazy session that made a manifest made a canary first) */
    int canary = rank == 0 && with_own && bf->lazy && ADIOI_BBFS_Manifest_held(bf);
    if (rank == 0 && !marked)
        remove_manifests(bf, p, with_own);
    if (rank == 0)
        ADIOI_BBFS_Server_replayed(bf);
    logfs_fault("marked");      /* (kill only) */
    MPI_Barrier(fd->comm);      /* (the map told, before any log goes) */
    int failed = 0, any_failed;
    for (int i = 0, at = 0; i < p->n; at += (int) m[i].nwriters, i++)
        failed += ADIOI_BBFS_Manifest_remove_logs(&m[i], far + at, rank, nprocs,
                                                  (double) bf->hints.server_timeout);
    ADIOI_Free(here);
    ADIOI_Free(far);
    if (with_own)
        failed += ADIOI_BBFS_Log_remove(bf->metalogs[rank]);
    if (canary)
        logfs_manifest_canary_remove(bf->metalogs[0]);      /* (after its own log) */
    logfs_fault("logs-removed");        /* (kill only) */
    /* (the barrier the manifests' removal needs, with the answer) */
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, fd->comm);
    if (rank == 0 && marked && any_failed)
        fprintf(stderr, "bbfs: %s: the data is in the file, but logs are left (above); their "
                "manifest stays, marked replayed, so that the next open or bbfs-replay of the "
                "file removes them\n", bf->canonical);
    else if (rank == 0 && marked)
        remove_manifests(bf, p, with_own);
}

/* Process 0: the sessions whose logs are gone now, for the map's server
 * (whose map may hold them: a twin handle's attaches stay).  With no other
 * session live the whole map goes: it also holds sessions replayed without
 * telling the server (bbfs-replay, a one-node open). */
static void note_replayed(ADIOI_BBFS_File * bf, const ADIOI_BBFS_Pending * p,
                          const struct logfs_manifest *m, int with_own)
{
    int n = bf->nreplayed + p->n + (with_own ? 1 : 0);
    if (!p->live_others)
        bf->replayed_all = 1;
    if (n == bf->nreplayed)
        return;
    bf->replayed = ADIOI_Realloc(bf->replayed, n * sizeof(*bf->replayed));
    for (int i = 0; i < p->n; i++) {
        bf->replayed[bf->nreplayed++] = m[i].file_id;
        if (!bf->replayed_map[0] && m[i].map[0])
            snprintf(bf->replayed_map, sizeof(bf->replayed_map), "%s", m[i].map);
    }
    if (with_own)
        bf->replayed[bf->nreplayed++] = bf->file_id;
}

/* The replayed sessions' logs and manifests go (remove_replayed), and
 * process 0 tells the map's server. */
void ADIOI_BBFS_Pending_remove_parsed(ADIO_File fd, ADIOI_BBFS_Pending * p,
                                      struct logfs_manifest *m, int with_own)
{
    int rank;
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0)
        note_replayed(ADIOI_BBFS_Private(fd), p, m, with_own);
    remove_replayed(fd, p, m, with_own);
}
