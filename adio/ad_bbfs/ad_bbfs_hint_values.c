/* Hint value parsers (ad_bbfs_hint_values.h): plain C, no MPI. */
#include "ad_bbfs_hint_values.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int ADIOI_BBFS_Parse_size(const char *value, long long *out)
{
    char *end;
    unsigned long long v;

    if (!isdigit((unsigned char) value[0]))
        return -1;
    errno = 0;
    v = strtoull(value, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (tolower((unsigned char) *end)) {
        case 'g': shift += 10;  /* fall through */
        case 'm': shift += 10;  /* fall through */
        case 'k': shift += 10; end++; break;
        case '\0': break;
        default: return -1;
    }
    if (*end != '\0')
        return -1;
    /* a value that does not fit an MPI_Offset is refused, not wrapped */
    if (v > ((unsigned long long) INT64_MAX >> shift))
        return -1;
    *out = (long long) (v << shift);
    return 0;
}

int ADIOI_BBFS_Choice_index(const char *value, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(value, names[i]))
            return i;
    return -1;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

const char *ADIOI_BBFS_Logdir_problem(const char *value)
{
    if (value[0] != '/')
        return "must be an absolute directory path";
    /* the manifests name log paths; "." and ".." parts there are refused */
    if (strstr(value, "/../") || strstr(value, "/./") || ends_with(value, "/..")
        || ends_with(value, "/."))
        return "must be a path with no . or .. parts";
    return NULL;
}
