/*
 * Pending sessions: logs that nobody holds any more (a deferred close, a
 * handle closed while another on the same file stayed open, a crashed job).
 *
 * The first step of a collective open: process 0 finds the lower driver (as
 * ROMIO would detect it, unless the name forces one), lists the file's
 * logging sessions and picks the id of this open's logs; one broadcast
 * tells everyone.  If no other handle of the file is open, the pending
 * sessions become the canonical file now, replayed by this job's processes
 * however many wrote them, so the lower open (and MPI_MODE_APPEND's end of
 * file) sees them.  While another handle is open they stay pending and
 * reads see them: replaying them now could put them under older writes of
 * that handle, replayed at its close.
 *
 * At close, the last handle of the file replays the pending sessions and
 * its own in one plan (logfs_plan_build_sessions), so the writes of several
 * handles land in the order they were made, whichever closes last.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/coding.h"
#include "../../logfs/fault.h"
#include "../../logfs/manifest.h"
#include "../../logfs/sessions.h"
#include "../../logfs/writer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The pending manifests' texts (n of them, total bytes with their NULs),
 * from process 0 to all.  Collective when n > 0, as everyone knows. */
static void bcast_texts(MPI_Comm comm, int rank, long long n, long long total,
                        ADIOI_BBFS_Pending * p)
{
    if (n == 0)
        return;
    /* back to back, each with its NUL */
    char *all = ADIOI_Malloc(total);
    if (rank == 0)
        for (int i = 0, at = 0; i < p->n; at += (int) p->lens[i] + 1, i++)
            memcpy(all + at, p->texts[i], p->lens[i] + 1);
    MPI_Bcast(all, (int) total, MPI_CHAR, 0, comm);
    if (rank != 0) {
        p->n = (int) n;
        p->texts = ADIOI_Calloc(p->n, sizeof(*p->texts));
        p->lens = ADIOI_Calloc(p->n, sizeof(*p->lens));
        for (int i = 0, at = 0; i < p->n; i++) {
            p->lens[i] = strlen(all + at);
            p->texts[i] = ADIOI_Strdup(all + at);
            at += (int) p->lens[i] + 1;
        }
    }
    ADIOI_Free(all);
}

/* Process 0's findings as the open's and close's collectives carry them
 * (bcast_open_state's header after the error class).  Process 0 only. */
static void open_state(const ADIOI_BBFS_File * bf, const ADIOI_BBFS_Pending * p,
                       long long hdr[7])
{
    hdr[0] = p->n;
    hdr[1] = 0;
    for (int i = 0; i < p->n; i++)
        hdr[1] += (long long) p->lens[i] + 1;
    hdr[2] = (long long) bf->file_id;
    hdr[3] = bf->lower_fstype;
    hdr[4] = p->live_others;
    hdr[5] = p->others;
    hdr[6] = p->deferred;
}

/* The other side of open_state, on every process: process 0's findings,
 * and then the texts of the pending manifests they count (collective when
 * there are any). */
static void take_state(ADIOI_BBFS_File * bf, MPI_Comm comm, int rank, const long long hdr[7],
                       ADIOI_BBFS_Pending * p)
{
    bf->file_id = (uint64_t) hdr[2];
    bf->lower_fstype = (int) hdr[3];
    p->live_others = (int) hdr[4];
    p->others = (int) hdr[5];
    p->deferred = (int) hdr[6];
    bcast_texts(comm, rank, hdr[0], hdr[1], p);
}

/* One broadcast of everything process 0 found: the outcome (its MPI error
 * class), this open's log id, the lower driver, the pending manifests.
 * Collectives are expensive when processes share cores; an open makes as
 * few as it can. */
static int bcast_open_state(MPI_Comm comm, const char *myname, int err, ADIOI_BBFS_File * bf,
                            ADIOI_BBFS_Pending * p)
{
    long long hdr[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int rank;

    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        if (err != MPI_SUCCESS) {
            int cls;            /* an int, whatever the byte order of hdr */
            MPI_Error_class(err, &cls);
            hdr[0] = cls;
        }
        open_state(bf, p, hdr + 1);
    }
    MPI_Bcast(hdr, 8, MPI_LONG_LONG, 0, comm);
    if (hdr[0] != 0)
        return rank == 0 ? err : MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                      myname, __LINE__, (int) hdr[0], "**io",
                                                      "bbfs: failed on process 0 (see its "
                                                      "error)");
    take_state(bf, comm, rank, hdr + 1, p);
    return MPI_SUCCESS;
}

/* The claimed manifests, parsed once (a close's replay and the removal
 * after its lower close use the same); every process parsed the same
 * texts, so all fail alike. */
static int parse_all(ADIOI_BBFS_File * bf, ADIOI_BBFS_Pending * p)
{
    static char myname[] = "ADIOI_BBFS_REPLAY_PENDING";
    struct logfs_error le;

    if (p->parsed)
        return MPI_SUCCESS;
    struct logfs_manifest *m = ADIOI_Calloc(p->n + 1, sizeof(*m));
    for (int i = 0; i < p->n; i++) {
        int rc = logfs_manifest_parse(p->texts[i], p->lens[i], &m[i], &le);
        if (rc != LOGFS_OK) {
            char msg[LOGFS_ERRMSG_MAX + 64];
            for (int k = 0; k < i; k++)
                logfs_manifest_free(&m[k]);
            ADIOI_Free(m);
            snprintf(msg, sizeof(msg), "pending logs of %s: %s", bf->canonical, le.msg);
            return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
        }
    }
    p->parsed = m;
    return MPI_SUCCESS;
}

/* Pieces above which a log is left to the replay of all logs together:
 * alone, each piece would be one write of the lower file, where the
 * collective write merges the processes' small pieces. */
#define OWN_PIECES_MAX 64

int ADIOI_BBFS_Log_may_replay_alone(const struct logfs_summary *own)
{
    return logfs_summaries_apart(own, 1, OWN_PIECES_MAX);
}

/* From every process's summary (size of them, stride words apart):
 * whether no byte of the file is in two processes' logs, so that each
 * process can replay its own alone (ADIOI_BBFS_Replay_own): no metalog
 * crosses between processes, and no reduction is made per epoch.  The
 * usual checkpoint of one block per process. */
static int logs_apart(const uint64_t * all, int size, int stride)
{
    struct logfs_summary *s = ADIOI_Malloc(sizeof(*s) * (size ? size : 1));

    for (int r = 0; r < size; r++)
        logfs_summary_unpack(all + (size_t) r * stride, &s[r]);
    int apart = logfs_summaries_apart(s, (size_t) size, OWN_PIECES_MAX);
    ADIOI_Free(s);
    return apart;
}

int ADIOI_BBFS_Pending_take(ADIO_File fd, uint64_t sealed, int err, int always,
                            int defer_if_live, ADIOI_BBFS_Pending * p)
{
    static char myname[] = "ADIOI_BBFS_PENDING_TAKE";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int rank, size, lk = -1;
    long long hdr[7] = { 0, 0, 0, 0, 0, 0, 0 };

    memset(p, 0, sizeof(*p));
    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &size);
    /* Process 0 looks, and decides whether this close is the last, under
     * the sessions' lock, which it keeps until it has published what it
     * decided: of several handles closing at once, one is last. */
    if (rank == 0) {
        int f_err;
        /* A close that would be the last but for a drain (or a replay) of
         * an older session running meanwhile waits for it, and replays its
         * own after: on_close's file is canonical when the close returns,
         * and the older writes lie under the newer ones. */
        for (double nap = 0.002;;) {
            /* (a held manifest is in the directory) */
            lk = ADIOI_BBFS_Manifest_held(bf) ? logfs_sessions_lock_made(bf->canonical)
                : logfs_sessions_lock(bf->canonical);
            f_err = err == MPI_SUCCESS ? ADIOI_BBFS_Pending_find_locked(bf, always, lk, p)
                : MPI_SUCCESS;
            if (f_err != MPI_SUCCESS || !defer_if_live || !p->live_others
                || p->claimed_others < p->live_others)
                break;
            ADIOI_BBFS_Pending_free(p);
            logfs_sessions_unlock(lk);
            ADIOI_BBFS_Nap(&nap, 0.1);
        }
        if (f_err == MPI_SUCCESS && defer_if_live && p->live_others) {
            for (int i = 0; i < p->n; i++) {
                logfs_session_release(&p->claims[i]);
                ADIOI_BBFS_FREE(p->texts[i]);
            }
            p->n = 0;
            p->deferred = 1;
        }
        if (err == MPI_SUCCESS)
            err = f_err;
        if (err == MPI_SUCCESS)
            open_state(bf, p, hdr);
    }
    /* One collective: every process's sealed epochs (for the manifest) and
     * error, process 0's findings, what each log holds (whether each
     * process can replay its own alone: logs_apart) and whether it is in
     * memory (a lazy session's). */
    enum { OWN = 2 + 7, MEM = OWN + LOGFS_SUMMARY_WORDS, HELD = MEM + 1, SLOT = HELD + 1 };
    uint64_t mine[SLOT], *all = ADIOI_Malloc(sizeof(uint64_t) * SLOT * size), key = 0;
    mine[0] = sealed;
    mine[1] = ADIOI_BBFS_Error_key(err, rank);
    for (int i = 0; i < 7; i++)
        mine[2 + i] = (uint64_t) hdr[i];
    logfs_summary_pack(&bf->own, mine + OWN);
    mine[MEM] = bf->writer != NULL;     /* (still open at a close: ended in memory) */
    mine[HELD] = ADIOI_BBFS_Manifest_held(bf);  /* (a lazy session's made it) */
    int rc = MPI_Allgather(mine, SLOT, MPI_UINT64_T, all, SLOT, MPI_UINT64_T, fd->comm);
    if (rc != MPI_SUCCESS)
        err = ADIOI_BBFS_Err_peer_lost(myname, rc);
    for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
        if (rank == 0)
            bf->manifest->w[r].epochs = all[SLOT * r];
        if (all[SLOT * r + 1] > key)
            key = all[SLOT * r + 1];
    }
    if (rc == MPI_SUCCESS)
        err = ADIOI_BBFS_Error_of_key(key, size, err, myname);
    for (int i = 0; i < 7; i++)
        hdr[i] = (long long) all[2 + i];
    /* A close left to another live handle's (process 0's p->deferred):
     * what each process wrote since its last attach must be visible to
     * that handle first, before process 0 lets go of the session under the
     * sessions' lock it holds, which that handle's close waits on before
     * it can claim the session (a close that replays attaches nothing:
     * ad_bbfs_log.c).  One agreement more, only here. */
    if (hdr[6] && err == MPI_SUCCESS && bf->srv) {
        int a_err;
        ADIOI_BBFS_Server_attach_closed(bf, &a_err);
        err = ADIOI_BBFS_Agree_error(fd->comm, myname, a_err);
    }
    /* (no pending session claimed, none other open: this session alone) */
    int own_only = rc == MPI_SUCCESS && hdr[0] == 0 && hdr[4] == 0 && hdr[5] == 0
        && logs_apart(all + OWN, size, SLOT), nfiles = 0;
    int made = 0;
    for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
        nfiles += all[SLOT * r + MEM] == 0;
        made |= all[SLOT * r + HELD] != 0;
    }
    ADIOI_Free(all);
    /* Process 0 ends the session: it holds its manifest from here on, if
     * another process of a lazy session made it; the others stop making
     * it (a close that leaves the logs pending writes it with the epochs
     * below, before their logs get files). */
    if (rank == 0 && made)
        ADIOI_BBFS_Manifest_join(bf);
    if (hdr[6] || err != MPI_SUCCESS)       /* (process 0's p->deferred) */
        bf->manifest_lazy = 0;
    if (rank == 0 && err == MPI_SUCCESS && p->deferred) {
        /* (this process's own outcome: a deferred close reports its own) */
        int m_err = ADIOI_BBFS_Manifest_publish(bf);
        ADIOI_BBFS_Manifest_release(bf);
        logfs_sessions_unlock(lk);
        ADIOI_BBFS_Pending_free(p);
        p->deferred = 1;
        return m_err;
    }
    logfs_sessions_unlock(lk);
    if (err != MPI_SUCCESS) {
        ADIOI_BBFS_Pending_free(p);
        return err;
    }
    take_state(bf, fd->comm, rank, hdr, p);
    p->own_only = own_only;
    p->nfiles = nfiles;
    return MPI_SUCCESS;
}

int ADIOI_BBFS_Pending_list(ADIO_File fd, ADIOI_BBFS_Pending * p)
{
    static char myname[] = "ADIOI_BBFS_PENDING_LIST";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int rank, err = MPI_SUCCESS;

    memset(p, 0, sizeof(*p));
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0)
        err = ADIOI_BBFS_Pending_find_all(bf, p);
    err = bcast_open_state(fd->comm, myname, err, bf, p);
    if (err != MPI_SUCCESS)
        ADIOI_BBFS_Pending_free(p);
    return err;
}

int ADIOI_BBFS_Pending_remove(ADIO_File fd, ADIOI_BBFS_Pending * p, int with_own)
{
    int err = parse_all(ADIOI_BBFS_Private(fd), p);
    if (err == MPI_SUCCESS)
        ADIOI_BBFS_Pending_remove_parsed(fd, p, p->parsed, with_own);
    return err;
}

int ADIOI_BBFS_Pending_replay(ADIO_File fd, ADIO_File lo, ADIOI_BBFS_Pending * p, int with_own,
                              int keep, const ADIOI_BBFS_Memlog * mem)
{
    static char myname[] = "ADIOI_BBFS_REPLAY_PENDING";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int rank, err, ns = p->n + (with_own ? 1 : 0), nw = 0, at = 0;

    MPI_Comm_rank(fd->comm, &rank);
    if ((err = parse_all(bf, p)) != MPI_SUCCESS)
        return err;
    const struct logfs_manifest *m = p->parsed;
    /* Sessions a replay marked before a crash cut its cleanup short are in
     * the file already: only their logs and manifests go, below. */
    for (int i = 0; i < p->n; i++)
        if (m[i].replayed)
            ns--;
        else
            nw += (int) m[i].nwriters;
    nw += with_own ? bf->nwriters : 0;
    /* this handle's own session first: its writers keep their ranks */
    char **paths = ADIOI_Malloc(sizeof(char *) * (nw ? nw : 1));
    char **servers = ADIOI_Malloc(sizeof(char *) * (nw ? nw : 1));
    uint64_t *promised = ADIOI_Calloc(nw ? nw : 1, sizeof(uint64_t));
    unsigned char *lazy = ADIOI_Calloc(nw ? nw : 1, 1);
    int *counts = ADIOI_Malloc(sizeof(int) * (ns ? ns : 1)), s = 0;
    if (with_own) {
        for (int r = 0; r < bf->nwriters; r++) {
            servers[at] = bf->servers[r];
            paths[at++] = bf->metalogs[r];      /* promised 0: its logs were just closed */
        }
        counts[s++] = bf->nwriters;
    }
    for (int i = 0; i < p->n; i++) {
        if (m[i].replayed)
            continue;
        /* (a lazy session's writer that promised nothing may have made no
         * log, while its canary says the log directory is the one it had:
         * logfs/manifest.h, version 7) */
        int made_none_ok = logfs_manifest_lazy_unmade_ok(&m[i]);
        for (uint32_t r = 0; r < m[i].nwriters; r++) {
            lazy[at] = made_none_ok && m[i].w[r].epochs == 0;
            promised[at] = m[i].w[r].epochs;
            servers[at] = m[i].w[r].server;
            paths[at++] = m[i].w[r].metalog;
        }
        counts[s++] = (int) m[i].nwriters;
    }
    /* Durability travels with the sessions: a durable one's logs go only
     * once the file is durable, whatever this handle's hints say. */
    ADIOI_BBFS_Hints h = bf->hints;
    for (int i = 0; i < p->n; i++)
        if (!m[i].replayed && m[i].durable)
            h.durable = 1;
    ADIOI_BBFS_Times *times = bf->hints.timing ? &bf->times : NULL;
    if (p->own_only && with_own && p->n == 0)
        err = ADIOI_BBFS_Replay_own(lo, bf->canonical, bf->metalogs[rank], bf->servers[rank], mem,
                                    &h, times);
    else if (ns)
        err = ADIOI_BBFS_Replay(fd->comm, lo, bf->canonical, paths, servers, counts, ns, promised,
                                lazy, mem, &h, times);
    if (!keep) {
        err = ADIOI_BBFS_Agree_error(fd->comm, myname, err);
        if (err == MPI_SUCCESS)
            ADIOI_BBFS_Pending_remove_parsed(fd, p, p->parsed, with_own);
    }
    ADIOI_Free(paths);
    ADIOI_Free(servers);
    ADIOI_Free(promised);
    ADIOI_Free(lazy);
    ADIOI_Free(counts);
    return err;
}

/* The open's one reduction (MAX), of uint64s: every process's hint check
 * (complemented: MAX of those is MIN of them), the error key of the
 * lowest failing process, process 0's findings (open_state), and a hash of
 * the name each process opened the file by, and its complement (MPI lets
 * processes name one file differently: a link; ROMIO broadcast process
 * 0's name of the shared pointer's file). */
enum { AGREE_ERR = ADIOI_BBFS_HINT_CHECK, AGREE_STATE, AGREE_NAME = AGREE_STATE + 7,
    AGREE_NAME_NOT, AGREE_LINKED, AGREE_N };

/* Hints, process 0's findings and everyone's errors in one collective (an
 * open's collectives cost 0.1-0.3 ms each where processes share cores).
 * err: this process's failure; the outcome is alike everywhere. */
static int agree_open(ADIO_File fd, const char *myname, int err, int *linked,
                      ADIOI_BBFS_Pending * p)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    uint64_t mine[AGREE_N], all[AGREE_N];
    int rank, size;
    long long hdr[7] = { 0, 0, 0, 0, 0, 0, 0 };

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &size);
    for (int i = 0; i < ADIOI_BBFS_HINT_CHECK; i++)
        mine[i] = ~bf->hint_check[i];
    if (err == MPI_SUCCESS)
        err = bf->hint_error;
    mine[AGREE_ERR] = ADIOI_BBFS_Error_key(err, rank);
    if (rank == 0 && err == MPI_SUCCESS)
        open_state(bf, p, hdr);
    for (int i = 0; i < 7; i++)
        mine[AGREE_STATE + i] = (uint64_t) hdr[i];
    mine[AGREE_NAME] = logfs_fnv_str(LOGFS_FNV_START, fd->filename);
    mine[AGREE_NAME_NOT] = ~mine[AGREE_NAME];
    mine[AGREE_LINKED] = (uint64_t) *linked;
    int rc = MPI_Allreduce(mine, all, AGREE_N, MPI_UINT64_T, MPI_MAX, fd->comm);
    if (rc != MPI_SUCCESS)
        return ADIOI_BBFS_Err_peer_lost(myname, rc);
    for (int i = 0; i < ADIOI_BBFS_HINT_CHECK; i++)
        all[i] = ~all[i];
    memcpy(bf->server_facts, all + 3, sizeof(bf->server_facts));
    int h_err = ADIOI_BBFS_Hints_agreed(all, bf->hint_error);
    if (h_err != MPI_SUCCESS)
        return h_err;
    if (all[AGREE_ERR] != 0)
        return ADIOI_BBFS_Error_of_key(all[AGREE_ERR], size, err, myname);
    /* (the server facts' host and bbfs_logdir hashes: least == greatest) */
    bf->ids_alike = bf->server_facts[0] == ~bf->server_facts[1]
        && bf->server_facts[2] == ~bf->server_facts[3];
    bf->names_alike = all[AGREE_NAME] == ~all[AGREE_NAME_NOT];
    *linked = all[AGREE_LINKED] != 0;
    for (int i = 0; i < 7; i++)
        hdr[i] = (long long) all[AGREE_STATE + i];
    take_state(bf, fd->comm, rank, hdr, p);
    return MPI_SUCCESS;
}

void ADIOI_BBFS_Open_prepare(ADIO_File fd, int access_mode, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_OPEN_PREPARE";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIOI_BBFS_Pending p;
    int rank, err = MPI_SUCCESS, linked = 0;
    const char *lower_path = NULL;
    int explicit_lower = ADIOI_BBFS_Name_has_prefix(fd->filename);

    memset(&p, 0, sizeof(p));
    MPI_Comm_rank(fd->comm, &rank);
    if (bf->hint_error == MPI_SUCCESS && bf->nwriters == 1 && !explicit_lower)
        bf->lower_learn = 1 + ADIOI_BBFS_Lower_guess(fd->filename, &bf->lower_fstype,
                                                     &bf->lower_ops, &lower_path);
    if (bf->hint_error == MPI_SUCCESS && (rank == 0 || explicit_lower) && bf->lower_learn != 2)
        /* a forced driver resolves from the name alone: everyone can */
        ADIOI_BBFS_Resolve_lower(fd->filename, &bf->lower_fstype, &bf->lower_ops, &lower_path,
                                 &err);
    if (rank == 0 && bf->hint_error == MPI_SUCCESS && err == MPI_SUCCESS) {
        /* (the others resolve as this process did, below, where nothing
         * can fail: a driver this build cannot use fails here, for all) */
        ADIOI_Fns *ops;
        const char *path;
        if (!explicit_lower && bf->lower_learn != 2)
            ADIOI_BBFS_Resolve_as(bf->lower_fstype, fd->filename, &ops, &path, &err);
        if (err == MPI_SUCCESS) {
            /* (a name an open may create is looked at after the lower open,
             * name_created in ad_bbfs_open.c: a lookup of a name not made yet
             * waits behind the other creates in its directory) */
            bf->canonical = (access_mode & ADIO_CREATE) ? ADIOI_Strdup(lower_path)
                : ADIOI_BBFS_Canonical_path(lower_path, &linked);
            bf->file_id = ADIOI_BBFS_New_file_id(bf->canonical);
            err = ADIOI_BBFS_Pending_find(bf, 0, &p);
        }
    }
    /* Every process takes the reduction, also one that failed, so that no
     * process waits in it for one that gave up. */
    /* (linked: process 0's name was a link, agreed) */
    *error_code = agree_open(fd, myname, err, &linked, &p);
    if (*error_code == MPI_SUCCESS && rank != 0) {
        if (!explicit_lower)
            ADIOI_BBFS_Resolve_as(bf->lower_fstype, fd->filename, &bf->lower_ops, &lower_path,
                                  error_code);
        /* (only process 0 looks at its name, where all names are alike) */
        int look = !(access_mode & ADIO_CREATE) && (!bf->names_alike || linked);
        if (*error_code == MPI_SUCCESS)
            bf->canonical = look ? ADIOI_BBFS_Canonical_path(lower_path, &linked)
                : ADIOI_Strdup(lower_path);
    }
    bf->others_live = p.others;
    /* A session claimed by someone else meanwhile is being replayed, or
     * belongs to a handle opened since: replaying only the others now could
     * put them under its older writes.  They wait for the last close. */
    if (*error_code != MPI_SUCCESS || p.n == 0 || p.live_others) {
        ADIOI_BBFS_Pending_free(&p);
        return;
    }

    int lower_err;
    ADIO_File lo = ADIOI_BBFS_Lower_open(fd, ADIO_CREATE | ADIO_RDWR, MPI_INFO_NULL,
                                         ADIO_PERM_NULL, 0, &lower_err);
    if (lower_err != MPI_SUCCESS) {
        *error_code = lower_err;
        ADIOI_BBFS_Pending_free(&p);
        return;
    }
    /* The logs stay until the lower close succeeded. */
    bf->open_replayed = 1;
    *error_code = ADIOI_BBFS_Pending_replay(fd, lo, &p, 0, 1, NULL);
    *error_code = ADIOI_BBFS_Replayed_close(fd, lo, myname, *error_code);
    MPI_File h = lo;
    MPIO_File_free(&h);
    if (*error_code == MPI_SUCCESS)
        *error_code = ADIOI_BBFS_Pending_remove(fd, &p, 0);
    ADIOI_BBFS_Pending_free(&p);
}

int ADIOI_BBFS_Replayed_close(ADIO_File fd, ADIO_File lo, const char *myname, int err)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int close_err;

    ADIOI_BBFS_Lower_close(lo, &close_err);
    int injected = logfs_fault("lower-close");
    if (injected && close_err == MPI_SUCCESS)
        close_err = ADIOI_Err_create_code((char *) myname, bf->canonical, injected);
    if (close_err != MPI_SUCCESS)
        close_err = ADIOI_BBFS_Err_canonical_write(myname, bf->canonical, close_err);
    return ADIOI_BBFS_Agree_error(fd->comm, myname, err != MPI_SUCCESS ? err : close_err);
}
