/*
 * The bbfs hints: one table of every bbfs_* key, with its kind, field,
 * bounds, allowed values, default and whether it may change after open.
 * It drives parsing, checking, defaults, showing and the open-only rule.
 * Plain C, no MPI: the table is fuzzed (tests/fuzz/fuzz_hints.c) and
 * checked against docs/hints.md (tests/unit/hint_table_test.cc) on its
 * own; ad_bbfs_hints.c turns its answers into MPI errors and MPI_Info.
 */
#ifndef AD_BBFS_HINT_TABLE_H
#define AD_BBFS_HINT_TABLE_H

#include <limits.h>
#include <stddef.h>

/* bbfs_server_timeout's default, also for calls outside a handle (delete) */
#define ADIOI_BBFS_DEFAULT_SERVER_TIMEOUT 30
#define ADIOI_BBFS_STR_(x) #x
#define ADIOI_BBFS_STR(x) ADIOI_BBFS_STR_(x)

/* bbfs_consistency: when writes are attached to / queried from the server. */
enum ADIOI_BBFS_consistency {
    ADIOI_BBFS_CONSISTENCY_MPIIO,
    ADIOI_BBFS_CONSISTENCY_SESSION,
    ADIOI_BBFS_CONSISTENCY_COMMIT,
    ADIOI_BBFS_CONSISTENCY_POSIX,
    ADIOI_BBFS_CONSISTENCY_COLLECTIVE,  /* mpiio, and every collective call syncs */
    ADIOI_BBFS_CONSISTENCY_CAUSAL       /* mpiio, and MPI's own synchronization too */
};

/* bbfs_replay: when logs are turned into the canonical file. */
enum ADIOI_BBFS_replay {
    ADIOI_BBFS_REPLAY_ON_CLOSE,
    ADIOI_BBFS_REPLAY_ON_READ_OPEN,
    ADIOI_BBFS_REPLAY_NEVER,
    ADIOI_BBFS_REPLAY_ON_SYNC,  /* on_close, and the canonical file is brought up
                                 * to date at every MPI_File_sync */
    ADIOI_BBFS_REPLAY_BACKGROUND        /* the close leaves the logs to this node's
                                         * bbserver, which drains them (docs/drain.md) */
};

/* The hints in force for one open file (docs/hints.md documents each). */
typedef struct ADIOI_BBFS_Hints {
    char logdir[PATH_MAX];      /* node-local directory for datalog/metalog */
    int consistency;            /* enum ADIOI_BBFS_consistency */
    int replay;                 /* enum ADIOI_BBFS_replay */
    int replay_given;           /* user chose bbfs_replay (else depends on amode) */
    long long buffer_size;      /* aggregation buffer, bytes */
    int durable;                /* fdatasync logs at sync points */
    char server[256];           /* bbserver address; "auto" = start/find one */
    long long server_timeout;   /* seconds a bbserver request may take */
    int force_remote;           /* visibility through bbserver even on one node */
    long long read_cache;       /* bytes of other nodes' logs kept for reads */
    int progress;               /* rank 0 reports replay progress on stderr */
    int timing;                 /* rank 0 prints where a handle's time went, at close */
    int salvage;                /* replay what damaged metalogs sealed before the damage */
    long long log_quota;        /* datalog bytes per process; 0 = as much as the disk holds */
    long long replay_buffer;    /* file bytes per process per collective write of a replay */
} ADIOI_BBFS_Hints;

enum ADIOI_BBFS_hint_kind {
    ADIOI_BBFS_HINT_LOGDIR,     /* a log directory path (char array) */
    ADIOI_BBFS_HINT_CHOICE,     /* one of names (int: its index) */
    ADIOI_BBFS_HINT_SIZE,       /* bytes with k, m or g, in [min, max] (long long) */
    ADIOI_BBFS_HINT_TEXT,       /* any non-empty text that fits (char array) */
    ADIOI_BBFS_HINT_INFORMATIONAL       /* shown by get_info, ignored when given */
};

typedef struct ADIOI_BBFS_Hint {
    const char *key;
    enum ADIOI_BBFS_hint_kind kind;
    size_t field;               /* offsetof(ADIOI_BBFS_Hints, ...) */
    size_t field_size;          /* char arrays: their size */
    const char *const *names;   /* CHOICE: the values, by number */
    long long min, max;         /* SIZE */
    const char *allowed;        /* what an error says is allowed (NULL: the names) */
    const char *dflt;           /* the default, as a user would write it (NULL: computed) */
    int open_only;              /* fixed once logs exist: set_info may not change it */
} ADIOI_BBFS_Hint;

/* Every bbfs hint; the last entry has key NULL. */
extern const ADIOI_BBFS_Hint ADIOI_BBFS_hint_table[];

/* The entry of @p key, or NULL for a key that is not a bbfs hint. */
const ADIOI_BBFS_Hint *ADIOI_BBFS_Hint_find(const char *key);

/* Every hint at its default (bbfs_logdir: $BBFS_LOGDIR, $TMPDIR or /tmp). */
void ADIOI_BBFS_Hints_default(ADIOI_BBFS_Hints * h);

/* Set hint @p d of @p h to @p value.  @return NULL, or why the value is not
 * allowed (in @p why, or a constant); @p h is changed only on success. */
const char *ADIOI_BBFS_Hint_apply(ADIOI_BBFS_Hints * h, const ADIOI_BBFS_Hint * d,
                                  const char *value, char *why, size_t len);

/* The value of hint @p d in force in @p h, as MPI_File_get_info shows it.
 * @return 0 for a hint that is not shown from @p h (informational). */
int ADIOI_BBFS_Hint_show(const ADIOI_BBFS_Hints * h, const ADIOI_BBFS_Hint * d, char *out,
                         size_t len);

/* "bbfs_logdir, bbfs_consistency, ..." for a message about unknown keys. */
void ADIOI_BBFS_Hint_keys(char *out, size_t len);

/* "4194304", "64k", "4m", "1g" (powers of 1024), at most INT64_MAX.
 * @return 0 and *out, or -1 (nothing else, no wrap-around). */
int ADIOI_BBFS_Parse_size(const char *value, long long *out);

/* The index of @p value in the NULL-terminated @p names, or -1. */
int ADIOI_BBFS_Choice_index(const char *value, const char *const *names);

/* NULL if @p value may be a log directory (absolute, no . or .. parts),
 * else why not. */
const char *ADIOI_BBFS_Logdir_problem(const char *value);

#endif
