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

int ADIOI_BBFS_Walk_view(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
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
            p.within = 0;
            if (++p.block == flat->count) {
                p.block = 0;
                p.tile++;
            }
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

/* A filetype whose blocks all have one length at one stride (a vector, the
 * noncontig pattern): runs follow from arithmetic, one per tile, without
 * visiting the blocks.  The check is one pass over the flattened type, far
 * cheaper than a callback per block. */
static int regular_blocks(const ADIOI_Flatlist_node * flat, ADIO_Offset * len,
                          ADIO_Offset * stride)
{
    if (flat->count < 2 || flat->blocklens[0] <= 0)
        return 0;
    *len = flat->blocklens[0];
    *stride = flat->indices[1] - flat->indices[0];
    if (*stride <= *len)
        return 0;
    for (MPI_Count i = 1; i < flat->count; i++)
        if (flat->blocklens[i] != *len || flat->indices[i] - flat->indices[i - 1] != *stride)
            return 0;
    return 1;
}

static int walk_regular(ADIO_File fd, const ADIOI_Flatlist_node * flat, ADIO_Offset lb,
                        ADIO_Offset extent, MPI_Count ft_size, ADIO_Offset blen,
                        ADIO_Offset stride, int file_ptr_type, ADIO_Offset offset,
                        ADIO_Offset nbytes, ADIOI_BBFS_run_fn fn, void *arg,
                        ADIO_Offset * next_fp)
{
    struct view_pos p;
    ADIO_Offset done = 0;
    int rc;

    if (file_ptr_type == ADIO_INDIVIDUAL)
        pos_from_byte(fd, flat, lb, extent, fd->fp_ind, &p);
    else
        pos_from_etypes(fd, flat, ft_size, offset, &p);
    while (done < nbytes) {
        ADIO_Offset at = block_start(fd, flat, extent, &p) + p.within;
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
            if (k > flat->count - p.block)
                k = flat->count - p.block;
            if ((rc = fn(arg, at, blen, stride, k, done)))
                return rc;
            done += k * blen;
            p.block += k - 1;
        }
        p.within = 0;
        if (++p.block == flat->count) {
            p.block = 0;
            p.tile++;
        }
    }
    *next_fp = block_start(fd, flat, extent, &p);
    return 0;
}

int ADIOI_BBFS_Walk_view_runs(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Offset nbytes, ADIOI_BBFS_run_fn fn, void *arg,
                              ADIO_Offset * next_fp)
{
    struct run_acc a = { fn, arg, 0, 0, 0, 0, 0, 0 };
    int contig;

    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (!contig && nbytes > 0) {
        ADIOI_Flatlist_node *flat = ADIOI_Flatten_and_find(fd->filetype);
        ADIO_Offset blen, stride;
        MPI_Aint lb, extent;
        MPI_Count ft_size;
        MPI_Type_size_x(fd->filetype, &ft_size);
        MPI_Type_get_extent(fd->filetype, &lb, &extent);
        if (ft_size > 0 && regular_blocks(flat, &blen, &stride))
            return walk_regular(fd, flat, lb, extent, ft_size, blen, stride, file_ptr_type,
                                offset, nbytes, fn, arg, next_fp);
    }
    int rc = ADIOI_BBFS_Walk_view(fd, file_ptr_type, offset, nbytes, add_piece, &a, next_fp);
    return rc ? rc : flush_run(&a);
}
