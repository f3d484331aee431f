#include <gtest/gtest.h>

#include <vector>

#include "coding.h"
#include "extents.h"
#include "format.h"

static std::vector<logfs_group> Feed(const std::vector<std::pair<uint64_t, uint64_t>> &runs)
{
    std::vector<logfs_group> out;
    logfs_grouper gr;
    logfs_group g;
    logfs_grouper_init(&gr);
    for (auto &r : runs)
        if (logfs_grouper_push(&gr, r.first, r.second, &g))
            out.push_back(g);
    if (logfs_grouper_finish(&gr, &g))
        out.push_back(g);
    return out;
}

TEST(Extents, ConstantLengthAndStrideBecomeOneGroup)
{
    logfs_grouper gr;
    logfs_group g;
    logfs_grouper_init(&gr);
    for (uint64_t i = 0; i < 1000000; i++)
        ASSERT_EQ(0, logfs_grouper_push(&gr, 100 + i * 64, 8, &g));
    ASSERT_EQ(1, logfs_grouper_finish(&gr, &g));
    EXPECT_EQ(100u, g.offset);
    EXPECT_EQ(8u, g.blocklen);
    EXPECT_EQ(64, g.stride);
    EXPECT_EQ(1000000u, g.count);
}

TEST(Extents, ChangedLengthOrStrideStartsANewGroup)
{
    auto gs = Feed({{0, 8}, {16, 8}, {32, 8}, {40, 4}, {100, 8}, {116, 8}, {200, 8}});
    ASSERT_EQ(4u, gs.size());
    EXPECT_EQ(3u, gs[0].count);
    EXPECT_EQ(16, gs[0].stride);
    EXPECT_EQ(40u, gs[1].offset);
    EXPECT_EQ(1u, gs[1].count);
    EXPECT_EQ(2u, gs[2].count);
    EXPECT_EQ(200u, gs[3].offset);
}

TEST(Extents, NegativeStrideIsKept)
{
    auto gs = Feed({{1000, 10}, {900, 10}, {800, 10}});
    ASSERT_EQ(1u, gs.size());
    EXPECT_EQ(-100, gs[0].stride);
    EXPECT_EQ(800u, logfs_group_block(&gs[0], 2));
}

TEST(Extents, GroupsRoundTripThroughTheEncoding)
{
    std::vector<logfs_group> in = {{0, 1, 0, 1}, {123456789, 4096, -8192, 7}, {5, 8, 64, 1000000},
                                   {LOGFS_MAX_FILE_END - 1, 1, 0, 1}};
    std::vector<uint8_t> buf;
    for (auto &g : in) {
        uint8_t tmp[LOGFS_GROUP_MAX_LEN];
        size_t n = logfs_group_encode(tmp, &g);
        buf.insert(buf.end(), tmp, tmp + n);
    }
    logfs_group_iter it;
    logfs_group g;
    logfs_group_iter_init(&it, buf.data(), buf.size());
    for (auto &want : in) {
        ASSERT_EQ(1, logfs_group_next(&it, &g));
        EXPECT_EQ(want.offset, g.offset);
        EXPECT_EQ(want.blocklen, g.blocklen);
        EXPECT_EQ(want.count, g.count);
        if (want.count > 1) {
            EXPECT_EQ(want.stride, g.stride);
        }
    }
    EXPECT_EQ(0, logfs_group_next(&it, &g));
}

TEST(Extents, ASingleExtentCostsAtMost24Bytes)
{
    uint8_t tmp[LOGFS_GROUP_MAX_LEN];
    logfs_group worst = {LOGFS_MAX_FILE_END - 2, 1ull << 62, 0, 1};
    EXPECT_LE(logfs_group_encode(tmp, &worst), 24u);
}

static int DecodeOne(const std::vector<uint64_t> &varints)
{
    std::vector<uint8_t> buf;
    for (uint64_t v : varints) {
        uint8_t tmp[10];
        size_t n = logfs_put_varint(tmp, v);
        buf.insert(buf.end(), tmp, tmp + n);
    }
    logfs_group_iter it;
    logfs_group g;
    logfs_group_iter_init(&it, buf.data(), buf.size());
    return logfs_group_next(&it, &g);
}

TEST(Extents, DecoderRejectsZeroCountOrLength)
{
    EXPECT_EQ(-1, DecodeOne({0, 10, 8}));
    EXPECT_EQ(-1, DecodeOne({1, 10, 0}));
    EXPECT_EQ(1, DecodeOne({1, 10, 8}));
}

TEST(Extents, DecoderRejectsPatternsOutsideTheFileRange)
{
    EXPECT_EQ(-1, DecodeOne({1, LOGFS_MAX_FILE_END, 1}));
    EXPECT_EQ(-1, DecodeOne({1, LOGFS_MAX_FILE_END - 4, 8}));
    EXPECT_EQ(-1, DecodeOne({3, 10, 8, logfs_zigzag(-100)})); // walks below 0
    EXPECT_EQ(-1, DecodeOne({1ull << 40, 0, 8, logfs_zigzag(1ll << 40)}));
    EXPECT_EQ(1, DecodeOne({3, 200, 8, logfs_zigzag(-100)}));
}

TEST(Extents, DecoderRejectsTruncatedAndOverlongVarints)
{
    std::vector<uint8_t> cut = {0x01, 0x80};
    logfs_group_iter it;
    logfs_group g;
    logfs_group_iter_init(&it, cut.data(), cut.size());
    EXPECT_EQ(-1, logfs_group_next(&it, &g));
    std::vector<uint8_t> overlong(11, 0xff);
    overlong.back() = 0x01;
    logfs_group_iter_init(&it, overlong.data(), overlong.size());
    EXPECT_EQ(-1, logfs_group_next(&it, &g));
}

TEST(Extents, VarintsRoundTripAtTheEdges)
{
    for (uint64_t v : {0ull, 127ull, 128ull, 16383ull, 16384ull, ~0ull}) {
        uint8_t tmp[10];
        size_t n = logfs_put_varint(tmp, v);
        const uint8_t *p = tmp;
        uint64_t out;
        ASSERT_EQ(0, logfs_get_varint(&p, tmp + n, &out));
        EXPECT_EQ(v, out);
        EXPECT_EQ(tmp + n, p);
    }
    for (int64_t s : std::vector<int64_t>{0, -1, 1, INT64_MIN, INT64_MAX})
        EXPECT_EQ(s, logfs_unzigzag(logfs_zigzag(s)));
}
