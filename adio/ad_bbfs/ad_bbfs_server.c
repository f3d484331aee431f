/*
 * Visibility through bbserver: attach this process's synced writes to the
 * file's ownership map and query the map for others' (their bytes are read
 * by ad_bbfs_server_read.c).
 *
 * A handle uses the server when its processes span several nodes whose
 * log directories are their own (no process can open another node's
 * logs; a probe file tells), when bbfs_server names one, or when forced
 * (bbfs_force_remote / BBFS_FORCE_REMOTE=1, which also sends every read of
 * another writer's bytes through a server, so one node exercises the
 * remote path).  Otherwise the view is rebuilt from the metalogs, as
 * ad_bbfs_read.c does on one node.
 *
 * Servers: one per log directory on each node, found or started by the
 * first of the node's processes that looks for it (ad_bbfs_server_start.c).
 * The file's map lives on the server of rank 0's node, on the one that a
 * handle of the file open already attaches to (its manifest names it), or
 * on the one bbfs_server / BBFS_SERVER names.  Connections are per process
 * and outlive handles (ad_bbfs_nodes.c).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../bbserver/client.h"
#include "../../bbserver/token.h"
#include "../../logfs/coding.h"
#include "../../logfs/rangemap.h"
#include "../../logfs/writer.h"
#include "ad_bbfs_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A call to the server holding the file's map, whose clock the process
 * hears in its reply.  An attach or a query (uses_map) must reach the map
 * that the handle's processes have attached to since the open: a server
 * restarted without its saved state (killed, crashed) has lost it, and
 * answering from its new one would hide their synced writes. */
int ADIOI_BBFS_Server_map_call(ADIOI_BBFS_Server * s, struct bbs_buf *b, struct bbs_reply *r,
                               char *err, size_t len, int uses_map)
{
    int rc = ADIOI_BBFS_Nodes_call(&s->nodes, s->map_addr, b, r, err, len);
    if (rc != 0)
        return rc;
    s->clock_heard = 1;
    if (uses_map && !s->map_incarnation)
        s->map_incarnation = r->incarnation;
    if (uses_map && r->incarnation != s->map_incarnation) {
        snprintf(err, len, "bbserver %s restarted since the file was opened and lost its map "
                 "(it was killed or crashed): others' synced writes are no longer visible "
                 "through this handle.  Close the file (its logs are kept) and open it "
                 "again, which replays them", s->map_addr);
        return -1;
    }
    return 0;
}

static int s_rank(ADIO_File fd)
{
    int r;
    MPI_Comm_rank(fd->comm, &r);
    return r;
}

/* --- open and close -------------------------------------------------------- */

/* The log directory a probe found not shared by every process of a
 * handle: this process says so at the next open (a server fact), and where
 * every process does, the probe is not made again.  Never wrong to trust:
 * a directory the nodes share after all works through the servers too
 * (each node's server has its own address file in it), only slower. */
static char known_apart[PATH_MAX];

/* Whether every process of the handle sees the same log directory (one
 * that the nodes share): the probe file rank 0 made there (fd_probe, its
 * descriptor there) is visible to all.  Collective. */
static int logdir_shared(ADIO_File fd, const char *probe, int fd_probe, const char *logdir)
{
    int sees = access(probe, F_OK) == 0, all;

    MPI_Allreduce(&sees, &all, 1, MPI_INT, MPI_MIN, fd->comm);
    if (fd_probe >= 0) {
        close(fd_probe);
        unlink(probe);
    }
    if (!all)
        snprintf(known_apart, sizeof(known_apart), "%s", logdir);
    return all;
}

/* Whether this job runs on more than one node, as its launcher says
 * (hydra: MPI_LOCALNRANKS, the job's processes on this node; Slurm: the
 * step's nodes); 0 when it does not say.  A handle whose processes are all
 * on one node still uses the servers then: another handle of the file may
 * be opened on another node (HDF5's testphdf5 writes a file with half of
 * the job and reads it with the other half), and only a server shows it
 * what this one synced. */
static int job_on_several_nodes(void)
{
    int world;
    const char *local = getenv("MPI_LOCALNRANKS");
    const char *nodes = getenv("SLURM_STEP_NUM_NODES");

    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (local && *local)
        return atoi(local) < world;
    return nodes && atoi(nodes) > 1;
}

/* Whether the handle may find its server at its first call to one
 * (ADIOI_BBFS_Server_connect) rather than at open, each process on its
 * own: a handle whose open replayed no session (the map must forget those
 * now), and either read-only (it attaches nothing: a process asks a map
 * only to read what other handles wrote since) or of one process (nothing
 * to agree with others) under a model whose first write after the open
 * needs no clock from the map (causal and mpiio stamp after a sync or an
 * acquire from the attach or the map then; posix asks at every write). */
static int may_connect_late(ADIO_File fd)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int n, c = bf->hints.consistency;

    MPI_Comm_size(fd->comm, &n);
    if (bf->open_replayed)
        return 0;
    return (fd->access_mode & ADIO_RDONLY)
        || (n == 1 && (c == ADIOI_BBFS_CONSISTENCY_CAUSAL || c == ADIOI_BBFS_CONSISTENCY_MPIIO));
}

static void forget_replayed(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_FREE(bf->replayed);
    bf->replayed = NULL;
    bf->nreplayed = 0;
    bf->replayed_all = 0;
    bf->replayed_map[0] = 0;
}

/* The sessions replayed, to this handle's map (@p elsewhere NULL:
 * map_call, whose answers must come from the incarnation the handle
 * knows) or to the server at @p elsewhere.  @return 0, or -1 with why in
 * err. */
static int send_replayed(ADIOI_BBFS_Server * s, ADIOI_BBFS_File * bf, const char *elsewhere,
                         char *err, size_t len)
{
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    int rc = 0;
    int total = bf->replayed_all ? 1 : bf->nreplayed;     /* (all: one message, none named) */
    for (int at = 0; at < total && rc == 0; at += BBS_MAX_SESSIONS) {
        uint32_t n = bf->replayed_all ? 0 : (uint32_t) (bf->nreplayed - at);
        if (n > BBS_MAX_SESSIONS)
            n = BBS_MAX_SESSIONS;
        if (bbs_enc_replayed(&b, 0, s->nodes.token, s->map_name, bf->replayed + at, n) != 0) {
            snprintf(err, len, "out of memory");
            rc = -1;
        } else
            rc = !elsewhere ? ADIOI_BBFS_Server_map_call(s, &b, &r, err, len, 0)
                : ADIOI_BBFS_Nodes_call(&s->nodes, elsewhere, &b, &r, err, len);
    }
    bbs_buf_free(&b);
    return rc;
}

/* Process 0: tell the map's server which sessions were replayed, and
 * forget them.  Also the map the replayed sessions' manifests name, where
 * that is another: a handle opened later may choose it again (its
 * process 0 on that node) and must not find them there.  That server may
 * be gone with the job that ran it, and its map with it: not reaching it
 * is no failure.  @return 0, or -1 with why in err. */
static int tell_replayed(ADIOI_BBFS_Server * s, ADIOI_BBFS_File * bf, char *err, size_t len)
{
    char why[256];
    int rc = send_replayed(s, bf, NULL, err, len);
    if (bf->replayed_map[0] && strcmp(bf->replayed_map, s->map_addr) != 0)
        (void) send_replayed(s, bf, bf->replayed_map, why, sizeof(why));
    forget_replayed(bf);
    return rc;
}

/* The server the hints or the environment name (bbfs_server, BBFS_SERVER),
 * or NULL for none. */
static const char *server_named(const ADIOI_BBFS_Hints * hints)
{
    const char *env = getenv("BBFS_SERVER");
    return strcmp(hints->server, "auto") != 0 ? hints->server : env && *env ? env : NULL;
}

/* One reduction settles the usual case, one node: the least and greatest
 * hash of the host names (MPICH groups a node's processes by name too; 64
 * bits: two names that collide are as unlikely as anything here), whether
 * everyone logs to one log directory (by the same hashes), whether
 * everyone has a usable one, the environment's say (BBFS_SERVER,
 * BBFS_FORCE_REMOTE), and whether the job runs on more nodes than the
 * handle, so that every process takes the same path. */
void ADIOI_BBFS_Server_facts(const ADIOI_BBFS_Hints * hints, uint64_t * facts)
{
    int force = ADIOI_BBFS_Force_remote(hints);
    const char *named = server_named(hints);
    uint64_t h = logfs_fnv_str(LOGFS_FNV_START, ADIOI_BBFS_Host_name());
    uint64_t d = logfs_fnv_str(LOGFS_FNV_START, hints->logdir);
    /* A directory found usable is taken as still usable at the next open
     * (a stat and an access per open were a tenth of a stock open's
     * time); one that has gone since fails where the logs are made. */
    static char usable[PATH_MAX];
    struct stat st;
    int known = !strcmp(hints->logdir, usable);
    int have_dir = known || (stat(hints->logdir, &st) == 0 && S_ISDIR(st.st_mode)
                             && access(hints->logdir, W_OK | X_OK) == 0);
    if (have_dir && !known)
        snprintf(usable, sizeof(usable), "%s", hints->logdir);
    uint64_t mine[ADIOI_BBFS_SERVER_FACTS] = { h, ~h, d, ~d, (uint64_t) have_dir,
        (uint64_t) !force, (uint64_t) !named, (uint64_t) (named != NULL),
        (uint64_t) !job_on_several_nodes(), (uint64_t) !strcmp(known_apart, hints->logdir)
    };
    memcpy(facts, mine, sizeof(mine));
}

/* A new handle's server state, named for the map (not yet connected). */
static ADIOI_BBFS_Server *new_server(ADIO_File fd, const char *map_name)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIOI_BBFS_Server *s = ADIOI_Calloc(1, sizeof(*s));
    MPI_Comm_rank(fd->comm, &s->rank);
    snprintf(s->map_name, sizeof(s->map_name), "%s", map_name);
    ADIOI_BBFS_Server_reads_begin(s, bf->hints.read_cache);
    return s;
}

void ADIOI_BBFS_Server_real_name(const ADIOI_BBFS_File * bf, char *out, size_t len)
{
    if (!out[0] && !realpath(bf->canonical, out))       /* (not a POSIX file system) */
        snprintf(out, len, "%s", bf->canonical);
}

/* The handle finds its server at its first call to one, each process on
 * its own (ADIOI_BBFS_Server_connect); @p map_name "" names the map by the
 * file's real path then. */
static void connect_late(ADIO_File fd, const char *map_name)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIOI_BBFS_Server *s = new_server(fd, map_name);
    s->unconnected = s->map_unnamed = 1;
    s->bf = bf;
    bf->srv = s;
}

/* A server serves the log directory it was started for (and finds its
 * address file there).  Each process finds the one of its node and
 * directory itself; the first to look starts it, under a lock the others
 * wait on.  (A node communicator to elect one process cost more than the
 * rest of the open across nodes.)  @return 0, or -1 with why in err. */
static int find_node_server(ADIOI_BBFS_File * bf, ADIOI_BBFS_Server * s, char *err, size_t len)
{
    if (ADIOI_BBFS_Nodes_init(&s->nodes, bf->hints.server_timeout, err, len) != 0
        || ADIOI_BBFS_Server_find_node(&s->nodes, bf->hints.logdir, s->node_addr,
                                       sizeof(s->node_addr), &s->node_incarnation, err,
                                       len) != 0) {
        s->node_addr[0] = 0;
        return -1;
    }
    return 0;
}

void ADIOI_BBFS_Server_open(ADIO_File fd, int err_in, int *error_code, int *agreed)
{
    static char myname[] = "ADIOI_BBFS_SERVER_OPEN";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    int err_here = err_in != MPI_SUCCESS;
    char err[1024] = "";

    /* (the paths that return early make nothing collective) */
    *error_code = err_in;
    *agreed = 0;
    const char *named = server_named(&bf->hints);
    /* (reduced by the open's hint check, which every open makes first) */
    const uint64_t *all = bf->server_facts;
    int one_host = all[0] == ~all[1], one_node = one_host && all[8];
    int one_logdir = all[2] == ~all[3], all_dir = (int) all[ADIOI_BBFS_FACT_LOGDIR_USABLE];
    int force = !all[5];        /* (forced anywhere: forced everywhere) */
    int apart = (int) all[9];   /* (every process's probe found the directory not shared) */
    if (!all[6] && !all[7]) {
        *error_code = ADIOI_BBFS_Err_server(myname, __LINE__, "a server is named (bbfs_server, "
                                            "BBFS_SERVER) on some processes only: name the "
                                            "same one on every process, or on none");
        *agreed = 1;            /* (every process found it in the same facts) */
        return;
    }
    /* (a server named decides; else a live handle's map, or this open) */
    int own_choice = !named;
    if (one_node && !force && own_choice)
        return;                 /* one node: every process reads every log */
    /* Without a usable log directory there is no server to start: a
     * writing open reports the directory with its own error class when the
     * logs start (MPI_ERR_NO_SUCH_FILE, MPI_ERR_ACCESS), and a read-only
     * one needs no logs (pending ones were replayed at this open). */
    if (!all_dir)
        return;
    /* A read-only handle of a file with no other session, whose open
     * replayed none, connects at its first need of a map, each process on
     * its own: every process knows all that from the open's reduction. */
    if (!force && own_choice && (fd->access_mode & ADIO_RDONLY) && !bf->others_live
        && !bf->open_replayed) {
        connect_late(fd, "");
        return;
    }
    /* Several nodes are in play.  One broadcast from rank 0 tells the map
     * of a handle of the file that is open already (another communicator's,
     * on other nodes perhaps), which decides: so that the two see each
     * other's synced writes (its manifest names the map it attaches to; one
     * that names none reads the logs directly, and so does a handle on one
     * node then).  Where processes on several nodes all name one log
     * directory not known to be apart, it also names a probe file rank 0
     * made there: if every process sees it, the nodes share the directory.
     * Else, where this open chooses the map, it names rank 0's node's
     * server, which is the map then. */
    /* It also names the file as maps know it: by its real path, which
     * every handle, drain (bbsctl too) and later replay finds again
     * whatever name each was given (relative, through a symbolic link). */
    struct {
        int live;
        int node_found;         /* rank 0 looked for its node's server: node says what it found */
        char map[sizeof(((ADIOI_BBFS_Server *) 0)->map_addr)];
        char node[sizeof(((ADIOI_BBFS_Server *) 0)->node_addr)];
        char name[PATH_MAX];
        char probe[PATH_MAX];
    } said = { -1, 0, "", "", "", "" };
    int *said_ints[] = { &said.live, &said.node_found };
    char *said_strs[] = { said.map, said.node, said.name, said.probe };
    const size_t said_caps[] = { sizeof(said.map), sizeof(said.node), sizeof(said.name),
        sizeof(said.probe)
    };
    int fd_probe = -1;
    ADIOI_BBFS_Server *s = NULL;
    /* Where nothing rank 0 can say spares a process its node's server
     * (no probe of a shared directory, no late connection, several hosts
     * or forced), the others find theirs while rank 0 chooses the map:
     * found after the broadcast, the slowest find delayed the gathering
     * of the log names for everyone. */
    int must_find = force || (!one_host && (!own_choice || !one_logdir || apart)
                              && (!own_choice || !may_connect_late(fd)));
    if (s_rank(fd) != 0 && must_find) {
        s = new_server(fd, "");
        if (!err_here && find_node_server(bf, s, err, sizeof(err)) != 0)
            err_here = 1;
    }
    /* (a handle of one process names its map when it first connects: it
     * tells the name to no other process, and mostly connects never, a
     * file per process across nodes; realpath is a lookup of each part of
     * the name) */
    int nprocs;
    MPI_Comm_size(fd->comm, &nprocs);
    if (s_rank(fd) == 0) {
        if (nprocs > 1)
            ADIOI_BBFS_Server_real_name(bf, said.name, sizeof(said.name));
        if (own_choice)
            said.live = ADIOI_BBFS_Manifest_live_map(bf, said.map, sizeof(said.map));
        int own_map = own_choice && said.live <= 0;
        if (own_map && !force && !one_host && one_logdir && !apart) {
            snprintf(said.probe, sizeof(said.probe), "%s/.bbfs-probe.%016llx",
                     bf->hints.logdir,
                     (unsigned long long) ADIOI_BBFS_New_file_id(bf->hints.logdir));
            fd_probe = open(said.probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        } else if (own_map && !(said.live == 0 && !force && one_host)
                   && !(said.live < 0 && !force && may_connect_late(fd))) {
            /* (the handle connects, to this node's server as its map) */
            ADIOI_BBFS_Server_real_name(bf, said.name, sizeof(said.name));
            s = new_server(fd, said.name);
            said.node_found = 1;
            if (!err_here && find_node_server(bf, s, err, sizeof(err)) != 0)
                err_here = 1;
            memcpy(said.node, s->node_addr, sizeof(said.node));
        }
    }
    ADIOI_BBFS_Bcast_said(fd->comm, said_ints, 2, said_strs, said_caps, 4);
    if (s)                      /* (found before the broadcast: named now) */
        snprintf(s->map_name, sizeof(s->map_name), "%s", said.name);
    if (said.live == 0 && !force && one_host)
        return;
    if (said.probe[0] && logdir_shared(fd, said.probe, fd_probe, bf->hints.logdir))
        return;                 /* several nodes, one log directory: as on one node */
    if (said.live < 0 && !force && own_choice && may_connect_late(fd)) {
        connect_late(fd, said.name);
        return;
    }

    if (!s) {
        ADIOI_BBFS_Server_real_name(bf, said.name, sizeof(said.name));
        s = new_server(fd, said.name);
        if (!err_here && find_node_server(bf, s, err, sizeof(err)) != 0)
            err_here = 1;
    }
    s->force_remote = force;
    s->named = named != NULL;
    if (named)
        snprintf(s->map_addr, sizeof(s->map_addr), "%s", named);
    else if (said.live > 0) {
        memcpy(s->map_addr, said.map, sizeof(s->map_addr));
    } else if (said.node_found) {
        memcpy(s->map_addr, said.node, sizeof(s->map_addr));
    } else {
        /* rank 0's node's server (found after the probe) */
        memcpy(s->map_addr, s->node_addr, sizeof(s->map_addr));
        MPI_Bcast(s->map_addr, sizeof(s->map_addr), MPI_CHAR, 0, fd->comm);
    }
    /* every process reaches the map's server now, so that a refusal (token)
     * or an unreachable server fails the open, not a later sync */
    struct bbs_client *c;
    if (!err_here && !s->node_addr[0]) {
        snprintf(err, sizeof(err), "this node's bbserver could not be found or started");
        err_here = 1;
    }
    /* (no map's address: rank 0 failed, before or in finding its node's
     * server; the open fails with its error, which the agreement below
     * gives every process, with its class) */
    int follows_zero = !err_here && !s->map_addr[0];
    err_here |= follows_zero;
    if (!err_here && ADIOI_BBFS_Nodes_connect(&s->nodes, s->map_addr, &c, err, sizeof(err)) != 0)
        err_here = 1;
    /* The life of the maps this handle's map is in, as rank 0 hears it now
     * (a cached connection may be to a server that has restarted since):
     * where the map is this node's server, the answer that found it just
     * now says it, and its clock, and a second round trip would say them
     * again. */
    if (!err_here && s->rank == 0 && s->node_incarnation
        && !strcmp(s->map_addr, s->node_addr)) {
        s->map_incarnation = s->node_incarnation;
        s->clock_heard = 1;
    } else if (!err_here && s->rank == 0) {
        struct bbs_buf b = { 0 };
        struct bbs_reply r;
        if (bbs_enc_ping(&b, 0, s->nodes.token) != 0
            || ADIOI_BBFS_Server_map_call(s, &b, &r, err, sizeof(err), 0))
            err_here = 1;
        else
            s->map_incarnation = r.incarnation;
        bbs_buf_free(&b);
    }
    /* The sessions this open replayed may still be in the map, naming
     * logs that are gone now: the map forgets them before anyone asks. */
    if (!err_here && (bf->nreplayed || bf->replayed_all) && s->rank == 0
        && tell_replayed(s, bf, err, sizeof(err)))
        err_here = 1;
    int mine = err_in != MPI_SUCCESS ? err_in
        : err_here && !follows_zero ? ADIOI_BBFS_Err_server(myname, __LINE__, err) : MPI_SUCCESS;
    s->bf = bf;
    bf->srv = s;
    /* A handle that logs agrees this with the logs' start, whose exchange
     * of log names carries every process's error and rank 0's incarnation
     * (ADIOI_BBFS_Server_agreed): one collective fewer per open across
     * nodes.  (Every process has its server state by now, failed or not:
     * the start takes the same path everywhere, and a failed open frees
     * it with the handle.) */
    if (bf->log_writes) {
        *error_code = mine;
        return;
    }
    /* (one reduction: everyone's errors, and rank 0's incarnation, which
     * the others give as 0) */
    *error_code = ADIOI_BBFS_Agree_error_with(fd->comm, myname, mine, &s->map_incarnation);
    *agreed = 1;
    if (*error_code != MPI_SUCCESS) {
        bf->srv = NULL;
        ADIOI_BBFS_Server_reads_end(s);
        ADIOI_Free(s);
    }
}

uint64_t ADIOI_BBFS_Server_incarnation(const ADIOI_BBFS_File * bf)
{
    return bf->srv ? bf->srv->map_incarnation : 0;
}

uint64_t ADIOI_BBFS_Server_open_clock(const ADIOI_BBFS_File * bf)
{
    return bf->srv && bf->srv->rank == 0 && bf->srv->clock_heard ? ADIOI_BBFS_Clock_floor() : 0;
}

void ADIOI_BBFS_Server_agreed(ADIOI_BBFS_File * bf, uint64_t rank0s, uint64_t rank0s_clock)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s || s->rank == 0)
        return;
    /* (0: process 0 has not heard the map since it adopted it, or a
     * restart of the logs; what this process learned stands) */
    if (rank0s != 0)
        s->map_incarnation = rank0s;
    /* Process 0 heard the map's clock after every process had entered the
     * open (its first agreement): past every write attached before any
     * of them did, so the first write after the open stamps without
     * asking the map again (a round trip per process, on another node
     * mostly: ADIOI_BBFS_Order_switch).  A write ordered after a later
     * attach follows an acquire or a sync, which asks again. */
    if (rank0s_clock != 0) {
        ADIOI_BBFS_Clock_observe(rank0s_clock);
        s->clock_heard = 1;
    }
}

int ADIOI_BBFS_Server_other_live_map(ADIOI_BBFS_File * bf, char *out, size_t len)
{
    const ADIOI_BBFS_Server *s = bf->srv;

    return s && !s->named && ADIOI_BBFS_Manifest_live_map(bf, out, len) == 1
        && strcmp(out, s->map_addr) != 0;
}

int ADIOI_BBFS_Server_agree_map(ADIO_File fd, const char *myname, int err, const char *adopted)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    ADIOI_BBFS_Server *s = bf->srv;

    if (!s)
        return ADIOI_BBFS_Agree_error(fd->comm, myname, err);
    /* (one broadcast where an agreement on errors was: only process 0
     * can have failed here) */
    struct {
        int cls;
        char map[sizeof(s->map_addr)];  /* "": this handle's own stays */
    } said = { MPI_SUCCESS, "" };
    if (s->rank == 0) {
        if (err != MPI_SUCCESS)
            MPI_Error_class(err, &said.cls);
        if (adopted)
            snprintf(said.map, sizeof(said.map), "%s", adopted);
    }
    MPI_Bcast(&said, sizeof(said), MPI_BYTE, 0, fd->comm);
    if (said.cls != MPI_SUCCESS)
        return s->rank == 0 ? err : ADIOI_BBFS_Err_elsewhere(myname, said.cls, 0);
    if (!said.map[0])
        return MPI_SUCCESS;
    /* another handle's map, which every process reaches from now on */
    char why[1024];
    int mine = ADIOI_BBFS_Server_adopt_map(s, said.map, why, sizeof(why)) == 0
        ? MPI_SUCCESS : ADIOI_BBFS_Err_server(myname, __LINE__, why);
    return ADIOI_BBFS_Agree_error(fd->comm, myname, mine);
}

int ADIOI_BBFS_Server_adopt_map(ADIOI_BBFS_Server * s, const char *map, char *err,
                                size_t errlen)
{
    struct bbs_client *c;
    snprintf(s->map_addr, sizeof(s->map_addr), "%s", map);
    s->map_incarnation = 0;     /* (learned at its first attach or query) */
    s->clock_heard = 0;         /* (another server's clock: ask this one) */
    return ADIOI_BBFS_Nodes_connect(&s->nodes, s->map_addr, &c, err, errlen);
}

void ADIOI_BBFS_Server_close(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s)
        return;
    ADIOI_BBFS_Server_notes_end(bf);
    ADIOI_BBFS_Server_forget(bf);
    ADIOI_BBFS_Server_reads_end(s);
    ADIOI_BBFS_FREE(s->notes);
    ADIOI_Free(s);
    bf->srv = NULL;
}

/* --- query and the view ------------------------------------------------------ */

static int32_t writer_index(ADIOI_BBFS_Server * s, const struct bbs_writer *w)
{
    for (int i = 0; i < s->nwriters; i++)
        if (s->writers[i].session == w->session && s->writers[i].rank == w->rank
            && strcmp(s->writers[i].datalog, w->datalog) == 0)
            return i;
    if (s->nwriters == s->capwriters) {
        s->capwriters = s->capwriters ? 2 * s->capwriters : 16;
        s->writers = ADIOI_Realloc(s->writers, sizeof(*s->writers) * s->capwriters);
        s->log_end = ADIOI_Realloc(s->log_end, sizeof(*s->log_end) * s->capwriters);
    }
    s->log_end[s->nwriters] = 0;
    struct bbs_writer *c = &s->writers[s->nwriters];
    *c = *w;
    c->node = ADIOI_Strdup(w->node);
    c->datalog = ADIOI_Strdup(w->datalog);
    return s->nwriters++;
}

void ADIOI_BBFS_Server_forget(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    for (int i = 0; s && i < s->nwriters; i++) {
        ADIOI_Free((char *) s->writers[i].node);
        ADIOI_Free((char *) s->writers[i].datalog);
    }
    if (s) {
        ADIOI_BBFS_FREE(s->writers);
        ADIOI_BBFS_FREE(s->log_end);
        s->writers = NULL;
        s->log_end = NULL;
        s->nwriters = s->capwriters = 0;
    }
}

int ADIOI_BBFS_Server_view(ADIOI_BBFS_File * bf, uint64_t lo, uint64_t hi,
                           struct logfs_rangemap **out, ADIO_Offset * end)
{
    static char myname[] = "ADIOI_BBFS_SERVER_QUERY";
    ADIOI_BBFS_Server *s = bf->srv;
    struct logfs_rangemap *map;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    char err[1024];
    uint64_t from = lo;
    int rc = LOGFS_OK;

    *out = NULL;
    *end = 0;
    /* Not yet connected, and no session of the file published: no other
     * handle has made a write visible since this one's open (a release
     * publishes before its message leaves), so the map is asked nothing
     * (a read-only open and read of a finished file talks to no server). */
    int none = s->unconnected && ADIOI_BBFS_No_session(bf);
    /* A handle that writes nothing names no map in any manifest: a handle
     * opened after it chose its own when no other was live, which this
     * one must ask from then on (the one its open chose, or adopted from a
     * session closed since, knows nothing of it).  Connecting now chooses
     * a live session's map already. */
    char other[sizeof(s->map_addr)];
    if (s->unconnected) {
        if (!none && ADIOI_BBFS_Server_connect(s, err, sizeof(err)) != 0)
            return ADIOI_BBFS_Err_server(myname, __LINE__, err);
    } else if (!bf->log_writes && ADIOI_BBFS_Server_other_live_map(bf, other, sizeof(other))
               && ADIOI_BBFS_Server_adopt_map(s, other, err, sizeof(err)) != 0)
        return ADIOI_BBFS_Err_server(myname, __LINE__, err);
    ADIOI_BBFS_Server_forget(bf);
    if (logfs_rangemap_create(&map) != LOGFS_OK)
        return ADIOI_BBFS_Err_server(myname, __LINE__, "out of memory for the view");
    if (none) {
        bf->others_live = 0;    /* (as plan_sessions finds: until the next acquire) */
        *out = map;
        return MPI_SUCCESS;
    }
    do {
        s->queries++;
        if (bbs_enc_query(&b, s->queries, s->nodes.token, s->map_name, from, hi) != 0
            || ADIOI_BBFS_Server_map_call(s, &b, &r, err, sizeof(err), 1) != 0) {
            bbs_buf_free(&b);
            logfs_rangemap_destroy(map);
            return ADIOI_BBFS_Err_server(myname, __LINE__, err);
        }
        struct bbs_writer *w = ADIOI_Malloc(sizeof(*w) * (r.nwriters ? r.nwriters : 1));
        int32_t *idx = ADIOI_Malloc(sizeof(*idx) * (r.nwriters ? r.nwriters : 1));
        bbs_reply_writers(&r, w);
        for (uint32_t i = 0; i < r.nwriters; i++)
            idx[i] = writer_index(s, &w[i]);
        /* the records of several writers interleave: one insert puts
         * their blocks in file order */
        struct logfs_strided *runs = ADIOI_Malloc(sizeof(*runs) * (r.npieces ? r.npieces : 1));
        for (uint32_t i = 0; i < r.npieces; i++) {
            struct bbs_piece p;
            bbs_reply_piece(&r, i, &p);
            const struct bbs_extent *e = &p.e;
            int32_t who = idx[p.writer];
            runs[i] = (struct logfs_strided) { e->off, e->len, e->count, e->stride, who, e->pos };
            if (e->pos + e->count * e->len > s->log_end[who])
                s->log_end[who] = e->pos + e->count * e->len;
            if ((ADIO_Offset) bbs_extent_end(e) > *end)
                *end = (ADIO_Offset) bbs_extent_end(e);
        }
        rc = logfs_rangemap_insert_strided(map, runs, r.npieces);
        ADIOI_Free(runs);
        from = r.more;
        if ((ADIO_Offset) r.size > *end)
            *end = (ADIO_Offset) r.size;        /* a set_size grew it */
        ADIOI_Free(w);
        ADIOI_Free(idx);
    } while (rc == LOGFS_OK && from != UINT64_MAX);
    bbs_buf_free(&b);
    if (rc != LOGFS_OK) {
        logfs_rangemap_destroy(map);
        return ADIOI_BBFS_Err_server(myname, __LINE__, "out of memory for the view");
    }
    ADIOI_BBFS_Server_reads_prune(s);
    *out = map;
    return MPI_SUCCESS;
}

const char *ADIOI_BBFS_Server_map(const ADIOI_BBFS_File * bf)
{
    return !bf->srv ? "none" : bf->srv->unconnected ? "unconnected" : bf->srv->map_addr;
}

int ADIOI_BBFS_Server_connected(const ADIOI_BBFS_File * bf)
{
    return bf->srv && !bf->srv->unconnected;
}

const char *ADIOI_BBFS_Server_node(const ADIOI_BBFS_File * bf)
{
    return bf->srv ? bf->srv->node_addr : "";
}

void ADIOI_BBFS_Server_replayed(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    char err[1024];
    /* The canonical file holds those sessions now; a failure only leaves
     * entries naming logs that are gone (reads then report the missing
     * log), so it is reported, not fatal. */
    /* (unconnected: no map holds the sessions; a one-node handle, which
     * has no server, does not tell either) */
    if (s && s->unconnected)
        forget_replayed(bf);
    else if (s && s->rank == 0 && (bf->nreplayed || bf->replayed_all)
        && tell_replayed(s, bf, err, sizeof(err)))
        fprintf(stderr, "bbfs: %s: could not tell bbserver the logs were replayed: %s\n",
                bf->canonical, err);
}
