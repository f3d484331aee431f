/*
 * Fault points for the reliability tests (docs/reliability.md).
 *
 * A fault point is a named place in the code where a test can make the
 * process die or a system call fail, so that crash and error tests hit the
 * exact moment they mean to, not one found by timing luck.  One point is
 * armed per process, from the environment:
 *
 *     BBFS_FAULT=POINT[#N]:ACTION[:once]   ACTION: kill, ENOSPC, EIO, ENOMEM
 *     BBFS_FAULT_RANK=R                    only in the process with PMI_RANK R
 *                                          (as mpiexec numbers them)
 *
 * The point fires at its N-th pass (default 1).  kill sends SIGKILL to the
 * process at once, after a line on stderr that tests look for to know the
 * point was reached; an error stays in force from the N-th pass on, as a
 * full or failing device would, or only that once with ":once".  Unarmed, a point costs one load and a
 * branch.  The points are listed in docs/reliability.md.
 */
#ifndef LOGFS_FAULT_H
#define LOGFS_FAULT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Pass fault point @p point.  @return 0, or the errno a call made here
 * should fail with.  Does not return when the point kills. */
int logfs_fault(const char *point);

#ifdef __cplusplus
}
#endif

#endif
