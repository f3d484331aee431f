/* Record framing, shared by the writer and the reader (frame.h). */
#include "frame.h"

#include <string.h>

#include "coding.h"
#include "crc32c.h"
#include "format.h"

size_t logfs_frame_put(uint8_t *p, int type, const uint8_t *a, size_t alen, const uint8_t *b,
                       size_t blen)
{
    uint8_t t = (uint8_t)type;
    uint32_t crc = logfs_crc32c_extend(0, &t, 1);
    crc = logfs_crc32c_extend(crc, a, alen);
    crc = logfs_crc32c_extend(crc, b, blen);
    logfs_put32(p, logfs_crc32c_mask(crc));
    logfs_put32(p + 4, (uint32_t)(alen + blen));
    p[8] = t;
    memcpy(p + LOGFS_REC_HEADER_LEN, a, alen);
    if (blen)
        memcpy(p + LOGFS_REC_HEADER_LEN + alen, b, blen);
    return LOGFS_REC_HEADER_LEN + alen + blen;
}

uint32_t logfs_frame_len(const uint8_t *h)
{
    return logfs_get32(h + 4);
}

int logfs_frame_intact(const uint8_t *h, uint32_t n)
{
    return logfs_crc32c(h + 8, 1 + (size_t)n) == logfs_crc32c_unmask(logfs_get32(h));
}
