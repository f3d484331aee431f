// bbserver's ownership map: owners per byte, as the range map splits and
// merges them, with several writers and several files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "ownmap.h"

namespace {

class OwnMap : public ::testing::Test {
  protected:
    bbs_ownmap *m = bbs_own_create();
    ~OwnMap() override { bbs_own_destroy(m); }

    static bbs_writer W(uint32_t rank, uint64_t session = 1)
    {
        static std::string logs[64];
        logs[rank % 64] = "/l/f.bbfs." + std::to_string(rank) + ".datalog";
        return bbs_writer{session, rank, "n0:1", logs[rank % 64].c_str()};
    }
    void Attach(uint32_t rank, uint64_t off, uint64_t len, uint64_t pos, const char *f = "/f",
                uint64_t count = 1, uint64_t stride = 0)
    {
        bbs_writer w = W(rank);
        bbs_extent e{off, len, count, stride, pos};
        ASSERT_EQ(BBS_OK, bbs_own_attach(m, f, &w, &e, 1));
    }
    std::string Print(const char *f = "/f")
    {
        char buf[4096];
        bbs_own_print(m, f, buf, sizeof(buf));
        return buf;
    }
};

TEST_F(OwnMap, ByteOwnersAreTheWritersTableIndexes)
{
    Attach(7, 0, 8, 0);
    Attach(2, 8, 8, 100);
    EXPECT_EQ("[0-7:0@0][8-15:1@100]", Print());
    EXPECT_EQ(7u, bbs_own_writer(m, "/f", 0)->rank);
    EXPECT_EQ(2u, bbs_own_writer(m, "/f", 1)->rank);
    EXPECT_EQ(nullptr, bbs_own_writer(m, "/f", 2));
}

TEST_F(OwnMap, LaterAttachOverwritesAndCutPiecesKeepTheOldOwner)
{
    Attach(0, 0, 100, 0);
    Attach(1, 40, 10, 500);
    EXPECT_EQ("[0-39:0@0][40-49:1@500][50-99:0@50]", Print());
}

TEST_F(OwnMap, AStridedRecordAttachesEveryBlock)
{
    Attach(0, 0, 8, 0, "/f", 4, 16);
    Attach(1, 8, 8, 0, "/f", 4, 16);
    EXPECT_EQ("[0-7:0@0][8-15:1@0][16-23:0@8][24-31:1@8][32-39:0@16][40-47:1@16]"
              "[48-55:0@24][56-63:1@24]",
              Print());
}

TEST_F(OwnMap, AttachesHeldUntilAskedLandInArrivalOrderOverWhatWasAsked)
{
    Attach(0, 0, 32, 0);
    EXPECT_EQ("[0-31:0@0]", Print());           // asked: in the map
    Attach(1, 8, 4, 100, "/f", 2, 16);          // held: [8,12) and [24,28)
    Attach(2, 10, 4, 200);                      // held, over writer 1's first block
    uint64_t size = 0, nranges = 0;
    uint32_t nw = 0;
    ASSERT_EQ(BBS_OK, bbs_own_stat(m, "/f", &size, &nranges, &nw));
    EXPECT_EQ(32u, size);
    EXPECT_EQ(3u, nw);
    EXPECT_EQ("[0-7:0@0][8-9:1@100][10-13:2@200][14-23:0@14][24-27:1@104][28-31:0@28]",
              Print());
}

TEST_F(OwnMap, AHugeStridedAttachThenDropNeverExpandsIt)
{
    // 2^24 blocks: expanded, this would be 16M range-map inserts
    bbs_writer w = W(0);
    bbs_extent e{0, 8, 1ull << 24, 32, 0};
    for (int i = 0; i < 64; i++)
        ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/big", &w, &e, 1));
    EXPECT_EQ(BBS_OK, bbs_own_drop(m, "/big"));
    EXPECT_EQ(0u, bbs_own_nfiles(m));
}

TEST_F(OwnMap, AContiguousRecordSettlesAsOneRange)
{
    // stride == len: one range whatever the count (block by block, 2^40
    // inserts would never finish)
    Attach(0, 0, 8, 0, "/f", 1ull << 40, 8);
    Attach(1, 16, 8, 0);
    EXPECT_EQ("[0-15:0@0][16-23:1@0][24-8796093022207:0@24]", Print());
}

TEST_F(OwnMap, DetachForgetsOnlyTheWritersOwnBytes)
{
    Attach(0, 0, 100, 0);
    Attach(1, 40, 10, 500);
    ASSERT_EQ(BBS_OK, bbs_own_detach(m, "/f", 1, 0, 0, 1000));
    EXPECT_EQ("[40-49:1@500]", Print());
    ASSERT_EQ(BBS_OK, bbs_own_detach(m, "/f", 1, 9, 0, 1000)); // never attached
    EXPECT_EQ("[40-49:1@500]", Print());
    EXPECT_EQ(BBS_ENOFILE, bbs_own_detach(m, "/nope", 1, 0, 0, 10));
}

TEST_F(OwnMap, QueryClipsToTheRangeAndCutsAtTheLimitWithAContinuation)
{
    for (uint32_t i = 0; i < 10; i++)
        Attach(i % 2, i * 10, 10, i * 10);
    bbs_piece *p;
    uint32_t n;
    uint64_t more;
    ASSERT_EQ(BBS_OK, bbs_own_query(m, "/f", 15, 95, 3, &p, &n, &more));
    ASSERT_EQ(3u, n);
    EXPECT_EQ(15u, p[0].e.off);
    EXPECT_EQ(5u, p[0].e.len);
    EXPECT_EQ(1u, p[0].e.count);
    EXPECT_EQ(1u, p[0].writer);
    EXPECT_EQ(15u, p[0].e.pos);
    EXPECT_EQ(40u, more);
    free(p);
    ASSERT_EQ(BBS_OK, bbs_own_query(m, "/f", more, 95, 100, &p, &n, &more));
    EXPECT_EQ(6u, n);
    EXPECT_EQ(95u, p[n - 1].e.off + p[n - 1].e.len);
    EXPECT_EQ(UINT64_MAX, more);
    free(p);
    EXPECT_EQ(BBS_ENOFILE, bbs_own_query(m, "/g", 0, 1, 1, &p, &n, &more));
}

// The blocks a query's records hold, as "[start-last:writer@pos]" like Print.
static std::string Expand(const bbs_piece *p, uint32_t n)
{
    std::vector<std::pair<uint64_t, std::string>> blocks;
    for (uint32_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < p[i].e.count; k++) {
            uint64_t at = p[i].e.off + k * p[i].e.stride;
            blocks.emplace_back(at, "[" + std::to_string(at) + "-" +
                                        std::to_string(at + p[i].e.len - 1) + ":" +
                                        std::to_string(p[i].writer) + "@" +
                                        std::to_string(p[i].e.pos + k * p[i].e.len) + "]");
        }
    std::sort(blocks.begin(), blocks.end());
    std::string s;
    for (auto &b : blocks)
        s += b.second;
    return s;
}

TEST_F(OwnMap, InterleavedStridedWritesComeBackAsOneRecordPerWriter)
{
    for (uint32_t w = 0; w < 4; w++)
        Attach(w, 8 * w, 8, 1000, "/f", 1000, 32);
    bbs_piece *p;
    uint32_t n;
    uint64_t more;
    ASSERT_EQ(BBS_OK, bbs_own_query(m, "/f", 0, 32000, 1u << 20, &p, &n, &more));
    ASSERT_EQ(4u, n);
    for (uint32_t w = 0; w < 4; w++) {
        EXPECT_EQ(8u * w, p[w].e.off);
        EXPECT_EQ(8u, p[w].e.len);
        EXPECT_EQ(1000u, p[w].e.count);
        EXPECT_EQ(32u, p[w].e.stride);
        EXPECT_EQ(1000u, p[w].e.pos);
        EXPECT_EQ(w, p[w].writer);
    }
    free(p);
    // A clipped first block starts a record of its own; a cut at the
    // limit ends every record before the continuation point.
    ASSERT_EQ(BBS_OK, bbs_own_query(m, "/f", 12, 32000, 10, &p, &n, &more));
    EXPECT_EQ(5u, n);
    EXPECT_EQ("[12-15:1@1004][16-23:2@1000][24-31:3@1000][32-39:0@1008][40-47:1@1008]"
              "[48-55:2@1008][56-63:3@1008][64-71:0@1016][72-79:1@1016][80-87:2@1016]",
              Expand(p, n));
    EXPECT_EQ(88u, more);
    free(p);
}

TEST_F(OwnMap, QueryRecordsHoldExactlyTheMapsPieces)
{
    // Random overwrites of strided and contiguous writes: the records of
    // any range expand to the map's own pieces there.
    srand(7);
    uint64_t pos[6] = {0};
    for (int i = 0; i < 300; i++) {
        uint32_t w = (uint32_t) (rand() % 6);
        uint64_t len = 1 + (uint64_t) (rand() % 16), count = 1 + (uint64_t) (rand() % 20);
        uint64_t stride = len + (uint64_t) (rand() % 3) * (uint64_t) (rand() % 24);
        uint64_t off = (uint64_t) (rand() % 2000);
        Attach(w, off, len, pos[w], "/f", count, stride);
        pos[w] += count * len;
    }
    for (int q = 0; q < 50; q++) {
        uint64_t a = (uint64_t) (rand() % 2600), b = a + (uint64_t) (rand() % 800);
        bbs_piece *p;
        uint32_t n;
        uint64_t more;
        ASSERT_EQ(BBS_OK, bbs_own_query(m, "/f", a, b, 1u << 20, &p, &n, &more));
        std::string want;
        struct Want {
            uint64_t a, b;
            std::string *s;
        } arg{a, b, &want};
        bbs_own_ranges(
            m, "/f",
            [](void *x, const bbs_writer *w, uint64_t start, uint64_t end, uint64_t at) {
                auto *wa = static_cast<Want *>(x);
                (void) w;
                uint64_t lo = std::max(start, wa->a), hi = std::min(end, wa->b);
                if (lo < hi)
                    *wa->s += "[" + std::to_string(lo) + "-" + std::to_string(hi - 1) + ":" +
                              "W" + std::to_string(w->rank) + "@" +
                              std::to_string(at + (lo - start)) + "]";
                return 0;
            },
            &arg);
        std::string got = Expand(p, n);
        // Expand names writers by table index; ranges by rank: map them.
        for (uint32_t i = 0; i < 6; i++) {
            const bbs_writer *w = bbs_own_writer(m, "/f", i);
            if (!w)
                continue;
            std::string from = ":" + std::to_string(i) + "@", to = ":W" + std::to_string(w->rank) + "@";
            for (size_t at = got.find(from); at != std::string::npos; at = got.find(from, at + to.size()))
                got.replace(at, from.size(), to);
        }
        EXPECT_EQ(want, got) << "query [" << a << ", " << b << ")";
        free(p);
    }
}

TEST_F(OwnMap, StatAndDrop)
{
    Attach(0, 0, 8, 0);
    Attach(1, 1000, 8, 0);
    uint64_t size, nranges;
    uint32_t nw;
    ASSERT_EQ(BBS_OK, bbs_own_stat(m, "/f", &size, &nranges, &nw));
    EXPECT_EQ(1008u, size);
    EXPECT_EQ(2u, nranges);
    EXPECT_EQ(2u, nw);
    EXPECT_EQ(1u, bbs_own_nfiles(m));
    EXPECT_EQ(BBS_OK, bbs_own_drop(m, "/f"));
    EXPECT_EQ(BBS_ENOFILE, bbs_own_stat(m, "/f", &size, &nranges, &nw));
    EXPECT_EQ(BBS_ENOFILE, bbs_own_drop(m, "/f"));
    EXPECT_EQ(0u, bbs_own_nfiles(m));
}

TEST_F(OwnMap, ReplayedForgetsTheSessionsBytesAndKeepsTheOthers)
{
    // session 1 (replayed) and session 2 (a twin handle, still open);
    // what the last attach of each byte made stays decided by that order
    bbs_writer a = W(0, 1), b = W(1, 2);
    bbs_extent e1{0, 100, 1, 0, 0}, e2{50, 100, 1, 0, 0}, e3{120, 8, 4, 16, 200};
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &a, &e1, 1));
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &b, &e2, 1));
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &a, &e3, 1));        // over b's, later
    ASSERT_EQ(BBS_OK, bbs_own_grow(m, "/f", 4096));
    EXPECT_EQ("[0-49:0@0][50-119:1@0][120-127:0@200][128-135:1@78][136-143:0@208]"
              "[144-149:1@94][152-159:0@216][168-175:0@224]", Print());
    const uint64_t one = 1;
    ASSERT_EQ(BBS_OK, bbs_own_replayed(m, "/f", &one, 1));
    // a's bytes are in the file now; b's older ones under them must not
    // come back, b's newer ones stay
    EXPECT_EQ("[50-119:1@0][128-135:1@78][144-149:1@94]", Print());
    // the size: the end of what is left (the file itself tells the rest)
    EXPECT_EQ(150u, bbs_own_size(m, "/f"));
    // a session the map never saw changes nothing
    const uint64_t other = 9;
    ASSERT_EQ(BBS_OK, bbs_own_replayed(m, "/f", &other, 1));
    EXPECT_EQ("[50-119:1@0][128-135:1@78][144-149:1@94]", Print());
    // and when the last session goes, so does the file
    const uint64_t two = 2;
    ASSERT_EQ(BBS_OK, bbs_own_replayed(m, "/f", &two, 1));
    EXPECT_EQ(0u, bbs_own_nfiles(m));
    EXPECT_EQ(BBS_ENOFILE, bbs_own_replayed(m, "/f", &two, 1));
}

TEST_F(OwnMap, ReplayedWithNoSessionDropsTheFile)
{
    Attach(0, 0, 8, 0);
    ASSERT_EQ(BBS_OK, bbs_own_replayed(m, "/f", nullptr, 0));
    EXPECT_EQ(0u, bbs_own_nfiles(m));
}

// Every session the file knows replayed at once (a drain of its pending
// sessions): the file goes, held strided attaches with it, and a session
// not named keeps it.
TEST_F(OwnMap, ReplayedOfEverySessionDropsTheFile)
{
    bbs_writer a = W(0, 1), b = W(1, 2);
    bbs_extent e1{0, 8, 1000, 16, 0}, e2{8, 8, 1000, 16, 0};
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &a, &e1, 1));
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &b, &e2, 1));
    const uint64_t one = 1, both[2] = {2, 1};
    ASSERT_EQ(BBS_OK, bbs_own_replayed(m, "/f", &one, 1));
    EXPECT_EQ(1u, bbs_own_nfiles(m));
    EXPECT_EQ(16000u, bbs_own_size(m, "/f")); // (b's last block ends there)
    ASSERT_EQ(BBS_OK, bbs_own_replayed(m, "/f", both, 2));
    EXPECT_EQ(0u, bbs_own_nfiles(m));
}

TEST_F(OwnMap, ThousandsOfFilesAndWritersStayApart)
{
    for (int f = 0; f < 2000; f++) {
        std::string name = "/pfs/file" + std::to_string(f);
        Attach((uint32_t) (f % 7), 0, 8, (uint64_t) f, name.c_str());
    }
    EXPECT_EQ(2000u, bbs_own_nfiles(m));
    EXPECT_EQ("[0-7:0@1234]", Print("/pfs/file1234"));
    EXPECT_EQ(1234u % 7, bbs_own_writer(m, "/pfs/file1234", 0)->rank);
    for (uint32_t r = 0; r < 5000; r++) {
        bbs_writer w{(uint64_t) r / 1000, r % 1000, "n:1", "/l/x"};
        bbs_extent e{(uint64_t) r * 8, 8, 1, 0, 0};
        ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/many", &w, &e, 1));
    }
    uint64_t size, nranges;
    uint32_t nw;
    ASSERT_EQ(BBS_OK, bbs_own_stat(m, "/many", &size, &nranges, &nw));
    EXPECT_EQ(5000u, nw);
    const bbs_writer *w = bbs_own_writer(m, "/many", 4321);
    EXPECT_EQ(4u, w->session);
    EXPECT_EQ(321u, w->rank);
}

TEST_F(OwnMap, AWriterThatMovedItsLogIsUpdatedNotDuplicated)
{
    Attach(3, 0, 8, 0);
    bbs_writer w{1, 3, "n1:2", "/other/log"};
    bbs_extent e{8, 8, 1, 0, 0};
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &w, &e, 1));
    EXPECT_STREQ("/other/log", bbs_own_writer(m, "/f", 0)->datalog);
    EXPECT_STREQ("n1:2", bbs_own_writer(m, "/f", 0)->node);
    EXPECT_EQ(nullptr, bbs_own_writer(m, "/f", 1));
}

} // namespace
