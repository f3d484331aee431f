/*
 * bbserver's background drains (see drains.h): a list of files to drain,
 * in the order asked, served by one thread; ended drains are remembered a
 * while for bbsctl wait and status.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "drains.h"
#include "../logfs/drain.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct drain {
    char *path;
    int state;
    uint64_t done, total, epochs, writes;
    uint32_t tries;
    int again;                  /* asked again while running */
    double queued_at, started_at, ended_at, retry_at;
    char error[LOGFS_ERRMSG_MAX + 64];
    struct drain *next;
};

struct bbs_drains {
    struct bbs_drains_conf c;
    char *journal;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    int has_thread;
    int stop;
    struct drain *todo;         /* queued, held and running, in the order asked */
    struct drain *ended;        /* newest first */
    size_t nended;
    /* the drain's buffers, kept while drains follow one another (the
     * thread's alone); let go after KEEP_IDLE_S with nothing to drain */
    struct logfs_drain_buffers *keep;
};

#define KEEP_IDLE_S 10.0

const char *bbs_drain_state_name(int state)
{
    static const char *const names[] = { "none", "queued", "held", "running", "done",
        "failed"
    };
    return state >= 0 && state < BBS_DRAIN_NUM_STATES ? names[state] : "?";
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void drain_free(struct drain *x)
{
    if (x) {
        free(x->path);
        free(x);
    }
}

/* The files not drained yet, for a restarted server (under the lock).  A
 * failure costs only the restart's memory of them (their sessions stay
 * pending either way): said, not fatal. */
static void journal_write(struct bbs_drains *d)
{
    char tmp[4200];
    if (!d->journal)
        return;
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", d->journal, (int) getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f != NULL;
    for (struct drain *x = d->todo; x && ok; x = x->next)
        ok = fprintf(f, "%s\n", x->path) >= 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, d->journal) != 0) {
        fprintf(stderr, "bbserver: cannot write the drain journal %s: %s (a restart will not "
                "know the drains queued now; their logs stay pending)\n", d->journal,
                strerror(errno));
        unlink(tmp);
    }
}

static struct drain *find(struct drain *list, const char *path)
{
    for (struct drain *x = list; x; x = x->next)
        if (!strcmp(x->path, path))
            return x;
    return NULL;
}

static struct drain *enqueue(struct bbs_drains *d, const char *path)
{
    struct drain *x = calloc(1, sizeof(*x)), **pp = &d->todo;
    if (!x || !(x->path = strdup(path))) {
        free(x);
        return NULL;
    }
    x->state = BBS_DRAIN_QUEUED;
    x->queued_at = now_s();
    while (*pp)
        pp = &(*pp)->next;
    *pp = x;
    return x;
}

/* Forget the oldest ended drains beyond the number kept. */
static void trim_ended(struct bbs_drains *d)
{
    size_t keep = d->c.keep ? d->c.keep : 1024, i = 0;
    for (struct drain **pp = &d->ended; *pp;) {
        if (++i <= keep) {
            pp = &(*pp)->next;
            continue;
        }
        struct drain *x = *pp;
        *pp = x->next;
        drain_free(x);
        d->nended--;
    }
}

static void unlink_todo(struct bbs_drains *d, struct drain *x)
{
    for (struct drain **pp = &d->todo; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            return;
        }
}

/* Forget an ended drain of path (a new one replaces it). */
static void forget_ended(struct bbs_drains *d, const char *path)
{
    for (struct drain **pp = &d->ended; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->path, path)) {
            struct drain *x = *pp;
            *pp = x->next;
            drain_free(x);
            d->nended--;
            return;
        }
}

/* The next drain due (under the lock), or NULL with *wake_at the time the
 * first held one is due (0: none is). */
static struct drain *next_due(struct bbs_drains *d, double now, double *wake_at)
{
    *wake_at = 0;
    for (struct drain *x = d->todo; x; x = x->next) {
        if (x->state == BBS_DRAIN_QUEUED || (x->state == BBS_DRAIN_HELD && x->retry_at <= now))
            return x;
        if (x->state == BBS_DRAIN_HELD && (*wake_at == 0 || x->retry_at < *wake_at))
            *wake_at = x->retry_at;
    }
    return NULL;
}

struct run {
    struct bbs_drains *d;
    struct drain *x;
};

/* After each domain: publish the progress, keep to the rate, and stop
 * when the server stops (LOGFS_ESTATE: the sessions stay pending). */
static int on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct run *r = arg;
    struct bbs_drains *d = r->d;
    pthread_mutex_lock(&d->lock);
    r->x->done = done;
    r->x->total = total;
    int stop = d->stop;
    pthread_mutex_unlock(&d->lock);
    if (stop)
        return LOGFS_ESTATE;
    if (d->c.rate > 0) {
        double ahead = (double) done / d->c.rate - (now_s() - r->x->started_at);
        while (ahead > 0 && !__atomic_load_n(&d->stop, __ATOMIC_RELAXED)) {
            double nap = ahead < 0.1 ? ahead : 0.1;
            struct timespec ts = { (time_t) nap, (long) ((nap - (double) (time_t) nap) * 1e9) };
            nanosleep(&ts, NULL);
            ahead -= nap;
        }
    }
    return __atomic_load_n(&d->stop, __ATOMIC_RELAXED) ? LOGFS_ESTATE : LOGFS_OK;
}

/* Where a drain goes once logfs_drain_file returned (under the lock). */
static void settle(struct bbs_drains *d, struct drain *x, int rc,
                   const struct logfs_drain_stats *st, const char *why)
{
    double now = now_s();
    if (rc == LOGFS_ESTATE && d->stop) {
        x->state = BBS_DRAIN_QUEUED;    /* stopped: the journal keeps it */
        return;
    }
    if (rc == LOGFS_EBUSY) {
        /* a handle is open (its close may replay the logs itself: the
         * next try then finds nothing to do); 10 ms, doubling to 1 s.  A
         * background close's other processes let go within a millisecond
         * or so, but a drain that started at once would take the cores
         * they close on (a first retry after 1 ms made the close slower
         * and the file canonical no sooner: docs/benchmarks.md) */
        double wait = 0.01;
        for (uint32_t i = 1; i < x->tries && wait < 1; i++)
            wait *= 2;
        x->state = BBS_DRAIN_HELD;
        x->retry_at = now + (wait < 1 ? wait : 1);
        snprintf(x->error, sizeof(x->error), "%s", why);
        return;
    }
    if (rc == LOGFS_OK && x->again) {   /* a newer session may wait */
        x->again = 0;
        x->state = BBS_DRAIN_QUEUED;
        return;
    }
    unlink_todo(d, x);
    x->state = rc == LOGFS_OK ? BBS_DRAIN_DONE : BBS_DRAIN_FAILED;
    x->ended_at = now;
    if (rc == LOGFS_OK) {
        x->epochs = st->epochs;
        x->writes = st->writes;
        x->done = x->total = st->bytes;
        x->error[0] = 0;
    } else
        snprintf(x->error, sizeof(x->error), "%s (%s); its logs stay pending: "
                 "bbfs-replay %s replays them", why, logfs_strerror(rc), x->path);
    x->next = d->ended;
    d->ended = x;
    d->nended++;
    trim_ended(d);
    journal_write(d);
}

static void *drain_main(void *arg)
{
    struct bbs_drains *d = arg;
    /* Below the application's processes: on a node whose cores the job
     * uses, the drain takes the time they leave (docs/drain.md).  (Threads
     * logfs_drain starts inherit it.) */
    if (d->c.nice && setpriority(PRIO_PROCESS, (id_t) gettid(), d->c.nice) != 0)
        fprintf(stderr, "bbserver: cannot lower the drain thread's priority: %s\n",
                strerror(errno));
    double let_go_at = 0;
    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        double wake_at, now = now_s();
        struct drain *x = next_due(d, now, &wake_at);
        if (!x) {
            if (wake_at == 0 && d->keep) {
                wake_at = now + KEEP_IDLE_S;
                let_go_at = wake_at;
            }
            if (wake_at == 0)
                pthread_cond_wait(&d->cond, &d->lock);
            else {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                double t = (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9 + (wake_at - now);
                ts.tv_sec = (time_t) t;
                ts.tv_nsec = (long) ((t - (double) ts.tv_sec) * 1e9);
                pthread_cond_timedwait(&d->cond, &d->lock, &ts);
            }
            if (let_go_at > 0 && now_s() >= let_go_at && d->keep) {
                logfs_drain_buffers_free(d->keep);      /* (idle: the node's memory back) */
                d->keep = NULL;
            }
            let_go_at = 0;
            continue;
        }
        if (!d->keep)
            d->keep = logfs_drain_buffers_new();        /* (NULL: each drain's own) */
        x->state = BBS_DRAIN_RUNNING;
        x->tries++;
        x->done = x->total = 0;
        x->started_at = now;
        pthread_mutex_unlock(&d->lock);

        struct run r = { d, x };
        struct logfs_drain_opts o = { 0 };
        struct logfs_drain_stats st;
        struct logfs_error le = { 0 };
        o.durable = d->c.durable;
        o.threads = d->c.threads;
        o.far = d->c.far;
        o.keep = d->keep;
        o.progress = on_progress;
        o.arg = &r;
        int rc = logfs_drain_file(x->path, &o, &st, &le);

        pthread_mutex_lock(&d->lock);
        settle(d, x, rc, &st, le.msg);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static int journal_load(struct bbs_drains *d, char *err, size_t errlen)
{
    FILE *f = fopen(d->journal, "r");
    char line[4200];
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read the drain journal %s: %s", d->journal,
                 strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '/' && !find(d->todo, line) && !enqueue(d, line)) {
            fclose(f);
            snprintf(err, errlen, "out of memory loading the drain journal");
            return -1;
        }
    }
    fclose(f);
    return 0;
}

int bbs_drains_start(const struct bbs_drains_conf *c, struct bbs_drains **out, char *err,
                     size_t errlen)
{
    struct bbs_drains *d = calloc(1, sizeof(*d));
    pthread_condattr_t ca;
    *out = NULL;
    if (!d || (c->journal && !(d->journal = strdup(c->journal)))) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->c = *c;
    d->c.journal = d->journal;
    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (d->journal && journal_load(d, err, errlen) != 0) {
        bbs_drains_stop(d);
        return -1;
    }
    if ((d->has_thread = pthread_create(&d->thread, NULL, drain_main, d) == 0) == 0) {
        snprintf(err, errlen, "cannot start the drain thread");
        bbs_drains_stop(d);
        return -1;
    }
    *out = d;
    return 0;
}

static int info_of(const struct drain *x, double now, struct bbs_drain_info *i)
{
    memset(i, 0, sizeof(*i));
    i->path = strdup(x->path);
    i->error = strdup(x->state == BBS_DRAIN_FAILED || x->state == BBS_DRAIN_HELD
                      ? x->error : "");
    i->state = x->state;
    i->done = x->done;
    i->total = x->total;
    i->epochs = x->epochs;
    i->writes = x->writes;
    i->tries = x->tries;
    i->age = now - (x->ended_at > 0 ? x->ended_at : x->queued_at);
    return i->path && i->error ? 0 : -1;
}

int bbs_drains_submit(struct bbs_drains *d, const char *path, struct bbs_drain_info *now)
{
    int rc = 0;
    pthread_mutex_lock(&d->lock);
    struct drain *x = find(d->todo, path);
    if (x && x->state == BBS_DRAIN_RUNNING)
        x->again = 1;
    else if (x && x->state == BBS_DRAIN_HELD)
        x->retry_at = 0;
    else if (!x) {
        forget_ended(d, path);
        if ((x = enqueue(d, path)) != NULL)
            journal_write(d);
    }
    if (x)
        pthread_cond_signal(&d->cond);
    else
        rc = -1;
    if (now && x && info_of(x, now_s(), now) != 0) {
        bbs_drain_info_clear(now);
        rc = -1;
    }
    if (now && !x)
        memset(now, 0, sizeof(*now));
    pthread_mutex_unlock(&d->lock);
    return rc;
}

int bbs_drains_list(struct bbs_drains *d, const char *path, struct bbs_drain_info **out,
                    size_t *n)
{
    int rc = 0;
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&d->lock);
    size_t cap = d->nended;
    for (struct drain *x = d->todo; x; x = x->next)
        cap++;
    struct drain *lists[2] = { d->todo, d->ended };
    struct bbs_drain_info *v = cap ? calloc(cap, sizeof(*v)) : NULL;
    double t = now_s();
    if (cap && !v)
        rc = -1;
    for (int l = 0; l < 2 && !rc; l++)
        for (struct drain *x = lists[l]; x && !rc; x = x->next) {
            if (path && *path && strcmp(path, x->path) != 0)
                continue;
            if (info_of(x, t, &v[*n]) != 0)
                rc = -1;
            ++*n;
            if (path && *path)
                break;
        }
    pthread_mutex_unlock(&d->lock);
    if (rc) {
        bbs_drains_info_free(v, *n);
        *n = 0;
        return -1;
    }
    *out = v;
    return 0;
}

void bbs_drain_info_clear(struct bbs_drain_info *i)
{
    free(i->path);
    free(i->error);
    i->path = i->error = NULL;
}

void bbs_drains_info_free(struct bbs_drain_info *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        bbs_drain_info_clear(&v[i]);
    free(v);
}

size_t bbs_drains_unfinished(struct bbs_drains *d)
{
    size_t n = 0;
    pthread_mutex_lock(&d->lock);
    for (struct drain *x = d->todo; x; x = x->next)
        n++;
    pthread_mutex_unlock(&d->lock);
    return n;
}

void bbs_drains_stop(struct bbs_drains *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    __atomic_store_n(&d->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
    if (d->has_thread)
        pthread_join(d->thread, NULL);
    for (struct drain *x = d->todo, *next; x; x = next) {
        next = x->next;
        drain_free(x);
    }
    for (struct drain *x = d->ended, *next; x; x = next) {
        next = x->next;
        drain_free(x);
    }
    logfs_drain_buffers_free(d->keep);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    free(d->journal);
    free(d);
}
