/* bbfs_replay on_sync: after MPI_File_sync the canonical file holds every
 * synced byte, for readers outside MPI-IO.  PnetCDF's ncmpi_open reads a
 * file's format signature with POSIX open/read; nc_test's test_ncmpi_sync
 * opens a second handle on a file still open for writing, after
 * ncmpi_sync.  MPI-IO promises nothing to a POSIX reader; on_sync does.
 *
 * Each process writes its block, everyone syncs, barrier; process 0 reads
 * the whole file with POSIX read() and checks every block.  Then each
 * process overwrites half of the next one's block, and the same again.
 * Then, as PnetCDF's independent mode does, each process opens the file
 * again on MPI_COMM_SELF, writes the first quarter of its own block through
 * the first handle and then through the second, syncs the second, and the
 * first handle syncs too: its replay must not put its older bytes back
 * over the second handle's. */
#include "testlib.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCK 4096

static void posix_check(const char *name, int round)
{
    const char *path = tl_path(name);
    size_t n = (size_t) tl_nprocs * BLOCK;
    unsigned char *got = calloc(1, n);
    int fd = open(path, O_RDONLY);
    ssize_t k = fd < 0 ? -1 : pread(fd, got, n, 0);
    char what[160];

    TL_CHECK(k == (ssize_t) n, "round %d: POSIX read of %s gave %zd bytes, expected %zu", round,
             path, k, n);
    for (int r = 0; r < tl_nprocs && k == (ssize_t) n; r++) {
        long long o = (long long) r * BLOCK;
        snprintf(what, sizeof(what), "round %d: POSIX read after sync, block %d", round, r);
        if (round == 0) {
            tl_verify(got + o, BLOCK, o, 1, what);
        } else if (round == 2) {
            tl_verify(got + o, BLOCK / 4, o, 3, what);
            tl_verify(got + o + BLOCK / 4, BLOCK / 4, o + BLOCK / 4, 2, what);
            tl_verify(got + o + BLOCK / 2, BLOCK / 2, o + BLOCK / 2, 1, what);
        } else {
            tl_verify(got + o, BLOCK / 2, o, 2, what);
            tl_verify(got + o + BLOCK / 2, BLOCK / 2, o + BLOCK / 2, 1, what);
        }
    }
    if (fd >= 0)
        close(fd);
    free(got);
}

int main(int argc, char **argv)
{
    const char *name = tl_init(&argc, &argv);
    unsigned char *buf = malloc(BLOCK);
    MPI_File fh;
    MPI_Status st;
    MPI_Offset mine = (MPI_Offset) tl_rank * BLOCK,
        next = (MPI_Offset) ((tl_rank + 1) % tl_nprocs) * BLOCK;

    TL_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    tl_fill(buf, BLOCK, mine, 1);
    TL_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);
    if (tl_rank == 0)
        posix_check(name, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    tl_fill(buf, BLOCK / 2, next, 2);
    TL_MPI(MPI_File_write_at(fh, next, buf, BLOCK / 2, MPI_BYTE, &st));
    tl_sync_barrier_sync(fh);
    if (tl_rank == 0)
        posix_check(name, 1);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_File self;
    TL_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &self));
    tl_fill(buf, BLOCK / 4, mine, 4);   /* first through the first handle, */
    TL_MPI(MPI_File_write_at(fh, mine, buf, BLOCK / 4, MPI_BYTE, &st));
    tl_fill(buf, BLOCK / 4, mine, 3);   /* then, later, through the second */
    TL_MPI(MPI_File_write_at(self, mine, buf, BLOCK / 4, MPI_BYTE, &st));
    TL_MPI(MPI_File_sync(self));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        posix_check(name, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_close(&self));
    TL_MPI(MPI_File_close(&fh));
    free(buf);
    return tl_finish();
}
