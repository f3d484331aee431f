/* A metalog's sealed records as bytes, for a process that cannot open the
 * file (reader.h, logfs_metalog_export). */
#include "reader.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "internal.h"

int logfs_metalog_export(const char *path, int salvage, void **out, size_t *len, char **warning,
                         struct logfs_error *err)
{
    struct logfs_reader *r;
    struct logfs_record rec;
    struct logfs_error e;
    uint64_t end;
    uint8_t *buf;
    int rc, fd;

    *out = NULL;
    *len = 0;
    if (warning)
        *warning = NULL;
    if ((rc = logfs_reader_open(path, &r, err)))
        return rc;
    end = logfs_reader_position(r);     /* the header at least */
    while ((rc = logfs_reader_next(r, &rec, &e)) == LOGFS_OK)
        if (rec.type == LOGFS_REC_SYNC || rec.type == LOGFS_REC_CLOSE)
            end = logfs_reader_position(r);
    logfs_reader_close(r);
    if (rc != LOGFS_END) {
        if (!salvage) {
            if (err)
                *err = e;
            return rc;
        }
        if (warning && !(*warning = strdup(e.msg)))
            return logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to export metalog %s", path);
    }
    /* The records up to end were read and checked; now their bytes. */
    if ((rc = logfs_open_own(path, O_RDONLY, 0, "cannot open metalog", &fd, err)))
        goto fail;
    if (!(buf = malloc(end ? end : 1))) {
        close(fd);
        rc = logfs_fail(err, LOGFS_ENOMEM, 0, "no memory to export metalog %s", path);
        goto fail;
    }
    int e2 = logfs_pread_full(fd, buf, end, 0);
    close(fd);
    if (e2) {
        free(buf);
        rc = logfs_fail(err, LOGFS_EIO, e2 > 0 ? e2 : 0, "cannot read metalog %s%s", path,
                        e2 < 0 ? ": file shrank while being read" : "");
        goto fail;
    }
    *out = buf;
    *len = (size_t)end;
    return LOGFS_OK;
fail:
    if (warning) {
        free(*warning);
        *warning = NULL;
    }
    return rc;
}

/* A lazy writer's metalog that could not be read (rc) because it is not
 * made yet, or made and its header not yet written (the writer makes its
 * files first, then writes what it queued): still short of a header now,
 * after the look that failed, it released nothing before. */
int logfs_metalog_unmade(const char *path, int rc)
{
    struct stat st;
    if (rc == LOGFS_ENOENT)
        return 1;
    return rc == LOGFS_EFORMAT && stat(path, &st) == 0 &&
           (uint64_t)st.st_size < LOGFS_REC_HEADER_LEN + LOGFS_HEADER_PAYLOAD_LEN;
}
