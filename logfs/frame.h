/*
 * Record framing (internal; the layout is in format.h): a masked CRC-32C
 * of type and payload, the payload length, the type, the payload.  The
 * writer frames records with logfs_frame_put, the reader checks them with
 * logfs_frame_len and logfs_frame_intact: one definition for both sides.
 */
#ifndef LOGFS_FRAME_H
#define LOGFS_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Frame a record of @p type whose payload is @p a followed by @p b at @p p
 * (room for LOGFS_REC_HEADER_LEN + alen + blen bytes).  @return its length. */
size_t logfs_frame_put(uint8_t *p, int type, const uint8_t *a, size_t alen, const uint8_t *b,
                       size_t blen);

/* The payload length the record header at @p h states. */
uint32_t logfs_frame_len(const uint8_t *h);

/* 1 if the record at @p h (its header and @p n payload bytes) has the
 * checksum its header states. */
int logfs_frame_intact(const uint8_t *h, uint32_t n);

#endif
