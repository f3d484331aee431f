/* Seeds for fuzz-bbserver: one valid request of each kind and replies,
 * written as files into the directory given. */
#include <stdio.h>
#include <string.h>

#include "serve.h"

static void put(const char *dir, const char *name, const struct bbs_buf *b)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0) {
        perror(path);
        return;
    }
}

int main(int argc, char **argv)
{
    uint8_t tok[BBS_TOKEN_LEN];
    struct bbs_buf b = { 0 };
    struct bbs_writer w = { 3, 1, "node1:4000", "/tmp/f.bbfs.1.datalog" };
    struct bbs_extent e[2] = { { 0, 8, 100, 32, 0 }, { 4096, 512, 1, 0, 800 } };
    uint64_t sessions[2] = { 3, 7 };
    struct bbs_piece p[2] = { { { 0, 8, 100, 32, 0 }, 0 }, { { 8, 16, 1, 16, 800 }, 0 } };
    if (argc != 2) {
        fprintf(stderr, "usage: make-bbs-seeds DIR\n");
        return 2;
    }
    memset(tok, 0x5a, sizeof(tok));
    tok[0] = 0;                 /* (the harness puts the token back on odd inputs) */
    bbs_enc_ping(&b, 1, tok), put(argv[1], "ping", &b);
    bbs_enc_attach(&b, 2, tok, "/pfs/a", &w, e, 2, 0, 7), put(argv[1], "attach", &b);
    bbs_enc_attach(&b, 3, tok, "/pfs/a", &w, e, 0, 1 << 20, 0), put(argv[1], "attach-grow", &b);
    bbs_enc_query(&b, 3, tok, "/pfs/a", 0, 1 << 20), put(argv[1], "query", &b);
    bbs_enc_detach(&b, 4, tok, "/pfs/a", &w, 0, 64), put(argv[1], "detach", &b);
    bbs_enc_stat(&b, 5, tok, "/pfs/a"), put(argv[1], "stat", &b);
    bbs_enc_replayed(&b, 6, tok, "/pfs/a", NULL, 0), put(argv[1], "replayed", &b);
    bbs_enc_replayed(&b, 6, tok, "/pfs/a", sessions, 2), put(argv[1], "replayed-sessions", &b);
    bbs_enc_read(&b, 7, tok, "/tmp/f.bbfs.1.datalog", 0, 64), put(argv[1], "read", &b);
    bbs_enc_export(&b, 8, tok, "/tmp/f.bbfs.1.metalog", 1), put(argv[1], "export", &b);
    bbs_enc_remove(&b, 9, tok, "/tmp/f.bbfs.1.metalog"), put(argv[1], "remove", &b);
    bbs_rep_begin(&b, BBS_EXPORT, 8, BBS_OK, NULL);
    bbs_rep_export(&b, 3, "lost");
    memcpy(bbs_rep_read_room(&b, 3), "abc", 3), put(argv[1], "reply-export", &b);
    bbs_rep_begin(&b, BBS_QUERY, 3, BBS_OK, NULL);
    bbs_rep_query_begin(&b, 1);
    bbs_rep_query_writer(&b, &w);
    bbs_rep_query_pieces(&b, p, 2, UINT64_MAX, 64), put(argv[1], "reply-query", &b);
    bbs_rep_begin(&b, BBS_READ, 7, BBS_EPERM, "not below a log directory"),
        put(argv[1], "reply-error", &b);
    bbs_buf_free(&b);
    return 0;
}
