/*
 * Turning one MPI-IO access into file extents.
 *
 * An access is (file pointer type, offset, byte count) read through the file
 * view of the handle: displacement, etype and a filetype tiled from the
 * displacement.  The walk yields the contiguous file pieces in access order,
 * each with its position in the packed user data, without building a list,
 * so a vector of a million blocks costs no memory here.  The individual file
 * pointer left behind follows ROMIO's generic code (ad_write_str.c): after
 * an access that ends a filetype block, it points at the next block.
 */
#include "ad_bbfs.h"
#include "adioi.h"

/* Where in the tiled filetype an access starts. */
struct view_pos {
    ADIO_Offset tile;           /* which copy of the filetype */
    MPI_Count block;            /* which block of the flattened filetype */
    ADIO_Offset within;         /* bytes into that block */
};

static ADIO_Offset block_start(ADIO_File fd, const ADIOI_Flatlist_node * flat,
                               ADIO_Offset extent, const struct view_pos *p)
{
    return fd->disp + flat->indices[p->block] + p->tile * extent;
}

/* Position of absolute file offset `off` (the individual file pointer): the
 * first block that ends after it.  Tile n covers [disp + lb + n * extent,
 * + extent); start the search one tile early, blocks may stick out. */
static void pos_from_byte(ADIO_File fd, const ADIOI_Flatlist_node * flat, ADIO_Offset lb,
                          ADIO_Offset extent, ADIO_Offset off, struct view_pos *p)
{
    ADIO_Offset rel = off - fd->disp - lb;
    ADIO_Offset tile = rel >= 0 ? rel / extent - 1 : -1;

    for (p->tile = tile < 0 ? 0 : tile;; p->tile++)
        for (p->block = 0; p->block < flat->count; p->block++) {
            ADIO_Offset start = block_start(fd, flat, extent, p);
            if (flat->blocklens[p->block] > 0 && start + flat->blocklens[p->block] > off) {
                p->within = off > start ? off - start : 0;
                return;
            }
        }
}

/* Position of `offset` etypes into the view (explicit offsets). */
static void pos_from_etypes(ADIO_File fd, const ADIOI_Flatlist_node * flat, MPI_Count ft_size,
                            ADIO_Offset offset, struct view_pos *p)
{
    ADIO_Offset etypes_per_tile = ft_size / fd->etype_size;
    ADIO_Offset skip = (offset % etypes_per_tile) * fd->etype_size, sum = 0;

    p->tile = offset / etypes_per_tile;
    for (p->block = 0; p->block < flat->count; p->block++) {
        if (sum + flat->blocklens[p->block] > skip) {
            p->within = skip - sum;
            return;
        }
        sum += flat->blocklens[p->block];
    }
    /* skip == 0 with only empty blocks cannot happen: ft_size > 0 */
    p->block = 0;
    p->within = 0;
}

/* A noncontiguous view needs walking; a contiguous one is one piece. */
static int view_is_walked(ADIO_File fd, ADIO_Offset nbytes)
{
    MPI_Count ft_size;
    int contig;

    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    MPI_Type_size_x(fd->filetype, &ft_size);
    return !contig && ft_size > 0 && nbytes > 0;
}

/* The general walk: block by block through ROMIO's flattened filetype. */
static int walk_pieces(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                       ADIO_Offset nbytes, ADIOI_BBFS_extent_fn fn, void *arg,
                       ADIO_Offset * next_fp)
{
    MPI_Count ft_size;
    MPI_Aint lb, extent;
    int contig;
    ADIO_Offset done = 0;

    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    MPI_Type_size_x(fd->filetype, &ft_size);
    if (contig || ft_size == 0) {
        ADIO_Offset start = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind
            : fd->disp + fd->etype_size * offset;
        int rc = nbytes > 0 ? fn(arg, start, nbytes, 0) : 0;
        *next_fp = start + nbytes;
        return rc;
    }

    ADIOI_Flatlist_node *flat = ADIOI_Flatten_and_find(fd->filetype);
    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    struct view_pos p;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        pos_from_byte(fd, flat, lb, extent, fd->fp_ind, &p);
    else
        pos_from_etypes(fd, flat, ft_size, offset, &p);

    ADIO_Offset next = block_start(fd, flat, extent, &p) + p.within;
    while (done < nbytes) {
        ADIO_Offset avail = flat->blocklens[p.block] - p.within;
        ADIO_Offset len = avail < nbytes - done ? avail : nbytes - done;
        if (len > 0) {
            int rc = fn(arg, block_start(fd, flat, extent, &p) + p.within, len, done);
            if (rc)
                return rc;
            done += len;
        }
        if (len < avail) {
            p.within += len;
            next = block_start(fd, flat, extent, &p) + p.within;
        } else {
            /* The next block with data, as ROMIO's own calls leave it: its
             * strided read of a subarray (ad_read_str.c) assumes the
             * pointer is in a block, and one left on the zero-length
             * upper-bound marker made it read the next tile's first block
             * instead of this process's (ft_size > 0: one block has data). */
            p.within = 0;
            do {
                if (++p.block == flat->count) {
                    p.block = 0;
                    p.tile++;
                }
            } while (flat->blocklens[p.block] == 0);
            next = block_start(fd, flat, extent, &p);
        }
    }
    *next_fp = next;
    return 0;
}

/* ---- the same walk, as strided runs --------------------------------------
 * A vector file type yields a long series of equal pieces at a constant
 * stride; handing those on as one run lets the log store them with one copy
 * and one record.  Pieces that touch are merged first. */

struct run_acc {
    ADIOI_BBFS_run_fn fn;
    void *arg;
    ADIO_Offset off, len, stride, count, data_off;      /* the run being built */
    int rc;
};

static int flush_run(struct run_acc *a)
{
    int rc = 0;
    if (a->count > 0)
        rc = a->fn(a->arg, a->off, a->len, a->stride, a->count, a->data_off);
    a->count = 0;
    return rc;
}

static int add_piece(void *arg, ADIO_Offset off, ADIO_Offset len, ADIO_Offset data_off)
{
    struct run_acc *a = arg;

    if (a->count == 1 && off == a->off + a->len) {     /* touches: one longer piece */
        a->len += len;
        return 0;
    }
    if (a->count == 1 && len == a->len && off > a->off + a->len) {
        a->stride = off - a->off;
        a->count = 2;
        return 0;
    }
    if (a->count >= 2 && len == a->len && off == a->off + a->count * a->stride) {
        a->count++;
        return 0;
    }
    if (a->count >= 2 && off == a->off + (a->count - 1) * a->stride + a->len) {
        /* the last block grows: end the run before it, restart from it */
        a->count--;
        ADIO_Offset last_off = a->off + a->count * a->stride;
        ADIO_Offset last_data = a->data_off + a->count * a->len;
        int rc = flush_run(a);
        if (rc)
            return rc;
        a->off = last_off;
        a->len += len;
        a->data_off = last_data;
        a->count = 1;
        return 0;
    }
    int rc = flush_run(a);
    if (rc)
        return rc;
    a->off = off;
    a->len = len;
    a->stride = 0;
    a->count = 1;
    a->data_off = data_off;
    return 0;
}

/* ---- regular file types ------------------------------------------------
 * A file type whose blocks all have one length at one stride (a vector, the
 * noncontig pattern) yields one run per tile by arithmetic, without visiting
 * the blocks and without ROMIO's flattened list (16 bytes per block, built
 * at MPI_File_set_view unless ADIOI_BBFS_CheckView vouches for the type). */

static int is_named(MPI_Datatype t)
{
    int nints, nadds, ntypes, combiner;
    MPI_Type_get_envelope(t, &nints, &nadds, &ntypes, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

/* Named types and contiguous ones starting at their origin: one block. */
static int dense(MPI_Datatype t, MPI_Count * size)
{
    MPI_Count lb, extent, true_lb, true_extent;
    int contig;

    ADIOI_Datatype_iscontig(t, &contig);
    MPI_Type_size_x(t, size);
    MPI_Type_get_extent_x(t, &lb, &extent);
    MPI_Type_get_true_extent_x(t, &true_lb, &true_extent);
    return contig && lb == 0 && true_lb == 0 && extent == *size && true_extent == *size;
}

/* The blocks of a vector or hvector of a dense type, behind any number of
 * contiguous(1), dup and resized wrappers (MPI_File_set_view adds one
 * contiguous(1) itself); resizing moves tiles, not blocks.  Other types are
 * left to the flattened form. */
static int vector_shape(MPI_Datatype t, ADIOI_BBFS_Shape * s)
{
    int nints, nadds, ntypes, combiner, ints[3], ok = 0;
    MPI_Aint adds[2];
    MPI_Datatype inner;
    MPI_Count el_size;

    MPI_Type_get_envelope(t, &nints, &nadds, &ntypes, &combiner);
    if (combiner == MPI_COMBINER_NAMED || nints > 3 || nadds > 2 || ntypes != 1)
        return 0;
    MPI_Type_get_contents(t, nints, nadds, ntypes, ints, adds, &inner);
    switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
            ok = vector_shape(inner, s);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            ok = ints[0] == 1 && vector_shape(inner, s);
            break;
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
            if (ints[0] < 1 || ints[1] < 1 || !dense(inner, &el_size) || el_size == 0)
                break;
            s->first = 0;
            s->count = ints[0];
            s->blen = ints[1] * (ADIO_Offset) el_size;
            s->stride = combiner == MPI_COMBINER_VECTOR ? ints[2] * (ADIO_Offset) el_size
                : (ADIO_Offset) adds[0];
            if (s->count == 1 || s->stride == s->blen) {        /* one block */
                s->blen *= s->count;
                s->count = 1;
                s->stride = s->blen;
            }
            ok = s->stride >= s->blen;  /* else overlapping or decreasing */
            break;
    }
    if (!is_named(inner))
        MPI_Type_free(&inner);
    return ok;
}

/* A flattened type that happens to be regular (an hindexed one, say): one
 * pass, once per file type. */
static int flat_shape(const ADIOI_Flatlist_node * flat, ADIOI_BBFS_Shape * s)
{
    if (flat->count < 2 || flat->blocklens[0] <= 0)
        return 0;
    s->first = flat->indices[0];
    s->blen = flat->blocklens[0];
    s->stride = flat->indices[1] - flat->indices[0];
    s->count = flat->count;
    if (s->stride <= s->blen)
        return 0;
    for (MPI_Count i = 1; i < flat->count; i++)
        if (flat->blocklens[i] != s->blen || flat->indices[i] - flat->indices[i - 1] != s->stride)
            return 0;
    return 1;
}

/* Called by ADIO_Set_view (romio-view-check-hook.patch) for every
 * noncontiguous filetype: a vector needs no flattening to be checked. */
int ADIOI_BBFS_CheckView(ADIO_File fd, MPI_Datatype filetype, ADIO_Offset * first)
{
    ADIOI_BBFS_Shape *s = &ADIOI_BBFS_Private(fd)->shape;

    s->regular = vector_shape(filetype, s);
    s->type = s->regular ? filetype : MPI_DATATYPE_NULL;
    *first = s->first;
    return s->regular;
}

static const ADIOI_BBFS_Shape *regular_shape(ADIO_File fd)
{
    ADIOI_BBFS_Shape *s = &ADIOI_BBFS_Private(fd)->shape;

    if (s->type != fd->filetype) {
        s->type = fd->filetype;
        s->regular = vector_shape(fd->filetype, s)
            || flat_shape(ADIOI_Flatten_and_find(fd->filetype), s);
    }
    return s->regular ? s : NULL;
}

static ADIO_Offset regular_start(ADIO_File fd, const ADIOI_BBFS_Shape * s, ADIO_Offset extent,
                                 const struct view_pos *p)
{
    return fd->disp + s->first + p->block * s->stride + p->tile * extent;
}

/* pos_from_byte by arithmetic: block b of a tile ends after `off` when
 * b * stride > off - (tile start) - blen. */
static void regular_pos_from_byte(ADIO_File fd, const ADIOI_BBFS_Shape * s, ADIO_Offset lb,
                                  ADIO_Offset extent, ADIO_Offset off, struct view_pos *p)
{
    ADIO_Offset rel = off - fd->disp - lb;
    ADIO_Offset tile = rel >= 0 ? rel / extent - 1 : -1;

    for (p->tile = tile < 0 ? 0 : tile;; p->tile++) {
        ADIO_Offset base = fd->disp + s->first + p->tile * extent;
        ADIO_Offset b = off < base + s->blen ? 0 : (off - base - s->blen) / s->stride + 1;
        if (b < s->count) {
            ADIO_Offset start = base + b * s->stride;
            p->block = b;
            p->within = off > start ? off - start : 0;
            return;
        }
    }
}

static void regular_pos_from_etypes(ADIO_File fd, const ADIOI_BBFS_Shape * s,
                                    ADIO_Offset offset, struct view_pos *p)
{
    ADIO_Offset etypes_per_tile = s->count * s->blen / fd->etype_size;
    ADIO_Offset skip = (offset % etypes_per_tile) * fd->etype_size;

    p->tile = offset / etypes_per_tile;
    p->block = skip / s->blen;
    p->within = skip % s->blen;
}

static int walk_regular(ADIO_File fd, const ADIOI_BBFS_Shape * s, int file_ptr_type,
                        ADIO_Offset offset, ADIO_Offset nbytes, ADIOI_BBFS_run_fn fn,
                        void *arg, ADIO_Offset * next_fp)
{
    struct view_pos p;
    ADIO_Offset done = 0, blen = s->blen;
    MPI_Aint lb, extent;
    int rc;

    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    if (file_ptr_type == ADIO_INDIVIDUAL)
        regular_pos_from_byte(fd, s, lb, extent, fd->fp_ind, &p);
    else
        regular_pos_from_etypes(fd, s, offset, &p);
    while (done < nbytes) {
        ADIO_Offset at = regular_start(fd, s, extent, &p) + p.within;
        if (p.within > 0 || nbytes - done < blen) {     /* part of one block */
            ADIO_Offset len = blen - p.within < nbytes - done ? blen - p.within : nbytes - done;
            if ((rc = fn(arg, at, len, len, 1, done)))
                return rc;
            done += len;
            p.within += len;
            if (p.within < blen) {
                *next_fp = at + len;
                return 0;
            }
        } else {                /* whole blocks to the end of the tile */
            ADIO_Offset k = (nbytes - done) / blen;
            if (k > s->count - p.block)
                k = s->count - p.block;
            if ((rc = fn(arg, at, blen, s->stride, k, done)))
                return rc;
            done += k * blen;
            p.block += k - 1;
        }
        p.within = 0;
        if (++p.block == s->count) {
            p.block = 0;
            p.tile++;
        }
    }
    *next_fp = regular_start(fd, s, extent, &p);
    return 0;
}

int ADIOI_BBFS_Walk_view_runs(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Offset nbytes, ADIOI_BBFS_run_fn fn, void *arg,
                              ADIO_Offset * next_fp)
{
    struct run_acc a = { fn, arg, 0, 0, 0, 0, 0, 0 };
    const ADIOI_BBFS_Shape *s = view_is_walked(fd, nbytes) ? regular_shape(fd) : NULL;

    if (s)
        return walk_regular(fd, s, file_ptr_type, offset, nbytes, fn, arg, next_fp);
    int rc = walk_pieces(fd, file_ptr_type, offset, nbytes, add_piece, &a, next_fp);
    return rc ? rc : flush_run(&a);
}

/* Pieces of a regular view, for callers that want them one by one. */
struct expand {
    ADIOI_BBFS_extent_fn fn;
    void *arg;
};

static int expand_run(void *arg, ADIO_Offset off, ADIO_Offset len, ADIO_Offset stride,
                      ADIO_Offset count, ADIO_Offset data_off)
{
    struct expand *e = arg;
    for (ADIO_Offset i = 0; i < count; i++) {
        int rc = e->fn(e->arg, off + i * stride, len, data_off + i * len);
        if (rc)
            return rc;
    }
    return 0;
}

int ADIOI_BBFS_Walk_view(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                         ADIO_Offset nbytes, ADIOI_BBFS_extent_fn fn, void *arg,
                         ADIO_Offset * next_fp)
{
    struct expand e = { fn, arg };
    const ADIOI_BBFS_Shape *s = view_is_walked(fd, nbytes) ? regular_shape(fd) : NULL;

    if (s)
        return walk_regular(fd, s, file_ptr_type, offset, nbytes, expand_run, &e, next_fp);
    return walk_pieces(fd, file_ptr_type, offset, nbytes, fn, arg, next_fp);
}
