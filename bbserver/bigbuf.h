/*
 * Buffers of a megabyte and more (a read's reply: up to BBS_MAX_READ),
 * kept for the next message rather than freed.  A buffer freed that large
 * goes back to the kernel (glibc maps it alone), and the next one costs a
 * page fault per 4 KiB page: a remote read of 4 GiB through bbserver ran
 * at 0.15 GB/s on this project's VM, where such faults run at 0.26 GB/s.
 * Shared by threads (a server's workers fill replies its main thread
 * sends).
 */
#ifndef BBS_BIGBUF_H
#define BBS_BIGBUF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* From this size on, buffers are kept. */
#define BBS_BIG (1u << 20)

/* A buffer of at least @p want bytes (a kept one if one is large enough,
 * else a new one); *cap is its size.  NULL when out of memory. */
void *bbs_big_take(size_t want, size_t *cap);

/* Give back a buffer of @p cap bytes (from bbs_big_take, or any malloc'ed
 * one): kept when there is room among the kept, else freed.  NULL: nothing. */
void bbs_big_give(void *p, size_t cap);

/* Free every kept buffer (a server with nothing to do for a while). */
void bbs_big_trim(void);

#ifdef __cplusplus
}
#endif
#endif
