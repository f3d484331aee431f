// bbserver's drain thread (bbserver/drains.h): a request is answered at
// once, the file becomes canonical behind it, a held session is tried
// again, a failure says why and keeps the logs, and the journal carries
// unfinished drains across a restart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "drain_fixture.h"
#include "drains.h"

class Drains : public DrainFile {
  protected:
    void TearDown() override
    {
        bbs_drains_stop(d);
        DrainFile::TearDown();
    }
    void Start(double rate = 0)
    {
        bbs_drains_conf c{};
        c.journal = journal.empty() ? nullptr : journal.c_str();
        c.rate = rate;
        char why[256];
        ASSERT_EQ(0, bbs_drains_start(&c, &d, why, sizeof(why))) << why;
    }
    void Stop()
    {
        bbs_drains_stop(d);
        d = nullptr;
    }
    // Where File()'s drain stands now.
    bbs_drain_info Info()
    {
        bbs_drain_info *v = nullptr;
        size_t n = 0;
        bbs_drain_info i{};
        EXPECT_EQ(0, bbs_drains_list(d, File().c_str(), &v, &n));
        if (n == 1) {
            i = v[0];
            v[0].path = v[0].error = nullptr;
        }
        bbs_drains_info_free(v, n);
        return i;
    }
    // Poll until File()'s drain is in state @p want (or 10 s passed).
    bbs_drain_info WaitFor(int want)
    {
        for (int k = 0; k < 2000; k++) {
            bbs_drain_info i = Info();
            if (i.state == want)
                return i;
            bbs_drain_info_clear(&i);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        ADD_FAILURE() << "the drain never became " << bbs_drain_state_name(want);
        return Info();
    }
    std::string Journal()
    {
        std::ifstream f(journal);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }
    // 2 writers' interleaved pieces as a pending session of File().
    std::vector<uint8_t> PendingFile(uint64_t id, uint64_t pieces = 200)
    {
        Writers(2, false, id);
        for (uint64_t i = 0; i < pieces; i++)
            Write(i % 2, i * 10, 10, 3);
        CloseAll();
        Pending(id, 2, 1);
        Build();
        auto want = Applied();
        WriteFile(File(), {});
        return want;
    }
    bbs_drains *d = nullptr;
    std::string journal;
};

TEST_F(Drains, ARequestIsAnsweredAtOnceAndTheFileBecomesCanonical)
{
    auto want = PendingFile(21);
    Start();
    bbs_drain_info now{};
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), &now));
    EXPECT_TRUE(now.state == BBS_DRAIN_QUEUED || now.state == BBS_DRAIN_RUNNING)
        << bbs_drain_state_name(now.state);
    bbs_drain_info_clear(&now);
    bbs_drain_info i = WaitFor(BBS_DRAIN_DONE);
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ(2000u, i.done);
    EXPECT_EQ(1u, i.epochs);
    EXPECT_EQ(1u, i.tries);
    EXPECT_STREQ("", i.error);
    bbs_drain_info_clear(&i);
    EXPECT_EQ(0u, Manifests());
    EXPECT_FALSE(LogsLeft());
    EXPECT_EQ(0u, bbs_drains_unfinished(d));
}

// A handle of the file is open: the drain waits, says who holds it, and
// runs once the holder let go.
TEST_F(Drains, AHeldSessionIsTriedAgainUntilItsHolderLetsGo)
{
    auto want = PendingFile(22);
    logfs_session live{-1, nullptr};
    const std::string text = "bbfs-manifest 2\n";
    ASSERT_EQ(LOGFS_OK, logfs_session_create(File().c_str(), 23, text.data(), text.size(), 0,
                                             &live, &err));
    Start();
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), nullptr));
    bbs_drain_info i = WaitFor(BBS_DRAIN_HELD);
    EXPECT_NE(nullptr, strstr(i.error, "is open")) << i.error;
    bbs_drain_info_clear(&i);
    EXPECT_EQ(1u, bbs_drains_unfinished(d));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    i = Info();
    EXPECT_GT(i.tries, 2u);     // (10, 20, 40 ms, ...)
    bbs_drain_info_clear(&i);
    logfs_session_remove(&live);
    i = WaitFor(BBS_DRAIN_DONE);
    bbs_drain_info_clear(&i);
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ(0u, Manifests());
}

// A drain that cannot be done (a log short of what its manifest promises)
// fails naming what to run, and keeps the logs.
TEST_F(Drains, AFailedDrainSaysWhyAndKeepsTheLogs)
{
    Writers(1, false, 24);
    Write(0, 0, 100, 1);
    CloseAll();
    Pending(24, 1, 3);
    WriteFile(File(), {});
    Start();
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), nullptr));
    bbs_drain_info i = WaitFor(BBS_DRAIN_FAILED);
    EXPECT_NE(nullptr, strstr(i.error, "bbfs-replay")) << i.error;
    EXPECT_NE(nullptr, strstr(i.error, "epoch")) << i.error;
    bbs_drain_info_clear(&i);
    EXPECT_EQ(1u, Manifests());
    EXPECT_TRUE(LogsLeft());
    EXPECT_EQ(0u, bbs_drains_unfinished(d));
}

// Asked again while it runs (a later close's session): it runs again
// when it ends, and is one drain in the list.
TEST_F(Drains, AskedWhileRunningItRunsAgain)
{
    auto want = PendingFile(25, 20000);     // 200000 bytes at 1 MB/s: 0.2 s
    Start(1e6);
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), nullptr));
    bbs_drain_info running = WaitFor(BBS_DRAIN_RUNNING);
    bbs_drain_info_clear(&running);
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), nullptr));
    bbs_drain_info i = WaitFor(BBS_DRAIN_DONE);
    EXPECT_EQ(2u, i.tries);
    bbs_drain_info_clear(&i);
    EXPECT_EQ(want, ReadFile(File()));
    bbs_drain_info *v;
    size_t n;
    ASSERT_EQ(0, bbs_drains_list(d, nullptr, &v, &n));
    EXPECT_EQ(1u, n);
    bbs_drains_info_free(v, n);
}

// Stopped in the middle (the server's SIGTERM), the drain stays in the
// journal with its logs; a server started with the journal finishes it,
// and the journal empties.
TEST_F(Drains, TheJournalCarriesADrainAcrossARestart)
{
    journal = dir.file("journal");
    auto want = PendingFile(26, 40000);     // 400000 bytes at 1 MB/s
    Start(1e6);
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), nullptr));
    EXPECT_EQ(File() + "\n", Journal());
    bbs_drain_info running = WaitFor(BBS_DRAIN_RUNNING);
    bbs_drain_info_clear(&running);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Stop();
    EXPECT_EQ(File() + "\n", Journal());
    EXPECT_EQ(1u, Manifests());
    EXPECT_TRUE(LogsLeft());
    Start();
    bbs_drain_info i = WaitFor(BBS_DRAIN_DONE);
    bbs_drain_info_clear(&i);
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ("", Journal());
    EXPECT_EQ(0u, Manifests());
}

// The rate keeps a drain to its bytes per second (the application's share
// of a node's cores and disks, docs/drain.md).
TEST_F(Drains, TheRateLimitsHowFastItDrains)
{
    auto want = PendingFile(27, 30000);     // 300000 bytes at 2 MB/s: 0.15 s
    Start(2e6);
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(0, bbs_drains_submit(d, File().c_str(), nullptr));
    bbs_drain_info i = WaitFor(BBS_DRAIN_DONE);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bbs_drain_info_clear(&i);
    EXPECT_GE(took, 0.12);
    EXPECT_EQ(want, ReadFile(File()));
}
