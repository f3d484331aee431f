/*
 * The bbfs operations table.  Each slot names what it does for a bbfs file;
 * the work lives in one file per operation family.
 */
#include "ad_bbfs.h"

struct ADIOI_Fns_struct ADIO_BBFS_operations = {
    ADIOI_BBFS_Open,            /* Open: never used, OpenColl opens the lower file */
    ADIOI_BBFS_OpenColl,        /* OpenColl: resolve + open the lower driver's file */
    ADIOI_BBFS_ReadContig,      /* ReadContig */
    ADIOI_BBFS_WriteContig,     /* WriteContig */
    ADIOI_BBFS_ReadStridedColl, /* ReadStridedColl */
    ADIOI_BBFS_WriteStridedColl,        /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,   /* SeekIndividual: pure view arithmetic, no I/O */
    ADIOI_BBFS_Fcntl,           /* Fcntl: size, preallocation, atomicity */
    ADIOI_BBFS_SetInfo,         /* SetInfo: bbfs_* hints + ROMIO's generic ones */
    ADIOI_BBFS_ReadStrided,     /* ReadStrided */
    ADIOI_BBFS_WriteStrided,    /* WriteStrided */
    ADIOI_BBFS_Close,           /* Close */
    ADIOI_BBFS_IreadContig,     /* IreadContig */
    ADIOI_BBFS_IwriteContig,    /* IwriteContig */
    ADIOI_GEN_IODone,           /* ReadDone: requests are generalized MPI requests */
    ADIOI_GEN_IODone,           /* WriteDone */
    ADIOI_GEN_IOComplete,       /* ReadComplete */
    ADIOI_GEN_IOComplete,       /* WriteComplete */
    ADIOI_BBFS_IreadStrided,    /* IreadStrided */
    ADIOI_BBFS_IwriteStrided,   /* IwriteStrided */
    ADIOI_BBFS_Flush,           /* Flush: MPI_File_sync */
    ADIOI_BBFS_Resize,          /* Resize: MPI_File_set_size */
    ADIOI_BBFS_Delete,          /* Delete: canonical file and pending logs */
    ADIOI_BBFS_Feature,         /* Features: mostly the lower driver's */
    "BBFS: burst-buffer log layer stacked over another ROMIO driver",
    ADIOI_BBFS_IreadStridedColl,        /* IreadStridedColl */
    ADIOI_BBFS_IwriteStridedColl,       /* IwriteStridedColl */
    ADIOI_BBFS_SetLock,         /* SetLock: locks apply to the canonical file */
    ADIOI_BBFS_CheckView,       /* CheckView: vector views are never flattened */
    ADIOI_BBFS_ShowInfo         /* ShowInfo: MPI_File_get_info's values, built when asked */
};
