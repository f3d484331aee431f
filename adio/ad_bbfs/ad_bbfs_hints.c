/*
 * bbfs hints: the one place where bbfs_* keys are parsed, checked and shown.
 *
 * Every value is checked; a bad one is an MPI error that names the hint and
 * says what is allowed, never a silent default.  The values in force (given
 * or default) are installed in fd->info so MPI_File_get_info shows them.
 * docs/hints.md documents each hint; keep the two in step.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "ad_bbfs_hint_values.h"
#include <ctype.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BBFS_BUFFER_DEFAULT ((ADIO_Offset) 4 << 20)
#define BBFS_BUFFER_MIN     ((ADIO_Offset) 4 << 10)
#define BBFS_BUFFER_MAX     ((ADIO_Offset) 1 << 30)
/* Replay rounds: small enough to stay in cache between the datalog reads
 * and the write (1 MiB rounds replayed 4 KiB pieces 1.3-2x faster than
 * 64 MiB ones here, docs/benchmarks.md); large parallel file systems may
 * want a stripe's worth or more. */
#define BBFS_REPLAY_BUFFER_DEFAULT ((ADIO_Offset) 1 << 20)
#define BBFS_REPLAY_BUFFER_MIN     ((ADIO_Offset) 64 << 10)
#define BBFS_REPLAY_BUFFER_MAX     ((ADIO_Offset) 1 << 30)
/* A quota beyond any device is a typo (1 PiB). */
#define BBFS_LOG_QUOTA_MAX ((ADIO_Offset) 1 << 50)

static const char *const consistency_names[] = { "mpiio", "session", "commit", "posix",
    "collective", NULL
};
static const char *const replay_names[] = { "on_close", "on_read_open", "never", "on_sync",
    NULL
};
static const char *const bool_names[] = { "false", "true", NULL };

/* Hints whose meaning is fixed once logs exist: MPI_File_set_info may not
 * change them. */
static const char *const open_only_keys[] = {
    "bbfs_logdir", "bbfs_consistency", "bbfs_buffer_size", "bbfs_server", "bbfs_log_quota",
    NULL
};

static void join_names(const char *const *names, char *out, size_t len)
{
    out[0] = '\0';
    for (int i = 0; names[i]; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "|" : "", names[i]);
}

static void default_hints(ADIOI_BBFS_Hints * h)
{
    const char *dir = getenv("BBFS_LOGDIR");

    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(h->logdir, sizeof(h->logdir), "%s", dir);
    h->consistency = ADIOI_BBFS_CONSISTENCY_MPIIO;
    h->replay = ADIOI_BBFS_REPLAY_ON_CLOSE;
    h->replay_given = 0;
    h->buffer_size = BBFS_BUFFER_DEFAULT;
    h->durable = 0;
    h->progress = 0;
    h->salvage = 0;
    h->log_quota = 0;
    h->replay_buffer = BBFS_REPLAY_BUFFER_DEFAULT;
    snprintf(h->server, sizeof(h->server), "auto");
}

static int hint_error(const char *key, const char *value, const char *why)
{
    static char myname[] = "ADIOI_BBFS_SETINFO";
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_INFO_VALUE, "**infoval",
                                "bbfs hint %s=\"%s\" is not valid: %s (see docs/hints.md)",
                                key, value, why);
}

/* A byte count in [min, max]: *out is set only when the value is good. */
static int bounded_size(const char *key, const char *value, ADIO_Offset min, ADIO_Offset max,
                        const char *range, ADIO_Offset * out)
{
    long long v;

    if (ADIOI_BBFS_Parse_size(value, &v) != 0)
        return hint_error(key, value, "expected bytes, optionally with k, m or g");
    if (v < min || v > max)
        return hint_error(key, value, range);
    *out = v;
    return MPI_SUCCESS;
}

/* Apply one user-given bbfs_* key to h.  Returns MPI_SUCCESS or an error
 * code naming the key and the allowed values. */
static int apply_hint(ADIOI_BBFS_Hints * h, const char *key, const char *value)
{
    char allowed[128];
    int i;

    if (!strcmp(key, "bbfs_logdir")) {
        const char *why = ADIOI_BBFS_Logdir_problem(value);
        if (why)
            return hint_error(key, value, why);
        if (strlen(value) >= sizeof(h->logdir) - 64)
            return hint_error(key, value, "path is too long");
        snprintf(h->logdir, sizeof(h->logdir), "%s", value);
    } else if (!strcmp(key, "bbfs_consistency")) {
        if ((i = ADIOI_BBFS_Choice_index(value, consistency_names)) < 0) {
            join_names(consistency_names, allowed, sizeof(allowed));
            return hint_error(key, value, allowed);
        }
        h->consistency = i;
    } else if (!strcmp(key, "bbfs_replay")) {
        if ((i = ADIOI_BBFS_Choice_index(value, replay_names)) < 0) {
            join_names(replay_names, allowed, sizeof(allowed));
            return hint_error(key, value, allowed);
        }
        h->replay = i;
        h->replay_given = 1;
    } else if (!strcmp(key, "bbfs_buffer_size")) {
        return bounded_size(key, value, BBFS_BUFFER_MIN, BBFS_BUFFER_MAX,
                            "must be between 4k and 1g", &h->buffer_size);
    } else if (!strcmp(key, "bbfs_durable")) {
        if ((i = ADIOI_BBFS_Choice_index(value, bool_names)) < 0)
            return hint_error(key, value, "true|false");
        h->durable = i;
    } else if (!strcmp(key, "bbfs_progress")) {
        if ((i = ADIOI_BBFS_Choice_index(value, bool_names)) < 0)
            return hint_error(key, value, "true|false");
        h->progress = i;
    } else if (!strcmp(key, "bbfs_log_quota")) {
        return bounded_size(key, value, 0, BBFS_LOG_QUOTA_MAX, "must be between 0 (no quota) "
                            "and 1048576g", &h->log_quota);
    } else if (!strcmp(key, "bbfs_replay_buffer")) {
        return bounded_size(key, value, BBFS_REPLAY_BUFFER_MIN, BBFS_REPLAY_BUFFER_MAX,
                            "must be between 64k and 1g", &h->replay_buffer);
    } else if (!strcmp(key, "bbfs_salvage")) {
        if ((i = ADIOI_BBFS_Choice_index(value, bool_names)) < 0)
            return hint_error(key, value, "true|false");
        h->salvage = i;
    } else if (!strcmp(key, "bbfs_lower_filesystem_type")) {
        /* Shown by MPI_File_get_info, so PnetCDF and mpi4py hand it back to
         * open and set_info: informational, the name decides the driver. */
    } else if (!strcmp(key, "bbfs_server")) {
        if (!value[0] || strlen(value) >= sizeof(h->server))
            return hint_error(key, value, "expected \"auto\" or a bbserver address");
        snprintf(h->server, sizeof(h->server), "%s", value);
    } else {
        return hint_error(key, value, "unknown bbfs hint; known: bbfs_logdir, "
                          "bbfs_consistency, bbfs_replay, bbfs_buffer_size, "
                          "bbfs_durable, bbfs_server, bbfs_progress, bbfs_salvage, "
                          "bbfs_log_quota, bbfs_replay_buffer");
    }
    return MPI_SUCCESS;
}

static int is_open_only(const char *key)
{
    for (int i = 0; open_only_keys[i]; i++)
        if (!strcmp(key, open_only_keys[i]))
            return 1;
    return 0;
}

/* FNV-1a, to let ranks compare the hints they were given in one reduction. */
static unsigned digest_add(unsigned d, const char *s)
{
    for (; *s; s++)
        d = (d ^ (unsigned char) *s) * 16777619u;
    return (d ^ 0xff) * 16777619u;
}

/* Parse every bbfs_* key of info into h.  at_open: whether open-only keys
 * may change.  *digest summarises what was given. */
static int parse_user_hints(MPI_Info info, ADIOI_BBFS_Hints * h, int at_open, unsigned *digest)
{
    char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
    int nkeys, flag, err = MPI_SUCCESS;

    *digest = 2166136261u;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int k = 0; k < nkeys && err == MPI_SUCCESS; k++) {
        MPI_Info_get_nthkey(info, k, key);
        if (strncmp(key, "bbfs_", 5) != 0)
            continue;
        ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        if (!flag)
            continue;
        *digest = digest_add(digest_add(*digest, key), value);
        if (!at_open && is_open_only(key)) {
            ADIOI_BBFS_Hints now = *h;
            err = apply_hint(&now, key, value);
            if (err == MPI_SUCCESS && memcmp(&now, h, sizeof(now)) != 0)
                err = hint_error(key, value, "can only be given at MPI_File_open");
            continue;
        }
        err = apply_hint(h, key, value);
    }
    return err;
}

static void install_in_force(ADIO_File fd, const ADIOI_BBFS_Hints * h)
{
    char v[64];

    ADIOI_Info_set(fd->info, "bbfs_logdir", h->logdir);
    ADIOI_Info_set(fd->info, "bbfs_consistency", consistency_names[h->consistency]);
    ADIOI_Info_set(fd->info, "bbfs_replay", replay_names[h->replay]);
    snprintf(v, sizeof(v), "%lld", (long long) h->buffer_size);
    ADIOI_Info_set(fd->info, "bbfs_buffer_size", v);
    ADIOI_Info_set(fd->info, "bbfs_durable", bool_names[h->durable]);
    ADIOI_Info_set(fd->info, "bbfs_server", h->server);
    ADIOI_Info_set(fd->info, "bbfs_progress", bool_names[h->progress]);
    ADIOI_Info_set(fd->info, "bbfs_salvage", bool_names[h->salvage]);
    snprintf(v, sizeof(v), "%lld", (long long) h->log_quota);
    ADIOI_Info_set(fd->info, "bbfs_log_quota", v);
    snprintf(v, sizeof(v), "%lld", (long long) h->replay_buffer);
    ADIOI_Info_set(fd->info, "bbfs_replay_buffer", v);
}

void ADIOI_BBFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SETINFO";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int at_open = (bf == NULL);
    ADIOI_BBFS_Hints parsed;
    unsigned digest, mine[3], all[3];
    int err;

    if (at_open) {
        bf = ADIOI_Calloc(1, sizeof(*bf));
        bf->open_info = MPI_INFO_NULL;
        bf->shape.type = MPI_DATATYPE_NULL;
        bf->session.fd = -1;
        default_hints(&bf->hints);
        fd->fs_ptr = bf;
        /* The lower driver gets the user's hints as given (striping, cb_*). */
        if (users_info != MPI_INFO_NULL)
            MPI_Info_dup(users_info, &bf->open_info);
    }

    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    if (*error_code != MPI_SUCCESS)
        goto fn_exit;
    if (at_open && fd->hints->ranklist == NULL) {
        /* The bbfs handle does no two-phase I/O of its own (its lower file
         * does), so it needs no aggregator list: a preset one spares
         * ADIO_Open the gather of every process's host name. */
        fd->hints->ranklist = ADIOI_Malloc(sizeof(int));
        fd->hints->ranklist[0] = 0;
        fd->hints->cb_nodes = 1;        /* the list's length (get_info shows the lower's) */
    }

    parsed = bf->hints;
    err = parse_user_hints(users_info, &parsed, at_open, &digest);

    /* Every rank must see the same hints and return the same error. */
    mine[0] = (err != MPI_SUCCESS);
    mine[1] = digest;
    mine[2] = ~digest;
    MPI_Allreduce(mine, all, 3, MPI_UNSIGNED, MPI_MAX, fd->comm);
    if (err == MPI_SUCCESS && all[0])
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_INFO_VALUE, "**infoval",
                                   "bbfs hints were rejected on another process");
    else if (err == MPI_SUCCESS && all[1] != ~all[2])
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_NOT_SAME, "**notsame",
                                   "bbfs_* hints differ between processes; pass the same "
                                   "MPI_Info on every rank");
    if (err != MPI_SUCCESS) {
        *error_code = err;
        goto fn_exit;
    }
    bf->hints = parsed;
    install_in_force(fd, &bf->hints);
    if (!at_open && bf->lower)
        ADIO_SetInfo(bf->lower, users_info, error_code);

  fn_exit:
    if (at_open)
        bf->hint_error = *error_code;
}

/* bbfs_replay's default depends on the access mode, known only at open. */
void ADIOI_BBFS_Hints_resolve_at_open(ADIO_File fd, int access_mode)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    if (!bf->hints.replay_given)
        bf->hints.replay = (access_mode & ADIO_UNIQUE_OPEN) ? ADIOI_BBFS_REPLAY_ON_READ_OPEN
            : ADIOI_BBFS_REPLAY_ON_CLOSE;
    install_in_force(fd, &bf->hints);
}
