/*
 * Writes the fuzzer's seed corpus: real metalogs from real writers (strided
 * and incompressible writes, syncs, set_size, close, a crash), so the fuzzer
 * starts from well-formed records and mutates from there.
 * Usage: make-seeds DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer.h"

static int seed(const char *dir, const char *name, int variant)
{
    struct logfs_writer_opts o;
    struct logfs_writer *w;
    struct logfs_error err;
    unsigned char buf[256];
    char path[4096];

    memset(buf, 0x5a, sizeof buf);
    logfs_writer_opts_init(&o);
    o.dir = dir;
    o.name = name;
    o.file_id = 1234 + (uint64_t)variant;
    o.rank = (uint32_t)variant % 3;
    o.nwriters = 3;
    o.buffer_size = 1 << 16;
    o.pmem = LOGFS_PMEM_NEVER;
    if (logfs_writer_open(&o, &w, &err)) {
        fprintf(stderr, "make-seeds: %s\n", err.msg);
        return 1;
    }
    for (int call = 0; call < 3 + variant; call++) {
        logfs_writer_begin_write(w, &err);
        for (int i = 0; i < 20; i++) {
            uint64_t off = variant % 2 ? (uint64_t)i * 64 + (uint64_t)call : (uint64_t)(i * i * 977 + call);
            logfs_writer_add_extent(w, off, 1 + (uint64_t)(variant % 2 ? 8 : i % 7), buf, &err);
        }
        logfs_writer_end_write(w, &err);
        if (call % 2)
            logfs_writer_sync(w, &err);
        if (variant == 2 && call == 1)
            logfs_writer_set_size(w, 100, &err);
    }
    if (variant == 3) {
        logfs_writer_flush(w, &err);
        logfs_writer_abandon(w); /* crashed writer: no CLOSE */
    } else if (logfs_writer_close(w, &err)) {
        fprintf(stderr, "make-seeds: %s\n", err.msg);
        return 1;
    }
    /* Only metalogs are seeds; datalogs would be noise. */
    snprintf(path, sizeof path, "%s/%s.datalog", dir, name);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"seed0", "seed1", "seed2", "seed3", "seed4"};
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (int v = 0; v < 5; v++)
        if (seed(argv[1], names[v], v))
            return 1;
    return 0;
}
