/*
 * libFuzzer target for the metalog reader: any bytes, read to the end.  The
 * reader must return an error or LOGFS_END and never touch memory outside
 * the input (AddressSanitizer watches).
 *
 * Each input is read twice: as given, and with every well-framed record's
 * checksum recomputed, so that mutations reach the payload parsers instead
 * of dying at the checksum.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "crc32c.h"
#include "extents.h"
#include "format.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(const uint8_t *data, size_t size)
{
    struct logfs_reader *r;
    struct logfs_record rec;
    struct logfs_error err;
    volatile uint64_t sink = 0;

    if (logfs_reader_open_mem(data, size, &r, &err) != LOGFS_OK)
        return;
    while (logfs_reader_next(r, &rec, &err) == LOGFS_OK) {
        if (rec.type == LOGFS_REC_WRITE) {
            struct logfs_group_iter it;
            struct logfs_group g;
            logfs_group_iter_init(&it, rec.u.write.groups, rec.u.write.groups_len);
            /* The reader validated the groups: decoding them again must agree. */
            while (logfs_group_next(&it, &g) == 1)
                sink += logfs_group_block(&g, g.count - 1) + g.blocklen;
        }
    }
    (void)sink;
    logfs_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *fixed;
    size_t pos = 0;

    read_all(data, size);
    fixed = malloc(size ? size : 1);
    if (!fixed)
        return 0;
    if (size)
        memcpy(fixed, data, size);
    while (size - pos >= LOGFS_REC_HEADER_LEN) {
        uint32_t n = logfs_get32(fixed + pos + 4);
        if (n > size - pos - LOGFS_REC_HEADER_LEN)
            break;
        logfs_put32(fixed + pos, logfs_crc32c_mask(logfs_crc32c(fixed + pos + 8, 1 + (size_t)n)));
        pos += LOGFS_REC_HEADER_LEN + n;
    }
    read_all(fixed, size);
    free(fixed);
    return 0;
}
