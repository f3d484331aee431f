/*
 * Fault points for the reliability tests (docs/reliability.md).
 *
 * A fault point is a named place in the code where a test can make the
 * process die or a system call fail, so that crash and error tests hit the
 * exact moment they mean to, not one found by timing luck.  One point is
 * armed per process, from the environment:
 *
 *     BBFS_FAULT=POINT[#N]:ACTION[:once]   ACTION: kill, ENOSPC, EIO, ENOMEM,
 *                                          short, short1, short-1, pause
 *     BBFS_FAULT_RANK=R                    only in the process of rank R (PMI_RANK, or PMIX_RANK)
 *                                          (as mpiexec numbers them)
 *
 * The point fires at its N-th pass (default 1).  kill sends SIGKILL to the
 * process at once, after a line on stderr that tests look for to know the
 * point was reached; an error stays in force from the N-th pass on, as a
 * full or failing device would, or only that once with ":once".
 *
 * The short actions are for write points (logfs_fault_write): the first
 * system call of the write moves fewer bytes than asked, as the kernel may
 * (a signal, a nearly full device, a network file system, any write of
 * more than 0x7ffff000 bytes): half of them (short), one (short1) or all
 * but one (short-1).  The write must then finish the rest itself.  At any
 * other point a short action does nothing.
 *
 * pause sleeps half a second and goes on: one process late at that point,
 * so that a test sees what the others do meanwhile (a race made certain).
 *
 * Unarmed, a point costs one load and a branch.  The points are listed in
 * docs/reliability.md.
 */
#ifndef LOGFS_FAULT_H
#define LOGFS_FAULT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Pass fault point @p point.  @return 0, or the errno a call made here
 * should fail with.  Does not return when the point kills. */
int logfs_fault(const char *point);

/* Pass write fault point @p point before a write of @p n bytes.  @return 0,
 * or the errno the write should fail with; *@p first is what the write's
 * first system call may move: @p n, or fewer under a short action. */
int logfs_fault_write(const char *point, size_t n, size_t *first);

/* Read BBFS_FAULT again at the next point, its pass count from zero: for
 * unit tests, which arm several points in turn in one process. */
void logfs_fault_rearm(void);

/* Real time in nanoseconds as this node's clock tells it: CLOCK_REALTIME,
 * moved by BBFS_CLOCK_SKEW_NS (signed; read at the first call) when a test
 * emulates a node whose clock is off.  bbfs stamps writes with it, and
 * bbserver tells it. */
uint64_t logfs_fault_clock(void);

#ifdef __cplusplus
}
#endif

#endif
