#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "helpers.h"

class Writer : public ::testing::Test {
  protected:
    void Open(logfs_writer_opts o)
    {
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    }
    void Open() { Open(Opts(dir, "f")); }
    void Close()
    {
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
        w = nullptr;
    }
    void TearDown() override { logfs_writer_abandon(w); }
    std::string Meta() { return dir.file("f.metalog"); }
    std::string Data() { return dir.file("f.datalog"); }
    TempDir dir;
    logfs_writer *w = nullptr;
    logfs_error err{};
};

TEST_F(Writer, LogFilesArePrivateToTheUser)
{
    Open();
    Close();
    EXPECT_EQ(0600u, FileMode(Meta()));
    EXPECT_EQ(0600u, FileMode(Data()));
}

TEST_F(Writer, CreatedLogDirectoryIsPrivateToTheUser)
{
    auto o = Opts(dir, "f");
    std::string sub = dir.file("logs");
    o.dir = sub.c_str();
    o.create_dir = 1;
    Open(o);
    EXPECT_EQ(0700u, FileMode(sub));
}

// Old logs at the same names (a non-exclusive open) are emptied, while a
// new, empty one is left alone (see logfs_open_own: ext4 would flush it).
TEST_F(Writer, OpeningOverOldLogsEmptiesThem)
{
    WriteFile(Data(), std::vector<uint8_t>(5000, 9));
    WriteFile(Meta(), std::vector<uint8_t>(300, 9));
    Open();
    Close();
    EXPECT_EQ(0u, FileSize(Data()));  // (a pmem datalog is mapped bigger while open)
    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    ASSERT_EQ(1u, r.records.size());
    EXPECT_EQ(LOGFS_REC_CLOSE, r.records[0].type);
}

TEST_F(Writer, HeaderRecordCarriesFileIdRankAndWriterCount)
{
    Open(Opts(dir, "f", 3, 8, 0x1122334455667788ull));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(LOGFS_FORMAT_VERSION, r.header.version);
    EXPECT_EQ(0x1122334455667788ull, r.header.file_id);
    EXPECT_EQ(3u, r.header.rank);
    EXPECT_EQ(8u, r.header.nwriters);
    ASSERT_EQ(1u, r.records.size());
    EXPECT_EQ(LOGFS_REC_CLOSE, r.records[0].type);
}

TEST_F(Writer, HeaderIsOnDiskAsSoonAsTheWriterIsOpen)
{
    Open();
    auto r = ReadAll(Meta());
    EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(0u, r.records.size());
}

TEST_F(Writer, AMillionBlockVectorIsOneSmallRecord)
{
    Open();
    std::vector<uint8_t> block(8, 0xab);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    for (uint64_t i = 0; i < 1000000; i++)
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, i * 64, 8, block.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    Close();
    EXPECT_LT(FileSize(Meta()), 100u);
    EXPECT_EQ(8000000u, FileSize(Data()));
    auto r = ReadAll(Meta());
    ASSERT_EQ(2u, r.records.size());
    ASSERT_EQ(1u, r.groups[0].size());
    EXPECT_EQ(1000000u, r.groups[0][0].count);
    EXPECT_EQ(64, r.groups[0][0].stride);
    EXPECT_LT(r.records[0].length, 30u);
}

TEST_F(Writer, IncompressibleExtentsCostAtMost24BytesEach)
{
    Open();
    std::mt19937_64 rng(1);
    std::vector<uint8_t> data(4096, 1);
    const int n = 100000;
    uint64_t before = 0;
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    for (int i = 0; i < n; i++) {
        uint64_t off = (rng() % (1ull << 62)) + 1; // large offsets: long varints
        uint64_t len = 1 + rng() % 4000;
        len = len % 16 + 1; // lengths vary; the datalog stays small
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, off, len, data.data(), &err));
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));
    before = FileSize(Meta());
    EXPECT_LE((double)before / n, 24.0);
}

TEST_F(Writer, DataLandsInTheDatalogInCallOrder)
{
    Open();
    auto a = Pattern(1000, 1), b = Pattern(3000, 2), c = Pattern(10, 3);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 5000, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, 0, 3000, b.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, 90000, 10, c.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    Close();
    auto d = ReadFile(Data());
    std::vector<uint8_t> want = a;
    want.insert(want.end(), b.begin(), b.end());
    want.insert(want.end(), c.begin(), c.end());
    EXPECT_EQ(want, d);
    auto r = ReadAll(Meta());
    ASSERT_EQ(3u, r.records.size());
    EXPECT_EQ(0u, r.records[0].u.write.dlog_off);
    EXPECT_EQ(1000u, r.records[1].u.write.dlog_off);
    EXPECT_EQ(3010u, r.records[1].u.write.nbytes);
}

TEST_F(Writer, ContiguousPiecesMergeBeforeStridesAreFound)
{
    // File blocks of 8 bytes every 32, each fed as two 4-byte memory pieces.
    Open();
    std::vector<uint8_t> four(4, 7);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    for (uint64_t i = 0; i < 1000; i++) {
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, i * 32, 4, four.data(), &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, i * 32 + 4, 4, four.data(), &err));
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(1u, r.groups[0].size());
    EXPECT_EQ(8u, r.groups[0][0].blocklen);
    EXPECT_EQ(1000u, r.groups[0][0].count);
}

TEST_F(Writer, SyncClosesTheEpochAndRecordsTheDatalogLength)
{
    Open();
    auto a = Pattern(100, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(0u, logfs_writer_epoch(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    ASSERT_EQ(1u, logfs_writer_epoch(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), 50, &err));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(4u, r.records.size());
    EXPECT_EQ(LOGFS_REC_SYNC, r.records[1].type);
    EXPECT_EQ(0u, r.records[1].u.sync.epoch);
    EXPECT_EQ(100u, r.records[1].u.sync.dlog_len);
    EXPECT_EQ(1u, r.records[2].epoch);
    EXPECT_EQ(LOGFS_REC_CLOSE, r.records[3].type);
    EXPECT_EQ(1u, r.records[3].u.sync.epoch);
    EXPECT_EQ(150u, r.records[3].u.sync.dlog_len);
}

// Checks, from the files alone, that every WRITE record on disk has its data.
static void ExpectDataBeforeMetadata(const std::string &meta, const std::string &data)
{
    auto bytes = ReadFile(meta);
    uint64_t dlen = FileSize(data);
    auto r = ReadAllMem(bytes);
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    for (auto &rec : r.records) {
        if (rec.type == LOGFS_REC_WRITE) {
            ASSERT_LE(rec.u.write.dlog_off + rec.u.write.nbytes, dlen)
                << "record at " << rec.offset << " points past the datalog";
        }
    }
}

TEST_F(Writer, DataReachesTheDatalogBeforeTheRecordThatPointsAtIt)
{
    auto o = Opts(dir, "f");
    o.buffer_size = 8192;
    o.pmem = LOGFS_PMEM_NEVER;
    Open(o);
    std::mt19937 rng(5);
    std::vector<uint8_t> data(70000, 3);
    for (int i = 0; i < 3000; i++) {
        // Many small and some large calls, so both logs flush at odd moments.
        uint64_t len = i % 100 == 0 ? 60000 : 1 + rng() % 700;
        ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
        for (int k = 0; k < 30; k++)
            ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, rng() % 100000 * 8, len / 30 + 1, data.data(), &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
        if (i % 97 == 0)
            ExpectDataBeforeMetadata(Meta(), Data());
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    ExpectDataBeforeMetadata(Meta(), Data());
}

TEST_F(Writer, SmallWritesAreAggregatedIntoLargeDatalogWrites)
{
    auto o = Opts(dir, "f");
    o.buffer_size = 1 << 20;
    o.pmem = LOGFS_PMEM_NEVER;
    Open(o);
    std::vector<uint8_t> d(1000, 9);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, (uint64_t)i * 1000, d.data(), d.size(), &err));
    EXPECT_EQ(0u, FileSize(Data())) << "small writes went to the file one by one";
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, (uint64_t)i * 1000, d.data(), d.size(), &err));
    EXPECT_EQ(1u << 20, FileSize(Data()));
}

TEST_F(Writer, HugeCallsAreSplitIntoSelfContainedRecords)
{
    Open();
    std::mt19937_64 rng(9);
    std::vector<uint8_t> d(64, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    uint64_t total = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t len = 1 + rng() % 64;
        total += len;
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, rng() % (1ull << 50), len, d.data(), &err));
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    ASSERT_GT(r.records.size(), 3u);
    uint64_t next = 0;
    for (auto &rec : r.records) {
        if (rec.type != LOGFS_REC_WRITE)
            continue;
        EXPECT_LE(rec.length, LOGFS_WRITE_RECORD_SOFT_MAX + 64);
        EXPECT_EQ(next, rec.u.write.dlog_off);
        next = rec.u.write.dlog_off + rec.u.write.nbytes;
    }
    EXPECT_EQ(total, next);
}

TEST_F(Writer, CallsOutOfOrderAreRejected)
{
    Open();
    uint8_t b = 0;
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_add_extent(w, 0, 1, &b, &err));
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_end_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_begin_write(w, &err));
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_sync(w, &err));
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_set_size(w, 0, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    EXPECT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
}

TEST_F(Writer, ExtentsPastTwoToTheSixtyThirdAreRejected)
{
    Open();
    uint8_t b[2] = {0, 0};
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    EXPECT_EQ(LOGFS_ERANGE, logfs_writer_add_extent(w, LOGFS_MAX_FILE_END - 1, 2, b, &err));
    EXPECT_EQ(LOGFS_ERANGE, logfs_writer_write(w, UINT64_MAX - 1, b, 1, &err));
    EXPECT_EQ(LOGFS_OK, logfs_writer_write(w, LOGFS_MAX_FILE_END - 1, b, 1, &err));
}

TEST_F(Writer, EmptyWriteCallsLogNothing)
{
    Open();
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, 100, 0, nullptr, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(1u, r.records.size());
    EXPECT_EQ(LOGFS_REC_CLOSE, r.records[0].type);
}

TEST_F(Writer, DurableSyncStillWritesEverything)
{
    auto o = Opts(dir, "f");
    o.durable = 1;
    Open(o);
    auto a = Pattern(5000, 4);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    auto d = ReadFile(Data()); // on pmem the file is the mapping: longer, zero-filled
    ASSERT_GE(d.size(), a.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), d.begin()));
    Close();
    EXPECT_EQ(a, ReadFile(Data()));
}

TEST_F(Writer, SetSizeIsLoggedInOrderWithWrites)
{
    Open();
    auto a = Pattern(10, 4);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 4, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 2, a.data(), 1, &err));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(4u, r.records.size());
    EXPECT_EQ(LOGFS_REC_WRITE, r.records[0].type);
    EXPECT_EQ(LOGFS_REC_SETSIZE, r.records[1].type);
    EXPECT_EQ(4u, r.records[1].u.setsize.size);
    EXPECT_EQ(LOGFS_REC_WRITE, r.records[2].type);
}

TEST_F(Writer, CollectiveCallsAreLoggedOnlyBeforeTheWritesTheyOrder)
{
    Open();
    auto a = Pattern(10, 4);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 2, &err)); // a call that wrote nothing
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 2, a.data(), 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 3, a.data(), 1, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 3, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 4, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 4, &err)); // nothing after it
    EXPECT_EQ(LOGFS_EINVAL, logfs_writer_order(w, 1, &err));
    Close();
    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    std::vector<int> types;
    for (auto &rec : r.records)
        types.push_back(rec.type);
    EXPECT_EQ((std::vector<int>{LOGFS_REC_WRITE, LOGFS_REC_ORDER, LOGFS_REC_WRITE, LOGFS_REC_WRITE,
                                LOGFS_REC_ORDER, LOGFS_REC_SETSIZE, LOGFS_REC_CLOSE}),
              types);
    EXPECT_EQ(2u, r.records[1].u.order.seq);
    EXPECT_EQ(3u, r.records[4].u.order.seq);
}

TEST_F(Writer, LargeAppendsBypassTheBufferWithoutReorderingData)
{
    auto o = Opts(dir, "f");
    o.buffer_size = 256 << 10;
    Open(o);
    std::vector<uint8_t> want;
    for (int i = 0; i < 40; i++) {
        // Small (buffered), large (written directly after the buffer), odd sizes.
        size_t len = i % 3 == 0 ? 100 + i : i % 3 == 1 ? (64 << 10) + i : (300 << 10);
        auto d = Pattern(len, (uint32_t)i);
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, want.size(), d.data(), d.size(), &err)) << err.msg;
        want.insert(want.end(), d.begin(), d.end());
    }
    std::vector<uint8_t> back(want.size());
    ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, 0, back.data(), back.size(), &err));
    EXPECT_EQ(want, back);
    Close();
    EXPECT_EQ(want, ReadFile(Data()));
}
