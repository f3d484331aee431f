/*
 * The metalog format, all of it.  docs/log-format.md walks through it byte
 * by byte; this header is the authority.
 *
 * A metalog is a sequence of records.  All integers are little-endian.
 *
 *   record  := crc:u32  len:u32  type:u8  payload[len]
 *     crc      masked CRC-32C (logfs_crc32c_mask) of type and payload
 *     len      payload length in bytes, at most LOGFS_MAX_PAYLOAD
 *     type     one of enum logfs_rec_type
 *
 * Payloads (varint = unsigned LEB128, at most 10 bytes; svarint = zigzag
 * varint for signed values):
 *
 *   HEADER  (always the first record, only there; fixed size)
 *     magic:u8[8]     "bbfsmlog"
 *     version:u32     LOGFS_FORMAT_VERSION
 *     file_id:u64     identifies the canonical file (chosen by the driver)
 *     rank:u32        this writer's rank, 0 <= rank < nwriters
 *     nwriters:u32    number of writers that log this file
 *
 *   WRITE   (bytes of one write call, or of a slice of a very large one)
 *     dlog_off:varint  datalog offset of this record's first data byte
 *     nbytes:varint    data bytes the record covers (sum over its groups)
 *     group*           until the end of the payload, each:
 *       count:varint     number of blocks, >= 1
 *       offset:varint    file offset of the first block
 *       blocklen:varint  bytes per block, >= 1
 *       stride:svarint   distance between block starts (only if count > 1)
 *     The data of the blocks lies in the datalog back to back, in the order
 *     the groups and blocks are listed, starting at dlog_off.
 *
 *   SYNC    (closes an epoch)
 *     epoch:varint     the epoch being closed; epochs count from 0 and every
 *                      SYNC closes the next one
 *     dlog_len:varint  datalog length at this point (all earlier data)
 *
 *   SETSIZE (MPI_File_set_size, ordered with the writes of its epoch)
 *     size:varint      new file size: shrinking discards bytes at and past
 *                      it, growing reads as zeros
 *
 *   ORDER   (version 2; the writer's handle entered or left a collective call)
 *     seq:varint       boundaries of collective calls the handle has passed
 *                      (each call's entry and exit count one), >= 1 and never
 *                      smaller than an earlier ORDER's: the writes and
 *                      SETSIZEs after it, up to the next ORDER, were made in
 *                      collective call (seq + 1) / 2 when seq is odd, after
 *                      call seq / 2 when it is even.  Every process of a file
 *                      enters the same collective calls in the same order, so
 *                      within an epoch the writes of (seq, rank, record order)
 *                      are applied in that order: a collective call orders the
 *                      writes before it, in it and after it, on every process,
 *                      as ROMIO over a POSIX file does (HDF5 writes a chunk's
 *                      fill values in one call, then its data in the next, or
 *                      after a barrier with independent writes).  Writes
 *                      before the first ORDER have seq 0.
 *     [step:varint]    (version 4) when present, > 0 (and seq may be 0: a
 *                      first block made before any call): the next record is a
 *                      WRITE of one group of at least two blocks, one per
 *                      collective call, block i made at count seq + i*step
 *                      (and the count after it is the last block's): each
 *                      of a run of single-block calls keeps its own count
 *                      without an ORDER and a WRITE record of its own.
 *
 *   STAMP   (version 3; a time on a clock all handles of the file share)
 *     clock:varint     nanoseconds; never smaller than an earlier STAMP's.
 *     process:varint   (optional) who wrote the log: one value per process
 *                      (0: unknown), the same in every STAMP of a metalog;
 *                      a process's writes through several handles keep
 *                      their program order in a plan of their sessions.
 *                      The writes and SETSIZEs after it, up to the next
 *                      STAMP, were made after that time.  A writer stamps
 *                      the start of each epoch (after the sync that began
 *                      it) and each switch of its process from another
 *                      handle of the same file to this one: when several
 *                      handles' sessions are replayed together, a write
 *                      made later by the clock wins over another handle's
 *                      (PnetCDF writes the header through one handle and
 *                      the data through another; MPI-IO orders handles by
 *                      sync, barrier, sync), see planner.h.  Writes before
 *                      the first STAMP have clock 0.
 *
 *   CLOSE   (the last record of a cleanly closed log; closes the open epoch)
 *     epoch:varint     the epoch being closed (as for SYNC)
 *     dlog_len:varint  final datalog length
 *
 * Beside the metalog, NAME.sealed records the metalog length after the last
 * SYNC/CLOSE (two checksummed 64-byte slots): see seal.h and seal.c.
 */
#ifndef LOGFS_FORMAT_H
#define LOGFS_FORMAT_H

#include <stdint.h>

#define LOGFS_MAGIC "bbfsmlog"
#define LOGFS_MAGIC_LEN 8
#define LOGFS_FORMAT_VERSION 4u
/* Oldest version this build still reads (version 1 has no ORDER records,
 * versions 1 and 2 no STAMP records, versions 1 to 3 no ORDER step). */
#define LOGFS_FORMAT_VERSION_MIN 1u

/* crc(4) + len(4) + type(1) */
#define LOGFS_REC_HEADER_LEN 9u

/* Bounds what a reader ever allocates for one record. */
#define LOGFS_MAX_PAYLOAD (16u << 20)

/* Size of the HEADER payload. */
#define LOGFS_HEADER_PAYLOAD_LEN (LOGFS_MAGIC_LEN + 4 + 8 + 4 + 4)

/* Writers cut a WRITE record here, so a reader's buffer stays small even
 * when a call has millions of incompressible extents. */
#define LOGFS_WRITE_RECORD_SOFT_MAX (256u << 10)

/* Worst-case bytes of one group: four 10-byte varints. */
#define LOGFS_GROUP_MAX_LEN 40u

enum logfs_rec_type {
    LOGFS_REC_HEADER = 1,
    LOGFS_REC_WRITE = 2,
    LOGFS_REC_SYNC = 3,
    LOGFS_REC_SETSIZE = 4,
    LOGFS_REC_CLOSE = 5,
    LOGFS_REC_ORDER = 6,
    LOGFS_REC_STAMP = 7,
};

#endif
