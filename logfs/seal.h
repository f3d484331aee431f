/*
 * The seal: how far a metalog is known to be complete.
 *
 * A writer keeps, beside NAME.metalog, a small file NAME.sealed (0600).  At
 * every sync and at close, after the SYNC/CLOSE record is in the metalog
 * (and fdatasync'ed, when durable), it records the metalog's length at that
 * point, the "sealed length", with one pwrite of one 64-byte slot.  Two
 * slots alternate (seal number n goes to slot n mod 2) and each carries its
 * own checksum, so a torn slot write leaves the other slot, the previous
 * seal, valid.  docs/log-format.md gives the layout byte by byte.
 *
 * The reader uses it to tell damage from a torn tail: a record stream that
 * ends before the sealed length (a record whose length runs past the end of
 * the file or past the sealed length, or a file shorter than the sealed
 * length) is corruption, because those bytes were written and synced.
 * Without a valid seal (no file: older logs; or no valid slot: a crash
 * during the first seal) the reader behaves as it always did.
 */
#ifndef LOGFS_SEAL_H
#define LOGFS_SEAL_H

#include <stdint.h>

#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOGFS_SEAL_MAGIC "bbfsseal"
#define LOGFS_SEAL_VERSION 1u
#define LOGFS_SEAL_SLOT_LEN 64u   /* bytes per slot */
#define LOGFS_SEAL_FILE_LEN 128u  /* two slots */
#define LOGFS_SEAL_CLOSED 1u      /* flags: the last sealed record is CLOSE */

enum logfs_seal_state {
    LOGFS_SEAL_NONE = 0,    /* no seal file (older log, or not written by a writer) */
    LOGFS_SEAL_UNKNOWN = 1, /* a seal file without a valid slot (crash during the first seal) */
    LOGFS_SEAL_VALID = 2,   /* the metalog is complete up to `length` */
    LOGFS_SEAL_FOREIGN = 3  /* a valid slot, but of another log (file id, rank or writer
                               count differ from the metalog header): ignored */
};

struct logfs_seal {
    int state;         /* enum logfs_seal_state; the fields below are set for VALID and FOREIGN */
    int valid_slots;   /* slots whose checksum is right (0, 1 or 2) */
    uint64_t seq;      /* seal number: 1 for the first seal of a log, +1 each time */
    uint64_t file_id;  /* as in the metalog header */
    uint32_t rank;     /* as in the metalog header */
    uint32_t nwriters; /* as in the metalog header */
    uint64_t length;   /* sealed length: metalog offset just past the last SYNC/CLOSE */
    uint64_t epochs;   /* epochs sealed: SYNC/CLOSE records before `length` */
    int closed;        /* nonzero: the record ending at `length` is CLOSE */
};

/* @return malloc'ed seal path of a metalog: NAME.metalog -> NAME.sealed (a
 *         path not ending in ".metalog" gets ".sealed" appended), or NULL (no memory). */
char *logfs_seal_path(const char *metalog);

/*
 * Read the seal of the metalog at @p metalog (from logfs_seal_path).
 * @param[out] out  state NONE (no file), UNKNOWN or VALID; the newest valid
 *                  slot when VALID.  Identity is not checked here (the reader
 *                  compares it with the header and may say FOREIGN).
 * @return LOGFS_OK, or LOGFS_EACCES/LOGFS_EIO/LOGFS_ENOMEM when the seal
 *         file exists but cannot be read
 */
int logfs_seal_read(const char *metalog, struct logfs_seal *out, struct logfs_error *err);

/* logfs_seal_read through *fd, the seal file kept open by the caller
 * between reads (-1: opened here, and left in *fd for the next read, when
 * the file exists; the caller closes it). */
int logfs_seal_read_kept(const char *metalog, int *fd, struct logfs_seal *out,
                         struct logfs_error *err);

/* Encode one slot (all fields but state and valid_slots) into @p slot. */
void logfs_seal_encode(uint8_t slot[LOGFS_SEAL_SLOT_LEN], const struct logfs_seal *s);

/* Decode one slot. @return 1 if magic, version and checksum are right (then *s is set), else 0. */
int logfs_seal_decode(const uint8_t slot[LOGFS_SEAL_SLOT_LEN], struct logfs_seal *s);

/* @return the slot (0 or 1) seal number @p seq goes to. */
static inline unsigned logfs_seal_slot(uint64_t seq)
{
    return (unsigned)(seq & 1);
}

#ifdef __cplusplus
}
#endif

#endif
