// Reading datalogs back: plain and scatter reads, and the errors of a
// datalog that ends before its metalog says.
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

#include <vector>

#include "helpers.h"

class DatalogReader : public ::testing::Test {
  protected:
    void SetUp() override
    {
        data = Pattern(100000, 7);
        WriteFile(dir.file("w.datalog"), data);
        ASSERT_EQ(LOGFS_OK, logfs_datalog_reader_open(dir.file("w.datalog").c_str(), &dr, &err))
            << err.msg;
    }
    void TearDown() override { logfs_datalog_reader_close(dr); }
    TempDir dir;
    logfs_error err{};
    std::vector<uint8_t> data;
    logfs_datalog_reader *dr = nullptr;
};

TEST_F(DatalogReader, ScatterReadPlacesConsecutiveBytesInEachBufferInTurn)
{
    // Strided destinations, as replay places 4 KiB blocks of one writer
    // among other writers' blocks; a zero-length buffer takes nothing.
    std::vector<uint8_t> out(3 * 5000, 0xee);
    struct iovec iov[4] = {{&out[0], 4000}, {&out[5000], 0}, {&out[5000], 4000}, {&out[10000], 123}};
    ASSERT_EQ(LOGFS_OK, logfs_datalog_reader_preadv(dr, 777, iov, 4, &err)) << err.msg;
    EXPECT_TRUE(std::equal(&out[0], &out[4000], &data[777]));
    EXPECT_TRUE(std::equal(&out[5000], &out[9000], &data[4777]));
    EXPECT_TRUE(std::equal(&out[10000], &out[10123], &data[8777]));
    EXPECT_EQ(0xee, out[4000]);  // gaps between destinations stay untouched
    EXPECT_EQ(0xee, out[9000]);
    EXPECT_EQ(0xee, out[10123]);
}

TEST_F(DatalogReader, ScatterReadOfManyBuffersMatchesOnePread)
{
    std::vector<uint8_t> out(LOGFS_READV_MAX * 64), want(LOGFS_READV_MAX * 64);
    std::vector<struct iovec> iov(LOGFS_READV_MAX);
    for (int i = 0; i < LOGFS_READV_MAX; i++)
        iov[i] = {&out[(size_t)(LOGFS_READV_MAX - 1 - i) * 64], 64};  // reversed order
    ASSERT_EQ(LOGFS_OK, logfs_datalog_reader_preadv(dr, 10, iov.data(), LOGFS_READV_MAX, &err));
    ASSERT_EQ(LOGFS_OK, logfs_datalog_reader_pread(dr, 10, want.data(), want.size(), &err));
    for (int i = 0; i < LOGFS_READV_MAX; i++)
        ASSERT_TRUE(std::equal(&want[(size_t)i * 64], &want[(size_t)i * 64 + 64],
                               &out[(size_t)(LOGFS_READV_MAX - 1 - i) * 64]))
            << "buffer " << i;
}

TEST_F(DatalogReader, ScatterReadPastTheEndIsShortAndSaysWhere)
{
    std::vector<uint8_t> a(10), b(10);
    struct iovec iov[2] = {{a.data(), 10}, {b.data(), 10}};
    EXPECT_EQ(LOGFS_ESHORT, logfs_datalog_reader_preadv(dr, 99990, iov, 2, &err));
    EXPECT_NE(nullptr, strstr(err.msg, "100010")) << err.msg;
    EXPECT_TRUE(std::equal(a.begin(), a.end(), &data[99990]));  // what existed was read
}

TEST_F(DatalogReader, ScatterReadRefusesMoreBuffersThanItTakes)
{
    std::vector<uint8_t> out(LOGFS_READV_MAX + 1);
    std::vector<struct iovec> iov(LOGFS_READV_MAX + 1);
    for (int i = 0; i <= LOGFS_READV_MAX; i++)
        iov[i] = {&out[i], 1};
    EXPECT_EQ(LOGFS_EINVAL,
              logfs_datalog_reader_preadv(dr, 0, iov.data(), LOGFS_READV_MAX + 1, &err));
}

TEST_F(DatalogReader, PlainReadPastTheEndIsShort)
{
    std::vector<uint8_t> out(20);
    EXPECT_EQ(LOGFS_ESHORT, logfs_datalog_reader_pread(dr, 99990, out.data(), 20, &err));
}

// Sets the file's access time well before its modification time, which a
// relatime mount updates at the next read.
static void MakeAccessTimeStale(const std::string &path)
{
    struct timespec ts[2] = {{1000, 0}, {2000, 0}};
    ASSERT_EQ(0, utimensat(AT_FDCWD, path.c_str(), ts, 0)) << strerror(errno);
}

static time_t AccessTime(const std::string &path)
{
    struct stat st;
    EXPECT_EQ(0, stat(path.c_str(), &st)) << strerror(errno);
    return st.st_atime;
}

TEST_F(DatalogReader, ReadsLeaveTheAccessTimeAlone)
{
    // The kernel's check whether to update it was a tenth of an 8-byte
    // read's system call; nothing reads a log's access time.
    std::string path = dir.file("w.datalog");
    uint8_t b[8];
    MakeAccessTimeStale(path);
    int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(8, pread(fd, b, 8, 0));
    close(fd);
    ASSERT_NE(1000, AccessTime(path)) << "a plain read left the access time as it was: the "
                                         "test directory's file system does not update it "
                                         "(mounted noatime?), so this test cannot tell";
    MakeAccessTimeStale(path);
    ASSERT_EQ(LOGFS_OK, logfs_datalog_reader_pread(dr, 0, b, 8, &err)) << err.msg;
    EXPECT_EQ(1000, AccessTime(path));
}
