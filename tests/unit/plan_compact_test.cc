// The compact form of replay plans against the range-map form.
//
// Random writers, calls, groups and epochs, with and without overlaps and
// SETSIZE, are logged by real writers; then the plan is built twice (compact
// allowed, and LOGFS_PLAN_NO_COMPACT), every domain of several replayer
// counts is read both as pieces and as runs, and everything must agree: the
// same domains, the same source for every file byte, each byte delivered
// once, and the same final file as a byte model of the replay rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <random>
#include <string>
#include <vector>

#include "helpers.h"

namespace {

constexpr uint64_t kSpan = 1 << 15;

struct WOp { // one op of one writer: a run of blocks, or set_size (count 0)
    uint64_t off, blocklen, count;
    int64_t stride;
    bool per_block; // log it with add_extent per block instead of add_run
    bool new_call;  // start a new write call before it
};

struct Scenario {
    uint32_t nw;
    std::vector<std::vector<std::vector<WOp>>> ops; // [epoch][writer]
    std::vector<bool> cut;                          // [epoch]: a SETSIZE discards bytes
};

bool Free(const std::vector<bool> &used, const WOp &o)
{
    for (uint64_t i = 0; i < o.count; i++)
        for (uint64_t k = 0; k < o.blocklen; k++)
            if (used[o.off + (uint64_t)((int64_t)i * o.stride) + k])
                return false;
    return true;
}

void Mark(std::vector<bool> &used, const WOp &o)
{
    for (uint64_t i = 0; i < o.count; i++)
        for (uint64_t k = 0; k < o.blocklen; k++)
            used[o.off + (uint64_t)((int64_t)i * o.stride) + k] = true;
}

WOp RandomGroup(std::mt19937_64 &rng, bool allow_weird)
{
    WOp o{};
    o.blocklen = 1 + rng() % 8;
    o.count = 1 + rng() % 40;
    unsigned k = (unsigned)(rng() % 10);
    if (k == 0)
        o.stride = (int64_t)o.blocklen; // contiguous
    else if (allow_weird && k == 1)
        o.stride = -(int64_t)(o.blocklen + rng() % 16);
    else if (allow_weird && k == 2)
        o.stride = (int64_t)(rng() % o.blocklen);
    else
        o.stride = (int64_t)(o.blocklen + 1 + rng() % 40);
    int64_t span = (int64_t)(o.count - 1) * o.stride;
    uint64_t reach = (uint64_t)(span < 0 ? -span : span) + o.blocklen;
    uint64_t base = rng() % (kSpan / 2 - reach);
    o.off = span < 0 ? base + (uint64_t)-span : base;
    o.per_block = rng() % 4 == 0;
    o.new_call = rng() % 3 == 0;
    return o;
}

Scenario Make(uint64_t seed, bool overlaps, bool setsize)
{
    std::mt19937_64 rng(seed);
    Scenario s;
    s.nw = 1 + (uint32_t)(rng() % 5);
    uint64_t ne = 1 + rng() % 4;
    s.ops.resize(ne, std::vector<std::vector<WOp>>(s.nw));
    s.cut.assign(ne, false);
    for (uint64_t e = 0; e < ne; e++) {
        std::vector<bool> used(kSpan);
        std::vector<uint64_t> max_end(s.nw, 0);
        // The noncontig pattern: every rank a vector, interleaved.
        if (rng() % 2) {
            uint64_t bl = 1 + rng() % 8, gap = rng() % 5, count = 1 + rng() % 200;
            uint64_t stride = s.nw * bl + gap, base = rng() % 1000;
            if (base + count * stride < kSpan / 2)
                for (uint32_t w = 0; w < s.nw; w++) {
                    WOp o{base + w * bl, bl, count, (int64_t)stride, rng() % 5 == 0, true};
                    if (!Free(used, o))
                        continue;
                    Mark(used, o);
                    s.ops[e][w].push_back(o);
                    max_end[w] = std::max(max_end[w], o.off + (count - 1) * stride + bl);
                }
        }
        // Groups of one period at random phases: whether they meet depends
        // on the phase and both block lengths (wrapping into the next block).
        for (int k = (int)(rng() % 4); k > 0; k--) {
            uint64_t stride = 4 + rng() % 30, base = rng() % 2000;
            for (int g = (int)(1 + rng() % 3); g > 0; g--) {
                uint32_t w = (uint32_t)(rng() % s.nw);
                WOp o{base + rng() % (3 * stride), 1 + rng() % (stride - 1), 1 + rng() % 30, (int64_t)stride,
                      rng() % 5 == 0, rng() % 2 == 0};
                if (!overlaps) {
                    if (!Free(used, o))
                        continue;
                    Mark(used, o);
                }
                max_end[w] = std::max(max_end[w], o.off + (o.count - 1) * stride + o.blocklen);
                s.ops[e][w].push_back(o);
            }
        }
        int n = (int)(rng() % 60);
        for (int i = 0; i < n; i++) {
            uint32_t w = (uint32_t)(rng() % s.nw);
            if (setsize && rng() % 25 == 0) {
                WOp o{};
                o.off = rng() % 2 ? rng() % kSpan : kSpan / 2 + rng() % (kSpan / 2); // often past the data
                o.new_call = true;
                if (max_end[w] > o.off)
                    s.cut[e] = true;
                s.ops[e][w].push_back(o);
                continue;
            }
            WOp o = RandomGroup(rng, overlaps);
            if (!overlaps) {
                if (!Free(used, o))
                    continue;
                Mark(used, o);
            }
            int64_t span = (int64_t)(o.count - 1) * o.stride;
            max_end[w] = std::max(max_end[w], std::max(o.off, o.off + (uint64_t)span) + o.blocklen);
            s.ops[e][w].push_back(o);
        }
    }
    return s;
}

// The file the replay rules say: per epoch, truncate; each writer's bytes of
// the epoch (its SETSIZE discarding its own earlier ones) in rank order; extend.
std::vector<uint8_t> ModelFile(const Scenario &s, const std::vector<std::vector<uint8_t>> &data)
{
    std::vector<uint8_t> file;
    std::vector<uint64_t> dlog(s.nw, 0);
    for (size_t e = 0; e < s.ops.size(); e++) {
        bool present = false;
        uint64_t trunc = 0, extend = 0;
        std::vector<std::vector<int>> overlay(s.nw, std::vector<int>(kSpan, -1));
        for (uint32_t w = 0; w < s.nw; w++) {
            bool wset = false;
            uint64_t last = 0;
            for (const WOp &o : s.ops[e][w]) {
                if (o.count == 0) {
                    for (uint64_t b = o.off; b < kSpan; b++)
                        overlay[w][b] = -1;
                    trunc = present ? std::min(trunc, o.off) : o.off;
                    present = wset = true;
                    last = o.off;
                    continue;
                }
                for (uint64_t i = 0; i < o.count; i++)
                    for (uint64_t k = 0; k < o.blocklen; k++)
                        overlay[w][o.off + (uint64_t)((int64_t)i * o.stride) + k] = data[w][dlog[w]++];
            }
            if (wset)
                extend = std::max(extend, last);
        }
        if (present)
            file.resize(trunc);
        for (uint32_t w = 0; w < s.nw; w++)
            for (uint64_t b = 0; b < kSpan; b++)
                if (overlay[w][b] >= 0) {
                    if (file.size() <= b)
                        file.resize(b + 1, 0);
                    file[b] = (uint8_t)overlay[w][b];
                }
        if (present && file.size() < extend)
            file.resize(extend, 0);
    }
    return file;
}

// Where each file byte of one epoch comes from, as replayers deliver it.
struct Delivery {
    std::vector<std::pair<uint64_t, uint64_t>> domains; // [lo, hi) per replayer
    std::vector<std::tuple<uint64_t, uint32_t, uint64_t>> src; // (file byte, writer, dlog), sorted
    uint64_t bytes = 0;
    bool twice = false, outside = false, unordered = false, bad_run = false;
};

struct DeliverCtx {
    Delivery *d;
    uint64_t lo, hi, last_end;
    void Put(uint64_t off, uint64_t len, uint32_t w, uint64_t dlog)
    {
        if (off < lo || off + len > hi)
            d->outside = true;
        for (uint64_t k = 0; k < len; k++)
            d->src.emplace_back(off + k, w, dlog + k);
        d->bytes += len;
    }
};

Delivery Deliver(const logfs_plan *p, uint64_t e, uint32_t m, bool runs)
{
    Delivery d;
    DeliverCtx c{&d, 0, 0, 0};
    for (uint32_t r = 0; r < m; r++) {
        uint64_t lo, hi;
        // The domain first, then its content.
        int rc = runs ? logfs_plan_domain_runs(p, e, r, m, &lo, &hi, [](void *, const logfs_replay_run *) { return 0; }, nullptr)
                      : logfs_plan_domain(p, e, r, m, &lo, &hi, [](void *, const logfs_replay_piece *) { return 0; }, nullptr);
        EXPECT_EQ(LOGFS_OK, rc);
        d.domains.push_back({lo, hi});
        c.lo = lo;
        c.hi = hi;
        c.last_end = 0;
        if (runs) {
            rc = logfs_plan_domain_runs(p, e, r, m, &lo, &hi,
                                        [](void *arg, const logfs_replay_run *q) {
                                            auto *c = static_cast<DeliverCtx *>(arg);
                                            if (q->count == 0 || q->blocklen == 0 ||
                                                (q->count == 1 ? q->stride != q->blocklen : q->stride <= q->blocklen))
                                                c->d->bad_run = true;
                                            for (uint64_t i = 0; i < q->count; i++)
                                                c->Put(q->offset + i * q->stride, q->blocklen, q->writer,
                                                       q->dlog_off + i * q->blocklen);
                                            return 0;
                                        },
                                        &c);
        } else {
            rc = logfs_plan_domain(p, e, r, m, &lo, &hi,
                                   [](void *arg, const logfs_replay_piece *q) {
                                       auto *c = static_cast<DeliverCtx *>(arg);
                                       if (q->offset < c->last_end || q->length == 0)
                                           c->d->unordered = true;
                                       c->last_end = q->offset + q->length;
                                       c->Put(q->offset, q->length, q->writer, q->dlog_off);
                                       return 0;
                                   },
                                   &c);
        }
        EXPECT_EQ(LOGFS_OK, rc);
    }
    std::sort(d.src.begin(), d.src.end());
    for (size_t i = 1; i < d.src.size(); i++)
        if (std::get<0>(d.src[i - 1]) == std::get<0>(d.src[i]))
            d.twice = true;
    return d;
}

// Applies a plan in memory, replayers 0..m-1 in turn, as pieces or runs.
std::vector<uint8_t> Apply(const logfs_plan *p, const std::vector<std::vector<uint8_t>> &data, uint32_t m, bool runs)
{
    struct Ctx { std::vector<uint8_t> *file; const std::vector<std::vector<uint8_t>> *data; } c;
    std::vector<uint8_t> file;
    c.file = &file;
    c.data = &data;
    for (uint64_t e = 0; e < logfs_plan_nepochs(p); e++) {
        logfs_resize rs;
        EXPECT_EQ(LOGFS_OK, logfs_plan_resize(p, e, &rs));
        if (rs.present)
            file.resize(rs.truncate_to);
        for (uint32_t r = 0; r < m; r++) {
            uint64_t lo, hi;
            if (runs)
                logfs_plan_domain_runs(p, e, r, m, &lo, &hi,
                                       [](void *arg, const logfs_replay_run *q) {
                                           auto *c = static_cast<Ctx *>(arg);
                                           const auto &src = (*c->data)[q->writer];
                                           for (uint64_t i = 0; i < q->count; i++) {
                                               uint64_t off = q->offset + i * q->stride;
                                               if (c->file->size() < off + q->blocklen)
                                                   c->file->resize(off + q->blocklen, 0);
                                               std::copy_n(src.begin() + (long)(q->dlog_off + i * q->blocklen),
                                                           q->blocklen, c->file->begin() + (long)off);
                                           }
                                           return 0;
                                       },
                                       &c);
            else
                logfs_plan_domain(p, e, r, m, &lo, &hi,
                                  [](void *arg, const logfs_replay_piece *q) {
                                      auto *c = static_cast<Ctx *>(arg);
                                      const auto &src = (*c->data)[q->writer];
                                      if (c->file->size() < q->offset + q->length)
                                          c->file->resize(q->offset + q->length, 0);
                                      std::copy_n(src.begin() + (long)q->dlog_off, q->length,
                                                  c->file->begin() + (long)q->offset);
                                      return 0;
                                  },
                                  &c);
        }
        if (rs.present && file.size() < rs.extend_to)
            file.resize(rs.extend_to, 0);
    }
    return file;
}

class PlanCompact : public ::testing::Test {
  protected:
    // Logs scenario `s` with real writers; returns each writer's datalog.
    std::vector<std::vector<uint8_t>> Log(const Scenario &s, const std::string &tag)
    {
        std::vector<logfs_writer *> ws;
        metas.clear();
        uint64_t seq = 0;
        for (uint32_t w = 0; w < s.nw; w++) {
            auto o = Opts(dir, tag + "w" + std::to_string(w), w, s.nw);
            o.pmem = LOGFS_PMEM_NEVER; // many small logs: skip the mapping probe
            logfs_writer *x;
            EXPECT_EQ(LOGFS_OK, logfs_writer_open(&o, &x, &err)) << err.msg;
            ws.push_back(x);
            metas.push_back(dir.file(tag + "w" + std::to_string(w) + ".metalog"));
        }
        std::vector<uint8_t> buf;
        for (size_t e = 0; e < s.ops.size(); e++) {
            for (uint32_t w = 0; w < s.nw; w++) {
                bool open = false;
                for (const WOp &o : s.ops[e][w]) {
                    if (open && (o.new_call || o.count == 0)) {
                        EXPECT_EQ(LOGFS_OK, logfs_writer_end_write(ws[w], &err));
                        open = false;
                    }
                    if (o.count == 0) {
                        EXPECT_EQ(LOGFS_OK, logfs_writer_set_size(ws[w], o.off, &err));
                        continue;
                    }
                    if (!open) {
                        EXPECT_EQ(LOGFS_OK, logfs_writer_begin_write(ws[w], &err));
                        open = true;
                    }
                    buf.resize(o.count * o.blocklen);
                    for (auto &b : buf)
                        b = (uint8_t)(++seq * 2654435761u >> 13);
                    if (o.per_block) {
                        for (uint64_t i = 0; i < o.count; i++)
                            EXPECT_EQ(LOGFS_OK, logfs_writer_add_extent(ws[w], o.off + (uint64_t)((int64_t)i * o.stride),
                                                                        o.blocklen, &buf[i * o.blocklen], &err));
                    } else {
                        EXPECT_EQ(LOGFS_OK, logfs_writer_add_run(ws[w], o.off, o.blocklen, o.stride, o.count,
                                                                 buf.data(), &err))
                            << err.msg;
                    }
                }
                if (open) {
                    EXPECT_EQ(LOGFS_OK, logfs_writer_end_write(ws[w], &err));
                }
            }
            for (uint32_t w = 0; w < s.nw; w++)
                EXPECT_EQ(LOGFS_OK, e + 1 == s.ops.size() ? logfs_writer_close(ws[w], &err)
                                                          : logfs_writer_sync(ws[w], &err));
        }
        std::vector<std::vector<uint8_t>> data;
        for (uint32_t w = 0; w < s.nw; w++)
            data.push_back(ReadFile(dir.file(tag + "w" + std::to_string(w) + ".datalog")));
        return data;
    }
    logfs_plan *Build(unsigned flags)
    {
        std::vector<const char *> p;
        for (auto &m : metas)
            p.push_back(m.c_str());
        logfs_plan *plan = nullptr;
        EXPECT_EQ(LOGFS_OK, logfs_plan_build_flags(p.data(), p.size(), nullptr, flags, &plan, &err)) << err.msg;
        return plan;
    }
    // Everything must agree; returns how many epochs were compact.
    int Check(const Scenario &s, const std::string &tag)
    {
        auto data = Log(s, tag);
        auto want = ModelFile(s, data);
        logfs_plan *fast = Build(0), *slow = Build(LOGFS_PLAN_NO_COMPACT);
        if (!fast || !slow)
            return -1;
        EXPECT_EQ(s.ops.size(), logfs_plan_nepochs(fast));
        EXPECT_EQ(logfs_plan_nepochs(slow), logfs_plan_nepochs(fast));
        int compact = 0;
        for (uint64_t e = 0; e < logfs_plan_nepochs(fast); e++) {
            EXPECT_FALSE(logfs_plan_epoch_compact(slow, e));
            compact += logfs_plan_epoch_compact(fast, e) != 0;
            EXPECT_EQ(logfs_plan_epoch_bytes(slow, e), logfs_plan_epoch_bytes(fast, e)) << tag << " epoch " << e;
            logfs_resize a, b;
            logfs_plan_resize(fast, e, &a);
            logfs_plan_resize(slow, e, &b);
            EXPECT_EQ(a.present, b.present);
            EXPECT_EQ(a.truncate_to, b.truncate_to);
            EXPECT_EQ(a.extend_to, b.extend_to);
            uint64_t pieces = 0;
            for (const auto &w : s.ops[e])
                for (const auto &o : w)
                    pieces += o.count;
            for (uint32_t m : {1u, 2u, 3u, 7u, (uint32_t)pieces + 5}) {
                Delivery ref = Deliver(slow, e, m, false);
                for (int k = 0; k < 3; k++) {
                    Delivery d = k == 0 ? Deliver(fast, e, m, false) : Deliver(k == 1 ? fast : slow, e, m, true);
                    std::string what = tag + " epoch " + std::to_string(e) + " m " + std::to_string(m) + " k " +
                                       std::to_string(k);
                    EXPECT_FALSE(d.twice) << what;
                    EXPECT_FALSE(d.outside) << what;
                    EXPECT_FALSE(d.unordered) << what;
                    EXPECT_FALSE(d.bad_run) << what;
                    EXPECT_EQ(ref.domains, d.domains) << what;
                    EXPECT_EQ(logfs_plan_epoch_bytes(fast, e), d.bytes) << what;
                    EXPECT_TRUE(ref.src == d.src) << what;
                }
                uint64_t prev_hi = 0;
                for (auto [lo, hi] : ref.domains) {
                    if (lo == hi)
                        continue;
                    EXPECT_GE(lo, prev_hi) << tag << " domains overlap";
                    prev_hi = hi;
                }
            }
        }
        for (uint32_t m : {1u, 3u, 1000u})
            for (bool runs : {false, true}) {
                EXPECT_EQ(want, Apply(fast, data, m, runs)) << tag << " m " << m << " runs " << runs;
                EXPECT_EQ(want, Apply(slow, data, m, runs)) << tag << " m " << m << " runs " << runs;
            }
        logfs_plan_free(fast);
        logfs_plan_free(slow);
        return compact;
    }
    TempDir dir;
    logfs_error err{};
    std::vector<std::string> metas;
};

} // namespace

TEST_F(PlanCompact, DisjointEpochsStayCompactAndReplayTheSame)
{
    for (uint64_t seed = 1; seed <= 25; seed++) {
        Scenario s = Make(seed, false, false);
        EXPECT_EQ((int)s.ops.size(), Check(s, "d" + std::to_string(seed))) << "seed " << seed;
        ASSERT_FALSE(HasFailure()) << "seed " << seed;
    }
}

TEST_F(PlanCompact, OverlapsFallBackToTheRangeMapAndReplayTheSame)
{
    int compact = 0, epochs = 0;
    for (uint64_t seed = 100; seed < 140; seed++) {
        Scenario s = Make(seed, true, false);
        compact += Check(s, "o" + std::to_string(seed));
        epochs += (int)s.ops.size();
        ASSERT_FALSE(HasFailure()) << "seed " << seed;
    }
    EXPECT_LT(compact, epochs) << "some epochs must have needed the range map";
}

TEST_F(PlanCompact, SetSizeThatCutsTakesTheRangeMapOtherwiseStaysCompact)
{
    int cut = 0, kept = 0;
    for (uint64_t seed = 200; seed < 240; seed++) {
        Scenario s = Make(seed, seed % 2, true);
        auto data = Log(s, "sx" + std::to_string(seed));
        logfs_plan *p = Build(0);
        ASSERT_NE(nullptr, p);
        for (uint64_t e = 0; e < s.ops.size(); e++) {
            if (s.cut[e]) {
                EXPECT_FALSE(logfs_plan_epoch_compact(p, e)) << "seed " << seed << " epoch " << e;
                cut++;
            } else if (seed % 2 == 0) {
                EXPECT_TRUE(logfs_plan_epoch_compact(p, e)) << "seed " << seed << " epoch " << e;
                kept++;
            }
        }
        logfs_plan_free(p);
        Check(s, "s" + std::to_string(seed));
        ASSERT_FALSE(HasFailure()) << "seed " << seed;
    }
    EXPECT_GT(cut, 0);
    EXPECT_GT(kept, 0);
}

TEST_F(PlanCompact, InterleavedVectorsAreAFewRunsPerDomain)
{
    // The noncontig pattern: 4 ranks, 1000 8-byte pieces each, one call.
    Scenario s;
    s.nw = 4;
    s.ops.resize(1, std::vector<std::vector<WOp>>(4));
    s.cut = {false};
    for (uint32_t w = 0; w < 4; w++)
        s.ops[0][w].push_back(WOp{w * 8, 8, 1000, 32, false, true});
    auto data = Log(s, "nc");
    logfs_plan *p = Build(0);
    ASSERT_NE(nullptr, p);
    EXPECT_TRUE(logfs_plan_epoch_compact(p, 0));
    for (uint32_t m : {1u, 3u, 4u}) {
        for (uint32_t r = 0; r < m; r++) {
            uint64_t lo, hi, runs = 0;
            ASSERT_EQ(LOGFS_OK, logfs_plan_domain_runs(p, 0, r, m, &lo, &hi,
                                                       [](void *arg, const logfs_replay_run *) {
                                                           ++*static_cast<uint64_t *>(arg);
                                                           return 0;
                                                       },
                                                       &runs));
            EXPECT_LE(runs, 4u + 2) << "a run per writer, plus blocks cut at the edges";
        }
    }
    EXPECT_EQ(ModelFile(s, data), Apply(p, data, 3, true));
    logfs_plan_free(p);
}

TEST_F(PlanCompact, StoppingEarlyReturnsTheCallbacksValue)
{
    Scenario s;
    s.nw = 2;
    s.ops.resize(1, std::vector<std::vector<WOp>>(2));
    s.cut = {false};
    s.ops[0][0].push_back(WOp{0, 4, 100, 8, false, true});
    s.ops[0][1].push_back(WOp{4, 4, 100, 8, false, true});
    Log(s, "stop");
    logfs_plan *p = Build(0);
    ASSERT_NE(nullptr, p);
    uint64_t lo, hi;
    EXPECT_EQ(77, logfs_plan_domain(p, 0, 0, 1, &lo, &hi, [](void *, const logfs_replay_piece *) { return 77; }, nullptr));
    EXPECT_EQ(78, logfs_plan_domain_runs(p, 0, 0, 1, &lo, &hi, [](void *, const logfs_replay_run *) { return 78; }, nullptr));
    EXPECT_EQ(LOGFS_EINVAL, logfs_plan_domain_runs(p, 1, 0, 1, &lo, &hi, nullptr, nullptr));
    EXPECT_EQ(LOGFS_EINVAL, logfs_plan_domain_runs(p, 0, 1, 1, &lo, &hi, nullptr, nullptr));
    logfs_plan_free(p);
}

TEST_F(PlanCompact, FewStridedGroupsMeetOrNotExactly)
{
    // Two or three strided groups (sometimes a single block too), of one
    // period or of different ones: each case alone, so a wrong verdict of
    // the overlap check shows as a different replay.
    std::mt19937_64 rng(7);
    int compact = 0, cases = 0;
    for (int c = 0; c < 300; c++) {
        Scenario s;
        s.nw = 2 + (uint32_t)(rng() % 2);
        s.ops.resize(1, std::vector<std::vector<WOp>>(s.nw));
        s.cut = {false};
        uint64_t period = 4 + rng() % 20;
        for (uint32_t w = 0; w < s.nw; w++) {
            uint64_t stride = c % 2 ? period : 4 + rng() % 20;
            WOp o{rng() % (3 * stride), 1 + rng() % (stride / 3), 2 + rng() % 20, (int64_t)stride, false, true};
            s.ops[0][w].push_back(o);
        }
        if (rng() % 3 == 0)
            s.ops[0][0].push_back(WOp{rng() % 200, 1 + rng() % 6, 1, 0, false, true});
        compact += Check(s, "f" + std::to_string(c));
        cases++;
        ASSERT_FALSE(HasFailure()) << "case " << c;
    }
    EXPECT_GT(compact, cases / 10);
    EXPECT_LT(compact, cases * 9 / 10);
}
