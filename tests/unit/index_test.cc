// Read-your-writes: the writer's local index.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "helpers.h"

class Index : public ::testing::Test {
  protected:
    void SetUp() override
    {
        auto o = Opts(dir, "f");
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    }
    void TearDown() override { logfs_writer_abandon(w); }
    void Write(uint64_t off, uint64_t len)
    {
        std::vector<uint8_t> d(len, (uint8_t)off);
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, off, d.data(), len, &err));
    }
    // "[off+len:kind@epoch/dlog]" for each piece.
    std::string Look(uint64_t off, uint64_t len, uint64_t min_epoch = 0)
    {
        std::string s;
        int rc = logfs_writer_lookup(w, off, len, min_epoch,
                                     [](void *arg, const logfs_piece *p) {
                                         auto *s = static_cast<std::string *>(arg);
                                         const char *k[] = {"hole", "log", "zero"};
                                         *s += "[" + std::to_string(p->offset) + "+" + std::to_string(p->length) +
                                               ":" + k[p->kind];
                                         if (p->kind != LOGFS_PIECE_HOLE)
                                             *s += "@" + std::to_string(p->epoch);
                                         if (p->kind == LOGFS_PIECE_LOG)
                                             *s += "/" + std::to_string(p->dlog_off);
                                         *s += "]";
                                         return 0;
                                     },
                                     &s);
        EXPECT_EQ(LOGFS_OK, rc);
        return s;
    }
    TempDir dir;
    logfs_writer *w = nullptr;
    logfs_error err{};
};

TEST_F(Index, ReadYourWritesGivesDatalogOffsets)
{
    Write(100, 50);
    Write(0, 10);
    EXPECT_EQ("[0+10:log@0/50][10+90:hole][100+50:log@0/0][150+50:hole]", Look(0, 200));
}

TEST_F(Index, LaterWritesWin)
{
    Write(0, 100);
    Write(40, 20);
    EXPECT_EQ("[0+40:log@0/0][40+20:log@0/100][60+40:log@0/60]", Look(0, 100));
}

TEST_F(Index, AdjacentHolesAreReportedAsOne)
{
    Write(10, 10);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    Write(30, 10);
    // Epoch 0 bytes are holes when only epoch >= 1 counts: one hole, not three.
    EXPECT_EQ("[0+30:hole][30+10:log@1/10][40+10:hole]", Look(0, 50, 1));
}

TEST_F(Index, AnEpochNothingWasWrittenInYetIsOneHole)
{
    // (after a sync a reader asks for the new epoch's writes: none yet,
    // whatever earlier epochs hold there)
    for (uint64_t b = 0; b < 100; b++)
        Write(b * 20, 10);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    EXPECT_EQ("[0+2000:hole]", Look(0, 2000, 1));
    EXPECT_EQ("[5+3:hole]", Look(5, 3, 7));
    Write(30, 5);
    EXPECT_EQ("[0+30:hole][30+5:log@1/1000][35+15:hole]", Look(0, 50, 1));
    EXPECT_EQ("[0+50:hole]", Look(0, 50, 2));
    EXPECT_EQ("[0+10:log@0/0][10+10:hole][20+10:log@0/10][30+5:log@1/1000][35+5:hole]"
              "[40+10:log@0/20]",
              Look(0, 50, 0));
}

TEST_F(Index, PiecesCarryTheEpochThatWroteThem)
{
    Write(0, 10);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    Write(5, 10);
    EXPECT_EQ("[0+5:log@0/0][5+10:log@1/10]", Look(0, 15));
}

TEST_F(Index, ShrinkingSetSizeMakesBytesReadAsZeros)
{
    Write(0, 100);
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 30, &err));
    EXPECT_EQ("[0+30:log@0/0][30+70:zero@0]", Look(0, 100));
    Write(50, 10); // written again after the cut: visible
    EXPECT_EQ("[0+30:log@0/0][30+20:zero@0][50+10:log@0/100][60+40:zero@0]", Look(0, 100));
}

TEST_F(Index, ReadDataReturnsBytesWhetherBufferedOrFlushed)
{
    auto a = Pattern(3000, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    std::vector<uint8_t> got(1000);
    ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, 1000, got.data(), got.size(), &err));
    EXPECT_TRUE(std::equal(got.begin(), got.end(), a.begin() + 1000));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    auto b = Pattern(500, 2);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, b.data(), b.size(), &err));
    got.assign(600, 0);
    // Straddles flushed (2900..2999) and still buffered (3000..3499) bytes.
    ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, 2900, got.data(), got.size(), &err));
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + 100, a.begin() + 2900));
    EXPECT_TRUE(std::equal(got.begin() + 100, got.end(), b.begin()));
    EXPECT_EQ(LOGFS_ESHORT, logfs_writer_read_data(w, 3400, got.data(), 200, &err));
}

TEST_F(Index, LookupWithoutAnIndexIsRefused)
{
    auto o = Opts(dir, "noindex");
    o.track_index = 0;
    logfs_writer *w2;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w2, &err));
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_lookup(w2, 0, 10, 0, [](void *, const logfs_piece *) { return 0; }, nullptr));
    logfs_writer_abandon(w2);
}
