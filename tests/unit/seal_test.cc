// The seal (NAME.sealed): what a completed sync promises is never mistaken
// for a torn tail.  Real logs from real writers, damaged on disk.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "coding.h"
#include "helpers.h"

static bool Mentions(const char *msg, const std::string &s)
{
    return msg && std::string(msg).find(s) != std::string::npos;
}

static bool Exists(const std::string &path)
{
    return access(path.c_str(), F_OK) == 0;
}

class Seal : public ::testing::Test {
  protected:
    // Writer "f": `epochs` synced epochs (one write each, overlapping the
    // previous one), then `unsynced` writes that reach the metalog but no
    // sync, then a clean close or a crash.
    void Log(int epochs, bool close, int unsynced = 0, bool durable = false)
    {
        auto o = Opts(dir, "f");
        o.durable = durable;
        logfs_writer *w;
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        EXPECT_EQ(0u, logfs_writer_sealed_length(w));
        std::vector<uint8_t> file;
        for (int e = 0; e < epochs; e++) {
            auto d = Pattern(1000, (uint32_t)e + 1);
            uint64_t off = (uint64_t)e * 500;
            ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, off, d.data(), d.size(), &err)) << err.msg;
            ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
            if (file.size() < off + d.size())
                file.resize(off + d.size());
            std::copy(d.begin(), d.end(), file.begin() + (long)off);
            models.push_back(file);
            seals.push_back(logfs_writer_sealed_length(w));
            EXPECT_EQ(FileSize(Meta()), seals.back()) << "the seal is the metalog length at the sync";
        }
        for (int i = 0; i < unsynced; i++) {
            auto d = Pattern(300, 99 + (uint32_t)i);
            ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 7, d.data(), d.size(), &err));
        }
        ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));
        if (close) {
            ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
            seals.push_back(FileSize(Meta()));
        } else {
            logfs_writer_abandon(w); // a crash
        }
        log = ReadFile(Meta());
        auto r = ReadAll(Meta());
        ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
        records = r.records;
    }
    std::string Meta() { return dir.file("f.metalog"); }
    std::string SealFile() { return dir.file("f.sealed"); }
    void Put(const std::vector<uint8_t> &bytes) { WriteFile(Meta(), bytes); }
    std::vector<uint8_t> Prefix(uint64_t n) { return {log.begin(), log.begin() + (long)n}; }
    int Build(bool salvage)
    {
        logfs_plan_free(plan);
        plan = nullptr;
        std::string m = Meta();
        const char *p = m.c_str();
        logfs_plan_opts o = {salvage, 0, nullptr};
        return logfs_plan_build(&p, 1, &o, &plan, &err);
    }
    std::vector<uint8_t> Replay()
    {
        unlink(dir.file("out").c_str());
        EXPECT_EQ(LOGFS_OK, ApplyPlan(plan, dir.file("out"), 1));
        return ReadFile(dir.file("out"));
    }
    logfs_seal SealOf(const std::string &metalog)
    {
        logfs_seal s;
        EXPECT_EQ(LOGFS_OK, logfs_seal_read(metalog.c_str(), &s, &err)) << err.msg;
        return s;
    }
    void TearDown() override { logfs_plan_free(plan); }

    TempDir dir;
    logfs_error err{};
    logfs_plan *plan = nullptr;
    std::vector<uint8_t> log;
    std::vector<logfs_record> records;      // after the header
    std::vector<uint64_t> seals;            // sealed length after each sync (and close)
    std::vector<std::vector<uint8_t>> models; // file after epochs 0..e
};

TEST_F(Seal, EverySyncAndCloseRecordsTheMetalogLengthInAPrivateFixedSizeFile)
{
    Log(3, true, 0, true);
    EXPECT_EQ(0600u, FileMode(SealFile()));
    EXPECT_EQ((uint64_t)LOGFS_SEAL_FILE_LEN, FileSize(SealFile()));
    auto s = SealOf(Meta());
    EXPECT_EQ(LOGFS_SEAL_VALID, s.state);
    EXPECT_EQ(2, s.valid_slots) << "the previous seal stays in the other slot";
    EXPECT_EQ(4u, s.seq);
    EXPECT_EQ(log.size(), s.length);
    EXPECT_EQ(4u, s.epochs);
    EXPECT_TRUE(s.closed);
    EXPECT_EQ(42u, s.file_id);
    logfs_reader *r;
    ASSERT_EQ(LOGFS_OK, logfs_reader_open(Meta().c_str(), &r, &err)) << err.msg;
    EXPECT_EQ(log.size(), logfs_reader_sealed_length(r));
    EXPECT_EQ(LOGFS_SEAL_VALID, logfs_reader_seal(r, nullptr));
    logfs_reader_close(r);
    // Each sync ends exactly on its SYNC record.
    ASSERT_EQ(7u, records.size());
    for (int e = 0; e < 3; e++)
        EXPECT_EQ(records[2 * e + 1].offset + LOGFS_REC_HEADER_LEN + records[2 * e + 1].length, seals[e]);
}

TEST_F(Seal, FlippedLengthByteBeforeSealIsCorruption)
{
    Log(3, false);
    ASSERT_EQ(6u, records.size()); // W0 S0 W1 S1 W2 S2
    const logfs_record &w1 = records[2];
    ASSERT_EQ(LOGFS_REC_WRITE, w1.type);
    auto bad = log;
    bad[w1.offset + 6] ^= 0x10; // length + 1 MiB: points past the end of the file

    // Without the seal this is indistinguishable from a torn tail: two
    // synced epochs would silently disappear.
    WriteFile(dir.file("g.metalog"), bad);
    auto blind = ReadAll(dir.file("g.metalog"));
    EXPECT_EQ(LOGFS_END, blind.status);
    EXPECT_EQ(2u, blind.records.size());

    Put(bad);
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_EQ(2u, r.records.size()) << "records before the damage are kept";
    EXPECT_EQ(w1.offset, r.bad_offset);
    EXPECT_EQ(log.size() - w1.offset, r.dropped);
    EXPECT_TRUE(Mentions(r.err.msg, "sealed length " + std::to_string(seals[2]))) << r.err.msg;
    EXPECT_TRUE(Mentions(r.err.msg, "offset " + std::to_string(w1.offset))) << r.err.msg;
    EXPECT_TRUE(Mentions(r.err.msg, "synced part is damaged")) << r.err.msg;

    EXPECT_EQ(LOGFS_ECORRUPT, Build(false)) << "the planner refuses a damaged sealed log";
    EXPECT_TRUE(Mentions(err.msg, "sealed length")) << err.msg;
    ASSERT_EQ(LOGFS_OK, Build(true)) << err.msg;
    EXPECT_EQ(1u, logfs_plan_nepochs(plan)) << "salvage keeps the epochs sealed before the damage";
    EXPECT_TRUE(Mentions(logfs_plan_warning(plan, 0), "sealed length")) << logfs_plan_warning(plan, 0);
    EXPECT_EQ(models[0], Replay());
}

TEST_F(Seal, EveryFlippedLengthBitBeforeTheSealIsCorruption)
{
    Log(3, true, 2);
    for (auto &rec : records)
        for (uint64_t at = rec.offset + 4; at < rec.offset + 8; at++)
            for (int bit = 0; bit < 8; bit++) {
                auto bad = log;
                bad[at] ^= (uint8_t)(1 << bit);
                Put(bad);
                auto r = ReadAll(Meta());
                ASSERT_EQ(LOGFS_ECORRUPT, r.status) << "flip at " << at << " bit " << bit;
                ASSERT_EQ(rec.offset, r.bad_offset);
            }
}

TEST_F(Seal, TornTailAfterSealIsCleanEnd)
{
    Log(2, false, 2);
    uint64_t sealed = seals[1];
    ASSERT_EQ(6u, records.size()); // W0 S0 W1 S1 W W (unsynced)
    ASSERT_GT(log.size(), sealed);
    for (uint64_t cut = sealed; cut < log.size(); cut++) {
        Put(Prefix(cut));
        auto r = ReadAll(Meta());
        ASSERT_EQ(LOGFS_END, r.status) << "cut at " << cut << ": " << r.err.msg;
        uint64_t boundary = cut >= records[5].offset ? records[5].offset : records[4].offset;
        ASSERT_EQ(cut - boundary, r.torn) << "cut at " << cut;
    }
    Put(Prefix(records[5].offset + 5));
    ASSERT_EQ(LOGFS_OK, Build(false)) << err.msg;
    EXPECT_EQ(2u, logfs_plan_nepochs(plan));
    EXPECT_EQ(nullptr, logfs_plan_warning(plan, 0));
    EXPECT_EQ(models[1], Replay());
}

TEST_F(Seal, MetalogTruncatedBelowSealIsCorruption)
{
    Log(3, true);
    uint64_t sealed = seals.back();
    ASSERT_EQ(log.size(), sealed);
    for (uint64_t cut = 0; cut < sealed; cut++) {
        Put(Prefix(cut));
        auto r = ReadAll(Meta());
        ASSERT_EQ(LOGFS_ECORRUPT, r.status) << "cut at " << cut;
        ASSERT_TRUE(Mentions(r.err.msg, "metalog truncated below its sealed length " + std::to_string(sealed)))
            << r.err.msg;
    }
    // Cut inside epoch 2's WRITE: epochs 0 and 1 are whole.
    Put(Prefix(records[4].offset + 3));
    EXPECT_EQ(LOGFS_ECORRUPT, Build(false));
    EXPECT_TRUE(Mentions(err.msg, "truncated below its sealed length")) << err.msg;
    ASSERT_EQ(LOGFS_OK, Build(true)) << err.msg;
    EXPECT_EQ(2u, logfs_plan_nepochs(plan));
    EXPECT_EQ(models[1], Replay());
    // Cut at a record boundary looks like a clean end without the seal.
    Put(Prefix(records[4].offset));
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_EQ(records[4].offset, r.bad_offset);
}

TEST_F(Seal, MissingSealBehavesAsBefore)
{
    Log(3, false);
    ASSERT_EQ(0, unlink(SealFile().c_str()));
    EXPECT_EQ(LOGFS_SEAL_NONE, SealOf(Meta()).state);
    auto bad = log;
    bad[records[2].offset + 6] ^= 0x10;
    Put(bad);
    logfs_reader *rd;
    ASSERT_EQ(LOGFS_OK, logfs_reader_open(Meta().c_str(), &rd, &err)) << err.msg;
    EXPECT_EQ(LOGFS_SEAL_NONE, logfs_reader_seal(rd, nullptr));
    EXPECT_EQ(0u, logfs_reader_sealed_length(rd));
    logfs_reader_close(rd);
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_END, r.status) << "an older log: a length past the end is a torn tail";
    EXPECT_EQ(2u, r.records.size());
    EXPECT_EQ(log.size() - records[2].offset, r.torn);
    ASSERT_EQ(LOGFS_OK, Build(false)) << err.msg;
    EXPECT_EQ(1u, logfs_plan_nepochs(plan));
    Put(Prefix(records[3].offset + 2));
    EXPECT_EQ(LOGFS_END, ReadAll(Meta()).status);
}

TEST_F(Seal, CrashBeforeTheFirstSyncLeavesASealThatSaysNothing)
{
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto d = Pattern(100, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, d.data(), d.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));
    logfs_writer_abandon(w);
    ASSERT_TRUE(Exists(SealFile()));
    EXPECT_EQ(LOGFS_SEAL_UNKNOWN, SealOf(Meta()).state);
    log = ReadFile(Meta());
    Put(Prefix(log.size() - 4));
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_GT(r.torn, 0u);
}

TEST_F(Seal, TornSealWriteFallsBackToPreviousSeal)
{
    Log(3, false); // seals 1, 2, 3 in slots 1, 0, 1
    auto file = ReadFile(SealFile());
    ASSERT_EQ((size_t)LOGFS_SEAL_FILE_LEN, file.size());
    // What slot 1 held before seal 3 overwrote it: seal 1.
    logfs_seal one{};
    one.seq = 1;
    one.file_id = 42;
    one.rank = 0;
    one.nwriters = 1;
    one.length = seals[0];
    one.epochs = 1;
    uint8_t old[LOGFS_SEAL_SLOT_LEN];
    logfs_seal_encode(old, &one);
    logfs_seal check;
    ASSERT_EQ(1, logfs_seal_decode(old, &check));
    // Seal 3's write torn after k bytes: the new head over the old tail.
    for (unsigned k = 0; k <= LOGFS_SEAL_SLOT_LEN; k++) {
        auto torn = file;
        std::copy(old + k, old + LOGFS_SEAL_SLOT_LEN, torn.begin() + LOGFS_SEAL_SLOT_LEN + k);
        WriteFile(SealFile(), torn);
        auto s = SealOf(Meta());
        ASSERT_EQ(LOGFS_SEAL_VALID, s.state) << "torn at " << k;
        if (k == LOGFS_SEAL_SLOT_LEN) {
            ASSERT_EQ(3u, s.seq);
            ASSERT_EQ(seals[2], s.length);
        } else {
            ASSERT_EQ(2u, s.seq) << "torn at " << k;
            ASSERT_EQ(seals[1], s.length) << "torn at " << k;
        }
    }
    // Torn in the middle of the length field: the reader falls back to seal 2.
    auto torn = file;
    std::copy(old + 44, old + LOGFS_SEAL_SLOT_LEN, torn.begin() + LOGFS_SEAL_SLOT_LEN + 44);
    WriteFile(SealFile(), torn);
    logfs_reader *rd;
    ASSERT_EQ(LOGFS_OK, logfs_reader_open(Meta().c_str(), &rd, &err)) << err.msg;
    EXPECT_EQ(seals[1], logfs_reader_sealed_length(rd));
    logfs_reader_close(rd);
    Put(Prefix(seals[2] - 2)); // inside epoch 2's SYNC: past the fallback seal, a torn tail
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(5u, r.records.size());
    Put(Prefix(seals[1] - 2)); // still below it: corruption
    EXPECT_EQ(LOGFS_ECORRUPT, ReadAll(Meta()).status);
    // Both slots damaged: the seal says nothing, the old rule applies.
    torn[3] ^= 1;
    WriteFile(SealFile(), torn);
    auto s = SealOf(Meta());
    EXPECT_EQ(LOGFS_SEAL_UNKNOWN, s.state);
    EXPECT_EQ(0, s.valid_slots);
    EXPECT_EQ(LOGFS_END, ReadAll(Meta()).status);
}

TEST_F(Seal, ANewLogOfTheSameNameIsNotJudgedByTheOldSeal)
{
    // The old seal (of the same file id and rank) says the metalog is much
    // longer than the new one is when its writer crashes right after open.
    for (int exclusive = 0; exclusive < 2; exclusive++) {
        Log(3, true);
        if (exclusive) { // old logs removed without their seal
            ASSERT_EQ(0, unlink(Meta().c_str()));
            ASSERT_EQ(0, unlink(dir.file("f.datalog").c_str()));
        }
        ASSERT_EQ(LOGFS_SEAL_VALID, SealOf(Meta()).state);
        auto o = Opts(dir, "f");
        o.exclusive = exclusive;
        logfs_writer *w;
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        logfs_writer_abandon(w);
        EXPECT_EQ(LOGFS_SEAL_UNKNOWN, SealOf(Meta()).state) << "exclusive " << exclusive;
        auto r = ReadAll(Meta());
        EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
        EXPECT_EQ(0u, r.records.size());
    }
}

TEST_F(Seal, ASealOfAnotherLogIsIgnored)
{
    Log(3, true);
    auto o = Opts(dir, "g", 0, 1, 43);
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    WriteFile(dir.file("g.sealed"), ReadFile(SealFile()));
    logfs_reader *rd;
    ASSERT_EQ(LOGFS_OK, logfs_reader_open(dir.file("g.metalog").c_str(), &rd, &err)) << err.msg;
    logfs_seal s;
    EXPECT_EQ(LOGFS_SEAL_FOREIGN, logfs_reader_seal(rd, &s));
    EXPECT_EQ(42u, s.file_id);
    EXPECT_EQ(0u, logfs_reader_sealed_length(rd));
    logfs_reader_close(rd);
    EXPECT_EQ(LOGFS_END, ReadAll(dir.file("g.metalog")).status);
}

TEST_F(Seal, ASealPastTheSyncItNamesIsCorruption)
{
    Log(3, true);
    // A seal whose length ends a WRITE record, not a SYNC: it cannot be this log's.
    logfs_seal s = SealOf(Meta());
    s.seq = 9;
    s.length = records[2].offset + LOGFS_REC_HEADER_LEN + records[2].length;
    uint8_t slot[LOGFS_SEAL_SLOT_LEN];
    logfs_seal_encode(slot, &s);
    auto file = ReadFile(SealFile());
    std::copy(slot, slot + LOGFS_SEAL_SLOT_LEN, file.begin() + LOGFS_SEAL_SLOT_LEN);
    WriteFile(SealFile(), file);
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_TRUE(Mentions(r.err.msg, "does not end the SYNC/CLOSE")) << r.err.msg;
}

TEST_F(Seal, LogRemoveDeletesAllFiles)
{
    Log(2, true);
    std::vector<std::string> files = {Meta(), dir.file("f.datalog"), SealFile()};
    for (auto &f : files)
        ASSERT_TRUE(Exists(f)) << f;
    ASSERT_EQ(LOGFS_OK, logfs_log_remove(Meta().c_str(), &err)) << err.msg;
    for (auto &f : files)
        EXPECT_FALSE(Exists(f)) << f;
    EXPECT_EQ(LOGFS_OK, logfs_log_remove(Meta().c_str(), &err)) << "missing files are fine";
    // An older log without a seal.
    Log(1, true);
    ASSERT_EQ(0, unlink(SealFile().c_str()));
    ASSERT_EQ(LOGFS_OK, logfs_log_remove(Meta().c_str(), &err)) << err.msg;
    for (auto &f : files)
        EXPECT_FALSE(Exists(f)) << f;
}

TEST_F(Seal, ASizeSeenBeforeServesWhereTheSealIsWithinIt)
{
    // A view's look at a live writer's log gives the reader the size it
    // saw: within it a seal serves as ever, and the reader reads that far
    // and no further (the writes flushed after the last sync are past it).
    Log(3, false, 2);
    ASSERT_LT(seals.back(), log.size());
    uint64_t sealed = 0;
    auto upto = ReadKeptUpTo(Meta(), seals.back(), &sealed);
    EXPECT_EQ(LOGFS_END, upto.status) << upto.err.msg;
    EXPECT_EQ(seals.back(), sealed);
    EXPECT_EQ(6u, upto.records.size()) << "three epochs' write and sync, no unsynced write";
    // A size below the seal: a sync since, or a log cut short: the reader
    // looks at the file itself, and reads it all.
    auto below = ReadKeptUpTo(Meta(), seals[0], &sealed);
    EXPECT_EQ(LOGFS_END, below.status) << below.err.msg;
    EXPECT_EQ(records.size(), below.records.size());
    // So a metalog cut below its seal is still corruption.
    Put(Prefix(seals.back() - 10));
    EXPECT_EQ(LOGFS_ECORRUPT, ReadKeptUpTo(Meta(), seals[0], &sealed).status);
}

// A sync of an epoch with no record writes nothing (MPI_File_sync with
// nothing new cost a metalog and a seal write); its SYNC record is queued
// before the next record, so the epochs still line up across writers.
TEST_F(Seal, ASyncOfAnEmptyEpochWritesNothingYetCountsBeforeTheNextRecord)
{
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto a = Pattern(1000, 1), b = Pattern(200, 2);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    uint64_t meta = FileSize(Meta()), seq = SealOf(Meta()).seq;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    EXPECT_EQ(meta, FileSize(Meta())) << "an empty epoch's sync wrote the metalog";
    EXPECT_EQ(seq, SealOf(Meta()).seq) << "an empty epoch's sync wrote the seal";
    EXPECT_EQ(3u, logfs_writer_epoch(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 100, b.data(), b.size(), &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;

    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    std::vector<uint64_t> ended;    // the epoch each SYNC/CLOSE closes, in order
    uint64_t second_write_epoch = 0;
    int writes = 0;
    for (auto &rec : r.records) {
        if (rec.type == LOGFS_REC_SYNC || rec.type == LOGFS_REC_CLOSE)
            ended.push_back(rec.u.sync.epoch);
        if (rec.type == LOGFS_REC_WRITE && ++writes == 2)
            second_write_epoch = rec.epoch;
    }
    EXPECT_EQ((std::vector<uint64_t>{0, 1, 2, 3, 4}), ended);
    EXPECT_EQ(3u, second_write_epoch) << "the write after two empty syncs is in epoch 3";
    EXPECT_EQ(5u, SealOf(Meta()).epochs);
    ASSERT_EQ(LOGFS_OK, Build(false)) << err.msg;
    EXPECT_EQ(5u, logfs_plan_nepochs(plan));
    auto model = a;
    std::copy(b.begin(), b.end(), model.begin() + 100);
    EXPECT_EQ(model, Replay());
}

TEST_F(Seal, SyncsOfEmptyEpochsBeforeACloseAreWrittenBeforeIt)
{
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    auto a = Pattern(1000, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    std::vector<int> types;
    for (auto &rec : r.records)
        if (rec.type == LOGFS_REC_SYNC || rec.type == LOGFS_REC_CLOSE)
            types.push_back(rec.type);
    EXPECT_EQ((std::vector<int>{LOGFS_REC_SYNC, LOGFS_REC_SYNC, LOGFS_REC_SYNC, LOGFS_REC_CLOSE}),
              types);
    auto s = SealOf(Meta());
    EXPECT_EQ(4u, s.epochs);
    EXPECT_TRUE(s.closed);
    EXPECT_EQ(FileSize(Meta()), s.length);
}
