/*
 * bbfs-inspect: print a bbfs metalog in readable form, and say whether it
 * ends cleanly, ends in a torn record, or is corrupt.  See --help and
 * docs/bbfs-inspect.md.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "logfs.h"

static const char usage_text[] =
    "usage: bbfs-inspect [OPTIONS] METALOG...\n"
    "\n"
    "Print each bbfs metalog (the per-writer record log beside a datalog) and\n"
    "check it.\n"
    "\n"
    "Options:\n"
    "  -s, --summary     only the header, the end state and the totals\n"
    "  -a, --all         print every extent group (default: the first %d per record)\n"
    "  -d, --check-data  also check that NAME.datalog holds every byte the records use\n"
    "  -h, --help        this text\n"
    "\n"
    "Output, per metalog:\n"
    "  metalog PATH (N bytes)\n"
    "  header  format V, file id 0xID, writer RANK of COUNT\n"
    "  seal    complete up to L bytes (E epochs, open|closed, seal N)\n"
    "          | none | no valid slot | IGNORED ...   see below\n"
    "  @OFF  WRITE    e<E> datalog [A, B) N bytes, G groups\n"
    "            COUNT x LEN B @ OFFSET stride S   strided group: COUNT blocks of LEN\n"
    "                                              bytes, the first at file OFFSET,\n"
    "                                              each S bytes after the previous\n"
    "            LEN B @ OFFSET                    one contiguous extent\n"
    "  @OFF  SYNC     e<E> closed, datalog length L   end of epoch E (MPI_File_sync)\n"
    "  @OFF  SETSIZE  e<E> size S                     MPI_File_set_size\n"
    "  @OFF  ORDER    e<E> after collective call N     later records were made in or\n"
    "                                              after the handle's Nth collective call\n"
    "  @OFF  STAMP    e<E> clock T                    later records were made after time T\n"
    "                                              (ns): an epoch's start, or a switch\n"
    "                                              from another handle of the file\n"
    "  @OFF  CLOSE    e<E> closed, datalog length L   clean close, last record\n"
    "  end     clean | torn: N bytes at OFF ignored | CORRUPT ... | ERROR ...\n"
    "  totals  records, epochs sealed, extents, groups, data bytes\n"
    "OFF is the record's byte offset in the metalog; e<E> the epoch it belongs to.\n"
    "A torn record at the end is what a writer killed mid-append leaves: not an\n"
    "error.  A checksum mismatch or malformed record is corruption: reading stops\n"
    "there and the bytes from it to the end of the file are dropped by replay.\n"
    "The seal (NAME.sealed beside NAME.metalog) is the metalog length the writer's\n"
    "last sync or close completed: before it, a record that runs past the end of\n"
    "the file, or a file shorter than it, is CORRUPT, not torn.  \"none\" (an older\n"
    "log) and \"no valid slot\" (crash during the first sync) leave the torn-tail\n"
    "rule for the whole file; IGNORED is a seal of another file or writer.\n"
    "\n"
    "Exit status: 0 every metalog is clean or torn at the end, 1 corruption or\n"
    "another error was found, 2 usage error.\n";

#define DEFAULT_GROUPS 8

struct totals {
    uint64_t records, writes, syncs, setsizes, closes, groups, extents, bytes;
};

static void print_group(const struct logfs_group *g)
{
    if (g->count == 1)
        printf("            %" PRIu64 " B @ %" PRIu64 "\n", g->blocklen, g->offset);
    else
        printf("            %" PRIu64 " x %" PRIu64 " B @ %" PRIu64 " stride %" PRId64 "\n", g->count,
               g->blocklen, g->offset, g->stride);
}

static void print_write(const struct logfs_record *rec, int all, int quiet, struct totals *t)
{
    struct logfs_group_iter it;
    struct logfs_group g;
    uint64_t shown = 0;

    if (!quiet)
        printf("@%-8" PRIu64 " WRITE    e%" PRIu64 " datalog [%" PRIu64 ", %" PRIu64 ") %" PRIu64
               " bytes, %" PRIu64 " group%s\n",
               rec->offset, rec->epoch, rec->u.write.dlog_off, rec->u.write.dlog_off + rec->u.write.nbytes,
               rec->u.write.nbytes, rec->u.write.ngroups, rec->u.write.ngroups == 1 ? "" : "s");
    logfs_group_iter_init(&it, rec->u.write.groups, rec->u.write.groups_len);
    while (logfs_group_next(&it, &g) == 1) {
        t->groups++;
        t->extents += g.count;
        if (!quiet && (all || shown < DEFAULT_GROUPS))
            print_group(&g);
        shown++;
    }
    if (!quiet && !all && shown > DEFAULT_GROUPS)
        printf("            ... %" PRIu64 " more groups (--all shows them)\n", shown - DEFAULT_GROUPS);
    t->writes++;
    t->bytes += rec->u.write.nbytes;
}

static void print_seal(struct logfs_reader *r)
{
    struct logfs_seal s;
    switch (logfs_reader_seal(r, &s)) {
    case LOGFS_SEAL_VALID:
        printf("seal    complete up to %" PRIu64 " bytes (%" PRIu64 " epoch%s, %s, seal %" PRIu64 ")\n", s.length,
               s.epochs, s.epochs == 1 ? "" : "s", s.closed ? "closed" : "open", s.seq);
        break;
    case LOGFS_SEAL_UNKNOWN:
        printf("seal    no valid slot (writer stopped before or during its first sync)\n");
        break;
    case LOGFS_SEAL_FOREIGN:
        printf("seal    IGNORED: it belongs to file id 0x%" PRIx64 ", writer %u of %u\n", s.file_id, s.rank,
               s.nwriters);
        break;
    default:
        printf("seal    none (older log: a damaged length reads as a torn end)\n");
        break;
    }
}

static int inspect(const char *path, int summary, int all, int check_data)
{
    struct logfs_reader *r;
    struct logfs_record rec;
    struct logfs_error err;
    struct totals t = {0};
    uint64_t data_end = 0;
    int rc, bad = 0;

    rc = logfs_reader_open(path, &r, &err);
    if (rc) {
        printf("metalog %s\nend     %s %s: %s\n\n", path, rc == LOGFS_ECORRUPT ? "CORRUPT" : "ERROR",
               logfs_status_name(rc), err.msg);
        return 1;
    }
    const struct logfs_header *h = logfs_reader_header(r);
    printf("metalog %s (%" PRIu64 " bytes)\n", path, logfs_reader_size(r));
    printf("header  format %u, file id 0x%" PRIx64 ", writer %u of %u\n", h->version, h->file_id, h->rank,
           h->nwriters);
    print_seal(r);
    while ((rc = logfs_reader_next(r, &rec, &err)) == LOGFS_OK) {
        t.records++;
        switch (rec.type) {
        case LOGFS_REC_WRITE:
            print_write(&rec, all, summary, &t);
            data_end = rec.u.write.dlog_off + rec.u.write.nbytes;
            break;
        case LOGFS_REC_SYNC:
        case LOGFS_REC_CLOSE:
            if (!summary)
                printf("@%-8" PRIu64 " %-8s e%" PRIu64 " closed, datalog length %" PRIu64 "\n", rec.offset,
                       rec.type == LOGFS_REC_SYNC ? "SYNC" : "CLOSE", rec.u.sync.epoch, rec.u.sync.dlog_len);
            if (rec.u.sync.dlog_len > data_end)
                data_end = rec.u.sync.dlog_len;
            rec.type == LOGFS_REC_SYNC ? t.syncs++ : t.closes++;
            break;
        case LOGFS_REC_SETSIZE:
            if (!summary)
                printf("@%-8" PRIu64 " SETSIZE  e%" PRIu64 " size %" PRIu64 "\n", rec.offset, rec.epoch,
                       rec.u.setsize.size);
            t.setsizes++;
            break;
        case LOGFS_REC_ORDER:
            if (!summary)
                printf("@%-8" PRIu64 " ORDER    e%" PRIu64 " after collective call %" PRIu64 "%s", rec.offset,
                       rec.epoch, rec.u.order.seq, rec.u.order.step ? "" : "\n");
            if (!summary && rec.u.order.step)
                printf(", the next WRITE's blocks one per %" PRIu64 " boundaries\n", rec.u.order.step);
            break;
        case LOGFS_REC_STAMP:
            if (!summary)
                printf("@%-8" PRIu64 " STAMP    e%" PRIu64 " clock %" PRIu64 "\n", rec.offset, rec.epoch,
                       rec.u.stamp.clock);
            break;
        }
    }
    if (rc == LOGFS_END) {
        uint64_t torn = logfs_reader_torn_bytes(r);
        if (torn)
            printf("end     torn: %" PRIu64 " bytes at offset %" PRIu64 " ignored (%s)\n", torn,
                   logfs_reader_size(r) - torn,
                   logfs_reader_saw_close(r) ? "after CLOSE" : "writer stopped mid-append");
        else
            printf("end     clean%s\n", logfs_reader_saw_close(r) ? " (closed)" : " (not closed: writer still running or crashed)");
    } else {
        printf("end     %s %s\n", rc == LOGFS_ECORRUPT ? "CORRUPT" : "ERROR", err.msg);
        bad = 1;
    }
    printf("totals  %" PRIu64 " records (%" PRIu64 " WRITE, %" PRIu64 " SYNC, %" PRIu64 " SETSIZE, %" PRIu64
           " CLOSE), %" PRIu64 " epochs sealed, %" PRIu64 " extents in %" PRIu64 " groups, %" PRIu64
           " data bytes\n",
           t.records, t.writes, t.syncs, t.setsizes, t.closes, t.syncs + t.closes, t.extents, t.groups, t.bytes);
    if (check_data) {
        char *d = logfs_datalog_path(path);
        struct stat st;
        if (!d || stat(d, &st) < 0) {
            printf("datalog %s: MISSING\n", d ? d : "?");
            bad = 1;
        } else if ((uint64_t)st.st_size < data_end) {
            printf("datalog %s: SHORT, %" PRIu64 " bytes but records use %" PRIu64 "\n", d, (uint64_t)st.st_size,
                   data_end);
            bad = 1;
        } else {
            printf("datalog %s: ok, %" PRIu64 " bytes, records use %" PRIu64 "\n", d, (uint64_t)st.st_size, data_end);
        }
        free(d);
    }
    printf("\n");
    logfs_reader_close(r);
    return bad;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"summary", no_argument, NULL, 's'},
                                             {"all", no_argument, NULL, 'a'},
                                             {"check-data", no_argument, NULL, 'd'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int summary = 0, all = 0, check_data = 0, c, bad = 0;

    while ((c = getopt_long(argc, argv, "sadh", longopts, NULL)) != -1) {
        switch (c) {
        case 's': summary = 1; break;
        case 'a': all = 1; break;
        case 'd': check_data = 1; break;
        case 'h': printf(usage_text, DEFAULT_GROUPS); return 0;
        default: fprintf(stderr, usage_text, DEFAULT_GROUPS); return 2;
        }
    }
    if (optind == argc) {
        fprintf(stderr, usage_text, DEFAULT_GROUPS);
        return 2;
    }
    for (int i = optind; i < argc; i++)
        bad |= inspect(argv[i], summary, all, check_data);
    return bad;
}
