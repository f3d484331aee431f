// Small reads of log files through a read-only mapping: the bytes are the
// file's, nothing past the file's end is touched, growth is seen, and the
// writer's own flushed bytes come from it too.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "helpers.h"

extern "C" {
#include "datalog.h"
#include "readmap.h"
}

namespace {

class ReadMap : public ::testing::Test {
  protected:
    void SetUp() override
    {
        data = Pattern(100000, 3);
        path = dir.file("d.datalog");
        WriteFile(path, data);
        fd = open(path.c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        logfs_readmap_init(&m);
        Warm(&m);
    }
    // The first small reads of a file are left to pread: a reader that
    // reads once pays for no mapping.
    void Warm(logfs_readmap *r)
    {
        uint8_t out[8];
        for (int i = 1; i < LOGFS_READMAP_AFTER; i++)
            ASSERT_EQ(0, logfs_readmap_copy(r, fd, 0, out, sizeof out, 0)) << "read " << i;
        EXPECT_EQ(nullptr, r->base);
    }
    void TearDown() override
    {
        logfs_readmap_drop(&m);
        close(fd);
    }
    void Append(const std::vector<uint8_t> &more)
    {
        int w = open(path.c_str(), O_WRONLY | O_APPEND);
        ASSERT_GE(w, 0);
        ASSERT_EQ((ssize_t)more.size(), write(w, more.data(), more.size()));
        close(w);
    }
    TempDir dir;
    std::string path;
    std::vector<uint8_t> data;
    int fd = -1;
    logfs_readmap m;
};

TEST_F(ReadMap, SmallReadsAreCopiedFromTheMapping)
{
    uint8_t out[8];
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 777, out, sizeof out, 0));
    EXPECT_NE(nullptr, m.base);
    EXPECT_EQ(0, memcmp(out, &data[777], sizeof out));
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 100000 - 8, out, sizeof out, 0));  // the last bytes
    EXPECT_EQ(0, memcmp(out, &data[100000 - 8], sizeof out));
}

TEST_F(ReadMap, OnlyRepeatedReadsMap)
{
    logfs_readmap fresh;
    logfs_readmap_init(&fresh);
    uint8_t out[8];
    std::vector<uint8_t> big(LOGFS_READMAP_MAX + 1);
    EXPECT_EQ(0, logfs_readmap_copy(&fresh, fd, 0, big.data(), big.size(), 0));  // (not counted)
    Warm(&fresh);
    EXPECT_EQ(1, logfs_readmap_copy(&fresh, fd, 8, out, sizeof out, 0));
    EXPECT_NE(nullptr, fresh.base);
    EXPECT_EQ(0, memcmp(out, &data[8], sizeof out));
    logfs_readmap_drop(&fresh);
}

TEST_F(ReadMap, AReadPastTheEndIsLeftToPreadUntouched)
{
    uint8_t out[8];
    memset(out, 0xee, sizeof out);
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 0, out, 1, 0));  // mapped now
    EXPECT_EQ(0, logfs_readmap_copy(&m, fd, 100000 - 4, out, sizeof out, 0));
    EXPECT_EQ(0, logfs_readmap_copy(&m, fd, 200000, out, sizeof out, 0));
    EXPECT_EQ(0, logfs_readmap_copy(&m, fd, UINT64_MAX - 2, out, sizeof out, 0));  // wraps
    EXPECT_EQ(0xee, out[1]);
}

TEST_F(ReadMap, BigReadsAreLeftToPread)
{
    std::vector<uint8_t> out(LOGFS_READMAP_MAX + 1);
    EXPECT_EQ(0, logfs_readmap_copy(&m, fd, 0, out.data(), out.size(), 0));
    EXPECT_EQ(1, logfs_readmap_copy(&m, fd, 0, out.data(), LOGFS_READMAP_MAX, 0));
}

TEST_F(ReadMap, BytesAppendedAfterTheMappingAreReadAfterALook)
{
    uint8_t out[8];
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 10, out, sizeof out, 0));
    uint8_t *base = m.base;
    std::vector<uint8_t> more = Pattern(5000, 9);
    Append(more);
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 100000 + 4000, out, sizeof out, 0));
    EXPECT_EQ(0, memcmp(out, &more[4000], sizeof out));
    EXPECT_EQ(base, m.base);  // inside the window: not mapped again
}

TEST_F(ReadMap, AReadPastTheWindowMapsAgain)
{
    // A sparse file longer than the first window; its far bytes written.
    const uint64_t far = (uint64_t)150 << 20;
    // (the window grows with the reads, it does not start at the file's size)
    int w = open(path.c_str(), O_WRONLY);
    ASSERT_GE(w, 0);
    std::vector<uint8_t> tail = Pattern(4096, 5);
    ASSERT_EQ((ssize_t)tail.size(), pwrite(w, tail.data(), tail.size(), (off_t)far));
    close(w);
    uint8_t out[8];
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 0, out, sizeof out, 0));
    ASSERT_LT(m.window, far);
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, far + 100, out, sizeof out, 0));
    EXPECT_GT(m.window, far);
    EXPECT_EQ(0, memcmp(out, &tail[100], sizeof out));
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 50, out, sizeof out, 0));  // the start still
    EXPECT_EQ(0, memcmp(out, &data[50], sizeof out));
}

TEST_F(ReadMap, ARemovedFileStaysReadable)
{
    uint8_t out[8];
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 0, out, sizeof out, 0));
    ASSERT_EQ(0, unlink(path.c_str()));
    ASSERT_EQ(1, logfs_readmap_copy(&m, fd, 90000, out, sizeof out, 0));
    EXPECT_EQ(0, memcmp(out, &data[90000], sizeof out));
}

// The writer's own datalog: what is flushed is read from the file (through
// the mapping), what is buffered from memory, and the two meet exactly.
TEST(ReadMapWriter, FlushedAndBufferedBytesReadBackAcrossFlushes)
{
    TempDir dir;
    logfs_datalog dl;
    logfs_error err{};
    ASSERT_EQ(LOGFS_OK, logfs_datalog_open(&dl, dir.file("w.datalog").c_str(), 1, 1 << 16, 0, 0,
                                           1, &err))
        << err.msg;
    std::vector<uint8_t> all;
    for (int round = 0; round < 4; round++) {
        std::vector<uint8_t> piece = Pattern(30000 + round, 11 + round);
        ASSERT_EQ(LOGFS_OK, logfs_datalog_append(&dl, piece.data(), piece.size(), &err));
        all.insert(all.end(), piece.begin(), piece.end());
        if (round % 2 == 0)
            ASSERT_EQ(LOGFS_OK, logfs_datalog_flush(&dl, &err));
        // every 8-byte element, and one read across flushed and buffered
        for (size_t at = 0; at + 8 <= all.size(); at += 8) {
            uint8_t out[8];
            ASSERT_EQ(LOGFS_OK, logfs_datalog_read(&dl, at, out, 8, &err)) << at;
            ASSERT_EQ(0, memcmp(out, &all[at], 8)) << "round " << round << " offset " << at;
        }
        uint64_t from = dl.flushed > 10000 ? dl.flushed - 10000 : 0;
        std::vector<uint8_t> span(std::min<uint64_t>(20000, all.size() - from));
        ASSERT_EQ(LOGFS_OK, logfs_datalog_read(&dl, from, span.data(), span.size(), &err));
        EXPECT_EQ(0, memcmp(span.data(), &all[from], span.size()));
    }
    if (!dl.is_pmem)  // (persistent memory is read from its own mapping)
        EXPECT_NE(nullptr, dl.rmap.base);
    EXPECT_EQ(LOGFS_OK, logfs_datalog_close(&dl, &err)) << err.msg;
}

}  // namespace
