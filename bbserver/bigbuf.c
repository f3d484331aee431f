/*
 * Kept large buffers (bigbuf.h).  A few at most: a client has one reply in
 * flight per connection, a server one per worker and one being sent.
 */
#include "bigbuf.h"

#include <pthread.h>
#include <stdlib.h>

#define KEPT_MAX 4

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
} kept[KEPT_MAX];

void *bbs_big_take(size_t want, size_t *cap)
{
    int best = -1;
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < KEPT_MAX; i++)
        if (kept[i].p && kept[i].cap >= want && (best < 0 || kept[i].cap < kept[best].cap))
            best = i;
    void *p = NULL;
    if (best >= 0) {
        p = kept[best].p;
        *cap = kept[best].cap;
        kept[best].p = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
    if (!p && (p = malloc(want ? want : 1)) != NULL)
        *cap = want;
    return p;
}

void bbs_big_give(void *p, size_t cap)
{
    if (!p)
        return;
    if (cap >= BBS_BIG) {
        /* (into a free slot, else in place of the smallest kept if this
         * one is larger: a reply's size is what the next may need) */
        int slot = -1;
        pthread_mutex_lock(&kept_lock);
        for (int i = 0; i < KEPT_MAX && slot < 0; i++)
            if (!kept[i].p)
                slot = i;
        for (int i = 0; i < KEPT_MAX && slot < 0; i++)
            if (kept[i].cap < cap && (slot < 0 || kept[i].cap < kept[slot].cap))
                slot = i;
        void *out = p;
        if (slot >= 0) {
            out = kept[slot].p;
            kept[slot].p = p;
            kept[slot].cap = cap;
        }
        pthread_mutex_unlock(&kept_lock);
        p = out;
    }
    free(p);
}

void bbs_big_trim(void)
{
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < KEPT_MAX; i++) {
        free(kept[i].p);
        kept[i].p = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
}
