#include "testlib.h"
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tl_rank, tl_nprocs;

const char *tl_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tl_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tl_nprocs);
    if (*argc < 2) {
        if (tl_rank == 0)
            fprintf(stderr, "usage: %s PREFIX:FILENAME\n", (*argv)[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Errors on files are returned, not fatal: tests inspect them. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    return (*argv)[1];
}

int tl_finish(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (tl_rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}

int tl_one_host(void)
{
    char host[MPI_MAX_PROCESSOR_NAME] = "", first[MPI_MAX_PROCESSOR_NAME] = "";
    int len, same, all;

    MPI_Get_processor_name(host, &len);
    memcpy(first, host, sizeof(first));
    MPI_Bcast(first, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    same = !strcmp(host, first);
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

int tl_is_bbfs(const char *filename)
{
    return strncmp(filename, "bbfs:", 5) == 0;
}

const char *tl_path(const char *filename)
{
    const char *p = filename;
    for (;;) {                  /* "bbfs:ufs:/d/f" -> "/d/f" */
        const char *c = p;
        while (isalnum((unsigned char) *c))
            c++;
        if (*c != ':' || c - p < 2)
            return p;
        p = c + 1;
    }
}

void tl_sibling(const char *filename, const char *suffix, char *out, size_t len)
{
    snprintf(out, len, "%s%s", filename, suffix);
}

unsigned char tl_byte(long long off, int tag)
{
    unsigned long long x = (unsigned long long) off * 2654435761u + (unsigned) tag * 40503u;
    return (unsigned char) (x ^ (x >> 13) ^ (x >> 24));
}

void tl_fill(unsigned char *buf, size_t n, long long off, int tag)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = tl_byte(off + (long long) i, tag);
}

void tl_verify(const unsigned char *buf, size_t n, long long off, int tag, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != tl_byte(off + (long long) i, tag))
            tl_fail(__FILE__, __LINE__, "%s: byte at file offset %lld is 0x%02x, expected 0x%02x",
                    what, off + (long long) i, buf[i], tl_byte(off + (long long) i, tag));
}

void tl_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL [rank %d] %s:%d: ", tl_rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void tl_fail_mpi(const char *what, int err, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    tl_fail(file, line, "%s failed: %s", what, msg);
}

const char *tl_expect_class(int err, int cls, const char *what)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int got = -1, len = 0;

    if (err == MPI_SUCCESS)
        tl_fail(__FILE__, __LINE__, "%s: succeeded, expected an error of class %d", what, cls);
    MPI_Error_class(err, &got);
    MPI_Error_string(err, msg, &len);
    if (got != cls)
        tl_fail(__FILE__, __LINE__, "%s: error class %d, expected %d (%s)", what, got, cls, msg);
    return msg;
}

int tl_info_get(MPI_File fh, const char *key, char *value)
{
    MPI_Info info;
    int flag;

    TL_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag;
}

void tl_expect_info(MPI_File fh, const char *key, const char *want)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = tl_info_get(fh, key, value);

    if (want == NULL)
        TL_CHECK(!flag, "get_info shows %s=%s, expected no such key", key, value);
    else
        TL_CHECK(flag && strcmp(value, want) == 0, "get_info %s=%s, expected %s", key,
                 flag ? value : "(unset)", want);
}

void tl_sync_barrier_sync(MPI_File fh)
{
    TL_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TL_MPI(MPI_File_sync(fh));
}

/* dir/.base.bbfs/<id>.manifest, as docs/log-format.md describes. */
int tl_each_manifest(const char *path, void (*each)(const char *manifest, void *arg),
                     void *arg)
{
    char dir[4200], one[4500];
    const char *slash = strrchr(path, '/');
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof(dir), "%.*s.%s.bbfs", (int) (slash - path + 1), path, slash + 1);
    DIR *d = opendir(dir);
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 9 || strcmp(e->d_name + l - 9, ".manifest"))
            continue;
        n++;
        if (each) {
            snprintf(one, sizeof(one), "%s/%s", dir, e->d_name);
            each(one, arg);
        }
    }
    if (d)
        closedir(d);
    return n;
}

struct first_manifest {
    char *out;
    size_t len;
};

static void keep_first(const char *manifest, void *arg)
{
    struct first_manifest *f = arg;
    if (f->out && f->len) {
        snprintf(f->out, f->len, "%s", manifest);
        f->len = 0;
    }
}

int tl_manifests(const char *path, char *out, size_t len)
{
    struct first_manifest f = { out, len };
    return tl_each_manifest(path, keep_first, &f);
}
