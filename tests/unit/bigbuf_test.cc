// bbserver's kept large buffers: a reply's buffer given back serves the
// next reply of its size (no new pages to fault in), small ones are not
// kept, and a trim frees them all.
#include <gtest/gtest.h>

#include <cstring>

#include "bigbuf.h"
#include "proto.h"

namespace {

struct BigBuffers : ::testing::Test {
    void SetUp() override { bbs_big_trim(); }
    void TearDown() override { bbs_big_trim(); }
};

TEST_F(BigBuffers, AGivenBufferServesTheNextTakeOfItsSize)
{
    size_t cap = 0;
    void *a = bbs_big_take(8 * BBS_BIG, &cap);
    ASSERT_NE(nullptr, a);
    EXPECT_EQ(8 * BBS_BIG, cap);
    bbs_big_give(a, cap);
    size_t cap2 = 0;
    void *b = bbs_big_take(5 * BBS_BIG, &cap2);
    EXPECT_EQ(a, b);
    EXPECT_EQ(8 * BBS_BIG, cap2);
    bbs_big_give(b, cap2);
}

TEST_F(BigBuffers, TheSmallestKeptThatFitsIsTaken)
{
    size_t c1, c2;
    void *big = bbs_big_take(16 * BBS_BIG, &c1);
    void *small = bbs_big_take(2 * BBS_BIG, &c2);
    bbs_big_give(big, c1);
    bbs_big_give(small, c2);
    size_t cap;
    void *got = bbs_big_take(2 * BBS_BIG, &cap);
    EXPECT_EQ(small, got);
    bbs_big_give(got, cap);
    got = bbs_big_take(3 * BBS_BIG, &cap);
    EXPECT_EQ(big, got);
    bbs_big_give(got, cap);
}

TEST_F(BigBuffers, SmallBuffersAreNotKeptAndTrimFreesTheKept)
{
    size_t cap;
    void *small = bbs_big_take(BBS_BIG / 2, &cap);
    bbs_big_give(small, cap);   // freed, not kept
    void *a = bbs_big_take(BBS_BIG, &cap);
    bbs_big_give(a, cap);
    bbs_big_trim();
    // After the trim nothing is kept: a take of a size no kept one had
    // cannot be the old pointer by reuse (it may be by malloc's chance, so
    // only what is certain is checked: the take succeeds, at its size).
    void *b = bbs_big_take(BBS_BIG, &cap);
    ASSERT_NE(nullptr, b);
    EXPECT_EQ(BBS_BIG, cap);
    bbs_big_give(b, cap);
}

// A read reply of 64 MiB and a few bytes is sized to the megabyte, not to
// the next power of two (128 MiB), and its buffer is the kept one when the
// next reply is built.
TEST_F(BigBuffers, ReadRepliesReuseTheirBuffer)
{
    bbs_buf b{};
    ASSERT_EQ(0, bbs_rep_begin(&b, BBS_READ, 1, BBS_OK, nullptr));
    uint8_t *room = bbs_rep_read_room(&b, 64u << 20);
    ASSERT_NE(nullptr, room);
    memset(room, 1, 64u << 20);
    EXPECT_EQ(65u << 20, b.cap);
    uint8_t *first = b.p;
    bbs_buf_free(&b);
    ASSERT_EQ(0, bbs_rep_begin(&b, BBS_READ, 2, BBS_OK, nullptr));
    ASSERT_NE(nullptr, bbs_rep_read_room(&b, 64u << 20));
    EXPECT_EQ(first, b.p);
    bbs_buf_free(&b);
}

}  // namespace
