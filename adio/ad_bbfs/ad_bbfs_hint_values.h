/*
 * The value parsers of bbfs hints, apart from MPI so that they can be
 * fuzzed on their own (tests/fuzz/fuzz_hints.c).  ad_bbfs_hints.c turns
 * their answers into MPI errors and installs the values.
 */
#ifndef AD_BBFS_HINT_VALUES_H
#define AD_BBFS_HINT_VALUES_H

/* "4194304", "64k", "4m", "1g" (powers of 1024), at most INT64_MAX.
 * @return 0 and *out, or -1 (nothing else, no wrap-around). */
int ADIOI_BBFS_Parse_size(const char *value, long long *out);

/* The index of @p value in the NULL-terminated @p names, or -1. */
int ADIOI_BBFS_Choice_index(const char *value, const char *const *names);

/* NULL if @p value may be a log directory (absolute, no . or .. parts),
 * else why not. */
const char *ADIOI_BBFS_Logdir_problem(const char *value);

#endif
