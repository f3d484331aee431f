/*
 * Logged writes.  Whatever the call (contiguous or strided, independent or
 * collective, blocking or not), the bytes are appended to this process's
 * datalog in access order and one WRITE record describes where they belong;
 * the canonical file is not touched.  Collective writes are logged the same
 * way, so their order against independent writes is the order of the calls
 * (the trap UnifyFS #781 fell into is mixing a logged and a direct path).
 */
#include "ad_bbfs.h"
#include "adioi.h"
#include "../../logfs/writer.h"

struct write_walk {
    ADIOI_BBFS_File *bf;
    struct logfs_writer *w;
    const char *data;           /* packed user data */
    ADIO_Offset end;            /* furthest byte written */
    struct logfs_error le;
    int rc;
};

static int log_run(void *arg, ADIO_Offset off, ADIO_Offset len, ADIO_Offset stride,
                   ADIO_Offset count, ADIO_Offset data_off)
{
    struct write_walk *ww = arg;
    ADIO_Offset end = off + (count - 1) * stride + len;
    uint64_t pos = logfs_writer_datalog_length(ww->w);   /* where its bytes go */

    ww->rc = logfs_writer_add_run(ww->w, (uint64_t) off, (uint64_t) len, (int64_t) stride,
                                  (uint64_t) count, ww->data + data_off, &ww->le);
    if (end > ww->end)
        ww->end = end;
    if (ww->rc == LOGFS_OK)
        ADIOI_BBFS_Server_note(ww->bf, (uint64_t) off, (uint64_t) len, (uint64_t) stride,
                               (uint64_t) count, pos);
    return ww->rc != LOGFS_OK;
}

void ADIOI_BBFS_Log_write(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, int contig_call,
                          ADIO_Status * status, int *error_code)
{
    static char myname[] = "ADIOI_BBFS_LOG_WRITE";
    ADIOI_BBFS_File *bf = ADIOI_BBFS_Private(fd);
    struct write_walk ww = { bf, bf->writer, buf, 0, {0}, LOGFS_OK };
    MPI_Count type_size;
    ADIO_Offset nbytes, next_fp;
    int buf_contig, rc;
    char *packed = NULL;

    MPI_Type_size_x(datatype, &type_size);
    nbytes = (ADIO_Offset) count * type_size;
    ADIOI_Datatype_iscontig(datatype, &buf_contig);
    if (!buf_contig && nbytes > 0) {
        packed = ADIOI_Malloc(nbytes);
        /* (the buffer may hold 2 GiB and more) */
        *error_code = ADIOI_BBFS_Pack(buf, count, datatype, packed, nbytes);
        if (*error_code != MPI_SUCCESS) {
            ADIOI_BBFS_FREE(packed);
            return;
        }
        ww.data = packed;
    }

    ADIOI_BBFS_Order_switch(bf);
    rc = logfs_writer_begin_write(bf->writer, &ww.le);
    if (rc == LOGFS_OK) {
        if (contig_call) {
            /* ROMIO hands contiguous calls a byte offset (disp included). */
            ADIO_Offset start = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind : offset;
            if (nbytes > 0)
                log_run(&ww, start, nbytes, 0, 1, 0);
            next_fp = start + nbytes;
        } else {
            ADIOI_BBFS_Walk_view_runs(fd, file_ptr_type, offset, nbytes, log_run, &ww,
                                      &next_fp);
        }
        rc = ww.rc;
        int end_rc = logfs_writer_end_write(bf->writer, rc == LOGFS_OK ? &ww.le : NULL);
        if (rc == LOGFS_OK)
            rc = end_rc;
    }
    /* posix consistency: every write is visible to the others when it returns */
    if (rc == LOGFS_OK && bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_POSIX)
        rc = logfs_writer_flush(bf->writer, &ww.le);
    ADIOI_BBFS_FREE(packed);
    if (rc != LOGFS_OK) {
        *error_code = ADIOI_BBFS_Err_log_io(myname, __LINE__, rc, ww.le.msg);
        return;
    }
    if (bf->hints.consistency == ADIOI_BBFS_CONSISTENCY_POSIX) {
        ADIOI_BBFS_Server_attach(fd, error_code);       /* (with a server) */
        if (*error_code != MPI_SUCCESS)
            return;
    }
    if (ww.end > bf->own_end)
        bf->own_end = ww.end;
    bf->own_unflushed = 1;
    ADIOI_BBFS_news++;
    ADIOI_BBFS_Sync_wrote(bf);
    ADIOI_BBFS_Access_done(fd, file_ptr_type, next_fp, status, datatype, nbytes);
    *error_code = MPI_SUCCESS;
}
