/*
 * CRC-32C (Castagnoli), the checksum of every metalog record, and the
 * LevelDB-style mask applied before it is stored.
 */
#ifndef LOGFS_CRC32C_H
#define LOGFS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Continue a CRC-32C over @p len bytes at @p data.
 * @param crc   value returned by a previous call, or 0 to start
 * @return      the CRC of everything fed so far
 */
uint32_t logfs_crc32c_extend(uint32_t crc, const void *data, size_t len);

/* @return the CRC-32C of @p len bytes at @p data. */
static inline uint32_t logfs_crc32c(const void *data, size_t len)
{
    return logfs_crc32c_extend(0, data, len);
}

/*
 * A record that embeds CRCs of its own content is a pathological input for
 * a CRC; storing a rotated, offset value avoids that (LevelDB does the same).
 */
static inline uint32_t logfs_crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/* Inverse of logfs_crc32c_mask(). */
static inline uint32_t logfs_crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - 0xa282ead8u;
    return (rot >> 17) | (rot << 15);
}

#ifdef __cplusplus
}
#endif

#endif
