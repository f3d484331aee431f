// Reader rules, checked by corrupting real bytes of real metalog files.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "coding.h"
#include "helpers.h"

class Reader : public ::testing::Test {
  protected:
    // A log with a header, three WRITEs, a SYNC, a SETSIZE and a CLOSE.
    void SetUp() override
    {
        auto o = Opts(dir, "f");
        logfs_writer *w;
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        auto d = Pattern(4096, 1);
        for (int i = 0; i < 3; i++)
            ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, (uint64_t)i * 10000, d.data(), 100 + i, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 5, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
        log = ReadFile(dir.file("f.metalog"));
        auto r = ReadAll(dir.file("f.metalog"));
        ASSERT_EQ(LOGFS_END, r.status);
        ASSERT_EQ(6u, r.records.size());
        for (auto &rec : r.records)
            offsets.push_back(rec.offset);
    }
    ReadResult Reread(const std::vector<uint8_t> &bytes)
    {
        WriteFile(dir.file("g.metalog"), bytes);
        return ReadAll(dir.file("g.metalog"));
    }
    TempDir dir;
    logfs_error err{};
    std::vector<uint8_t> log;
    std::vector<uint64_t> offsets; // of the records after the header
};

TEST_F(Reader, CleanLogReadsBackEveryRecordInOrder)
{
    auto r = Reread(log);
    ASSERT_EQ(LOGFS_END, r.status);
    std::vector<int> types;
    for (auto &rec : r.records)
        types.push_back(rec.type);
    EXPECT_EQ((std::vector<int>{LOGFS_REC_WRITE, LOGFS_REC_WRITE, LOGFS_REC_WRITE, LOGFS_REC_SYNC,
                                LOGFS_REC_SETSIZE, LOGFS_REC_CLOSE}),
              types);
    EXPECT_EQ(0u, r.torn);
}

TEST_F(Reader, TruncatedTrailingRecordIsIgnored)
{
    uint64_t last = offsets.back();
    for (uint64_t cut = last + 1; cut < log.size(); cut++) {
        std::vector<uint8_t> t(log.begin(), log.begin() + (long)cut);
        auto r = Reread(t);
        ASSERT_EQ(LOGFS_END, r.status) << "cut at " << cut << ": " << r.err.msg;
        ASSERT_EQ(5u, r.records.size());
        EXPECT_EQ(cut - last, r.torn);
    }
}

TEST_F(Reader, TruncationAtARecordBoundaryIsACleanEndWithNothingTorn)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_END, r.status);
    EXPECT_EQ(3u, r.records.size());
    EXPECT_EQ(0u, r.torn);
}

TEST_F(Reader, ChecksumMismatchInTheMiddleIsReportedWithOffsetAndBytesDropped)
{
    auto bad = log;
    bad[offsets[1] + LOGFS_REC_HEADER_LEN] ^= 0x40; // payload of the 2nd WRITE
    auto r = Reread(bad);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_EQ(1u, r.records.size()) << "records before the damage are kept";
    EXPECT_EQ(offsets[1], r.bad_offset);
    EXPECT_EQ(log.size() - offsets[1], r.dropped);
    std::string msg = r.err.msg;
    EXPECT_NE(std::string::npos, msg.find("checksum mismatch")) << msg;
    EXPECT_NE(std::string::npos, msg.find("offset " + std::to_string(offsets[1]))) << msg;
    EXPECT_NE(std::string::npos, msg.find(std::to_string(r.dropped) + " bytes dropped")) << msg;
}

TEST_F(Reader, EveryFlippedBitIsCaught)
{
    // Flip each bit of the SYNC record in turn: never silently accepted.
    for (uint64_t at = offsets[3]; at < offsets[4]; at++)
        for (int bit = 0; bit < 8; bit++) {
            auto bad = log;
            bad[at] ^= (uint8_t)(1 << bit);
            auto r = ReadAllMem(bad);
            ASSERT_NE(LOGFS_OK, r.status);
            bool intact = r.records.size() == 6 && r.status == LOGFS_END;
            ASSERT_FALSE(intact) << "flip at " << at << " bit " << bit << " went unnoticed";
        }
}

TEST_F(Reader, CorruptionIsSticky)
{
    auto bad = log;
    bad[offsets[0] + 2] ^= 1; // inside the crc
    logfs_reader *r;
    ASSERT_EQ(LOGFS_OK, logfs_reader_open_mem(bad.data(), bad.size(), &r, &err));
    logfs_record rec;
    EXPECT_EQ(LOGFS_ECORRUPT, logfs_reader_next(r, &rec, &err));
    logfs_error again{};
    EXPECT_EQ(LOGFS_ECORRUPT, logfs_reader_next(r, &rec, &again));
    EXPECT_STREQ(err.msg, again.msg);
    EXPECT_EQ(LOGFS_ECORRUPT, logfs_reader_next(r, &rec, nullptr));
    logfs_reader_close(r);
}

TEST_F(Reader, ADamagedTypeByteIsCorruptionNotAnUnknownType)
{
    auto bad = log;
    bad[offsets[2] + 8] = 77; // the checksum covers the type
    auto r = Reread(bad);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_EQ(offsets[2], r.bad_offset);
}

TEST_F(Reader, UnknownRecordTypeWithAValidChecksumIsAClearError)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    AppendRecord(t, 99, {1, 2, 3});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_ETYPE, r.status);
    EXPECT_EQ(3u, r.records.size());
    EXPECT_NE(std::string::npos, std::string(r.err.msg).find("unknown record type 99")) << r.err.msg;
}

TEST_F(Reader, UnknownFormatVersionIsAClearError)
{
    auto bad = log;
    logfs_put32(&bad[LOGFS_REC_HEADER_LEN + 8], LOGFS_FORMAT_VERSION + 1);
    FixChecksum(bad, 0);
    auto r = Reread(bad);
    EXPECT_EQ(LOGFS_EVERSION, r.status);
    EXPECT_NE(std::string::npos,
              std::string(r.err.msg).find("version " + std::to_string(LOGFS_FORMAT_VERSION + 1)))
        << r.err.msg;
}

TEST_F(Reader, Version1MetalogsWithoutOrderRecordsAreStillRead)
{
    auto old = log;
    logfs_put32(&old[LOGFS_REC_HEADER_LEN + 8], 1);
    FixChecksum(old, 0);
    auto r = Reread(old);
    EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(6u, r.records.size());
}

TEST_F(Reader, OrderRecordsAreReadWithTheirCount)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    AppendRecord(t, LOGFS_REC_ORDER, {3});
    AppendRecord(t, LOGFS_REC_ORDER, {3});
    AppendRecord(t, LOGFS_REC_ORDER, {0x80, 0x01});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
    ASSERT_EQ(6u, r.records.size());
    EXPECT_EQ(LOGFS_REC_ORDER, r.records[3].type);
    EXPECT_EQ(3u, r.records[3].u.order.seq);
    EXPECT_EQ(128u, r.records[5].u.order.seq);
}

TEST_F(Reader, AnOrderRecordGoingBackwardsIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    AppendRecord(t, LOGFS_REC_ORDER, {5});
    AppendRecord(t, LOGFS_REC_ORDER, {4});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_NE(std::string::npos, std::string(r.err.msg).find("ORDER record going backwards"))
        << r.err.msg;
}

TEST_F(Reader, AnOrderRecordInAVersion1MetalogIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    logfs_put32(&t[LOGFS_REC_HEADER_LEN + 8], 1);
    FixChecksum(t, 0);
    AppendRecord(t, LOGFS_REC_ORDER, {1});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
}

TEST_F(Reader, BadMagicIsNotAMetalog)
{
    auto bad = log;
    bad[LOGFS_REC_HEADER_LEN] = 'X';
    FixChecksum(bad, 0);
    EXPECT_EQ(LOGFS_EFORMAT, Reread(bad).status);
}

TEST_F(Reader, EmptyOrTornHeaderIsNotAMetalog)
{
    EXPECT_EQ(LOGFS_EFORMAT, Reread({}).status);
    std::vector<uint8_t> t(log.begin(), log.begin() + 20);
    EXPECT_EQ(LOGFS_EFORMAT, Reread(t).status);
}

TEST_F(Reader, MissingMetalogIsENOENT)
{
    auto r = ReadAll(dir.file("nope.metalog"));
    EXPECT_EQ(LOGFS_ENOENT, r.status);
    EXPECT_NE(std::string::npos, std::string(r.err.msg).find("nope.metalog")) << r.err.msg;
}

TEST_F(Reader, ALengthBeyondTheFormatLimitIsCorruption)
{
    auto bad = log;
    logfs_put32(&bad[offsets[1] + 4], LOGFS_MAX_PAYLOAD + 1);
    auto r = Reread(bad);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_EQ(offsets[1], r.bad_offset);
}

TEST_F(Reader, MalformedWriteWithAValidChecksumIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    // dlog_off past the previous writes, nbytes 8, one group with count 0.
    AppendRecord(t, LOGFS_REC_WRITE, {0x80, 0x10, 8, 0, 0, 8});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_EQ(offsets[3], r.bad_offset);
}

TEST_F(Reader, WriteWhoseGroupsDoNotAddUpIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    AppendRecord(t, LOGFS_REC_WRITE, {0x80, 0x10, 9, 1, 0, 8});
    EXPECT_EQ(LOGFS_ECORRUPT, Reread(t).status);
}

TEST_F(Reader, WritePointingBackwardsInTheDatalogIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    AppendRecord(t, LOGFS_REC_WRITE, {0, 8, 1, 0, 8});
    EXPECT_EQ(LOGFS_ECORRUPT, Reread(t).status);
}

TEST_F(Reader, EpochOutOfSequenceIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    AppendRecord(t, LOGFS_REC_SYNC, {5, 0x80, 0x10});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_ECORRUPT, r.status);
    EXPECT_NE(std::string::npos, std::string(r.err.msg).find("epoch")) << r.err.msg;
}

TEST_F(Reader, ASecondHeaderIsCorruption)
{
    std::vector<uint8_t> t(log.begin(), log.begin() + (long)offsets[3]);
    std::vector<uint8_t> hdr(log.begin() + LOGFS_REC_HEADER_LEN, log.begin() + (long)offsets[0]);
    AppendRecord(t, LOGFS_REC_HEADER, hdr);
    EXPECT_EQ(LOGFS_ECORRUPT, Reread(t).status);
}

TEST_F(Reader, BytesAfterCloseAreIgnored)
{
    auto t = log;
    AppendRecord(t, LOGFS_REC_SYNC, {1, 0});
    auto r = Reread(t);
    EXPECT_EQ(LOGFS_END, r.status);
    EXPECT_EQ(6u, r.records.size());
    EXPECT_EQ(t.size() - log.size(), r.torn);
}

TEST_F(Reader, RecordsLargerThanTheReadWindowAreRead)
{
    auto o = Opts(dir, "big");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    std::mt19937_64 rng(2);
    uint8_t b = 1;
    for (int c = 0; c < 20; c++) {
        ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
        for (int i = 0; i < 30000; i++)
            ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, rng() % (1ull << 60), 1, &b, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    ASSERT_GT(FileSize(dir.file("big.metalog")), 2u << 20);
    auto r = ReadAll(dir.file("big.metalog"));
    EXPECT_EQ(LOGFS_END, r.status) << r.err.msg;
    uint64_t blocks = 0;
    for (auto &gs : r.groups)
        for (auto &g : gs)
            blocks += g.count;
    EXPECT_EQ(600000u, blocks);
}

TEST_F(Reader, RandomDamageNeverCrashesOrReadsOutOfBounds)
{
    std::mt19937 rng(11);
    for (int i = 0; i < 5000; i++) {
        auto bad = log;
        int edits = 1 + (int)(rng() % 4);
        for (int k = 0; k < edits; k++)
            bad[rng() % bad.size()] = (uint8_t)rng();
        if (rng() % 3 == 0)
            bad.resize(rng() % bad.size());
        // Sometimes make a damaged record well framed, to get past the checksum.
        uint64_t at = offsets[rng() % offsets.size()];
        if (rng() % 2 == 0 && at + LOGFS_REC_HEADER_LEN <= bad.size() &&
            logfs_get32(&bad[at + 4]) <= bad.size() - at - LOGFS_REC_HEADER_LEN)
            FixChecksum(bad, at);
        auto r = ReadAllMem(bad);
        ASSERT_TRUE(r.status == LOGFS_END || r.status == LOGFS_ECORRUPT || r.status == LOGFS_ETYPE ||
                    r.status == LOGFS_EFORMAT || r.status == LOGFS_EVERSION)
            << logfs_status_name(r.status);
    }
}
