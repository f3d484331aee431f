/* libFuzzer target: bbserver's request path (bbserver/serve.c, proto.c).
 * Every byte a server takes from the network goes through bbs_serve; the
 * map lives across inputs, so attaches are followed by queries, detaches
 * and stats of what earlier inputs left.  Inputs whose first byte is odd get
 * the server's token written over theirs (a fuzzer cannot guess 32 bytes),
 * so both the refusal and the served paths are explored.  Beyond not
 * crashing: every reply must decode as a reply to the same operation and
 * id, and the same bytes decoded as a reply must not crash either. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

static struct bbs_ownmap *map;
static struct bbs_serve_conf conf;
static struct bbs_stats stats;
static struct bbs_buf out;
static uint64_t pieces;         /* attached into map since it was made */
/* A log directory of its own: REMOVE and READ may act inside it, and
 * nothing of anyone else's is there. */
static char dir[] = "/tmp/fuzz-bbserver.XXXXXX";
static const char *dirs[] = { dir };

static void remove_dir(void)
{
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *msg;
    struct bbs_request req;
    struct bbs_reply rep;
    char err[512];

    /* Bounded memory and time: one input expands to at most BBS_MAX_PIECES
     * (made small for this build), a map to at most 16 times that. */
    if (!map || bbs_own_nfiles(map) > 64 || pieces > 16 * BBS_MAX_PIECES) {
        pieces = 0;
        bbs_own_destroy(map);
        map = bbs_own_create();
        /* (once: a made name may end in 'X' too, and mkdtemp of it then
         * fails; that aborted one run in 62 maps) */
        static int made;
        if (!made) {
            if (!mkdtemp(dir))
                abort();
            atexit(remove_dir);
            made = 1;
        }
        memset(conf.token, 0x5a, BBS_TOKEN_LEN);
        conf.logdirs = dirs;
        conf.nlogdirs = 1;
    }
    if ((msg = malloc(size ? size : 1)) == NULL)
        return 0;
    memcpy(msg, data, size);
    if (size >= 16 + BBS_TOKEN_LEN && (data[0] & 1))
        memcpy(msg + 16, conf.token, BBS_TOKEN_LEN);
    if (bbs_serve(map, &conf, &stats, msg, size, &out) == 0) {
        if (bbs_dec_reply(out.p, out.len, &rep, err, sizeof(err)) != BBS_OK)
            abort();            /* the server sent something its clients cannot read */
        if (bbs_dec_request(msg, size, &req, err, sizeof(err)) == BBS_OK) {
            if (rep.op != req.op || rep.id != req.id)
                abort();
            if (req.op == BBS_ATTACH)
                pieces += req.npieces;
        }
    }
    if (bbs_dec_reply(msg, size, &rep, err, sizeof(err)) == BBS_OK && rep.status == BBS_OK
        && rep.op == BBS_QUERY) {
        struct bbs_writer *w = calloc(rep.nwriters ? rep.nwriters : 1, sizeof(*w));
        if (w) {
            bbs_reply_writers(&rep, w);
            for (uint32_t i = 0; i < rep.npieces; i++) {
                struct bbs_piece p;
                bbs_reply_piece(&rep, i, &p);
                if (p.writer >= rep.nwriters || !w[p.writer].datalog)
                    abort();
            }
            free(w);
        }
    }
    free(msg);
    return 0;
}
