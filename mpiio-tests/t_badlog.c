/* Bad input around the logs.  Each case gets an MPI error of the right class
 * with a message that names the problem, and nothing already synced is lost:
 *
 *   - bbfs_logdir that does not exist            MPI_ERR_NO_SUCH_FILE
 *   - log quota exhausted (bbfs_log_quota)        MPI_ERR_NO_SPACE, synced
 *                                                 bytes survive to the file
 *   - manifest with a different writer count      MPI_ERR_IO at replay
 *   - metalog with a flipped byte in the middle   MPI_ERR_IO at replay
 *   - metalog that lost its last epochs and its   MPI_ERR_IO at replay, unless
 *     seal (an old or truncated copy)             bbfs_salvage=true
 *   - an implausibly large manifest, for a name   MPI_ERR_IO on every process,
 *     that detects the lower driver and one that  no hang (process 0 reads it,
 *     forces it (bbfs:ufs:)                        the others wait for it)
 *   - bbfs_logdir the user may not write          MPI_ERR_ACCESS
 *
 * The file under test gets one plain write so the runner can compare it;
 * the cases use sibling files.  On ufs: only that write happens. */
#define _GNU_SOURCE
#include "testlib.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 32768

static MPI_Info hint(const char *k1, const char *v1, const char *k2, const char *v2)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (k1)
        MPI_Info_set(info, k1, v1);
    if (k2)
        MPI_Info_set(info, k2, v2);
    return info;
}

static void manifest_name(const char *path, char *out, size_t len)
{
    int n = tl_manifests(path, out, len);
    TL_CHECK(n == 1, "%d manifests for %s, expected the one of its pending logs", n, path);
}

static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    TL_CHECK(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *buf = malloc(*len + 1);
    TL_CHECK(fread(buf, 1, *len, f) == (size_t) * len, "short read of %s", path);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *buf, long len)
{
    FILE *f = fopen(path, "wb");
    TL_CHECK(f && fwrite(buf, 1, len, f) == (size_t) len, "cannot rewrite %s", path);
    fclose(f);
}

/* Write one block per rank with replay deferred: logs stay pending. */
static void write_pending(const char *name, int epochs)
{
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[BLOCK];
    MPI_Info info = hint("bbfs_replay", "never", NULL, NULL);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    MPI_Info_free(&info);
    for (int e = 0; e < epochs; e++) {
        tl_fill(buf, BLOCK, (long long) tl_rank * BLOCK, e);
        TL_MPI(MPI_File_write_at(fh, (MPI_Offset) tl_rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
        TL_MPI(MPI_File_sync(fh));
    }
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void expect_open_error(const char *name, int cls, const char *what, const char *says)
{
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    const char *msg = tl_expect_class(err, cls, what);
    TL_CHECK(strstr(msg, says) != NULL, "%s: message does not say '%s': %s", what, says, msg);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    const char *path = tl_path(name);
    char sib[4200], dir[4200], mpath[4200];
    MPI_File fh;
    MPI_Status st;
    MPI_Info info;
    unsigned char buf[2 * BLOCK], got[BLOCK];
    int err;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    tl_fill(buf, BLOCK, (long long) tl_rank * BLOCK, 1);
    TL_MPI(MPI_File_write_at_all(fh, (MPI_Offset) tl_rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    if (!tl_is_bbfs(name))
        return tl_finish();

    /* missing log directory */
    snprintf(dir, sizeof(dir), "%s.nologdir/deeper", path);
    tl_sibling(name, ".a", sib, sizeof(sib));
    info = hint("bbfs_logdir", dir, NULL, NULL);
    err = MPI_File_open(MPI_COMM_WORLD, sib, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    MPI_Info_free(&info);
    const char *msg = tl_expect_class(err, MPI_ERR_NO_SUCH_FILE, "missing bbfs_logdir");
    TL_CHECK(strstr(msg, "bbfs_logdir") && strstr(msg, dir), "message does not name "
             "bbfs_logdir %s: %s", dir, msg);

    /* quota: epoch 1 (32 KiB, synced) fits, a 64 KiB write does not */
    tl_sibling(name, ".quota", sib, sizeof(sib));
    info = hint("bbfs_log_quota", "48k", NULL, NULL);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, sib, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_Offset mine = (MPI_Offset) tl_rank * 3 * BLOCK;
    tl_fill(buf, BLOCK, mine, 2);
    TL_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(fh));
    err = MPI_File_write_at(fh, mine + BLOCK, buf, 2 * BLOCK, MPI_BYTE, &st);
    msg = tl_expect_class(err, MPI_ERR_NO_SPACE, "write beyond bbfs_log_quota");
    TL_CHECK(strstr(msg, "space"), "unclear message: %s", msg);
    TL_MPI(MPI_File_close(&fh));        /* replays what the logs hold */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, sib, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TL_MPI(MPI_File_read_at(fh, mine, got, BLOCK, MPI_BYTE, &st));
    tl_verify(got, BLOCK, mine, 2, "synced bytes after ENOSPC");
    TL_MPI(MPI_File_close(&fh));

    /* manifest that claims a different number of writers */
    tl_sibling(name, ".count", sib, sizeof(sib));
    write_pending(sib, 1);
    manifest_name(tl_path(sib), mpath, sizeof(mpath));
    long len = 0;
    char *orig = NULL;
    if (tl_rank == 0) {         /* only rank 0 reads it: it rewrites it at once */
        orig = slurp(mpath, &len);
        char *edited = malloc(len + 16), *w = strstr(orig, "writers ");
        TL_CHECK(w != NULL, "manifest has no writers line");
        int n = (int) (w - orig);
        int m = sprintf(edited, "%.*swriters %d%s", n, orig, tl_nprocs + 1,
                        strchr(w, '\n'));
        spit(mpath, edited, m);
        free(edited);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_open_error(sib, MPI_ERR_IO, "manifest with the wrong writer count", "manifest");
    if (tl_rank == 0)
        spit(mpath, orig, len);         /* put it back: delete cleans up */
    free(orig);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        TL_MPI(MPI_File_delete(sib, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);

    /* metalog corrupted in the middle (rank 0's, inside its first WRITE record) */
    tl_sibling(name, ".corrupt", sib, sizeof(sib));
    write_pending(sib, 3);
    if (tl_rank == 0) {
        char *man = slurp((manifest_name(tl_path(sib), mpath, sizeof(mpath)), mpath), &len);
        char ml[4200];
        TL_CHECK(sscanf(strstr(man, "writer 0 "), "writer 0 %*s %*s %4199s", ml) == 1,
                 "manifest names no metalog for writer 0");
        free(man);
        long mlen;
        char *bytes = slurp(ml, &mlen);
        /* The header record is 37 bytes (docs/log-format.md); byte 50 is in
         * the payload of the first WRITE record, which records follow. */
        TL_CHECK(mlen > 60, "metalog %s is only %ld bytes", ml, mlen);
        bytes[50] ^= 0x55;
        spit(ml, bytes, mlen);
        free(bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_open_error(sib, MPI_ERR_IO, "corrupt metalog", "corrupt");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        MPI_File_delete(sib, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a metalog cut back to 60 % with its seal gone: alone it reads as a
     * clean shorter log, but the manifest says how many epochs its writer
     * closed it with */
    tl_sibling(name, ".lost", sib, sizeof(sib));
    write_pending(sib, 3);
    if (tl_rank == 0) {
        int victim = tl_nprocs - 1;
        char *man = slurp((manifest_name(tl_path(sib), mpath, sizeof(mpath)), mpath), &len);
        char key[32], ml[4200], seal[4200];
        snprintf(key, sizeof(key), "writer %d ", victim);
        TL_CHECK(strstr(man, key) && sscanf(strstr(man, key) + strlen(key), "%*s %*s %4199s",
                                            ml) == 1, "manifest names no metalog for %s", key);
        free(man);
        long mlen;
        free(slurp(ml, &mlen));
        TL_CHECK(truncate(ml, mlen * 6 / 10) == 0, "truncate %s: %s", ml, strerror(errno));
        snprintf(seal, sizeof(seal), "%.*s.sealed", (int) (strlen(ml) - strlen(".metalog")), ml);
        TL_CHECK(unlink(seal) == 0, "unlink %s: %s", seal, strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_open_error(sib, MPI_ERR_IO, "metalog that lost epochs", "synced data is missing");
    info = hint("bbfs_salvage", "true", NULL, NULL);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, sib, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    TL_MPI(MPI_File_read_at(fh, 0, got, BLOCK, MPI_BYTE, &st));
    if (tl_nprocs > 1)          /* writer 0's log is whole: its last epoch stands */
        tl_verify(got, BLOCK, 0, 2, "rank 0's last epoch after salvage");
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        MPI_File_delete(sib, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    /* an implausibly large (sparse) manifest of pending logs: process 0
     * fails to read it, and every process must return, with either form of
     * the name (a forced lower driver once skipped the broadcast) */
    tl_sibling(name, ".huge", sib, sizeof(sib));
    {
        const char *p = tl_path(sib), *slash = strrchr(p, '/');
        char mdir[4200], forced[4300];
        snprintf(mdir, sizeof(mdir), "%.*s.%s.bbfs", (int) (slash - p + 1), p, slash + 1);
        snprintf(mpath, sizeof(mpath), "%s/00000000000000aa.manifest", mdir);
        if (tl_rank == 0) {
            TL_CHECK(mkdir(mdir, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", mdir,
                     strerror(errno));
            FILE *f = fopen(mpath, "w");
            TL_CHECK(f && truncate(mpath, 300L << 20) == 0, "cannot make %s", mpath);
            fclose(f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        snprintf(forced, sizeof(forced), "bbfs:ufs:%s", p);
        const char *says = tl_rank == 0 ? "implausibly large" : "process 0";
        expect_open_error(forced, MPI_ERR_IO, "huge manifest, bbfs:ufs:", says);
        expect_open_error(sib, MPI_ERR_IO, "huge manifest", says);
        MPI_Barrier(MPI_COMM_WORLD);
        if (tl_rank == 0) {
            unlink(mpath);
            rmdir(mdir);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* a log directory this user may not write (root ignores modes: drop it) */
    snprintf(dir, sizeof(dir), "%s.rologdir", path);
    if (tl_rank == 0)
        TL_CHECK(mkdir(dir, 0555) == 0 || errno == EEXIST, "mkdir %s: %s", dir,
                 strerror(errno));
    tl_sibling(name, ".ro", sib, sizeof(sib));
    if (tl_rank == 0) {             /* the canonical file must be creatable */
        FILE *f = fopen(tl_path(sib), "w");
        fclose(f);
        chmod(tl_path(sib), 0666);
        char d[4200];
        snprintf(d, sizeof(d), "%.*s", (int) (strrchr(path, '/') - path), path);
        chmod(d, 0777);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (geteuid() == 0)
        TL_CHECK(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0,
                 "cannot drop root privileges: %s", strerror(errno));
    info = hint("bbfs_logdir", dir, NULL, NULL);
    err = MPI_File_open(MPI_COMM_WORLD, sib, MPI_MODE_WRONLY, info, &fh);
    MPI_Info_free(&info);
    msg = tl_expect_class(err, MPI_ERR_ACCESS, "read-only bbfs_logdir");
    TL_CHECK(strstr(msg, "bbfs_logdir"), "message does not name bbfs_logdir: %s", msg);
    return tl_finish();
}
