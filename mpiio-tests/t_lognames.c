/* Log names of every length.  At open every process sends the others its
 * metalog path, host and node server: in one allgather of fixed slots when
 * they fit, else in a second, exact exchange.  Here some processes log
 * under a node-local directory whose path alone is longer than a slot (as
 * a deep per-job directory can be), the others under the usual one, so
 * both kinds meet in one open: each node's first process logs in the
 * usual directory, its others share a long one, so that across nodes each
 * node has both (a node's processes with different log directories use one
 * server per directory, and with 5 processes on 2 nodes two processes
 * share the long one's).
 * Each process writes a block, syncs, and reads every other process's
 * through the logs (found by the path the exchange carried; some on other
 * nodes however the processes are placed), then the close replays them
 * all; the runner compares the file with ufs:'s. */
#include "testlib.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 65536

/* base.t_lognames.WHO/<about 300 bytes of nested names>, made; the
 * deepest in out.  Not below the usual log directory, so that a server
 * started for that one cannot serve it; node-local (the emulated nodes'
 * /dev/shm is their own), so that other nodes must read it through a
 * server.  (Where an info value is shorter, as Open MPI's 255 bytes, the
 * directory stops short of it: the metalog's path in it still overflows a
 * slot.) */
static void make_long_dir(const char *base, int who, char *out, size_t len)
{
    int n = snprintf(out, len, "%s.t_lognames.%d", base, who);
    int limit = 340 + (int) strlen(base);
    if (limit > MPI_MAX_INFO_VAL - 1)
        limit = MPI_MAX_INFO_VAL - 1;
    while (n + 40 <= limit) {
        TL_CHECK(mkdir(out, 0700) == 0 || errno == EEXIST, "cannot make %s", out);
        n += snprintf(out + n, len - (size_t) n, "/a-directory-name-of-forty-bytes-------");
    }
    TL_CHECK(mkdir(out, 0700) == 0 || errno == EEXIST, "cannot make %s", out);
}

/* Whether dir holds a metalog (this process's, while the file is open). */
static int holds_metalog(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;

    TL_CHECK(d != NULL, "cannot list %s", dir);
    while ((e = readdir(d)) != NULL)
        found |= strstr(e->d_name, ".metalog") != NULL;
    closedir(d);
    return found;
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    char base[64];
    snprintf(base, sizeof(base), "/dev/shm/bbfs-%d", (int) getuid());
    char longdir[1024] = "";
    unsigned char *buf = malloc(BLOCK), *got = malloc(BLOCK);
    MPI_File fh;
    MPI_Status st;

    MPI_Comm node;
    int node_rank, node_first;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Allreduce(&tl_rank, &node_first, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (tl_is_bbfs(name) && node_rank >= 1) {
        make_long_dir(base, node_first, longdir, sizeof(longdir));
        setenv("BBFS_LOGDIR", longdir, 1);      /* (read at open: bbfs_logdir's default) */
    }
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    if (longdir[0])
        TL_CHECK(holds_metalog(longdir), "no metalog in the long bbfs_logdir %s", longdir);
    MPI_Offset mine = (MPI_Offset) tl_rank * BLOCK;
    tl_fill(buf, BLOCK, mine, 1);
    TL_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);
    for (int k = 1; k < tl_nprocs; k++) {
        int peer = (tl_rank + k) % tl_nprocs;
        TL_MPI(MPI_File_read_at(fh, (MPI_Offset) peer * BLOCK, got, BLOCK, MPI_BYTE, &st));
        tl_verify(got, BLOCK, (MPI_Offset) peer * BLOCK, 1, "another process's block, from its "
                  "log");
    }
    TL_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);        /* (everyone's close removed its logs) */
    if (longdir[0])
        TL_CHECK(!holds_metalog(longdir), "the close left a metalog in %s", longdir);
    MPI_Barrier(MPI_COMM_WORLD);        /* (everyone has looked) */
    if (longdir[0] && node_rank == 1) {
        /* (remove the tree, innermost first; a server started for it keeps
         * its files there until it exits) */
        for (char *cut; strlen(longdir) > strlen(base); *cut = '\0') {
            rmdir(longdir);
            cut = strrchr(longdir, '/');
        }
    }
    free(buf);
    free(got);
    return tl_finish();
}
