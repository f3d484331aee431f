/*
 * A round of the replay's exchange: every process states the datalog
 * ranges its domain wants and where their bytes go; each range's host
 * (a process that can open the writer's logs) reads them and sends them.
 * Three collectives a round: the counts, the wants, the bytes.  What must
 * be agreed rides in them: whether any process would move more than MPI's
 * counts can say (a flag before each process's wants), and whether a host
 * failed to read (a status before the bytes it sends each process), so
 * that no process writes bytes it did not get.  The hosts' messages are
 * agreed once, at the replay's end (ADIOI_BBFS_Exchange_agree).
 */
#include "ad_bbfs_exchange.h"
#include "adioi.h"
#include "../../logfs/fault.h"

#include <stdio.h>

#include <string.h>

/* b with room for n bytes (its contents are not kept). */
static void *room(struct buf *b, size_t n)
{
    if (n > b->cap) {
        ADIOI_BBFS_FREE(b->p);
        b->cap = n > 2 * b->cap ? n : 2 * b->cap;
        b->p = ADIOI_Malloc(b->cap);
    }
    return b->p;
}

void ADIOI_BBFS_Exchange_want(ADIOI_BBFS_Exchange * x, int writer, uint64_t off, uint64_t len)
{
    struct want *last = x->nwant ? &x->want[x->nwant - 1] : NULL;

    x->wanted += len;
    if (last && last->writer == (uint64_t) writer && last->off + last->len == off) {
        last->len += len;       /* the datalog continues: one read */
        return;
    }
    if (x->nwant == x->capwant) {
        x->capwant = x->capwant ? 2 * x->capwant : 16;
        x->want = ADIOI_Realloc(x->want, x->capwant * sizeof(*x->want));
    }
    x->want[x->nwant++] = (struct want) { (uint64_t) writer, off, len };
}

void ADIOI_BBFS_Exchange_place(ADIOI_BBFS_Exchange * x, char *dest, uint64_t len,
                               uint64_t count, uint64_t stride)
{
    if (len == 0 || count == 0)
        return;
    if (x->nplace == x->capplace) {
        x->capplace = x->capplace ? 2 * x->capplace : 16;
        x->place = ADIOI_Realloc(x->place, x->capplace * sizeof(*x->place));
    }
    x->place[x->nplace++] = (struct place) { dest, len, count, stride };
}

/* Host side: bytes of a hosted writer's datalog, from this node's storage
 * or through the server of the writer's node. */
static int read_log(ADIOI_BBFS_Exchange * x, int writer, uint64_t off, void *buf, size_t len)
{
    int injected = logfs_fault("exchange-serve");
    if (injected) {             /* (a failing log device, for fault-errors.sh) */
        char msg[PATH_MAX + 96];
        snprintf(msg, sizeof(msg), "cannot read datalog of writer %d for the replay: %s", writer,
                 strerror(injected));
        return ADIOI_BBFS_Err_logfs("ADIOI_BBFS_EXCHANGE_SERVE", __LINE__, LOGFS_EIO, msg);
    }
    if (x->far[writer])
        return ADIOI_BBFS_Nodes_read(&x->nodes, x->far[writer], x->logs->paths[writer], off, buf,
                                     len);
    return ADIOI_BBFS_Datalogs_read(x->logs, writer, off, buf, len);
}

/* Host side (or, direct, the owner itself): read the wants of one process
 * (in order) into out.  A domain holds about 1/M of each writer's bytes,
 * close together in its datalog (strided writes are logged contiguously),
 * so a writer's span is read with one pread when it is not much larger
 * than what is wanted, instead of one per want (HDF5's 2^20 separate
 * 8-byte writes per process are 2^20 wants that tile one span). */
static int serve(ADIOI_BBFS_Exchange * x, const struct want *w, size_t n, char *out)
{
    struct span {
        uint64_t lo, hi, needed, wants;
        char *data;             /* the span, when read at once */
        int whole;              /* read at once */
    } *sp = room(&x->spans, sizeof(*sp) * (x->nwriters ? x->nwriters : 1));
    uint64_t dense = 0;
    char *scratch;
    int err = MPI_SUCCESS;

    memset(sp, 0, sizeof(*sp) * x->nwriters);

    for (size_t i = 0; i < n; i++) {
        struct span *s = &sp[w[i].writer];
        if (s->needed == 0 || w[i].off < s->lo)
            s->lo = w[i].off;
        if (w[i].off + w[i].len > s->hi)
            s->hi = w[i].off + w[i].len;
        s->needed += w[i].len;
        s->wants++;
    }
    for (int k = 0; k < x->nwriters; k++) {
        struct span *s = &sp[k];
        if (s->wants < 2 || s->hi - s->lo > 2 * s->needed + ((uint64_t) 4 << 20))
            continue;           /* nothing, one want (one read anyway), or too sparse */
        s->whole = 1;
        dense += s->hi - s->lo;
    }
    scratch = room(&x->span, dense ? dense : 1);
    for (int k = 0; k < x->nwriters && err == MPI_SUCCESS; k++) {
        struct span *s = &sp[k];
        if (!s->whole)
            continue;
        s->data = scratch;
        scratch += s->hi - s->lo;
        err = read_log(x, k, s->lo, s->data, s->hi - s->lo);
    }
    for (size_t i = 0; i < n && err == MPI_SUCCESS; i++) {
        struct span *s = &sp[w[i].writer];
        if (s->data)
            memcpy(out, s->data + (w[i].off - s->lo), w[i].len);
        else
            err = read_log(x, (int) w[i].writer, w[i].off, out, w[i].len);
        out += w[i].len;
    }
    return err;
}

/* count blocks of len bytes, packed at src, to dest, stride apart.  The
 * usual element sizes get fixed-size moves the compiler makes into plain
 * loads and stores: a memcpy call per 8-byte element was 40% of a replay. */
#define COPY_BLOCKS(size) \
    for (uint64_t k = 0; k < count; k++) \
        memcpy(dest + k * stride, src + k * (size), (size))
static void copy_strided(char *dest, const char *src, uint64_t len, uint64_t count,
                         uint64_t stride)
{
    switch (len) {
    case 4:
        COPY_BLOCKS(4);
        break;
    case 8:
        COPY_BLOCKS(8);
        break;
    case 16:
        COPY_BLOCKS(16);
        break;
    default:
        COPY_BLOCKS(len);
    }
}
#undef COPY_BLOCKS

/* Owner side: the wanted bytes to their places.  Want i's bytes are at
 * got + start[i]; the places take the wants' bytes in want order. */
static void scatter(ADIOI_BBFS_Exchange * x, const char *got, const uint64_t * start)
{
    size_t wi = 0;
    uint64_t wpos = 0;

    for (size_t i = 0; i < x->nplace; i++) {
        const struct place *p = &x->place[i];
        uint64_t k = 0;
        while (k < p->count && wi < x->nwant) {
            /* the blocks that lie whole in the current want, at once */
            uint64_t whole = (x->want[wi].len - wpos) / p->len;
            if (whole > p->count - k)
                whole = p->count - k;
            if (whole > 0) {
                copy_strided(p->dest + k * p->stride, got + start[wi] + wpos, p->len, whole,
                             p->stride);
                k += whole;
                wpos += whole * p->len;
                if (wpos == x->want[wi].len) {
                    wi++;
                    wpos = 0;
                }
                continue;
            }
            /* a block that begins in this want and ends in later ones */
            char *dest = p->dest + k * p->stride;
            uint64_t need = p->len;
            while (need > 0 && wi < x->nwant) {
                uint64_t n = x->want[wi].len - wpos;
                if (n > need)
                    n = need;
                memcpy(dest, got + start[wi] + wpos, n);
                dest += n;
                need -= n;
                wpos += n;
                if (wpos == x->want[wi].len) {
                    wi++;
                    wpos = 0;
                }
            }
            k++;
        }
    }
}

static int round_exchange(ADIOI_BBFS_Exchange * x, int failed);

/* A round when this process can open every log: its wants, read here. */
static int round_direct(ADIOI_BBFS_Exchange * x, int failed)
{
    int err = MPI_SUCCESS;
    if (!failed && x->nwant) {
        char *got = room(&x->got, x->wanted);
        uint64_t *start = ADIOI_Malloc(sizeof(uint64_t) * x->nwant);
        uint64_t at = 0;
        for (size_t i = 0; i < x->nwant; i++) {
            start[i] = at;
            at += x->want[i].len;
            x->read_direct += (long long) x->want[i].len;
        }
        err = serve(x, x->want, x->nwant, got);
        if (err == MPI_SUCCESS)
            scatter(x, got, start);
        ADIOI_Free(start);
    }
    x->rounds++;
    x->nwant = x->nplace = 0;
    x->wanted = 0;
    return err;
}

int ADIOI_BBFS_Exchange_round(ADIOI_BBFS_Exchange * x, int failed)
{
    if (x->direct)
        return round_direct(x, failed);
    return round_exchange(x, failed);
}

/* Who reads a want of writer w's log for this process. */
static int source_of(const ADIOI_BBFS_Exchange * x, uint64_t w)
{
    return x->here[w] ? x->rank : x->host[w];
}

/* The word before the bytes a host sends each process that asked: 0, or
 * 1 where the host could not read them. */
#define STATUS_BYTES 8

/* Scale n counts (and displacements) by k: wants go as k integers each
 * (no datatype to create and free every round). */
static void scale(int *c, int *d, int np, int k, int undo)
{
    for (int p = 0; p < np; p++) {
        c[p] = undo ? c[p] / k : c[p] * k;
        d[p] = undo ? d[p] / k : d[p] * k;
    }
}

static int round_exchange(ADIOI_BBFS_Exchange * x, int failed)
{
    static char myname[] = "ADIOI_BBFS_EXCHANGE_ROUND";
    int np = x->nprocs, err = MPI_SUCCESS;
    int *scount = x->scount, *rcount = x->rcount, *sdispl = x->sdispl, *rdispl = x->rdispl;
    long long *sbytes = x->sbytes, *rbytes = x->rbytes;
    struct want *sorted, *asked;
    char *back, *got;
    size_t *slot;

    for (int p = 0; p < np; p++) {
        scount[p] = rcount[p] = sdispl[p] = rdispl[p] = 0;
        sbytes[p] = rbytes[p] = 0;
    }

    if (failed) {               /* take part, wanting nothing */
        x->nwant = x->nplace = 0;
        x->wanted = 0;
    }
    /* Wants by host, keeping each host's wants in order; a log on this
     * node is read here (the alltoallv copies them to this process). */
    for (size_t i = 0; i < x->nwant; i++) {
        int h = source_of(x, x->want[i].writer);
        scount[h]++;
        sbytes[h] += (long long) x->want[i].len;
        if (h == x->rank && x->host[x->want[i].writer] != x->rank)
            x->read_direct += (long long) x->want[i].len;
    }
    /* Counts: each pair's wants and their bytes, so that a host knows what
     * it will send before it is asked. */
    long long *said = room(&x->said, sizeof(long long) * 4 * (size_t) np), *heard = said + 2 * np;
    for (int p = 0; p < np; p++) {
        said[2 * p] = scount[p];
        said[2 * p + 1] = sbytes[p];
    }
    MPI_Alltoall(said, 2, MPI_LONG_LONG, heard, 2, MPI_LONG_LONG, x->comm);
    x->rounds++;
    long long nasked = 0, in_total = 0, out_total = 0;
    for (int p = 0; p < np; p++) {
        rcount[p] = (int) heard[2 * p];
        rbytes[p] = heard[2 * p + 1];
        nasked += rcount[p];
        if (rcount[p])
            out_total += rbytes[p] + STATUS_BYTES;
        if (scount[p])
            in_total += sbytes[p] + STATUS_BYTES;
        if (p != x->rank)
            x->wants += scount[p];
    }
    /* MPI's counts and displacements are ints: this process's flag says
     * whether its bytes out or in would pass them, and goes before its
     * wants to every process, so that all see every flag.  (The wants
     * themselves go as three integers each, unchecked: a want is a run of
     * a datalog, runs that continue are merged, and a process asks at most
     * bbfs_replay_buffer of them, so a host's count passes 2^31 / 3 only
     * where hundreds of processes each want a round of single separate
     * bytes from its logs.) */
    uint64_t too_big = out_total > INT_MAX || in_total > INT_MAX;

    /* Wants, each host's block led by this process's flag. */
    for (int p = 0; p < np; p++) {
        sdispl[p] = p ? sdispl[p - 1] + scount[p - 1] + 1 : 0;
        rdispl[p] = p ? rdispl[p - 1] + rcount[p - 1] + 1 : 0;
    }
    sorted = room(&x->sorted, sizeof(*sorted) * (x->nwant + (size_t) np));
    slot = room(&x->slot, sizeof(size_t) * (x->nwant ? x->nwant : 1));
    {
        int *fill = ADIOI_Calloc(np, sizeof(int));
        for (int p = 0; p < np; p++)
            sorted[sdispl[p]] = (struct want) { too_big, 0, 0 };
        for (size_t i = 0; i < x->nwant; i++) {
            int h = source_of(x, x->want[i].writer);
            slot[i] = (size_t) (sdispl[h] + 1 + fill[h]++);
            sorted[slot[i]] = x->want[i];
        }
        ADIOI_Free(fill);
    }
    asked = room(&x->asked, sizeof(*asked) * ((size_t) nasked + (size_t) np));
    for (int p = 0; p < np; p++) {
        scount[p]++;
        rcount[p]++;
    }
    scale(scount, sdispl, np, 3, 0);
    scale(rcount, rdispl, np, 3, 0);
    MPI_Alltoallv(sorted, scount, sdispl, MPI_UINT64_T, asked, rcount, rdispl, MPI_UINT64_T,
                  x->comm);
    scale(scount, sdispl, np, 3, 1);
    scale(rcount, rdispl, np, 3, 1);
    uint64_t any_big = 0;
    for (int p = 0; p < np; p++) {
        scount[p]--;
        rcount[p]--;
        any_big |= asked[rdispl[p]].writer;
    }
    if (any_big) {
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_IO, "**io", "bbfs: a replay round would move more "
                                   "than 2 GiB from one process; lower bbfs_replay_buffer");
        goto fn_exit;
    }

    /* Serve: what each process asked, read from the hosted datalogs, each
     * block after its status word. */
    back = room(&x->back, out_total ? (size_t) out_total : 1);
    {
        long long at = 0;
        for (int p = 0; p < np; p++) {
            if (!rcount[p])
                continue;
            if (err == MPI_SUCCESS)
                err = serve(x, asked + rdispl[p] + 1, (size_t) rcount[p],
                            back + at + STATUS_BYTES);
            at += STATUS_BYTES + rbytes[p];
        }
        uint64_t status = err != MPI_SUCCESS;
        at = 0;
        for (int p = 0; p < np; p++)
            if (rcount[p]) {
                memcpy(back + at, &status, sizeof(status));
                at += STATUS_BYTES + rbytes[p];
            }
    }
    /* Bytes back, as counts and displacements in bytes; the wants' slots
     * (for the scatter) first, while scount and sdispl still count wants. */
    uint64_t *start = ADIOI_Malloc(sizeof(uint64_t) * (x->nwant ? x->nwant : 1));
    {
        uint64_t *off_of_slot = ADIOI_Malloc(sizeof(uint64_t) * (x->nwant + (size_t) np));
        uint64_t at = 0;
        for (int p = 0; p < np; p++) {
            if (!scount[p])
                continue;
            at += STATUS_BYTES;
            for (int k = sdispl[p] + 1; k <= sdispl[p] + scount[p]; k++) {
                off_of_slot[k] = at;
                at += sorted[k].len;
            }
        }
        for (size_t i = 0; i < x->nwant; i++)
            start[i] = off_of_slot[slot[i]];
        ADIOI_Free(off_of_slot);
    }
    {
        int at = 0;
        for (int p = 0; p < np; p++) {
            /* now: bytes this process sends p */
            rcount[p] = rcount[p] ? (int) rbytes[p] + STATUS_BYTES : 0;
            rdispl[p] = at;
            at += rcount[p];
        }
        at = 0;
        for (int p = 0; p < np; p++) {
            /* now: bytes this process gets from p */
            scount[p] = scount[p] ? (int) sbytes[p] + STATUS_BYTES : 0;
            sdispl[p] = at;
            at += scount[p];
        }
        for (int p = 0; p < np; p++)
            if (p != x->rank)
                x->moved += rbytes[p];
        got = room(&x->got, in_total ? (size_t) in_total : 1);
        MPI_Alltoallv(back, rcount, rdispl, MPI_BYTE, got, scount, sdispl, MPI_BYTE, x->comm);
    }
    /* A host that could not read: this process writes nothing it did not
     * get, and says so (the host's own error says why). */
    for (int p = 0; p < np && err == MPI_SUCCESS; p++) {
        uint64_t status = 0;
        if (scount[p])
            memcpy(&status, got + sdispl[p], sizeof(status));
        if (status) {
            x->peer_failed = 1;
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_IO, "**io", "bbfs: process %d could not read "
                                       "log bytes this replay needs (see its error)", p);
        }
    }
    if (err == MPI_SUCCESS && x->nwant)
        scatter(x, got, start);
    ADIOI_Free(start);

  fn_exit:
    x->nwant = x->nplace = 0;
    x->wanted = 0;
    return err;
}

int ADIOI_BBFS_Exchange_agree(const ADIOI_BBFS_Exchange * x, const char *myname, int err,
                              int derived)
{
    if (!x || x->direct)
        return err;
    return ADIOI_BBFS_Exchange_agree_message(x->comm, myname, err, derived || x->peer_failed);
}
