// Writes that fail or stop short (logfs/fault.h).
//
// Short writes (the short actions): the kernel may move fewer
// bytes than asked, and every write logfs makes must finish the rest at the
// right offset.  Each case arms one write point with one short action,
// writes through every datalog path (buffered appends, a direct append
// with an empty buffer, a vectored one after buffered bytes), syncs, closes,
// and replays the logs: the file must be what was written, and the seal
// whole.  bbserver's state file (point state-write) is saved and loaded.
// Then a datalog close(2) that fails (point datalog-close), and durable
// logs and manifests whose directory cannot be fsynced (point dir-fsync).
// And the pause action, which fails nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>

#include "fault.h"
#include "helpers.h"
#include "ownmap.h"
#include "seal.h"
#include "sessions.h"
#include "state.h"

namespace {

// BBFS_FAULT=spec for the life of the object.
class Armed {
  public:
    explicit Armed(const std::string &spec)
    {
        setenv("BBFS_FAULT", spec.c_str(), 1);
        unsetenv("BBFS_FAULT_RANK");
        logfs_fault_rearm();
    }
    ~Armed()
    {
        unsetenv("BBFS_FAULT");
        logfs_fault_rearm();
    }
};

class ShortWrite : public ::testing::TestWithParam<std::tuple<const char *, const char *>> {};

TEST_P(ShortWrite, EveryPathFinishesTheWriteAtItsPlace)
{
    const std::string point = std::get<0>(GetParam()), action = std::get<1>(GetParam());
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.buffer_size = 16384;
    std::vector<uint8_t> want(700000, 0);
    {
        Armed a(point + ":" + action);
        logfs_writer *w;
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        auto put = [&](uint64_t off, size_t n, uint32_t seed) {
            auto b = Pattern(n, seed);
            ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, off, b.data(), b.size(), &err)) << err.msg;
            std::copy(b.begin(), b.end(), want.begin() + off);
        };
        for (uint32_t i = 0; i < 40; i++) // buffered: the buffer fills and goes out
            put(1000 * i, 1000, i + 1);
        ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
        put(50000, 300, 100);        // left in the buffer, then
        put(100000, 200000, 101);    // a vectored append: buffer and caller's bytes
        put(300000, 200000, 102);    // a direct append, the buffer empty
        put(520000, 5000, 103);
        ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
        put(600000, 100000, 104);
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    }
    EXPECT_EQ(uint64_t{40 * 1000 + 300 + 200000 + 200000 + 5000 + 100000},
              FileSize(dir.file("f.datalog")));
    logfs_seal s{};
    ASSERT_EQ(LOGFS_OK, logfs_seal_read(dir.file("f.metalog").c_str(), &s, &err)) << err.msg;
    EXPECT_EQ(LOGFS_SEAL_VALID, s.state);
    EXPECT_EQ(2, s.valid_slots); // (three seals: both slots written)
    EXPECT_TRUE(s.closed);
    EXPECT_EQ(FileSize(dir.file("f.metalog")), s.length);
    EXPECT_EQ(want, ReplayOne(dir));
}

INSTANTIATE_TEST_SUITE_P(
    Points, ShortWrite,
    ::testing::Combine(::testing::Values("datalog-write", "metalog-write", "seal-write"),
                       ::testing::Values("short", "short1", "short-1")),
    [](const auto &info) {
        std::string s = std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
        for (auto &c : s)
            if (c == '-')
                c = '_';
        return s;
    });

bbs_ownmap *OneMap(void *arg, const char *)
{
    return static_cast<bbs_ownmap *>(arg);
}

TEST(ShortWrite, BbsStateSavesWholeUnderShortWrites)
{
    for (const char *action : {"short", "short1", "short-1"}) {
        TempDir d;
        bbs_ownmap *m = bbs_own_create();
        for (uint64_t i = 0; i < 10000; i++) { // several saved batches
            bbs_writer w{7, (uint32_t) (i % 3), "n0:1", "/l/f.bbfs.datalog"};
            bbs_extent e{i * 16, 8, 1, 0, i * 8};
            ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &w, &e, 1));
        }
        char err[512], a[4096], b[4096];
        {
            Armed armed(std::string("state-write:") + action);
            ASSERT_EQ(0, bbs_state_save(d.file("state").c_str(), &m, 1, 3, err, sizeof(err)))
                << err;
        }
        bbs_ownmap *n = bbs_own_create();
        uint64_t files = 0, incarnation = 0;
        ASSERT_EQ(0, bbs_state_load(d.file("state").c_str(), OneMap, n, &files, &incarnation,
                                    err, sizeof(err)))
            << action << ": " << err;
        EXPECT_EQ(1u, files);
        bbs_own_print(m, "/f", a, sizeof(a));
        bbs_own_print(n, "/f", b, sizeof(b));
        EXPECT_STREQ(a, b) << action;
        bbs_own_destroy(m);
        bbs_own_destroy(n);
    }
}


// A datalog whose close(2) fails (a network file system reports a failed
// write-back there) fails the writer's close: its result was dropped.
TEST(DatalogClose, AFailureFailsTheWritersClose)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto b = Pattern(1000, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, b.data(), b.size(), &err)) << err.msg;
    Armed a("datalog-close:EIO");
    EXPECT_EQ(LOGFS_EIO, logfs_writer_close(w, &err));
    EXPECT_NE(nullptr, strstr(err.msg, "cannot close datalog")) << err.msg;
}


// With durable logs, the names of the logs and of the manifest must
// survive a crash too: their directories are fsynced, and a failure says so.
TEST(DurableDirectories, TheLogDirectoryIsFsyncedAtOpen)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.durable = 1;
    logfs_writer *w = nullptr;
    {
        Armed a("dir-fsync:EIO");
        EXPECT_EQ(LOGFS_EIO, logfs_writer_open(&o, &w, &err));
        EXPECT_NE(nullptr, strstr(err.msg, "cannot fsync the log directory")) << err.msg;
        o.durable = 0; // not durable: no fsync, so the fault is not reached
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        logfs_writer_abandon(w);
    }
}

TEST(DurableDirectories, TheManifestDirectoryIsFsyncedWhenPublished)
{
    TempDir dir;
    logfs_error err{};
    logfs_session s;
    std::string file = dir.file("out.dat");
    const char text[] = "x\n";
    Armed a("dir-fsync:EIO");
    EXPECT_EQ(LOGFS_EIO, logfs_session_create(file.c_str(), 7, text, 2, 1, &s, &err));
    EXPECT_NE(nullptr, strstr(err.msg, "cannot fsync the manifest directory")) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_session_create(file.c_str(), 8, text, 2, 0, &s, &err)) << err.msg;
    logfs_session_remove(&s);
}

} // namespace

// The pause action (a race made certain in the MPI tests: t_close_held):
// half a second at the point, then on with no error; with ":once", only
// the first pass.
TEST(FaultPause, SleepsThenGoesOnWithoutAnError)
{
    Armed a("some-point:pause:once");
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(0, logfs_fault("other-point"));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
    EXPECT_EQ(0, logfs_fault("some-point"));
    auto paused = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(paused, std::chrono::milliseconds(490));
    EXPECT_EQ(0, logfs_fault("some-point"));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, paused + std::chrono::milliseconds(100));
}
