// Plans of several sessions (handles open on one file at the same time):
// writes land in the order they were made, by the STAMP clock across
// sessions and by epochs and collective calls within one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "helpers.h"

class PlanSessions : public ::testing::Test {
  protected:
    // A new session of n writers (writer r run by process procs[r], 0 if
    // not given); returns its index.
    size_t Session(uint32_t n, const std::vector<uint64_t> &procs = {})
    {
        size_t s = sessions.size();
        sessions.emplace_back();
        for (uint32_t r = 0; r < n; r++) {
            std::string name = "s" + std::to_string(s) + "w" + std::to_string(r);
            auto o = Opts(dir, name, r, n, 100 + s);
            o.process = r < procs.size() ? procs[r] : 0;
            logfs_writer *w = nullptr;
            EXPECT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
            sessions[s].push_back({w, dir.file(name + ".metalog")});
        }
        return s;
    }
    logfs_writer *W(size_t s, uint32_t r) { return sessions[s][r].w; }
    void Stamp(size_t s, uint32_t r, uint64_t clock)
    {
        ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(W(s, r), clock, &err)) << err.msg;
    }
    void Put(size_t s, uint32_t r, uint64_t off, const std::string &text)
    {
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(W(s, r), off, text.data(), text.size(), &err)) << err.msg;
    }
    void CloseAll()
    {
        for (auto &s : sessions)
            for (auto &w : s) {
                ASSERT_EQ(LOGFS_OK, logfs_writer_close(w.w, &err)) << err.msg;
                w.w = nullptr;
            }
    }
    // Plan the sessions in the given order and replay with m replayers.
    std::string Replay(const std::vector<size_t> &order, uint32_t m = 2)
    {
        std::vector<const char *> paths;
        std::vector<size_t> counts;
        for (size_t s : order) {
            counts.push_back(sessions[s].size());
            for (auto &w : sessions[s])
                paths.push_back(w.metalog.c_str());
        }
        logfs_plan *p = nullptr;
        EXPECT_EQ(LOGFS_OK, logfs_plan_build_sessions(paths.data(), counts.data(), counts.size(),
                                                      nullptr, &p, &err))
            << err.msg;
        if (!p)
            return "";
        std::string out = dir.file("out" + std::to_string(nout++));
        EXPECT_EQ(LOGFS_OK, ApplyPlan(p, out, m));
        logfs_plan_free(p);
        auto b = ReadFile(out);
        return std::string(b.begin(), b.end());
    }
    void TearDown() override
    {
        for (auto &s : sessions)
            for (auto &w : s)
                if (w.w)
                    logfs_writer_abandon(w.w);
    }
    struct Writer {
        logfs_writer *w;
        std::string metalog;
    };
    TempDir dir;
    logfs_error err{};
    std::vector<std::vector<Writer>> sessions;
    int nout = 0;
};

// PnetCDF: one process writes through its collective handle, then its
// independent one, then the collective one again, with no sync between.
TEST_F(PlanSessions, AProcessSwitchingHandlesKeepsItsProgramOrder)
{
    size_t a = Session(1), b = Session(1);
    Stamp(a, 0, 10);
    Put(a, 0, 0, "aaaa");
    Stamp(b, 0, 20);
    Put(b, 0, 0, "bbb");
    Stamp(a, 0, 30);
    Put(a, 0, 1, "c");
    CloseAll();
    EXPECT_EQ("bcba", Replay({a, b}));
    EXPECT_EQ("bcba", Replay({b, a}));
}

// The close order of the handles (the order of the sessions) must not
// decide: the later write wins whichever session is listed last.
TEST_F(PlanSessions, TheLaterWriteWinsWhateverTheSessionOrder)
{
    size_t a = Session(2), b = Session(1);
    Stamp(a, 0, 100);
    Stamp(a, 1, 101);
    Put(a, 0, 0, "OLD");
    Put(a, 1, 8, "one");
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(W(a, 0), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(W(a, 1), &err));
    // sync, barrier, sync: the other handle's writes come after
    Stamp(b, 0, 200);
    Put(b, 0, 0, "NEW");
    // and a later epoch of the first handle wins over them again
    Stamp(a, 1, 300);
    Put(a, 1, 1, "x");
    CloseAll();
    std::string want = std::string("NxW") + std::string(5, '\0') + "one";
    EXPECT_EQ(want, Replay({a, b}));
    EXPECT_EQ(want, Replay({b, a}, 3));
}

// Within one session the plan of that session alone holds: a write made
// after a collective call wins over an earlier one of another writer even
// if that writer's clock says later.
TEST_F(PlanSessions, CollectiveCallsStillOrderWritesWithinASession)
{
    size_t a = Session(2), b = Session(1);
    Stamp(a, 1, 500); // writer 1's clock runs ahead
    Put(a, 1, 0, "0000");
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(W(a, 0), 2, &err));
    Stamp(a, 0, 100);
    Put(a, 0, 0, "11");
    Stamp(b, 0, 50);
    Put(b, 0, 10, "b");
    CloseAll();
    std::string want = std::string("1100") + std::string(6, '\0') + "b";
    EXPECT_EQ(want, Replay({a, b}));
    EXPECT_EQ(want, Replay({b, a}));
}

// Later epochs of a session are later even where its writers' clocks are
// behind another session's (e.g. logs without STAMPs, from an older bbfs).
TEST_F(PlanSessions, EpochsOfASessionStayInOrder)
{
    size_t a = Session(1), b = Session(1);
    Put(a, 0, 0, "first");
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(W(a, 0), &err));
    Put(a, 0, 0, "SEC");
    Stamp(b, 0, 1000);
    Put(b, 0, 6, "b");
    CloseAll();
    EXPECT_EQ(std::string("SECst\0b", 7), Replay({a, b}));
}

// A grow logged in one session sets the size of the merged replay.
TEST_F(PlanSessions, LoggedGrowsOfEverySessionApply)
{
    size_t a = Session(1), b = Session(1);
    Stamp(a, 0, 10);
    Put(a, 0, 0, "aa");
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(W(a, 0), 64, &err));
    Stamp(b, 0, 20);
    Put(b, 0, 4, "bb");
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(W(b, 0), 32, &err));
    CloseAll();
    std::string got = Replay({a, b});
    ASSERT_EQ(64u, got.size());
    EXPECT_EQ(std::string("aa\0\0bb", 6), got.substr(0, 6));
}

TEST_F(PlanSessions, OneSessionIsAPlainPlan)
{
    size_t a = Session(2);
    Put(a, 0, 0, "zz");
    Put(a, 1, 1, "y");
    CloseAll();
    EXPECT_EQ("zy", Replay({a}));
}

TEST_F(PlanSessions, MetalogsThatDoNotFitTheirSessionAreRejected)
{
    size_t a = Session(2), b = Session(1);
    CloseAll();
    // session a's second metalog given as session b's
    std::vector<const char *> paths = {sessions[a][0].metalog.c_str(), sessions[b][0].metalog.c_str(),
                                       sessions[a][1].metalog.c_str()};
    std::vector<size_t> counts = {2, 1};
    logfs_plan *p = nullptr;
    EXPECT_EQ(LOGFS_EMISMATCH,
              logfs_plan_build_sessions(paths.data(), counts.data(), 2, nullptr, &p, &err));
    EXPECT_EQ(nullptr, p);
}

TEST(WriterStamp, StampsAreLoggedOnceBeforeTheWriteTheyMarkAndNeverGoBack)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "w");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(w, 7, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(w, 9, &err)); // only the last one before a write
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, "x", 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 1, "y", 1, &err)); // no new stamp
    EXPECT_EQ(LOGFS_EINVAL, logfs_writer_stamp(w, 8, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    auto r = ReadAll(dir.file("w.metalog"));
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    std::vector<int> types;
    for (auto &rec : r.records)
        types.push_back(rec.type);
    EXPECT_EQ((std::vector<int>{LOGFS_REC_STAMP, LOGFS_REC_WRITE, LOGFS_REC_WRITE, LOGFS_REC_CLOSE}), types);
    EXPECT_EQ(9u, r.records[0].u.stamp.clock);
}

static int later_calls;

static uint64_t LaterClock(void *arg)
{
    later_calls++;
    return *(uint64_t *)arg;
}

// A stamp whose clock comes later (a causal release's attach gives it): its
// record goes before the writes it marks, and reaches the metalog with the
// clock filled in; whatever writes it out first asks the clock function,
// and a stamp given meanwhile fills it with its own clock.
TEST(WriterStamp, AStampLaterIsWrittenWithTheClockItGetsLater)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "w");
    logfs_writer *w;
    uint64_t asked = 100;
    later_calls = 0;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(w, 5, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, "a", 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));

    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp_later(w, LaterClock, &asked, &err));
    EXPECT_TRUE(logfs_writer_stamp_pending(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 1, "b", 1, &err));
    uint64_t before = FileSize(dir.file("w.metalog"));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush_data(w, &err));
    EXPECT_EQ(before, FileSize(dir.file("w.metalog"))); // the records wait
    EXPECT_EQ(2u, logfs_writer_datalog_length(w));      // the data does not
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp_fill(w, 50, &err));
    EXPECT_FALSE(logfs_writer_stamp_pending(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));

    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp_later(w, LaterClock, &asked, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 2, "c", 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err)); // no fill: asks
    EXPECT_EQ(1, later_calls);

    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp_later(w, LaterClock, &asked, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 3, "d", 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(w, 200, &err)); // fills it with 200
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 4, "e", 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    EXPECT_EQ(1, later_calls);

    auto r = ReadAll(dir.file("w.metalog"));
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    std::vector<uint64_t> clocks;
    for (auto &rec : r.records)
        if (rec.type == LOGFS_REC_STAMP)
            clocks.push_back(rec.u.stamp.clock);
    EXPECT_EQ((std::vector<uint64_t>{5, 50, 100, 200}), clocks);
}

TEST(ReaderStamp, AStampGoingBackwardsIsCorrupt)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "w");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));
    logfs_writer_abandon(w);
    auto log = ReadFile(dir.file("w.metalog"));
    std::vector<uint8_t> p;
    p.push_back(50);
    AppendRecord(log, LOGFS_REC_STAMP, p);
    p[0] = 40;
    AppendRecord(log, LOGFS_REC_STAMP, p);
    auto r = ReadAllMem(log);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_NE(std::string::npos, std::string(r.err.msg).find("STAMP record going backwards")) << r.err.msg;
}

// Under posix consistency every write is stamped: within one group of one
// session the later write wins, not the higher rank (a POSIX file's order;
// HDF5 overwrites another process's bytes after a barrier).
TEST_F(PlanSessions, WithinOneSessionTheLaterStampWinsOverTheHigherRank)
{
    size_t a = Session(3);
    Stamp(a, 2, 10);
    Put(a, 2, 0, "FFFFFFFF");
    Stamp(a, 0, 20);
    Put(a, 0, 0, "DDDD");
    Stamp(a, 1, 30);
    Put(a, 1, 0, "q");
    Stamp(a, 2, 40);
    Put(a, 2, 7, "z");
    CloseAll();
    EXPECT_EQ("qDDDFFFz", Replay({a}));
}

// A process that lags behind in collective calls moves the next group of
// its session later (here, to after its clock 20); another process's write
// made through that session after a collective call (clock 5) then comes
// after that process's next write through its second handle (clock 10) by
// the session rule alone.  The process rule keeps that process's program
// order: its second handle's write stays the later one.
TEST_F(PlanSessions, AProcessKeepsItsOrderWhenALaggingOneMovesItsGroup)
{
    size_t a = Session(2, {1001, 1002}), b = Session(1, {1001});
    Stamp(a, 0, 5);
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(W(a, 0), 2, &err));
    Put(a, 0, 0, "x");
    Stamp(b, 0, 10);
    Put(b, 0, 0, "y");
    Stamp(a, 1, 20);
    Put(a, 1, 4, "z");
    CloseAll();
    EXPECT_EQ(std::string("y\0\0\0z", 5), Replay({a, b}));
    EXPECT_EQ(std::string("y\0\0\0z", 5), Replay({b, a}));
}

TEST(ReaderStamp, AStampCarriesItsProcessWhenGiven)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "w");
    o.process = 0xfeedULL;
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(w, 3, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, "x", 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    auto r = ReadAll(dir.file("w.metalog"));
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    ASSERT_EQ(LOGFS_REC_STAMP, r.records[0].type);
    EXPECT_EQ(3u, r.records[0].u.stamp.clock);
    EXPECT_EQ(0xfeedu, r.records[0].u.stamp.process);
}

// Two jobs (two-jobs.sh): a hole of one byte between one session's last
// piece and another's first must stay a hole.
TEST_F(PlanSessions, AOneByteHoleBetweenSessionsStaysAHole)
{
    size_t a = Session(2, {1, 2}), b = Session(3, {3, 4, 5});
    Stamp(a, 0, 10);
    Stamp(a, 1, 11);
    Put(a, 0, 0, std::string(8192, 'a'));
    Put(a, 1, 8192, std::string(8192, 'a'));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(W(a, 0), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(W(a, 1), &err));
    Stamp(b, 0, 20);
    Stamp(b, 1, 21);
    Stamp(b, 2, 22);
    Put(b, 0, 16384, std::string(5461, 'b'));
    Put(b, 1, 21845, std::string(5461, 'b'));
    Put(b, 2, 27306, std::string(5461, 'b'));
    Stamp(a, 0, 30);
    Stamp(a, 1, 31);
    Put(a, 0, 32768, std::string(8192, 'c'));
    Put(a, 0, 16384, std::string(8192, 'c'));
    Put(a, 1, 40960, std::string(8192, 'c'));
    CloseAll();
    std::string got = Replay({b, a}, 1);
    ASSERT_EQ(49152u, got.size());
    EXPECT_EQ('b', got[32766]);
    EXPECT_EQ('\0', got[32767]);
    EXPECT_EQ('c', got[32768]);
    EXPECT_EQ(std::string(8192, 'c'), got.substr(16384, 8192));
}
