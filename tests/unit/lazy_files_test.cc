// Writers with lazy_files: no file until a byte must reach one; a log that
// never needed its files ends in memory and plans as its files would.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "helpers.h"

namespace {

bool Exists(const std::string &p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

struct Created {
    int calls = 0;
    int fail = 0; // the next calls fail while nonzero
    bool files_existed = false;
    std::string metalog;
};

int OnCreate(void *arg, logfs_error *err)
{
    auto *c = static_cast<Created *>(arg);
    c->calls++;
    c->files_existed = Exists(c->metalog);
    if (c->fail) {
        c->fail--;
        snprintf(err->msg, sizeof(err->msg), "refused");
        return LOGFS_EIO;
    }
    return LOGFS_OK;
}

class LazyFiles : public ::testing::Test {
  protected:
    void Open(size_t buffer = 0)
    {
        auto o = Opts(dir, "f");
        o.lazy_files = 1;
        o.buffer_size = buffer;
        o.on_create = OnCreate;
        o.on_create_arg = &created;
        created.metalog = Meta();
        ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    }
    void TearDown() override { logfs_writer_abandon(w); }
    std::string Meta() { return dir.file("f.metalog"); }
    std::string Data() { return dir.file("f.datalog"); }
    std::string Seal() { return dir.file("f.sealed"); }
    bool AnyFile() { return Exists(Meta()) || Exists(Data()) || Exists(Seal()); }

  public:
    // Some writes, a set_size, overwrites, an order count: what the replay
    // must reproduce.
    void WriteSome(logfs_writer *x)
    {
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(x, 100, a.data(), a.size(), &err)) << err.msg;
        ASSERT_EQ(LOGFS_OK, logfs_writer_order(x, 3, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(x, 0, b.data(), 50, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(x, 3000, &err));
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(x, 2900, b.data() + 50, 500, &err));
    }

  protected:
    TempDir dir;
    logfs_writer *w = nullptr;
    logfs_error err{};
    Created created;
    std::vector<uint8_t> a = Pattern(4096, 1), b = Pattern(1000, 2);
};

// What the same writes give through files, replayed by the planner.
std::vector<uint8_t> ThroughFiles(LazyFiles *t, const TempDir &d)
{
    logfs_writer *x = nullptr;
    logfs_error err{};
    auto o = Opts(d, "f");
    EXPECT_EQ(LOGFS_OK, logfs_writer_open(&o, &x, &err)) << err.msg;
    t->WriteSome(x);
    EXPECT_EQ(LOGFS_OK, logfs_writer_close(x, &err)) << err.msg;
    return ReplayOne(d);
}

} // namespace

TEST_F(LazyFiles, WritesMakeNoFile)
{
    Open();
    WriteSome(w);
    std::vector<uint8_t> got(50);
    ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, 4096, got.data(), got.size(), &err));
    EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.begin() + 50), got);
    EXPECT_FALSE(AnyFile());
    EXPECT_FALSE(logfs_writer_has_files(w));
    EXPECT_EQ(0, created.calls);
}

// A log that ends in memory gives the bytes its metalog file would hold:
// the planner replays them to the same file as the logs on disk.
TEST_F(LazyFiles, EndInMemoryPlansAsTheFilesWould)
{
    Open();
    WriteSome(w);
    const void *bytes = nullptr;
    size_t len = 0;
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_in_memory(w, &bytes, &len, &err)) << err.msg;
    EXPECT_FALSE(AnyFile());
    auto r = ReadAllMem(std::vector<uint8_t>((const uint8_t *)bytes, (const uint8_t *)bytes + len));
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(LOGFS_REC_CLOSE, r.records.back().type);

    std::string m = Meta();
    logfs_metalog_src src{m.c_str(), bytes, len, 0};
    size_t count = 1;
    logfs_plan *plan = nullptr;
    ASSERT_EQ(LOGFS_OK, logfs_plan_build_sessions_src(&src, &count, 1, nullptr, &plan, &err))
        << err.msg;
    // Apply from the writer's memory.
    std::vector<uint8_t> out;
    logfs_resize rs;
    ASSERT_EQ(1u, logfs_plan_nepochs(plan));
    logfs_plan_resize(plan, 0, &rs);
    if (rs.present)
        out.resize(rs.truncate_to);
    struct Ctx {
        logfs_writer *w;
        std::vector<uint8_t> *out;
    } c{w, &out};
    uint64_t lo, hi;
    ASSERT_EQ(LOGFS_OK, logfs_plan_domain(plan, 0, 0, 1, &lo, &hi, [](void *arg, const logfs_replay_piece *p) {
        auto *c = static_cast<Ctx *>(arg);
        if (c->out->size() < p->offset + p->length)
            c->out->resize(p->offset + p->length);
        return logfs_writer_read_data(c->w, p->dlog_off, c->out->data() + p->offset, p->length,
                                      nullptr);
    }, &c));
    if (rs.present && out.size() < rs.extend_to)
        out.resize(rs.extend_to);
    logfs_plan_free(plan);

    TempDir other;
    EXPECT_EQ(ThroughFiles(this, other), out);
    EXPECT_EQ(3400u, out.size());
}

// A sync needs the files: they are made, on_create is told after they
// exist, and the log then reads as any other.
TEST_F(LazyFiles, SyncMakesTheFilesThenTellsTheOwner)
{
    Open();
    WriteSome(w);
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    EXPECT_TRUE(logfs_writer_has_files(w));
    EXPECT_EQ(1, created.calls);
    EXPECT_TRUE(created.files_existed);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), 10, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    w = nullptr;
    EXPECT_EQ(1, created.calls);
    TempDir other;
    auto want = ThroughFiles(this, other);
    std::copy(a.begin(), a.begin() + 10, want.begin());
    EXPECT_EQ(want, ReplayOne(dir));
    // once made, a log cannot end in memory
}

// Writes past the buffer must reach the file: the first that does not fit
// makes the files (a big one is kept while it fits).
TEST_F(LazyFiles, AFullBufferMakesTheFiles)
{
    Open(8192);
    std::vector<uint8_t> big = Pattern(8192, 3);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, big.data(), big.size(), &err)) << err.msg;
    EXPECT_FALSE(AnyFile());
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 8192, a.data(), 100, &err)) << err.msg;
    EXPECT_TRUE(Exists(Data()));
    EXPECT_EQ(1, created.calls);
    const void *bytes;
    size_t len;
    EXPECT_EQ(LOGFS_ESTATE, logfs_writer_end_in_memory(w, &bytes, &len, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    w = nullptr;
    auto got = ReplayOne(dir);
    big.insert(big.end(), a.begin(), a.begin() + 100);
    EXPECT_EQ(big, got);
}

// An owner that cannot record the logs fails the flush that needed them,
// and is asked again at the next: a sync never succeeds unannounced.
TEST_F(LazyFiles, AFailedAnnouncementFailsTheSyncAndIsRetried)
{
    Open();
    created.fail = 1;
    WriteSome(w);
    EXPECT_EQ(LOGFS_EIO, logfs_writer_sync(w, &err));
    EXPECT_STREQ("refused", err.msg);
    EXPECT_EQ(0u, logfs_writer_epoch(w));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    EXPECT_EQ(2, created.calls);
    EXPECT_EQ(1u, logfs_writer_epoch(w));
}

// A log directory that went away: the sync fails and says where, the data
// stays in memory, and a sync once the directory is back succeeds.
TEST_F(LazyFiles, NoLogDirectoryFailsTheSyncNotTheWrites)
{
    std::string sub = dir.file("logs");
    ASSERT_EQ(0, mkdir(sub.c_str(), 0700));
    auto o = Opts(dir, "f");
    o.dir = sub.c_str();
    o.lazy_files = 1;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    ASSERT_EQ(0, rmdir(sub.c_str()));
    WriteSome(w);
    EXPECT_EQ(LOGFS_ENOENT, logfs_writer_sync(w, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("metalog")) << err.msg;
    ASSERT_EQ(0, mkdir(sub.c_str(), 0700));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    w = nullptr;
    TempDir other;
    auto want = ThroughFiles(this, other);
    std::string m = sub + "/f.metalog";
    const char *p = m.c_str();
    logfs_plan *plan = nullptr;
    ASSERT_EQ(LOGFS_OK, logfs_plan_build(&p, 1, nullptr, &plan, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, ApplyPlan(plan, dir.file("out"), 1));
    logfs_plan_free(plan);
    EXPECT_EQ(want, ReadFile(dir.file("out")));
}

// A log ended in memory whose replay failed goes to its files after all,
// closed, and replays from them to the same file.
TEST_F(LazyFiles, ALogEndedInMemoryCanStillBeClosedToItsFiles)
{
    Open();
    WriteSome(w);
    const void *bytes = nullptr;
    size_t len = 0;
    ASSERT_EQ(LOGFS_OK, logfs_writer_end_in_memory(w, &bytes, &len, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    w = nullptr;
    EXPECT_EQ(1, created.calls);
    auto r = ReadAll(Meta());
    ASSERT_EQ(LOGFS_END, r.status) << r.err.msg;
    EXPECT_EQ(1u, std::count_if(r.records.begin(), r.records.end(),
                                [](const logfs_record &x) { return x.type == LOGFS_REC_CLOSE; }));
    TempDir other;
    EXPECT_EQ(ThroughFiles(this, other), ReplayOne(dir));
}

// A write too big for the buffer goes to the file directly; the bytes
// buffered before it reach the file first, in their place.
TEST_F(LazyFiles, AWriteTooBigForTheBufferKeepsTheBufferedBytesBeforeIt)
{
    Open(128 << 10);
    std::vector<uint8_t> big = Pattern(200 << 10, 4);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), 1000, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 1000, big.data(), big.size(), &err)) << err.msg;
    EXPECT_TRUE(logfs_writer_has_files(w));
    std::vector<uint8_t> got(big.size());
    ASSERT_EQ(LOGFS_OK, logfs_writer_read_data(w, 1000, got.data(), got.size(), &err)) << err.msg;
    EXPECT_EQ(big, got);
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    w = nullptr;
    std::vector<uint8_t> want(a.begin(), a.begin() + 1000);
    want.insert(want.end(), big.begin(), big.end());
    EXPECT_EQ(want, ReplayOne(dir));
}
