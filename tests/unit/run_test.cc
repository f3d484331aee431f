// logfs_writer_add_run and the lazy read-your-writes index.
//
// add_run must be indistinguishable from add_extent per block: the same
// datalog, the same metalog bytes, the same lookups.  The lazy index must
// answer exactly what a byte-by-byte model of the writes says.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "helpers.h"

namespace {

// One step of a random workload.
struct Op {
    enum Kind { kRun, kBegin, kEnd, kSync, kSetSize, kLookup } kind;
    uint64_t off = 0, blocklen = 0, count = 0;
    int64_t stride = 0;
};

// The pieces of a lookup, one per byte: kind, epoch, datalog offset.
struct ByteState {
    int kind = LOGFS_PIECE_HOLE;
    uint64_t epoch = 0, dlog = 0;
    bool operator==(const ByteState &o) const
    {
        return kind == o.kind && (kind == LOGFS_PIECE_HOLE || epoch == o.epoch) &&
               (kind != LOGFS_PIECE_LOG || dlog == o.dlog);
    }
};

constexpr uint64_t kSpan = 4096; // every op stays inside [0, kSpan)

std::vector<ByteState> LookupBytes(logfs_writer *w, uint64_t min_epoch)
{
    std::vector<ByteState> v(kSpan);
    struct Ctx { std::vector<ByteState> *v; uint64_t next; bool ordered; } c{&v, 0, true};
    int rc = logfs_writer_lookup(w, 0, kSpan, min_epoch,
                                 [](void *arg, const logfs_piece *p) {
                                     auto *c = static_cast<Ctx *>(arg);
                                     if (p->offset != c->next)
                                         c->ordered = false;
                                     c->next = p->offset + p->length;
                                     for (uint64_t i = 0; i < p->length; i++) {
                                         ByteState &b = (*c->v)[p->offset + i];
                                         b.kind = p->kind;
                                         b.epoch = p->epoch;
                                         b.dlog = p->kind == LOGFS_PIECE_LOG ? p->dlog_off + i : 0;
                                     }
                                     return 0;
                                 },
                                 &c);
    EXPECT_EQ(LOGFS_OK, rc);
    EXPECT_TRUE(c.ordered) << "lookup pieces must tile the range in order";
    EXPECT_EQ(kSpan, c.next);
    return v;
}

// A byte model of what lookups must report.
struct Model {
    std::vector<ByteState> b = std::vector<ByteState>(kSpan);
    uint64_t epoch = 0, dlog = 0;
    void Run(const Op &o)
    {
        for (uint64_t i = 0; i < o.count; i++) {
            uint64_t at = o.off + (uint64_t)((int64_t)i * o.stride);
            for (uint64_t k = 0; k < o.blocklen; k++)
                b[at + k] = {LOGFS_PIECE_LOG, epoch, dlog++};
        }
    }
    void SetSize(uint64_t size)
    {
        for (uint64_t i = size; i < kSpan; i++)
            b[i] = {LOGFS_PIECE_ZERO, epoch, 0};
    }
    std::vector<ByteState> View(uint64_t min_epoch) const
    {
        auto v = b;
        for (auto &s : v)
            if (s.kind != LOGFS_PIECE_HOLE && s.epoch < min_epoch)
                s = ByteState{};
        return v;
    }
};

// A random run that stays inside [0, kSpan).
Op RandomRun(std::mt19937_64 &rng)
{
    Op o{Op::kRun};
    o.blocklen = 1 + rng() % 12;
    o.count = 1 + rng() % 20;
    switch (rng() % 6) {
    case 0: o.stride = (int64_t)o.blocklen; break;             // contiguous
    case 1: o.stride = 0; break;                               // same spot again
    case 2: o.stride = -(int64_t)(o.blocklen + rng() % 16); break; // backwards
    case 3: o.stride = (int64_t)(rng() % o.blocklen); break;   // overlapping blocks
    default: o.stride = (int64_t)(o.blocklen + rng() % 40); break;
    }
    int64_t span = (int64_t)(o.count - 1) * o.stride;
    uint64_t reach = (uint64_t)(span < 0 ? -span : span) + o.blocklen;
    uint64_t base = rng() % (kSpan - reach);
    o.off = span < 0 ? base + (uint64_t)-span : base;
    // Sometimes continue where the previous pattern would go next.
    return o;
}

std::vector<Op> RandomOps(uint64_t seed, int n)
{
    std::mt19937_64 rng(seed);
    std::vector<Op> ops;
    bool in_call = false;
    Op prev{Op::kRun};
    for (int i = 0; i < n; i++) {
        unsigned k = (unsigned)(rng() % 20);
        if (!in_call) {
            if (k < 2)
                ops.push_back({Op::kSync});
            else if (k < 3)
                ops.push_back({Op::kSetSize, 1000 + rng() % (kSpan - 1000)});
            else if (k < 5)
                ops.push_back({Op::kLookup});
            else {
                ops.push_back({Op::kBegin});
                in_call = true;
            }
            continue;
        }
        if (k < 3) {
            ops.push_back({Op::kEnd});
            in_call = false;
        } else if (k < 4) {
            ops.push_back({Op::kLookup}); // inside an open call
        } else if (k < 8 && prev.count > 0 && prev.stride > 0) {
            // The same pattern continued: exercises merging with the grouper.
            Op o = prev;
            o.off = prev.off + prev.count * (uint64_t)prev.stride;
            o.count = 1 + rng() % 5;
            if (o.off + (o.count - 1) * (uint64_t)o.stride + o.blocklen <= kSpan) {
                ops.push_back(o);
                prev = o;
            }
        } else {
            prev = RandomRun(rng);
            ops.push_back(prev);
        }
    }
    if (in_call)
        ops.push_back({Op::kEnd});
    return ops;
}

class Runs : public ::testing::Test {
  protected:
    logfs_writer *Open(const std::string &name)
    {
        auto o = Opts(dir, name);
        o.buffer_size = 1000; // small: appends cross buffer flushes and go direct
        logfs_writer *w;
        EXPECT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
        return w;
    }
    TempDir dir;
    logfs_error err{};
};

// Runs the ops on writer `w`: with add_run if `whole`, else add_extent per block.
// Lookups are checked against the model when `check` is set.
void Play(logfs_writer *w, const std::vector<Op> &ops, bool whole, bool lookups, Model *m)
{
    logfs_error err{};
    std::vector<uint8_t> data;
    uint64_t seq = 0;
    for (const Op &o : ops) {
        switch (o.kind) {
        case Op::kBegin: ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err)) << err.msg; break;
        case Op::kEnd: ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err)) << err.msg; break;
        case Op::kSync:
            ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
            if (m)
                m->epoch++;
            break;
        case Op::kSetSize:
            ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, o.off, &err)) << err.msg;
            if (m)
                m->SetSize(o.off);
            break;
        case Op::kLookup:
            if (lookups && m) {
                for (uint64_t me : {(uint64_t)0, m->epoch})
                    ASSERT_TRUE(m->View(me) == LookupBytes(w, me)) << "lookup differs from the model";
            }
            break;
        case Op::kRun:
            data.resize(o.count * o.blocklen);
            for (auto &b : data)
                b = (uint8_t)(seq++ * 37);
            if (whole) {
                ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(w, o.off, o.blocklen, o.stride, o.count, data.data(), &err))
                    << err.msg;
            } else {
                for (uint64_t i = 0; i < o.count; i++)
                    ASSERT_EQ(LOGFS_OK, logfs_writer_add_extent(w, o.off + (uint64_t)((int64_t)i * o.stride),
                                                                o.blocklen, &data[i * o.blocklen], &err))
                        << err.msg;
            }
            if (m)
                m->Run(o);
            break;
        }
    }
}

} // namespace

TEST_F(Runs, AddRunLogsExactlyWhatAddExtentPerBlockLogs)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        auto ops = RandomOps(seed, 300);
        std::string a = "run" + std::to_string(seed), b = "ext" + std::to_string(seed);
        logfs_writer *wa = Open(a), *wb = Open(b);
        Model ma, mb;
        Play(wa, ops, true, true, &ma);
        Play(wb, ops, false, true, &mb);
        ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
        for (uint64_t me : {(uint64_t)0, (uint64_t)1, ma.epoch})
            ASSERT_TRUE(LookupBytes(wa, me) == LookupBytes(wb, me)) << "seed " << seed;
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(wa, &err)) << err.msg;
        ASSERT_EQ(LOGFS_OK, logfs_writer_close(wb, &err)) << err.msg;
        EXPECT_EQ(ReadFile(dir.file(b + ".datalog")), ReadFile(dir.file(a + ".datalog"))) << "seed " << seed;
        EXPECT_EQ(ReadFile(dir.file(b + ".metalog")), ReadFile(dir.file(a + ".metalog"))) << "seed " << seed;
    }
}

TEST_F(Runs, LazyIndexAnswersWhatTheModelSays)
{
    for (uint64_t seed = 100; seed < 130; seed++) {
        auto ops = RandomOps(seed, 400);
        // Eager-ish: looked up all along (also inside open calls).  Lazy:
        // only at the end.  Both against the byte model.
        logfs_writer *we = Open("eager" + std::to_string(seed)), *wl = Open("lazy" + std::to_string(seed));
        Model me, ml;
        Play(we, ops, seed % 2, true, &me);
        Play(wl, ops, seed % 2, false, &ml);
        ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
        for (uint64_t e = 0; e <= ml.epoch; e++) {
            auto want = ml.View(e);
            ASSERT_TRUE(want == LookupBytes(wl, e)) << "seed " << seed << " min_epoch " << e;
            ASSERT_TRUE(want == LookupBytes(we, e)) << "seed " << seed << " min_epoch " << e;
        }
        logfs_writer_abandon(we);
        logfs_writer_abandon(wl);
    }
}

TEST_F(Runs, LookupsSeeRunsOfACallStillOpen)
{
    logfs_writer *w = Open("open");
    std::vector<uint8_t> d(8 * 100, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(w, 0, 8, 32, 100, d.data(), &err));
    std::string s;
    auto collect = [](void *arg, const logfs_piece *p) {
        auto *s = static_cast<std::string *>(arg);
        if (p->kind == LOGFS_PIECE_LOG)
            *s += std::to_string(p->offset) + "/" + std::to_string(p->dlog_off) + " ";
        return 0;
    };
    ASSERT_EQ(LOGFS_OK, logfs_writer_lookup(w, 0, 72, 0, collect, &s));
    EXPECT_EQ("0/0 32/8 64/16 ", s);
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(w, 3200, 8, 32, 2, d.data(), &err)); // continues the group
    s.clear();
    ASSERT_EQ(LOGFS_OK, logfs_writer_lookup(w, 3160, 100, 0, collect, &s));
    EXPECT_EQ("3168/792 3200/800 3232/808 ", s);
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    auto r = ReadAll(dir.file("open.metalog"));
    ASSERT_EQ(LOGFS_END, r.status);
    ASSERT_EQ(1u, r.groups[0].size());
    EXPECT_EQ(102u, r.groups[0][0].count);
    EXPECT_EQ(32, r.groups[0][0].stride);
}

TEST_F(Runs, AMillionBlockRunIsOneGroupAndOneAppend)
{
    logfs_writer *w = Open("big");
    std::vector<uint8_t> d = Pattern(8 << 20, 5);
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(w, 24, 8, 32, 1 << 20, d.data(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    std::vector<uint8_t> got(8);
    uint64_t seen = 0;
    ASSERT_EQ(LOGFS_OK, logfs_writer_lookup(w, 24 + 32 * 777777, 8, 0,
                                            [](void *arg, const logfs_piece *p) {
                                                *static_cast<uint64_t *>(arg) = p->dlog_off;
                                                return 0;
                                            },
                                            &seen));
    EXPECT_EQ(8u * 777777, seen);
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    EXPECT_EQ(d, ReadFile(dir.file("big.datalog")));
    auto r = ReadAll(dir.file("big.metalog"));
    ASSERT_EQ(1u, r.groups[0].size());
    EXPECT_EQ(1u << 20, r.groups[0][0].count);
}

TEST_F(Runs, BadRunsAreRejected)
{
    logfs_writer *w = Open("bad");
    uint8_t d[16] = {0};
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_add_run(w, 0, 8, 16, 2, d, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    EXPECT_EQ(LOGFS_OK, logfs_writer_add_run(w, 0, 8, 16, 0, d, &err)); // nothing
    EXPECT_EQ(LOGFS_OK, logfs_writer_add_run(w, 0, 0, 16, 5, d, &err)); // nothing
    EXPECT_EQ(LOGFS_ERANGE, logfs_writer_add_run(w, 8, 8, -16, 2, d, &err)) << "block 1 below 0";
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    EXPECT_EQ(LOGFS_ERANGE, logfs_writer_add_run(w, LOGFS_MAX_FILE_END - 20, 8, 16, 2, d, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err));
    EXPECT_EQ(LOGFS_OK, logfs_writer_add_run(w, LOGFS_MAX_FILE_END - 24, 8, 16, 2, d, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err));
    EXPECT_EQ(16u, logfs_writer_datalog_length(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
}

TEST_F(Runs, ManyRewritesWithoutLookupsStillLookUpRight)
{
    // More queued groups than the lazy queue holds: it folds into the index
    // on the way, and the answers do not change.
    logfs_writer *w = Open("many");
    const uint64_t n = 600000, span = 4096;
    std::vector<uint64_t> last(span, UINT64_MAX);
    uint8_t b = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t off = (i * 7919) % span;
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, off, &b, 1, &err));
        last[off] = i; // datalog offset of the byte that wins
    }
    std::vector<uint64_t> got(span, UINT64_MAX);
    ASSERT_EQ(LOGFS_OK, logfs_writer_lookup(w, 0, span, 0,
                                            [](void *arg, const logfs_piece *p) {
                                                auto *g = static_cast<std::vector<uint64_t> *>(arg);
                                                if (p->kind == LOGFS_PIECE_LOG)
                                                    for (uint64_t k = 0; k < p->length; k++)
                                                        (*g)[p->offset + k] = p->dlog_off + k;
                                                return 0;
                                            },
                                            &got));
    EXPECT_EQ(last, got);
    logfs_writer_abandon(w);
}
