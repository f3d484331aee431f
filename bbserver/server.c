/*
 * The bbserver daemon (see server.h).
 *
 * A request's path: the active-message callback takes the bytes (eager
 * copy, or a rendezvous started right after progress returns) into a job
 * tied to its connection; once complete the job goes to the FIFO of the
 * worker that owns its file; the worker runs bbs_serve and puts the reply
 * on the done list and writes the wake-up eventfd; the talking thread
 * sends it on the connection's endpoint.  A small map request (not a read
 * or an export, which touch the disk) whose worker is idle with an empty
 * FIFO is served by the talking thread itself: order per file is the same,
 * and it saves two thread wake-ups, which cost about 35 us each between
 * the cores of a VM (more than the request itself).  A connection whose peer died is
 * marked by its error callback and closed once no job refers to it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server.h"
#include "bigbuf.h"
#include "../logfs/coding.h"
#include "../logfs/fault.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "far.h"
#include "serve.h"
#include "state.h"
#include "ucx.h"

struct conn {
    ucp_ep_h ep;
    int dead;                   /* the peer is gone: replies are dropped */
    int refs;                   /* jobs that will reply on it */
    struct conn *next;
};

struct job {
    struct conn *conn;
    struct bbs_incoming *in;
    struct bbs_buf reply;
    struct job *next;
};

/* A FIFO of jobs with its lock. */
struct queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct job *head, *tail;
};

struct worker {
    struct server *s;
    pthread_t thread;
    struct queue q;
    int busy;                   /* serving a job (under q.lock) */
    struct bbs_ownmap *map;
};

struct server {
    const struct bbs_server_opts *o;
    struct bbs_ucx u;
    ucp_listener_h listener;
    struct bbs_serve_conf conf;
    struct bbs_stats stats;     /* shared by the workers (atomic counters) */
    struct worker *w;
    int nw;
    struct conn *conns;
    int nconns;
    struct job *receiving;      /* rendezvous receives under way */
    struct queue done;          /* replies to send */
    int wake;                   /* eventfd: a reply is ready */
    int stop;                   /* workers: leave */
    double last_busy;
};

static void say(const struct server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct server *s, const char *fmt, ...)
{
    va_list ap;
    if (!s->o->verbose)
        return;
    va_start(ap, fmt);
    fprintf(stderr, "bbserver: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void queue_init(struct queue *q)
{
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, NULL);
    q->head = q->tail = NULL;
}

static void queue_push(struct queue *q, struct job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->tail)
        q->tail->next = j;
    else
        __atomic_store_n(&q->head, j, __ATOMIC_RELEASE);        /* (queue_peek) */
    q->tail = j;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

/* Whether the queue holds a job, without the lock: a hint for a poller. */
static int queue_peek(struct queue *q)
{
    return __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) != NULL;
}

/* The whole queue, in order (NULL if empty); does not wait. */
static struct job *queue_take_all(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    struct job *j = q->head;
    __atomic_store_n(&q->head, NULL, __ATOMIC_RELAXED);
    q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    return j;
}

/* Which worker owns the file a request names: by hash of the name, so one
 * file's requests are served in order by one thread.  Requests without a
 * file (ping, read) and ones too broken to name one go to worker 0's
 * neighbours by their bytes, which spreads reads. */
static int worker_of(const struct server *s, const uint8_t *msg, size_t len)
{
    const size_t name_at = 16 + BBS_TOKEN_LEN + 4;      /* header, token, str length */
    uint16_t op = bbs_peek_op(msg, len);
    uint64_t h;
    if (s->nw == 1)
        return 0;
    if (op != BBS_PING && op != BBS_READ && len > name_at)
        h = logfs_fnv_bytes(LOGFS_FNV_START, msg + name_at,
                            strnlen((const char *) msg + name_at, len - name_at));
    else
        h = logfs_fnv_bytes(LOGFS_FNV_START, msg, len);
    return (int) (h % (uint64_t) s->nw);
}

static void serve_job(struct server *s, struct worker *w, struct job *j)
{
    if (bbs_serve(w->map, &s->conf, &s->stats, j->in->buf, j->in->len, &j->reply) != 0)
        j->reply.len = 0;       /* no memory even for the reply: the client times out */
}

/* Serve j on the talking thread if it is a small map request and its
 * worker has nothing before it (so the file's order holds); @return 1 if
 * served. */
static int serve_here(struct server *s, struct worker *w, struct job *j)
{
    enum { SMALL = 64 * 1024 };
    uint16_t op = bbs_peek_op(j->in->buf, j->in->len);
    int idle;
    if (op == BBS_READ || op == BBS_EXPORT || op == BBS_REMOVE || j->in->len > SMALL)
        return 0;
    pthread_mutex_lock(&w->q.lock);
    idle = !w->q.head && !w->busy;
    pthread_mutex_unlock(&w->q.lock);
    if (!idle)
        return 0;               /* only this thread queues: it stays idle while we serve */
    serve_job(s, w, j);
    return 1;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct server *s = w->s;
    for (;;) {
        pthread_mutex_lock(&w->q.lock);
        while (!w->q.head && !s->stop)
            pthread_cond_wait(&w->q.cond, &w->q.lock);
        struct job *j = w->q.head;
        if (j) {
            w->q.head = j->next;
            if (!w->q.head)
                w->q.tail = NULL;
            w->busy = 1;
        }
        pthread_mutex_unlock(&w->q.lock);
        if (!j)
            return NULL;        /* stop, and the queue is empty */
        serve_job(s, w, j);
        pthread_mutex_lock(&w->q.lock);
        w->busy = 0;
        pthread_mutex_unlock(&w->q.lock);
        queue_push(&s->done, j);
        uint64_t one = 1;
        if (write(s->wake, &one, sizeof(one)) < 0)
            perror("bbserver: eventfd");
    }
}

static struct conn *conn_of(struct server *s, ucp_ep_h ep)
{
    for (struct conn *c = s->conns; c; c = c->next)
        if (c->ep == ep)
            return c;
    return NULL;
}

static void conn_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    struct conn *c = arg;
    (void) ep;
    (void) status;
    c->dead = 1;                /* closed by the talking thread (close_dead) */
}

static void on_conn_request(ucp_conn_request_h req, void *arg)
{
    struct server *s = arg;
    struct conn *c = calloc(1, sizeof(*c));
    ucp_ep_params_t p;

    if (!c) {
        ucp_listener_reject(s->listener, req);
        return;
    }
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
        | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.conn_request = req;
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = conn_error;
    p.err_handler.arg = c;
    ucs_status_t st = ucp_ep_create(s->u.worker, &p, &c->ep);
    if (st != UCS_OK) {
        fprintf(stderr, "bbserver: cannot accept a client: %s\n", ucs_status_string(st));
        free(c);
        return;
    }
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
    say(s, "client connected (%d now)", s->nconns);
}

static ucs_status_t on_request(void *arg, const void *header, size_t header_length,
                               void *data, size_t length, const ucp_am_recv_param_t *param)
{
    struct server *s = arg;
    struct conn *c = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
        ? conn_of(s, param->reply_ep) : NULL;
    (void) header;
    (void) header_length;
    if (!c || c->dead || length > BBS_MAX_MSG)
        return UCS_OK;          /* nobody to answer, or too big to take: dropped */
    struct job *j = calloc(1, sizeof(*j));
    if (!j || (j->in = bbs_incoming_take(data, length, param)) == NULL) {
        free(j);
        return UCS_OK;
    }
    j->conn = c;
    c->refs++;
    s->last_busy = bbs_now();
    j->next = s->receiving;
    s->receiving = j;
    return j->in->desc ? UCS_INPROGRESS : UCS_OK;
}

/* A reply sent (or failed, or its client gone): its buffer is given back
 * (bigbuf.h) with its job, and its request freed here, at its end.  (A
 * request freed earlier gets no callback: until session 56 every reply
 * sent by rendezvous, a read's 64 MiB ones, was kept until the server
 * exited, 4 GiB of them for one 4 GiB read.) */
static void send_done(void *request, ucs_status_t status, void *user_data)
{
    (void) status;
    struct job *j = user_data;
    bbs_buf_free(&j->reply);
    free(j);
    if (request)
        ucp_request_free(request);
}

/* Send j's reply (if its client is still there); j goes with its reply,
 * its request freed with it. */
static void send_reply(struct job *j)
{
    struct conn *c = j->conn;
    bbs_incoming_free(j->in);
    j->in = NULL;
    if (c->dead || !j->reply.len)
        send_done(NULL, UCS_OK, j);
    else {
        ucp_request_param_t p;
        memset(&p, 0, sizeof(p));
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
            | UCP_OP_ATTR_FIELD_FLAGS;
        p.cb.send = send_done;
        p.user_data = j;
        p.flags = UCP_AM_SEND_FLAG_REPLY;
        ucs_status_ptr_t r = ucp_am_send_nbx(c->ep, BBS_AM_REPLY, NULL, 0, j->reply.p,
                                             j->reply.len, &p);
        if (r == NULL || UCS_PTR_IS_ERR(r))
            send_done(NULL, UCS_PTR_STATUS(r), j);      /* (no callback comes) */
    }
    c->refs--;
}

/* Received jobs to their workers; rendezvous receives started. */
static void dispatch(struct server *s)
{
    struct job **pp = &s->receiving;
    while (*pp) {
        struct job *j = *pp;
        if (j->in->desc)
            bbs_incoming_start(&s->u, j->in);
        if (!j->in->done) {
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        if (j->in->status != UCS_OK) {  /* the client went away mid-message */
            j->conn->refs--;
            bbs_incoming_free(j->in);
            free(j);
            continue;
        }
        struct worker *w = &s->w[worker_of(s, j->in->buf, j->in->len)];
        if (serve_here(s, w, j))
            send_reply(j);
        else
            queue_push(&w->q, j);
    }
}

static void send_replies(struct server *s)
{
    for (struct job *j = queue_take_all(&s->done), *next; j; j = next) {
        next = j->next;
        send_reply(j);
    }
}

static void close_dead(struct server *s)
{
    for (struct conn **pp = &s->conns; *pp;) {
        struct conn *c = *pp;
        if (!c->dead || c->refs) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        bbs_ep_close(&s->u, c->ep, 1, 2);
        free(c);
        s->nconns--;
        s->last_busy = bbs_now();
        say(s, "client gone (%d left)", s->nconns);
    }
}

/* The port a previous server left in the address file, if it listened on
 * this same name: tried first, so that manifests naming that address reach
 * the restarted server (0: none). */
static uint16_t previous_port(const struct bbs_server_opts *o)
{
    char line[512], want[300];
    unsigned port = 0;
    FILE *f = o->address_file ? fopen(o->address_file, "r") : NULL;
    if (!f)
        return 0;
    snprintf(want, sizeof(want), "%s:%%u", o->listen);
    if (!fgets(line, sizeof(line), f) || sscanf(line, want, &port) != 1 || port > 65535)
        port = 0;
    fclose(f);
    return (uint16_t) port;
}

static ucs_status_t listen_on(struct server *s, uint16_t port, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    ucp_listener_params_t lp;

    if (bbs_addr_resolve(s->o->listen, port, &ss, err, errlen) != 0)
        return UCS_ERR_INVALID_ADDR;
    memset(&lp, 0, sizeof(lp));
    lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    lp.sockaddr.addr = (const struct sockaddr *) &ss;
    lp.sockaddr.addrlen = sizeof(struct sockaddr_in);
    lp.conn_handler.cb = on_conn_request;
    lp.conn_handler.arg = s;
    ucs_status_t st = ucp_listener_create(s->u.worker, &lp, &s->listener);
    if (st != UCS_OK)
        snprintf(err, errlen, "cannot listen on %s:%u: %s", s->o->listen, port,
                 ucs_status_string(st));
    return st;
}

static int start_listening(struct server *s, char *err, size_t errlen)
{
    ucp_listener_attr_t la;
    ucs_status_t st;
    uint16_t again = s->o->port ? 0 : previous_port(s->o);

    if (!again || (st = listen_on(s, again, err, errlen)) != UCS_OK) {
        if (again)
            say(s, "%s; any free port instead", err);
        if (listen_on(s, s->o->port, err, errlen) != UCS_OK)
            return -1;
    }
    la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    if ((st = ucp_listener_query(s->listener, &la)) != UCS_OK) {
        snprintf(err, errlen, "listener: %s", ucs_status_string(st));
        return -1;
    }
    uint16_t port = ntohs(((struct sockaddr_in *) &la.sockaddr)->sin_port);
    char addr[300];
    snprintf(addr, sizeof(addr), "%s:%u", s->o->listen, port);
    printf("bbserver listening on %s (pid %d, %d workers)\n", addr, (int) getpid(), s->nw);
    fflush(stdout);
    if (s->o->address_file) {
        char tmp[4200];
        snprintf(tmp, sizeof(tmp), "%s.%d.tmp", s->o->address_file, (int) getpid());
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%s\n", addr) < 0 || fclose(f) != 0
            || rename(tmp, s->o->address_file) != 0) {
            snprintf(err, errlen, "cannot write the address file %s: %s", s->o->address_file,
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Whether a log directory holds a writer's log (a .metalog): pending logs
 * that a later job on other nodes may need to read through this server. */
static int holds_logs(const struct bbs_server_opts *o)
{
    int found = 0;
    for (int i = 0; i < o->nlogdirs && !found; i++) {
        DIR *d = opendir(o->logdirs[i]);
        struct dirent *e;
        while (d && !found && (e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            found = n > 8 && strcmp(e->d_name + n - 8, ".metalog") == 0;
        }
        if (d)
            closedir(d);
    }
    return found;
}

static uint64_t files_held(const struct server *s)
{
    uint64_t n = 0;
    for (int i = 0; i < s->nw; i++)
        n += bbs_own_nfiles(s->w[i].map);
    return n;
}

static uint64_t files_held_cb(void *arg)
{
    return files_held(arg);
}

/* Loaded files go to the worker that owns each name. */
static struct bbs_ownmap *map_for_file(void *arg, const char *file)
{
    struct server *s = arg;
    size_t n = strlen(file);
    uint8_t fake[16 + BBS_TOKEN_LEN + 4 + 4096 + 1] = { 0 };
    fake[6] = BBS_STAT;
    if (n > 4096)
        return s->w[0].map;
    memcpy(fake + 16 + BBS_TOKEN_LEN + 4, file, n + 1);
    return s->w[worker_of(s, fake, 16 + BBS_TOKEN_LEN + 4 + n + 1)].map;
}

int bbs_server_run(const struct bbs_server_opts *o)
{
    struct server s;
    char err[512];
    int sfd = -1, ep = -1, rc = 1;
    struct bbs_far *far = NULL;
    sigset_t mask;

    memset(&s, 0, sizeof(s));
    s.o = o;
    s.nw = o->workers > 0 ? o->workers : 1;
    s.wake = -1;
    memcpy(s.conf.token, o->token, BBS_TOKEN_LEN);
    s.conf.logdirs = o->logdirs;
    s.conf.nlogdirs = (size_t) o->nlogdirs;
    s.conf.pid = (uint32_t) getpid();
    s.conf.nfiles = files_held_cb;
    s.conf.nfiles_arg = &s;
    queue_init(&s.done);
    s.w = calloc((size_t) s.nw, sizeof(*s.w));
    if (!s.w)
        return 1;
    for (int i = 0; i < s.nw; i++) {
        s.w[i].s = &s;
        queue_init(&s.w[i].q);
        if ((s.w[i].map = bbs_own_create()) == NULL) {
            fprintf(stderr, "bbserver: out of memory\n");
            return 1;
        }
    }
    if (o->state) {
        uint64_t nfiles = 0;
        if (bbs_state_load(o->state, map_for_file, &s, &nfiles, &s.conf.incarnation, err,
                           sizeof(err)) != 0) {
            fprintf(stderr, "bbserver: %s\n", err);
            return 1;
        }
        /* The maps in memory are the state now: after a crash, a restart
         * must start a new life, not load this older one (bbserver/state.h). */
        if (unlink(o->state) != 0 && errno != ENOENT) {
            fprintf(stderr, "bbserver: cannot remove the state file %s once loaded: %s\n",
                    o->state, strerror(errno));
            return 1;
        }
        if (nfiles)
            printf("bbserver: loaded %llu files from %s\n", (unsigned long long) nfiles,
                   o->state);
    }
    /* A new life of the maps unless they were loaded: a client that relied
     * on the old ones learns they are gone (any value but 0 will do). */
    while (s.conf.incarnation == 0)
        s.conf.incarnation = logfs_fault_clock() ^ ((uint64_t) getpid() << 32);

    /* SIGTERM and SIGINT arrive through a signalfd, in the epoll loop. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);    /* (before threads: they inherit it) */
    sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    /* (a drain of a file written on several nodes reads the other nodes'
     * logs through their servers, as this job's token) */
    struct logfs_drain_far far_calls;
    far = bbs_far_open(o->token, 10);
    if (!far) {
        fprintf(stderr, "bbserver: out of memory\n");
        goto out;
    }
    bbs_far_calls(far, &far_calls);
    struct bbs_drains_conf dc = { o->drain_journal, o->drain_nice, o->drain_threads,
        o->drain_rate, 0, 0, &far_calls };
    if (bbs_drains_start(&dc, &s.conf.drains, err, sizeof(err)) != 0) {
        fprintf(stderr, "bbserver: %s\n", err);
        goto out;
    }
    s.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (sfd < 0 || s.wake < 0 || ep < 0) {
        perror("bbserver: signalfd/eventfd/epoll");
        goto out;
    }
    if (bbs_ucx_open(&s.u, err, sizeof(err)) != 0 || bbs_ucx_set_handler(&s.u, BBS_AM_REQUEST, on_request, &s, err, sizeof(err))
        || start_listening(&s, err, sizeof(err)) != 0) {
        fprintf(stderr, "bbserver: %s\n", err);
        goto out;
    }
    int fds[3] = { s.u.efd, s.wake, sfd };
    for (int i = 0; i < 3; i++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0) {
            perror("bbserver: epoll_ctl");
            goto out;
        }
    }
    for (int i = 0; i < s.nw; i++)
        if (pthread_create(&s.w[i].thread, NULL, worker_main, &s.w[i]) != 0) {
            fprintf(stderr, "bbserver: cannot start worker threads\n");
            s.nw = i;
            goto stop;
        }

    s.last_busy = bbs_now();
    double poll_until = 0;
    for (;;) {
        int busy = queue_peek(&s.done);        /* (a reply to send: a request may follow) */
        while (ucp_worker_progress(s.u.worker))
            busy = 1;
        dispatch(&s);
        send_replies(&s);
        close_dead(&s);
        if (bbs_drains_unfinished(s.conf.drains))
            s.last_busy = bbs_now();    /* (a drain keeps the server up) */
        if (o->idle_limit > 0 && s.nconns == 0 && !s.receiving && files_held(&s) == 0
            && bbs_now() - s.last_busy > o->idle_limit) {
            if (holds_logs(o)) {
                s.last_busy = bbs_now();    /* look again after another idle limit */
                say(&s, "idle, but the log directory holds logs: staying");
            } else {
                printf("bbserver: idle for %.0f s with no file, no log and no client; "
                       "exiting\n", o->idle_limit);
                rc = 0;
                break;
            }
        }
        /* Another request often follows within microseconds, and waking
         * from epoll costs about 40 us on a VM: after handling messages,
         * poll for more a little before sleeping.  An empty poll yields,
         * so a rank (or a client) that wants the core gets it. */
        if (busy && o->poll_us > 0)
            poll_until = bbs_now() + o->poll_us * 1e-6;
        if (queue_peek(&s.done))
            continue;           /* a worker's reply is ready: send it */
        if (bbs_now() < poll_until) {
            sched_yield();
            continue;
        }
        ucs_status_t st = ucp_worker_arm(s.u.worker);
        if (st == UCS_ERR_BUSY)
            continue;           /* more events came in: progress again */
        if (st != UCS_OK) {
            fprintf(stderr, "bbserver: ucp_worker_arm: %s\n", ucs_status_string(st));
            break;
        }
        struct epoll_event evs[3];
        int n = epoll_wait(ep, evs, 3, s.receiving ? 10 : 1000);
        if (n < 0 && errno != EINTR) {
            perror("bbserver: epoll_wait");
            break;
        }
        if (n == 0 && !s.receiving)
            bbs_big_trim();     /* a second with nothing to do: the reply buffers go */
        int stop = 0;
        for (int i = 0; i < n; i++) {
            uint64_t v;
            if (evs[i].data.fd == s.wake && read(s.wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
                perror("bbserver: eventfd");
            if (evs[i].data.fd == sfd) {
                struct signalfd_siginfo si;
                if (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                    printf("bbserver: signal %u; saving state and exiting\n", si.ssi_signo);
                    stop = 1;
                }
            }
        }
        if (stop) {
            rc = 0;
            break;
        }
    }

  stop:
    for (int i = 0; i < s.nw; i++) {
        pthread_mutex_lock(&s.w[i].q.lock);
        s.stop = 1;
        pthread_cond_broadcast(&s.w[i].q.cond);
        pthread_mutex_unlock(&s.w[i].q.lock);
    }
    for (int i = 0; i < s.nw; i++)
        pthread_join(s.w[i].thread, NULL);
    send_replies(&s);           /* what the workers finished */
    bbs_drains_stop(s.conf.drains);     /* (the running one stops; the journal keeps it) */
    s.conf.drains = NULL;
    if (o->state && rc == 0) {
        struct bbs_ownmap *maps[s.nw];
        for (int i = 0; i < s.nw; i++)
            maps[i] = s.w[i].map;
        if (bbs_state_save(o->state, maps, s.nw, s.conf.incarnation, err, sizeof(err)) != 0) {
            fprintf(stderr, "bbserver: %s\n", err);
            rc = 1;
        } else
            printf("bbserver: saved %llu files to %s\n", (unsigned long long) files_held(&s),
                   o->state);
    }
    for (struct conn *c = s.conns; c; c = c->next)
        c->dead = 1;
    close_dead(&s);
  out:
    bbs_drains_stop(s.conf.drains);
    bbs_far_close(far);         /* (after the drains: they use it) */
    if (s.listener)
        ucp_listener_destroy(s.listener);
    bbs_ucx_close(&s.u);
    if (ep >= 0)
        close(ep);
    if (sfd >= 0)
        close(sfd);
    if (s.wake >= 0)
        close(s.wake);
    for (int i = 0; i < s.nw || (i < (o->workers > 0 ? o->workers : 1) && s.w); i++)
        if (s.w[i].map)
            bbs_own_destroy(s.w[i].map);
    free(s.w);
    fflush(stdout);
    return rc;
}
