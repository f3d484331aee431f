/*
 * The driver's side of bbserver, private to ad_bbfs_server*.c: one handle's
 * state (ad_bbfs_server.c: open, attach, query; ad_bbfs_server_read.c:
 * reads of others' bytes; ad_bbfs_server_start.c: this node's server).
 */
#ifndef AD_BBFS_SERVER_H_INCLUDED
#define AD_BBFS_SERVER_H_INCLUDED

#include "ad_bbfs.h"
#include "../../bbserver/proto.h"

/* Other nodes' log bytes are cached in aligned chunks of this size.  A log
 * below what its writer attached never changes (it is only appended to,
 * and an attach flushes first), so a cached chunk stays true; one fetched
 * at the end of what was attached holds less, and a read past that fetches
 * it again. */
#define ADIOI_BBFS_READ_CHUNK ((uint64_t) 1 << 20)

struct ADIOI_BBFS_Server {
    ADIOI_BBFS_File *bf;        /* the handle this belongs to */
    struct ADIOI_BBFS_Server *next_dirty;       /* in `dirty` while it has notes */
    int is_dirty;
    char map_addr[256];         /* the server holding this file's map */
    char map_name[PATH_MAX];    /* the file's name there: its real path (rank 0's) */
    char node_addr[256];        /* this node's server: where our logs are read */
    uint64_t node_incarnation;  /* its life, where finding it learned it (0: not) */
    ADIOI_BBFS_Nodes nodes;     /* token and time-out for calls to servers */
    int force_remote;
    int named;                  /* map_addr is the one bbfs_server / BBFS_SERVER names */
    int rank;
    struct bbs_extent *notes;   /* runs logged since the last attach, in order */
    size_t nnotes, capnotes;
    uint64_t notes_pieces;      /* blocks of the last batch's notes */
    uint64_t grown;             /* a logged set_size's size, not yet attached (0: none) */
    struct bbs_writer *writers; /* the view's owners (strings owned) */
    uint64_t *log_end;          /* by writer: the end of what the view has in its log */
    int nwriters, capwriters;
    struct open_log {
        char *path;
        int fd;
    } *logs;                    /* datalogs of this node opened for reads */
    int nlogs;
    struct far_read {
        int writer;
        uint64_t pos;
        char *dest;
        size_t len;
    } *far;                     /* reads through other nodes' servers, until the flush */
    size_t nfar, capfar;
    struct chunk {
        char *datalog;          /* NULL: a free slot */
        uint64_t idx, len;      /* bytes [idx * ADIOI_BBFS_READ_CHUNK, + len) of the log */
        char *data;
    } *cache;                   /* other nodes' log bytes (bbfs_read_cache), FIFO */
    size_t ncache, next_out;
    uint64_t attaches, queries; /* messages sent (their request ids) */
    int clock_heard;            /* the map's server answered since the last sync */
    uint64_t map_incarnation;   /* the life of its maps this handle's map is in */
    /* A handle of one process that found no live session of the file at
     * its open connects at its first call to a server, and its manifest
     * names the map when it is published (ADIOI_BBFS_Server_connect): a
     * file per process that is opened, written and closed (replayed from
     * memory) talks to no server. */
    int unconnected;            /* no server found, no map chosen yet */
    int map_unnamed;            /* the session's manifest does not name the map yet */
};

/* Before any request to a server (a request carries the token): an
 * unconnected handle finds (or starts) this node's server, chooses the map
 * (a live session's, else this node's server's) and connects to it; a
 * connected one has nothing to do.  @return 0, or -1 with why in err. */
int ADIOI_BBFS_Server_connect(ADIOI_BBFS_Server * s, char *err, size_t errlen);
/* The file's name as maps know it, its real path (bf->canonical where it
 * has none), into @p out (PATH_MAX) unless @p out names it already. */
void ADIOI_BBFS_Server_real_name(const ADIOI_BBFS_File * bf, char *out, size_t len);
/* Take another handle's map (two handles must attach to one) and connect
 * to it.  @return 0, or -1 with why in err. */
int ADIOI_BBFS_Server_adopt_map(ADIOI_BBFS_Server * s, const char *map, char *err,
                                size_t errlen);

/* A call to the server holding the file's map (uses_map: an attach or a
 * query: ad_bbfs_server.c).  @return 0, or -1 with why in err. */
int ADIOI_BBFS_Server_map_call(ADIOI_BBFS_Server * s, struct bbs_buf *b, struct bbs_reply *r,
                               char *err, size_t len, int uses_map);

/* The read side's state: a cache of cache_bytes; freed by reads_end. */
void ADIOI_BBFS_Server_reads_begin(ADIOI_BBFS_Server * s, long long cache_bytes);
/* Close this node's datalogs the view no longer names: a session replayed
 * since took its logs away, and an open descriptor would keep a removed
 * log's space (found by the soak across nodes: one descriptor an epoch). */
void ADIOI_BBFS_Server_reads_prune(ADIOI_BBFS_Server * s);
void ADIOI_BBFS_Server_reads_end(ADIOI_BBFS_Server * s);

#endif
