// carry_calls: separate write calls that continue one stride become one
// strided group (HDF5's independent strided writes are one 8-byte
// write_at per element), yet every call's bytes are read back at once, and
// syncs, order changes and failed calls record them in call order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "helpers.h"
#include "reader.h"
#include "writer.h"

namespace {

class Carry : public ::testing::Test {
  protected:
    void Open(bool carry, uint64_t quota = 0)
    {
        auto o = Opts(dir, "f");
        o.carry_calls = carry;
        o.max_datalog_bytes = quota;
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    }
    // Element i of a strided selection: 8 bytes at i * 32, one call each.
    void Element(uint64_t i)
    {
        uint8_t v[8];
        for (int b = 0; b < 8; b++)
            v[b] = (uint8_t) (i * 8 + b);
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, i * 32, v, 8, &err)) << err.msg;
    }
    std::vector<int> Types()
    {
        std::vector<int> t;
        for (const auto &r : ReadAll(dir.file("f.metalog")).records)
            t.push_back(r.type);
        return t;
    }
    void TearDown() override { logfs_writer_abandon(w); }
    TempDir dir;
    logfs_writer *w = nullptr;
    logfs_error err{};
};

size_t Count(const std::vector<int> &t, int type)
{
    size_t n = 0;
    for (int x : t)
        n += x == type;
    return n;
}

TEST_F(Carry, SeparateCallsThatContinueAStrideAreOneGroup)
{
    Open(true);
    for (uint64_t i = 0; i < 1000; i++)
        Element(i);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    auto r = ReadAll(dir.file("f.metalog"));
    size_t writes = 0, groups = 0;
    for (size_t k = 0; k < r.records.size(); k++)
        if (r.records[k].type == LOGFS_REC_WRITE) {
            writes++;
            groups += r.groups[k].size();
            EXPECT_EQ(8000u, r.records[k].u.write.nbytes);
        }
    EXPECT_EQ(1u, writes);
    EXPECT_LE(groups, 2u);      // the strided blocks, at most the last one apart
}

TEST_F(Carry, WithoutItEachCallIsARecord)
{
    Open(false);
    for (uint64_t i = 0; i < 100; i++)
        Element(i);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    EXPECT_EQ(100u, Count(Types(), LOGFS_REC_WRITE));
}

struct Seen {
    std::vector<logfs_piece> p;
};

int Collect(void *arg, const logfs_piece *p)
{
    static_cast<Seen *>(arg)->p.push_back(*p);
    return 0;
}

TEST_F(Carry, EveryCarriedCallIsReadBackAtOnce)
{
    Open(true);
    for (uint64_t i = 0; i < 10; i++) {
        Element(i);
        Seen s;
        ASSERT_EQ(LOGFS_OK, logfs_writer_lookup(w, i * 32, 8, 0, Collect, &s));
        ASSERT_EQ(1u, s.p.size());
        ASSERT_EQ(LOGFS_PIECE_LOG, s.p[0].kind) << "element " << i;
        uint8_t got[8];
        ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, s.p[0].dlog_off, got, 8, &err));
        for (int b = 0; b < 8; b++)
            ASSERT_EQ((uint8_t) (i * 8 + b), got[b]);
    }
}

TEST_F(Carry, AnOrderChangeRecordsTheCarriedCallsFirst)
{
    Open(true);
    for (uint64_t i = 0; i < 5; i++)
        Element(i);
    ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 1, &err));
    for (uint64_t i = 5; i < 10; i++)
        Element(i);
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err));
    auto t = Types();
    // the first five's WRITE, then ORDER before the next five's
    ASSERT_EQ(3u, t.size());
    EXPECT_EQ(LOGFS_REC_WRITE, t[0]);
    EXPECT_EQ(LOGFS_REC_ORDER, t[1]);
    EXPECT_EQ(LOGFS_REC_WRITE, t[2]);
}

TEST_F(Carry, ACallThatFailsKeepsWhatEarlierCallsCarried)
{
    Open(true, 8 * 3);          // room for three elements
    for (uint64_t i = 0; i < 3; i++)
        Element(i);
    uint8_t v[8] = {0};
    EXPECT_EQ(LOGFS_ENOSPC, logfs_writer_write(w, 3 * 32, v, 8, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    auto r = ReadAll(dir.file("f.metalog"));
    uint64_t bytes = 0;
    for (const auto &rec : r.records)
        if (rec.type == LOGFS_REC_WRITE)
            bytes += rec.u.write.nbytes;
    EXPECT_EQ(24u, bytes);      // the three that returned, not the failed one
}

}  // namespace
