/*
 * logfs: the log-structured store under the bbfs ROMIO driver.  Plain C11,
 * no MPI: a writer per (file, process) appends to a datalog and a metalog;
 * a reader and a replay planner turn metalogs back into file contents.
 *
 *   errors.h    status codes and struct logfs_error
 *   writer.h    logging writes, epochs (sync), set_size, read-your-writes
 *   reader.h    metalog records, datalog read-back
 *   seal.h      how far a metalog is known complete (NAME.sealed)
 *   planner.h   replay plans for M replayers of N writers
 *   rangemap.h  the range map shared with bbserver
 *   extents.h   strided extent groups
 *   format.h    the on-disk format
 */
#ifndef LOGFS_H
#define LOGFS_H

#include "errors.h"
#include "extents.h"
#include "format.h"
#include "planner.h"
#include "rangemap.h"
#include "reader.h"
#include "seal.h"
#include "writer.h"

#endif
