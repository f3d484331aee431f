/* libFuzzer target: the hint value parsers (adio/ad_bbfs/ad_bbfs_hint_values.c).
 * Hint values come from MPI_Info and from ROMIO_HINTS files that users
 * write by hand.  Beyond not crashing (ASan, UBSan), each accepted value
 * must mean what it says. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_bbfs_hint_values.h"

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
    return 0;
}
