/* Everything MPI_File_get_info returns is accepted back: by MPI_File_open
 * and by MPI_File_set_info, whole or key by key, and it shows the same
 * values again.  PnetCDF reopens files with the info it got from
 * get_info, and mpi4py's File.Set_info(File.Get_info()) does the same.
 * A misspelt bbfs_ key in such an info is still an error.  Runs on every
 * driver variant (and on ufs:, where it holds as well). */
#include "testlib.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Every key of `want` is in `have` with the same value; with `reopened`,
 * but for bbfs_map_server, which is not a hint but what this handle found
 * at its open: a map server, or "unconnected" for a read-only handle that
 * connects at its first need where its open found no other session of the
 * file.  Across nodes, an open right after a close can still find the
 * closed handle's session on its way out (a cold CI run did, once), and
 * the next open does not. */
static void expect_superset(MPI_Info have, MPI_Info want, int reopened, const char *what)
{
    char key[MPI_MAX_INFO_KEY + 1], v1[MPI_MAX_INFO_VAL + 1], v2[MPI_MAX_INFO_VAL + 1];
    int nkeys, flag;

    MPI_Info_get_nkeys(want, &nkeys);
    for (int k = 0; k < nkeys; k++) {
        MPI_Info_get_nthkey(want, k, key);
        if (reopened && !strcmp(key, "bbfs_map_server"))
            continue;
        MPI_Info_get(want, key, MPI_MAX_INFO_VAL, v1, &flag);
        MPI_Info_get(have, key, MPI_MAX_INFO_VAL, v2, &flag);
        TL_CHECK(flag, "%s: key %s=%s is gone", what, key, v1);
        TL_CHECK(!strcmp(v1, v2), "%s: key %s was %s, now %s", what, key, v1, v2);
    }
}

static MPI_Info info_of(MPI_File fh)
{
    MPI_Info info;
    TL_MPI(MPI_File_get_info(fh, &info));
    return info;
}

static int nkeys_of(MPI_Info info)
{
    int n;
    MPI_Info_get_nkeys(info, &n);
    return n;
}

/* Open `name` with `amode` and the given hints, then take its info round
 * every door.  Returns how many keys get_info showed. */
static int round_trip(const char *name, int amode, MPI_Info given, const char *what)
{
    char key[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1], msg[256];
    MPI_File fh;
    MPI_Info first, again, one;
    int nkeys, flag;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode, given, &fh));
    first = info_of(fh);
    nkeys = nkeys_of(first);

    /* set_info with the whole info, on the same handle */
    snprintf(msg, sizeof(msg), "%s: set_info(get_info)", what);
    TL_MPI(MPI_File_set_info(fh, first));
    again = info_of(fh);
    expect_superset(again, first, 0, msg);
    MPI_Info_free(&again);

    /* set_info key by key */
    for (int k = 0; k < nkeys; k++) {
        MPI_Info_get_nthkey(first, k, key);
        MPI_Info_get(first, key, MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_create(&one);
        MPI_Info_set(one, key, v);
        int err = MPI_File_set_info(fh, one);
        MPI_Info_free(&one);
        snprintf(msg, sizeof(msg), "%s: set_info of %s=%s alone", what, key, v);
        if (err != MPI_SUCCESS)
            tl_fail_mpi(msg, err, __FILE__, __LINE__);
    }
    TL_MPI(MPI_File_close(&fh));

    /* a new open with the whole info, as PnetCDF reopens */
    snprintf(msg, sizeof(msg), "%s: open(get_info)", what);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode & ~MPI_MODE_EXCL, first, &fh));
    again = info_of(fh);
    expect_superset(again, first, 1, msg);
    MPI_Info_free(&again);
    TL_MPI(MPI_File_close(&fh));

    /* a new open with each key alone */
    for (int k = 0; k < nkeys; k++) {
        MPI_Info_get_nthkey(first, k, key);
        MPI_Info_get(first, key, MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_create(&one);
        MPI_Info_set(one, key, v);
        int err = MPI_File_open(MPI_COMM_WORLD, name, amode & ~MPI_MODE_EXCL, one, &fh);
        MPI_Info_free(&one);
        snprintf(msg, sizeof(msg), "%s: open with %s=%s alone", what, key, v);
        if (err != MPI_SUCCESS)
            tl_fail_mpi(msg, err, __FILE__, __LINE__);
        if (!strncmp(key, "bbfs_", 5) && strcmp(key, "bbfs_lower_filesystem_type") != 0
            && strcmp(key, "bbfs_map_server") != 0)
            tl_expect_info(fh, key, v);
        TL_MPI(MPI_File_close(&fh));
    }

    /* a misspelt bbfs_ hint among good ones is still an error */
    if (tl_is_bbfs(name)) {
        MPI_Info_set(first, "bbfs_consistensy", "posix");
        tl_expect_class(MPI_File_open(MPI_COMM_WORLD, name, amode & ~MPI_MODE_EXCL, first, &fh),
                        MPI_ERR_INFO_VALUE, "a misspelt hint in a round-tripped info");
    }
    MPI_Info_free(&first);
    return nkeys;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int bbfs = tl_is_bbfs(name);
    MPI_Info given;
    MPI_File fh;
    MPI_Status st;
    char c = 'r';

    /* the file exists and holds a byte before the read-only rounds */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    if (tl_rank == 0)
        TL_MPI(MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, &st));
    TL_MPI(MPI_File_close(&fh));

    int n = round_trip(name, MPI_MODE_RDWR, MPI_INFO_NULL, "defaults");
    TL_CHECK(!bbfs || n >= 12, "get_info showed only %d keys on bbfs", n);

    MPI_Info_create(&given);
    MPI_Info_set(given, "bbfs_consistency", "commit");
    MPI_Info_set(given, "bbfs_replay", "on_close");
    MPI_Info_set(given, "bbfs_buffer_size", "64k");
    MPI_Info_set(given, "bbfs_durable", "true");
    MPI_Info_set(given, "bbfs_replay_buffer", "128k");
    MPI_Info_set(given, "bbfs_log_quota", "1g");
    MPI_Info_set(given, "bbfs_progress", "false");
    MPI_Info_set(given, "bbfs_salvage", "false");
    MPI_Info_set(given, "bbfs_timing", "true");
    MPI_Info_set(given, "cb_buffer_size", "1048576");
    MPI_Info_set(given, "romio_cb_write", "enable");
    MPI_Info_set(given, "romio_ds_read", "disable");
    round_trip(name, MPI_MODE_RDWR, given, "given hints");
    MPI_Info_free(&given);

    round_trip(name, MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN, MPI_INFO_NULL, "unique open");
    round_trip(name, MPI_MODE_RDONLY, MPI_INFO_NULL, "read-only");
    return tl_finish();
}
