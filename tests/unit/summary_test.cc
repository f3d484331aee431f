// What a log's records touch (logfs/summary.h), and a plan of one writer's
// log alone (logfs_plan_opts.one_writer): the two halves of a close where
// each process replays its own log.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "helpers.h"
#include "summary.h"

static logfs_summary Sum(std::initializer_list<std::vector<int64_t>> runs)
{
    logfs_summary s{};
    for (auto &r : runs)
        logfs_summary_note_run(&s, (uint64_t)r[0], (uint64_t)r[1], r[2], (uint64_t)r[3]);
    return s;
}

TEST(Summary, SequentialCallsAreOnePieceAndJumpsMore)
{
    logfs_summary s = Sum({{4096, 100, 0, 1}, {4196, 100, 0, 1}, {4296, 4, 4, 10}});
    EXPECT_EQ(4096u, s.lo);
    EXPECT_EQ(4336u, s.hi);
    EXPECT_EQ(1u, s.pieces);
    EXPECT_EQ(12u, s.blocks);
    logfs_summary_note_run(&s, 0, 8, 0, 1); // back before the start: a piece
    logfs_summary_note_run(&s, 9000, 8, 16, 5); // strided with gaps: 5 pieces
    EXPECT_EQ(0u, s.lo);
    EXPECT_EQ(9000u + 4 * 16 + 8, s.hi);
    EXPECT_EQ(7u, s.pieces);
}

TEST(Summary, NegativeStrideCoversFromItsLastBlock)
{
    logfs_summary s = Sum({{1000, 10, -100, 4}});
    EXPECT_EQ(700u, s.lo);
    EXPECT_EQ(1010u, s.hi);
    EXPECT_EQ(4u, s.pieces);
}

TEST(Summary, PackedAndUnpackedKeepsWhatTheCheckNeeds)
{
    logfs_summary s = Sum({{10, 5, 20, 3}}), t{};
    logfs_summary_note_size(&s);
    uint64_t w[LOGFS_SUMMARY_WORDS];
    logfs_summary_pack(&s, w);
    logfs_summary_unpack(w, &t);
    EXPECT_EQ(s.lo, t.lo);
    EXPECT_EQ(s.hi, t.hi);
    EXPECT_EQ(s.pieces, t.pieces);
    EXPECT_EQ(1, t.resized);
    EXPECT_GT(t.blocks, 0u);
    logfs_summary none{};
    logfs_summary_pack(&none, w);
    logfs_summary_unpack(w, &t);
    EXPECT_EQ(0u, t.blocks);
}

TEST(Summary, ApartOnlyWhenNoByteIsTwoLogs)
{
    std::vector<logfs_summary> s = {Sum({{8192, 4096, 0, 1}}), Sum({{0, 4096, 0, 1}}),
                                    logfs_summary{}, Sum({{4096, 4096, 0, 1}})};
    EXPECT_TRUE(logfs_summaries_apart(s.data(), s.size(), 64)); // touching ranges, an empty log
    s[2] = Sum({{12287, 1, 0, 1}}); // one byte inside another's range
    EXPECT_FALSE(logfs_summaries_apart(s.data(), s.size(), 64));
    // interleaved pieces: no byte shared, but the ranges overlap (conservative)
    std::vector<logfs_summary> il = {Sum({{0, 8, 16, 4}}), Sum({{8, 8, 16, 4}})};
    EXPECT_FALSE(logfs_summaries_apart(il.data(), il.size(), 64));
    EXPECT_TRUE(logfs_summaries_apart(il.data(), 1, 64));
}

TEST(Summary, ASizeChangeOrTooManyPiecesRulesItOut)
{
    std::vector<logfs_summary> s = {Sum({{0, 4096, 0, 1}}), Sum({{4096, 1, 2, 40}})};
    EXPECT_TRUE(logfs_summaries_apart(s.data(), s.size(), 40));
    EXPECT_FALSE(logfs_summaries_apart(s.data(), s.size(), 39));
    logfs_summary_note_size(&s[0]);
    EXPECT_FALSE(logfs_summaries_apart(s.data(), s.size(), 64));
    logfs_summary only_size{};
    logfs_summary_note_size(&only_size); // a set_size with no write
    EXPECT_FALSE(logfs_summaries_apart(&only_size, 1, 64));
}

TEST(Summary, TheWriterSummarizesEveryCallAndSetSize)
{
    TempDir dir;
    logfs_writer_opts o = Opts(dir, "f");
    logfs_writer *w = nullptr;
    logfs_error err{};
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    std::vector<uint8_t> data = Pattern(400, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 1000, data.data(), 100, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 1100, data.data(), 100, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(w, 5000, 10, 100, 20, data.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    const logfs_summary *s = logfs_writer_summary(w);
    EXPECT_EQ(1000u, s->lo);
    EXPECT_EQ(5000u + 19 * 100 + 10, s->hi);
    EXPECT_EQ(21u, s->pieces);
    EXPECT_EQ(0, s->resized);
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 100, &err));
    EXPECT_EQ(1, logfs_writer_summary(w)->resized);
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
}

// Writer 2 of a session of 3 planned alone gives the pieces of its bytes
// that the plan of all three gives; without one_writer the planner
// refuses a metalog that is not the whole session.
TEST(Summary, OneWritersLogPlansAloneAsInTheWholeSession)
{
    TempDir dir;
    std::vector<std::string> metas;
    for (uint32_t r = 0; r < 3; r++) {
        std::string name = "s" + std::to_string(r);
        logfs_writer_opts o = Opts(dir, name, r, 3);
        logfs_writer *w = nullptr;
        logfs_error err{};
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        std::vector<uint8_t> a = Pattern(4096, 10 + r), b = Pattern(512, 20 + r);
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, r * 4096, a.data(), a.size(), &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, r * 4096 + 1000, b.data(), b.size(), &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
        metas.push_back(dir.file(name + ".metalog"));
    }
    std::vector<const char *> all;
    for (auto &m : metas)
        all.push_back(m.c_str());
    logfs_plan *whole = nullptr, *alone = nullptr;
    logfs_error err{};
    ASSERT_EQ(LOGFS_OK, logfs_plan_build(all.data(), all.size(), nullptr, &whole, &err)) << err.msg;
    logfs_plan_opts one{0, 0, nullptr, 1}, plain{0, 0, nullptr, 0};
    const char *mine = metas[2].c_str();
    EXPECT_EQ(LOGFS_EMISMATCH, logfs_plan_build(&mine, 1, &plain, &alone, &err));
    ASSERT_EQ(LOGFS_OK, logfs_plan_build(&mine, 1, &one, &alone, &err)) << err.msg;
    EXPECT_EQ(1u, logfs_plan_nwriters(alone));
    EXPECT_EQ(logfs_plan_nepochs(whole), logfs_plan_nepochs(alone));
    ASSERT_EQ(0, ApplyPlan(whole, dir.file("whole"), 2));
    ASSERT_EQ(0, ApplyPlan(alone, dir.file("alone"), 1));
    std::vector<uint8_t> w = ReadFile(dir.file("whole")), a = ReadFile(dir.file("alone"));
    ASSERT_EQ(3u * 4096, w.size());
    ASSERT_EQ(3u * 4096, a.size());
    EXPECT_TRUE(std::equal(w.begin() + 2 * 4096, w.end(), a.begin() + 2 * 4096));
    EXPECT_EQ(std::vector<uint8_t>(2 * 4096, 0), std::vector<uint8_t>(a.begin(), a.begin() + 2 * 4096));
    logfs_plan_free(whole);
    logfs_plan_free(alone);
}
