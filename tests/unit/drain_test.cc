// A replay plan applied with POSIX calls by one process (logfs/drain.h):
// the file equals the plan applied piece by piece (ApplyPlan), whatever the
// window and gaps, and small interleaved pieces become few writes.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <cstring>
#include <string>
#include <vector>

#include "drain_fixture.h"

// IOR -c -t 8 on 4 processes: every 8-byte block another writer's.  The
// drain writes the epoch in one call; piece by piece it took 16384.
TEST_F(Drain, InterleavedSmallPiecesBecomeOneWrite)
{
    Writers(4);
    for (uint64_t i = 0; i < 4096; i++)
        for (uint32_t r = 0; r < 4; r++)
            Write(r, (i * 4 + r) * 8, 8, 1);
    CloseAll();
    Build();
    logfs_drain_opts o{};
    auto got = Drained(o);
    EXPECT_EQ(model, got);
    EXPECT_EQ(Applied(), got);
    EXPECT_EQ(1u, st.writes);
    EXPECT_EQ(4096u * 4 * 8, st.bytes);
    EXPECT_EQ(0u, st.gap_bytes);
}

// Pieces with holes between them: the holes keep the file's bytes (read
// and written back with their neighbours), past its end they read as
// zeros; without gap filling, every hole splits a write.
TEST_F(Drain, GapsKeepTheFilesOwnBytes)
{
    Writers(2);
    for (uint64_t i = 0; i < 100; i++)
        Write(i % 2, i * 100, 10, 2);
    CloseAll();
    Build();
    auto before = Pattern(5000, 9); // the file ends inside the pieces' span
    logfs_drain_opts o{};
    auto got = Drained(o, before);
    EXPECT_EQ(Applied(before), got);
    EXPECT_EQ(1u, st.writes);
    EXPECT_EQ(9910u - 1000u, st.gap_bytes);
    o.no_gaps = 1;
    EXPECT_EQ(got, Drained(o, before, "split"));
    EXPECT_EQ(100u, st.writes);
    EXPECT_EQ(0u, st.gap_bytes);
    o.no_gaps = 0;
    o.max_gap = 89; // (the holes are 90 bytes)
    EXPECT_EQ(got, Drained(o, before, "apart"));
    EXPECT_EQ(100u, st.writes);
}

// Epochs in order, a shrinking and a growing SETSIZE, overlaps decided by
// the plan: windows of a few bytes (many domains per epoch) give the file
// that one domain gives, and the plan applied piece by piece.
TEST_F(Drain, AnyWindowGivesThePlansFile)
{
    std::mt19937 g(5);
    Writers(3);
    for (int epoch = 0; epoch < 4; epoch++) {
        for (int k = 0; k < 60; k++) {
            uint32_t r = g() % 3;
            Write(r, g() % 3000, 1 + g() % 97, epoch, false);
        }
        if (epoch == 1 || epoch == 2) { // a shrinking SETSIZE, then a growing one
            for (auto *w : ws)
                ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, epoch == 1 ? 1500 : 4000, &err)) << err.msg;
        }
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    }
    CloseAll();
    Build();
    auto before = Pattern(6000, 3);
    auto want = Applied(before);
    for (uint64_t window : {1ull, 7ull, 64ull, 1000ull, 0ull})
        for (uint64_t gap : {1ull, 50ull, 0ull}) {
            logfs_drain_opts o{};
            o.window = window;
            o.max_gap = gap;
            EXPECT_EQ(want, Drained(o, before)) << "window " << window << ", gap " << gap;
            EXPECT_EQ(5u, st.epochs); // (4 syncs and the close)
        }
}

// Several threads take an epoch's domains in turn: the file is the one a
// single thread gives, whatever the window, and an epoch of a few MiB is
// cut into a domain per thread even under a larger window.
TEST_F(Drain, ThreadsGiveThePlansFile)
{
    std::mt19937 g(11);
    Writers(4);
    for (int epoch = 0; epoch < 3; epoch++) {
        for (int k = 0; k < 200; k++)
            Write(g() % 4, g() % 20000, 1 + g() % 300, epoch, false);
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    }
    for (uint64_t i = 0; i < (3u << 20) / 32; i++) // 3 MiB of 8-byte pieces, interleaved
        Write(i % 4, 20000 + i * 8, 8, 3, false);
    CloseAll();
    Build();
    auto before = Pattern(9000, 5);
    auto want = Applied(before);
    for (int threads : {2, 3, 4})
        for (uint64_t window : {100ull, 4096ull, 0ull}) {
            logfs_drain_opts o{};
            o.threads = threads;
            o.window = window;
            EXPECT_EQ(want, Drained(o, before)) << threads << " threads, window " << window;
            EXPECT_EQ(4u, st.epochs);
            if (window == 0) { // (16 MiB, but a domain per thread of the 3 MiB epoch)
                EXPECT_GE(st.writes, (uint64_t)threads);
            }
        }
}

// Buffers kept from one drain to the next (a server's): every drain gives
// the plan's file whatever the buffers held before, with another thread
// count, window or plan, and they are still held after it.
TEST_F(Drain, KeptBuffersGiveThePlansFile)
{
    std::mt19937 g(12);
    Writers(4);
    for (int k = 0; k < 300; k++)
        Write(g() % 4, g() % 50000, 1 + g() % 700, 0, false);
    for (uint64_t i = 0; i < (1u << 20) / 8; i++) // 1 MiB of interleaved 8-byte pieces
        Write(i % 4, 50000 + i * 8, 8, 0, false);
    CloseAll();
    Build();
    auto before = Pattern(7000, 3);
    auto want = Applied(before);
    logfs_drain_buffers *keep = logfs_drain_buffers_new();
    ASSERT_NE(nullptr, keep);
    EXPECT_EQ(0u, logfs_drain_buffers_bytes(keep));
    size_t held = 0;
    for (int threads : {2, 1, 4, 2})
        for (uint64_t window : {0ull, 5000ull}) {
            logfs_drain_opts o{};
            o.threads = threads;
            o.window = window;
            o.keep = keep;
            EXPECT_EQ(want, Drained(o, before)) << threads << " threads, window " << window;
            held = logfs_drain_buffers_bytes(keep);
            EXPECT_GE(held, (size_t)(1u << 20) / threads) << threads << " threads";
        }
    logfs_drain_buffers_free(keep);
}

static int stop_at_half(void *arg, uint64_t done, uint64_t total)
{
    auto *calls = static_cast<int *>(arg);
    ++*calls;
    return done * 2 >= total ? LOGFS_EBUSY : 0;
}

// The progress callback sees every domain, and stops the drain with its code.
TEST_F(Drain, ProgressIsToldAndMayStopIt)
{
    Writers(1);
    Write(0, 0, 4000, 1);
    CloseAll();
    Build();
    int calls = 0;
    logfs_drain_opts o{};
    o.window = 1000;
    o.progress = stop_at_half;
    o.arg = &calls;
    WriteFile(dir.file("f"), {});
    int fd = open(dir.file("f").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(LOGFS_EBUSY, logfs_drain(plan, fd, &o, &st, &err));
    close(fd);
    EXPECT_EQ(2, calls);
    EXPECT_EQ(2000u, st.bytes);
}

// A datalog shorter than its metalog says (lost with a crash) is an error
// that names it, not a file with holes.
TEST_F(Drain, AShortDatalogIsAnError)
{
    Writers(1);
    Write(0, 0, 4000, 1);
    CloseAll();
    Build();
    ASSERT_EQ(0, truncate(dir.file("w0.datalog").c_str(), 100));
    WriteFile(dir.file("f"), {});
    int fd = open(dir.file("f").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    logfs_drain_opts o{};
    EXPECT_EQ(LOGFS_ESHORT, logfs_drain(plan, fd, &o, &st, &err));
    close(fd);
    EXPECT_NE(nullptr, strstr(err.msg, "w0.datalog")) << err.msg;
}

// 3 writers, 2 epochs: the file equals the plan applied piece by piece,
// and the logs and the manifest are gone.
TEST_F(DrainFile, APendingSessionBecomesTheFile)
{
    Writers(3, false, 77);
    for (uint32_t r = 0; r < 3; r++)
        Write(r, r * 1000, 600, 1);
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    Write(1, 300, 1000, 2);
    CloseAll();
    Pending(77, 3, 2);
    Build();
    auto before = Pattern(500, 4);
    auto want = Applied(before);
    WriteFile(File(), before);
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), nullptr, &st, &err)) << err.msg;
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ(2u, st.epochs);
    EXPECT_EQ(0u, Manifests());
    EXPECT_FALSE(LogsLeft());
    EXPECT_NE(0, access(dir.file(".data.bbfs").c_str(), F_OK)); // (the directory too)
    // nothing pending: nothing done
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), nullptr, &st, &err)) << err.msg;
    EXPECT_EQ(0u, st.epochs);
}

// A handle of the file is open (its session live): the drain touches
// nothing, and says why.
TEST_F(DrainFile, ALiveSessionIsLeftToItsHandle)
{
    Writers(1, false, 5);
    Write(0, 0, 100, 1);
    CloseAll();
    Pending(5, 1, 1);
    logfs_session live{-1, nullptr};
    const std::string text = "bbfs-manifest 2\n";
    ASSERT_EQ(LOGFS_OK, logfs_session_create(File().c_str(), 6, text.data(), text.size(), 0,
                                             &live, &err));
    WriteFile(File(), {});
    EXPECT_EQ(LOGFS_EBUSY, logfs_drain_file(File().c_str(), nullptr, &st, &err));
    EXPECT_NE(nullptr, strstr(err.msg, "is open")) << err.msg;
    EXPECT_EQ(2u, Manifests());
    EXPECT_TRUE(LogsLeft());
    EXPECT_EQ(0u, ReadFile(File()).size());
    logfs_session_remove(&live);
}

static int stop_after_one(void *, uint64_t, uint64_t) { return LOGFS_EIO; }

// Stopped in the middle (a server killed), the sessions stay pending with
// their logs, and the next drain gives the same file.
TEST_F(DrainFile, AStoppedDrainRunsAgainToTheSameFile)
{
    Writers(2, false, 9);
    for (uint64_t i = 0; i < 200; i++)
        Write(i % 2, i * 10, 10, 3);
    CloseAll();
    Pending(9, 2, 1);
    Build();
    auto want = Applied();
    WriteFile(File(), {});
    logfs_drain_opts o{};
    o.window = 100;
    o.progress = stop_after_one;
    EXPECT_EQ(LOGFS_EIO, logfs_drain_file(File().c_str(), &o, &st, &err));
    EXPECT_EQ(1u, Manifests());
    EXPECT_TRUE(LogsLeft());
    EXPECT_NE(want, ReadFile(File())); // (part of it only)
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), nullptr, &st, &err)) << err.msg;
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ(0u, Manifests());
}

// A log that seals fewer epochs than its manifest promises: synced data
// is missing, the drain refuses and keeps everything.
TEST_F(DrainFile, ALogShortOfItsPromiseIsRefused)
{
    Writers(1, false, 11);
    Write(0, 0, 100, 1);
    CloseAll();
    Pending(11, 1, 3);
    WriteFile(File(), {});
    EXPECT_EQ(LOGFS_ELOST, logfs_drain_file(File().c_str(), nullptr, &st, &err));
    EXPECT_EQ(1u, Manifests());
    EXPECT_TRUE(LogsLeft());
}

// A session marked replayed (a replay killed while it cleaned up) is in
// the file already: its leftovers go, the file is not written again.
TEST_F(DrainFile, AReplayedSessionOnlyLosesItsLeftovers)
{
    Writers(1, false, 13);
    Write(0, 0, 100, 1);
    CloseAll();
    Pending(13, 1, 1, true);
    auto before = Pattern(50, 8);
    WriteFile(File(), before);
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), nullptr, &st, &err)) << err.msg;
    EXPECT_EQ(before, ReadFile(File()));
    EXPECT_EQ(0u, Manifests());
    EXPECT_FALSE(LogsLeft());
}

// Logs on "another node": moved where the manifest does not name them,
// reached only through the drain's far calls, as a server reaches another
// node's logs through that node's server (bbserver/far.c).
struct FarNode {
    std::string server, from, to; // the server's name; its logs' paths: named, real
    int exports = 0, reads = 0, removes = 0, replayed = 0;
    int refuse_removes = 0; // the next this many removals fail (a server gone)
    std::string map, path;
    uint64_t session = 0;
    // Moves the logs of @p metalog to @p dest, where the manifest does
    // not name them.  @return whether both files moved
    bool Take(const std::string &metalog, const std::string &dest)
    {
        from = metalog.substr(0, metalog.size() - strlen(".metalog"));
        to = dest;
        for (const char *ext : {".metalog", ".datalog"})
            if (rename((from + ext).c_str(), (to + ext).c_str()) != 0)
                return false;
        return true;
    }
    std::string Real(const char *named) const
    {
        std::string p(named);
        return p.compare(0, from.size(), from) == 0 ? to + p.substr(from.size()) : p;
    }
};

static int far_export(void *arg, const char *server, const char *metalog, void **bytes,
                      size_t *len, logfs_error *err)
{
    auto *f = static_cast<FarNode *>(arg);
    EXPECT_EQ(f->server, server);
    auto v = ReadFile(f->Real(metalog));
    f->exports++;
    if (v.empty())
        return err->code = LOGFS_EIO;
    *bytes = malloc(v.size());
    memcpy(*bytes, v.data(), v.size());
    *len = v.size();
    return LOGFS_OK;
}

static int far_read(void *arg, const char *server, const char *datalog, uint64_t off, void *buf,
                    size_t len, logfs_error *err)
{
    auto *f = static_cast<FarNode *>(arg);
    EXPECT_EQ(f->server, server);
    int fd = open(f->Real(datalog).c_str(), O_RDONLY);
    ssize_t got = fd >= 0 ? pread(fd, buf, len, (off_t) off) : -1;
    if (fd >= 0)
        close(fd);
    f->reads++;
    return got == (ssize_t) len ? LOGFS_OK : (err->code = LOGFS_ESHORT);
}

static int far_remove(void *arg, const char *server, const char *metalog, logfs_error *err)
{
    auto *f = static_cast<FarNode *>(arg);
    // (a log already gone here is removed through its own node's server:
    // a server removes what it is asked to, missing files included)
    if (f->server != server)
        return logfs_log_remove(metalog, err);
    if (f->refuse_removes > 0) {
        f->refuse_removes--;
        snprintf(err->msg, sizeof(err->msg), "bbserver %s does not answer", server);
        return err->code = LOGFS_EIO;
    }
    std::string m = f->Real(metalog);
    unlink(m.c_str());
    unlink((m.substr(0, m.size() - strlen(".metalog")) + ".datalog").c_str());
    f->removes++;
    return LOGFS_OK;
}

static int far_replayed(void *arg, const char *map, const char *path, uint64_t session,
                        logfs_error *)
{
    auto *f = static_cast<FarNode *>(arg);
    f->map = map;
    f->path = path;
    f->session = session;
    f->replayed++;
    return LOGFS_OK;
}

// 2 writers, the second's logs on another node: its metalog comes through
// an export, its bytes through reads, its logs go through a removal, and
// the file's map is told the session was replayed.
TEST_F(DrainFile, AnotherNodesLogsComeThroughItsServer)
{
    Writers(2, false, 21);
    for (uint64_t i = 0; i < 300; i++)
        Write(i % 2, i * 8, 8, 1);
    CloseAll();
    Build();
    auto want = Applied();
    FarNode node1;
    node1.server = "node1:7000";
    ASSERT_TRUE(node1.Take(metas[1], dir.file("node1-logs")));
    Pending(21, 2, 1, false, {"node0:7000", node1.server}, "node0:7000");
    WriteFile(File(), {});

    // without the far calls the second writer cannot be read
    EXPECT_NE(LOGFS_OK, logfs_drain_file(File().c_str(), nullptr, &st, &err));
    EXPECT_EQ(1u, Manifests());

    logfs_drain_far far{far_export, far_read, far_remove, far_replayed, &node1};
    logfs_drain_opts o{};
    o.far = &far;
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), &o, &st, &err)) << err.msg;
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ(1, node1.exports);
    EXPECT_GE(node1.reads, 1);
    EXPECT_EQ(1, node1.removes);
    EXPECT_NE(0, access((node1.to + ".metalog").c_str(), F_OK));
    EXPECT_FALSE(LogsLeft());
    EXPECT_EQ(1, node1.replayed);
    EXPECT_EQ("node0:7000", node1.map);
    EXPECT_EQ(File(), node1.path);
    EXPECT_EQ(21u, node1.session);
    EXPECT_EQ(0u, Manifests());
}

// A removal through another node's server that fails (the server gone)
// keeps the session's manifest, marked replayed: the next drain removes
// the logs it names, without writing the file again.  Before, the manifest
// went and nothing named those logs any more.
TEST_F(DrainFile, LogsAnotherNodeFailedToRemoveKeepTheirManifest)
{
    Writers(2, false, 22);
    for (uint64_t i = 0; i < 100; i++)
        Write(i % 2, i * 8, 8, 1);
    CloseAll();
    Build();
    auto want = Applied();
    FarNode node1;
    node1.server = "node1:7000";
    ASSERT_TRUE(node1.Take(metas[1], dir.file("node1-logs")));
    Pending(22, 2, 1, false, {"node0:7000", node1.server}, "node0:7000");
    WriteFile(File(), {});
    logfs_drain_far far{far_export, far_read, far_remove, far_replayed, &node1};
    logfs_drain_opts o{};
    o.far = &far;

    node1.refuse_removes = 1;
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), &o, &st, &err)) << err.msg;
    EXPECT_EQ(want, ReadFile(File()));
    EXPECT_EQ(0, access((node1.to + ".metalog").c_str(), F_OK)); // stays: refused
    EXPECT_FALSE(LogsLeft());                                    // this node's went
    ASSERT_EQ(1u, Manifests());

    WriteFile(File(), {}); // a second replay of the data would show
    ASSERT_EQ(LOGFS_OK, logfs_drain_file(File().c_str(), &o, &st, &err)) << err.msg;
    EXPECT_TRUE(ReadFile(File()).empty());
    EXPECT_EQ(1, node1.exports); // not planned again
    EXPECT_EQ(1, node1.removes);
    EXPECT_NE(0, access((node1.to + ".metalog").c_str(), F_OK));
    EXPECT_EQ(0u, Manifests());
}
