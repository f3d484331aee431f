// Steps: collective calls of one block each (one 8-byte write_at_all per
// element) become one strided group after one ORDER with a step, yet the
// replay orders each block by its own call, as separate records would.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "fault.h"
#include "format.h"
#include "helpers.h"
#include "reader.h"
#include "writer.h"
#include "writers_fixture.h"

namespace {

class Steps : public LogWriters {
  protected:
    // Every writer passes the boundaries of collective call k (1-based).
    void Enter(uint64_t k)
    {
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 2 * k - 1, &err)) << err.msg;
    }
    void Leave(uint64_t k)
    {
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_order(w, 2 * k, &err)) << err.msg;
    }
    // The plan of the logs applied by m replayers.
    std::vector<uint8_t> Replayed(uint32_t m = 1)
    {
        Build();
        return Replay(m, "out" + std::to_string(m));
    }
    // What writer r's read-your-writes index gives for [off, off + len):
    // one piece of its log, read back; nothing if it gives anything else.
    std::vector<uint8_t> OwnBytes(uint32_t r, uint64_t off, uint64_t len)
    {
        std::vector<logfs_piece> seen;
        auto collect = [](void *a, const logfs_piece *p) {
            static_cast<std::vector<logfs_piece> *>(a)->push_back(*p);
            return 0;
        };
        std::vector<uint8_t> got(len);
        if (logfs_writer_lookup(ws[r], off, len, 0, collect, &seen) != LOGFS_OK
            || seen.size() != 1 || seen[0].kind != LOGFS_PIECE_LOG
            || logfs_writer_read_data(ws[r], seen[0].dlog_off, got.data(), len, &err) != LOGFS_OK)
            return {};
        return got;
    }
    std::vector<int> Types(uint32_t r)
    {
        std::vector<int> t;
        for (const auto &rec : ReadAll(metas[r]).records)
            t.push_back(rec.type);
        return t;
    }
};

TEST_F(Steps, OneBlockPerCollectiveCallIsOneRecord)
{
    Writers(2, true);
    for (uint64_t k = 1; k <= 1000; k++) {
        Enter(k);
        Write(0, (k - 1) * 16, 8, 0);
        Write(1, (k - 1) * 16 + 8, 8, 0);
        Leave(k);
    }
    CloseAll();
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    // (after the header) ORDER (seq 1, step 2), one WRITE of one group, CLOSE
    ASSERT_EQ((std::vector<int>{LOGFS_REC_ORDER, LOGFS_REC_WRITE, LOGFS_REC_CLOSE}), Types(0));
    EXPECT_EQ(1u, r.records[0].u.order.seq);
    EXPECT_EQ(2u, r.records[0].u.order.step);
    EXPECT_EQ(2u, r.records[1].u.write.seq_step);
    ASSERT_EQ(1u, r.groups[1].size());
    EXPECT_EQ(1000u, r.groups[1][0].count);
    EXPECT_EQ(16, r.groups[1][0].stride);
    EXPECT_LT(FileSize(metas[0]), 100u);
    EXPECT_EQ(model, Replayed(1));
    EXPECT_EQ(model, Replayed(2));
}

// Writer 0 writes the same 8 bytes in calls 1, 2 and 3 (one step group of
// stride 0); writer 1, of higher rank, writes them in call 2.  Call 3's
// write is the last: it must win, as it would from separate records.
TEST_F(Steps, EachBlockKeepsItsOwnCallAgainstOtherWriters)
{
    Writers(2, true);
    for (uint64_t k = 1; k <= 3; k++) {
        Enter(k);
        Write(0, 0, 8, (int) k);
        if (k == 2)
            Write(1, 0, 8, 9);
        Leave(k);
    }
    CloseAll();
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(3u, r.records.size());            // ORDER with a step, WRITE, CLOSE
    EXPECT_EQ(2u, r.records[0].u.order.step);
    EXPECT_EQ(0, r.groups[1][0].stride);
    EXPECT_EQ(Data(0, 0, 8, 3), Replayed(1));
}

// And a block of writer 0 made before writer 1's call loses to it.
TEST_F(Steps, ABlockOfAnEarlierCallLosesToALaterCallOfAnother)
{
    Writers(2, true);
    for (uint64_t k = 1; k <= 4; k++) {
        Enter(k);
        Write(0, k == 2 ? 8 : (k - 1) * 100, 8, (int) k, k != 2);
        if (k == 3)
            Write(1, 8, 8, 7);
        Leave(k);
    }
    CloseAll();
    auto r = ReadAll(metas[0]);
    EXPECT_EQ(2u, r.records[0].u.order.step);   // calls 1 and 2
    EXPECT_EQ(model, Replayed(1));
    EXPECT_EQ(model, Replayed(3));
}

// The pattern broken three ways: a call that skips a count, a block of
// another length, a call of two blocks.  Each time the steps so far go to
// their record first, and everything replays in call order.
TEST_F(Steps, ABrokenPatternQueuesTheStepsBeforeWhatFollows)
{
    Writers(1, true);
    uint64_t k = 1;
    for (; k <= 5; k++) {
        Enter(k);
        Write(0, k * 8, 8, 0);
        Leave(k);
    }
    k++;                        // a collective call that writes nothing
    Enter(k);
    Write(0, k * 8, 8, 0);
    Leave(k);
    k++;
    Enter(k);
    Write(0, k * 8, 4, 0);      // another length
    Leave(k);
    k++;
    Enter(k);
    {
        auto d = Data(0, 500, 16, 1);
        ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(ws[0], &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[0], 500, 8, d.data(), &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[0], 600, 8, d.data() + 8, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(ws[0], &err));
        Model(500, std::vector<uint8_t>(d.begin(), d.begin() + 8));
        Model(600, std::vector<uint8_t>(d.begin() + 8, d.end()));
    }
    Leave(k);
    Write(0, 4, 8, 2);          // independent, after the last call
    CloseAll();
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    uint64_t bytes = 0, steps = 0;
    for (size_t i = 0; i < r.records.size(); i++) {
        if (r.records[i].type == LOGFS_REC_WRITE)
            bytes += r.records[i].u.write.nbytes;
        steps += r.records[i].type == LOGFS_REC_ORDER && r.records[i].u.order.step;
    }
    EXPECT_EQ(5u * 8 + 8 + 4 + 16 + 8, bytes);
    EXPECT_EQ(1u, steps);       // calls 1-5
    EXPECT_EQ(model, Replayed(1));
}

// A sync, a flush and a set_size in the middle of steps settle them.
TEST_F(Steps, ASyncOrSetSizeSettlesThem)
{
    Writers(1, true);
    for (uint64_t k = 1; k <= 6; k++) {
        Enter(k);
        Write(0, k * 8, 8, (int) k);
        Leave(k);
        if (k == 3) {
            ASSERT_EQ(LOGFS_OK, logfs_writer_sync(ws[0], &err)) << err.msg;
        }
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(ws[0], 44, &err)) << err.msg;
    model.resize(44);
    CloseAll();
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(model, Replayed(1));
}

TEST_F(Steps, EveryBlockIsReadBackAtOnce)
{
    Writers(1, true);
    for (uint64_t k = 1; k <= 10; k++) {
        Enter(k);
        Write(0, k * 32, 8, (int) k);
        Leave(k);
        for (uint64_t j = 1; j <= k; j++) {
            ASSERT_EQ(Data(0, j * 32, 8, (int) j), OwnBytes(0, j * 32, 8))
                << "call " << j << " after " << k;
        }
    }
}

// A call that begins beside steps and queues a group of its own while it
// runs (three runs, the second of another length) wrote after the steps:
// its bytes win where they overlap a step's, in the index as in the log.
TEST_F(Steps, ACallBesideStepsWinsInTheIndexToo)
{
    Writers(1, true);
    for (uint64_t k = 1; k <= 3; k++) {
        Enter(k);
        Write(0, (k - 1) * 8, 8, (int) k);
        Leave(k);
    }
    Enter(4);
    auto a = Data(0, 8, 8, 9), b = Data(0, 100, 16, 9), c = Data(0, 200, 4, 9);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(ws[0], &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[0], 8, 8, a.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[0], 100, 16, b.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[0], 200, 4, c.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(ws[0], &err));
    Leave(4);
    Model(8, a);
    Model(100, b);
    Model(200, c);
    EXPECT_EQ(a, OwnBytes(0, 8, 8)) << "the index gave a step's older bytes";
    CloseAll();
    EXPECT_EQ(model, Replayed(1));
}

// A sync whose metalog write fails takes back its SYNC record, not the
// steps' records it settled first: the retry still logs their bytes.
TEST_F(Steps, AFailedSyncKeepsTheStepsForItsRetry)
{
    Writers(1, true);
    for (uint64_t k = 1; k <= 3; k++) {
        Enter(k);
        Write(0, k * 8, 8, (int) k);
        Leave(k);
    }
    setenv("BBFS_FAULT", "metalog-write:EIO:once", 1);
    unsetenv("BBFS_FAULT_RANK");
    logfs_fault_rearm();
    EXPECT_NE(LOGFS_OK, logfs_writer_sync(ws[0], &err));
    unsetenv("BBFS_FAULT");
    logfs_fault_rearm();
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(ws[0], &err)) << err.msg;
    CloseAll();
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    uint64_t bytes = 0;
    for (const auto &rec : r.records)
        if (rec.type == LOGFS_REC_WRITE)
            bytes += rec.u.write.nbytes;
    EXPECT_EQ(24u, bytes);
    EXPECT_EQ(model, Replayed(1));
}

// A reader that stopped between the ORDER and its WRITE (the WRITE not
// there yet) goes on from its mark with the step still due.
TEST_F(Steps, AMarkBetweenTheOrderAndItsWriteKeepsTheStep)
{
    Writers(1, true);
    for (uint64_t k = 1; k <= 4; k++) {
        Enter(k);
        Write(0, k * 8, 8, (int) k);
        Leave(k);
    }
    ASSERT_EQ(LOGFS_OK, logfs_writer_flush(ws[0], &err)) << err.msg;
    auto all = ReadFile(metas[0]);
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(2u, r.records.size());
    uint64_t cut = r.records[1].offset;         // the WRITE's start
    logfs_reader *rd;
    ASSERT_EQ(LOGFS_OK, logfs_reader_open_mem(all.data(), cut, &rd, &err)) << err.msg;
    logfs_record rec;
    ASSERT_EQ(LOGFS_OK, logfs_reader_next(rd, &rec, &err));
    EXPECT_EQ(LOGFS_REC_ORDER, rec.type);
    EXPECT_EQ(LOGFS_END, logfs_reader_next(rd, &rec, &err));
    logfs_reader_mark m;
    logfs_reader_get_mark(rd, &m);
    logfs_reader_close(rd);
    EXPECT_EQ(2u, m.order_step);
    ASSERT_EQ(LOGFS_OK, logfs_reader_open_mem(all.data(), all.size(), &rd, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_reader_resume(rd, &m, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_reader_next(rd, &rec, &err)) << err.msg;
    EXPECT_EQ(LOGFS_REC_WRITE, rec.type);
    EXPECT_EQ(2u, rec.u.write.seq_step);
    logfs_reader_get_mark(rd, &m);
    EXPECT_EQ(7u, m.order_seq);                 // call 4's block
    logfs_reader_close(rd);
}

// An independent block before the first collective call (count 0) starts
// steps too; a higher rank's write of the same bytes at count 0 wins over
// that block, and loses to writer 0's block of call 1.
TEST_F(Steps, AnIndependentBlockBeforeTheFirstCallStartsThem)
{
    Writers(2, true);
    Write(0, 0, 8, 1, false);
    Write(1, 0, 8, 2, false);
    Write(1, 8, 8, 2);
    Enter(1);
    Write(0, 8, 8, 3);
    Leave(1);
    CloseAll();
    auto r = ReadAll(metas[0]);
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(0u, r.records[0].u.order.seq);
    EXPECT_EQ(1u, r.records[0].u.order.step);
    Model(0, Data(1, 0, 8, 2));
    EXPECT_EQ(model, Replayed(1));
}

// Without carry_calls each call stays a record of its own.
TEST_F(Steps, WithoutCarryEachCallIsARecord)
{
    Writers(1, false);
    for (uint64_t k = 1; k <= 5; k++) {
        Enter(k);
        Write(0, k * 8, 8, 0);
        Leave(k);
    }
    CloseAll();
    auto t = Types(0);
    EXPECT_EQ(11u, t.size());   // 5 x (ORDER, WRITE), CLOSE
    EXPECT_EQ(model, Replayed(1));
}

// What the reader refuses: a step where the format has none, a step of 0,
// a step followed by anything but one group of two or more blocks.
TEST(StepsReader, RefusesStepsItCannotApply)
{
    // WRITE payloads: dlog_off 0, nbytes, then groups (count, offset,
    // blocklen, zigzag stride): two blocks of 8 at stride 16; one block; two
    // groups
    const std::vector<uint8_t> two = {0, 16, 2, 0, 8, 32}, one = {0, 8, 1, 0, 8},
                               groups = {0, 24, 2, 0, 8, 32, 1, 100, 8};
    struct Case {
        const char *what;
        uint32_t version;
        std::vector<std::pair<int, std::vector<uint8_t>>> records;
        int status;
    } cases[] = {
        {"a step and its group", 4, {{LOGFS_REC_ORDER, {1, 2}}, {LOGFS_REC_WRITE, two}}, LOGFS_END},
        {"block 0 before any call", 4, {{LOGFS_REC_ORDER, {0, 1}}, {LOGFS_REC_WRITE, two}}, LOGFS_END},
        {"a step in version 3", 3, {{LOGFS_REC_ORDER, {1, 2}}, {LOGFS_REC_WRITE, two}}, LOGFS_ECORRUPT},
        {"a step of 0", 4, {{LOGFS_REC_ORDER, {1, 0}}, {LOGFS_REC_WRITE, two}}, LOGFS_ECORRUPT},
        {"count 0, no step", 4, {{LOGFS_REC_ORDER, {0}}}, LOGFS_ECORRUPT},
        {"a step before one block", 4, {{LOGFS_REC_ORDER, {1, 2}}, {LOGFS_REC_WRITE, one}}, LOGFS_ECORRUPT},
        {"a step before two groups", 4, {{LOGFS_REC_ORDER, {1, 2}}, {LOGFS_REC_WRITE, groups}},
         LOGFS_ECORRUPT},
        {"a step before a SETSIZE", 4, {{LOGFS_REC_ORDER, {1, 2}}, {LOGFS_REC_SETSIZE, {8}}},
         LOGFS_ECORRUPT},
        // the count after the WRITE is its last block's (3): 2 goes back
        {"an ORDER below the last block's count", 4,
         {{LOGFS_REC_ORDER, {1, 2}}, {LOGFS_REC_WRITE, two}, {LOGFS_REC_ORDER, {2}}}, LOGFS_ECORRUPT},
    };
    for (const auto &c : cases) {
        std::vector<uint8_t> h(LOGFS_HEADER_PAYLOAD_LEN, 0), log;
        memcpy(h.data(), LOGFS_MAGIC, LOGFS_MAGIC_LEN);
        h[8] = (uint8_t) c.version;
        h[24] = 1;              // nwriters
        AppendRecord(log, LOGFS_REC_HEADER, h);
        for (const auto &r : c.records)
            AppendRecord(log, r.first, r.second);
        EXPECT_EQ(c.status, ReadAllMem(log).status) << c.what;
    }
}

}  // namespace
