/*
 * The seal file (see seal.h and docs/log-format.md), and removing a log's
 * files.
 *
 * Slot layout (64 bytes, little-endian):
 *   0  magic "bbfsseal"     8  version:u32     12 rank:u32
 *   16 file_id:u64          24 nwriters:u32    28 flags:u32
 *   32 seq:u64              40 length:u64      48 epochs:u64
 *   56 reserved:u32 (0)     60 crc:u32, masked CRC-32C of bytes 0..59
 */
#define _GNU_SOURCE
#include "seal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coding.h"
#include "crc32c.h"
#include "fault.h"
#include "internal.h"
#include "writer.h"

#define CRC_AT (LOGFS_SEAL_SLOT_LEN - 4)

char *logfs_seal_path(const char *metalog)
{
    return logfs_sibling_path(metalog, "sealed");
}

void logfs_seal_encode(uint8_t slot[LOGFS_SEAL_SLOT_LEN], const struct logfs_seal *s)
{
    memset(slot, 0, LOGFS_SEAL_SLOT_LEN);
    memcpy(slot, LOGFS_SEAL_MAGIC, 8);
    logfs_put32(slot + 8, LOGFS_SEAL_VERSION);
    logfs_put32(slot + 12, s->rank);
    logfs_put64(slot + 16, s->file_id);
    logfs_put32(slot + 24, s->nwriters);
    logfs_put32(slot + 28, s->closed ? LOGFS_SEAL_CLOSED : 0);
    logfs_put64(slot + 32, s->seq);
    logfs_put64(slot + 40, s->length);
    logfs_put64(slot + 48, s->epochs);
    logfs_put32(slot + CRC_AT, logfs_crc32c_mask(logfs_crc32c(slot, CRC_AT)));
}

int logfs_seal_decode(const uint8_t slot[LOGFS_SEAL_SLOT_LEN], struct logfs_seal *s)
{
    if (memcmp(slot, LOGFS_SEAL_MAGIC, 8) || logfs_get32(slot + 8) != LOGFS_SEAL_VERSION ||
        logfs_crc32c_unmask(logfs_get32(slot + CRC_AT)) != logfs_crc32c(slot, CRC_AT))
        return 0;
    memset(s, 0, sizeof *s);
    s->state = LOGFS_SEAL_VALID;
    s->rank = logfs_get32(slot + 12);
    s->file_id = logfs_get64(slot + 16);
    s->nwriters = logfs_get32(slot + 24);
    s->closed = (logfs_get32(slot + 28) & LOGFS_SEAL_CLOSED) != 0;
    s->seq = logfs_get64(slot + 32);
    s->length = logfs_get64(slot + 40);
    s->epochs = logfs_get64(slot + 48);
    return 1;
}

int logfs_seal_read(const char *metalog, struct logfs_seal *out, struct logfs_error *err)
{
    int fd = -1;
    int rc = logfs_seal_read_kept(metalog, &fd, out, err);
    if (fd >= 0)
        close(fd);
    return rc;
}

int logfs_seal_read_kept(const char *metalog, int *fd, struct logfs_seal *out,
                         struct logfs_error *err)
{
    uint8_t buf[LOGFS_SEAL_FILE_LEN];
    struct logfs_seal slot[2];
    int ok[2];
    size_t got = 0;

    memset(out, 0, sizeof *out);
    if (*fd < 0) {
        char *path = logfs_seal_path(metalog);
        if (!path)
            return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to read the seal of %s", metalog);
        int rc = logfs_open_own(path, O_RDONLY, 0, "cannot open seal", fd, err);
        free(path);
        if (rc)
            return rc == LOGFS_ENOENT ? LOGFS_OK : rc; /* no seal: state NONE */
    }
    /* A short file is fine: the slots it does not hold are not valid.  (The
     * writer rewrites its slots in place, so a kept descriptor sees every
     * seal made after it was opened.) */
    memset(buf, 0, sizeof buf);
    while (got < sizeof buf) {
        ssize_t n = pread(*fd, buf + got, sizeof buf - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return logfs_fail_errno(err, errno, "cannot read the seal of", metalog);
        if (n == 0)
            break;
        got += (size_t)n;
    }
    out->state = LOGFS_SEAL_UNKNOWN;
    for (int i = 0; i < 2; i++) {
        ok[i] = got >= (size_t)(i + 1) * LOGFS_SEAL_SLOT_LEN &&
                logfs_seal_decode(buf + i * LOGFS_SEAL_SLOT_LEN, &slot[i]);
        out->valid_slots += ok[i];
    }
    int best = ok[0] && (!ok[1] || slot[0].seq >= slot[1].seq) ? 0 : ok[1] ? 1 : -1;
    if (best >= 0) {
        int n = out->valid_slots;
        *out = slot[best];
        out->valid_slots = n;
    }
    return LOGFS_OK;
}

int logfs_log_remove(const char *metalog, struct logfs_error *err)
{
    /* The seal goes first: a metalog left without its seal reads as an
     * older log, while a seal left without its metalog could be taken for
     * the seal of a later log of the same name. */
    static const char *const suffixes[] = {"sealed", NULL, "datalog"};
    int rc = LOGFS_OK;

    /* Removes what it is told: never a file that is not a log. */
    if (!logfs_is_metalog_name(metalog))
        return logfs_fail(err, LOGFS_EINVAL, 0, "not a metalog name, not removed: %s", metalog);

    int e = logfs_fault("log-remove");
    if (e)
        return logfs_fail_errno(err, e, "cannot remove the log of", metalog);
    for (int i = 0; i < 3; i++) {
        char *p = suffixes[i] ? logfs_sibling_path(metalog, suffixes[i]) : strdup(metalog);
        if (!p) {
            if (!rc)
                rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to remove the log of %s", metalog);
            continue;
        }
        if (unlink(p) < 0 && errno != ENOENT && !rc)
            rc = logfs_fail_errno(err, errno, "cannot remove log file", p);
        free(p);
    }
    return rc;
}
