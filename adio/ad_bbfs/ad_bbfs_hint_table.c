/* The bbfs hint table and its value parsers (ad_bbfs_hint_table.h):
 * plain C, no MPI. */
#include "ad_bbfs_hint_table.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const consistency_names[] = { "mpiio", "session", "commit", "posix",
    "collective", "causal", NULL
};
static const char *const replay_names[] = { "on_close", "on_read_open", "never", "on_sync",
    "background", NULL
};
static const char *const bool_names[] = { "false", "true", NULL };

#define FIELD(f) offsetof(ADIOI_BBFS_Hints, f), sizeof(((ADIOI_BBFS_Hints *) 0)->f)
#define KIB(n) ((long long) (n) << 10)
#define MIB(n) ((long long) (n) << 20)
#define GIB(n) ((long long) (n) << 30)

/* docs/hints.md describes each; tests/unit/hint_table_test.cc holds the two
 * together.  Replay rounds (bbfs_replay_buffer) are small enough to stay in
 * cache between the datalog reads and the write (1 MiB rounds replayed
 * 4 KiB pieces 1.3-2x faster than 64 MiB ones here, docs/benchmarks.md);
 * large parallel file systems may want a stripe's worth or more.  A log
 * quota beyond any device (1 PiB) is a typo. */
const ADIOI_BBFS_Hint ADIOI_BBFS_hint_table[] = {
    {"bbfs_logdir", ADIOI_BBFS_HINT_LOGDIR, FIELD(logdir), NULL, 0, 0,
     NULL, NULL, 1},
    {"bbfs_consistency", ADIOI_BBFS_HINT_CHOICE, FIELD(consistency), consistency_names, 0, 0,
     NULL, "causal", 1},
    {"bbfs_replay", ADIOI_BBFS_HINT_CHOICE, FIELD(replay), replay_names, 0, 0,
     NULL, "on_close", 0},
    {"bbfs_buffer_size", ADIOI_BBFS_HINT_SIZE, FIELD(buffer_size), NULL, KIB(4), GIB(1),
     "must be between 4k and 1g", "4m", 1},
    {"bbfs_durable", ADIOI_BBFS_HINT_CHOICE, FIELD(durable), bool_names, 0, 0,
     "true|false", "false", 0},
    {"bbfs_server", ADIOI_BBFS_HINT_TEXT, FIELD(server), NULL, 0, 0,
     "expected \"auto\" or a bbserver address", "auto", 1},
    {"bbfs_server_timeout", ADIOI_BBFS_HINT_SIZE, FIELD(server_timeout), NULL, 1, 3600,
     "must be between 1 and 3600 (seconds)", ADIOI_BBFS_STR(ADIOI_BBFS_DEFAULT_SERVER_TIMEOUT), 1},
    {"bbfs_force_remote", ADIOI_BBFS_HINT_CHOICE, FIELD(force_remote), bool_names, 0, 0,
     "true|false", "false", 1},
    {"bbfs_read_cache", ADIOI_BBFS_HINT_SIZE, FIELD(read_cache), NULL, 0, GIB(1),
     "must be between 0 (none) and 1g", "16m", 1},
    {"bbfs_progress", ADIOI_BBFS_HINT_CHOICE, FIELD(progress), bool_names, 0, 0,
     "true|false", "false", 0},
    {"bbfs_timing", ADIOI_BBFS_HINT_CHOICE, FIELD(timing), bool_names, 0, 0,
     "true|false", "false", 0},
    {"bbfs_salvage", ADIOI_BBFS_HINT_CHOICE, FIELD(salvage), bool_names, 0, 0,
     "true|false", "false", 0},
    {"bbfs_log_quota", ADIOI_BBFS_HINT_SIZE, FIELD(log_quota), NULL, 0, GIB(1) << 20,
     "must be between 0 (no quota) and 1048576g", "0", 1},
    {"bbfs_replay_buffer", ADIOI_BBFS_HINT_SIZE, FIELD(replay_buffer), NULL, KIB(64), GIB(1),
     "must be between 64k and 1g", "1m", 0},
    /* Shown by MPI_File_get_info, so PnetCDF and mpi4py hand it back to
     * open and set_info: informational, the file name decides the driver. */
    {"bbfs_lower_filesystem_type", ADIOI_BBFS_HINT_INFORMATIONAL, 0, 0, NULL, 0, 0,
     NULL, NULL, 0},
    /* Shown too: the bbserver that holds this file's ownership map, through
     * which other processes' writes are seen (several nodes, or forced),
     * or "none" when they are read from the logs directly. */
    {"bbfs_map_server", ADIOI_BBFS_HINT_INFORMATIONAL, 0, 0, NULL, 0, 0, NULL, NULL, 0},
    {NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0}
};

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

const ADIOI_BBFS_Hint *ADIOI_BBFS_Hint_find(const char *key)
{
    for (const ADIOI_BBFS_Hint * d = ADIOI_BBFS_hint_table; d->key; d++)
        if (!strcmp(d->key, key))
            return d;
    return NULL;
}

static void join(const char *const *names, const char *sep, char *out, size_t len)
{
    out[0] = '\0';
    for (int i = 0; names[i]; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? sep : "", names[i]);
}

const char *ADIOI_BBFS_Hint_apply(ADIOI_BBFS_Hints * h, const ADIOI_BBFS_Hint * d,
                                  const char *value, char *why, size_t len)
{
    char *field = (char *) h + d->field;
    const char *problem;
    long long v;
    int i;

    switch (d->kind) {
        case ADIOI_BBFS_HINT_LOGDIR:
            if ((problem = ADIOI_BBFS_Logdir_problem(value)))
                return problem;
            /* room for the log names the writer appends */
            if (strlen(value) >= d->field_size - 64)
                return "path is too long";
            snprintf(field, d->field_size, "%s", value);
            break;
        case ADIOI_BBFS_HINT_CHOICE:
            if ((i = ADIOI_BBFS_Choice_index(value, d->names)) < 0) {
                if (d->allowed)
                    return d->allowed;
                join(d->names, "|", why, len);
                return why;
            }
            *(int *) field = i;
            break;
        case ADIOI_BBFS_HINT_SIZE:
            if (ADIOI_BBFS_Parse_size(value, &v) != 0)
                return "expected bytes, optionally with k, m or g";
            if (v < d->min || v > d->max)
                return d->allowed;
            *(long long *) field = v;
            break;
        case ADIOI_BBFS_HINT_TEXT:
            if (!value[0] || strlen(value) >= d->field_size)
                return d->allowed;
            snprintf(field, d->field_size, "%s", value);
            break;
        case ADIOI_BBFS_HINT_INFORMATIONAL:
            break;
    }
    if (d->field == offsetof(ADIOI_BBFS_Hints, replay) && d->kind == ADIOI_BBFS_HINT_CHOICE)
        h->replay_given = 1;    /* else the default follows the access mode */
    return NULL;
}

void ADIOI_BBFS_Hints_default(ADIOI_BBFS_Hints * h)
{
    /* The table's defaults are parsed once (every open starts from them);
     * the log directory's comes from the environment, which may change. */
    static ADIOI_BBFS_Hints table_defaults;
    static int parsed;
    const char *dir = getenv("BBFS_LOGDIR");
    char why[8];

    if (!parsed) {
        for (const ADIOI_BBFS_Hint * d = ADIOI_BBFS_hint_table; d->key; d++)
            if (d->dflt)
                ADIOI_BBFS_Hint_apply(&table_defaults, d, d->dflt, why, sizeof(why));
        table_defaults.replay_given = 0;
        parsed = 1;
    }
    *h = table_defaults;
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    /* as given, unchecked: a bad $BBFS_LOGDIR shows when logs are created
     * (cut as snprintf would; at every open, where snprintf cost 0.6K
     * instructions) */
    size_t n = strnlen(dir, sizeof(h->logdir) - 1);
    memcpy(h->logdir, dir, n);
    h->logdir[n] = '\0';
}

int ADIOI_BBFS_Hint_show(const ADIOI_BBFS_Hints * h, const ADIOI_BBFS_Hint * d, char *out,
                         size_t len)
{
    const char *field = (const char *) h + d->field;

    switch (d->kind) {
        case ADIOI_BBFS_HINT_LOGDIR:
        case ADIOI_BBFS_HINT_TEXT:
            snprintf(out, len, "%s", field);
            return 1;
        case ADIOI_BBFS_HINT_CHOICE:
            snprintf(out, len, "%s", d->names[*(const int *) field]);
            return 1;
        case ADIOI_BBFS_HINT_SIZE:
            snprintf(out, len, "%lld", *(const long long *) field);
            return 1;
        case ADIOI_BBFS_HINT_INFORMATIONAL:
            break;
    }
    return 0;
}

void ADIOI_BBFS_Hint_keys(char *out, size_t len)
{
    const char *keys[sizeof(ADIOI_BBFS_hint_table) / sizeof(ADIOI_BBFS_hint_table[0])];
    int n = 0;

    for (const ADIOI_BBFS_Hint * d = ADIOI_BBFS_hint_table; d->key; d++)
        if (d->kind != ADIOI_BBFS_HINT_INFORMATIONAL)
            keys[n++] = d->key;
    keys[n] = NULL;
    join(keys, ", ", out, len);
}
