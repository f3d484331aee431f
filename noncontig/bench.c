#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

struct bench_stat bench_stat(const double *t, int n)
{
    double *v = malloc(sizeof(double) * (size_t) n);
    struct bench_stat s = { -1, -1, -1, n };
    int failed = 0;
    for (int i = 0; i < n; i++) {
        v[i] = t[i];
        failed |= t[i] < 0;
    }
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    if (!failed) {
        /* (the mean of the middle two for an even count) */
        s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        s.min = v[0];
        s.max = v[n - 1];
    }
    free(v);
    return s;
}

double bench_spread(const struct bench_stat *s)
{
    return s->median > 0 ? 100 * (s->max - s->min) / s->median : 0;
}

void bench_warm(const char *dir, double mib, MPI_Comm comm)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    long long share = (long long) (mib * 1048576 / nprocs);
    char path[4200];
    static char chunk[1 << 20];
    snprintf(path, sizeof(path), "%s/bench-warm.%d", dir, rank);
    int fd = share > 0 ? open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600) : -1;
    if (share > 0 && fd < 0) {
        fprintf(stderr, "bench: cannot warm memory through %s: %s\n", path, strerror(errno));
        MPI_Abort(comm, 1);
    }
    memset(chunk, 0x5a, sizeof(chunk));
    for (long long done = 0; fd >= 0 && done < share;) {
        size_t n = share - done < (long long) sizeof(chunk) ? (size_t) (share - done)
            : sizeof(chunk);
        ssize_t w = write(fd, chunk, n);
        if (w <= 0)
            break;              /* a full disk only makes the warming shorter */
        done += w;
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    MPI_Barrier(comm);
}

double bench_slowest(double t0, MPI_Comm comm)
{
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return tmax;
}

int bench_nodes(MPI_Comm comm)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "", *all;
    int len, rank, nprocs, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    MPI_Get_processor_name(name, &len);
    all = calloc((size_t) nprocs, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, comm);
    for (int i = 0; i < nprocs; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(all + (size_t) i * MPI_MAX_PROCESSOR_NAME,
                           all + (size_t) j * MPI_MAX_PROCESSOR_NAME);
        n += !seen;
    }
    free(all);
    return n;
}

FILE *bench_csv_open(const char *path, const char *header)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0 || !path)
        return NULL;
    /* A header starts the file, and starts again where another tool's rows
     * (another header) came last: one file can collect several tools. */
    int fresh = 1;
    FILE *f = fopen(path, "r");
    if (f) {
        char line[1024];
        while (fgets(line, sizeof(line), f))
            if (!strncmp(line, "bench,", 6))
                fresh = strncmp(line, header, strlen(header)) != 0;
        fclose(f);
    }
    f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (fresh)
        fprintf(f, "%s\n", header);
    return f;
}

int bench_parse_sizes(const char *s, long long *v, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (end == s || errno || x <= 0 || n == max)
            return -1;
        switch (*end) {
        case 'k': case 'K': x <<= 10; end++; break;
        case 'm': case 'M': x <<= 20; end++; break;
        case 'g': case 'G': x <<= 30; end++; break;
        }
        if (*end != ',' && *end != '\0')
            return -1;
        v[n++] = x;
        s = *end ? end + 1 : end;
    }
    return n;
}

int bench_choose(const char *list, const char *const *names, int n, int *chosen)
{
    int count = 0;
    for (int k = 0; k < n; k++)
        count += chosen[k] = list == NULL;
    for (const char *a = list; a && *a;) {
        size_t len = strcspn(a, ",");
        int k = 0;
        while (k < n && (strlen(names[k]) != len || strncmp(a, names[k], len)))
            k++;
        if (k == n)
            return -1;
        count += !chosen[k];
        chosen[k] = 1;
        a += len + (a[len] == ',');
    }
    return count;
}

void bench_check(int err, const char *prog, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len, rank;
    if (err == MPI_SUCCESS)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "%s: rank %d: %s: %s\n", prog, rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int bench_options(int argc, char **argv, const struct bench_opt *o, int n)
{
    if ((argc - 1) % 2)
        return -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        int k = 0;
        while (k < n && strcmp(argv[i], o[k].name) != 0)
            k++;
        if (k == n)
            return -1;
        const char *v = argv[i + 1];
        char *end;
        errno = 0;
        if (o[k].kind == 's') {
            *(const char **) o[k].to = v;
            continue;
        }
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end)
            return -1;
        if (o[k].kind == 'i') {
            if (x < INT_MIN || x > INT_MAX)
                return -1;
            *(int *) o[k].to = (int) x;
        } else
            *(long *) o[k].to = x;
    }
    return 0;
}
