/* libFuzzer target: the hint table and its value parsers
 * (adio/ad_bbfs/ad_bbfs_hint_table.c).  Hint values come from MPI_Info and
 * from ROMIO_HINTS files that users write by hand.  Beyond not crashing
 * (ASan, UBSan), each accepted value must mean what it says, and what a
 * hint shows must be accepted back unchanged (PnetCDF and mpi4py hand
 * MPI_File_get_info's values back to open). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_bbfs_hint_table.h"

static const char *const names[] = { "mpiio", "session", "commit", "posix", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char value[512];
    long long v, back;
    if (size >= sizeof value)
        size = sizeof value - 1;
    memcpy(value, data, size);
    value[size] = '\0';

    if (ADIOI_BBFS_Parse_size(value, &v) == 0) {
        char text[32];
        if (v < 0)
            abort();            /* sizes never wrap */
        snprintf(text, sizeof text, "%lld", v);
        if (ADIOI_BBFS_Parse_size(text, &back) != 0 || back != v)
            abort();            /* what was accepted reads back the same */
    }
    int i = ADIOI_BBFS_Choice_index(value, names);
    if (i >= 0 && strcmp(names[i], value) != 0)
        abort();
    if (!ADIOI_BBFS_Logdir_problem(value)) {
        size_t n = strlen(value);
        if (value[0] != '/' || strstr(value, "/../") || strstr(value, "/./")
            || (n >= 3 && !strcmp(value + n - 3, "/..")) || (n >= 2 && !strcmp(value + n - 2, "/.")))
            abort();            /* accepted a path with . or .. parts */
    }
    /* The input as "key=value" for the whole table. */
    char *eq = strchr(value, '=');
    if (eq) {
        *eq = '\0';
        const ADIOI_BBFS_Hint *d = ADIOI_BBFS_Hint_find(value);
        ADIOI_BBFS_Hints h, again;
        char why[256], shown[PATH_MAX];
        ADIOI_BBFS_Hints_default(&h);
        memcpy(&again, &h, sizeof h);
        if (d && !ADIOI_BBFS_Hint_apply(&h, d, eq + 1, why, sizeof why)
            && ADIOI_BBFS_Hint_show(&h, d, shown, sizeof shown)) {
            if (ADIOI_BBFS_Hint_apply(&again, d, shown, why, sizeof why))
                abort();        /* its own shown value refused */
            if (memcmp(&h, &again, sizeof h) != 0)
                abort();        /* shown value means something else */
        }
    }
    return 0;
}
