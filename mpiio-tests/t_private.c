/* Private sessions: a handle one process opened keeps its logs in memory,
 * with no manifest, until something needs them (ad_bbfs_private.c).
 *
 * Part 1, a file per process on MPI_COMM_SELF: writes that overlap, a
 *         set_size that cuts them, a write past it; reads of its own
 *         writes before the close; no log file and no manifest exist while
 *         it is open; a read-only open after the close sees the file whole.
 * Part 2, a release publishes: after a write and a barrier (a release under
 *         the default causal model) the session has its manifest and logs,
 *         and the next process, opening the file on its own, reads what was
 *         written before the barrier (alone, the process opens its own
 *         file a second time: the first handle's session is published).
 * Part 3, a sync publishes; a write larger than the log buffer publishes.
 * Part 4, memory stays flat: 1000 more private open, write, close
 *         cycles leave the heap in use within 64 KiB of what as many
 *         cycles on ufs: (the MPI library alone) leave it (each close
 *         leaked its parse of no manifests: 296 bytes).
 * Part 5, a private close replays in rounds: 40 blocks of 8 KiB, written
 *         last first, one overwritten, replayed with bbfs_replay_buffer
 *         64 KiB (several rounds, straight from memory: ad_bbfs_replay.c,
 *         solo).
 * Part 6, the file the runner compares: each process's block, written
 *         through a handle of all processes (private with one process).
 */
#include "testlib.h"
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOCK 8192

static int bbfs;

/* Log files of file path in BBFS_LOGDIR: NAME.<id>.<rank>.{meta,data}log. */
static int logs_of(const char *path)
{
    const char *dir = getenv("BBFS_LOGDIR"), *base = strrchr(path, '/');
    int n = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;

    base = base ? base + 1 : path;
    size_t l = strlen(base);
    while (d && (e = readdir(d))) {
        const char *id = e->d_name + l;
        n += strncmp(e->d_name, base, l) == 0 && id[0] == '.'
            && strspn(id + 1, "0123456789abcdef") == 16 && id[17] == '.';
    }
    if (d)
        closedir(d);
    return n;
}

/* Whether handles of files of their own may be private here: not where
 * a server holds their map (a job on several nodes), whose reads of what
 * a process released go through it; this part of the test is then moot
 * (the data is checked all the same). */
static int private_here;

static void expect_published(const char *name, int want, const char *when)
{
    char m[4096];
    if (!bbfs || !private_here)
        return;
    int manifests = tl_manifests(tl_path(name), m, sizeof(m)), logs = logs_of(tl_path(name));
    if (want) {
        TL_CHECK(manifests == 1, "%s: %d manifests of %s, want 1 (published)", when, manifests,
                 name);
        TL_CHECK(logs >= 2, "%s: %d log files of %s, want its logs (published)", when, logs,
                 name);
    } else {
        TL_CHECK(manifests == 0, "%s: %d manifests of %s, want none (private)", when, manifests,
                 name);
        TL_CHECK(logs == 0, "%s: %d log files of %s, want none (private)", when, logs, name);
    }
}

static void put(MPI_File fh, MPI_Offset off, int len, int tag)
{
    unsigned char *buf = malloc(len);
    tl_fill(buf, len, off, tag);
    TL_MPI(MPI_File_write_at(fh, off, buf, len, MPI_BYTE, MPI_STATUS_IGNORE));
    free(buf);
}

static void check(MPI_File fh, MPI_Offset off, int len, int tag, const char *what)
{
    unsigned char *buf = malloc(len);
    MPI_Status st;
    int got;
    TL_MPI(MPI_File_read_at(fh, off, buf, len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    TL_CHECK(got == len, "%s: read %d bytes at %lld, want %d", what, got, (long long) off, len);
    tl_verify(buf, len, off, tag, what);
    free(buf);
}

static void check_zeros(MPI_File fh, MPI_Offset off, int len, const char *what)
{
    unsigned char *buf = malloc(len);
    TL_MPI(MPI_File_read_at(fh, off, buf, len, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < len; i++)
        TL_CHECK(buf[i] == 0, "%s: byte %lld is %d, want 0", what, (long long) off + i, buf[i]);
    free(buf);
}

/* Part 1's file: [0, 1000) tag 1, [1000, 6000) tag 2, [6000, 40000) tag 1,
 * [40000, 60000) zeros (cut by set_size 40000, then a write at 60000),
 * [60000, 60100) tag 3. */
static void part1_content(MPI_File fh, const char *what)
{
    MPI_Offset size;
    TL_MPI(MPI_File_get_size(fh, &size));
    TL_CHECK(size == 60100, "%s: size %lld, want 60100", what, (long long) size);
    check(fh, 0, 1000, 1, what);
    check(fh, 1000, 5000, 2, what);
    check(fh, 6000, 34000, 1, what);
    check_zeros(fh, 40000, 20000, what);
    check(fh, 60000, 100, 3, what);
}

static void part1(const char *name)
{
    char mine[4096];
    MPI_File fh;

    tl_sibling(name, "", mine, sizeof(mine));
    snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), ".own%d", tl_rank);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    if (bbfs) {
        char v[MPI_MAX_INFO_VAL + 1];
        private_here = tl_info_get(fh, "bbfs_map_server", v) && strcmp(v, "none") == 0;
        if (tl_rank == 0 && !private_here)
            printf("t_private: handles use the map server %s here: not private\n", v);
    }
    put(fh, 0, 65536, 1);
    put(fh, 1000, 5000, 2);
    TL_MPI(MPI_File_set_size(fh, 40000));
    put(fh, 60000, 100, 3);
    part1_content(fh, "own writes, before the close");
    expect_published(mine, 0, "a file per process, open");
    TL_MPI(MPI_File_close(&fh));
    expect_published(mine, 0, "a file per process, closed");
    TL_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    part1_content(fh, "a read-only open after the close");
    TL_MPI(MPI_File_close(&fh));
}

static void part2(const char *name)
{
    char mine[4096], next[4096];
    int n = (tl_rank + 1) % tl_nprocs;
    MPI_File fh, other;

    tl_sibling(name, "", mine, sizeof(mine));
    strcpy(next, mine);
    snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), ".rel%d", tl_rank);
    snprintf(next + strlen(next), sizeof(next) - strlen(next), ".rel%d", n);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    put(fh, 0, BLOCK, 4 + tl_rank);
    expect_published(mine, 0, "before the barrier");
    MPI_Barrier(MPI_COMM_WORLD);        /* a release, then an acquire */
    /* (alone, a process's barrier releases nothing: there is no one to
     * tell; its second handle of the file below publishes it instead) */
    expect_published(mine, tl_nprocs > 1, "after a write and a barrier");
    TL_MPI(MPI_File_open(MPI_COMM_SELF, next, MPI_MODE_RDONLY, MPI_INFO_NULL, &other));
    check(other, 0, BLOCK, 4 + n, "the next process's write before the barrier, while open");
    TL_MPI(MPI_File_close(&other));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_close(&fh));
    expect_published(mine, 0, "after the close");
    TL_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check(fh, 0, BLOCK, 4 + tl_rank, "after the close");
    TL_MPI(MPI_File_close(&fh));
}

static void part3(const char *name)
{
    char f[4096];
    MPI_File fh;
    const int big = 5 << 20;    /* past the default 4 MiB log buffer */

    tl_sibling(name, "", f, sizeof(f));
    snprintf(f + strlen(f), sizeof(f) - strlen(f), ".sync%d", tl_rank);
    TL_MPI(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    put(fh, 100, 1000, 9);
    expect_published(f, 0, "before the sync");
    TL_MPI(MPI_File_sync(fh));
    expect_published(f, 1, "after the sync");
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check(fh, 100, 1000, 9, "a synced private session, after the close");
    TL_MPI(MPI_File_close(&fh));

    snprintf(f + strlen(f), sizeof(f) - strlen(f), ".big");
    TL_MPI(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    put(fh, 0, 1000, 10);
    expect_published(f, 0, "before a write past the buffer");
    put(fh, 1000, big, 10);
    expect_published(f, 1, "after a write past the buffer");
    check(fh, 0, big + 1000, 10, "own writes past the buffer");
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check(fh, 0, big + 1000, 10, "writes past the buffer, after the close");
    TL_MPI(MPI_File_close(&fh));
}

static void cycles(const char *prefix, const char *name, int n)
{
    char path[4200];
    char buf[64];

    memset(buf, 'p', sizeof(buf));
    snprintf(path, sizeof(path), "%s%s.cycle.%d", prefix, name, tl_rank);
    for (int i = 0; i < n; i++) {
        MPI_File fh;
        TL_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                             MPI_INFO_NULL, &fh));
        TL_MPI(MPI_File_write_at(fh, i, buf, sizeof(buf), MPI_BYTE, MPI_STATUS_IGNORE));
        TL_MPI(MPI_File_close(&fh));
    }
}

/* Bytes of heap in use that n cycles on prefix+name add, after 50. */
static long long growth(const char *prefix, const char *name, int n)
{
    cycles(prefix, name, 50);
    size_t warm = mallinfo2().uordblks;
    cycles(prefix, name, n);
    return (long long) mallinfo2().uordblks - (long long) warm;
}

/* Against the same cycles on ufs:, the same path: what the MPI library
 * itself keeps per handle (Open MPI's too) is not bbfs's.  (Under
 * AddressSanitizer mallinfo2 does not see its heap: nothing to judge,
 * and ASan's own leak report is off for MPICH's sake.) */
static void part4(const char *name)
{
    const char *colon = strrchr(name, ':'), *path = colon ? colon + 1 : name;
    long long stock = growth("ufs:", path, 1000), mine = growth("", name, 1000);
    TL_CHECK(mine <= stock + 65536, "1000 open-write-close cycles on MPI_COMM_SELF grew the heap "
             "in use by %lld bytes, %lld on ufs:: a leak per handle", mine, stock);
}

static void part5(const char *name)
{
    enum { BLK = 8192, NBLK = 40 };
    char mine[4096];
    MPI_File fh;
    MPI_Info info;

    tl_sibling(name, "", mine, sizeof(mine));
    snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), ".rounds%d", tl_rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_replay_buffer", "65536");
    TL_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    for (int b = NBLK - 1; b >= 0; b--)
        put(fh, (MPI_Offset) b * BLK, BLK, 20 + b % 7);
    put(fh, 7 * BLK + 100, 3000, 30);
    expect_published(mine, 0, "40 blocks, open");
    TL_MPI(MPI_File_close(&fh));
    TL_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int b = 0; b < NBLK; b++) {
        if (b == 7) {
            check(fh, 7 * BLK, 100, 20, "block 7's head, after a replay in rounds");
            check(fh, 7 * BLK + 100, 3000, 30, "the overwrite, after a replay in rounds");
            check(fh, 7 * BLK + 3100, BLK - 3100, 20, "block 7's tail, after a replay in rounds");
        } else
            check(fh, (MPI_Offset) b * BLK, BLK, 20 + b % 7, "a block, after a replay in rounds");
    }
    TL_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;

    bbfs = tl_is_bbfs(name);
    part1(name);
    MPI_Barrier(MPI_COMM_WORLD);
    part2(name);
    MPI_Barrier(MPI_COMM_WORLD);
    part3(name);
    part4(name);
    part5(name);

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                         &fh));
    put(fh, (MPI_Offset) tl_rank * BLOCK, BLOCK, 11);
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
