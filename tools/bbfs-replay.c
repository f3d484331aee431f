/*
 * bbfs-replay — turn a bbfs file's pending logs into the canonical file.
 *
 *     mpiexec -n K bbfs-replay [-n|--dry-run] [-s|--salvage] [-q|--quiet] FILE
 *
 * FILE is the canonical path, with or without a bbfs: prefix (bbfs:ufs:/p
 * forces the lower driver).  Any number of processes may replay, whatever
 * number wrote.  The replay itself is the driver's: opening the file through
 * bbfs replays pending logs before anything else; this tool adds the plan
 * summary, progress and a closing line.  See docs/bbfs-replay.md.
 */
#include <mpi.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "planner.h"
#include "sessions.h"

static int rank, nprocs;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n K bbfs-replay [OPTIONS] FILE\n"
            "\n"
            "Replays the pending logs of the bbfs file FILE into the canonical file,\n"
            "epoch by epoch, with K processes (any K), then removes the logs and the\n"
            "manifest.  FILE may carry a bbfs: prefix (bbfs:ufs:/path forces the lower\n"
            "driver); without one, bbfs: is assumed.\n"
            "\n"
            "  -n, --dry-run  print what would be replayed (writers, epochs, bytes) and stop\n"
            "  -s, --salvage  replay what damaged metalogs sealed before the damage, and\n"
            "                 report what could not be recovered (default: refuse)\n"
            "  -q, --quiet    no progress lines, only errors and the closing summary\n"
            "  -h, --help     this text\n"
            "\n"
            "Exit status, as bbfs-inspect's: 0 replayed (or nothing pending), 1 failed\n"
            "(the message says why), 2 bad usage; and 3 left pending: a handle of the\n"
            "file is still open (its close replays them).\n");
}

/* "/path" of "bbfs:ufs:/path", "ufs:/path" or "/path", by the driver's
 * prefix rule. */
static const char *plain_path(const char *name)
{
    size_t n;
    while ((n = logfs_name_prefix_len(name)) > 0)
        name += n;
    return name;
}

struct summary {
    int pending;                /* sessions found pending */
    int live;                   /* sessions of handles still open: left alone */
    unsigned long long epochs, bytes, writers;
    unsigned long long elsewhere;       /* writers whose logs only other nodes can read */
};

/* Describe one pending session; with dry_run, in detail.  Returns 0, or 1
 * when its logs cannot be planned (the message says why). */
static int describe_session(const char *path, const char *mpath, int dry_run, int salvage,
                            struct summary *s)
{
    struct logfs_manifest m;
    struct logfs_error le;
    struct logfs_plan *plan;
    struct logfs_plan_opts po = { salvage, 0, NULL, 0 };
    size_t len;
    char *text;
    int rc;

    rc = logfs_session_load(mpath, &text, &len, &le);
    if (rc == LOGFS_ENOENT)
        return 0;               /* replayed by someone else meanwhile */
    if (rc != LOGFS_OK)
        return fprintf(stderr, "bbfs-replay: %s\n", le.msg), 1;
    s->pending++;
    rc = logfs_manifest_parse(text, len, &m, &le);
    free(text);
    if (rc != LOGFS_OK)
        return fprintf(stderr, "bbfs-replay: %s: %s\n", mpath, le.msg), 1;
    if (m.replayed) {
        /* a replay died cleaning up: the data is in the file */
        if (dry_run)
            printf("file     %s\nmanifest %s: replayed already; what is left of its logs is "
                   "removed\n", path, mpath);
        logfs_manifest_free(&m);
        return 0;
    }

    /* Logs on other nodes' own storage are not readable here: the replay
     * gets them from processes on those nodes; only the manifest is shown. */
    uint32_t elsewhere = 0;
    for (uint32_t w = 0; w < m.nwriters; w++)
        elsewhere += access(m.w[w].metalog, R_OK) != 0;
    if (elsewhere) {
        s->writers += m.nwriters;
        s->elsewhere += elsewhere;
        if (dry_run) {
            printf("file     %s\nmanifest %s\nfile id  %016llx\nwriters  %u\n", path, mpath,
                   (unsigned long long) m.file_id, m.nwriters);
            for (uint32_t w = 0; w < m.nwriters; w++)
                printf("  writer %u on %s: %s%s\n", w, m.w[w].host, m.w[w].metalog,
                       access(m.w[w].metalog, R_OK) ? " (not readable here: another node's)" : "");
            printf("epochs and bytes: planned by the replay, which needs a process on each "
                   "writer's node\n");
        }
        logfs_manifest_free(&m);
        return 0;
    }
    const char **metalogs = malloc(sizeof(char *) * m.nwriters);
    for (uint32_t w = 0; w < m.nwriters; w++)
        metalogs[w] = m.w[w].metalog;
    rc = logfs_plan_build(metalogs, m.nwriters, &po, &plan, &le);
    free(metalogs);
    if (rc != LOGFS_OK) {
        fprintf(stderr, "bbfs-replay: %s: %s\n", path, le.msg);
        if (!salvage)
            fprintf(stderr, "bbfs-replay: --salvage replays what the damaged logs sealed "
                    "before the damage\n");
        logfs_manifest_free(&m);
        return 1;
    }
    uint64_t *promised = malloc(sizeof(uint64_t) * m.nwriters);
    for (uint32_t w = 0; w < m.nwriters; w++)
        promised[w] = m.w[w].epochs;
    rc = logfs_plan_check_sealed(plan, promised, &le);
    free(promised);
    if (rc != LOGFS_OK) {
        fprintf(stderr, "bbfs-replay: %s: %s\n", path, le.msg);
        if (!salvage) {
            fprintf(stderr, "bbfs-replay: --salvage replays what the logs still hold\n");
            logfs_plan_free(plan);
            logfs_manifest_free(&m);
            return 1;
        }
    }
    uint64_t epochs = logfs_plan_nepochs(plan);
    s->writers += m.nwriters;
    s->epochs += epochs;
    for (uint64_t e = 0; e < epochs; e++)
        s->bytes += logfs_plan_epoch_bytes(plan, e);
    if (dry_run) {
        printf("file     %s\nmanifest %s\nfile id  %016llx\nwriters  %u\n", path, mpath,
               (unsigned long long) m.file_id, m.nwriters);
        for (uint32_t w = 0; w < m.nwriters; w++)
            printf("  writer %u on %s: %s, %llu epochs sealed (%llu at its close)\n", w,
                   m.w[w].host, m.w[w].metalog,
                   (unsigned long long) logfs_plan_writer_epochs(plan, w),
                   (unsigned long long) m.w[w].epochs);
        for (uint64_t e = 0; e < epochs; e++) {
            struct logfs_resize rs;
            logfs_plan_resize(plan, e, &rs);
            printf("epoch %llu: %llu bytes", (unsigned long long) e,
                   (unsigned long long) logfs_plan_epoch_bytes(plan, e));
            if (rs.present)
                printf(", set_size to %llu (then at least %llu)",
                       (unsigned long long) rs.truncate_to, (unsigned long long) rs.extend_to);
            printf("\n");
        }
    }
    for (uint32_t w = 0; w < m.nwriters; w++) {
        const char *warn = logfs_plan_warning(plan, w);
        if (warn)
            fprintf(stderr, "bbfs-replay: writer %u: could not recover everything: %s\n", w,
                    warn);
    }
    logfs_plan_free(plan);
    logfs_manifest_free(&m);
    return 0;
}

/* Rank 0: describe every pending session of the file, oldest first (the
 * order the replay takes).  Sessions of handles still open are not
 * pending: their logs are theirs until they close. */
static int describe(const char *path, int dry_run, int salvage, struct summary *s)
{
    struct logfs_session_info *ss;
    struct logfs_error le;
    size_t n;
    int failed = 0;

    memset(s, 0, sizeof(*s));
    if (logfs_sessions_list(path, &ss, &n, &le) != LOGFS_OK)
        return fprintf(stderr, "bbfs-replay: %s: %s\n", path, le.msg), 1;
    for (size_t i = 0; i < n && !failed; i++) {
        if (ss[i].live) {
            s->live++;
            fprintf(stderr, "bbfs-replay: %s: logs of a handle that is still open (%s): left "
                    "to it\n", path, ss[i].path);
            continue;
        }
        failed = describe_session(path, ss[i].path, dry_run, salvage, s);
    }
    logfs_sessions_free(ss, n);
    return failed;
}

int main(int argc, char **argv)
{
    int dry_run = 0, salvage = 0, quiet = 0, failed = 0;
    const char *name = NULL;

    static const struct option longopts[] = {{"dry-run", no_argument, NULL, 'n'},
                                             {"salvage", no_argument, NULL, 's'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c, help = 0, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    opterr = rank == 0;         /* one complaint, not one per process */
    while ((c = getopt_long(argc, argv, "nsqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': dry_run = 1; break;
        case 's': salvage = 1; break;
        case 'q': quiet = 1; break;
        case 'h': help = 1; break;
        default: bad = 1; break;
        }
    }
    if (!help && !bad && optind == argc - 1)
        name = argv[optind];
    if (help || !name) {
        if (rank == 0)
            usage(help ? stdout : stderr);
        MPI_Finalize();
        return help ? 0 : 2;
    }

    /* (sessions are kept beside the file a link names: the driver's rule) */
    char path[4096];
    if (logfs_canonical_name(plain_path(name), path, sizeof(path)) < 0)
        snprintf(path, sizeof(path), "%s", plain_path(name));
    char fname[4200];
    if (strncmp(name, "bbfs:", 5) == 0)
        snprintf(fname, sizeof(fname), "%s", name);
    else
        snprintf(fname, sizeof(fname), "bbfs:%s", name);

    struct summary s;
    if (rank == 0)
        failed = describe(path, dry_run, salvage, &s);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&s, sizeof(s), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (failed || dry_run || !s.pending) {
        if (rank == 0 && !failed && !s.pending)
            printf("bbfs-replay: %s: no pending logs, nothing to do\n", path);
        MPI_Finalize();
        return failed;
    }
    if (s.live) {
        /* Replaying now could put these logs under older writes of the open
         * handle, replayed at its close: that close replays them all. */
        if (rank == 0)
            printf("bbfs-replay: %s: %d pending sessions left: %d handles of the file are still "
                   "open, and the last of them to close replays them with its own (writes of "
                   "several handles are replayed together, in the order they were made)\n",
                   path, s.pending, s.live);
        MPI_Finalize();
        return 3;
    }

    /* Opening through bbfs replays the pending logs; read-only, so no new
     * logs are started. */
    MPI_Info info;
    MPI_File fh;
    MPI_Info_create(&info);
    MPI_Info_set(info, "bbfs_progress", quiet ? "false" : "true");
    if (salvage)
        MPI_Info_set(info, "bbfs_salvage", "true");
    double t0 = MPI_Wtime();
    int err = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, info, &fh);
    if (err == MPI_SUCCESS)
        err = MPI_File_close(&fh);
    double t = MPI_Wtime() - t0;
    MPI_Info_free(&info);
    if (err != MPI_SUCCESS) {
        /* Each process says what went wrong where it went wrong; the others
         * only know that it did. */
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        if (rank == 0 || !strstr(msg, "another process"))
            fprintf(stderr, "bbfs-replay: %s: replay failed on process %d: %s\n", path, rank,
                    msg);
        MPI_Finalize();
        return 1;
    }
    struct stat st;
    if (rank == 0) {
        double mib = s.bytes / 1048576.0;
        if (s.elsewhere)        /* their epochs and bytes were not counted here */
            printf("bbfs-replay: %s: the logs of %llu writers (%llu not readable here: on other nodes, or gone) replayed "
                   "by %d processes in %.2f s; file size %lld bytes\n", path, s.writers,
                   s.elsewhere, nprocs, t, stat(path, &st) == 0 ? (long long) st.st_size : -1LL);
        else
            printf("bbfs-replay: %s: %llu epochs, %.1f MiB from %llu writers replayed by %d "
                   "processes in %.2f s (%.1f MiB/s); file size %lld bytes\n", path, s.epochs,
                   mib, s.writers, nprocs, t, t > 0 ? mib / t : 0.0,
                   stat(path, &st) == 0 ? (long long) st.st_size : -1LL);
    }
    MPI_Finalize();
    return 0;
}
