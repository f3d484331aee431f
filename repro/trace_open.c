/* trace_open.c - LD_PRELOAD shim (PMPI) for looking at what a client library
 * does with MPI-IO:
 *   - every failing MPI_File_* call below is printed with MPI's error string
 *     (a failing open also with the info keys it was given);
 *   - TRACE_SHORT_READS=1: reads (read_at, read_at_all) that moved fewer
 *     bytes than asked;
 *   - TRACE_CALLS=1 (process 0) or =a (all): opens, deletes, views, writes,
 *     collective reads, syncs, sizes; TRACE_TYPES=1 also decodes file views.
 *
 *   mpicc -shared -fPIC -o trace_open.so trace_open.c
 *   LD_PRELOAD=$PWD/trace_open.so TRACE_CALLS=a mpiexec -n 4 program ...
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int myrank(void)
{
    int r;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static int tracing(void)
{
    const char *e = getenv("TRACE_CALLS");
    return e && (*e == 'a' || atoi(e) - 1 == myrank());
}

static int report(const char *call, int err)
{
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        PMPI_Error_string(err, msg, &len);
        fprintf(stderr, "[trace %d] %s failed: %s\n", myrank(), call, msg);
    }
    return err;
}

static long long bytes(int count, MPI_Datatype t)
{
    int sz;
    PMPI_Type_size(t, &sz);
    return (long long)count * sz;
}

static void print_type(MPI_Datatype t, int depth)
{
    int ni, na, nd, comb, i;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED) {
        fprintf(stderr, "%*snamed\n", depth * 2, "");
        return;
    }
    int ints[ni > 0 ? ni : 1];
    MPI_Aint addrs[na > 0 ? na : 1];
    MPI_Datatype types[nd > 0 ? nd : 1];
    PMPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
    fprintf(stderr, "%*scombiner %d ints:", depth * 2, "", comb);
    for (i = 0; i < ni && i < 40; i++)
        fprintf(stderr, " %d", ints[i]);
    fprintf(stderr, " addrs:");
    for (i = 0; i < na && i < 40; i++)
        fprintf(stderr, " %ld", (long)addrs[i]);
    fprintf(stderr, "\n");
    for (i = 0; i < nd; i++)
        print_type(types[i], depth + 1);
}

static void short_read(const char *call, MPI_Offset off, int count, MPI_Datatype t, MPI_Status *st)
{
    int got = -1;
    if (st == MPI_STATUS_IGNORE || !getenv("TRACE_SHORT_READS"))
        return;
    PMPI_Get_count(st, MPI_BYTE, &got);
    if (got != bytes(count, t))
        fprintf(stderr, "[trace %d] %s at %lld: %d of %lld bytes\n", myrank(), call,
                (long long)off, got, bytes(count, t));
}

int MPI_File_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh)
{
    int err = PMPI_File_open(comm, name, amode, info, fh);
    if (tracing())
        fprintf(stderr, "[trace %d] open %s amode %#x -> %d\n", myrank(), name, amode, err);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING], key[MPI_MAX_INFO_KEY + 1], val[256];
        int len, n = 0, i, flag;
        PMPI_Error_string(err, msg, &len);
        fprintf(stderr, "[trace %d] MPI_File_open(%s, amode %#x) failed: %s\n", myrank(), name,
                amode, msg);
        if (info != MPI_INFO_NULL) {
            PMPI_Info_get_nkeys(info, &n);
            for (i = 0; i < n; i++) {
                PMPI_Info_get_nthkey(info, i, key);
                PMPI_Info_get(info, key, sizeof val - 1, val, &flag);
                fprintf(stderr, "[trace %d]   info %s = %s\n", myrank(), key, flag ? val : "?");
            }
        }
    }
    return err;
}

int MPI_File_delete(const char *name, MPI_Info info)
{
    int err = PMPI_File_delete(name, info);
    if (tracing())
        fprintf(stderr, "[trace %d] delete %s -> %d\n", myrank(), name, err);
    return err;
}

int MPI_File_close(MPI_File *fh)
{
    return report("MPI_File_close", PMPI_File_close(fh));
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info)
{
    return report("MPI_File_get_info", PMPI_File_get_info(fh, info));
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    int err = report("MPI_File_get_size", PMPI_File_get_size(fh, size));
    if (tracing())
        fprintf(stderr, "[trace %d] get_size -> %lld\n", myrank(), (long long)*size);
    return err;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    if (tracing())
        fprintf(stderr, "[trace %d] set_size %lld\n", myrank(), (long long)size);
    return report("MPI_File_set_size", PMPI_File_set_size(fh, size));
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft,
                      const char *rep, MPI_Info info)
{
    if (tracing()) {
        int sz;
        MPI_Aint lb, ext;
        PMPI_Type_size(ft, &sz);
        PMPI_Type_get_extent(ft, &lb, &ext);
        fprintf(stderr, "[trace %d] set_view fh %p disp %lld filetype size %d extent %ld lb %ld\n",
                myrank(), (void *)fh, (long long)disp, sz, (long)ext, (long)lb);
        if (getenv("TRACE_TYPES"))
            print_type(ft, 1);
    }
    return report("MPI_File_set_view", PMPI_File_set_view(fh, disp, et, ft, rep, info));
}

int MPI_File_sync(MPI_File fh)
{
    if (tracing())
        fprintf(stderr, "[trace %d] sync fh %p\n", myrank(), (void *)fh);
    return report("MPI_File_sync", PMPI_File_sync(fh));
}

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    return report("MPI_File_read", PMPI_File_read(fh, buf, count, t, st));
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    return report("MPI_File_read_all", PMPI_File_read_all(fh, buf, count, t, st));
}

int MPI_File_read_at(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype t,
                     MPI_Status *st)
{
    int err = report("MPI_File_read_at", PMPI_File_read_at(fh, off, buf, count, t, st));
    short_read("read_at", off, count, t, st);
    return err;
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype t,
                         MPI_Status *st)
{
    int err;
    if (tracing())
        fprintf(stderr, "[trace %d] read_at_all fh %p at %lld %lld bytes\n", myrank(),
                (void *)fh, (long long)off, bytes(count, t));
    err = report("MPI_File_read_at_all", PMPI_File_read_at_all(fh, off, buf, count, t, st));
    short_read("read_at_all", off, count, t, st);
    return err;
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    if (tracing())
        fprintf(stderr, "[trace %d] write_all fh %p %lld bytes\n", myrank(), (void *)fh,
                bytes(count, t));
    return report("MPI_File_write_all", PMPI_File_write_all(fh, buf, count, t, st));
}

int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t,
                      MPI_Status *st)
{
    if (tracing())
        fprintf(stderr, "[trace %d] write_at fh %p at %lld %lld bytes\n", myrank(), (void *)fh,
                (long long)off, bytes(count, t));
    return report("MPI_File_write_at", PMPI_File_write_at(fh, off, buf, count, t, st));
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count,
                          MPI_Datatype t, MPI_Status *st)
{
    if (tracing())
        fprintf(stderr, "[trace %d] write_at_all fh %p at %lld %lld bytes\n", myrank(),
                (void *)fh, (long long)off, bytes(count, t));
    return report("MPI_File_write_at_all", PMPI_File_write_at_all(fh, off, buf, count, t, st));
}
