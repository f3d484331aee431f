/* Hints: MPI_File_get_info shows the bbfs hints in force (defaults and given
 * values, next to ROMIO's own); every bad value is MPI_ERR_INFO_VALUE naming
 * the hint; ranks that disagree get MPI_ERR_NOT_SAME; set_info may change
 * only what can change after open.  On a non-bbfs name the same opens
 * succeed and show no bbfs keys. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

static int open_with(const char *name, const char *key, const char *value, int amode,
                     MPI_File * fh)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (key)
        MPI_Info_set(info, key, value);
    int err = MPI_File_open(MPI_COMM_WORLD, name, amode, info, fh);
    MPI_Info_free(&info);
    return err;
}

static void bad_hint(const char *name, int bbfs, const char *key, const char *value,
                     const char *must_mention)
{
    MPI_File fh;
    int err = open_with(name, key, value, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh);
    if (!bbfs) {                /* other drivers ignore unknown keys */
        TL_MPI(err);
        TL_MPI(MPI_File_close(&fh));
        return;
    }
    const char *msg = tl_expect_class(err, MPI_ERR_INFO_VALUE, key);
    TL_CHECK(strstr(msg, key) != NULL, "error for %s does not name it: %s", key, msg);
    TL_CHECK(strstr(msg, must_mention) != NULL, "error for %s=%s does not say '%s': %s", key,
             value, must_mention, msg);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int bbfs = tl_is_bbfs(name);
    char scratch[4096];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    char c = 'x';

    tl_sibling(name, ".scratch", scratch, sizeof(scratch));

    /* defaults */
    TL_MPI(open_with(name, NULL, NULL, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh));
    const char *logdir = getenv("BBFS_LOGDIR");
    if (!logdir || !*logdir)
        logdir = getenv("TMPDIR");
    if (!logdir || !*logdir)
        logdir = "/tmp";
    tl_expect_info(fh, "bbfs_consistency", bbfs ? "causal" : NULL);
    tl_expect_info(fh, "bbfs_replay", bbfs ? "on_close" : NULL);
    tl_expect_info(fh, "bbfs_buffer_size", bbfs ? "4194304" : NULL);
    tl_expect_info(fh, "bbfs_durable", bbfs ? "false" : NULL);
    tl_expect_info(fh, "bbfs_server", bbfs ? "auto" : NULL);
    tl_expect_info(fh, "bbfs_logdir", bbfs ? logdir : NULL);
    tl_expect_info(fh, "bbfs_log_quota", bbfs ? "0" : NULL);
    tl_expect_info(fh, "bbfs_progress", bbfs ? "false" : NULL);
    tl_expect_info(fh, "bbfs_salvage", bbfs ? "false" : NULL);
    tl_expect_info(fh, "bbfs_timing", bbfs ? "false" : NULL);
    tl_expect_info(fh, "bbfs_replay_buffer", bbfs ? "1048576" : NULL);
    tl_expect_info(fh, "cb_buffer_size", "16777216");
    if (bbfs) {
        /* set_info: durability may change, the log directory may not */
        MPI_Info_create(&info);
        MPI_Info_set(info, "bbfs_durable", "true");
        TL_MPI(MPI_File_set_info(fh, info));
        tl_expect_info(fh, "bbfs_durable", "true");
        MPI_Info_set(info, "bbfs_logdir", "/somewhere/else");
        const char *msg = tl_expect_class(MPI_File_set_info(fh, info), MPI_ERR_INFO_VALUE,
                                          "set_info bbfs_logdir");
        TL_CHECK(strstr(msg, "only be given at MPI_File_open"), "unclear message: %s", msg);
        tl_expect_info(fh, "bbfs_logdir", logdir);
        MPI_Info_free(&info);
    }
    if (tl_rank == 0)
        TL_MPI(MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, &st));
    TL_MPI(MPI_File_close(&fh));

    /* given values, mixed with a ROMIO hint */
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_consistency", "session");
    MPI_Info_set(info, "bbfs_buffer_size", "64k");
    MPI_Info_set(info, "bbfs_durable", "true");
    MPI_Info_set(info, "bbfs_logdir", "/var/tmp");
    MPI_Info_set(info, "bbfs_replay", "never");
    MPI_Info_set(info, "bbfs_replay_buffer", "256k");
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, scratch, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    tl_expect_info(fh, "bbfs_consistency", bbfs ? "session" : TL_FOREIGN_HINT("session"));
    tl_expect_info(fh, "bbfs_buffer_size", bbfs ? "65536" : TL_FOREIGN_HINT("64k"));
    tl_expect_info(fh, "bbfs_durable", bbfs ? "true" : TL_FOREIGN_HINT("true"));
    tl_expect_info(fh, "bbfs_logdir", bbfs ? "/var/tmp" : TL_FOREIGN_HINT("/var/tmp"));
    tl_expect_info(fh, "bbfs_replay", bbfs ? "never" : TL_FOREIGN_HINT("never"));
    tl_expect_info(fh, "bbfs_replay_buffer", bbfs ? "262144" : TL_FOREIGN_HINT("256k"));
    tl_expect_info(fh, "cb_buffer_size", "1048576");
    if (bbfs) {
        MPI_Info i2;
        TL_MPI(MPI_File_get_info(fh, &i2));
        char v[MPI_MAX_INFO_VAL + 1];
        int flag;
        MPI_Info_get(i2, "bbfs_lower_filesystem_type", MPI_MAX_INFO_VAL, v, &flag);
        TL_CHECK(flag && strstr(v, "UFS"), "lower driver not shown (flag %d, '%s')", flag,
                 flag ? v : "");
        MPI_Info_free(&i2);
    }
    TL_MPI(MPI_File_close(&fh));

    /* unique open: drained in the background by default (docs/drain.md),
     * on one node and on several */
    TL_MPI(open_with(scratch, NULL, NULL, MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN, &fh));
    tl_expect_info(fh, "bbfs_replay", !bbfs ? NULL : "background");
    TL_MPI(MPI_File_close(&fh));

    /* bad values */
    bad_hint(scratch, bbfs, "bbfs_consistency", "strong", "mpiio|session|commit|posix");
    bad_hint(scratch, bbfs, "bbfs_replay", "sometimes", "on_close|on_read_open|never");
    bad_hint(scratch, bbfs, "bbfs_buffer_size", "12q", "bytes");
    bad_hint(scratch, bbfs, "bbfs_replay_buffer", "1k", "between 64k and 1g");
    bad_hint(scratch, bbfs, "bbfs_buffer_size", "1", "between");
    bad_hint(scratch, bbfs, "bbfs_durable", "maybe", "true|false");
    bad_hint(scratch, bbfs, "bbfs_logdir", "relative/dir", "absolute");
    bad_hint(scratch, bbfs, "bbfs_logdir", "/ssd/../etc", "no . or ..");
    bad_hint(scratch, bbfs, "bbfs_consistancy", "mpiio", "unknown bbfs hint");
    bad_hint(scratch, bbfs, "bbfs_log_quota", "lots", "bytes");
    bad_hint(scratch, bbfs, "bbfs_log_quota", "2000000g", "between 0");
    /* sizes that overflow 64 bits when scaled are refused, not wrapped */
    bad_hint(scratch, bbfs, "bbfs_log_quota", "18014398509481984g", "bytes");
    bad_hint(scratch, bbfs, "bbfs_buffer_size", "18446744073709551615k", "bytes");
    bad_hint(scratch, bbfs, "bbfs_salvage", "yes please", "true|false");
    bad_hint(scratch, bbfs, "bbfs_timing", "1", "true|false");

    /* ranks that disagree */
    int err = open_with(scratch, "bbfs_consistency", tl_rank == 0 ? "posix" : "commit",
                        MPI_MODE_RDWR, &fh);
    if (bbfs && tl_nprocs > 1)
        tl_expect_class(err, MPI_ERR_NOT_SAME, "hints that differ between ranks");
    else {
        TL_MPI(err);
        TL_MPI(MPI_File_close(&fh));
    }
    return tl_finish();
}
