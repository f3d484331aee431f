// bbserver's request handling without the transport: tokens, the map
// through messages, and reads confined to the log directories.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "helpers.h"
#include "reader.h"
#include "serve.h"
#include "writer.h"

namespace {

class Serve : public ::testing::Test {
  protected:
    TempDir logs, elsewhere;
    const char *dirs[1];
    bbs_serve_conf conf{};
    bbs_stats stats{};
    bbs_ownmap *m = bbs_own_create();
    bbs_buf req{}, rep{};
    bbs_reply r{};
    uint8_t token[BBS_TOKEN_LEN];
    uint64_t clock = 0;         // what AttachAs tells

    Serve()
    {
        for (int i = 0; i < BBS_TOKEN_LEN; i++)
            conf.token[i] = token[i] = (uint8_t) (i * 7 + 1);
        dirs[0] = logs.path().c_str();
        conf.logdirs = dirs;
        conf.nlogdirs = 1;
        conf.pid = 1234;
        conf.incarnation = 0xfeed;
    }
    ~Serve() override
    {
        bbs_own_destroy(m);
        bbs_buf_free(&req);
        bbs_buf_free(&rep);
    }
    // Serve req; decode the reply into r.  @return r.status
    int Run()
    {
        char err[256];
        EXPECT_EQ(0, bbs_serve(m, &conf, &stats, req.p, req.len, &rep));
        EXPECT_EQ(BBS_OK, bbs_dec_reply(rep.p, rep.len, &r, err, sizeof(err))) << err;
        return r.status;
    }
    int AttachAs(uint32_t rank, uint64_t off, uint64_t len, uint64_t pos)
    {
        std::string log = logs.file("f.bbfs." + std::to_string(rank) + ".datalog");
        bbs_writer w{5, rank, "node0:7", log.c_str()};
        bbs_extent e{off, len, 1, 0, pos};
        EXPECT_EQ(0, bbs_enc_attach(&req, 1, token, "/pfs/f", &w, &e, 1, 0, clock));
        return Run();
    }
};

TEST_F(Serve, AWrongTokenIsRefusedAndChangesNothing)
{
    token[0] ^= 1;
    EXPECT_EQ(BBS_ETOKEN, AttachAs(0, 0, 8, 0));
    EXPECT_NE(nullptr, strstr(r.msg, "token")) << r.msg;
    EXPECT_EQ(0u, bbs_own_nfiles(m));
    EXPECT_EQ(1u, stats.refused);
    EXPECT_EQ(0u, stats.requests[BBS_ATTACH]);
}

TEST_F(Serve, QueryNamesOnlyTheWritersItsPiecesUse)
{
    ASSERT_EQ(BBS_OK, AttachAs(0, 0, 8, 0));
    ASSERT_EQ(BBS_OK, AttachAs(1, 8, 8, 0));
    ASSERT_EQ(BBS_OK, AttachAs(2, 16, 8, 0));
    ASSERT_EQ(0, bbs_enc_query(&req, 2, token, "/pfs/f", 10, 20));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(2u, r.id);
    ASSERT_EQ(2u, r.nwriters);
    ASSERT_EQ(2u, r.npieces);
    bbs_writer w[2];
    bbs_reply_writers(&r, w);
    EXPECT_EQ(1u, w[0].rank);
    EXPECT_EQ(2u, w[1].rank);
    bbs_piece p;
    bbs_reply_piece(&r, 0, &p);
    EXPECT_EQ(10u, p.e.off);
    EXPECT_EQ(6u, p.e.len);
    EXPECT_EQ(1u, p.e.count);
    EXPECT_EQ(0u, p.writer);
    EXPECT_EQ(2u, p.e.pos);
    EXPECT_EQ(UINT64_MAX, r.more);
    EXPECT_EQ(3u, stats.requests[BBS_ATTACH]);
    EXPECT_EQ(1u, stats.requests[BBS_QUERY]);
}

TEST_F(Serve, AnUnknownFileIsEmptyNotAnError)
{
    ASSERT_EQ(0, bbs_enc_query(&req, 2, token, "/pfs/none", 0, UINT64_MAX));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(0u, r.npieces);
    ASSERT_EQ(0, bbs_enc_stat(&req, 3, token, "/pfs/none"));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(0u, r.size);
}

TEST_F(Serve, ReplayedDropsTheFile)
{
    ASSERT_EQ(BBS_OK, AttachAs(0, 0, 8, 0));
    ASSERT_EQ(0, bbs_enc_replayed(&req, 2, token, "/pfs/f", nullptr, 0));
    ASSERT_EQ(BBS_OK, Run());
    ASSERT_EQ(0, bbs_enc_stat(&req, 3, token, "/pfs/f"));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(0u, r.size);
    EXPECT_EQ(0u, bbs_own_nfiles(m));
}

TEST_F(Serve, ReplayedOfOneSessionLeavesTheOthersBytes)
{
    ASSERT_EQ(BBS_OK, AttachAs(0, 0, 8, 0));    // session 5
    const uint64_t other = 6, mine = 5;
    ASSERT_EQ(0, bbs_enc_replayed(&req, 2, token, "/pfs/f", &other, 1));
    ASSERT_EQ(BBS_OK, Run());
    ASSERT_EQ(0, bbs_enc_query(&req, 3, token, "/pfs/f", 0, UINT64_MAX));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(1u, r.npieces);
    ASSERT_EQ(0, bbs_enc_replayed(&req, 4, token, "/pfs/f", &mine, 1));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(0u, bbs_own_nfiles(m));
    EXPECT_EQ(2u, stats.requests[BBS_REPLAYED]);
}

TEST_F(Serve, AMalformedRequestGetsAReplySayingWhy)
{
    ASSERT_EQ(0, bbs_enc_query(&req, 2, token, "/pfs/f", 9, 3));
    EXPECT_EQ(BBS_EMSG, Run());
    EXPECT_NE(nullptr, strstr(r.msg, "query")) << r.msg;
    EXPECT_EQ(1u, stats.refused);
}

TEST_F(Serve, ReadServesBytesOfALogBelowTheLogDirectory)
{
    std::vector<uint8_t> bytes(10000);
    for (size_t i = 0; i < bytes.size(); i++)
        bytes[i] = (uint8_t) (i * 13);
    WriteFile(logs.file("x.datalog"), bytes);
    ASSERT_EQ(0, bbs_enc_read(&req, 4, token, logs.file("x.datalog").c_str(), 1000, 5000));
    ASSERT_EQ(BBS_OK, Run());
    ASSERT_EQ(5000u, r.len);
    EXPECT_EQ(0, memcmp(r.data, bytes.data() + 1000, 5000));
    ASSERT_EQ(0, bbs_enc_read(&req, 5, token, logs.file("x.datalog").c_str(), 9000, 5000));
    EXPECT_EQ(BBS_ESHORT, Run());
}

TEST_F(Serve, ReadRefusesFilesOutsideTheLogDirectoriesAndLinksOut)
{
    WriteFile(elsewhere.file("secret"), {1, 2, 3});
    ASSERT_EQ(0, bbs_enc_read(&req, 4, token, elsewhere.file("secret").c_str(), 0, 3));
    EXPECT_EQ(BBS_EPERM, Run());
    ASSERT_EQ(0, symlink(elsewhere.file("secret").c_str(), logs.file("link").c_str()));
    ASSERT_EQ(0, bbs_enc_read(&req, 5, token, logs.file("link").c_str(), 0, 3));
    EXPECT_EQ(BBS_EPERM, Run());
    std::string dotdot = logs.path() + "/../" + elsewhere.path().substr(
        elsewhere.path().rfind('/') + 1) + "/secret";
    ASSERT_EQ(0, bbs_enc_read(&req, 6, token, dotdot.c_str(), 0, 3));
    EXPECT_EQ(BBS_EPERM, Run());
    ASSERT_EQ(0, bbs_enc_read(&req, 7, token, logs.path().c_str(), 0, 3));
    EXPECT_EQ(BBS_EPERM, Run());        // a directory
}

// A writer's synced log in the log directory, with an unsynced tail.
static std::string SyncedLog(const TempDir &dir)
{
    logfs_error err{};
    auto o = Opts(dir, "f.1.0");
    logfs_writer *w;
    EXPECT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto d = Pattern(100, 3);
    EXPECT_EQ(LOGFS_OK, logfs_writer_write(w, 0, d.data(), d.size(), &err)) << err.msg;
    EXPECT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    EXPECT_EQ(LOGFS_OK, logfs_writer_write(w, 500, d.data(), 10, &err)) << err.msg;
    EXPECT_EQ(LOGFS_OK, logfs_writer_flush(w, &err)) << err.msg;
    logfs_writer_abandon(w);
    return dir.file("f.1.0.metalog");
}

TEST_F(Serve, ExportSendsTheSealedPartAsALocalExportWould)
{
    std::string ml = SyncedLog(logs);
    void *local;
    size_t len;
    logfs_error le{};
    ASSERT_EQ(LOGFS_OK, logfs_metalog_export(ml.c_str(), 0, &local, &len, nullptr, &le)) << le.msg;
    ASSERT_EQ(0, bbs_enc_export(&req, 3, token, ml.c_str(), 0));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(len, r.total);
    ASSERT_EQ(len, r.len);
    EXPECT_EQ(0, memcmp(local, r.data, len));
    EXPECT_STREQ("", r.warning);
    EXPECT_LT(len, (size_t) FileSize(ml));      // the unsynced tail stays behind
    free(local);
    WriteFile(elsewhere.file("x.metalog"), {1, 2, 3});
    ASSERT_EQ(0, bbs_enc_export(&req, 4, token, elsewhere.file("x.metalog").c_str(), 0));
    EXPECT_EQ(BBS_EPERM, Run());
    WriteFile(logs.file("bad.metalog"), {1, 2, 3});
    ASSERT_EQ(0, bbs_enc_export(&req, 5, token, logs.file("bad.metalog").c_str(), 0));
    EXPECT_EQ(BBS_EIO, Run());
    EXPECT_NE(nullptr, strstr(r.msg, "bad.metalog")) << r.msg;
}

TEST_F(Serve, RemoveTakesAWritersLogFilesAndNothingElse)
{
    std::string ml = SyncedLog(logs), stem = ml.substr(0, ml.size() - 8);
    ASSERT_EQ(0, access((stem + ".datalog").c_str(), F_OK));
    WriteFile(elsewhere.file("g.metalog"), {1});
    ASSERT_EQ(0, bbs_enc_remove(&req, 3, token, elsewhere.file("g.metalog").c_str()));
    EXPECT_EQ(BBS_EPERM, Run());
    EXPECT_EQ(0, access(elsewhere.file("g.metalog").c_str(), F_OK));
    ASSERT_EQ(0, bbs_enc_remove(&req, 4, token, (stem + ".datalog").c_str()));
    EXPECT_EQ(BBS_EPERM, Run());                // only a metalog names a log
    ASSERT_EQ(0, bbs_enc_remove(&req, 5, token, ml.c_str()));
    ASSERT_EQ(BBS_OK, Run()) << r.msg;
    for (const char *ext : {".metalog", ".datalog", ".sealed"})
        EXPECT_NE(0, access((stem + ext).c_str(), F_OK)) << ext;
    ASSERT_EQ(0, bbs_enc_remove(&req, 6, token, ml.c_str()));
    EXPECT_EQ(BBS_OK, Run()) << r.msg;          // gone already: fine
}

TEST_F(Serve, AnAttachThatOnlyGrowsTheFileSetsTheSizeQueriesReport)
{
    ASSERT_EQ(BBS_OK, AttachAs(0, 0, 8, 0));
    std::string log = logs.file("f.bbfs.1.datalog");
    bbs_writer w{5, 1, "node0:7", log.c_str()};
    ASSERT_EQ(0, bbs_enc_attach(&req, 2, token, "/pfs/f", &w, nullptr, 0, 1 << 20, 0));
    ASSERT_EQ(BBS_OK, Run()) << r.msg;
    ASSERT_EQ(0, bbs_enc_query(&req, 3, token, "/pfs/f", 0, UINT64_MAX));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(1u, r.npieces);                   // no bytes, only a size
    EXPECT_EQ(1u << 20, r.size);
    ASSERT_EQ(0, bbs_enc_stat(&req, 4, token, "/pfs/f"));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(1u << 20, r.size);
    ASSERT_EQ(0, bbs_enc_attach(&req, 5, token, "/pfs/f", &w, nullptr, 0, 100, 0));
    ASSERT_EQ(BBS_OK, Run());
    ASSERT_EQ(0, bbs_enc_stat(&req, 6, token, "/pfs/f"));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ(1u << 20, r.size);                // the map only grows; shrinking replays
}

TEST_F(Serve, PingTellsVersionPidAndFiles)
{
    ASSERT_EQ(BBS_OK, AttachAs(0, 0, 8, 0));
    ASSERT_EQ(0, bbs_enc_ping(&req, 9, token));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_EQ((uint32_t) BBS_VERSION, r.version);
    EXPECT_EQ(1234u, r.pid);
    EXPECT_EQ(0xfeedu, r.incarnation);
    EXPECT_EQ(1u, r.nfiles);
}

TEST_F(Serve, RepliesCarryAClockNeverBehindOneAWriterAttachedWith)
{
    // A writer on a node whose clock runs an hour ahead: every reply after
    // its attach, to anyone, tells a later time (a Lamport clock).
    ASSERT_EQ(0, bbs_enc_ping(&req, 1, token));
    ASSERT_EQ(BBS_OK, Run());
    uint64_t before = r.clock;
    EXPECT_GT(before, 1700000000ull * 1000000000ull);  // real time, in ns
    clock = before + 3600ull * 1000000000ull;
    ASSERT_EQ(BBS_OK, AttachAs(0, 0, 8, 0));
    EXPECT_GE(r.clock, clock);
    ASSERT_EQ(0, bbs_enc_query(&req, 2, token, "/pfs/f", 0, 8));
    ASSERT_EQ(BBS_OK, Run());
    EXPECT_GE(r.clock, clock);
    token[0] ^= 1;              // (refusals too)
    ASSERT_EQ(0, bbs_enc_ping(&req, 3, token));
    ASSERT_EQ(BBS_ETOKEN, Run());
    EXPECT_GE(r.clock, clock);
}

} // namespace

namespace {
// DRAIN queues the files it names for the drain thread: only a server
// that has one (the daemon) does; a relative path is refused before
// anything is looked at; DRAINS lists them.
TEST_F(Serve, ADrainNeedsAServerThatDrainsAndAnAbsolutePath)
{
    ASSERT_EQ(0, bbs_enc_drain(&req, 3, token, elsewhere.file("f").c_str()));
    EXPECT_EQ(BBS_EPERM, Run());
    EXPECT_NE(nullptr, strstr(r.msg, "does not drain")) << r.msg;
    bbs_drains_conf dc{};
    char why[256];
    ASSERT_EQ(0, bbs_drains_start(&dc, &conf.drains, why, sizeof(why))) << why;
    ASSERT_EQ(0, bbs_enc_drain(&req, 4, token, "f"));
    EXPECT_EQ(BBS_EMSG, Run());
    EXPECT_NE(nullptr, strstr(r.msg, "absolute")) << r.msg;
    ASSERT_EQ(0, bbs_enc_drain(&req, 5, token, elsewhere.file("f").c_str()));
    EXPECT_EQ(BBS_OK, Run()); // (queued: nothing pending, it ends done)
    ASSERT_EQ(1u, r.ndrains);
    bbs_drain_rec d;
    bbs_reply_drains(&r, &d);
    EXPECT_STREQ(elsewhere.file("f").c_str(), d.path);
    EXPECT_EQ(3u, stats.requests[BBS_DRAIN]); // (refusals after the token are counted as asked)
    ASSERT_EQ(0, bbs_enc_drains(&req, 6, token, nullptr));
    EXPECT_EQ(BBS_OK, Run());
    EXPECT_EQ(1u, r.ndrains);
    ASSERT_EQ(0, bbs_enc_drains(&req, 7, token, "/no/such/file"));
    EXPECT_EQ(BBS_OK, Run());
    EXPECT_EQ(0u, r.ndrains);
    bbs_drains_stop(conf.drains);
    conf.drains = nullptr;
}
} // namespace
