/*
 * bbfs hints from MPI_Info: checked, agreed between processes, installed.
 *
 * Every value is checked; a bad one is an MPI error that names the hint and
 * says what is allowed, never a silent default.  The values in force (given
 * or default) go into fd->info when MPI_File_get_info asks for them
 * (ADIOI_BBFS_ShowInfo).
 * The hints themselves are one table (ad_bbfs_hint_table.c); docs/hints.md
 * documents each, and a unit test holds the two together.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "ad_bbfs_hint_table.h"
#include <stdio.h>
#include <string.h>

static int hint_error(const char *key, const char *value, const char *why)
{
    static char myname[] = "ADIOI_BBFS_SETINFO";
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_INFO_VALUE, "**infoval",
                                "bbfs hint %s=\"%s\" is not valid: %s (see docs/hints.md)",
                                key, value, why);
}

/* Apply one user-given bbfs_* key to h.  Returns MPI_SUCCESS or an error
 * code naming the key and the allowed values. */
static int apply_hint(ADIOI_BBFS_Hints * h, const char *key, const char *value)
{
    const ADIOI_BBFS_Hint *d = ADIOI_BBFS_Hint_find(key);
    char why[256];
    const char *problem;

    if (!d) {
        char keys[256], msg[300];
        ADIOI_BBFS_Hint_keys(keys, sizeof(keys));
        snprintf(msg, sizeof(msg), "unknown bbfs hint; known: %s", keys);
        return hint_error(key, value, msg);
    }
    problem = ADIOI_BBFS_Hint_apply(h, d, value, why, sizeof(why));
    return problem ? hint_error(key, value, problem) : MPI_SUCCESS;
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

    *digest = ADIOI_BBFS_NO_HINTS_DIGEST;
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
        const ADIOI_BBFS_Hint *d = ADIOI_BBFS_Hint_find(key);
        if (!at_open && d && d->open_only) {
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

void ADIOI_BBFS_Hints_show(ADIO_File fd)
{
    const ADIOI_BBFS_Hints *h = &ADIOI_BBFS_Private(fd)->hints;
    char v[PATH_MAX];

    for (const ADIOI_BBFS_Hint * d = ADIOI_BBFS_hint_table; d->key; d++)
        if (ADIOI_BBFS_Hint_show(h, d, v, sizeof(v)))
            ADIOI_Info_set(fd->info, d->key, v);
}

/* Whether a node's server can drain into the lower file with POSIX calls
 * (logfs_drain_file): the lower driver writes a file system the kernel
 * mounts. */
static int lower_is_posix(int file_system)
{
    switch (file_system) {
    case ADIO_UFS:
    case ADIO_NFS:
    case ADIO_XFS:
    case ADIO_PANFS:
    case ADIO_LUSTRE:
    case ADIO_GPFS:
        return 1;
    default:
        return 0;
    }
}

/* background falls back to on_close (and MPI_File_get_info says so)
 * where a node's server cannot drain the file: a lower driver that is not
 * a mounted file system (the server writes with POSIX calls).  On several
 * nodes the draining server reads the other nodes' logs through their
 * servers (docs/drain.md). */
static void replay_where_possible(ADIOI_BBFS_File * bf)
{
    if (bf->hints.replay == ADIOI_BBFS_REPLAY_BACKGROUND
        && !lower_is_posix(bf->lower->file_system))
        bf->hints.replay = ADIOI_BBFS_REPLAY_ON_CLOSE;
}

void ADIOI_BBFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SETINFO";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int at_open = (bf == NULL);
    ADIOI_BBFS_Hints parsed;
    unsigned digest;
    int err;

    if (at_open) {
        bf = ADIOI_BBFS_File_new();
        bf->open_info = MPI_INFO_NULL;
        bf->shape.type = MPI_DATATYPE_NULL;
        bf->session.fd = -1;
        ADIOI_BBFS_Hints_default(&bf->hints);
        fd->fs_ptr = bf;
        /* The lower driver gets the user's hints as given (striping, cb_*). */
        if (users_info != MPI_INFO_NULL)
            MPI_Info_dup(users_info, &bf->open_info);

        /* The bbfs handle makes no I/O of its own through ROMIO's generic
         * code: its lower file does, with the user's hints, which the lower
         * open processes (and checks) and MPI_File_get_info shows.  ROMIO's
         * defaults here (seventeen info sets, each a walk of a list) were a
         * tenth of an open's instructions.  ADIO_Open needs an info (it
         * adds the file system type), an aggregator list (a preset one
         * spares the gather of every process's host name) and the size of a
         * two-phase buffer, which it allocates next (16 MiB by default, from
         * the heap and back at every open and close). */
        if (fd->info == MPI_INFO_NULL)
            MPI_Info_create(&fd->info);
        fd->hints->initialized = 1;
        fd->hints->deferred_open = 0;
        fd->hints->cb_buffer_size = 64;
        if (fd->hints->ranklist == NULL) {
            fd->hints->ranklist = ADIOI_Malloc(sizeof(int));
            fd->hints->ranklist[0] = 0;
            fd->hints->cb_nodes = 1;    /* the list's length */
        }
        *error_code = MPI_SUCCESS;
    } else {
        ADIOI_GEN_SetInfo(fd, users_info, error_code);
        if (*error_code != MPI_SUCCESS)
            goto fn_exit;
    }

    parsed = bf->hints;
    if (bf->atomic_logged)      /* (posix stands in for the user's model meanwhile) */
        parsed.consistency = bf->atomic_logged - 1;
    err = parse_user_hints(users_info, &parsed, at_open, &digest);

    /* Every rank must see the same hints and return the same error: one
     * reduction (MIN) of what each parsed.  At open it is part of the
     * open's one reduction, with what the server's choice needs
     * (ADIOI_BBFS_Open_prepare, ADIOI_BBFS_Server_open); meanwhile each
     * process goes on with its own. */
    uint64_t *mine = bf->hint_check, all[ADIOI_BBFS_HINT_CHECK];
    mine[0] = (err == MPI_SUCCESS);
    mine[1] = digest;
    mine[2] = ~(uint64_t) digest;
    if (at_open)
        ADIOI_BBFS_Server_facts(&parsed, mine + 3);
    else {
        MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MIN, fd->comm);
        err = ADIOI_BBFS_Hints_agreed(all, err);
    }
    if (err != MPI_SUCCESS) {
        *error_code = err;
        goto fn_exit;
    }
    if (bf->atomic_logged) {
        bf->atomic_logged = parsed.consistency + 1;
        parsed.consistency = ADIOI_BBFS_CONSISTENCY_POSIX;
    }
    bf->hints = parsed;
    if (!at_open && bf->lower) {
        replay_where_possible(bf);
        ADIO_SetInfo(bf->lower, users_info, error_code);
    }

  fn_exit:
    if (at_open)
        bf->hint_error = *error_code;
}

int ADIOI_BBFS_Hints_agreed(const uint64_t * least, int err)
{
    static char myname[] = "ADIOI_BBFS_SETINFO";

    if (err != MPI_SUCCESS)
        return err;
    if (!least[0])              /* (some process rejected them) */
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    MPI_ERR_INFO_VALUE, "**infoval",
                                    "bbfs hints were rejected on another process");
    /* (least[2] is the complement of the greatest digest) */
    if (least[1] != ~least[2])
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    MPI_ERR_NOT_SAME, "**notsame",
                                    "bbfs_* hints differ between processes; pass the same "
                                    "MPI_Info on every rank");
    return MPI_SUCCESS;
}

/* bbfs_replay's default depends on the access mode, known only at open: a
 * file opened with MPI_MODE_UNIQUE_OPEN (nobody else opens it meanwhile)
 * drains in the background, so that its close costs what a deferred one
 * does and the file still reaches the canonical file system without
 * anyone's help (docs/drain.md: on_read_open left it on node-local storage
 * until someone read it, and lost it when the allocation ended first). */
void ADIOI_BBFS_Hints_resolve_at_open(ADIO_File fd, int access_mode)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    if (!bf->hints.replay_given)
        bf->hints.replay = (access_mode & ADIO_UNIQUE_OPEN) ? ADIOI_BBFS_REPLAY_BACKGROUND
            : ADIOI_BBFS_REPLAY_ON_CLOSE;
    replay_where_possible(bf);
}
