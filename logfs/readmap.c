/* Small reads of a log file through a read-only mapping (readmap.h). */
#define _GNU_SOURCE
#include "readmap.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

/* The smallest window mapped.  A window twice the bytes read so far is not
 * mapped again at every release of a growing log, and takes address space
 * in proportion to the logs read (a site's limit on it, ulimit -v, counts
 * every reader's windows; a mapping it refuses leaves that reader to pread). */
#define WINDOW_MIN ((size_t)1 << 20)

/* Local file systems whose mapped pages are the pages pread reads. */
static int local_fs(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0)
        return 0;
    switch ((unsigned long)sf.f_type) {
    case 0x01021994UL: /* tmpfs */
    case 0xEF53UL:     /* ext2, ext3, ext4 */
    case 0x58465342UL: /* xfs */
    case 0x9123683EUL: /* btrfs */
    case 0x794C7630UL: /* overlayfs (a container's /tmp): its upper files are local */
        return 1;
    default:
        return 0;
    }
}

void logfs_readmap_init(struct logfs_readmap *m)
{
    memset(m, 0, sizeof *m);
    m->usable = -1;
}

int logfs_readmap_copy(struct logfs_readmap *m, int fd, uint64_t off, void *buf, size_t n,
                       uint64_t known)
{
    uint64_t end = off + n;

    if (n > LOGFS_READMAP_MAX || end < off || m->usable == 0 || fd < 0)
        return 0;
    if (!m->base && m->small_reads < LOGFS_READMAP_AFTER - 1) {
        m->small_reads++;
        return 0;
    }
    if (m->usable < 0 && !(m->usable = local_fs(fd)))
        return 0;
    if (known > m->known)
        m->known = known;
    if (end > m->known) {
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_size < 0)
            return 0;
        m->known = (uint64_t)st.st_size;
        if (end > m->known)
            return 0;
    }
    if (end > m->window) {
        size_t w = WINDOW_MIN;
        while (w < end * 2 && w < (SIZE_MAX >> 2))
            w *= 2;
        if (w < end)            /* (past what a window may span) */
            return 0;
        void *p = mmap(NULL, w, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            m->usable = 0;
            return 0;
        }
        logfs_readmap_drop(m);
        m->usable = 1;
        m->base = p;
        m->window = w;
    }
    memcpy(buf, m->base + off, n);
    return 1;
}

void logfs_readmap_drop(struct logfs_readmap *m)
{
    if (m->base)
        munmap(m->base, m->window);
    m->base = NULL;
    m->window = 0;
}
