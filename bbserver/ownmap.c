/*
 * The ownership map (see ownmap.h): files in a hash table by name, each
 * with a writer table (hashed by session and rank) and a logfs range map.
 *
 * Attached extents are held as they came (a strided write is one record)
 * and go into the range map, as if piece by piece in arrival order, only
 * when something asks the map (query, stat, detach, a walk).  The usual life of
 * a file's map, attaches at syncs and close and then REPLAYED, thus costs
 * one append per record, however many blocks a record has: expanding four
 * processes' 10^6-block vectors took the server 0.7 s per close.
 */
#include "ownmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../logfs/coding.h"
#include "../logfs/extents.h"
#include "../logfs/rangemap.h"

struct owned_writer {
    struct bbs_writer w;        /* node and datalog are owned copies */
};

struct file {
    char *name;
    struct logfs_rangemap *map;
    struct logfs_strided *held; /* attached, not yet in map, in arrival order */
    size_t nheld, capheld;
    struct owned_writer *writers;
    uint32_t nwriters, capwriters;
    uint32_t *slots;            /* writer index + 1 by hash of (session, rank); 0 = free */
    uint32_t nslots;            /* a power of two, at least twice nwriters */
    uint64_t size;
    struct file *next;          /* in its bucket */
};

struct bbs_ownmap {
    struct file **buckets;
    size_t nbuckets;            /* a power of two */
    uint64_t nfiles;
};

static uint64_t hash_str(const char *s)
{
    return logfs_fnv_str(LOGFS_FNV_START, s);
}

static uint64_t hash_writer(uint64_t session, uint32_t rank)
{
    uint64_t h = session * 0x9e3779b97f4a7c15ull ^ rank;
    return h ^ (h >> 29);
}

struct bbs_ownmap *bbs_own_create(void)
{
    struct bbs_ownmap *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->nbuckets = 64;
    m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
    if (!m->buckets) {
        free(m);
        return NULL;
    }
    return m;
}

static void file_free(struct file *f)
{
    for (uint32_t i = 0; i < f->nwriters; i++) {
        free((char *) f->writers[i].w.node);
        free((char *) f->writers[i].w.datalog);
    }
    free(f->writers);
    free(f->slots);
    free(f->held);
    logfs_rangemap_destroy(f->map);
    free(f->name);
    free(f);
}

void bbs_own_destroy(struct bbs_ownmap *m)
{
    if (!m)
        return;
    for (size_t b = 0; b < m->nbuckets; b++)
        for (struct file *f = m->buckets[b], *next; f; f = next) {
            next = f->next;
            file_free(f);
        }
    free(m->buckets);
    free(m);
}

static struct file *find(const struct bbs_ownmap *m, const char *name)
{
    for (struct file *f = m->buckets[hash_str(name) & (m->nbuckets - 1)]; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

/* Keep buckets at most one file each on average. */
static void rehash(struct bbs_ownmap *m)
{
    size_t n = m->nbuckets * 2;
    struct file **b = calloc(n, sizeof(*b));
    if (!b)
        return;                 /* longer chains, still correct */
    for (size_t i = 0; i < m->nbuckets; i++)
        for (struct file *f = m->buckets[i], *next; f; f = next) {
            next = f->next;
            size_t k = hash_str(f->name) & (n - 1);
            f->next = b[k];
            b[k] = f;
        }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
}

static struct file *find_or_add(struct bbs_ownmap *m, const char *name)
{
    struct file *f = find(m, name);
    if (f)
        return f;
    if ((f = calloc(1, sizeof(*f))) == NULL || (f->name = strdup(name)) == NULL
        || logfs_rangemap_create(&f->map) != LOGFS_OK) {
        if (f)
            free(f->name);
        free(f);
        return NULL;
    }
    if (m->nfiles >= m->nbuckets)
        rehash(m);
    size_t k = hash_str(name) & (m->nbuckets - 1);
    f->next = m->buckets[k];
    m->buckets[k] = f;
    __atomic_fetch_add(&m->nfiles, 1, __ATOMIC_RELAXED);
    return f;
}

/* The slot of (session, rank): its writer, or the free slot it would take. */
static uint32_t *slot_of(const struct file *f, uint64_t session, uint32_t rank)
{
    uint32_t mask = f->nslots - 1;
    for (uint64_t k = hash_writer(session, rank);; k++) {
        uint32_t *s = &f->slots[k & mask];
        if (*s == 0)
            return s;
        const struct bbs_writer *w = &f->writers[*s - 1].w;
        if (w->session == session && w->rank == rank)
            return s;
    }
}

static int grow_slots(struct file *f)
{
    uint32_t n = f->nslots ? f->nslots * 2 : 16;
    uint32_t *old = f->slots, oldn = f->nslots;
    if ((f->slots = calloc(n, sizeof(*f->slots))) == NULL) {
        f->slots = old;
        return -1;
    }
    f->nslots = n;
    for (uint32_t i = 0; i < oldn; i++)
        if (old[i]) {
            const struct bbs_writer *w = &f->writers[old[i] - 1].w;
            *slot_of(f, w->session, w->rank) = old[i];
        }
    free(old);
    return 0;
}

/* The writer's index in f's table, added (with its node and datalog) if
 * new, updated if it moved (a restarted job reuses session and rank only
 * with new logs).  @return the index, or -1 when out of memory. */
static int64_t writer_index(struct file *f, const struct bbs_writer *w)
{
    if (2 * (f->nwriters + 1) > f->nslots && grow_slots(f) != 0)
        return -1;
    uint32_t *s = slot_of(f, w->session, w->rank);
    if (*s) {
        struct bbs_writer *have = &f->writers[*s - 1].w;
        if (strcmp(have->node, w->node) != 0 || strcmp(have->datalog, w->datalog) != 0) {
            char *node = strdup(w->node), *log = strdup(w->datalog);
            if (!node || !log) {
                free(node);
                free(log);
                return -1;
            }
            free((char *) have->node);
            free((char *) have->datalog);
            have->node = node;
            have->datalog = log;
        }
        return *s - 1;
    }
    if (f->nwriters >= (uint32_t) INT32_MAX)
        return -1;
    if (f->nwriters == f->capwriters) {
        uint32_t cap = f->capwriters ? 2 * f->capwriters : 8;
        struct owned_writer *p = realloc(f->writers, cap * sizeof(*p));
        if (!p)
            return -1;
        f->writers = p;
        f->capwriters = cap;
    }
    struct owned_writer *o = &f->writers[f->nwriters];
    o->w = *w;
    o->w.node = strdup(w->node);
    o->w.datalog = strdup(w->datalog);
    if (!o->w.node || !o->w.datalog) {
        free((char *) o->w.node);
        free((char *) o->w.datalog);
        return -1;
    }
    *s = ++f->nwriters;
    return f->nwriters - 1;
}

int bbs_own_attach(struct bbs_ownmap *m, const char *file, const struct bbs_writer *w,
                   const struct bbs_extent *e, size_t n)
{
    struct file *f = find_or_add(m, file);
    int64_t wi;
    if (!f || (wi = writer_index(f, w)) < 0)
        return BBS_ENOMEM;
    if (f->nheld + n > f->capheld) {
        size_t cap = f->capheld ? 2 * f->capheld : 16;
        while (cap < f->nheld + n)
            cap *= 2;
        struct logfs_strided *h = realloc(f->held, cap * sizeof(*h));
        if (!h)
            return BBS_ENOMEM;
        f->held = h;
        f->capheld = cap;
    }
    for (size_t i = 0; i < n; i++) {
        f->held[f->nheld++] = (struct logfs_strided) { e[i].off, e[i].len, e[i].count,
            e[i].stride, (int32_t) wi, e[i].pos };
        if (e[i].count && bbs_extent_end(&e[i]) > f->size)
            f->size = bbs_extent_end(&e[i]);
    }
    return BBS_OK;
}

int bbs_own_grow(struct bbs_ownmap *m, const char *file, uint64_t size)
{
    struct file *f = find_or_add(m, file);
    if (!f)
        return BBS_ENOMEM;
    if (size > f->size)
        f->size = size;
    return BBS_OK;
}

uint64_t bbs_own_size(const struct bbs_ownmap *m, const char *file)
{
    const struct file *f = find(m, file);
    return f ? f->size : 0;
}

/* The held extents into the range map, as if in order.  (The map is
 * logically unchanged, so callers that only look take it const.)  On
 * failure they all stay held: inserting them again gives the same map. */
static int settle(const struct file *cf)
{
    struct file *f = (struct file *) cf;
    if (f->nheld == 0)
        return BBS_OK;
    if (logfs_rangemap_insert_strided(f->map, f->held, f->nheld) != LOGFS_OK)
        return BBS_ENOMEM;
    f->nheld = 0;
    return BBS_OK;
}

/* A writer's pieces as they come, grouped into records: logfs's grouper
 * joins blocks of one length at one stride in the file, and a piece that
 * does not continue the record in the log closes it first. */
struct run {
    struct logfs_grouper gr;
    uint64_t pos;               /* in the log, of the record's first block */
};

struct collect {
    int32_t owner;              /* detach: only this writer's; -1 = all */
    struct bbs_piece *p;
    uint32_t n, cap;            /* records */
    uint64_t blocks, max;       /* the blocks they hold, at most max */
    struct run *runs;           /* per writer */
    uint64_t more;
    int nomem;
};

static void add_record(struct collect *c, uint32_t writer, const struct logfs_group *g,
                       uint64_t pos)
{
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 64;
        struct bbs_piece *p = realloc(c->p, (size_t) cap * sizeof(*p));
        if (!p) {
            c->nomem = 1;
            return;
        }
        c->p = p;
        c->cap = cap;
    }
    /* (in file order the stride is positive; one block's is its length) */
    uint64_t stride = g->count > 1 ? (uint64_t) g->stride : g->blocklen;
    c->p[c->n++] = (struct bbs_piece) { { g->offset, g->blocklen, g->count, stride, pos },
        writer };
}

static int collect(void *arg, const struct logfs_range *r, int is_hole)
{
    struct collect *c = arg;
    if (is_hole || (c->owner >= 0 && r->owner != c->owner))
        return 0;
    if (c->blocks == c->max) {
        c->more = r->start;
        return 1;
    }
    c->blocks++;
    uint64_t len = r->end - r->start;
    struct run *w = &c->runs[r->owner];
    struct logfs_group done;
    const struct logfs_group *g = &w->gr.g;
    if (g->count && r->pos != w->pos + g->count * g->blocklen
        && logfs_grouper_finish(&w->gr, &done))
        add_record(c, (uint32_t) r->owner, &done, w->pos);
    uint64_t pos = w->pos;
    if (logfs_grouper_push(&w->gr, r->start, len, &done))
        add_record(c, (uint32_t) r->owner, &done, pos);
    if (g->count == 1)
        w->pos = r->pos;
    return c->nomem;
}

/* The records of f's pieces in [start, end) (of owner's only when owner >=
 * 0), holding at most max blocks.  @return BBS_OK or BBS_ENOMEM. */
static int collect_range(const struct file *f, int32_t owner, uint64_t start, uint64_t end,
                         uint64_t max, struct collect *c)
{
    *c = (struct collect) { owner, NULL, 0, 0, 0, max, NULL, UINT64_MAX, 0 };
    c->runs = malloc(sizeof(*c->runs) * (f->nwriters ? f->nwriters : 1));
    if (!c->runs)
        return BBS_ENOMEM;
    for (uint32_t w = 0; w < f->nwriters; w++)
        logfs_grouper_init(&c->runs[w].gr);
    logfs_rangemap_query(f->map, start, end, collect, c);
    for (uint32_t w = 0; w < f->nwriters && !c->nomem; w++) {
        struct logfs_group done;
        if (logfs_grouper_finish(&c->runs[w].gr, &done))
            add_record(c, w, &done, c->runs[w].pos);
    }
    free(c->runs);
    if (c->nomem) {
        free(c->p);
        c->p = NULL;
        return BBS_ENOMEM;
    }
    return BBS_OK;
}

int bbs_own_detach(struct bbs_ownmap *m, const char *file, uint64_t session, uint32_t rank,
                   uint64_t start, uint64_t end)
{
    struct file *f = find(m, file);
    if (!f)
        return BBS_ENOFILE;
    if (!f->nslots || *slot_of(f, session, rank) == 0)
        return BBS_OK;          /* it attached nothing here */
    if (settle(f) != BBS_OK)
        return BBS_ENOMEM;
    struct collect c;
    int st = collect_range(f, (int32_t) (*slot_of(f, session, rank) - 1), start, end,
                           UINT64_MAX, &c);
    for (uint32_t i = 0; i < c.n && st == BBS_OK; i++) {
        const struct bbs_extent *e = &c.p[i].e;
        for (uint64_t k = 0; k < e->count && st == BBS_OK; k++)
            if (logfs_rangemap_remove(f->map, e->off + k * e->stride,
                                      e->off + k * e->stride + e->len) != LOGFS_OK)
                st = BBS_ENOMEM;
    }
    free(c.p);
    return st;
}

int bbs_own_query(const struct bbs_ownmap *m, const char *file, uint64_t start, uint64_t end,
                  uint32_t max, struct bbs_piece **pieces, uint32_t *n, uint64_t *more)
{
    const struct file *f = find(m, file);
    *pieces = NULL;
    *n = 0;
    *more = UINT64_MAX;
    if (!f)
        return BBS_ENOFILE;
    if (settle(f) != BBS_OK)
        return BBS_ENOMEM;
    struct collect c;
    if (collect_range(f, -1, start, end, max, &c) != BBS_OK)
        return BBS_ENOMEM;
    *pieces = c.p;
    *n = c.n;
    *more = c.more;
    return BBS_OK;
}

const struct bbs_writer *bbs_own_writer(const struct bbs_ownmap *m, const char *file,
                                        uint32_t i)
{
    const struct file *f = find(m, file);
    return f && i < f->nwriters ? &f->writers[i].w : NULL;
}

int bbs_own_stat(const struct bbs_ownmap *m, const char *file, uint64_t *size,
                 uint64_t *nranges, uint32_t *nwriters)
{
    const struct file *f = find(m, file);
    if (!f)
        return BBS_ENOFILE;
    if (settle(f) != BBS_OK)
        return BBS_ENOMEM;
    *size = f->size;
    *nranges = logfs_rangemap_count(f->map);
    *nwriters = f->nwriters;
    return BBS_OK;
}

int bbs_own_drop(struct bbs_ownmap *m, const char *file)
{
    struct file **pp = &m->buckets[hash_str(file) & (m->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->name, file) == 0) {
            struct file *f = *pp;
            *pp = f->next;
            file_free(f);
            __atomic_fetch_sub(&m->nfiles, 1, __ATOMIC_RELAXED);
            return BBS_OK;
        }
    return BBS_ENOFILE;
}

struct keep_arg {
    const struct file *f;
    const uint64_t *sessions;
    size_t n;
    struct logfs_rangemap *out;
    uint64_t end;               /* of the last range kept */
};

static int keep_unreplayed(void *arg, const struct logfs_range *r, int is_hole)
{
    struct keep_arg *a = arg;
    (void) is_hole;             /* a walk has none */
    uint64_t session = a->f->writers[r->owner].w.session;
    for (size_t i = 0; i < a->n; i++)
        if (a->sessions[i] == session)
            return 0;
    a->end = r->end;
    return logfs_rangemap_insert(a->out, r->start, r->end, r->owner, r->pos) != LOGFS_OK;
}

/* Whether every writer the file knows is of one of the n sessions: then
 * nothing of it stays, and the held attaches need no settling first (a
 * drain's or a close's replay of the file's only session: 64 MiB of 8-byte
 * pieces took the server a second to settle, only to drop them). */
static int all_replayed(const struct file *f, const uint64_t *sessions, size_t n)
{
    for (uint32_t i = 0; i < f->nwriters; i++) {
        size_t k = 0;
        while (k < n && sessions[k] != f->writers[i].w.session)
            k++;
        if (k == n)
            return 0;
    }
    return 1;
}

int bbs_own_replayed(struct bbs_ownmap *m, const char *file, const uint64_t *sessions,
                     size_t n)
{
    struct file *f = find(m, file);
    if (!f)
        return BBS_ENOFILE;
    if (n == 0 || all_replayed(f, sessions, n))
        return bbs_own_drop(m, file);
    /* the walk sees who owns each byte after every attach so far, so a
     * replayed session's bytes that a live one overwrote stay the live
     * one's, and the live one's that the replayed one overwrote go */
    struct keep_arg a = { f, sessions, n, NULL, 0 };
    if (settle(f) != BBS_OK || logfs_rangemap_create(&a.out) != LOGFS_OK)
        return BBS_ENOMEM;
    if (logfs_rangemap_walk(f->map, keep_unreplayed, &a) != 0) {
        logfs_rangemap_destroy(a.out);
        return BBS_ENOMEM;
    }
    if (logfs_rangemap_count(a.out) == 0) {
        logfs_rangemap_destroy(a.out);
        return bbs_own_drop(m, file);
    }
    logfs_rangemap_destroy(f->map);
    f->map = a.out;
    f->size = a.end;
    return BBS_OK;
}

uint64_t bbs_own_nfiles(const struct bbs_ownmap *m)
{
    return __atomic_load_n(&m->nfiles, __ATOMIC_RELAXED);       /* (PING, any thread) */
}

int bbs_own_each(const struct bbs_ownmap *m, int (*fn)(void *arg, const char *file), void *arg)
{
    for (size_t b = 0; b < m->nbuckets; b++)
        for (const struct file *f = m->buckets[b]; f; f = f->next) {
            int rc = fn(arg, f->name);
            if (rc)
                return rc;
        }
    return 0;
}

struct ranges_arg {
    const struct file *f;
    int (*fn)(void *arg, const struct bbs_writer *w, uint64_t start, uint64_t end,
              uint64_t pos);
    void *arg;
};

static int each_range(void *arg, const struct logfs_range *r, int is_hole)
{
    struct ranges_arg *a = arg;
    (void) is_hole;             /* a walk has none */
    return a->fn(a->arg, &a->f->writers[r->owner].w, r->start, r->end, r->pos);
}

int bbs_own_ranges(const struct bbs_ownmap *m, const char *file,
                   int (*fn)(void *arg, const struct bbs_writer *w, uint64_t start,
                             uint64_t end, uint64_t pos), void *arg)
{
    struct ranges_arg a = { find(m, file), fn, arg };
    if (!a.f)
        return BBS_ENOFILE;
    if (settle(a.f) != BBS_OK)
        return BBS_ENOMEM;
    return logfs_rangemap_walk(a.f->map, each_range, &a);
}

size_t bbs_own_print(const struct bbs_ownmap *m, const char *file, char *buf, size_t len)
{
    const struct file *f = find(m, file);
    if (!f)
        return (size_t) snprintf(buf, len, "(no such file)");
    if (settle(f) != BBS_OK)
        return (size_t) snprintf(buf, len, "(out of memory)");
    return logfs_rangemap_print(f->map, buf, len);
}
