#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "crc32c.h"

TEST(Crc32c, MatchesTheStandardCheckValue)
{
    EXPECT_EQ(0xe3069283u, logfs_crc32c("123456789", 9));
}

TEST(Crc32c, MatchesRfc3720TestVectors)
{
    std::vector<uint8_t> buf(32, 0);
    EXPECT_EQ(0x8a9136aau, logfs_crc32c(buf.data(), buf.size()));
    std::fill(buf.begin(), buf.end(), 0xff);
    EXPECT_EQ(0x62a8ab43u, logfs_crc32c(buf.data(), buf.size()));
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    EXPECT_EQ(0x46dd794eu, logfs_crc32c(buf.data(), buf.size()));
}

TEST(Crc32c, ExtendingInPiecesEqualsOneShotAtAnyAlignment)
{
    std::vector<uint8_t> buf(1000);
    for (size_t i = 0; i < buf.size(); i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    for (size_t start = 0; start < 9; start++) {
        uint32_t whole = logfs_crc32c(buf.data() + start, buf.size() - start);
        for (size_t cut = start; cut < buf.size(); cut += 37) {
            uint32_t c = logfs_crc32c_extend(0, buf.data() + start, cut - start);
            c = logfs_crc32c_extend(c, buf.data() + cut, buf.size() - cut);
            ASSERT_EQ(whole, c) << "start " << start << " cut " << cut;
        }
    }
}

TEST(Crc32c, MaskIsReversibleAndChangesTheValue)
{
    for (uint32_t v : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
        EXPECT_NE(v, logfs_crc32c_mask(v));
        EXPECT_NE(v, logfs_crc32c_mask(logfs_crc32c_mask(v)));
        EXPECT_EQ(v, logfs_crc32c_unmask(logfs_crc32c_mask(v)));
    }
}
