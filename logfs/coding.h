/*
 * Little-endian fixed-width and LEB128 varint encoding for the metalog.
 * Decoders are bounds-checked: they never read past `end`.
 */
#ifndef LOGFS_CODING_H
#define LOGFS_CODING_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a hashing (names to buckets and workers, unique ids): start from
 * LOGFS_FNV_START and fold bytes, a string or a whole value in. */
#define LOGFS_FNV_START 1469598103934665603ull
#define LOGFS_FNV_PRIME 1099511628211ull

static inline uint64_t logfs_fnv_bytes(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * LOGFS_FNV_PRIME;
    return h;
}

static inline uint64_t logfs_fnv_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * LOGFS_FNV_PRIME;
    return h;
}

static inline uint64_t logfs_fnv_value(uint64_t h, uint64_t v)
{
    return (h ^ v) * LOGFS_FNV_PRIME;
}

static inline void logfs_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void logfs_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t logfs_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t logfs_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* @return bytes written at @p p (1..10). */
static inline size_t logfs_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * Decode a varint from [*pp, end).  @return 0 and advance *pp, or -1 when the
 * input ends first or the value does not fit in 64 bits.
 */
static inline int logfs_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

static inline uint64_t logfs_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t logfs_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
