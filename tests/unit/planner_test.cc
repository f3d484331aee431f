// Replay planning: N writers' metalogs -> per-epoch pieces for M replayers.
// Each test writes real logs, replays them into a file, and compares it with
// a byte model of what MPI semantics say the file must hold.
#include <gtest/gtest.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "helpers.h"
#include "reader.h"
#include "writers_fixture.h"

class Planner : public LogWriters {
  protected:
    // Writer r writes len bytes at off (content from r, off and the salt).
    void Write(uint32_t r, uint64_t off, uint64_t len) { LogWriters::Write(r, off, len, salt); }
    void SyncAll()
    {
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
        salt++;
    }
    int salt = 0;
};

TEST_F(Planner, OneWriterReplayReproducesTheFile)
{
    Writers(1);
    Write(0, 0, 1000);
    Write(0, 5000, 10);
    CloseAll();
    Build();
    EXPECT_EQ(1u, logfs_plan_nepochs(plan));
    EXPECT_EQ(model, Replay(1));
}

TEST_F(Planner, LaterWriteWinsWithinOneWriterAndEpoch)
{
    Writers(1);
    Write(0, 0, 100);
    salt = 9;
    Write(0, 20, 30);
    CloseAll();
    Build();
    EXPECT_EQ(model, Replay(1));
}

TEST_F(Planner, EpochsAreAppliedInOrderAcrossWriters)
{
    Writers(2);
    Write(1, 0, 100); // epoch 0: rank 1 writes
    SyncAll();
    Write(0, 50, 100); // epoch 1: rank 0 overwrites part of it
    SyncAll();
    Write(1, 120, 10); // epoch 2: rank 1 again
    CloseAll();
    Build();
    EXPECT_EQ(3u, logfs_plan_nepochs(plan)); // two syncs and the close seal three epochs
    EXPECT_EQ(model, Replay(2));
}

TEST_F(Planner, HigherRankWinsAnOverlapWithinOneEpoch)
{
    Writers(3);
    Write(2, 0, 10);
    Write(0, 0, 10);
    Write(1, 5, 10);
    CloseAll();
    // Model: rank order decides, not time order.
    model.clear();
    for (uint32_t r : {0u, 1u, 2u}) {
        uint64_t off = r == 1 ? 5 : 0;
        std::vector<uint8_t> d(10);
        for (uint64_t i = 0; i < 10; i++)
            d[i] = (uint8_t)(r * 31 + (off + i) * 7);
        Model(off, d);
    }
    Build();
    EXPECT_EQ(model, Replay(1));
}

// HDF5 writes a chunk's fill values in one collective call and its data in
// the next, and another process may fill the bytes that one then writes:
// the later collective call wins, whatever the ranks.
TEST_F(Planner, AWriteAfterACollectiveCallWinsOverEarlierWritesOfHigherRanks)
{
    Writers(3);
    Write(2, 0, 64);  // call 1: rank 2 fills rank 0's bytes
    Write(1, 32, 64); // an independent write before call 2
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 1, &err)) << err.msg;
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 2, &err)) << err.msg;
    Write(0, 0, 64);  // call 2: rank 0 writes its data
    Write(1, 200, 8); // rank 1 in call 2, elsewhere
    Write(2, 60, 10); // rank 2 in call 2 too: overlaps rank 0, higher rank wins
    CloseAll();
    Build();
    // overlapping single blocks are resolved in the range map's order and
    // the epoch stays compact
    EXPECT_TRUE(logfs_plan_epoch_compact(plan, 0));
    EXPECT_EQ(model, Replay(1));
    EXPECT_EQ(model, Replay(2, "out2"));
}

TEST_F(Planner, OverlappingSingleBlocksBesideStridedGroupsStayCompact)
{
    // HDF5's independent strided write: each process a strided dataset
    // region, and every process rewriting the superblock and headers
    Writers(3);
    for (uint32_t r = 0; r < 3; r++) {
        std::vector<uint8_t> d(8 * 1000);
        for (size_t i = 0; i < d.size(); i++)
            d[i] = (uint8_t) (r * 13 + i * 5 + 1);
        ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(ws[r], &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(ws[r], 4096 + r * 8, 8, 24, 1000, d.data(), &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(ws[r], &err));
        for (uint64_t k = 0; k < 1000; k++)
            Model(4096 + r * 8 + k * 24, std::vector<uint8_t>(d.begin() + (long) (k * 8),
                                                              d.begin() + (long) (k * 8 + 8)));
    }
    for (uint32_t r = 0; r < 3; r++) {  // (in rank order: the later rank wins)
        Write(r, 0, 96);
        Write(r, 96 + r * 10, 40);
    }
    CloseAll();
    Build();
    EXPECT_TRUE(logfs_plan_epoch_compact(plan, 0));
    EXPECT_EQ(model, Replay(1));
    EXPECT_EQ(model, Replay(3, "out3"));
}

// Every byte of epoch e in at most one of its runs (logfs_plan_domain_runs
// promises it: the replay and the read view apply runs in no set order).
static void ExpectRunsDisjoint(const logfs_plan *plan, uint64_t e, uint32_t m)
{
    std::vector<int> seen;
    for (uint32_t r = 0; r < m; r++) {
        uint64_t lo, hi;
        ASSERT_EQ(LOGFS_OK, logfs_plan_domain_runs(
                                plan, e, r, m, &lo, &hi,
                                [](void *arg, const logfs_replay_run *x) {
                                    auto *v = static_cast<std::vector<int> *>(arg);
                                    for (uint64_t k = 0; k < x->count; k++)
                                        for (uint64_t b = 0; b < x->blocklen; b++) {
                                            uint64_t at = x->offset + k * x->stride + b;
                                            if (v->size() <= at)
                                                v->resize(at + 1, 0);
                                            (*v)[at]++;
                                        }
                                    return 0;
                                },
                                &seen));
    }
    for (size_t at = 0; at < seen.size(); at++)
        ASSERT_LE(seen[at], 1) << "byte " << at << " is in " << seen[at] << " runs";
}

TEST_F(Planner, ALongSingleBlockUnderAStridedGroupIsFoundPastShorterOnes)
{
    // PnetCDF's varn: a long write, a short one inside it, then a strided
    // write over the long one.  Sorted by offset, the short single ends
    // before the group starts, and a search that took single ends to
    // ascend stepped over the long one: the epoch passed for compact, and
    // its runs put the long single's old bytes over the group's.
    Writers(1);
    Write(0, 0, 300);
    Write(0, 10, 10);
    std::vector<uint8_t> d(8 * 3, 0xab);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(ws[0], &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(ws[0], 100, 8, 24, 3, d.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(ws[0], &err));
    for (uint64_t k = 0; k < 3; k++)
        Model(100 + k * 24, std::vector<uint8_t>(8, 0xab));
    CloseAll();
    Build();
    EXPECT_FALSE(logfs_plan_epoch_compact(plan, 0));
    ExpectRunsDisjoint(plan, 0, 1);
    ExpectRunsDisjoint(plan, 0, 3);
    EXPECT_EQ(model, Replay(1));
    EXPECT_EQ(model, Replay(2, "out2"));
}

TEST_F(Planner, CollectiveCallsOrderWritesOnlyWithinTheirEpoch)
{
    Writers(2);
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(ws[1], 5, &err));
    Write(1, 0, 16); // epoch 0, after call 5
    SyncAll();
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(ws[0], 1, &err));
    Write(0, 0, 16); // epoch 1: a later epoch wins whatever the counts
    CloseAll();
    Build();
    EXPECT_EQ(model, Replay(1));
}

TEST_F(Planner, ASetSizeAfterACollectiveCallCutsTheWritersEarlierBytes)
{
    Writers(2);
    Write(0, 0, 100);
    Write(1, 100, 50);
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 1, &err));
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 60, &err));
    model.resize(60);
    Write(1, 10, 5);
    CloseAll();
    Build();
    EXPECT_EQ(model, Replay(2));
}

TEST_F(Planner, StridedWritesReplayEveryBlock)
{
    Writers(2);
    std::vector<uint8_t> d(8 * 1000);
    for (uint32_t r = 0; r < 2; r++) {
        ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(ws[r], &err));
        for (uint64_t i = 0; i < 1000; i++) {
            for (int k = 0; k < 8; k++)
                d[i * 8 + k] = (uint8_t)(r + i + k);
            uint64_t off = (i * 2 + r) * 8; // noncontig: ranks interleave 8-byte blocks
            ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[r], off, 8, &d[i * 8], &err));
            Model(off, std::vector<uint8_t>(d.begin() + (long)i * 8, d.begin() + (long)i * 8 + 8));
        }
        ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(ws[r], &err));
    }
    CloseAll();
    Build();
    EXPECT_EQ(model, Replay(3));
}

TEST_F(Planner, ShrinkingSetSizeDiscardsEarlierBytesAndGrowingReadsAsZeros)
{
    Writers(2);
    Write(0, 0, 100);
    Write(1, 100, 100);
    SyncAll();
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 150, &err)); // collective shrink
    model.resize(150);
    Write(0, 10, 5);
    SyncAll();
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 40, &err));
    model.resize(40);
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 300, &err)); // grow: zeros
    model.resize(300, 0);
    Write(1, 250, 10);
    CloseAll();
    Build();
    logfs_resize rs;
    ASSERT_EQ(LOGFS_OK, logfs_plan_resize(plan, 2, &rs));
    EXPECT_TRUE(rs.present);
    EXPECT_EQ(40u, rs.truncate_to);
    EXPECT_EQ(300u, rs.extend_to);
    // The canonical file held older, longer contents before the replay.
    WriteFile(dir.file("out"), std::vector<uint8_t>(1000, 0xee));
    EXPECT_EQ(model, Replay(2));
}

TEST_F(Planner, WritesAfterAShrinkInTheSameEpochSurviveIt)
{
    Writers(1);
    Write(0, 0, 100);
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(ws[0], 10, &err));
    model.resize(10);
    Write(0, 50, 20);
    CloseAll();
    Build();
    EXPECT_EQ(model, Replay(1));
}

class PlannerReplayers : public Planner, public ::testing::WithParamInterface<std::pair<int, int>> {};

// N writers, M replayers, M < N, M = N and M > N: same file every time.
TEST_P(PlannerReplayers, AnyNumberOfReplayersGivesTheSameFile)
{
    auto [n, m] = GetParam();
    Writers((uint32_t)n);
    std::mt19937 rng(n * 100 + m);
    for (int e = 0; e < 4; e++) {
        for (int k = 0; k < 40; k++) {
            // Disjoint within an epoch, as a correct MPI program writes.
            uint32_t r = rng() % (uint32_t)n;
            uint64_t slot = rng() % 64;
            uint64_t off = (slot * (uint64_t)n + r) * 50 + rng() % 10;
            Write(r, off, 1 + rng() % 40);
        }
        SyncAll();
    }
    CloseAll();
    Build();
    EXPECT_EQ(model, Replay((uint32_t)m, "out" + std::to_string(m)));
}

INSTANTIATE_TEST_SUITE_P(MNotN, PlannerReplayers,
                         ::testing::Values(std::make_pair(5, 2), std::make_pair(3, 3), std::make_pair(3, 7),
                                           std::make_pair(1, 4), std::make_pair(8, 1)));

TEST_F(Planner, ReplayerDomainsAreContiguousDisjointAndBalanced)
{
    Writers(3);
    for (int i = 0; i < 300; i++)
        Write((uint32_t)(i % 3), (uint64_t)i * 100, 37);
    CloseAll();
    Build();
    const uint32_t m = 4;
    uint64_t total = logfs_plan_epoch_bytes(plan, 0), sum = 0, prev_hi = 0;
    EXPECT_EQ(300u * 37, total);
    for (uint32_t r = 0; r < m; r++) {
        struct Acc { uint64_t bytes = 0, lo = UINT64_MAX, hi = 0, last_end = 0; bool ordered = true; } a;
        uint64_t lo, hi;
        ASSERT_EQ(LOGFS_OK, logfs_plan_domain(plan, 0, r, m, &lo, &hi,
                                              [](void *arg, const logfs_replay_piece *p) {
                                                  auto *a = static_cast<Acc *>(arg);
                                                  if (p->offset < a->last_end)
                                                      a->ordered = false;
                                                  a->last_end = p->offset + p->length;
                                                  a->bytes += p->length;
                                                  a->lo = std::min(a->lo, p->offset);
                                                  a->hi = std::max(a->hi, p->offset + p->length);
                                                  return 0;
                                              },
                                              &a));
        EXPECT_TRUE(a.ordered);
        EXPECT_EQ(a.lo, lo);
        EXPECT_EQ(a.hi, hi);
        EXPECT_GE(lo, prev_hi) << "domains overlap";
        EXPECT_NEAR((double)a.bytes, (double)total / m, 1.0);
        prev_hi = hi;
        sum += a.bytes;
    }
    EXPECT_EQ(total, sum);
    uint64_t lo, hi;
    EXPECT_EQ(LOGFS_EINVAL, logfs_plan_domain(plan, 0, 4, 4, &lo, &hi, nullptr, nullptr));
    EXPECT_EQ(LOGFS_EINVAL, logfs_plan_domain(plan, 9, 0, 4, &lo, &hi, nullptr, nullptr));
}

TEST_F(Planner, ReplayIsRestartableAfterACrashMidEpoch)
{
    Writers(2);
    std::mt19937 rng(4);
    for (int e = 0; e < 5; e++) {
        for (int k = 0; k < 30; k++)
            Write((uint32_t)(k % 2), (uint64_t)(rng() % 40) * 64 + (k % 2) * 32, 1 + rng() % 32);
        if (e == 2) {
            for (auto *w : ws)
                ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 700, &err));
            model.resize(700);
        }
        SyncAll();
    }
    CloseAll();
    Build();
    // Crash: epochs 0..2 applied, then only replayer 0 of 2 got through epoch 3.
    std::string out = dir.file("out");
    ASSERT_EQ(LOGFS_OK, ApplyPlan(plan, out, 1, 0, 3));
    ASSERT_EQ(LOGFS_OK, ApplyPlan(plan, out, 2, 3, 4, 0));
    ASSERT_NE(model, ReadFile(out));
    // Restart from scratch on the damaged file.
    EXPECT_EQ(model, Replay(2));
    // And once more: idempotent.
    EXPECT_EQ(model, Replay(3));
}

TEST_F(Planner, UnsealedWritesAreLeftOutUnlessAskedFor)
{
    Writers(2);
    Write(0, 0, 10);
    Write(1, 10, 10);
    SyncAll();
    auto synced = model;
    Write(0, 100, 10); // after the last sync, then both writers crash
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));
    for (auto *w : ws)
        logfs_writer_abandon(w);
    ws.clear();
    Build();
    EXPECT_EQ(1u, logfs_plan_nepochs(plan));
    EXPECT_EQ(synced, Replay(1));
    logfs_plan_opts o = {0, 1, nullptr};
    Build(&o);
    EXPECT_EQ(2u, logfs_plan_nepochs(plan));
    EXPECT_EQ(model, Replay(1, "out2"));
}

TEST_F(Planner, EachWritersSealedEpochsAreCounted)
{
    // Writer 1 crashes after the first sync; writer 0 syncs again and closes.
    Writers(2);
    Write(0, 0, 10);
    Write(1, 10, 10);
    SyncAll();
    Write(1, 30, 10);
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(ws[1], &err));
    logfs_writer_abandon(ws[1]);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(ws[0], &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(ws[0], &err));
    ws.clear();
    Build();
    EXPECT_EQ(3u, logfs_plan_writer_epochs(plan, 0)); // sync, sync, close
    EXPECT_EQ(1u, logfs_plan_writer_epochs(plan, 1)); // its unsealed write does not count
    EXPECT_EQ(0u, logfs_plan_writer_epochs(plan, 2)); // no such writer
}

TEST_F(Planner, AMetalogSealingFewerEpochsThanPromisedIsLost)
{
    Writers(2);
    Write(0, 0, 10);
    Write(1, 10, 10);
    SyncAll();
    CloseAll(); // each sealed 2 epochs
    Build();
    uint64_t kept[2] = {2, 0}, more[2] = {2, 3};
    EXPECT_EQ(LOGFS_OK, logfs_plan_check_sealed(plan, kept, &err)) << err.msg;
    ASSERT_EQ(LOGFS_ELOST, logfs_plan_check_sealed(plan, more, &err));
    EXPECT_NE(nullptr, strstr(err.msg, "writer 1 closed its log after 3 epochs")) << err.msg;
}

TEST_F(Planner, CrashAfterSyncLosesNothingTheSyncCovered)
{
    Writers(1);
    auto o = Opts(dir, "d", 0, 1);
    o.durable = 1;
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    auto a = Pattern(100000, 3);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    auto b = Pattern(5000, 4);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 10, b.data(), b.size(), &err)); // never synced
    logfs_writer_abandon(w);
    metas = {dir.file("d.metalog")};
    Build();
    EXPECT_EQ(a, Replay(1));
}

TEST_F(Planner, MetalogsOfDifferentFilesAreRejected)
{
    for (uint32_t r = 0; r < 2; r++) {
        auto o = Opts(dir, "x" + std::to_string(r), r, 2, 100 + r); // file ids differ
        logfs_writer *w;
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    }
    std::string a = dir.file("x0.metalog"), b = dir.file("x1.metalog");
    std::vector<const char *> p = {a.c_str(), b.c_str()};
    EXPECT_EQ(LOGFS_EMISMATCH, logfs_plan_build(p.data(), 2, nullptr, &plan, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("x1.metalog")) << err.msg;
    EXPECT_EQ(LOGFS_EMISMATCH, logfs_plan_build(p.data(), 1, nullptr, &plan, &err))
        << "one metalog of a two-writer file";
}

TEST_F(Planner, DuplicateRanksAreRejected)
{
    Writers(2);
    CloseAll();
    std::vector<const char *> p = {metas[0].c_str(), metas[0].c_str()};
    EXPECT_EQ(LOGFS_EMISMATCH, logfs_plan_build(p.data(), 2, nullptr, &plan, &err));
}

TEST_F(Planner, ACorruptMetalogFailsTheReplayUnlessSalvaged)
{
    Writers(2);
    Write(0, 0, 10);
    Write(1, 10, 10);
    SyncAll();
    auto synced = model;
    Write(1, 0, 20);
    SyncAll();
    CloseAll();
    // Damage rank 1's last WRITE record.
    auto r = ReadAll(metas[1]);
    ASSERT_EQ(LOGFS_END, r.status);
    auto bytes = ReadFile(metas[1]);
    bytes[r.records[2].offset + LOGFS_REC_HEADER_LEN] ^= 0xff;
    WriteFile(metas[1], bytes);
    std::vector<const char *> p = {metas[0].c_str(), metas[1].c_str()};
    EXPECT_EQ(LOGFS_ECORRUPT, logfs_plan_build(p.data(), 2, nullptr, &plan, &err));
    logfs_plan_opts o = {1, 0, nullptr};
    Build(&o);
    ASSERT_NE(nullptr, logfs_plan_warning(plan, 1));
    EXPECT_NE(std::string::npos, std::string(logfs_plan_warning(plan, 1)).find("checksum")) << logfs_plan_warning(plan, 1);
    EXPECT_EQ(nullptr, logfs_plan_warning(plan, 0));
    EXPECT_EQ(synced, Replay(1));
}

TEST_F(Planner, AShortDatalogIsReportedAtReplay)
{
    Writers(1);
    Write(0, 0, 1000);
    CloseAll();
    Build();
    ASSERT_EQ(0, truncate(dir.file("w0.datalog").c_str(), 500));
    EXPECT_EQ(LOGFS_ESHORT, ApplyPlan(plan, dir.file("out"), 1));
}

// A file's size from a plan: the end of each epoch's last byte, in either
// form of the epoch, with no piece visited.
TEST_F(Planner, EpochEndIsOnePastTheLastByteInEitherForm)
{
    Writers(2);
    Write(0, 0, 100);
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(ws[0], 60, &err)) << err.msg; // cuts: the map form
    Write(1, 50, 100);
    SyncAll();
    Write(0, 1000, 10);
    Write(1, 4000, 8); // disjoint: the compact form
    SyncAll();
    SyncAll(); // an epoch writing nothing (its SYNC reaches the log with the CLOSE)
    CloseAll(); // and another
    Build();
    ASSERT_EQ(4u, logfs_plan_nepochs(plan));
    EXPECT_FALSE(logfs_plan_epoch_compact(plan, 0));
    EXPECT_TRUE(logfs_plan_epoch_compact(plan, 1));
    EXPECT_EQ(150u, logfs_plan_epoch_end(plan, 0));
    EXPECT_EQ(4008u, logfs_plan_epoch_end(plan, 1));
    EXPECT_EQ(0u, logfs_plan_epoch_end(plan, 2));
    EXPECT_EQ(0u, logfs_plan_epoch_end(plan, 3));
    EXPECT_EQ(0u, logfs_plan_epoch_end(plan, 4)); // no such epoch
}

// A reader that keeps the result of a plan and later applies a plan of only
// what was logged since (resumed from the earlier plan's marks), as the
// driver's views of synced writes do under collective and posix
// consistency, ends with what one plan of everything gives, as long as
// every new op comes after every op applied before.
class PlannerIncremental : public Planner {
  protected:
    void FlushAll()
    {
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err)) << err.msg;
    }
    void Order(uint64_t seq)
    {
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, seq, &err)) << err.msg;
    }
    // A plan of the writes so far, sealed or not, read on from `since`.
    void BuildSince(const std::vector<logfs_reader_mark> &since)
    {
        logfs_plan_opts o = {0, 1, since.empty() ? nullptr : since.data()};
        Build(&o);
    }
    std::vector<logfs_reader_mark> Marks()
    {
        std::vector<logfs_reader_mark> m(logfs_plan_nwriters(plan));
        for (uint32_t r = 0; r < m.size(); r++)
            logfs_plan_mark(plan, r, &m[r]);
        return m;
    }
    static std::vector<uint64_t> Positions(const std::vector<logfs_reader_mark> &m)
    {
        std::vector<uint64_t> pos;
        for (auto &x : m)
            pos.push_back(x.pos);
        return pos;
    }
};

TEST_F(PlannerIncremental, APlanOfWhatWasLoggedSinceExtendsAnEarlierOne)
{
    Writers(3);
    Write(0, 0, 100); // before the first collective call
    Write(1, 100, 100);
    Write(2, 50, 20); // overlaps rank 0: the higher rank wins
    FlushAll();
    BuildSince({});
    auto before = Marks();
    for (uint32_t r = 0; r < 3; r++) // past the header and the one WRITE
        EXPECT_EQ(FileSize(metas[r]), before[r].pos) << r;
    logfs_plan_key first, last;
    ASSERT_TRUE(logfs_plan_key_bounds(plan, &first, &last));
    EXPECT_EQ(0u, first.writer);
    EXPECT_EQ(2u, last.writer);
    EXPECT_EQ(model, Replay(1, "kept")); // the reader's copy
    auto kept_last = last;

    Order(1); // a collective call: what follows wins over all the above
    Write(0, 60, 100); // over rank 2's bytes and rank 1's
    Write(2, 0, 10);
    Write(1, 300, 10);
    FlushAll();
    BuildSince(before);
    for (uint32_t r = 0; r < 3; r++) // on to the end of each log
        EXPECT_EQ(FileSize(metas[r]), Marks()[r].pos) << r;
    EXPECT_EQ(120u, logfs_plan_epoch_bytes(plan, 0)); // only the new ops are in it
    ASSERT_TRUE(logfs_plan_key_bounds(plan, &first, &last));
    EXPECT_GE(logfs_plan_key_cmp(&first, &kept_last), 0);
    EXPECT_EQ(1u, first.seq);
    EXPECT_EQ(model, Replay(1, "kept")); // over the copy: as one plan of everything
    BuildSince({});
    EXPECT_EQ(model, Replay(2, "whole"));
}

// A write stamped before the latest write an earlier plan held, but logged
// after that plan: put over the reader's copy it would win, while one plan
// of everything lets the later stamp win.  The key bounds show it, so the
// reader plans everything again.
TEST_F(PlannerIncremental, AnOpOlderThanWhatAnEarlierPlanHeldIsShownByTheKeys)
{
    Writers(2);
    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(ws[1], 200, &err));
    Write(1, 0, 10);
    FlushAll();
    BuildSince({});
    auto before = Marks();
    logfs_plan_key first, last, kept_last;
    ASSERT_TRUE(logfs_plan_key_bounds(plan, &first, &kept_last));
    Replay(1, "kept");
    auto stamped_later = model;

    ASSERT_EQ(LOGFS_OK, logfs_writer_stamp(ws[0], 100, &err));
    Write(0, 0, 10); // made (by the clock) before rank 1's
    FlushAll();
    BuildSince(before);
    ASSERT_TRUE(logfs_plan_key_bounds(plan, &first, &last));
    EXPECT_LT(logfs_plan_key_cmp(&first, &kept_last), 0);
    EXPECT_EQ(100u, first.stamp);
    EXPECT_EQ(model, Replay(1, "kept")); // put over the copy: rank 0's bytes
    BuildSince({});
    EXPECT_EQ(stamped_later, Replay(1, "whole")); // the whole plan: rank 1's
    EXPECT_NE(ReadFile(dir.file("kept")), ReadFile(dir.file("whole")));
}

TEST_F(PlannerIncremental, APlanOfNothingLoggedSinceHoldsNoKeys)
{
    Writers(2);
    Write(0, 0, 10);
    Write(1, 10, 10);
    FlushAll();
    BuildSince({});
    auto before = Marks();
    BuildSince(before);
    logfs_plan_key first, last;
    EXPECT_FALSE(logfs_plan_key_bounds(plan, &first, &last));
    EXPECT_EQ(0u, logfs_plan_epoch_bytes(plan, 0));
    EXPECT_EQ(Positions(before), Positions(Marks()));
}

// Without include_unsealed the plan stops at each log's last seal, and so
// does its mark: the writes after it are read by the next plan, once sealed.
TEST_F(PlannerIncremental, TheMarkOfASealedPlanStaysAtTheLastSeal)
{
    Writers(2);
    Write(0, 0, 10);
    Write(1, 10, 10);
    SyncAll();
    Write(0, 20, 10); // not sealed yet
    FlushAll();
    Build();
    auto sealed = Marks();
    EXPECT_LT(sealed[0].pos, FileSize(metas[0]));
    EXPECT_EQ(1u, sealed[0].epoch);
    EXPECT_EQ(20u, logfs_plan_epoch_bytes(plan, 0));
    SyncAll();
    logfs_plan_opts o = {0, 0, sealed.data()};
    Build(&o);
    ASSERT_EQ(2u, logfs_plan_nepochs(plan));
    EXPECT_EQ(0u, logfs_plan_epoch_bytes(plan, 0)); // read before
    EXPECT_EQ(10u, logfs_plan_epoch_bytes(plan, 1)); // rank 0's third write
    EXPECT_EQ(FileSize(metas[0]), Marks()[0].pos);
}

// A log shorter than the mark (not the log the mark was taken on) is
// refused, not read from a wrong place.
TEST_F(PlannerIncremental, AMarkPastTheEndOfTheLogIsRefused)
{
    Writers(1);
    Write(0, 0, 10);
    FlushAll();
    BuildSince({});
    auto m = Marks();
    m[0].pos += 1000;
    logfs_plan_opts o = {0, 1, m.data()};
    logfs_plan *p = nullptr;
    const char *paths[1] = {metas[0].c_str()};
    EXPECT_EQ(LOGFS_EINVAL, logfs_plan_build(paths, 1, &o, &p, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("shrank")) << err.msg;
    EXPECT_EQ(nullptr, p);
}

TEST_F(PlannerIncremental, ReadingOnFromMarksInAPlanOfSeveralSessionsIsRefused)
{
    Writers(1);
    Write(0, 0, 10);
    CloseAll();
    const char *paths[2] = {metas[0].c_str(), metas[0].c_str()};
    size_t counts[2] = {1, 1};
    logfs_reader_mark since[1] = {};
    logfs_plan_opts o = {0, 1, since};
    logfs_plan *p = nullptr;
    EXPECT_EQ(LOGFS_EINVAL, logfs_plan_build_sessions(paths, counts, 2, &o, &p, &err));
    EXPECT_EQ(nullptr, p);
}

// A view looked at after every acquire keeps each metalog and seal open
// (logfs_kept_log): plans through kept logs equal plans that open the
// files, a seal made after the logs were kept still judges them, and the
// header is read once.
class PlannerKept : public PlannerIncremental {
  protected:
    std::vector<logfs_kept_log> kept;
    ~PlannerKept() override
    {
        for (auto &k : kept)
            logfs_kept_log_close(&k);
    }
    int BuildKept(const std::vector<logfs_reader_mark> &since)
    {
        kept.resize(metas.size(), logfs_kept_log LOGFS_KEPT_LOG_INIT);
        std::vector<logfs_metalog_src> src(metas.size());
        for (size_t i = 0; i < metas.size(); i++) {
            src[i].metalog = metas[i].c_str();
            src[i].kept = &kept[i];
        }
        logfs_plan_opts o = {0, 1, since.empty() ? nullptr : since.data()};
        logfs_plan_free(plan);
        plan = nullptr;
        return logfs_plan_build_src(src.data(), src.size(), &o, 0, &plan, &err);
    }
};

TEST_F(PlannerKept, KeptLogsPlanAsOpenedOnesAndSeeLaterSeals)
{
    Writers(2);
    Write(0, 0, 100);
    Write(1, 50, 100);
    FlushAll();
    ASSERT_EQ(LOGFS_OK, BuildKept({})) << err.msg;
    for (auto &k : kept) {
        EXPECT_GE(k.metalog, 0);
        EXPECT_GT(k.header_end, 0u);
    }
    auto before = Marks();
    EXPECT_EQ(model, Replay(1, "kept"));
    int fd0 = kept[0].metalog;

    Order(1);
    Write(1, 0, 30);
    Write(0, 120, 40);
    for (auto *w : ws)
        ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, BuildKept(before)) << err.msg;
    EXPECT_EQ(fd0, kept[0].metalog); // the same descriptor, not reopened
    EXPECT_GE(kept[0].seal, 0);      // the seal file, opened once it was written
    EXPECT_EQ(model, Replay(1, "kept"));
    BuildSince({});
    EXPECT_EQ(model, Replay(2, "whole"));

    // The seal written after the logs were kept judges them: a metalog cut
    // below its sealed length is damage, not a torn tail.
    uint64_t size = FileSize(metas[0]);
    ASSERT_EQ(0, truncate(metas[0].c_str(), (off_t) (size - 3)));
    EXPECT_EQ(LOGFS_ECORRUPT, BuildKept({}));
    EXPECT_NE(nullptr, strstr(err.msg, "sealed length")) << err.msg;

    logfs_kept_log_close(&kept[0]);
    EXPECT_EQ(-1, kept[0].metalog);
    EXPECT_EQ(-1, kept[0].seal);
    EXPECT_EQ(0u, kept[0].header_end);
}
