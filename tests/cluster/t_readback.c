/* A later job reads a file through bbfs, as a user's analysis job would:
 *
 *     t_readback REFERENCE FILE
 *     t_readback --delete FILE
 *
 * opens FILE (a bbfs: name) read-only on all processes, each reads its
 * share with a collective read, and compares it byte for byte with
 * REFERENCE (a plain file, e.g. a ufs: run's).  Pending logs of FILE are
 * replayed at this open, wherever they are.  --delete: process 0 deletes
 * FILE (MPI_File_delete), and with it its pending logs, wherever they are. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    int rank, nprocs, bad = 0, any;
    MPI_File fh;
    struct stat st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc == 3 && !strcmp(argv[1], "--delete")) {
        int rc = rank == 0 ? MPI_File_delete(argv[2], MPI_INFO_NULL) : MPI_SUCCESS;
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "FAIL: delete %s: %s\n", argv[2], msg);
        } else if (rank == 0)
            printf("ok: deleted %s\n", argv[2]);
        MPI_Finalize();
        return rc == MPI_SUCCESS ? 0 : 1;
    }
    if (argc != 3 || stat(argv[1], &st) != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: t_readback REFERENCE FILE (REFERENCE must exist)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long size = st.st_size, share = (size + nprocs - 1) / nprocs;
    long long lo = share * rank < size ? share * rank : size;
    long long n = lo + share < size ? share : size - lo;
    char *want = calloc(1, (size_t) n + 1), *got = calloc(1, (size_t) n + 1);
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, lo, SEEK_SET) != 0 || fread(want, 1, (size_t) n, f) != (size_t) n) {
        fprintf(stderr, "FAIL [rank %d]: cannot read %s\n", rank, argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fclose(f);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int rc = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "FAIL [rank %d]: open %s: %s\n", rank, argv[2], msg);
        MPI_Finalize();
        return 1;
    }
    MPI_Offset fsize;
    MPI_File_get_size(fh, &fsize);
    if (fsize != size) {
        fprintf(stderr, "FAIL [rank %d]: %s holds %lld bytes, the reference %lld\n", rank,
                argv[2], (long long) fsize, size);
        bad++;
    }
    MPI_File_read_at_all(fh, lo, got, (int) n, MPI_BYTE, MPI_STATUS_IGNORE);
    for (long long i = 0; i < n && bad < 1; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "FAIL [rank %d]: byte %lld is %02x, the reference's %02x\n", rank,
                    lo + i, (unsigned char) got[i], (unsigned char) want[i]);
            bad++;
        }
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("ok: %s equals %s (%lld bytes, %d processes)\n", argv[2], argv[1], size, nprocs);
    free(want);
    free(got);
    MPI_Finalize();
    return any ? 1 : 0;
}
