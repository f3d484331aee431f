/* What a log's records touch (summary.h). */
#include "summary.h"

#include <stdlib.h>

void logfs_summary_note_run(struct logfs_summary *s, uint64_t off, uint64_t blocklen,
                            int64_t stride, uint64_t count)
{
    if (blocklen == 0 || count == 0)
        return;
    int gapless = count == 1 || stride == (int64_t)blocklen;
    /* (the writer checked that every block lies in [0, 2^63)) */
    __int128 last = (__int128)off + (__int128)(count - 1) * stride;
    uint64_t first_lo = last < (__int128)off ? (uint64_t)last : off;
    uint64_t end = (uint64_t)(last > (__int128)off ? last : (__int128)off) + blocklen;
    uint64_t pieces = gapless ? 1 : count;
    if (s->blocks > 0 && off == s->last_end)
        pieces--; /* a sequential writer's log is one piece */
    s->pieces += pieces;
    if (s->blocks == 0 || first_lo < s->lo)
        s->lo = first_lo;
    if (s->blocks == 0 || end > s->hi)
        s->hi = end;
    s->blocks += count;
    s->last_end = (uint64_t)last + blocklen;
}

void logfs_summary_note_size(struct logfs_summary *s)
{
    s->resized = 1;
}

void logfs_summary_pack(const struct logfs_summary *s, uint64_t *out)
{
    out[0] = s->blocks ? s->lo : 0;
    out[1] = s->blocks ? s->hi : 0;
    out[2] = (s->blocks ? s->pieces : 0) | ((uint64_t)(s->resized != 0) << 63);
}

void logfs_summary_unpack(const uint64_t *in, struct logfs_summary *s)
{
    s->lo = in[0];
    s->hi = in[1];
    s->pieces = in[2] & ~((uint64_t)1 << 63);
    s->blocks = s->pieces; /* (at least one block per piece) */
    s->last_end = 0;
    s->resized = (int)(in[2] >> 63);
}

struct range {
    uint64_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int logfs_summaries_apart(const struct logfs_summary *s, size_t n, uint64_t max_pieces)
{
    struct range *r = malloc(sizeof(*r) * (n ? n : 1));
    size_t k = 0;
    int apart = r != NULL;

    for (size_t i = 0; i < n && apart; i++) {
        if (s[i].resized || s[i].pieces > max_pieces)
            apart = 0;
        else if (s[i].blocks > 0) {
            r[k].lo = s[i].lo;
            r[k++].hi = s[i].hi;
        }
    }
    if (apart && k > 1) {
        qsort(r, k, sizeof(*r), by_lo);
        for (size_t i = 1; i < k && apart; i++)
            apart = r[i - 1].hi <= r[i].lo;
    }
    free(r);
    return apart;
}
