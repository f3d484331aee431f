/*
 * Other writers' datalogs, read at replay and by reads of synced data:
 * opened on first use through logfs's datalog reader, with one error
 * message for a datalog that lost bytes its metalog points at.
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/planner.h"
#include "../../logfs/reader.h"

#include <stdio.h>

void ADIOI_BBFS_Datalogs_init(ADIOI_BBFS_Datalogs * d, const struct logfs_plan *plan)
{
    d->n = (int) logfs_plan_nwriters(plan);
    d->paths = ADIOI_Malloc(sizeof(char *) * d->n);
    d->readers = ADIOI_Calloc(d->n, sizeof(*d->readers));
    for (int w = 0; w < d->n; w++)
        d->paths[w] = ADIOI_Strdup(logfs_plan_datalog(plan, (uint32_t) w));
}

int ADIOI_BBFS_Datalogs_read(ADIOI_BBFS_Datalogs * d, int writer, uint64_t off, void *buf,
                             size_t len)
{
    static char myname[] = "ADIOI_BBFS_DATALOGS_READ";
    struct logfs_error le;
    char msg[LOGFS_ERRMSG_MAX + 96];
    int rc = LOGFS_OK;

    if (!d->readers[writer])
        rc = logfs_datalog_reader_open(d->paths[writer], &d->readers[writer], &le);
    if (rc == LOGFS_OK)
        rc = logfs_datalog_reader_pread(d->readers[writer], off, buf, len, &le);
    if (rc == LOGFS_OK)
        return MPI_SUCCESS;
    snprintf(msg, sizeof(msg), rc == LOGFS_ESHORT ? "%s (the datalog is shorter than its "
             "metalog says: lost or truncated log?)" : "%s", le.msg);
    return ADIOI_BBFS_Err_logfs(myname, __LINE__, rc, msg);
}

void ADIOI_BBFS_Datalogs_free(ADIOI_BBFS_Datalogs * d)
{
    for (int w = 0; d->paths && w < d->n; w++) {
        logfs_datalog_reader_close(d->readers[w]);
        ADIOI_Free(d->paths[w]);
    }
    ADIOI_BBFS_FREE(d->paths);
    ADIOI_BBFS_FREE(d->readers);
    d->paths = NULL;
    d->readers = NULL;
    d->n = 0;
}
