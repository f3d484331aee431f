/*
 * MPI_File_delete("bbfs:...") removes the canonical file through the lower
 * driver, and with it any pending logs (on this node) and their manifest.
 * It is not collective, so the lower driver is resolved by this process
 * alone.
 */
#include "ad_bbfs.h"
#include "adioi.h"

void ADIOI_BBFS_Delete(const char *filename, int *error_code)
{
    ADIOI_Fns *lower_ops;
    const char *lower_path;
    int lower_fstype;

    ADIOI_BBFS_Resolve_lower(filename, &lower_fstype, &lower_ops, &lower_path,
                             error_code);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_BBFS_File side = { 0 };
    side.lower_fstype = lower_fstype;
    side.lower_ops = lower_ops;
    side.canonical = (char *) lower_path;
    int log_err = ADIOI_BBFS_Discard_pending(&side);
    (*(lower_ops->ADIOI_xxx_Delete)) (lower_path, error_code);
    if (*error_code == MPI_SUCCESS)
        *error_code = log_err;
}
