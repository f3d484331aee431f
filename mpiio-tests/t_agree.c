/* Collective calls where each process's own state differs: every process
 * must still take the same path, or one waits forever in a collective call
 * the others skipped.  Each case hung, or read wrong data, before:
 *
 *   append  MPI_MODE_APPEND opens ROMIO's shared-pointer file on process 0
 *           only; a logged collective write (at an explicit offset and at
 *           the individual pointer) then synchronised process 0 alone.
 *   mixed   PnetCDF's processes with nothing to write after an error call
 *           write_all (of nothing) in the collective call where the others
 *           call write_at_all; a barrier kept for explicit-offset calls
 *           only (ROMIO's ordered calls are such) ran on some processes.
 *   live    a read-only handle reads through the logs while another
 *           handle's session is live, as each process last found: process
 *           0 looked (MPI_File_get_size) while its one-process handle was
 *           open, the others after that handle's close replayed it; the
 *           collective read then went through the logs on process 0 and
 *           through the lower file's collective read elsewhere.
 *   remote  BBFS_FORCE_REMOTE on process 0 only, at a read-only open that
 *           replays pending logs: process 0's replay exchanged its rounds
 *           over MPI, the others read the logs directly.
 *   nul     manifests of two pending sessions with NUL bytes after their
 *           text (a file system can leave a zero-filled tail after a
 *           crash): process 0 read each to its first NUL but broadcast its
 *           whole length, so the others split the texts elsewhere, failed
 *           to parse the second, and left process 0 alone in the replay.
 *   atomic  atomic mode off again after it ran beside another live handle
 *           (the logs stay then, under posix): the writes it made, visible
 *           as they returned, went out of sight again under mpiio, and a
 *           read of another process's record found none.  (That branch also
 *           looked at an error code MPI_File_set_atomicity leaves unset.)
 *
 * Each case checks what it reads; the runner compares the first file
 * (append) with ufs:'s.  T_AGREE_ONLY=append (live, remote, nul) runs one
 * case alone. */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC 4096

static void append_case(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[REC], got[REC];

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR
                         | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    tl_fill(buf, REC, (long long) tl_rank * REC, 1);
    TL_MPI(MPI_File_write_at_all(fh, (MPI_Offset) tl_rank * REC, buf, REC, MPI_BYTE, &st));
    MPI_Offset second = (MPI_Offset) (tl_nprocs + tl_rank) * REC;
    TL_MPI(MPI_File_seek(fh, second, MPI_SEEK_SET));
    tl_fill(buf, REC, (long long) second, 1);
    TL_MPI(MPI_File_write_all(fh, buf, REC, MPI_BYTE, &st));
    /* (its own record: the next process's is not visible yet under session) */
    tl_sync_barrier_sync(fh);
    TL_MPI(MPI_File_read_at_all(fh, (MPI_Offset) tl_rank * REC, got, REC, MPI_BYTE, &st));
    tl_verify(got, REC, (long long) tl_rank * REC, 1, "append: its own first record");
    TL_MPI(MPI_File_close(&fh));
}

/* One collective call, made with write_at_all by most processes and with
 * write_all of nothing by one (PnetCDF's processes whose request failed
 * take part that way); and so for reads. */
static void mixed_case(const char *name)
{
    char file[4096];
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[REC];
    int idle = tl_nprocs > 1 ? 1 : -1;

    tl_sibling(name, ".mixed", file, sizeof(file));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    for (int round = 0; round < 2; round++) {
        MPI_Offset at = (MPI_Offset) (round * tl_nprocs + tl_rank) * REC;
        tl_fill(buf, REC, (long long) at, 6);
        if (tl_rank == idle)
            TL_MPI(MPI_File_write_all(fh, NULL, 0, MPI_BYTE, &st));
        else
            TL_MPI(MPI_File_write_at_all(fh, at, buf, REC, MPI_BYTE, &st));
    }
    tl_sync_barrier_sync(fh);
    MPI_Offset at = (MPI_Offset) (tl_nprocs + tl_rank) * REC;
    if (tl_rank == idle)
        TL_MPI(MPI_File_read_all(fh, NULL, 0, MPI_BYTE, &st));
    else {
        TL_MPI(MPI_File_read_at_all(fh, at, buf, REC, MPI_BYTE, &st));
        tl_verify(buf, REC, (long long) at, 6, "mixed: its own record");
    }
    TL_MPI(MPI_File_close(&fh));
}

static void live_case(const char *name)
{
    char file[4096];
    MPI_File mine = MPI_FILE_NULL, all;
    MPI_Status st;
    MPI_Offset size;
    unsigned char buf[REC];

    tl_sibling(name, ".live", file, sizeof(file));
    if (tl_rank == 0) {
        TL_MPI(MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                             MPI_INFO_NULL, &mine));
        tl_fill(buf, REC, 0, 2);
        TL_MPI(MPI_File_write_at(mine, 0, buf, REC, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &all));
    if (tl_rank == 0) {
        TL_MPI(MPI_File_get_size(all, &size));        /* looks while the session lives */
        TL_MPI(MPI_File_close(&mine));  /* the last session: replays */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_get_size(all, &size));    /* the others look after the replay */
    TL_CHECK(size == REC, "live: size %lld after the writer's close, not %d",
             (long long) size, REC);
    memset(buf, 0, REC);
    TL_MPI(MPI_File_read_at_all(all, 0, buf, REC, MPI_BYTE, &st));
    tl_verify(buf, REC, 0, 2, "live: the closed handle's record");
    TL_MPI(MPI_File_close(&all));
}

/* Hints for a handle whose close leaves its logs pending (on bbfs), for a
 * later open to replay. */
static MPI_Info replay_never(const char *name)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (tl_is_bbfs(name))
        MPI_Info_set(info, "bbfs_replay", "never");
    return info;
}

static void remote_case(const char *name)
{
    char file[4096];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    unsigned char buf[REC];
    int bbfs = tl_is_bbfs(name);

    tl_sibling(name, ".remote", file, sizeof(file));
    info = replay_never(name);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    MPI_Info_free(&info);
    tl_fill(buf, REC, (long long) tl_rank * REC, 3);
    TL_MPI(MPI_File_write_at(fh, (MPI_Offset) tl_rank * REC, buf, REC, MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    if (bbfs && tl_rank == 0)
        TL_CHECK(tl_manifests(tl_path(file), NULL, 0) == 1, "remote: no pending logs to replay");
    if (tl_rank == 0)
        setenv("BBFS_FORCE_REMOTE", "1", 1);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (tl_rank == 0)
        unsetenv("BBFS_FORCE_REMOTE");
    int peer = (tl_rank + 1) % tl_nprocs;
    TL_MPI(MPI_File_read_at_all(fh, (MPI_Offset) peer * REC, buf, REC, MPI_BYTE, &st));
    tl_verify(buf, REC, (long long) peer * REC, 3, "remote: the next process's record");
    TL_MPI(MPI_File_close(&fh));
    if (bbfs && tl_rank == 0)
        TL_CHECK(tl_manifests(tl_path(file), NULL, 0) == 0, "remote: logs left after the replay");
}

static void atomic_case(const char *name)
{
    char file[4096];
    MPI_File fh, other;
    MPI_Status st;
    unsigned char buf[REC];

    tl_sibling(name, ".atomic", file, sizeof(file));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR, MPI_INFO_NULL, &other));
    for (int round = 0; round < 2; round++) {
        MPI_Offset at = (MPI_Offset) (round * tl_nprocs + tl_rank) * REC;
        /* beside a live handle: the logs stay, under posix meanwhile */
        TL_MPI(MPI_File_set_atomicity(fh, 1));
        tl_fill(buf, REC, (long long) at, 5);
        TL_MPI(MPI_File_write_at_all(fh, at, buf, REC, MPI_BYTE, &st));
        TL_MPI(MPI_File_set_atomicity(fh, 0));
    }
    TL_MPI(MPI_File_close(&other));
    /* (under session, others' writes show after the close only) */
    char model[MPI_MAX_INFO_VAL + 1] = "";
    int session = tl_info_get(fh, "bbfs_consistency", model) && !strcmp(model, "session");
    int from = session ? tl_rank : (tl_rank + 1) % tl_nprocs;
    TL_MPI(MPI_File_read_at_all(fh, (MPI_Offset) (tl_nprocs + from) * REC, buf, REC, MPI_BYTE,
                                &st));
    tl_verify(buf, REC, (long long) (tl_nprocs + from) * REC, 5,
              "atomic: a record written in atomic mode");
    TL_MPI(MPI_File_close(&fh));
}

/* Append NUL bytes to a manifest. */
static void pad_manifest(const char *manifest, void *arg)
{
    FILE *f = fopen(manifest, "ab");
    (void) arg;
    TL_CHECK(f && fwrite("\0\0\0\0\0\0\0\0", 1, 8, f) == 8 && fclose(f) == 0,
             "nul: cannot append to %s", manifest);
}

static void nul_case(const char *name)
{
    char file[4096];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    unsigned char buf[REC];
    int bbfs = tl_is_bbfs(name);

    tl_sibling(name, ".nul", file, sizeof(file));
    info = replay_never(name);
    /* (two handles open at once: an open replays the sessions pending
     * before it) */
    MPI_File two[2];
    for (int session = 0; session < 2; session++)
        TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_WRONLY, info,
                             &two[session]));
    for (int session = 0; session < 2; session++) {
        MPI_Offset at = (MPI_Offset) (session * tl_nprocs + tl_rank) * REC;
        tl_fill(buf, REC, (long long) at, 4);
        TL_MPI(MPI_File_write_at(two[session], at, buf, REC, MPI_BYTE, &st));
        TL_MPI(MPI_File_close(&two[session]));
    }
    MPI_Info_free(&info);
    if (bbfs && tl_rank == 0)
        TL_CHECK(tl_each_manifest(tl_path(file), pad_manifest, NULL) == 2,
                 "nul: not 2 pending sessions");
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int session = 0; session < 2; session++) {
        MPI_Offset at = (MPI_Offset) (session * tl_nprocs + (tl_rank + 1) % tl_nprocs) * REC;
        TL_MPI(MPI_File_read_at_all(fh, at, buf, REC, MPI_BYTE, &st));
        tl_verify(buf, REC, (long long) at, 4, "nul: a record of the padded sessions");
    }
    TL_MPI(MPI_File_close(&fh));
    if (bbfs && tl_rank == 0)
        TL_CHECK(tl_manifests(tl_path(file), NULL, 0) == 0, "nul: logs left after the replay");
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);

    /* T_AGREE_ONLY=CASE runs one case (to see each fail on its own) */
    const char *only = getenv("T_AGREE_ONLY");
#define CASE(c) if (!only || !strcmp(only, #c)) c##_case(name)
    CASE(append);
    CASE(mixed);
    CASE(live);
    CASE(remote);
    CASE(nul);
    CASE(atomic);
#undef CASE
    return tl_finish();
}
