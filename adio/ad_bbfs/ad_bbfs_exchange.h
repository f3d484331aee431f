/*
 * The replay's exchange across nodes, shared by its two halves:
 * ad_bbfs_exchange.c (the hosts, and every writer's metalog to every
 * process) and ad_bbfs_exchange_round.c (each round's datalog bytes).
 */
#ifndef AD_BBFS_EXCHANGE_H_INCLUDED
#define AD_BBFS_EXCHANGE_H_INCLUDED

#include "ad_bbfs.h"

/* One datalog range a process wants in this round, as sent to its host. */
struct want {
    uint64_t writer, off, len;
};

/* Where the wanted bytes go, in order: count blocks of len bytes at dest,
 * dest + stride, ... (a round wants only what it places). */
struct place {
    char *dest;
    uint64_t len, count, stride;
};

struct ADIOI_BBFS_Exchange {
    MPI_Comm comm;
    int rank, nprocs, nwriters;
    int direct;                 /* every process reads its wants itself */
    int *host;                  /* by writer: the process that reads its logs */
    unsigned char *here;        /* by writer: this process can open its logs too, and
                                 * reads its own wants of them */
    char **far;                 /* by writer: its node's server, when the host cannot
                                 * open its logs (NULL: it can) */
    unsigned char *gone;        /* by writer: nobody can read its logs and no server
                                 * serves them (salvage only: planned without it) */
    const unsigned char *lazy;  /* by writer (or NULL): of a lazy session, promised
                                 * nothing: with no log anywhere, it made none */
    unsigned char *absent;      /* by writer: lazy, and no process has its log */
    ADIOI_BBFS_Nodes nodes;     /* for calls to those servers */
    ADIOI_BBFS_Datalogs *logs;  /* (the replay's) datalogs, of hosted writers only */
    struct want *want;
    size_t nwant, capwant;
    struct place *place;
    size_t nplace, capplace;
    uint64_t wanted;            /* bytes of all wants */
    int peer_failed;            /* a host of this process's wants could not read them
                                 * (its own error says why: agreed at the replay's end) */
    long long rounds, metalog_bytes, wants, moved, read_direct; /* (bbfs_timing's counts) */
    /* Per-round buffers, kept for the replay's next rounds: one
     * allocation per replay, not several per round. */
    int *scount, *rcount, *sdispl, *rdispl;
    long long *sbytes, *rbytes;
    struct buf {
        void *p;
        size_t cap;
    } sorted, slot, asked, back, got, span, spans, said;
};

/* An error every process reports alike: the first failing process's class
 * and message, broadcast from it.  derived: this process's err only
 * follows another's (it learned that one failed): a process with an error
 * of its own is preferred, whose message says what to do. */
int ADIOI_BBFS_Exchange_agree_message(MPI_Comm comm, const char *myname, int err, int derived);

#endif
