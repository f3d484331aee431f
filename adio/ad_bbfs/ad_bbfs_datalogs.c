/*
 * Other writers' datalogs, read at replay and by reads of synced data:
 * opened through logfs's datalog reader (on first use, or at once for
 * logs another handle may remove), with one error message for a datalog
 * that lost bytes its metalog points at.  A replay's writer whose logs
 * are in memory (ADIOI_BBFS_Memlog) is read from its writer.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/planner.h"
#include "../../logfs/reader.h"
#include "../../logfs/writer.h"

#include <stdio.h>
#include <string.h>

int ADIOI_BBFS_Datalogs_add(ADIOI_BBFS_Datalogs * d, const struct logfs_plan *plan, int open_from,
                            int *rc, struct logfs_error *le)
{
    int base = d->n, add = (int) logfs_plan_nwriters(plan);
    struct logfs_datalog_reader **opened = ADIOI_Calloc(add, sizeof(*opened));

    *rc = LOGFS_OK;
    /* (a lazy writer with no log has no datalog, and nothing to read) */
    for (int w = open_from; w < add && *rc == LOGFS_OK; w++)
        if (logfs_plan_datalog(plan, (uint32_t) w))
            *rc = logfs_datalog_reader_open(logfs_plan_datalog(plan, (uint32_t) w), &opened[w],
                                            le);
    if (*rc != LOGFS_OK) {
        for (int w = 0; w < add; w++)
            logfs_datalog_reader_close(opened[w]);
        ADIOI_Free(opened);
        return -1;
    }
    d->n += add;
    d->paths = ADIOI_Realloc(d->paths, sizeof(char *) * (d->n ? d->n : 1));
    d->readers = ADIOI_Realloc(d->readers, sizeof(*d->readers) * (d->n ? d->n : 1));
    for (int w = 0; w < add; w++) {
        const char *path = logfs_plan_datalog(plan, (uint32_t) w);
        d->paths[base + w] = path ? ADIOI_Strdup(path) : NULL;
        d->readers[base + w] = opened[w];
    }
    ADIOI_Free(opened);
    return base;
}

int ADIOI_BBFS_Datalogs_same(const ADIOI_BBFS_Datalogs * d, const struct logfs_plan *plan)
{
    if (d->mem || d->n != (int) logfs_plan_nwriters(plan))
        return 0;
    for (int w = 0; w < d->n; w++) {
        const char *path = logfs_plan_datalog(plan, (uint32_t) w);
        if (!d->paths[w] || !path || strcmp(d->paths[w], path))
            return 0;
    }
    return 1;
}

static int datalog_error(int rc, const struct logfs_error *le)
{
    static char myname[] = "ADIOI_BBFS_DATALOGS_READ";
    char msg[LOGFS_ERRMSG_MAX + 96];

    snprintf(msg, sizeof(msg), rc == LOGFS_ESHORT ? "%s (the datalog is shorter than its "
             "metalog says: lost or truncated log?)" : "%s", le->msg);
    return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
}

static int datalog_reader(ADIOI_BBFS_Datalogs * d, int writer, struct logfs_error *le)
{
    if (d->readers[writer])
        return LOGFS_OK;
    if (!d->paths[writer]) {
        snprintf(le->msg, sizeof(le->msg), "writer %d made no log", writer);
        return LOGFS_ESTATE;
    }
    return logfs_datalog_reader_open(d->paths[writer], &d->readers[writer], le);
}

int ADIOI_BBFS_Datalogs_read(ADIOI_BBFS_Datalogs * d, int writer, uint64_t off, void *buf,
                             size_t len)
{
    struct logfs_error le;
    int rc;

    if (d->mem && writer == d->mem->index) {
        rc = logfs_writer_read_data(d->mem->writer, off, buf, len, &le);
        return rc == LOGFS_OK ? MPI_SUCCESS : datalog_error(rc, &le);
    }
    rc = datalog_reader(d, writer, &le);

    if (rc == LOGFS_OK)
        rc = logfs_datalog_reader_pread(d->readers[writer], off, buf, len, &le);
    return rc == LOGFS_OK ? MPI_SUCCESS : datalog_error(rc, &le);
}

void ADIOI_BBFS_Datalogs_free(ADIOI_BBFS_Datalogs * d)
{
    for (int w = 0; d->paths && w < d->n; w++) {
        logfs_datalog_reader_close(d->readers[w]);
        ADIOI_BBFS_FREE(d->paths[w]);
    }
    ADIOI_BBFS_FREE(d->paths);
    ADIOI_BBFS_FREE(d->readers);
    d->paths = NULL;
    d->readers = NULL;
    d->n = 0;
}
