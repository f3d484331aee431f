/*
 * The lower file: which ROMIO driver the canonical file is under (a prefix,
 * or ROMIO's detection, or the type of the last file opened in the same
 * directory), and its open and close on the bbfs handle's communicator.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "adio_extern.h"
#include "adio_cb_config_list.h"

#include "../../logfs/fault.h"
#include "../../logfs/sessions.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <limits.h>

/* ROMIO's open gathers every process's host name (for its aggregators'
 * list) and keeps the list on the communicator the user gave, so that the
 * next open on it asks no one.  The lower file is opened on the bbfs
 * handle's communicator, new at every open, so every lower open gathered
 * again: two collectives, and on MPI_COMM_SELF a fifth of an open's CPU.
 * The driver keeps the last few lists by process group and lends the one
 * of the same group (same processes, same order: process 0, which alone
 * holds the names, is the same) to the next lower open. */
#define NAME_LISTS 4
static struct {
    MPI_Group group;
    ADIO_cb_name_array names;
} name_lists[NAME_LISTS];
static int name_lists_next;

static void name_list_drop(ADIO_cb_name_array names)
{
    ADIOI_cb_delete_name_array(MPI_COMM_NULL, ADIOI_cb_config_list_keyval, names, NULL);
}

static void name_list_lend(MPI_Comm comm)
{
    MPI_Group g;
    void *names;
    int found, same;

    if (ADIOI_cb_config_list_keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm_get_attr(comm, ADIOI_cb_config_list_keyval, &names, &found);
    if (found)
        return;
    MPI_Comm_group(comm, &g);
    for (int i = 0; i < NAME_LISTS; i++) {
        if (!name_lists[i].names)
            continue;
        MPI_Group_compare(g, name_lists[i].group, &same);
        if (same == MPI_IDENT) {
            name_lists[i].names->refct++;       /* (the attribute's delete drops it) */
            MPI_Comm_set_attr(comm, ADIOI_cb_config_list_keyval, name_lists[i].names);
            break;
        }
    }
    MPI_Group_free(&g);
}

static void name_list_keep(MPI_Comm comm)
{
    ADIO_cb_name_array names;
    int found, i = name_lists_next;

    if (ADIOI_cb_config_list_keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm_get_attr(comm, ADIOI_cb_config_list_keyval, &names, &found);
    if (!found || !names)
        return;
    for (int k = 0; k < NAME_LISTS; k++)
        if (name_lists[k].names == names)
            return;
    if (name_lists[i].names) {
        name_list_drop(name_lists[i].names);
        MPI_Group_free(&name_lists[i].group);
    }
    names->refct++;
    name_lists[i].names = names;
    MPI_Comm_group(comm, &name_lists[i].group);
    name_lists_next = (i + 1) % NAME_LISTS;
}

/* The name without its driver prefix ("ufs:/a" -> "/a"). */
static const char *strip_prefix(const char *name)
{
    return name + logfs_name_prefix_len(name);
}

/* Opens the canonical file through the lower driver, on the bbfs
 * handle's own communicator: a communicator of its own (MPI_Comm_dup) cost
 * one more collective per open, and the lower driver's collectives come in
 * the same order on every process, between bbfs's own, as ROMIO's two
 * layers of one file use one communicator.  (The lower open also finds the
 * processes' host names cached on it: no second gather; and, nested in
 * the bbfs handle's open, which processed the system hints on every
 * process, no reduction asking whether all have: ADIOI_Open_nested,
 * adio/mpich-patches/romio-nested-open.patch.)  Collective. */
ADIO_File ADIOI_BBFS_Lower_open(ADIO_File fd, int access_mode, MPI_Info info, int perm,
                                int agreed_later, int *error_code)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    name_list_lend(fd->comm);
    ADIOI_Open_nested = agreed_later ? 2 : 1;
    /* (by this process's own name, not bf->canonical: a link stays a link
     * to the lower driver, so MPI_MODE_EXCL through one fails as there) */
    ADIO_File lo = ADIO_Open(fd->comm, fd->comm, strip_prefix(fd->filename), bf->lower_fstype,
                             bf->lower_ops, access_mode, 0, MPI_BYTE, MPI_BYTE, info, perm,
                             error_code);
    ADIOI_Open_nested = 0;
    if (lo != ADIO_FILE_NULL)
        name_list_keep(fd->comm);
    /* (a failure on this process alone, after every process took part) */
    int injected = logfs_fault("lower-open");
    if (injected && lo != ADIO_FILE_NULL) {
        int close_err;
        ADIOI_BBFS_Lower_discard(lo, &close_err);
        lo = ADIO_FILE_NULL;
        *error_code = ADIOI_Err_create_code("ADIOI_BBFS_LOWER_OPEN", bf->canonical, injected);
    }
    return lo;
}

/* Closes the lower file.  It only borrowed the bbfs handle's view (etype
 * and filetype) and communicator, which ADIO_Close would free: nested, it
 * leaves the communicator to the bbfs handle (romio-nested-open.patch; a
 * copy of MPI_COMM_SELF for it to free cost a sixth of an open and close
 * on MPI_COMM_SELF). */
void ADIOI_BBFS_Lower_close(ADIO_File lo, int *error_code)
{
    lo->etype = MPI_BYTE;
    lo->filetype = MPI_BYTE;
    ADIOI_Open_nested = 1;
    ADIO_Close(lo, error_code);
    ADIOI_Open_nested = 0;
}

void ADIOI_BBFS_Lower_discard(ADIO_File lo, int *error_code)
{
    MPI_File h = lo;
    ADIOI_BBFS_Lower_close(lo, error_code);
    MPIO_File_free(&h);
}

/* A driver prefix as MPI_File_open sees one ("ufs:/a"). */
int ADIOI_BBFS_Name_has_prefix(const char *name)
{
    return logfs_name_prefix_len(name) > 0;
}

/* ROMIO_FSTYPE_FORCE=bbfs: hands every file to bbfs, the zero-change way
 * to run a binary on it; below bbfs the lower driver must then be found as
 * if the variable were not set (ROMIO applies it after any prefix, so
 * "ufs:/p" would resolve to bbfs too).  ROMIO has no call that detects
 * without it, so set it aside for the one call: ROMIO holds its global
 * lock here, and the variable's value is restored before returning. */
static void resolve_unforced(const char *name, int *fstype, ADIOI_Fns ** ops, int *error_code)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    char *saved = NULL;

    if (force && !strncasecmp(force, "bbfs:", 5)) {
        saved = ADIOI_Strdup(force);
        unsetenv("ROMIO_FSTYPE_FORCE");
    }
    ADIO_ResolveFileType(MPI_COMM_SELF, name, fstype, ops, error_code);
    if (saved) {
        setenv("ROMIO_FSTYPE_FORCE", saved, 1);
        ADIOI_Free(saved);
    }
}

void ADIOI_BBFS_Resolve_lower(const char *name, int *fstype, ADIOI_Fns ** ops,
                              const char **path, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_RESOLVE_LOWER";
    int has_prefix = ADIOI_BBFS_Name_has_prefix(name);

    if (has_prefix && !strncasecmp(name, "bbfs:", 5)) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename",
                                           "bbfs cannot stack on itself: '%s'; name one lower "
                                           "driver at most, as in bbfs:ufs:/path", name);
        return;
    }
    /* This process alone: rank 0 broadcasts what it found (ROMIO's own
     * scalable detection), and delete is not collective. */
    resolve_unforced(name, fstype, ops, error_code);
    if (*error_code != MPI_SUCCESS) {
        if (has_prefix) {
            /* Only an unknown or unbuilt driver prefix fails here: say which. */
            char driver[64];
            snprintf(driver, sizeof(driver), "%.*s", (int) (strip_prefix(name) - name - 1),
                     name);
            *error_code = MPIO_Err_create_code(*error_code, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_BAD_FILE, "**filename",
                                               "bbfs: lower driver '%s' in '%s' is unknown or "
                                               "not built into this MPICH; use one of ufs:, "
                                               "nfs:, or no prefix to detect it",
                                               driver, name);
        }
        return;
    }
    if (*fstype == ADIO_BBFS) {
        /* ROMIO_FSTYPE_FORCE names some other driver prefix bbfs cannot
         * see past (it was set aside above only when it names bbfs). */
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename",
                                           "bbfs: the lower driver for '%s' resolved to bbfs "
                                           "itself; force a lower driver with bbfs:ufs:/path",
                                           name);
        return;
    }
    *path = strip_prefix(name);
}

/* The prefix that names each lower driver ROMIO may detect, so that other
 * processes can take rank 0's detection without a statfs storm (as ROMIO's
 * own scalable detection does). */
static const struct {
    int fstype;
    const char *prefix;
} lower_prefixes[] = {
    {ADIO_UFS, "ufs:"}, {ADIO_NFS, "nfs:"}, {ADIO_XFS, "xfs:"}, {ADIO_PVFS2, "pvfs2:"},
    {ADIO_GPFS, "gpfs:"}, {ADIO_PANFS, "panfs:"}, {ADIO_LUSTRE, "lustre:"},
    {ADIO_DAOS, "daos:"}, {ADIO_TESTFS, "testfs:"}, {ADIO_IME, "ime:"},
    {ADIO_QUOBYTEFS, "quobyte:"}
};

void ADIOI_BBFS_Resolve_as(int fstype, const char *name, ADIOI_Fns ** ops, const char **path,
                           int *error_code)
{
    static char myname[] = "ADIOI_BBFS_RESOLVE_AS";
    char forced[64];
    int got;

    for (size_t i = 0; i < sizeof(lower_prefixes) / sizeof(lower_prefixes[0]); i++)
        if (lower_prefixes[i].fstype == fstype) {
            snprintf(forced, sizeof(forced), "%s", lower_prefixes[i].prefix);
            resolve_unforced(forced, &got, ops, error_code);
            *path = strip_prefix(name);
            return;
        }
    *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_BAD_FILE, "**filename", "bbfs: process 0 "
                                       "detected lower file system type %d for %s, which "
                                       "this process cannot use; force one with bbfs:ufs:",
                                       fstype, name);
}


/* A one-process handle's lower driver without ROMIO's detection, which
 * statfs()es the file's name: for a file not yet made, a lookup that waits
 * for the directory's lock behind the other processes' creates (files per
 * process in one directory), and with NFS built in, two reductions.  ROMIO
 * chooses the driver from the file system's magic (statfs's f_type) alone,
 * so the driver the last file in the same directory got fits the next one
 * on a file system of the same magic.  The open checks that on the opened
 * file (fstatfs: no lookup) and opens again in the rare case it does not
 * hold (a symbolic link or a mount point into another file system). */
#define GUESSES 4
static struct {
    char *dir;
    long f_type;                /* of the last file opened there */
    int fstype;                 /* ROMIO's driver for that magic */
    ADIOI_Fns *ops;
} guesses[GUESSES];
static int guesses_next;

/* Only drivers of mounted file systems have an fd_sys to fstatfs. */
static int guessable(int fstype)
{
    return fstype == ADIO_UFS || fstype == ADIO_NFS || fstype == ADIO_XFS
        || fstype == ADIO_LUSTRE || fstype == ADIO_GPFS || fstype == ADIO_PANFS;
}

/* @p path's directory: its length, and *dir where it starts ("." for a
 * name without one). */
static size_t dir_of(const char *path, const char **dir)
{
    const char *slash = strrchr(path, '/');
    *dir = slash ? path : ".";
    return !slash || slash == path ? 1 : (size_t) (slash - path);
}

static int guess_of(const char *path)
{
    const char *dir;
    size_t len = dir_of(path, &dir);

    for (int i = 0; i < GUESSES; i++)
        if (guesses[i].dir && strlen(guesses[i].dir) == len && !strncmp(guesses[i].dir, dir, len))
            return i;
    return -1;
}

/* (@p i: guess_of(path)) */
static void guess_keep(int i, const char *path, long f_type, int fstype, ADIOI_Fns * ops)
{
    if (i < 0) {
        const char *dir;
        size_t len = dir_of(path, &dir);
        i = guesses_next;
        guesses_next = (i + 1) % GUESSES;
        ADIOI_BBFS_FREE(guesses[i].dir);
        guesses[i].dir = ADIOI_Malloc(len + 1);
        memcpy(guesses[i].dir, dir, len);
        guesses[i].dir[len] = '\0';
    }
    guesses[i].f_type = f_type;
    guesses[i].fstype = fstype;
    guesses[i].ops = ops;
}

int ADIOI_BBFS_Lower_guess(const char *name, int *fstype, ADIOI_Fns ** ops, const char **path)
{
    const char *p = strip_prefix(name);
    int i = guess_of(p);

    if (i < 0)
        return 0;
    *fstype = guesses[i].fstype;
    *ops = guesses[i].ops;
    *path = p;
    return 1;
}

int ADIOI_BBFS_Lower_learn(ADIO_File lo, const char *name, int guessed, int *fstype,
                           ADIOI_Fns ** ops)
{
    const char *path = strip_prefix(name), *unused;
    struct statfs sb;
    ADIOI_Fns *found_ops;
    int i = guess_of(path), err = MPI_SUCCESS, found;

    if (!guessable(*fstype) || lo->fd_sys < 0 || fstatfs(lo->fd_sys, &sb) != 0)
        return 0;
    if (!guessed) {
        guess_keep(i, path, (long) sb.f_type, *fstype, *ops);
        return 0;
    }
    /* (fault point lower-guess: a guess taken as wrong, which the file
     * system of the tests cannot make, to test the second open) */
    int wrong = logfs_fault("lower-guess") != 0;
    if (i >= 0 && guesses[i].f_type == (long) sb.f_type && !wrong)
        return 0;
    /* The file exists now: ROMIO's detection finds it without waiting. */
    ADIOI_BBFS_Resolve_lower(name, &found, &found_ops, &unused, &err);
    if (err != MPI_SUCCESS)
        return 0;
    guess_keep(i, path, (long) sb.f_type, found, found_ops);
    wrong |= found != *fstype;
    *fstype = found;
    *ops = found_ops;
    return wrong;
}

/* (logfs_canonical_name: one rule for the driver and the tools) */
char *ADIOI_BBFS_Canonical_path(const char *path, int *linked)
{
    char name[PATH_MAX];
    int rc = logfs_canonical_name(path, name, sizeof name);

    *linked = rc == 1;
    return ADIOI_Strdup(rc < 0 ? path : name);
}
