/* File views that bbfs walks by arithmetic instead of ROMIO's flattened list
 * (vectors behind hvector, resized, contiguous(1) and dup wrappers), views
 * that look similar but must not take that path, and filetypes
 * MPI_File_set_view has to refuse.  Each view gets its own region of the
 * file, written through the individual file pointer in odd-sized pieces and
 * read back through the view; positions and byte offsets land in a trailer,
 * so the ufs: comparison also checks where the pointer went. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define REGION (64 * 1024)      /* bytes per view's region, all ranks */
#define NVIEWS 6
#define TRAILER ((MPI_Offset) NVIEWS * REGION)

static void make_view(int v, MPI_Datatype * ft, MPI_Offset * disp, int *nbytes)
{
    int np = tl_nprocs, r = tl_rank;
    MPI_Datatype a, b;

    switch (v) {
        case 0:        /* hvector of a 12-byte element, byte stride */
            MPI_Type_contiguous(3, MPI_INT, &a);
            MPI_Type_create_hvector(100, 1, (MPI_Aint) 12 * np, a, ft);
            MPI_Type_free(&a);
            *disp = 12 * r;
            *nbytes = 1000;     /* less than a tile: the pointer stops mid-tile */
            break;
        case 1:        /* a single block per tile, tiles interleaved by resizing */
            MPI_Type_vector(1, 40, 40, MPI_BYTE, &a);
            MPI_Type_create_resized(a, 0, (MPI_Aint) 40 * np, ft);
            MPI_Type_free(&a);
            *disp = 40 * r;
            *nbytes = 40 * 37 + 13;
            break;
        case 2:        /* blocks that touch: one 80-byte block per tile */
            MPI_Type_vector(10, 8, 8, MPI_BYTE, &a);
            MPI_Type_create_resized(a, 0, (MPI_Aint) 80 * np, &b);
            MPI_Type_dup(b, ft);
            MPI_Type_free(&a);
            MPI_Type_free(&b);
            *disp = 80 * r;
            *nbytes = 80 * 20 + 7;
            break;
        case 3:        /* vector of ints, several tiles, tile extent > blocks */
            MPI_Type_vector(16, 2, 2 * np, MPI_INT, &a);
            MPI_Type_create_resized(a, 0, (MPI_Aint) 16 * 8 * np + 64, ft);
            MPI_Type_free(&a);
            *disp = 8 * r;
            *nbytes = 128 * 7 + 20;
            break;
        case 4:        /* vector of an element with a hole: not dense, flattened */
            MPI_Type_create_resized(MPI_INT, 0, 8, &a);
            MPI_Type_contiguous(2, a, &b);      /* data at 0-3 and 8-11 of 16 */
            MPI_Type_vector(50, 1, np, b, ft);
            MPI_Type_free(&a);
            MPI_Type_free(&b);
            *disp = 16 * r;
            *nbytes = 8 * 50;
            break;
        default:       /* the view wrapped in contiguous(1), in memory too */
            MPI_Type_vector(64, 3, 3 * np, MPI_SHORT, &a);
            MPI_Type_contiguous(1, a, ft);
            MPI_Type_free(&a);
            *disp = 6 * r;
            *nbytes = 64 * 6 - 5;      /* tiles of plain vectors overlap */
            break;
    }
    MPI_Type_commit(ft);
}

static void check_refused(MPI_File fh, MPI_Datatype ft, const char *what)
{
    MPI_Type_commit(&ft);
    int err = MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
#ifdef OPEN_MPI
    /* (Open MPI's binding refuses a type that is not monotonic itself,
     * before any driver) */
    int refused = MPI_ERR_TYPE;
#else
    int refused = MPI_ERR_IO;   /* ROMIO's check_type */
#endif
    tl_expect_class(err, refused, what);
    MPI_Type_free(&ft);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_File fh;
    MPI_Status st;
    long long trailer[NVIEWS][3];

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    /* Every byte gets a value first, so holes compare equal too; the views
     * overwrite it in the next epoch. */
    if (tl_rank == 0) {
        size_t total = (size_t) TRAILER + (size_t) 8 * NVIEWS * 3 * tl_nprocs;
        unsigned char *bg = malloc(total);
        tl_fill(bg, total, 0, 7);
        TL_MPI(MPI_File_write_at(fh, 0, bg, (int) total, MPI_BYTE, &st));
        free(bg);
    }
    tl_sync_barrier_sync(fh);

    for (int v = 0; v < NVIEWS; v++) {
        MPI_Datatype ft;
        MPI_Offset disp, pos, byte;
        int n;
        make_view(v, &ft, &disp, &n);
        unsigned char *data = malloc(n), *got = malloc(n);
        tl_fill(data, n, (long long) tl_rank << 20 | v << 16, v + 1);

        TL_MPI(MPI_File_set_view(fh, (MPI_Offset) v * REGION + disp, MPI_BYTE, ft, "native",
                                 MPI_INFO_NULL));
        TL_MPI(MPI_File_get_byte_offset(fh, 0, &byte));
        TL_CHECK(byte == (MPI_Offset) v * REGION + disp, "view %d starts at byte %lld", v,
                 (long long) byte);
        int chunks[] = { 3, 17, 250, 1 }, at = 0;
        for (int c = 0; at < n; c++) {
            int len = c < 4 ? chunks[c] : n - at;
            len = len < n - at ? len : n - at;
            TL_MPI(MPI_File_write(fh, data + at, len, MPI_BYTE, &st));
            at += len;
        }
        TL_MPI(MPI_File_get_position(fh, &pos));
        TL_CHECK(pos == n, "view %d: position %lld after writing %d bytes", v,
                 (long long) pos, n);
        TL_MPI(MPI_File_get_byte_offset(fh, pos, &byte));
        trailer[v][0] = pos;
        trailer[v][1] = byte;
        /* The pointer inside a tile, then read back what was written. */
        TL_MPI(MPI_File_seek(fh, n / 2, MPI_SEEK_SET));
        TL_MPI(MPI_File_get_byte_offset(fh, n / 2, &byte));
        trailer[v][2] = byte;
        TL_MPI(MPI_File_read(fh, got, n - n / 2, MPI_BYTE, &st));
        TL_CHECK(memcmp(got, data + n / 2, n - n / 2) == 0,
                 "view %d: second half read through the view differs", v);
        TL_MPI(MPI_File_read_at(fh, 0, got, n, MPI_BYTE, &st));
        TL_CHECK(memcmp(got, data, n) == 0, "view %d: read_at through the view differs", v);
        MPI_Type_free(&ft);
        free(data);
        free(got);
    }

    /* Overlapping and decreasing filetypes are refused on a writable file,
     * vector-shaped or not. */
    MPI_Datatype bad;
    MPI_Type_vector(5, 4, 2, MPI_BYTE, &bad);
    check_refused(fh, bad, "vector with stride < blocklength");
    MPI_Type_create_hvector(3, 1, -8, MPI_INT, &bad);
    check_refused(fh, bad, "hvector with a negative stride");

    TL_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    TL_MPI(MPI_File_write_at(fh, TRAILER + (MPI_Offset) sizeof(trailer) * tl_rank, trailer,
                             (int) sizeof(trailer), MPI_BYTE, &st));
    TL_MPI(MPI_File_close(&fh));
    return tl_finish();
}
