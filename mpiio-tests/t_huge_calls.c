/* Single MPI-IO calls that move 2 GiB and more (a checkpoint's whole
 * array in one call), where an int length or a short system call used to
 * lose bytes:
 *   - the datalog's vectored append: Linux moves at most 0x7ffff000 bytes
 *     per write, and the short-write branch wrote the rest over the part
 *     already written (the log came out shorter than its metalog);
 *   - reads of canonical data no log holds, through the lower driver's
 *     int-count ReadContig (the buffer came back zero-filled);
 *   - memory types that are not contiguous, which bbfs packs and unpacks
 *     with MPI_Pack/MPI_Unpack and their int sizes.
 *
 * Process 0 writes HUGE_MIB MiB in one MPI_File_write_at (HUGE_MIB elements
 * of a 1 MiB contiguous type), then 4 KiB after a 64 MiB hole; process 1
 * writes nothing (run with 2: more idle processes only spin in the close's
 * collectives, and on 2 cores took the test from 8 s to 25 s).  After close, process 0 reads it all back in one call,
 * then in one call through a vector memory type (1 MiB blocks, a 4 KiB gap
 * between them), then writes the same span again through that memory type
 * and reads it back from its own log in one call, then once more with one
 * MPI_File_iwrite_at and one MPI_File_iread_at; after sync-barrier-sync
 * process 1 reads that span from process 0's log in one MPI_File_read_at_all
 * (through bbserver when run with BBFS_FORCE_REMOTE=1).  The runner compares
 * the file with the ufs: run's.  Built as t_huge_4g (HUGE_MIB 4097: a length
 * cut to a signed or an unsigned 32-bit int comes out 1 MiB, so shows as
 * wrong bytes), and as t_huge_4g_remote (HUGE_REMOTE_ONLY), which makes the
 * same file with only the calls the read through bbserver needs: process
 * 0's one big write of the last round and the tail, then that read. */
#include "testlib.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HUGE_MIB
#error "build with -DHUGE_MIB=n (one call of n MiB)"
#endif
#define MIB ((size_t) 1 << 20)
#define GAP ((size_t) 4096)
#define DATA ((MPI_Offset) HUGE_MIB * (MPI_Offset) MIB)
#define TAIL (DATA + 64 * (MPI_Offset) MIB)

/* The content of the 8-byte word at file offset @p off (a multiple of 8)
 * in round @p tag: testlib's tl_byte costs a call per byte, minutes for
 * the several passes over 4 GiB made here. */
static uint64_t word(uint64_t off, int tag)
{
    return (off * 0x9e3779b97f4a7c15ull) ^ ((uint64_t) tag << 56) ^ (off >> 3);
}

static void fill(unsigned char *buf, size_t n, uint64_t off, int tag)
{
    uint64_t *w = (uint64_t *) buf;
    for (size_t i = 0; i < n / 8; i++)
        w[i] = word(off + 8 * i, tag);
}

static void verify(const unsigned char *buf, size_t n, uint64_t off, int tag, const char *what)
{
    const uint64_t *w = (const uint64_t *) buf;
    size_t i = 0;
    while (i < n / 8 && w[i] == word(off + 8 * i, tag))
        i++;
    TL_CHECK(i == n / 8, "%s: the word at file offset %llu is 0x%016llx, expected 0x%016llx",
             what, (unsigned long long) (off + 8 * i), (unsigned long long) w[i],
             (unsigned long long) word(off + 8 * i, tag));
}

#ifndef HUGE_REMOTE_ONLY
/* The memory layout of the vector type: block i at i * (MIB + GAP). */
static unsigned char *block(unsigned char *buf, size_t i)
{
    return buf + i * (MIB + GAP);
}

static void fill_blocks(unsigned char *buf, int tag)
{
    for (size_t i = 0; i < HUGE_MIB; i++)
        fill(block(buf, i), MIB, i * MIB, tag);
}

static void verify_blocks(unsigned char *buf, int tag, const char *what)
{
    for (size_t i = 0; i < HUGE_MIB; i++)
        verify(block(buf, i), MIB, i * MIB, tag, what);
}
#endif

static void expect_count(MPI_Status *st, MPI_Datatype type, MPI_Count want, const char *what)
{
    MPI_Count got;
    TL_MPI(MPI_Get_elements_x(st, type, &got));
    TL_CHECK(got == want, "%s: the status says %lld elements, expected %lld", what,
             (long long) got, (long long) want);
}

/* The big write of round @p tag in one call, and the 4 KiB after the hole. */
static void write_span_and_tail(MPI_File fh, unsigned char *buf, MPI_Datatype mib, int tag)
{
    MPI_Status st;
    fill(buf, (size_t) DATA, 0, tag);
    TL_MPI(MPI_File_write_at(fh, 0, buf, HUGE_MIB, mib, &st));
    expect_count(&st, MPI_BYTE, DATA, "the big write");
    fill(buf, 4096, TAIL, 2);
    TL_MPI(MPI_File_write_at(fh, TAIL, buf, 4096, MPI_BYTE, &st));
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    MPI_Datatype mib, spread;
    MPI_File fh;
    MPI_Status st;
    unsigned char *buf = NULL;

    TL_MPI(MPI_Type_contiguous((int) MIB, MPI_BYTE, &mib));
    TL_MPI(MPI_Type_commit(&mib));
    TL_MPI(MPI_Type_vector(HUGE_MIB, (int) MIB, (int) (MIB + GAP), MPI_BYTE, &spread));
    TL_MPI(MPI_Type_commit(&spread));
    if (tl_rank == 0) {
        buf = malloc(HUGE_MIB * (MIB + GAP));
        TL_CHECK(buf != NULL, "no memory for %d MiB", HUGE_MIB);
    }

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
#ifdef HUGE_REMOTE_ONLY
    if (tl_rank == 0) {
        write_span_and_tail(fh, buf, mib, 4);
        free(buf);
        buf = NULL;
    }
#else
    if (tl_rank == 0)
        write_span_and_tail(fh, buf, mib, 1);
    TL_MPI(MPI_File_close(&fh));

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (tl_rank == 0) {
        memset(buf, 0xee, (size_t) DATA);
        TL_MPI(MPI_File_read_at(fh, 0, buf, HUGE_MIB, mib, &st));
        expect_count(&st, MPI_BYTE, DATA, "the big read");
        verify(buf, (size_t) DATA, 0, 1, "one read of the whole span (canonical file)");

        memset(buf, 0xee, HUGE_MIB * (MIB + GAP));
        TL_MPI(MPI_File_read_at(fh, 0, buf, 1, spread, &st));
        expect_count(&st, MPI_BYTE, DATA, "the read through a vector memory type");
        verify_blocks(buf, 1, "one read through a vector memory type (canonical file)");

        fill_blocks(buf, 3);
        TL_MPI(MPI_File_write_at(fh, 0, buf, 1, spread, &st));
        expect_count(&st, MPI_BYTE, DATA, "the write through a vector memory type");
        memset(buf, 0xee, HUGE_MIB * (MIB + GAP));
        TL_MPI(MPI_File_read_at(fh, 0, buf, HUGE_MIB, mib, &st));
        verify(buf, (size_t) DATA, 0, 3, "one read of the span written through the vector "
                  "type (own log)");
        memset(buf, 0xee, HUGE_MIB * (MIB + GAP));
        TL_MPI(MPI_File_read_at(fh, 0, buf, 1, spread, &st));
        verify_blocks(buf, 3, "one read through the vector type of what it wrote (own log)");

        /* Nonblocking, one call each way, over its own log.  (The ufs:
         * reference run makes the same bytes with blocking calls: it only
         * gives the file to compare.) */
        MPI_Request rq = MPI_REQUEST_NULL;
        int nonblocking = tl_is_bbfs(name);
        fill(buf, (size_t) DATA, 0, 4);
        if (nonblocking)
            TL_MPI(MPI_File_iwrite_at(fh, 0, buf, HUGE_MIB, mib, &rq));
        else
            TL_MPI(MPI_File_write_at(fh, 0, buf, HUGE_MIB, mib, &st));
        TL_MPI(MPI_Wait(&rq, nonblocking ? &st : MPI_STATUS_IGNORE));
        expect_count(&st, MPI_BYTE, DATA, "the nonblocking write");
        memset(buf, 0xee, (size_t) DATA);
        if (nonblocking)
            TL_MPI(MPI_File_iread_at(fh, 0, buf, HUGE_MIB, mib, &rq));
        else
            TL_MPI(MPI_File_read_at(fh, 0, buf, HUGE_MIB, mib, &st));
        TL_MPI(MPI_Wait(&rq, nonblocking ? &st : MPI_STATUS_IGNORE));
        expect_count(&st, MPI_BYTE, DATA, "the nonblocking read");
        verify(buf, (size_t) DATA, 0, 4, "one nonblocking read of what one nonblocking write "
               "wrote (own log)");
        free(buf);
        buf = NULL;
    }
#endif
    /* Another process reads it all, from process 0's log, in one collective
     * call (through bbserver with BBFS_FORCE_REMOTE). */
    tl_sync_barrier_sync(fh);
    if (tl_rank == 1) {
        buf = malloc((size_t) DATA);
        TL_CHECK(buf != NULL, "no memory for %d MiB", HUGE_MIB);
        memset(buf, 0xee, (size_t) DATA);
    }
    TL_MPI(MPI_File_read_at_all(fh, 0, buf, tl_rank == 1 ? HUGE_MIB : 0, mib, &st));
    if (tl_rank == 1) {
        expect_count(&st, MPI_BYTE, DATA, "the collective read of another's log");
        verify(buf, (size_t) DATA, 0, 4, "one collective read of what process 0 synced");
    }
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    MPI_Type_free(&mib);
    MPI_Type_free(&spread);
    return tl_finish();
}
