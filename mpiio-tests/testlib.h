/*
 * Helpers shared by the MPI-level tests.
 *
 * Every test program takes one argument, the file name with its ROMIO prefix
 * ("ufs:/d/ref.dat", "bbfs:/d/t.dat", ...).  It writes that file, checks what
 * it reads back itself, and exits 0 only if every check held.  run-mpiio-test.sh
 * then compares the bbfs run's file byte for byte with the ufs run's.
 */
#ifndef BBFS_TESTLIB_H
#define BBFS_TESTLIB_H

#include <mpi.h>
#include <stddef.h>

extern int tl_rank, tl_nprocs;

/* MPI_Init, argument parsing; returns the file name under test. */
const char *tl_init(int *argc, char ***argv);
/* Barrier, MPI_Finalize, exit status. */
int tl_finish(void);

/* 1 if the name under test goes through the bbfs driver. */
int tl_is_bbfs(const char *filename);
/* Collective: whether every process runs on one host (processor name). */
int tl_one_host(void);
/* The name without its ROMIO prefix(es), for POSIX calls. */
const char *tl_path(const char *filename);
/* filename + suffix, with the prefix kept (static buffer per call site). */
void tl_sibling(const char *filename, const char *suffix, char *out, size_t len);

/* Deterministic content of byte `off` of the file written in round `tag`. */
unsigned char tl_byte(long long off, int tag);
void tl_fill(unsigned char *buf, size_t n, long long off, int tag);

void tl_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
void tl_fail_mpi(const char *what, int err, const char *file, int line)
    __attribute__((noreturn));

#define TL_CHECK(cond, ...) \
    do { if (!(cond)) tl_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define TL_MPI(call) \
    do { int tl_e_ = (call); \
         if (tl_e_ != MPI_SUCCESS) tl_fail_mpi(#call, tl_e_, __FILE__, __LINE__); } while (0)

/* MPI-IO's sync-barrier-sync: afterwards every process of the file sees
 * what every other one wrote before it. */
void tl_sync_barrier_sync(MPI_File fh);

/* The manifests of pending or live logs of file `path` (no prefix):
 * returns how many there are, and the first one's path in `out`. */
int tl_manifests(const char *path, char *out, size_t len);
/* Calls each (if not NULL) with every such manifest's path; returns how
 * many there are. */
int tl_each_manifest(const char *path, void (*each)(const char *manifest, void *arg),
                     void *arg);

/* Expect `err` to be of MPI error class `cls`; returns the error string. */
const char *tl_expect_class(int err, int cls, const char *what);

/* MPI_File_get_info's value of key into value (MPI_MAX_INFO_VAL + 1
 * bytes); returns whether the key is there. */
int tl_info_get(MPI_File fh, const char *key, char *value);

/* Check that MPI_File_get_info shows key = want (want NULL: key absent). */
void tl_expect_info(MPI_File fh, const char *key, const char *want);

/* Verify n bytes in buf equal round `tag`'s content for file offset off. */
void tl_verify(const unsigned char *buf, size_t n, long long off, int tag, const char *what);

/* What MPI_File_get_info shows of a bbfs hint on another driver, which
 * does not know it: MPICH 4's ROMIO drops it, ROMIO 3.4.1 (Open MPI's)
 * keeps it as given. */
#ifdef OPEN_MPI
#define TL_FOREIGN_HINT(given) (given)
#else
#define TL_FOREIGN_HINT(given) NULL
#endif

#endif
