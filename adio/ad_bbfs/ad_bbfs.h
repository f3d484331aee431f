/*
 * bbfs ROMIO driver: private state and prototypes.
 *
 * A bbfs file handle is a stack of two ADIO files: this handle, which the
 * application sees, and a "lower" handle opened through another ADIO driver
 * (ufs, nfs, lustre, ...) that owns the canonical file.  Every operation
 * arrives here first and decides what the lower file sees.
 */
#ifndef AD_BBFS_H_INCLUDED
#define AD_BBFS_H_INCLUDED

#include "adio.h"
#include "ad_bbfs_mpi_compat.h"
#include "../../logfs/planner.h"
#include "../../logfs/sessions.h"
#include "../../logfs/summary.h"
#include "ad_bbfs_hint_table.h"
#include <limits.h>

struct logfs_writer;
struct logfs_manifest;
struct logfs_error;
struct logfs_rangemap;
struct logfs_plan;
struct logfs_datalog_reader;
struct logfs_kept_log;

/* A log of this process that lives in memory only: a private session's
 * writer at its close (ad_bbfs_private.c), whose metalog bytes the replay
 * takes from here and whose data it reads from the writer. */
typedef struct ADIOI_BBFS_Memlog {
    struct logfs_writer *writer;
    int index;                  /* its writer number in the replay */
    const void *metalog;
    size_t len;
} ADIOI_BBFS_Memlog;

/* Every writer's datalog, opened on first read (ad_bbfs_datalogs.c). */
typedef struct ADIOI_BBFS_Datalogs {
    int n;
    char **paths;               /* by writer rank, from the plan */
    struct logfs_datalog_reader **readers;      /* NULL until first read */
    const ADIOI_BBFS_Memlog *mem;       /* (a replay's) one of them read from memory */
} ADIOI_BBFS_Datalogs;

/* A file type whose blocks all have one length at one stride, as vectors
 * make them: walked by arithmetic, never flattened (ad_bbfs_view.c). */
typedef struct {
    MPI_Datatype type;          /* the filetype described; MPI_DATATYPE_NULL: none yet */
    int regular;
    ADIO_Offset first, blen, stride, count;     /* block i: first + i * stride, blen bytes */
} ADIOI_BBFS_Shape;

/* Seconds this process spent in each part of a handle's life, kept when
 * bbfs_timing is on (ad_bbfs_times.c). */
typedef struct ADIOI_BBFS_Times {
    double open, log, sync, close;      /* the calls, whole */
    double metalogs, plan, read, exchange, write;       /* replays (inside close or open) */
    long long calls;            /* logged write calls */
    /* replays' counts, which docs/performance.md's scaling model predicts */
    long long epochs, rounds;   /* epochs replayed; exchange rounds over them */
    long long own_replays;      /* replays of this process's own log alone */
    long long metalog_bytes;    /* metalog bytes every process gathered */
    long long wants, moved;     /* datalog ranges asked of, and bytes sent to, others */
    long long read_direct;      /* datalog bytes a process read itself for its domain */
    long long view_builds, view_pieces; /* views of synced writes built; pieces put in */
    long long view_restarts;    /* views built again from scratch: a write older than the last view's */
    long long log_reads, log_read_pieces;       /* reads' datalog calls; pieces they held */
} ADIOI_BBFS_Times;

typedef struct ADIOI_BBFS_File {
    ADIO_File lower;            /* canonical file, opened through the lower driver */
    int lower_closed;           /* by the close's replay (ADIOI_BBFS_Replayed_close) */
    MPI_Info open_info;         /* user's hints, handed to the lower driver at open */
    ADIOI_BBFS_Hints hints;
#define ADIOI_BBFS_SERVER_FACTS 10
#define ADIOI_BBFS_FACT_LOGDIR_USABLE 4        /* (this process's log directory: writable) */
    uint64_t server_facts[ADIOI_BBFS_SERVER_FACTS];    /* reduced at open (Open_prepare) */
#define ADIOI_BBFS_HINT_CHECK (3 + ADIOI_BBFS_SERVER_FACTS)
    uint64_t hint_check[ADIOI_BBFS_HINT_CHECK];        /* SetInfo's, for that reduction (MIN):
                                                         * parsed, digest, ~digest, server facts */
#define ADIOI_BBFS_NO_HINTS_DIGEST 2166136261u  /* the digest of no bbfs_* key */
    int hint_error;             /* ADIO_Open drops SetInfo's error code; OpenColl
                                 * reports this one instead (this process's alone
                                 * until Open_prepare agrees it) */
    int lower_fstype;           /* the lower driver, for side files (manifest) */
    int lower_learn;            /* after the lower open, ADIOI_BBFS_Lower_learn's guessed + 1
                                 * (0: a driver named, or several processes) */
    ADIOI_Fns *lower_ops;
    char *canonical;            /* canonical file path as the lower driver sees it */

    /* Logging (ad_bbfs_log.c).  writer != NULL while writes go to the logs. */
    struct logfs_writer *writer;
    int log_writes;             /* this handle logs (not RDONLY, not a side file) */
    int write_through;          /* atomic mode: writes go straight to the lower file */
    int atomic_logged;          /* atomic mode beside another live handle: logged under
                                 * posix consistency; the model before, plus 1 */
    uint64_t file_id;           /* in every metalog header and the manifest */
    int nwriters;               /* processes that opened the file */
    char **metalogs;            /* metalog path of every writer, by rank */
    int ids_alike;              /* every process's host and bbfs_logdir are the same
                                 * (agreed at open): each names the others' logs */
    int names_alike;            /* every process opened the file by the same name
                                 * (agreed at open): each names the shared pointer's
                                 * file alike, with no broadcast */
    char **servers;             /* by rank: its node's bbserver ("": none), for replays
                                 * by processes that cannot open its logs */
    struct logfs_manifest *manifest;    /* rank 0: what it wrote at log start */
    struct logfs_session session;       /* rank 0: the manifest, held while the logs live */
    int others_live;            /* other handles' sessions live at the last look (or open) */
    uint64_t *replayed;         /* process 0: sessions (file ids) replayed that the
                                 * map may still hold (ADIOI_BBFS_Server_replayed) */
    int nreplayed;
    int open_replayed;          /* this open replayed pending sessions (every process knows) */
    int replayed_all;           /* and no other session was live: the whole map goes */
    char replayed_map[256];     /* process 0: the map their manifests name ("": none),
                                 * which may be another than this handle's */
    ADIO_Offset own_end;        /* end of the furthest byte this process logged */
    /* What this session's log touched, taken as its writer closes: a close
     * replays each process's own log alone where no two touch one byte
     * (logfs/summary.h, ADIOI_BBFS_Pending_take). */
    struct logfs_summary own;
    int own_unflushed;          /* collective model: own writes since the view was built */
    uint64_t boundaries;        /* entries and exits of collective data-access calls */
    int stamp_due;              /* the next write starts with a STAMP (ad_bbfs_order.c) */
    int stamp_later;            /* and only for a causal acquire: its clock may come with
                                   the release's attach (ad_bbfs_sync.c) */
    /* causal consistency (ad_bbfs_sync.c) */
    struct ADIOI_BBFS_File *next_causal;        /* in the list of open causal handles */
    int in_causal;
    int unreleased;             /* written since the last release */
    unsigned long seen_acquires;        /* acquires counted when it last looked */
    int acquired;               /* since the view: it is stale if another's log grew */

    /* Other processes' synced writes (ad_bbfs_read.c), rebuilt after a sync. */
    int remote_stale;
    struct logfs_rangemap *remote;      /* owner = writer rank, pos = datalog offset */
    ADIO_Offset remote_end;
    int remote_solo;            /* remote holds this session only: later ops extend it */
    uint64_t view_lo, view_hi;  /* with a server: the file bytes remote holds */
    struct logfs_reader_mark *view_marks;       /* by writer: where remote stopped reading its metalog (remote_solo) */
    struct logfs_reader_mark *size_marks;       /* the same for the logged size alone */
    int size_keyed;             /* size_marks and size_end hold (ad_bbfs_read.c) */
    ADIO_Offset size_end;
    long long *size_sizes;      /* the metalogs' sizes before size_end's plan */
    unsigned long size_news;    /* ADIOI_BBFS_news + 1 when size_end was last found */
    struct logfs_plan_key view_last;    /* the latest of them (when view_keyed) */
    int view_keyed;
    long long *view_sizes;      /* commit/posix: metalog sizes the view was built from */
    long long *sizes_seen;      /* the sizes metalogs_changed took last */
    int sizes_seen_valid;       /* ... for the plan it found needed (ad_bbfs_read.c) */
    int sessions_dir;           /* the file's sessions directory, kept open between
                                 * listings (-1: none; logfs_sessions_list_kept) */
    int parent_dir;             /* the file's directory, kept open from the second look
                                 * for sessions (ADIOI_BBFS_No_session) */
    struct logfs_kept_log *view_logs;   /* by writer: its metalog and seal, kept open
                                         * while metalogs names them (ad_bbfs_read.c) */
    ADIOI_BBFS_Datalogs datalogs;       /* other writers' datalogs */

    ADIOI_BBFS_Shape shape;     /* of fd->filetype, once known (ad_bbfs_view.c) */

    /* Visibility through bbserver (ad_bbfs_server.c); NULL: from the logs. */
    struct ADIOI_BBFS_Server *srv;

    /* A private session (ad_bbfs_private.c): its logs in memory and no
     * manifest until something needs them. */
    int unpublished;
    /* A lazy session (ad_bbfs_log.c): several processes on one node, one
     * log directory, no server; each writer makes its files when a byte
     * must first reach them, and the manifest says so (with a canary in
     * the log directory: logfs/manifest.h). */
    int lazy;
    /* And its manifest waits too: made by the first process that makes log
     * files (or process 0 at a close that leaves the logs pending); an
     * open, some writes and a close that replays from memory make no file
     * beside the canonical one. */
    int manifest_lazy;
    struct ADIOI_BBFS_File *next_logging;       /* this process's logging handles */
    int in_logging;

    ADIOI_BBFS_Times times;     /* bbfs_timing */
} ADIOI_BBFS_File;

/* One contiguous piece of an access: file offset, length, and where it sits
 * in the packed user data.  Returns nonzero to stop the walk. */
typedef int (*ADIOI_BBFS_extent_fn) (void *arg, ADIO_Offset off, ADIO_Offset len,
                                     ADIO_Offset data_off);

/* ad_bbfs_open.c / ad_bbfs_close.c */
void ADIOI_BBFS_Open(ADIO_File fd, int *error_code);
void ADIOI_BBFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_BBFS_Close(ADIO_File fd, int *error_code);
/* MPI_File_get_info's values, put in fd->info when it asks */
void ADIOI_BBFS_ShowInfo(ADIO_File fd);

/* ad_bbfs_hints.c */
void ADIOI_BBFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_BBFS_Hints_resolve_at_open(ADIO_File fd, int access_mode);
/* The bbfs hints in force, into fd->info (each as MPI_File_get_info shows it). */
void ADIOI_BBFS_Hints_show(ADIO_File fd);
/* err, or the error every process returns when the least of every
 * process's hint_check[0..2] (reduced by MIN) says some rejected their
 * hints or they differ. */
int ADIOI_BBFS_Hints_agreed(const uint64_t * least, int err);

/* ad_bbfs_io.c */
void ADIOI_BBFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int *error_code);
void ADIOI_BBFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_BBFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_BBFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code);
void ADIOI_BBFS_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                int *error_code);
void ADIOI_BBFS_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code);

/* ad_bbfs_io.c, nonblocking */
void ADIOI_BBFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code);
void ADIOI_BBFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code);
void ADIOI_BBFS_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code);
void ADIOI_BBFS_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int *error_code);
void ADIOI_BBFS_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Request * request, int *error_code);
void ADIOI_BBFS_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code);

/* ad_bbfs_fcntl.c */
void ADIOI_BBFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_BBFS_Flush(ADIO_File fd, int *error_code);
void ADIOI_BBFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
int ADIOI_BBFS_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len);

/* ad_bbfs_private.c: sessions whose logs live in memory until needed */
struct logfs_writer_opts;
/* At a logging handle's log start (every process): note it among this
 * process's logging handles, and publish the private sessions of the file
 * here (*err: that failed).  @return 1 if this handle's session may be
 * private (one process, no server, no other handle of the file here). */
int ADIOI_BBFS_Private_join(ADIOI_BBFS_File * bf, int *err);
void ADIOI_BBFS_Private_leave(ADIOI_BBFS_File * bf);
/* The writer options of bf's session (lazy files while unpublished, or in
 * a lazy session). */
void ADIOI_BBFS_Private_writer_opts(ADIOI_BBFS_File * bf, struct logfs_writer_opts *o);
/* A close (closing) or mid-session replay of a private session: if the
 * file has no other session, the logs are replayed from memory, and no
 * file made.  @return 1 if done so (*error_code its outcome), 0 if the
 * ordinary close must do it. */
int ADIOI_BBFS_Private_close(ADIO_File fd, int closing, int *error_code);
/* Whether the file has no published session at all, live or pending (a
 * private one is not: a private close's replay is then of its own alone,
 * and a read sees no other handle's writes). */
int ADIOI_BBFS_No_session(ADIOI_BBFS_File * bf);

/* ad_bbfs_delete.c / ad_bbfs_features.c */
void ADIOI_BBFS_Delete(const char *filename, int *error_code);
int ADIOI_BBFS_Feature(ADIO_File fd, int flag);

/* count blocks of len bytes, block i at file offset off + i * stride, whose
 * data follow each other in the packed user data from data_off. */
typedef int (*ADIOI_BBFS_run_fn) (void *arg, ADIO_Offset off, ADIO_Offset len,
                                  ADIO_Offset stride, ADIO_Offset count, ADIO_Offset data_off);

/* ad_bbfs_view.c */
int ADIOI_BBFS_CheckView(ADIO_File fd, MPI_Datatype filetype, ADIO_Offset * first);
int ADIOI_BBFS_Walk_view_runs(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Offset nbytes, ADIOI_BBFS_run_fn fn, void *arg,
                              ADIO_Offset * next_fp);
int ADIOI_BBFS_Walk_view(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                         ADIO_Offset nbytes, ADIOI_BBFS_extent_fn fn, void *arg,
                         ADIO_Offset * next_fp);

/* ad_bbfs_pending.c: lower driver, and pending sessions replayed, at open;
 * the last handle's close replays them with its own */
typedef struct ADIOI_BBFS_Pending {
    int n;                      /* pending sessions claimed */
    struct logfs_session *claims;       /* process 0 only */
    char **texts;               /* their manifests */
    size_t *lens;
    struct logfs_manifest *parsed;      /* the texts parsed (at the first use) */
    int others;                 /* other sessions not claimed (live, or left pending) */
    int live_others;            /* of those, sessions of handles still open */
    int claimed_others;         /* of the live ones, sessions claimed by a drain or a
                                 * replay (not a handle's) */
    int far_claimed;            /* of those, one whose logs this node cannot reach
                                 * (process 0) */
    int deferred;               /* a close: this handle's session was left pending */
    int own_only;               /* a close: every process replays its own log alone */
    int nfiles;                 /* a close: the processes whose logs have files (the
                                 * others' ended in memory: a lazy session's) */
} ADIOI_BBFS_Pending;
void ADIOI_BBFS_Open_prepare(ADIO_File fd, int access_mode, int *error_code);
/* ad_bbfs_pending_find.c, process 0: claim the file's pending sessions
 * (all of them if always, else none while another handle's is live), at
 * an open (waiting for a drain elsewhere of logs out of this node's
 * reach), or under the sessions' lock already taken (a close); or list
 * every other session, claiming none. */
int ADIOI_BBFS_Pending_find(ADIOI_BBFS_File * bf, int always, ADIOI_BBFS_Pending * p);
int ADIOI_BBFS_Pending_find_locked(ADIOI_BBFS_File * bf, int always, int lock,
                                   ADIOI_BBFS_Pending * p);
int ADIOI_BBFS_Pending_find_all(ADIOI_BBFS_File * bf, ADIOI_BBFS_Pending * p);
/* Collective, at a close that would replay: every process's sealed
 * epochs (into process 0's manifest) and err agreed, with process 0's
 * claim of the file's pending sessions (only if no other handle's session
 * is live, unless always) in one collective.  defer_if_live: if another
 * handle's session is live, this one's is left pending instead
 * (p->deferred), in the same locked step; process 0 then returns its own
 * outcome of that, the others MPI_SUCCESS. */
int ADIOI_BBFS_Pending_take(ADIO_File fd, uint64_t sealed, int err, int always,
                            int defer_if_live, ADIOI_BBFS_Pending * p);
/* Whether a log that touched own may be replayed alone, as far as this
 * process can tell (its own size changes and pieces): otherwise the
 * close's replay is of all logs together, whatever the others logged. */
int ADIOI_BBFS_Log_may_replay_alone(const struct logfs_summary *own);
/* Collective: replay the claimed sessions, with this handle's own if
 * with_own (its writer read from memory if mem), in one plan through lo;
 * then, unless keep, agree the outcome and remove them.  With keep the
 * outcome is this process's: the caller agrees it (with the lower close
 * that usually follows, ADIOI_BBFS_Replayed_close). */
int ADIOI_BBFS_Pending_replay(ADIO_File fd, ADIO_File lo, ADIOI_BBFS_Pending * p, int with_own,
                              int keep, const ADIOI_BBFS_Memlog * mem);
/* ad_bbfs_pending_remove.c.  Collective: remove the parsed sessions m of
 * p that a replay made canonical (and this handle's own if with_own). */
struct logfs_manifest;
void ADIOI_BBFS_Pending_remove_parsed(ADIO_File fd, ADIOI_BBFS_Pending * p,
                                      struct logfs_manifest *m, int with_own);
/* Collective: remove the sessions a replay with keep left (and this
 * handle's own if with_own), as its end would have. */
int ADIOI_BBFS_Pending_remove(ADIO_File fd, ADIOI_BBFS_Pending * p, int with_own);
/* Collective: close lo, the lower file a replay with keep wrote (its view
 * is not freed).  A network file system may report a failed write-back
 * (EDQUOT, EIO) only at close, so the logs go only after this agreed
 * MPI_SUCCESS; else the error says they stay.  err: this process's outcome
 * of the replay, agreed with the close's (one agreement for both). */
int ADIOI_BBFS_Replayed_close(ADIO_File fd, ADIO_File lo, const char *myname, int err);
/* The error of a replay whose write (or the lower file's close after it)
 * failed with w_err: its class, and that the logs stay. */
int ADIOI_BBFS_Err_canonical_write(const char *myname, const char *canonical, int w_err);
/* Collective: every other session of the file, live or pending, unclaimed. */
int ADIOI_BBFS_Pending_list(ADIO_File fd, ADIOI_BBFS_Pending * p);
void ADIOI_BBFS_Pending_free(ADIOI_BBFS_Pending * p);

/* ad_bbfs_log.c: the logging session of one open file */
/* @p err: this process's failure so far, which the logs' start agrees with
 * the others' (a handle that logs nothing returns it as it is) */
void ADIOI_BBFS_Log_open(ADIO_File fd, int err, int *error_code);
void ADIOI_BBFS_Log_sync(ADIO_File fd, int *error_code);
void ADIOI_BBFS_Log_set_size(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_BBFS_Log_close(ADIO_File fd, int replay, int *error_code);
void ADIOI_BBFS_Log_flush_to_canonical(ADIO_File fd, int *error_code);

/* ad_bbfs_order.c: the order of writes around collective calls and across
 * handles.  Every collective access calls begin before and end after. */
void ADIOI_BBFS_Collective_begin(ADIO_File fd);
void ADIOI_BBFS_Collective_end(ADIO_File fd);
/* Before a logged write or set_size: stamp a switch from another handle. */
void ADIOI_BBFS_Order_switch(ADIOI_BBFS_File * bf);

/* ad_bbfs_manifest.c: the manifests of the file's sessions */
int ADIOI_BBFS_Manifest_publish(ADIOI_BBFS_File * bf);
/* A lazy session's manifest (ad_bbfs_manifest.c): made, or held, by a
 * process that makes log files; whether this process holds it; process 0
 * holding one another made. */
int ADIOI_BBFS_Manifest_share(ADIOI_BBFS_File * bf, struct logfs_error *le);
/* How a failure to make or write a manifest begins (its directory is the
 * canonical file's, not the log directory: ADIOI_BBFS_Err_log_io gives no
 * log advice for it). */
#define ADIOI_BBFS_MANIFEST_FAILED "the manifest beside the file cannot be written (its " \
    "directory must be writable and have room): "
int ADIOI_BBFS_Manifest_held(const ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Manifest_join(ADIOI_BBFS_File * bf);
/* The file's sessions' lock (logfs_sessions_lock), its directory made
 * first if need be; -1 where there is none to take. */
int ADIOI_BBFS_Manifest_lock_sessions(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Manifest_remove(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Manifest_release(ADIOI_BBFS_File * bf);
/* Collective at close: each writer's sealed epochs into process 0's manifest. */
void ADIOI_BBFS_Manifest_epochs(ADIO_File fd, uint64_t sealed);
/* Process 0: publish the manifest as pending and let the session go. */
int ADIOI_BBFS_Manifest_leave_pending(ADIOI_BBFS_File * bf);
/* ad_bbfs_drain.c: process 0, at a background close whose session was
 * left pending: this node's server drains it (else this process does). */
void ADIOI_BBFS_Drain_hand_over(const ADIOI_BBFS_File * bf);
/* here[w]: whether this process can open writer w's metalog. */
void ADIOI_BBFS_Manifest_reach(const struct logfs_manifest *m, unsigned char *here);
/* far (or NULL): writers nobody can reach, removed through their node's
 * bbserver by process w % nprocs.  @return how many of the logs this
 * process could reach it failed to remove (each said on stderr). */
int ADIOI_BBFS_Manifest_remove_logs(const struct logfs_manifest *m, const unsigned char *far,
                                    int rank, int nprocs, double timeout);
/* logfs_log_remove, a failure said on stderr: @return 1 if it failed. */
int ADIOI_BBFS_Log_remove(const char *metalog);
/* The canary of a lazy session whose writer 0's metalog is metalog0 goes
 * (logfs_manifest_canary; one already gone is fine). */
int ADIOI_BBFS_Manifest_load(const char *path, struct logfs_manifest *m,
                             struct logfs_error *le);
/* Which sessions ADIOI_BBFS_Manifest_each visits. */
enum { ADIOI_BBFS_SESSIONS_ALL, ADIOI_BBFS_SESSIONS_PENDING, ADIOI_BBFS_SESSIONS_LIVE };
/* fn(arg, path, text, len, le) for the manifest of every session of the
 * file but this handle's own, live or pending (`which`), that still exists,
 * oldest first; stops at the first code fn returns other than LOGFS_OK (an
 * error, le says why; or LOGFS_END, enough seen) and returns it. */
typedef int (*ADIOI_BBFS_session_fn) (void *arg, const char *path, char *text, size_t len,
                                      struct logfs_error * le);
int ADIOI_BBFS_Manifest_each(ADIOI_BBFS_File * bf, int which, ADIOI_BBFS_session_fn fn,
                             void *arg, struct logfs_error *le);
/* The map server named by the oldest live session of the file that names
 * one (another handle's, open now), into out.  @return 1 if one does, 0 if
 * sessions are live but none names a map (they read logs directly), -1 if
 * none is live (or none can be read). */
int ADIOI_BBFS_Manifest_live_map(ADIOI_BBFS_File * bf, char *out, size_t len);
/* the file's other sessions (other handles', open or closed while one
 * was; only closed ones when closed_only; not this one's, nor replayed
 * ones): *n parsed manifests */
int ADIOI_BBFS_Manifest_others(ADIOI_BBFS_File * bf, int closed_only,
                               struct logfs_manifest **out, int *n);
void ADIOI_BBFS_Manifest_free_all(struct logfs_manifest *m, int n);
int ADIOI_BBFS_Discard_pending(ADIOI_BBFS_File * bf);

/* ad_bbfs_write.c / ad_bbfs_read.c: logged writes, reads from every source
 * (a read's caller chose it after looking for acquires: ADIOI_BBFS_Reads_logs,
 * or the collective read's path) */
void ADIOI_BBFS_Log_write(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, int contig_call,
                          ADIO_Status * status, int *error_code);
void ADIOI_BBFS_Log_read(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, int contig_call,
                         ADIO_Status * status, int *error_code);
ADIO_Offset ADIOI_BBFS_Logged_size(ADIO_File fd, int *error_code);
void ADIOI_BBFS_Remote_reset(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_View_logs_close(ADIOI_BBFS_File * bf);

/* ad_bbfs_nodes.c: other nodes' logs through their bbserver.  Calls
 * return an MPI error code, or 0/-1 with why in err. */
typedef struct {
    uint8_t token[32];          /* presented to servers (bbserver/token.h) */
    double timeout;             /* seconds a call may wait for its reply */
} ADIOI_BBFS_Nodes;
struct bbs_client;
struct bbs_buf;
struct bbs_reply;
int ADIOI_BBFS_Nodes_init(ADIOI_BBFS_Nodes * r, double timeout, char *err, size_t errlen);
int ADIOI_BBFS_Nodes_connect(const ADIOI_BBFS_Nodes * r, const char *addr,
                             struct bbs_client **out, char *err, size_t errlen);
void ADIOI_BBFS_Nodes_drop(const char *addr);
/* Whether the server at addr answers (and takes our token): over the
 * connection this process has (its answer gives *incarnation, if not NULL),
 * else a new one (*incarnation 0: not learned). */
int ADIOI_BBFS_Nodes_ping(const ADIOI_BBFS_Nodes * r, const char *addr, uint64_t * incarnation,
                          char *err, size_t errlen);
int ADIOI_BBFS_Nodes_call(const ADIOI_BBFS_Nodes * r, const char *addr, struct bbs_buf *req,
                          struct bbs_reply *rep, char *err, size_t errlen);
int ADIOI_BBFS_Nodes_read(const ADIOI_BBFS_Nodes * r, const char *addr, const char *datalog,
                          uint64_t off, void *buf, size_t len);
int ADIOI_BBFS_Nodes_export(const ADIOI_BBFS_Nodes * r, const char *addr, const char *metalog,
                            int salvage, void **out, size_t *len, char **warning);
int ADIOI_BBFS_Nodes_remove(const ADIOI_BBFS_Nodes * r, const char *addr, const char *metalog,
                            char *err, size_t errlen);
int ADIOI_BBFS_Err_server(const char *myname, int line, const char *msg);
/* ad_bbfs_server_start.c: this node's server for logdir: its address,
 * found or started (under a lock: the first process to find none starts
 * it, the others find it), and its incarnation where the finding learned
 * it (else 0; incarnation may be NULL). */
int ADIOI_BBFS_Server_find_node(const ADIOI_BBFS_Nodes * nodes, const char *logdir, char *addr,
                                size_t len, uint64_t * incarnation, char *err, size_t errlen);

/* ad_bbfs_server.c: visibility through bbserver (attach, query, reads of
 * others' logs).  Server_open decides whether the handle uses it
 * (collective); the rest are no-ops without a server. */
typedef struct ADIOI_BBFS_Server ADIOI_BBFS_Server;
/* What Server_open decides by, this process's share (ADIOI_BBFS_SERVER_FACTS
 * numbers): a reduction (MIN) of every process's settles it.  The open's
 * hint check carries it, so that the open makes one reduction for both. */
void ADIOI_BBFS_Server_facts(const ADIOI_BBFS_Hints * h, uint64_t * facts);
/* @p err: this process's failure so far.  *agreed: whether the outcome in
 * *error_code is every process's (the open agreed it with the server's
 * facts); else it is @p err, this process's own, and nothing collective was
 * made. */
void ADIOI_BBFS_Server_open(ADIO_File fd, int err, int *error_code, int *agreed);
void ADIOI_BBFS_Server_close(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Server_note(ADIOI_BBFS_File * bf, uint64_t off, uint64_t len, uint64_t stride,
                            uint64_t count, uint64_t pos);
void ADIOI_BBFS_Server_attach(ADIO_File fd, int *error_code);
/* Attach this process's notes (the view about to be queried must hold its
 * own writes: the posix and collective models). */
void ADIOI_BBFS_Server_attach_own(ADIOI_BBFS_File * bf, int *error_code);
/* Attach the notes this process's writer left when it closed (a close
 * that replays attaches none before it: ADIOI_BBFS_Pending_take). */
void ADIOI_BBFS_Server_attach_closed(ADIOI_BBFS_File * bf, int *error_code);
/* The session's logs end: its notes not attached go (the replay made them
 * canonical, or they are pending for the next open's). */
void ADIOI_BBFS_Server_notes_end(ADIOI_BBFS_File * bf);
/* A logged set_size grew the file to size: attached with the next notes. */
void ADIOI_BBFS_Server_note_size(ADIOI_BBFS_File * bf, uint64_t size);
void ADIOI_BBFS_Server_switch(ADIOI_BBFS_File * bf);
/* With a server: the process's clock must hear the map's server again
 * before the handle's next stamp (a sync, after which an MPI call may order
 * this process after another's attach)... */
void ADIOI_BBFS_Server_clock_stale(ADIOI_BBFS_File * bf);
/* ...which happens here, with a ping unless an attach or query did. */
void ADIOI_BBFS_Server_clock_hear(ADIOI_BBFS_File * bf);
/* The owners of file bytes [lo, hi) from the map (and the file's end). */
int ADIOI_BBFS_Server_view(ADIOI_BBFS_File * bf, uint64_t lo, uint64_t hi,
                           struct logfs_rangemap **out, ADIO_Offset * end);
void ADIOI_BBFS_Server_forget(ADIOI_BBFS_File * bf);
int ADIOI_BBFS_Server_is_own(const ADIOI_BBFS_File * bf, int writer);
/* A piece of writer's log into buf: at once from this node's storage, or,
 * from another node's, at the flush (buf must stay until then), which reads
 * neighbouring pieces with one request.  flush with discard drops them
 * (a read that failed). */
int ADIOI_BBFS_Server_read(ADIOI_BBFS_File * bf, int writer, uint64_t pos, void *buf,
                           size_t len);
int ADIOI_BBFS_Server_flush(ADIOI_BBFS_File * bf, int discard);
/* Process 0: the map forgets the sessions replayed since the last call
 * (bf->replayed), and the list empties. */
void ADIOI_BBFS_Server_replayed(ADIOI_BBFS_File * bf);
/* Whether the handle uses a server and has found it (a handle of one
 * process finds it at its first call to one: ad_bbfs_server.h). */
int ADIOI_BBFS_Server_connected(const ADIOI_BBFS_File * bf);
/* A session about to publish its first manifest (bf->manifest) where the
 * open chose no map: under the sessions' lock (*lk, for
 * logfs_sessions_unlock after the publishing), connect, take a live
 * session's map if one has appeared, and name the map and this node's
 * server in the manifest.  @return 0, or -1 with why in err. */
int ADIOI_BBFS_Server_name_map(ADIOI_BBFS_File * bf, int *lk, char *err, size_t errlen);
/* This node's server, which serves the handle's logs to other nodes ("":
 * the handle uses none). */
const char *ADIOI_BBFS_Server_node(const ADIOI_BBFS_File * bf);
/* The server holding the file's ownership map, "none" without one. */
const char *ADIOI_BBFS_Server_map(const ADIOI_BBFS_File * bf);
/* Process 0, about to publish its first manifest under the sessions' lock:
 * whether a live session of the file names another map than this handle's
 * (two handles opened at once each chose before the other published), into
 * out.  @return 1 if one does. */
int ADIOI_BBFS_Server_other_live_map(ADIOI_BBFS_File * bf, char *out, size_t len);
/* After process 0 published (err: its failure; adopted: the map it
 * published instead of this handle's, or NULL): every process learns
 * both, and, once the publishing succeeded, takes and connects to the
 * adopted map.  Collective; an error alike everywhere. */
int ADIOI_BBFS_Server_agree_map(ADIO_File fd, const char *myname, int err, const char *adopted);
/* A logging handle's server open is agreed with the logs' start (it
 * returns the process's own error, not agreed): the start carries process
 * 0's incarnation of the map (..._incarnation there), which every other
 * process takes (..._agreed). */
uint64_t ADIOI_BBFS_Server_incarnation(const ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Server_agreed(ADIOI_BBFS_File * bf, uint64_t rank0s, uint64_t rank0s_clock);
/* Process 0's clock floor once it heard the map's server at this open (0:
 * it did not, or another process), for ADIOI_BBFS_Server_agreed. */
uint64_t ADIOI_BBFS_Server_open_clock(const ADIOI_BBFS_File * bf);

/* ad_bbfs_replay.c: logs -> canonical file, collective over comm.  The
 * metalogs of nsessions sessions, counts[i] for session i, one after the
 * other, and each writer's node server (servers NULL or "": none);
 * promised (or NULL): the epochs each writer sealed at its close; lazy (or
 * NULL): by writer, as ADIOI_BBFS_Exchange_begin's; mem (or NULL): this
 * process's writer whose logs are in memory; times (or NULL):
 * where the seconds of its parts are added. */
int ADIOI_BBFS_Replay(MPI_Comm comm, ADIO_File lower, const char *canonical,
                      char *const *metalogs, char *const *servers, const int *counts,
                      int nsessions, const uint64_t * promised, const unsigned char *lazy,
                      const ADIOI_BBFS_Memlog * mem, const ADIOI_BBFS_Hints * h,
                      ADIOI_BBFS_Times * times);

/* The same for one process's own log, on its own (read from mem if not
 * NULL, else from its files): independent writes of the lower file, no collective on
 * it (ADIOI_BBFS_Pending_take's own_only says when). */
int ADIOI_BBFS_Replay_own(ADIO_File lower, const char *canonical, char *metalog, char *server,
                          const ADIOI_BBFS_Memlog * mem, const ADIOI_BBFS_Hints * h,
                          ADIOI_BBFS_Times * times);

/* ad_bbfs_times.c: with bbfs_timing, rank 0 prints on stderr where the
 * handle's time went, each part the slowest process's.  Collective. */
void ADIOI_BBFS_Times_report(ADIO_File fd);

/* Anything that may change what this process sees of a file: a write or
 * size change through any handle, a sync, an acquire, a view dropped.
 * Views go stale, and MPI_File_get_size's last answer from the logs
 * (ad_bbfs_read.c) holds only while this count stands. */
extern unsigned long ADIOI_BBFS_news;
#define ADIOI_BBFS_NEWS(bf) do { (bf)->remote_stale = 1; ADIOI_BBFS_news++; } while (0)

/* ADIOI_Free aborts on NULL; most of our frees may see one. */
#define ADIOI_BBFS_FREE(p) do { if (p) ADIOI_Free(p); } while (0)

/* Writes go to the logs (else straight to the lower file). */
static inline int ADIOI_BBFS_Logging(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = (ADIOI_BBFS_File *) fd->fs_ptr;
    return bf->writer != NULL && !bf->write_through;
}

/* The synced view holds every write flushed so far, unsealed ones too, in
 * the order collective calls and clocks give them (posix, collective,
 * causal). */
static inline int ADIOI_BBFS_View_unsealed(const ADIOI_BBFS_File * bf)
{
    return bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_POSIX
        || bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_COLLECTIVE
        || bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_CAUSAL;
}

/* The view holds this process's own writes too, so a write of its own
 * since the view was built makes it stale (collective, causal; not while
 * the session is private: its writes are all in its writer, after any
 * other's this process can see, ad_bbfs_private.c). */
static inline int ADIOI_BBFS_View_has_own(const ADIOI_BBFS_File * bf)
{
    return (bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_COLLECTIVE
            || bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_CAUSAL) && !bf->unpublished;
}

/* Causal consistency (ad_bbfs_sync.c): a causal handle joins MPI's
 * synchronization at open and leaves at close; a write tells that it has
 * something to release; a read or write first looks whether the process
 * acquired since it last did. */
void ADIOI_BBFS_Sync_join(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Sync_leave(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Sync_wrote(ADIOI_BBFS_File * bf);
void ADIOI_BBFS_Sync_look(ADIOI_BBFS_File * bf);

/* Reads must look at logs: this handle's own, or, where the consistency
 * model shows them, other handles' live sessions on the same file (found
 * at open, possibly new after a sync; commit and posix look every time;
 * session looks once, at what the open found). */
static inline int ADIOI_BBFS_Reads_logs_always(const ADIOI_BBFS_File * bf)
{
    int c = bf->hints.consistency;

    return bf->metalogs || c == ADIOI_BBFS_CONSISTENCY_COMMIT
        || c == ADIOI_BBFS_CONSISTENCY_POSIX;
}

/* (Reads_logs_always answers alike on every process of the handle; the
 * live sessions each process found may differ.  An acquire since this
 * process last looked may have brought others' writes: a handle without
 * logs of its own, a read-only one, then reads through the logs until its
 * next look finds no other session: ADIOI_BBFS_Sync_look.) */
static inline int ADIOI_BBFS_Reads_logs(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = (ADIOI_BBFS_File *) fd->fs_ptr;

    ADIOI_BBFS_Sync_look(bf);
    return ADIOI_BBFS_Reads_logs_always(bf) || bf->others_live;
}

/* ad_bbfs_exchange.c: replay's metalogs and data from the processes that
 * can read them (a writer's host), over MPI.  begin is collective: it
 * chooses hosts and gives every process every writer's sealed metalog as
 * bytes (*srcs point into *bytes; free both).  In each round every process
 * states the datalog ranges it wants and where their bytes go, in order,
 * and calls round (collective; failed: this process wants nothing now).
 * When every process can open every log (one node, a shared log
 * directory) and direct is set, each reads what it wants itself and a
 * round needs no communication.  lazy (or NULL), by writer: a writer of a
 * lazy session that promised nothing, whose log nobody finds, made none
 * (an empty log, not a lost one). */
typedef struct ADIOI_BBFS_Exchange ADIOI_BBFS_Exchange;
struct logfs_metalog_src;
int ADIOI_BBFS_Exchange_begin(MPI_Comm comm, const char *canonical, char *const *metalogs,
                              char *const *servers, int nwriters, int salvage, double timeout,
                              int direct, const unsigned char *lazy,
                              struct ADIOI_BBFS_Datalogs *logs,
                              ADIOI_BBFS_Exchange ** out, struct logfs_metalog_src **srcs,
                              char **bytes);
void ADIOI_BBFS_Exchange_want(ADIOI_BBFS_Exchange * x, int writer, uint64_t off, uint64_t len);
/* Whether salvage left writer out: nobody could reach its logs. */
int ADIOI_BBFS_Exchange_gone(const ADIOI_BBFS_Exchange * x, int writer);
/* count blocks of len bytes at dest + i * stride */
void ADIOI_BBFS_Exchange_place(ADIOI_BBFS_Exchange * x, char *dest, uint64_t len,
                               uint64_t count, uint64_t stride);
int ADIOI_BBFS_Exchange_round(ADIOI_BBFS_Exchange * x, int failed);
/* After the last round, collective where rounds exchanged (x may be NULL):
 * every process's error, with the message of the first whose own it is
 * (derived: this process's only says another failed). */
int ADIOI_BBFS_Exchange_agree(const ADIOI_BBFS_Exchange * x, const char *myname, int err,
                              int derived);
void ADIOI_BBFS_Exchange_end(ADIOI_BBFS_Exchange * x);
/* Adds this exchange's counts (rounds, metalog bytes, wants, bytes moved
 * to other processes) to times (x may be NULL: nothing to add). */
void ADIOI_BBFS_Exchange_count(const ADIOI_BBFS_Exchange * x, ADIOI_BBFS_Times * times);

/* ad_bbfs_datalogs.c: all writers of a plan; read returns an MPI error code */
/* Append the plan's writers; returns the table index of its writer 0.
 * Writers open_from and up have their datalogs opened at once (-1, nothing
 * added, if one fails: *rc, *le); the others on first read. */
int ADIOI_BBFS_Datalogs_add(ADIOI_BBFS_Datalogs * d, const struct logfs_plan *plan, int open_from,
                            int *rc, struct logfs_error *le);
int ADIOI_BBFS_Datalogs_read(ADIOI_BBFS_Datalogs * d, int writer, uint64_t off, void *buf,
                             size_t len);
void ADIOI_BBFS_Datalogs_free(ADIOI_BBFS_Datalogs * d);
/* Whether d holds the datalogs plan names, writer for writer. */
int ADIOI_BBFS_Datalogs_same(const ADIOI_BBFS_Datalogs * d, const struct logfs_plan *plan);

/* err's MPI error string (its last line only, if last_line) into out, of
 * len bytes, NUL-terminated; safe from MPICH's overrun of long ones. */
void ADIOI_BBFS_Error_text(int err, int last_line, char *out, size_t len);

/* ad_bbfs_common.c */
int ADIOI_BBFS_Err_logfs(const char *myname, int line, int code, const char *msg);
int ADIOI_BBFS_Err_log_io(const char *myname, int line, int code, const char *msg);
/* Errors agreed in a reduction (ADIOI_BBFS_Agree_error's own, or one that
 * carries more): a process's key (0: none; the
 * lowest failing rank's is the greatest, so MAX picks it), and from the
 * greatest key (of size processes) the error this process returns, its
 * own err if it has one. */
uint64_t ADIOI_BBFS_Error_key(int err, int rank);
int ADIOI_BBFS_Error_of_key(uint64_t key, int size, int err, const char *myname);
int ADIOI_BBFS_Agree_error(MPI_Comm comm, const char *myname, int err);
/* The same reduction carrying one value of process 0's to every process
 * (*rank0s: process 0's in, process 0's out everywhere): a broadcast that
 * would come next costs nothing more. */
int ADIOI_BBFS_Agree_error_with(MPI_Comm comm, const char *myname, int err, uint64_t * rank0s);
/* Process 0's ints and strings to every process (strs[i] holds caps[i]
 * bytes everywhere), in one small broadcast while the strings fit in 1 KiB,
 * and a second one after it only when they do not.  Collective. */
void ADIOI_BBFS_Bcast_said(MPI_Comm comm, int *const *ints, int nints, char *const *strs,
                           const size_t * caps, int nstrs);
/* The error of a process whose call failed on process rank (err_class there). */
int ADIOI_BBFS_Err_elsewhere(const char *myname, int err_class, int rank);
int ADIOI_BBFS_Err_peer_lost(const char *myname, int mpi_err);
/* The canonical file through the lower driver, on fd's communicator
 * (collective), and its close.  With @p agreed_later, a process's error is
 * its own, not agreed with the others (romio-nested-open.patch): the
 * caller carries it into its next agreement, or returns it to ADIO_Open's
 * own, with nothing collective on the way. */
ADIO_File ADIOI_BBFS_Lower_open(ADIO_File fd, int access_mode, MPI_Info info, int perm,
                                int agreed_later, int *error_code);
void ADIOI_BBFS_Lower_close(ADIO_File lo, int *error_code);
/* Its close and the handle's end, for a lower file the bbfs handle drops. */
void ADIOI_BBFS_Lower_discard(ADIO_File lo, int *error_code);
void ADIOI_BBFS_Resolve_lower(const char *name, int *fstype, ADIOI_Fns ** ops,
                              const char **path, int *error_code);
/* A one-process handle's lower driver, without ROMIO's detection: the
 * driver of the last file opened in the same directory (1), or none known
 * (0).  After the lower open, ADIOI_BBFS_Lower_learn keeps the type of
 * the file opened (@p guessed 0: found by detection), or checks the guess
 * (1): then 1 if it was wrong, *fstype and *ops being the file's own,
 * with which the caller opens it again. */
int ADIOI_BBFS_Lower_guess(const char *name, int *fstype, ADIOI_Fns ** ops, const char **path);
int ADIOI_BBFS_Lower_learn(ADIO_File lo, const char *name, int guessed, int *fstype,
                           ADIOI_Fns ** ops);
int ADIOI_BBFS_Name_has_prefix(const char *name);
/* The name bbfs keeps a file's sessions beside: @p path (no prefix) with
 * the symbolic links of its last component followed (*linked: it had
 * one); ADIOI_Free it. */
char *ADIOI_BBFS_Canonical_path(const char *path, int *linked);
void ADIOI_BBFS_Resolve_as(int fstype, const char *name, ADIOI_Fns ** ops, const char **path,
                           int *error_code);
ADIO_File ADIOI_BBFS_Lower_begin(ADIO_File fd);
void ADIOI_BBFS_Lower_end(ADIO_File fd);
ADIOI_BBFS_File *ADIOI_BBFS_Private(ADIO_File fd);
/* A new handle state, zeroed, and its release (the last one serves the next). */
ADIOI_BBFS_File *ADIOI_BBFS_File_new(void);
void ADIOI_BBFS_File_free(ADIOI_BBFS_File * bf);
/* Nanoseconds on a clock every handle of a file shares (the STAMP record):
 * this node's real time, but after every clock a bbserver told this
 * process (ADIOI_BBFS_Clock_observe); strictly increasing within it. */
uint64_t ADIOI_BBFS_Clock(void);
/* A bbserver's reply told its clock (0: none). */
void ADIOI_BBFS_Clock_observe(uint64_t told);
/* The largest clock a bbserver told this process (0: none yet). */
uint64_t ADIOI_BBFS_Clock_floor(void);
/* This process, in STAMP records (never 0). */
uint64_t ADIOI_BBFS_Process_id(void);
/* This node's host name (gethostname, asked once per process). */
const char *ADIOI_BBFS_Host_name(void);
/* Name parts at every open: ".%016llx" and ".%d" of v, at out (room for
 * 17 and 12 bytes, no NUL); @return the end.  (snprintf took 1.6K
 * instructions a name, once per writer at each open.) */
char *ADIOI_BBFS_Put_hex16(char *out, uint64_t v);
char *ADIOI_BBFS_Put_int(char *out, int v);
/* Sleep *nap seconds, then double it up to cap: the backoff of a wait for
 * a session someone else holds. */
void ADIOI_BBFS_Nap(double *nap, double cap);
/* bbfs_force_remote or BBFS_FORCE_REMOTE=1: take the paths that other
 * nodes need even where this node could do without (tests, one node). */
int ADIOI_BBFS_Force_remote(const ADIOI_BBFS_Hints * h);
/* Unique enough to tell the logs of two opens of one file apart. */
uint64_t ADIOI_BBFS_New_file_id(const char *path);
void ADIOI_BBFS_Access_done(ADIO_File fd, int file_ptr_type, ADIO_Offset next_fp,
                            ADIO_Status * status, MPI_Datatype datatype, ADIO_Offset nbytes);

#endif /* AD_BBFS_H_INCLUDED */
