/* A lazy session (several processes on one node, one log directory, no
 * server): a writer's log files wait for a byte that must reach them; the
 * manifest says "lazy", and a canary in the log directory says the
 * directory is the writers' (logfs/manifest.h, version 7).
 *
 * On bbfs, 4 processes (or more), one shared file:
 *   1. each process writes its own 4 KiB block: no log file exists in
 *      BBFS_LOGDIR, and neither the manifest nor the canary (the first
 *      process to make log files makes them);
 *   2. a barrier releases the writes (the default model, causal): every
 *      process that wrote has its files now, the manifest says "lazy",
 *      and one canary is there;
 *   3. the processes of odd rank write a second block; MPI_File_sync
 *      makes every writer's files;
 *   4. close, then a second session: processes 0 and 1 write, the others
 *      write nothing; a barrier (0 and 1 release: their files exist, the
 *      others' do not); then process 0 kills itself (SIGKILL), taking the
 *      job down.  The runner's bbfs-replay must take the missing logs for
 *      empty ones (the manifest says "lazy": nothing was synced), not fail
 *      on them, and leave the file as the first session made it (what the
 *      second wrote, released but never synced, is not promised).
 *      Before that, process 2 (which wrote nothing) leaves an empty
 *      metalog under its writer's name, as a writer killed while it made
 *      its files leaves one (the header comes after the files): the
 *      replay must take it for an empty log too.
 * On ufs: (the reference) the first session's writes, and a normal end.
 * Across nodes no session is lazy: the test checks instead that every
 * writer has its logs from the open on (and the rest as above). */
#include "testlib.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLK 4096

static const char *test_file;  /* (the name under test) */

/* The open session's file id, from its manifest's name (a log directory
 * a node's tests share may hold other sessions' logs too). */
static void session_id(char *id, size_t len)
{
    char path[4096];
    TL_CHECK(tl_manifests(tl_path(test_file), path, sizeof(path)) == 1,
             "expected one manifest of %s", tl_path(test_file));
    const char *base = strrchr(path, '/');
    snprintf(id, len, "%.16s", base ? base + 1 : path);
}

/* This session's log files in the log directory of writer rank (its rank
 * tag: "<file id>.<rank>."), or of every writer with rank < 0. */
static int logs_of(int rank)
{
    const char *dir = getenv("BBFS_LOGDIR");
    char tag[64], id[32];
    int n = 0;
    struct dirent *e;
    DIR *d;

    TL_CHECK(dir != NULL, "BBFS_LOGDIR is not set (the runner sets it)");
    TL_CHECK((d = opendir(dir)) != NULL, "cannot list %s", dir);
    session_id(id, sizeof(id));
    if (rank < 0)
        snprintf(tag, sizeof(tag), ".%s.", id);
    else
        snprintf(tag, sizeof(tag), ".%s.%d.", id, rank);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        int log = l > 6 && (!strcmp(e->d_name + l - 4, "alog")       /* (meta-, data-) */
                            || !strcmp(e->d_name + l - 6, "sealed"));
        n += log && strstr(e->d_name, tag) != NULL;
    }
    closedir(d);
    return n;
}

/* Log files of any session of the file (named after its base name). */
static int logs_of_file(void)
{
    const char *dir = getenv("BBFS_LOGDIR"), *path = tl_path(test_file);
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    int n = 0;
    struct dirent *e;
    DIR *d;

    TL_CHECK(dir != NULL, "BBFS_LOGDIR is not set (the runner sets it)");
    TL_CHECK((d = opendir(dir)) != NULL, "cannot list %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        int log = l > 6 && (!strcmp(e->d_name + l - 4, "alog")
                            || !strcmp(e->d_name + l - 6, "sealed"));
        n += log && !strncmp(e->d_name, base, strlen(base));
    }
    closedir(d);
    return n;
}

/* The lazy sessions' canaries in the log directory (logfs/manifest.h). */
static int canaries(void)
{
    const char *dir = getenv("BBFS_LOGDIR");
    int n = 0;
    struct dirent *e;
    DIR *d = opendir(dir);

    TL_CHECK(d != NULL, "cannot list %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        n += l > 5 && !strcmp(e->d_name + l - 5, ".lazy");
    }
    closedir(d);
    return n;
}

/* Whether the one manifest of the file says "lazy". */
static int manifest_lazy(const char *name)
{
    char path[4096], line[256];
    int lazy = 0;

    TL_CHECK(tl_manifests(tl_path(name), path, sizeof(path)) == 1,
             "expected one manifest of %s", tl_path(name));
    FILE *f = fopen(path, "r");
    TL_CHECK(f != NULL, "cannot read the manifest %s", path);
    while (fgets(line, sizeof(line), f))
        lazy |= !strcmp(line, "lazy\n");
    fclose(f);
    return lazy;
}

static void write_block(MPI_File fh, int block, int tag)
{
    unsigned char buf[BLK];
    tl_fill(buf, BLK, (long long) block * BLK, tag);
    TL_MPI(MPI_File_write_at(fh, (MPI_Offset) block * BLK, buf, BLK, MPI_BYTE,
                             MPI_STATUS_IGNORE));
}


int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int P = tl_nprocs, r = tl_rank;
    test_file = name;
    /* (across nodes a session is not lazy: every writer makes its logs at
     * open, and each node's log directory holds only its own writers') */
    int one = tl_one_host(), bbfs = tl_is_bbfs(name), lazy = bbfs && one;
    MPI_File fh;

    TL_CHECK(P >= 4, "t_lazy needs 4 processes or more");
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    write_block(fh, r, 1);
    if (bbfs && !one)
        TL_CHECK(logs_of(r) == 3, "across nodes, process %d has %d log files after its open, "
                 "not 3", r, logs_of(r));
    if (lazy) {
        /* (any MPI call that sends releases the writes: the others wait in a
         * receive, which does not, while process 0 looks) */
        char m[4096];
        int token = 0;
        if (r == 0) {
            TL_CHECK(logs_of_file() == 0, "%d log files before anything needed them",
                     logs_of_file());
            TL_CHECK(tl_manifests(tl_path(name), m, sizeof(m)) == 0, "a manifest (%s) before "
                     "any log file", m);
            TL_CHECK(canaries() == 0, "%d canaries before any log file", canaries());
            for (int q = 1; q < P; q++)
                TL_MPI(MPI_Send(&token, 1, MPI_INT, q, 0, MPI_COMM_WORLD));
        } else
            TL_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    TL_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (bbfs)
        TL_CHECK(logs_of(r) == 3, "process %d released its write at the barrier, and has %d log "
                 "files (not 3)", r, logs_of(r));
    if (lazy && r == 0) {
        TL_CHECK(manifest_lazy(name), "the manifest of a lazy session does not say so");
        TL_CHECK(canaries() == 1, "%d canaries in the log directory, not 1", canaries());
    }
    if (r % 2)
        write_block(fh, P + r, 2);
    TL_MPI(MPI_File_sync(fh));
    if (lazy)
        TL_CHECK(logs_of(-1) == 3 * P, "after the sync %d log files, not %d", logs_of(-1), 3 * P);
    /* what every process reads back: its neighbour's first block */
    unsigned char got[BLK];
    TL_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TL_MPI(MPI_File_read_at(fh, (MPI_Offset) ((r + 1) % P) * BLK, got, BLK, MPI_BYTE,
                            MPI_STATUS_IGNORE));
    tl_verify(got, BLK, (long long) ((r + 1) % P) * BLK, 1, "the next process's block");
    TL_MPI(MPI_File_close(&fh));

    /* a second session, killed before any sync (so it promised nothing:
     * the reference has none of its writes) */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (r < 2 && bbfs)
        write_block(fh, 2 * P + r, 3);
    TL_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (bbfs) {
        TL_CHECK(logs_of(r) == (r < 2 || !one ? 3 : 0), "process %d has %d log files after the "
                 "barrier", r, logs_of(r));
        if (r == 2 && one) {
            const char *path = tl_path(name), *slash = strrchr(path, '/');
            char id[32], metalog[8192];
            session_id(id, sizeof(id));
            snprintf(metalog, sizeof(metalog), "%s/%s.%s.2.metalog", getenv("BBFS_LOGDIR"),
                     slash ? slash + 1 : path, id);
            FILE *f = fopen(metalog, "w");
            TL_CHECK(f != NULL, "cannot make %s", metalog);
            fclose(f);
        }
        TL_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (r == 0) {
            printf("t_lazy: process 0 kills itself, with 2 of %d writers' logs made\n", P);
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        sleep(60);
        tl_fail(__FILE__, __LINE__, "still alive after process 0 was killed");
    }
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
