/*
 * Visibility through bbserver: attach this process's synced writes to the
 * file's ownership map, query the map for others', and read their bytes
 * from the owner's log (own log; a datalog on this node, read directly;
 * another node's, through that node's server).
 *
 * A handle uses the server when its processes span several nodes whose
 * log directories are their own (no process can open another node's
 * logs; a probe file tells), when bbfs_server names one, or when forced (bbfs_force_remote / BBFS_FORCE_REMOTE=1, which also sends
 * every read of another writer's bytes through a server, so one node
 * exercises the remote path).  Otherwise the view is rebuilt from the
 * metalogs, as ad_bbfs_read.c does on one node.
 *
 * Servers: one per node.  The node's first process finds it through the
 * address file in the node-local log directory (LOGDIR/.bbserver.HOST.addr,
 * which a job script's own bbserver --address-file can write too) and
 * starts one when none answers.  The file's map lives on the server of
 * rank 0's node, or on the one bbfs_server / BBFS_SERVER names.
 *
 * Connections are per process and outlive handles (one per address).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../bbserver/client.h"
#include "../../bbserver/token.h"
#include "../../logfs/rangemap.h"
#include "../../logfs/writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


struct ADIOI_BBFS_Server {
    ADIOI_BBFS_File *bf;        /* the handle this belongs to */
    struct ADIOI_BBFS_Server *next_dirty;       /* in `dirty` while it has notes */
    struct ADIOI_BBFS_Server *next_live;        /* in `live` while open */
    int is_dirty;
    char map_addr[256];         /* the server holding this file's map */
    char node_addr[256];        /* this node's server: where our logs are read */
    uint8_t token[BBS_TOKEN_LEN];
    double timeout;
    int force_remote;
    int rank;
    struct bbs_extent *notes;   /* runs logged since the last attach, in order */
    size_t nnotes, capnotes;
    uint64_t notes_pieces;      /* blocks of the last batch's notes */
    struct bbs_writer *writers; /* the view's owners (strings owned) */
    int nwriters, capwriters;
    struct open_log {
        char *path;
        int fd;
    } *logs;                    /* datalogs of this node opened for reads */
    int nlogs;
    uint64_t attaches, queries; /* messages sent (their request ids) */
};

static void set_dirty(ADIOI_BBFS_Server * s, int on);

/* This process's handles that use a server. */
static ADIOI_BBFS_Server *live;

static int s_rank(ADIO_File fd)
{
    int r;
    MPI_Comm_rank(fd->comm, &r);
    return r;
}

/* --- connections ------------------------------------------------------- */

static struct conn {
    char addr[256];
    struct bbs_client *c;
    struct conn *next;
} *conns;

static int client_for(ADIOI_BBFS_Server * s, const char *addr, struct bbs_client **out,
                      char *err, size_t errlen)
{
    for (struct conn *k = conns; k; k = k->next)
        if (strcmp(k->addr, addr) == 0) {
            *out = k->c;
            return 0;
        }
    struct conn *k = calloc(1, sizeof(*k));
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (bbs_client_open(addr, s->token, s->timeout, &k->c, err, errlen) != 0) {
        free(k);
        return -1;
    }
    snprintf(k->addr, sizeof(k->addr), "%s", addr);
    k->next = conns;
    conns = k;
    *out = k->c;
    return 0;
}

/* A connection that failed is dropped, so the next call reconnects (a
 * restarted server). */
static void drop_client(const char *addr)
{
    for (struct conn ** pp = &conns; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->addr, addr) == 0) {
            struct conn *k = *pp;
            *pp = k->next;
            bbs_client_close(k->c);
            free(k);
            return;
        }
}

/* Send a request to addr and wait for its reply.  @return 0 with rep
 * holding a successful reply, or -1 with why in err. */
static int call(ADIOI_BBFS_Server * s, const char *addr, struct bbs_buf *req,
                struct bbs_reply *rep, char *err, size_t errlen)
{
    struct bbs_client *c;
    if (client_for(s, addr, &c, err, errlen) != 0)
        return -1;
    if (bbs_client_call(c, req, rep, err, errlen) != 0) {
        drop_client(addr);
        return -1;
    }
    if (rep->status != BBS_OK) {
        snprintf(err, errlen, "bbserver %s: %s: %s", addr, bbs_status_str(rep->status),
                 rep->msg);
        return -1;
    }
    return 0;
}

static int err_server(const char *myname, int line, const char *msg)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, MPI_ERR_IO,
                                "**io", "bbfs: %s", msg);
}

/* --- finding and starting this node's server ------------------------------ */

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

/* A server of this node answering at the address in file. */
static int alive(ADIOI_BBFS_Server * s, const char *file, char *addr, size_t len)
{
    struct bbs_client *c;
    char err[512];
    if (read_addr(file, addr, len) != 0)
        return 0;
    drop_client(addr);          /* a fresh look: the old one may have exited */
    return client_for(s, addr, &c, err, sizeof(err)) == 0;
}

/* Start bbserver as a daemon (its own session, so the job's end does not
 * kill it: it stays while the node holds pending logs, up to its idle
 * limit) and wait for its address. */
static int start_server(ADIOI_BBFS_Server * s, const char *logdir, const char *file,
                        char *addr, size_t len, char *err, size_t errlen)
{
    char bin[PATH_MAX], state[PATH_MAX], logpath[PATH_MAX];
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(state, sizeof(state), "%s/.bbserver.%s.state", logdir, host);
    snprintf(logpath, sizeof(logpath), "%s/.bbserver.%s.log", logdir, host);
    server_binary(bin, sizeof(bin));
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start bbserver: fork: %s", strerror(errno));
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
        /* nothing of the MPI process: hydra waits for its PMI socket and
         * output pipes to close before the job ends */
        closefrom(3);
        const char *idle = getenv("BBFS_SERVER_IDLE");
        execlp(bin, bin, "--logdir", logdir, "--address-file", file, "--state", state,
               "--idle-limit", idle && *idle ? idle : "600", (char *) NULL);
        fprintf(stderr, "bbfs: cannot run %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    waitpid(pid, NULL, 0);
    for (double waited = 0; waited < s->timeout; waited += 0.02) {
        if (alive(s, file, addr, len))
            return 0;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "started %s for this node, but it did not answer within %.0f s "
             "(see %s; set BBFS_SERVER_BIN if it is not on PATH)", bin, s->timeout, logpath);
    return -1;
}

/* This node's server address, found or started; one process per node
 * calls it, under a lock so that two jobs do not start two. */
static int node_server(ADIOI_BBFS_Server * s, const char *logdir, char *addr, size_t len,
                       char *err, size_t errlen)
{
    char file[PATH_MAX], lock[PATH_MAX], host[256] = "";
    struct stat st;
    /* (named by host: a log directory several nodes share has one file
     * per node's server) */
    gethostname(host, sizeof(host) - 1);
    snprintf(file, sizeof(file), "%s/.bbserver.%s.addr", logdir, host);
    snprintf(lock, sizeof(lock), "%s/.bbserver.%s.lock", logdir, host);
    if (stat(logdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "no bbserver for this node: the log directory %s is missing "
                 "(bbfs_logdir, BBFS_LOGDIR)", logdir);
        return -1;
    }
    int lfd = open(lock, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (lfd >= 0)
        flock(lfd, LOCK_EX);
    int rc = alive(s, file, addr, len) ? 0 : start_server(s, logdir, file, addr, len, err,
                                                           errlen);
    if (lfd >= 0)
        close(lfd);             /* (releases the lock) */
    return rc;
}

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"));
}

/* --- open and close -------------------------------------------------------- */

/* Whether every process of the handle sees the same log directory (one
 * that the nodes share): a file rank 0 makes there is visible to all. */
static int shared_logdir(ADIO_File fd, const char *logdir)
{
    char probe[PATH_MAX];
    int rank, fd_probe = -1, sees, all;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0) {
        snprintf(probe, sizeof(probe), "%s/.bbfs-probe.%016llx", logdir,
                 (unsigned long long) ADIOI_BBFS_New_file_id(logdir));
        fd_probe = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    MPI_Bcast(probe, sizeof(probe), MPI_CHAR, 0, fd->comm);
    sees = access(probe, F_OK) == 0;
    MPI_Allreduce(&sees, &all, 1, MPI_INT, MPI_MIN, fd->comm);
    if (rank == 0 && fd_probe >= 0) {
        close(fd_probe);
        unlink(probe);
    }
    return all;
}

void ADIOI_BBFS_Server_open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SERVER_OPEN";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    const char *env = getenv("BBFS_SERVER");
    int nnodes, node_rank, err_here = 0;
    char err[1024] = "", source[PATH_MAX];
    MPI_Comm node;

    *error_code = MPI_SUCCESS;
    MPI_Comm_split_type(fd->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    int leader = node_rank == 0, one = leader;
    MPI_Allreduce(&one, &nnodes, 1, MPI_INT, MPI_SUM, fd->comm);
    int force = bf->hints.force_remote || env_true("BBFS_FORCE_REMOTE");
    const char *named = strcmp(bf->hints.server, "auto") != 0 ? bf->hints.server
        : env && *env ? env : NULL;
    /* Another handle of this file in this process that uses a server
     * (PnetCDF's MPI_COMM_SELF handle beside its collective one): this one
     * must attach to the same map, or readers through the other would
     * miss its writes.  The lowest process that has one tells the map. */
    const ADIOI_BBFS_Server *peer = NULL;
    for (const ADIOI_BBFS_Server * l = live; l && !peer; l = l->next_live)
        if (strcmp(l->bf->canonical, bf->canonical) == 0)
            peer = l;
    int mine_peer = peer ? s_rank(fd) : INT_MAX, peer_rank;
    MPI_Allreduce(&mine_peer, &peer_rank, 1, MPI_INT, MPI_MIN, fd->comm);
    if (nnodes == 1 && !force && !named && peer_rank == INT_MAX) {
        MPI_Comm_free(&node);
        return;                 /* one node: every process reads every log */
    }
    /* Without a usable log directory there is no server to start: a
     * writing open reports the directory with its own error class when the
     * logs start (MPI_ERR_NO_SUCH_FILE, MPI_ERR_ACCESS), and a read-only
     * one needs no logs (pending ones were replayed at this open). */
    struct stat st;
    int have_dir = stat(bf->hints.logdir, &st) == 0 && S_ISDIR(st.st_mode)
        && access(bf->hints.logdir, W_OK | X_OK) == 0, all_dir;
    MPI_Allreduce(&have_dir, &all_dir, 1, MPI_INT, MPI_MIN, fd->comm);
    if (!all_dir) {
        MPI_Comm_free(&node);
        return;
    }
    if (!force && !named && peer_rank == INT_MAX && shared_logdir(fd, bf->hints.logdir)) {
        MPI_Comm_free(&node);
        return;                 /* several nodes, one log directory: as on one node */
    }

    ADIOI_BBFS_Server *s = ADIOI_Calloc(1, sizeof(*s));
    MPI_Comm_rank(fd->comm, &s->rank);
    s->force_remote = force;
    s->timeout = bf->hints.server_timeout;
    if (bbs_token_find(NULL, 1, s->token, source, sizeof(source), err, sizeof(err)) != 0)
        err_here = 1;
    /* the node's server: found or started by the node's first process */
    if (!err_here && leader
        && node_server(s, bf->hints.logdir, s->node_addr, sizeof(s->node_addr), err,
                       sizeof(err)) != 0)
        err_here = 1;
    MPI_Bcast(s->node_addr, sizeof(s->node_addr), MPI_CHAR, 0, node);
    MPI_Comm_free(&node);
    if (named)
        snprintf(s->map_addr, sizeof(s->map_addr), "%s", named);
    else if (peer_rank != INT_MAX) {
        if (peer)
            memcpy(s->map_addr, peer->map_addr, sizeof(s->map_addr));
        MPI_Bcast(s->map_addr, sizeof(s->map_addr), MPI_CHAR, peer_rank, fd->comm);
    } else {
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
    if (!err_here && client_for(s, s->map_addr, &c, err, sizeof(err)) != 0)
        err_here = 1;
    int mine = err_here ? err_server(myname, __LINE__, err) : MPI_SUCCESS;
    *error_code = ADIOI_BBFS_Agree_error(fd->comm, myname, mine);
    if (*error_code != MPI_SUCCESS) {
        ADIOI_Free(s);
        return;
    }
    s->bf = bf;
    bf->srv = s;
    s->next_live = live;
    live = s;
}

void ADIOI_BBFS_Server_close(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s)
        return;
    set_dirty(s, 0);
    for (ADIOI_BBFS_Server ** pp = &live; *pp; pp = &(*pp)->next_live)
        if (*pp == s) {
            *pp = s->next_live;
            break;
        }
    ADIOI_BBFS_Server_forget(bf);
    for (int i = 0; i < s->nlogs; i++) {
        close(s->logs[i].fd);
        ADIOI_Free(s->logs[i].path);
    }
    ADIOI_BBFS_FREE(s->logs);
    ADIOI_BBFS_FREE(s->notes);
    ADIOI_Free(s);
    bf->srv = NULL;
}

/* --- attach ---------------------------------------------------------------- */

/* This process's handles with notes not yet attached.  A write through
 * one handle after writes through another (PnetCDF's collective and
 * independent handles of one file) must reach the map after them, as the
 * logs' STAMP records order them for the replay: the others' notes are
 * attached first (ADIOI_BBFS_Server_switch). */
static ADIOI_BBFS_Server *dirty;

static void set_dirty(ADIOI_BBFS_Server * s, int on)
{
    if (s->is_dirty == on)
        return;
    if (on) {
        s->next_dirty = dirty;
        dirty = s;
    } else
        for (ADIOI_BBFS_Server ** pp = &dirty; *pp; pp = &(*pp)->next_dirty)
            if (*pp == s) {
                *pp = s->next_dirty;
                break;
            }
    s->is_dirty = on;
}

/* Each logged run is noted as it is written (ADIOI_BBFS_Server_note), in
 * write order, and an attach sends the notes since the last one: the
 * server applies them in that order, so a later write of this process wins
 * as it does in its own index.  A run that continues the last note's
 * stride with equal blocks and contiguous data extends it, so a vector
 * written block by block (HDF5's independent strided writes) is one
 * record, not one per block. */
void ADIOI_BBFS_Server_note(ADIOI_BBFS_File * bf, uint64_t off, uint64_t len, uint64_t stride,
                            uint64_t count, uint64_t pos)
{
    ADIOI_BBFS_Server *s = bf->srv;
    if (!s || len == 0 || count == 0)
        return;
    if (count > 1 && ((int64_t) stride < 0 || stride < len)) {
        /* a run that goes backwards or overlaps itself: block by block,
         * in order (an extent's blocks go forwards and never overlap) */
        for (uint64_t k = 0; k < count; k++)
            ADIOI_BBFS_Server_note(bf, off + k * stride, len, 0, 1, pos + k * len);
        return;
    }
    if (count == 1)
        stride = 0;
    struct bbs_extent *last = s->nnotes ? &s->notes[s->nnotes - 1] : NULL;
    if (last && last->len == len && last->pos + last->count * last->len == pos
        && s->notes_pieces + count <= BBS_MAX_PIECES) {
        uint64_t step = last->count > 1 ? last->stride : off - last->off;
        uint64_t next = last->off + last->count * step;
        if (off > last->off && off == next && step >= len && (count == 1 || stride == step)) {
            last->stride = step;
            last->count += count;
            s->notes_pieces += count;
            return;
        }
    }
    if (s->nnotes == s->capnotes) {
        s->capnotes = s->capnotes ? 2 * s->capnotes : 256;
        s->notes = ADIOI_Realloc(s->notes, sizeof(*s->notes) * s->capnotes);
    }
    s->notes[s->nnotes++] = (struct bbs_extent) { off, len, count, stride, pos };
    s->notes_pieces += count;
    set_dirty(s, 1);
}

static void attach(ADIOI_BBFS_File * bf, int *error_code);

void ADIOI_BBFS_Server_attach(ADIO_File fd, int *error_code)
{
    attach(ADIOI_BBFS_Private(fd), error_code);
}

void ADIOI_BBFS_Server_switch(ADIOI_BBFS_File * bf)
{
    for (ADIOI_BBFS_Server * s = dirty, *next; s; s = next) {
        next = s->next_dirty;
        if (s->bf != bf) {
            int err;            /* (shows at that handle's next sync or close) */
            attach(s->bf, &err);
        }
    }
}

static void attach(ADIOI_BBFS_File * bf, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_SERVER_ATTACH";
    ADIOI_BBFS_Server *s = bf->srv;
    struct bbs_writer w;
    char err[1024];

    *error_code = MPI_SUCCESS;
    if (!s || !bf->writer || s->nnotes == 0)
        return;
    w.session = bf->file_id;
    w.rank = (uint32_t) s->rank;
    w.node = s->node_addr;
    w.datalog = logfs_writer_datalog_path(bf->writer);
    /* the bytes must be in the datalog before anyone reads them */
    struct logfs_error le;
    int rc = logfs_writer_flush(bf->writer, &le);
    if (rc != LOGFS_OK) {
        *error_code = ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, le.msg);
        return;
    }
    /* batches within the server's limits, in order */
    size_t at = 0;
    while (at < s->nnotes) {
        size_t n = 0;
        uint64_t pieces = 0;
        while (at + n < s->nnotes && n < BBS_MAX_RECORDS
               && pieces + s->notes[at + n].count <= BBS_MAX_PIECES)
            pieces += s->notes[at + n++].count;
        struct bbs_buf b = { 0 };
        struct bbs_reply r;
        int failed = bbs_enc_attach(&b, ++s->attaches, s->token, bf->canonical, &w,
                                    s->notes + at, (uint32_t) n) != 0;
        if (failed)
            snprintf(err, sizeof(err), "out of memory attaching");
        else
            failed = call(s, s->map_addr, &b, &r, err, sizeof(err)) != 0;
        bbs_buf_free(&b);
        if (failed) {
            *error_code = err_server(myname, __LINE__, err);
            return;             /* the notes stay: the next sync point tries again */
        }
        at += n;
    }
    s->nnotes = 0;
    s->notes_pieces = 0;
    set_dirty(s, 0);
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
    }
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
        s->writers = NULL;
        s->nwriters = s->capwriters = 0;
    }
}

int ADIOI_BBFS_Server_view(ADIOI_BBFS_File * bf, struct logfs_rangemap **out,
                           ADIO_Offset * end)
{
    static char myname[] = "ADIOI_BBFS_SERVER_QUERY";
    ADIOI_BBFS_Server *s = bf->srv;
    struct logfs_rangemap *map;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    char err[1024];
    uint64_t from = 0;
    int rc = LOGFS_OK;

    *out = NULL;
    *end = 0;
    ADIOI_BBFS_Server_forget(bf);
    if (logfs_rangemap_create(&map) != LOGFS_OK)
        return err_server(myname, __LINE__, "out of memory for the view");
    do {
        s->queries++;
        if (bbs_enc_query(&b, s->queries, s->token, bf->canonical, from, UINT64_MAX) != 0
            || call(s, s->map_addr, &b, &r, err, sizeof(err)) != 0) {
            bbs_buf_free(&b);
            logfs_rangemap_destroy(map);
            return err_server(myname, __LINE__, err);
        }
        struct bbs_writer *w = ADIOI_Malloc(sizeof(*w) * (r.nwriters ? r.nwriters : 1));
        int32_t *idx = ADIOI_Malloc(sizeof(*idx) * (r.nwriters ? r.nwriters : 1));
        bbs_reply_writers(&r, w);
        for (uint32_t i = 0; i < r.nwriters; i++)
            idx[i] = writer_index(s, &w[i]);
        for (uint32_t i = 0; i < r.npieces && rc == LOGFS_OK; i++) {
            struct bbs_piece p;
            bbs_reply_piece(&r, i, &p);
            rc = logfs_rangemap_insert(map, p.start, p.end, idx[p.writer], p.pos);
            if ((ADIO_Offset) p.end > *end)
                *end = (ADIO_Offset) p.end;
        }
        from = r.more;
        ADIOI_Free(w);
        ADIOI_Free(idx);
    } while (rc == LOGFS_OK && from != UINT64_MAX);
    bbs_buf_free(&b);
    if (rc != LOGFS_OK) {
        logfs_rangemap_destroy(map);
        return err_server(myname, __LINE__, "out of memory for the view");
    }
    *out = map;
    return MPI_SUCCESS;
}

/* --- reads of others' bytes ------------------------------------------------------ */

static int local_log(ADIOI_BBFS_Server * s, const char *path)
{
    for (int i = 0; i < s->nlogs; i++)
        if (strcmp(s->logs[i].path, path) == 0)
            return s->logs[i].fd;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    s->logs = ADIOI_Realloc(s->logs, sizeof(*s->logs) * (s->nlogs + 1));
    s->logs[s->nlogs].path = ADIOI_Strdup(path);
    s->logs[s->nlogs].fd = fd;
    s->nlogs++;
    return fd;
}

int ADIOI_BBFS_Server_is_own(const ADIOI_BBFS_File * bf, int writer)
{
    const ADIOI_BBFS_Server *s = bf->srv;
    return writer >= 0 && writer < s->nwriters && s->writers[writer].session == bf->file_id
        && (int) s->writers[writer].rank == s->rank;
}

int ADIOI_BBFS_Server_read(ADIOI_BBFS_File * bf, int writer, uint64_t pos, void *buf,
                           size_t len)
{
    static char myname[] = "ADIOI_BBFS_SERVER_READ";
    ADIOI_BBFS_Server *s = bf->srv;
    char err[1024];

    if (writer < 0 || writer >= s->nwriters)
        return err_server(myname, __LINE__, "a piece of the view names no writer");
    const struct bbs_writer *w = &s->writers[writer];
    int fd = s->force_remote ? -1 : local_log(s, w->datalog);
    if (fd >= 0) {
        size_t got = 0;
        while (got < len) {
            ssize_t k = pread(fd, (char *) buf + got, len - got, (off_t) (pos + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                snprintf(err, sizeof(err), "reading %s at %llu: %s", w->datalog,
                         (unsigned long long) (pos + got), k < 0 ? strerror(errno)
                         : "shorter than the server's map says");
                return err_server(myname, __LINE__, err);
            }
            got += (size_t) k;
        }
        return MPI_SUCCESS;
    }
    /* another node's log (or forced): through that node's server */
    for (size_t got = 0; got < len;) {
        size_t n = len - got > BBS_MAX_READ ? BBS_MAX_READ : len - got;
        struct bbs_buf b = { 0 };
        struct bbs_reply r;
        int rc = bbs_enc_read(&b, 0, s->token, w->datalog, pos + got, n);
        if (rc == 0)
            rc = call(s, w->node, &b, &r, err, sizeof(err));
        if (rc == 0 && r.len != n) {
            snprintf(err, sizeof(err), "bbserver %s sent %llu bytes of %s, not %zu", w->node,
                     (unsigned long long) r.len, w->datalog, n);
            rc = -1;
        }
        if (rc == 0)
            memcpy((char *) buf + got, r.data, n);
        bbs_buf_free(&b);
        if (rc != 0)
            return err_server(myname, __LINE__, err);
        got += n;
    }
    return MPI_SUCCESS;
}

void ADIOI_BBFS_Server_replayed(ADIOI_BBFS_File * bf)
{
    ADIOI_BBFS_Server *s = bf->srv;
    struct bbs_buf b = { 0 };
    struct bbs_reply r;
    char err[1024];
    if (!s || s->rank != 0)
        return;
    /* The canonical file holds everything now; a failure only leaves a map
     * that the next replay's message drops (reads then find no log and
     * report it), so it is reported, not fatal. */
    if (bbs_enc_replayed(&b, 0, s->token, bf->canonical) == 0
        && call(s, s->map_addr, &b, &r, err, sizeof(err)) != 0)
        fprintf(stderr, "bbfs: %s: could not tell bbserver the logs were replayed: %s\n",
                bf->canonical, err);
    bbs_buf_free(&b);
}
