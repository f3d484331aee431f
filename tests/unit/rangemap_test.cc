#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "rangemap.h"

class RangeMap : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_EQ(LOGFS_OK, logfs_rangemap_create(&m)); }
    void TearDown() override
    {
        EXPECT_EQ(0, logfs_rangemap_check(m));
        logfs_rangemap_destroy(m);
    }
    void Put(uint64_t s, uint64_t e, int32_t owner, uint64_t pos)
    {
        ASSERT_EQ(LOGFS_OK, logfs_rangemap_insert(m, s, e, owner, pos));
    }
    std::string Str()
    {
        size_t n = logfs_rangemap_print(m, nullptr, 0);
        std::string s(n + 1, '\0');
        logfs_rangemap_print(m, &s[0], s.size());
        s.resize(n);
        return s;
    }
    std::string Query(uint64_t s, uint64_t e)
    {
        std::string out;
        logfs_rangemap_query(m, s, e,
                             [](void *arg, const logfs_range *r, int hole) {
                                 auto *o = static_cast<std::string *>(arg);
                                 *o += "[" + std::to_string(r->start) + "-" + std::to_string(r->end - 1);
                                 *o += hole ? ":hole]"
                                            : ":" + std::to_string(r->owner) + "@" + std::to_string(r->pos) + "]";
                                 return 0;
                             },
                             &out);
        return out;
    }
    logfs_rangemap *m = nullptr;
};

TEST_F(RangeMap, PrintsInclusiveRangesWithOwnerAndPosition)
{
    Put(2, 8, 200, 0);
    Put(8, 11, 3, 77);
    EXPECT_EQ("[2-7:200@0][8-10:3@77]", Str());
}

TEST_F(RangeMap, SplitPiecesKeepOldOwner)
{
    Put(0, 100, 1, 0);
    Put(20, 30, 2, 500);
    EXPECT_EQ("[0-19:1@0][20-29:2@500][30-99:1@30]", Str());
}

TEST_F(RangeMap, TailPieceKeepsItsAdjustedOldPosition)
{
    Put(10, 20, 7, 1000);
    Put(5, 15, 8, 0);
    EXPECT_EQ("[5-14:8@0][15-19:7@1005]", Str());
    Put(18, 40, 9, 50);
    EXPECT_EQ("[5-14:8@0][15-17:7@1005][18-39:9@50]", Str());
}

TEST_F(RangeMap, InsertReplacesEverythingItCoversAcrossOwners)
{
    Put(0, 10, 1, 0);
    Put(10, 20, 2, 0);
    Put(20, 30, 3, 0);
    Put(30, 40, 4, 0);
    Put(5, 35, 5, 100);
    EXPECT_EQ("[0-4:1@0][5-34:5@100][35-39:4@5]", Str());
    EXPECT_EQ(3u, logfs_rangemap_count(m));
}

TEST_F(RangeMap, NeighboursMergeOnlyWithSameOwnerAndContiguousPosition)
{
    Put(0, 10, 1, 0);
    Put(10, 20, 1, 10); // same owner, contiguous: merges
    EXPECT_EQ("[0-19:1@0]", Str());
    Put(20, 30, 1, 100); // same owner, position jumps: stays apart
    Put(30, 40, 2, 110); // other owner, position contiguous: stays apart
    EXPECT_EQ("[0-19:1@0][20-29:1@100][30-39:2@110]", Str());
    Put(40, 50, 2, 120); // merges with its predecessor
    EXPECT_EQ("[0-19:1@0][20-29:1@100][30-49:2@110]", Str());
}

TEST_F(RangeMap, InsertMergesWithBothNeighbours)
{
    Put(0, 10, 4, 0);
    Put(20, 30, 4, 20);
    Put(10, 20, 4, 10);
    EXPECT_EQ("[0-29:4@0]", Str());
    EXPECT_EQ(1u, logfs_rangemap_count(m));
}

TEST_F(RangeMap, OverwriteWithSameOwnerAndMatchingPositionHeals)
{
    Put(0, 100, 1, 0);
    Put(40, 60, 2, 999);
    Put(40, 60, 1, 40);
    EXPECT_EQ("[0-99:1@0]", Str());
}

TEST_F(RangeMap, QueryReportsHolesBetweenPieces)
{
    Put(10, 20, 1, 0);
    Put(30, 40, 2, 5);
    EXPECT_EQ("[0-9:hole][10-19:1@0][20-29:hole][30-39:2@5][40-49:hole]", Query(0, 50));
}

TEST_F(RangeMap, QueryClipsPiecesAndShiftsTheirPosition)
{
    Put(10, 20, 1, 100);
    Put(20, 30, 2, 500);
    EXPECT_EQ("[15-19:1@105][20-24:2@500]", Query(15, 25));
    EXPECT_EQ("[0-4:hole]", Query(0, 5));
    EXPECT_EQ("", Query(7, 7));
}

TEST_F(RangeMap, QueryStopsWhenTheCallbackSaysSo)
{
    Put(0, 10, 1, 0);
    Put(20, 30, 1, 20);
    int calls = 0;
    int rc = logfs_rangemap_query(m, 0, 100,
                                  [](void *arg, const logfs_range *, int) {
                                      return ++*static_cast<int *>(arg) == 2 ? 42 : 0;
                                  },
                                  &calls);
    EXPECT_EQ(42, rc);
    EXPECT_EQ(2, calls);
}

TEST_F(RangeMap, RemoveCutsStraddlingRangesLikeInsert)
{
    Put(0, 10, 1, 0);
    Put(10, 20, 2, 50);
    Put(20, 30, 3, 90);
    ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, 5, 25));
    EXPECT_EQ("[0-4:1@0][25-29:3@95]", Str());
    ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, 1, 3));
    EXPECT_EQ("[0-0:1@0][3-4:1@3][25-29:3@95]", Str());
}

TEST_F(RangeMap, TruncateDropsEverythingPastTheSize)
{
    for (uint64_t i = 0; i < 10; i++)
        Put(i * 10, i * 10 + 5, (int32_t)i, i);
    ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, 33, UINT64_MAX));
    EXPECT_EQ("[0-4:0@0][10-14:1@1][20-24:2@2][30-32:3@3]", Str());
    Put(100, 110, 9, 0); // appends still work after the rightmost range moved
    EXPECT_EQ("[0-4:0@0][10-14:1@1][20-24:2@2][30-32:3@3][100-109:9@0]", Str());
}

TEST_F(RangeMap, EmptyRangesAreRejected)
{
    EXPECT_EQ(LOGFS_EINVAL, logfs_rangemap_insert(m, 5, 5, 1, 0));
    EXPECT_EQ(LOGFS_EINVAL, logfs_rangemap_insert(m, 6, 5, 1, 0));
    EXPECT_EQ(LOGFS_EINVAL, logfs_rangemap_remove(m, 5, 5));
    EXPECT_EQ("", Str());
}

TEST_F(RangeMap, PrintTruncatesLikeSnprintf)
{
    Put(0, 10, 1, 0);
    char buf[6];
    EXPECT_EQ(9u, logfs_rangemap_print(m, buf, sizeof buf));
    EXPECT_STREQ("[0-9:", buf);
}

// Byte-by-byte reference model: every rule at once, on random operations.
TEST_F(RangeMap, RandomOperationsMatchAByteModel)
{
    const uint64_t N = 3000;
    struct Cell { int32_t owner; uint64_t pos; bool set; };
    std::vector<Cell> model(N, Cell{0, 0, false});
    std::mt19937_64 rng(7);
    for (int step = 0; step < 20000; step++) {
        uint64_t s = rng() % N, len = 1 + rng() % 60;
        uint64_t e = std::min(N, s + len);
        if (rng() % 8 == 0) {
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, s, e));
            for (uint64_t i = s; i < e; i++)
                model[i].set = false;
        } else {
            int32_t owner = (int32_t)(rng() % 4);
            uint64_t pos = rng() % 3 == 0 ? s : rng() % 100000; // some contiguous positions
            Put(s, e, owner, pos);
            for (uint64_t i = s; i < e; i++)
                model[i] = Cell{owner, pos + (i - s), true};
        }
        if (step % 1000 == 0) {
            ASSERT_EQ(0, logfs_rangemap_check(m));
        }
    }
    std::vector<Cell> seen(N, Cell{0, 0, false});
    struct Ctx { std::vector<Cell> *seen; const logfs_range *prev; logfs_range last; bool have; bool merge_missed; } c{&seen, nullptr, {}, false, false};
    logfs_rangemap_walk(m,
                        [](void *arg, const logfs_range *r, int) {
                            auto *c = static_cast<Ctx *>(arg);
                            for (uint64_t i = r->start; i < r->end; i++)
                                (*c->seen)[i] = Cell{r->owner, r->pos + (i - r->start), true};
                            if (c->have && c->last.end == r->start && c->last.owner == r->owner &&
                                c->last.pos + (c->last.end - c->last.start) == r->pos)
                                c->merge_missed = true;
                            c->last = *r;
                            c->have = true;
                            return 0;
                        },
                        &c);
    for (uint64_t i = 0; i < N; i++) {
        ASSERT_EQ(model[i].set, seen[i].set) << "byte " << i;
        if (model[i].set) {
            ASSERT_EQ(model[i].owner, seen[i].owner) << "byte " << i;
            ASSERT_EQ(model[i].pos, seen[i].pos) << "byte " << i;
        }
    }
    EXPECT_FALSE(c.merge_missed) << "two mergeable neighbours were left apart";
}

TEST_F(RangeMap, AMillionAppendsStayBalancedWithinSixtyFourBytesEach)
{
    const uint64_t n = 1000000;
    for (uint64_t i = 0; i < n; i++)
        Put(i * 16, i * 16 + 8, (int32_t)(i % 3), i * 8);
    EXPECT_EQ(n, logfs_rangemap_count(m));
    EXPECT_LE(logfs_rangemap_memory(m), 64 * n);
}

TEST_F(RangeMap, RandomInsertsStayWithinSixtyFourBytesEach)
{
    std::mt19937_64 rng(3);
    for (int i = 0; i < 200000; i++) {
        uint64_t s = (rng() % (1ull << 40)) & ~15ull;
        Put(s, s + 8, 1, rng());
    }
    EXPECT_LE((double)logfs_rangemap_memory(m) / (double)logfs_rangemap_count(m), 64.0);
}

// The printed form a byte model implies: maximal runs of bytes with one owner
// and consecutive positions (the map always merges such neighbours).
struct ByteModel {
    struct Cell { int32_t owner; uint64_t pos; bool set; };
    std::vector<Cell> cells;
    explicit ByteModel(uint64_t n) : cells(n, Cell{0, 0, false}) {}
    void Put(uint64_t s, uint64_t e, int32_t owner, uint64_t pos)
    {
        for (uint64_t i = s; i < e && i < cells.size(); i++)
            cells[i] = Cell{owner, pos + (i - s), true};
    }
    void Remove(uint64_t s, uint64_t e)
    {
        for (uint64_t i = s; i < e && i < cells.size(); i++)
            cells[i].set = false;
    }
    std::string Str() const
    {
        std::string out;
        uint64_t i = 0, n = cells.size();
        while (i < n) {
            if (!cells[i].set) {
                i++;
                continue;
            }
            uint64_t j = i + 1;
            while (j < n && cells[j].set && cells[j].owner == cells[i].owner &&
                   cells[j].pos == cells[i].pos + (j - i))
                j++;
            out += "[" + std::to_string(i) + "-" + std::to_string(j - 1) + ":" + std::to_string(cells[i].owner) +
                   "@" + std::to_string(cells[i].pos) + "]";
            i = j;
        }
        return out;
    }
};

// Enough ranges for a tree of several levels, and operations that empty,
// merge and share leaves and inner nodes: small overlapping inserts, wide
// inserts and removes over many leaves, appends, truncates; several owners,
// positions often contiguous so that merges across leaves happen too.
TEST_F(RangeMap, DeepTreeMatchesAByteModelAfterEveryKindOfOperation)
{
    const uint64_t N = 400000;
    ByteModel model(N);
    std::mt19937_64 rng(11);
    uint64_t tail = 0; // appends go here
    for (int step = 0; step < 400000; step++) {
        unsigned kind = (unsigned)(rng() % 10000);
        int32_t owner = (int32_t)(rng() % 4);
        if (kind < 5) { // wide remove
            uint64_t s = rng() % N, e = std::min(N, s + 1 + rng() % 8000);
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, s, e));
            model.Remove(s, e);
        } else if (kind < 10) { // wide insert
            uint64_t s = rng() % N, e = std::min(N, s + 1 + rng() % 4000);
            uint64_t pos = rng() % 2 ? s + 1000000 * (uint64_t)owner : rng() % 1000000;
            Put(s, e, owner, pos);
            model.Put(s, e, owner, pos);
        } else if (kind < 11) { // truncate, then appends refill
            uint64_t s = rng() % N;
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, s, UINT64_MAX));
            model.Remove(s, N);
            tail = s;
        } else if (kind < 2500 && tail < N) { // append past everything
            uint64_t s = tail + rng() % 3, e = std::min(N, s + 1 + rng() % 8);
            if (s >= N)
                continue;
            uint64_t pos = rng() % 2 ? s + 1000000 * (uint64_t)owner : rng() % 1000000;
            Put(s, e, owner, pos);
            model.Put(s, e, owner, pos);
            tail = e;
        } else if (kind < 3300) { // small remove
            uint64_t s = rng() % N, e = std::min(N, s + 1 + rng() % 16);
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, s, e));
            model.Remove(s, e);
        } else { // small overlapping insert
            uint64_t s = rng() % N, e = std::min(N, s + 1 + rng() % 16);
            uint64_t pos = rng() % 2 ? s + 1000000 * (uint64_t)owner : rng() % 1000000;
            Put(s, e, owner, pos);
            model.Put(s, e, owner, pos);
        }
        if (step % 20000 == 0) {
            ASSERT_EQ(0, logfs_rangemap_check(m)) << "step " << step;
            ASSERT_EQ(model.Str(), Str()) << "step " << step;
        }
    }
    ASSERT_EQ(0, logfs_rangemap_check(m));
    EXPECT_EQ(model.Str(), Str());
    EXPECT_GT(logfs_rangemap_count(m), 10000u); // a tree of several levels
}

// Every query over random windows agrees with the model, holes included.
TEST_F(RangeMap, QueriesMatchAByteModel)
{
    const uint64_t N = 100000;
    ByteModel model(N);
    std::mt19937_64 rng(5);
    for (int step = 0; step < 60000; step++) {
        uint64_t s = rng() % N, e = std::min(N, s + 1 + rng() % 12);
        int32_t owner = (int32_t)(rng() % 3);
        if (rng() % 6 == 0) {
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, s, e));
            model.Remove(s, e);
        } else {
            uint64_t pos = rng() % 2 ? s : rng() % 1000000;
            Put(s, e, owner, pos);
            model.Put(s, e, owner, pos);
        }
    }
    for (int q = 0; q < 2000; q++) {
        uint64_t s = rng() % N, e = std::min(N, s + 1 + rng() % 3000);
        std::string want;
        // Pieces clipped to [s, e): runs of the model, and holes between them.
        uint64_t i = s;
        while (i < e) {
            uint64_t j = i + 1;
            const auto &c = model.cells[i];
            while (j < e && model.cells[j].set == c.set &&
                   (!c.set || (model.cells[j].owner == c.owner && model.cells[j].pos == c.pos + (j - i))))
                j++;
            want += "[" + std::to_string(i) + "-" + std::to_string(j - 1) +
                    (c.set ? ":" + std::to_string(c.owner) + "@" + std::to_string(c.pos) + "]" : ":hole]");
            i = j;
        }
        ASSERT_EQ(want, Query(s, e)) << "query " << s << "-" << e;
    }
}

TEST_F(RangeMap, RemovingMostRangesStaysWithinSixtyFourBytesEach)
{
    std::mt19937_64 rng(9);
    for (int i = 0; i < 200000; i++) {
        uint64_t s = (rng() % (1ull << 30)) & ~15ull;
        Put(s, s + 8, (int32_t)(rng() % 5), rng());
    }
    for (int i = 0; i < 400000; i++) {
        uint64_t s = rng() % (1ull << 30);
        ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, s, s + 4096));
    }
    ASSERT_EQ(0, logfs_rangemap_check(m));
    ASSERT_GT(logfs_rangemap_count(m), 1000u);
    EXPECT_LE((double)logfs_rangemap_memory(m) / (double)logfs_rangemap_count(m), 64.0);
    ASSERT_EQ(LOGFS_OK, logfs_rangemap_remove(m, 0, UINT64_MAX));
    EXPECT_EQ("", Str());
    EXPECT_EQ(0u, logfs_rangemap_count(m));
    Put(5, 9, 1, 0); // the emptied map still works
    EXPECT_EQ("[5-8:1@0]", Str());
}

// Per byte of [0, n): "owner@pos" or "-", so maps that hold the same bytes
// compare equal however their ranges are cut.
static std::vector<std::string> Bytes(const logfs_rangemap *m, uint64_t n)
{
    std::vector<std::string> b(n, "-");
    logfs_rangemap_query(m, 0, n,
                         [](void *arg, const logfs_range *r, int hole) {
                             auto *v = static_cast<std::vector<std::string> *>(arg);
                             for (uint64_t i = r->start; i < r->end && !hole; i++)
                                 (*v)[i] = std::to_string(r->owner) + "@" +
                                           std::to_string(r->pos + (i - r->start));
                             return 0;
                         },
                         &b);
    return b;
}

static void OneByOne(logfs_rangemap *m, const std::vector<logfs_strided> &r)
{
    for (auto &x : r)
        for (uint64_t k = 0; k < x.count; k++)
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_insert(m, x.start + k * x.stride,
                                                      x.start + k * x.stride + x.len, x.owner,
                                                      x.pos + k * x.len));
}

TEST_F(RangeMap, InterleavedStridedRunsGoInInFileOrder)
{
    std::vector<logfs_strided> r;
    for (int32_t w = 0; w < 4; w++)
        r.push_back({8u * (uint64_t) w, 8, 3, 32, w, 100});
    Put(200, 208, 9, 0); // a range past them: not an append any more
    ASSERT_EQ(LOGFS_OK, logfs_rangemap_insert_strided(m, r.data(), r.size()));
    EXPECT_EQ("[0-7:0@100][8-15:1@100][16-23:2@100][24-31:3@100][32-39:0@108][40-47:1@108]"
              "[48-55:2@108][56-63:3@108][64-71:0@116][72-79:1@116][80-87:2@116]"
              "[88-95:3@116][200-207:9@0]",
              Str());
    logfs_strided bad{0, 0, 1, 0, 1, 0};
    EXPECT_EQ(LOGFS_EINVAL, logfs_rangemap_insert_strided(m, &bad, 1));
}

TEST_F(RangeMap, StridedRunsGiveWhatInsertingTheirBlocksInTurnGives)
{
    // Disjoint interleaved runs take the merge; overlapping ones, and runs
    // over earlier ranges, must still end as one-by-one inserts end.
    std::mt19937_64 rng(11);
    const uint64_t n = 4096;
    for (int round = 0; round < 300; round++) {
        logfs_rangemap *a, *b;
        ASSERT_EQ(LOGFS_OK, logfs_rangemap_create(&a));
        ASSERT_EQ(LOGFS_OK, logfs_rangemap_create(&b));
        for (int i = 0; i < 5; i++) { // earlier contents
            uint64_t s = rng() % n, e = s + 1 + rng() % 200;
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_insert(a, s, e, 90 + i, 7));
            ASSERT_EQ(LOGFS_OK, logfs_rangemap_insert(b, s, e, 90 + i, 7));
        }
        std::vector<logfs_strided> r;
        uint64_t runs = 1 + rng() % 6, stride = 8 + rng() % 24, len = 1 + rng() % 8;
        bool disjoint = round % 2 == 0;
        for (uint64_t i = 0; i < runs; i++) {
            uint64_t count = 1 + rng() % 40;
            uint64_t l = disjoint ? std::min(len, stride / runs) : 1 + rng() % stride;
            uint64_t start = disjoint ? (i * (stride / runs)) : rng() % 512;
            if (l == 0)
                l = 1, start = i; // (a stride too short to share: still valid runs)
            r.push_back({start, l, count, disjoint ? stride : l + rng() % 16, (int32_t) i,
                         1000 * i});
        }
        ASSERT_EQ(LOGFS_OK, logfs_rangemap_insert_strided(a, r.data(), r.size()));
        OneByOne(b, r);
        ASSERT_EQ(0, logfs_rangemap_check(a));
        ASSERT_EQ(Bytes(b, n), Bytes(a, n)) << "round " << round;
        logfs_rangemap_destroy(a);
        logfs_rangemap_destroy(b);
    }
}

TEST_F(RangeMap, LookupsThatWalkForwardAndInsertsAfterThemStayRight)
{
    // Lookups leave the map's finger at their leaf, and the next lookup or
    // insert starts there (or at the next leaf): every answer and the tree
    // must be what a search from the root gives.
    for (uint64_t i = 0; i < 5000; i++)
        Put(i * 10, i * 10 + 8, (int32_t)(i % 3), i * 8);
    for (uint64_t i = 0; i < 5000; i += 1 + i % 7) {
        ASSERT_EQ("[" + std::to_string(i * 10 + 2) + "-" + std::to_string(i * 10 + 7) + ":" +
                      std::to_string(i % 3) + "@" + std::to_string(i * 8 + 2) + "][" +
                      std::to_string(i * 10 + 8) + "-" + std::to_string(i * 10 + 9) + ":hole]",
                  Query(i * 10 + 2, i * 10 + 10))
            << i;
        if (i % 5 == 0) { // an insert right where the lookup left the finger
            Put(i * 10 + 8, i * 10 + 10, 7, 0);
            ASSERT_EQ(0, logfs_rangemap_check(m)) << i;
            ASSERT_EQ("[" + std::to_string(i * 10 + 8) + "-" + std::to_string(i * 10 + 9) +
                          ":7@0]",
                      Query(i * 10 + 8, i * 10 + 10));
        }
    }
    ASSERT_EQ("[49990-49997:" + std::to_string(4999 % 3) + "@39992]", Query(49990, 49998));
    ASSERT_EQ("[0-7:0@0]", Query(0, 8)); // back to the start: a search again
}
