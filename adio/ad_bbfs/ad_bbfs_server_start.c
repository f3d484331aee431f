/*
 * This node's bbserver: found through the address file in the node-local
 * log directory (LOGDIR/.bbserver.HOST.addr, which a job script's own
 * bbserver --address-file can write too), or started as a daemon when none
 * answers, under a lock so that two jobs do not start two.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "ad_bbfs_server.h"
#include "../../logfs/manifest.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* bbserver: BBFS_SERVER_BIN, else beside the libmpi this driver is in
 * (tools/build-mpich.sh links it there), else on PATH. */
static void server_binary(char *out, size_t len)
{
    const char *env = getenv("BBFS_SERVER_BIN");
    Dl_info info;
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    if (dladdr((void *) server_binary, &info) && info.dli_fname) {
        char lib[PATH_MAX];
        snprintf(lib, sizeof(lib), "%s", info.dli_fname);
        char *slash = strrchr(lib, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, len, "%s/../bin/bbserver", lib);
            if (access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, len, "bbserver");
}

static int read_addr(const char *file, char *addr, size_t len)
{
    FILE *f = fopen(file, "r");
    int ok = f && fgets(addr, (int) len, f) != NULL;
    if (f)
        fclose(f);
    if (!ok)
        return -1;
    addr[strcspn(addr, "\n")] = 0;
    return addr[0] ? 0 : -1;
}

/* Whether this node's server answers at the address in file: 1 yes, 0
 * nothing answers, -1 it answers but refuses our token or speaks another
 * protocol version (err says so: starting another server would take the
 * node's address file from it, and the maps it holds would be lost). */
static int alive(const ADIOI_BBFS_Nodes * nodes, const char *file, char *addr, size_t len,
                 uint64_t * incarnation, char *err, size_t errlen)
{
    if (read_addr(file, addr, len) != 0)
        return 0;
    if (ADIOI_BBFS_Nodes_ping(nodes, addr, incarnation, err, errlen) == 0)
        return 1;
    return strstr(err, "refused") || strstr(err, "wrong token")
        || strstr(err, "another bbfs build") ? -1 : 0;
}

/* Start bbserver as a daemon (its own session, so the job's end does not
 * kill it: it stays while the node holds pending logs, up to its idle
 * limit) and wait for its address. */
static int start_server(const ADIOI_BBFS_Nodes * nodes, const char *logdir, const char *file,
                        char *addr, size_t len, char *err, size_t errlen)
{
    char bin[PATH_MAX], state[PATH_MAX], logpath[PATH_MAX], journal[PATH_MAX];
    const char *host = ADIOI_BBFS_Host_name();
    snprintf(state, sizeof(state), "%s/.bbserver.%s.state", logdir, host);
    snprintf(journal, sizeof(journal), "%s/.bbserver.%s.drains", logdir, host);
    snprintf(logpath, sizeof(logpath), "%s/.bbserver.%s.log", logdir, host);
    server_binary(bin, sizeof(bin));
    /* The daemon reports a failed exec through this pipe, which the exec
     * closes when it succeeds: a missing program is an error at once, not
     * after the whole time-out. */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot start bbserver: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start bbserver: fork: %s", strerror(errno));
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (pid == 0) {
        if (fork() != 0)
            _exit(0);
        setsid();
        int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (report[1] != 3) {
            dup2(report[1], 3);
            fcntl(3, F_SETFD, FD_CLOEXEC);
        }
        /* nothing else of the MPI process: hydra waits for its PMI socket
         * and output pipes to close before the job ends */
        closefrom(4);
        const char *idle = getenv("BBFS_SERVER_IDLE");
        execlp(bin, bin, "--logdir", logdir, "--address-file", file, "--state", state,
               "--drain-journal", journal, "--idle-limit", idle && *idle ? idle : "600",
               (char *) NULL);
        int e = errno;
        ssize_t w = write(3, &e, sizeof(e));    /* (first: stderr may be anything) */
        (void) w;
        fprintf(stderr, "bbfs: cannot run %s: %s\n", bin, strerror(e));
        _exit(127);
    }
    close(report[1]);
    waitpid(pid, NULL, 0);
    /* (bounded: a daemon stuck before its exec, on a hung log file, must
     * not hold the node's lock for ever) */
    int exec_errno = 0;
    ssize_t got = -1;
    struct pollfd pfd = { report[0], POLLIN, 0 };
    int ready;
    while ((ready = poll(&pfd, 1, (int) (nodes->timeout * 1000))) < 0 && errno == EINTR)
        continue;
    if (ready > 0)
        while ((got = read(report[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
            continue;
    close(report[0]);
    if (ready == 0) {
        snprintf(err, errlen, "started %s for this node, but it neither ran nor failed within "
                 "%.0f s (see %s)", bin, nodes->timeout, logpath);
        return -1;
    }
    if (got == (ssize_t) sizeof(exec_errno)) {
        /* (short: MPICH cuts error strings) */
        snprintf(err, errlen, "cannot run %s (set BBFS_SERVER_BIN to the bbserver program; "
                 "else it is bin/ beside libmpi, then PATH): %s", bin, strerror(exec_errno));
        return -1;
    }
    /* (by the clock: a ping that fails slowly counts too) */
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < nodes->timeout;) {
        int a = alive(nodes, file, addr, len, NULL, err, errlen);
        if (a != 0)
            return a > 0 ? 0 : -1;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "started %s for this node, but it did not answer within %.0f s "
             "(see %s; set BBFS_SERVER_BIN if it is not on PATH)", bin, nodes->timeout, logpath);
    return -1;
}

/* This node's server address, found or started; every process of a
 * server-using open calls it.  Starting happens under the node's lock, so
 * that neither two of a job's processes nor two jobs start two. */
int ADIOI_BBFS_Server_find_node(const ADIOI_BBFS_Nodes * nodes, const char *logdir, char *addr,
                                size_t len, uint64_t * incarnation, char *err, size_t errlen)
{
    char file[PATH_MAX], lock[PATH_MAX];
    const char *host = ADIOI_BBFS_Host_name();
    struct stat st;
    /* (named by host: a log directory several nodes share has one file
     * per node's server) */
    snprintf(file, sizeof(file), "%s/.bbserver.%s.addr", logdir, host);
    snprintf(lock, sizeof(lock), "%s/.bbserver.%s.lock", logdir, host);
    if (incarnation)
        *incarnation = 0;
    if (stat(logdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "no bbserver for this node: the log directory %s is missing "
                 "(bbfs_logdir, BBFS_LOGDIR)", logdir);
        return -1;
    }
    /* A server that answers is found under a shared lock, so a node's
     * processes look at once; the lock is taken alone (and the server
     * looked for again) only to start one. */
    int lfd = open(lock, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (lfd >= 0)
        flock(lfd, LOCK_SH);
    int a = alive(nodes, file, addr, len, incarnation, err, errlen);
    if (a == 0) {
        if (lfd >= 0)
            flock(lfd, LOCK_EX);
        a = alive(nodes, file, addr, len, incarnation, err, errlen);
    }
    int rc = a > 0 ? 0 : a < 0 ? -1 : start_server(nodes, logdir, file, addr, len, err, errlen);
    if (lfd >= 0)
        close(lfd);             /* (releases the lock) */
    return rc;
}

/* --- a handle that finds its server late ------------------------------------ */

int ADIOI_BBFS_Server_connect(ADIOI_BBFS_Server * s, char *err, size_t errlen)
{
    ADIOI_BBFS_File *bf = s->bf;
    struct bbs_client *c;
    char live[sizeof(s->map_addr)];

    if (!s->unconnected)
        return 0;
    /* (a read-only handle's open named no map: the file's real path) */
    ADIOI_BBFS_Server_real_name(bf, s->map_name, sizeof(s->map_name));
    if (ADIOI_BBFS_Nodes_init(&s->nodes, bf->hints.server_timeout, err, errlen) != 0
        || ADIOI_BBFS_Server_find_node(&s->nodes, bf->hints.logdir, s->node_addr,
                                       sizeof(s->node_addr), NULL, err, errlen) != 0) {
        s->node_addr[0] = 0;
        return -1;
    }
    /* The map of a session opened since this one (which chose it at its
     * open, or at its publishing), else this node's server's. */
    if (ADIOI_BBFS_Manifest_live_map(bf, live, sizeof(live)) == 1 && live[0])
        snprintf(s->map_addr, sizeof(s->map_addr), "%s", live);
    else
        snprintf(s->map_addr, sizeof(s->map_addr), "%s", s->node_addr);
    if (ADIOI_BBFS_Nodes_connect(&s->nodes, s->map_addr, &c, err, errlen) != 0)
        return -1;
    s->unconnected = 0;         /* (its incarnation: learned at the first attach or query) */
    if (bf->servers) {
        ADIOI_BBFS_FREE(bf->servers[0]);
        bf->servers[0] = ADIOI_Strdup(s->node_addr);
    }
    return 0;
}

int ADIOI_BBFS_Server_name_map(ADIOI_BBFS_File * bf, int *lk, char *err, size_t errlen)
{
    ADIOI_BBFS_Server *s = bf->srv;
    char other[sizeof(s->map_addr)];

    *lk = -1;
    if (!s || !s->map_unnamed || !bf->manifest)
        return 0;
    *lk = ADIOI_BBFS_Manifest_lock_sessions(bf);
    if (s->unconnected) {
        if (ADIOI_BBFS_Server_connect(s, err, errlen) != 0)
            return -1;
    } else if (ADIOI_BBFS_Server_other_live_map(bf, other, sizeof(other))
               && ADIOI_BBFS_Server_adopt_map(s, other, err, errlen) != 0) {
        /* (connected for a query before another session published its
         * map: both must attach to one) */
        return -1;
    }
    if (logfs_manifest_set_server(bf->manifest, 0, s->node_addr) != LOGFS_OK
        || logfs_manifest_set_map(bf->manifest, s->map_addr) != LOGFS_OK) {
        snprintf(err, errlen, "cannot name the servers in the manifest (out of memory?)");
        return -1;
    }
    s->map_unnamed = 0;
    return 0;
}
