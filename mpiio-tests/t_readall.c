/* Collective reads of a finished file through a read-only handle, every
 * shape bbfs takes apart from ROMIO's own read: requests that are not
 * interleaved (bbfs reads each process's part itself, with the explicit
 * offset, with the individual pointer, through a strided view), requests
 * that are (the lower driver's two-phase read, with the offsets bbfs
 * gathered in its agreement: romio-stacked-offsets.patch), a request past
 * the end of the file and an empty one.  Every byte read is checked, and
 * so are the byte counts and the individual pointer after each read. */
#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096              /* each process's block */
#define ELEM 8                  /* the strided views' element */
#define TAG 7

static void expect_count(MPI_Status * st, int want, const char *what)
{
    int got;
    MPI_Get_count(st, MPI_BYTE, &got);
    TL_CHECK(got == want, "%s: %d bytes read, not %d", what, got, want);
}

static void expect_position(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset pos;
    TL_MPI(MPI_File_get_position(fh, &pos));
    TL_CHECK(pos == want, "%s: the pointer is at %lld, not %lld", what, (long long) pos,
             (long long) want);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    int P = tl_nprocs, r = tl_rank, next = (r + 1) % P;
    long long size = (long long) P * BLOCK;
    unsigned char *buf = malloc(BLOCK * 2);
    MPI_File fh;
    MPI_Status st;

    /* the file: each process's block, made canonical by the close */
    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh));
    tl_fill(buf, BLOCK, (long long) r * BLOCK, TAG);
    TL_MPI(MPI_File_write_at_all(fh, (MPI_Offset) r * BLOCK, buf, BLOCK, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
    TL_MPI(MPI_File_close(&fh));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));

    /* apart: each its own block */
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_read_at_all(fh, (MPI_Offset) r * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    expect_count(&st, BLOCK, "own block");
    tl_verify(buf, BLOCK, (long long) r * BLOCK, TAG, "own block, read_at_all");

    /* interleaved by ROMIO's test (the last process reads block 0) */
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_read_at_all(fh, (MPI_Offset) next * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    expect_count(&st, BLOCK, "next block");
    tl_verify(buf, BLOCK, (long long) next * BLOCK, TAG, "next process's block, read_at_all");

    /* the individual pointer, in two calls */
    TL_MPI(MPI_File_seek(fh, (MPI_Offset) r * BLOCK, MPI_SEEK_SET));
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_read_all(fh, buf, BLOCK / 2, MPI_BYTE, &st));
    expect_count(&st, BLOCK / 2, "first half");
    expect_position(fh, (MPI_Offset) r * BLOCK + BLOCK / 2, "after the first half");
    TL_MPI(MPI_File_read_all(fh, buf + BLOCK / 2, BLOCK / 2, MPI_BYTE, &st));
    expect_position(fh, (MPI_Offset) r * BLOCK + BLOCK, "after the second half");
    tl_verify(buf, BLOCK, (long long) r * BLOCK, TAG, "own block, read_all with the pointer");

    /* past the end: the last process's request runs 16 bytes beyond it;
     * process 0 asks for nothing */
    memset(buf, 0, BLOCK);
    int n = r == 0 ? 0 : r == P - 1 ? 32 : 16;
    MPI_Offset at = r == P - 1 ? size - 16 : (MPI_Offset) r * BLOCK;
    TL_MPI(MPI_File_read_at_all(fh, at, buf, n, MPI_BYTE, &st));
    expect_count(&st, r == 0 ? 0 : 16, "a request at the end");
    tl_verify(buf, r == 0 ? 0 : 16, at, TAG, "a request at the end");

    /* a strided view inside each process's own block: every other
     * element (apart, each read through the lower file's strided read) */
    MPI_Datatype vec, ft;
    MPI_Type_vector(BLOCK / (2 * ELEM), ELEM, 2 * ELEM, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, BLOCK, &ft);
    MPI_Type_commit(&ft);
    TL_MPI(MPI_File_set_view(fh, (MPI_Offset) r * BLOCK, MPI_BYTE, ft, "native",
                             MPI_INFO_NULL));
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_read_all(fh, buf, BLOCK / 2, MPI_BYTE, &st));
    expect_count(&st, BLOCK / 2, "own block through a strided view");
    for (int e = 0; e < BLOCK / (2 * ELEM); e++)
        tl_verify(buf + e * ELEM, ELEM, (long long) r * BLOCK + 2LL * e * ELEM, TAG,
                  "own block through a strided view");
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);

    /* a view of every P-th element across the file: interleaved */
    MPI_Type_vector((int) (size / (ELEM * P)), ELEM, ELEM * P, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, size, &ft);
    MPI_Type_commit(&ft);
    TL_MPI(MPI_File_set_view(fh, (MPI_Offset) r * ELEM, MPI_BYTE, ft, "native",
                             MPI_INFO_NULL));
    memset(buf, 0, BLOCK);
    TL_MPI(MPI_File_read_all(fh, buf, BLOCK, MPI_BYTE, &st));
    expect_count(&st, BLOCK, "every P-th element");
    for (int e = 0; e < BLOCK / ELEM; e++)
        tl_verify(buf + e * ELEM, ELEM, ((long long) e * P + r) * ELEM, TAG,
                  "every P-th element through a view");
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);

    TL_MPI(MPI_File_close(&fh));
    free(buf);
    return tl_finish();
}
