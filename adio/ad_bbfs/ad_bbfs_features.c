/*
 * What a bbfs file supports is what its lower file supports, except that
 * the open itself is bbfs's and not scalable (every rank opens the lower
 * file through ADIO_Open), every process takes part in a resize, and a
 * collective access may make no communication (a logged write does not:
 * ROMIO's ordered calls then keep processes together with a barrier of
 * their own, adio/mpich-patches/romio-unsynced-collectives.patch).
 */
#include "ad_bbfs.h"
#include "adioi.h"

int ADIOI_BBFS_Feature(ADIO_File fd, int flag)
{
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);

    if (flag == ADIO_SCALABLE_OPEN || !bf || !bf->lower)
        return 0;
    /* Resize replays the logs, which needs every process. */
    if (flag == ADIO_SCALABLE_RESIZE)
        return 1;
    /* (Every handle says so, logging or not: an answer that differed
     * between processes would leave some in the barrier.) */
    if (flag == ADIO_UNSYNCED_COLL)
        return 1;
    return ADIO_Feature(bf->lower, flag);
}
