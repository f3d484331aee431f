// The libpmem datalog path.  check-logfs runs every test twice, with
// PMEM_IS_PMEM_FORCE=0 and =1, so both back ends see the whole suite.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <csignal>
#include <sys/resource.h>

#include "helpers.h"

static bool ForcedPmem()
{
    const char *e = getenv("PMEM_IS_PMEM_FORCE");
    return e && !strcmp(e, "1");
}

TEST(Pmem, DatalogTakesThePmemPathExactlyWhenLibpmemSaysPmem)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    // /tmp is never real DAX here, so the answer follows the environment.
    EXPECT_EQ(ForcedPmem(), logfs_writer_is_pmem(w) != 0);
    logfs_writer_abandon(w);
}

TEST(Pmem, NeverModeUsesOrdinaryWritesEvenOnPmem)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.pmem = LOGFS_PMEM_NEVER;
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    EXPECT_FALSE(logfs_writer_is_pmem(w));
    logfs_writer_abandon(w);
}

TEST(Pmem, DatalogGrowsPastItsFirstMappingAndIsTrimmedAtClose)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.buffer_size = 64 << 10; // also the first mapping size on pmem
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    std::vector<uint8_t> all;
    for (int i = 0; i < 50; i++) {
        auto d = Pattern(10000 + i, (uint32_t)i);
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, all.size(), d.data(), d.size(), &err)) << err.msg;
        all.insert(all.end(), d.begin(), d.end());
    }
    std::vector<uint8_t> back(all.size());
    ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, 0, back.data(), back.size(), &err));
    EXPECT_EQ(all, back);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    EXPECT_EQ(all, ReadFile(dir.file("f.datalog")));
}

TEST(Pmem, SyncedDataSurvivesACrashOnEitherPath)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto d = Pattern(300000, 8);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, d.data(), d.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    logfs_writer_abandon(w);
    EXPECT_EQ(d, ReplayOne(dir));
}

// A datalog that cannot grow (a full device; here RLIMIT_FSIZE) fails the
// append that needs the room, and the process keeps going: what was
// appended before stays readable, and the next append fails cleanly too.
// On the pmem path a failed remap used to leave a NULL mapping behind with
// its old length, and the next append or read crashed.
TEST(Pmem, AFailedGrowKeepsEarlierDataAndFailsCleanlyAgain)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.buffer_size = 64 << 10;
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto small = Pattern(100 << 10, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, small.data(), small.size(), &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err)) << err.msg;

    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4 << 20;
    signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &lim));
    auto big = Pattern(16 << 20, 2);
    int rc = logfs_writer_write(w, small.size(), big.data(), big.size(), &err);
    if (rc == LOGFS_OK)
        rc = logfs_writer_flush(w, &err);
    EXPECT_NE(LOGFS_OK, rc) << "a 16 MiB append under a 4 MiB file size limit succeeded";
    std::vector<uint8_t> back(small.size());
    EXPECT_EQ(LOGFS_OK, logfs_writer_read_data(w, 0, back.data(), back.size(), &err)) << err.msg;
    EXPECT_EQ(small, back);
    int again = logfs_writer_write(w, small.size() + big.size(), big.data(), big.size(), &err);
    if (again == LOGFS_OK)
        again = logfs_writer_flush(w, &err);
    EXPECT_NE(LOGFS_OK, again);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    logfs_writer_abandon(w);
}
