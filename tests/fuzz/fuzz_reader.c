/*
 * libFuzzer target for the metalog reader: any bytes, read to the end.  The
 * reader must return an error or LOGFS_END and never touch memory outside
 * the input (AddressSanitizer watches).
 */
#include <stddef.h>
#include <stdint.h>

#include "extents.h"
#include "format.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct logfs_reader *r;
    struct logfs_record rec;
    struct logfs_error err;
    volatile uint64_t sink = 0;

    if (logfs_reader_open_mem(data, size, &r, &err) != LOGFS_OK)
        return 0;
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
    return 0;
}
