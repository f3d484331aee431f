// A metalog sent as bytes (logfs_metalog_export) to a process that cannot
// open the file plans exactly as the file does: the same epochs, the same
// file image for any number of replayers, also with an unsynced tail, with
// damage (salvaged or refused alike) and in plans of several sessions.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "helpers.h"

namespace {

class Export : public ::testing::Test {
  protected:
    // n writers of one session; each writes `epochs` synced epochs of
    // strided and contiguous blocks, then `unsynced` writes, then closes
    // (or crashes).
    void Session(uint32_t n, int epochs, int unsynced, bool close, uint64_t file_id = 42)
    {
        for (uint32_t r = 0; r < n; r++) {
            std::string name = "f" + std::to_string(file_id) + "." + std::to_string(r);
            auto o = Opts(dir, name, r, n, file_id);
            logfs_writer *w;
            ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
            for (int e = 0; e < epochs; e++) {
                auto d = Pattern(64, r * 100 + (uint32_t)e);
                // every n-th 8-byte block from r, and one block that others overwrite
                ASSERT_EQ(LOGFS_OK, logfs_writer_begin_write(w, &err)) << err.msg;
                ASSERT_EQ(LOGFS_OK, logfs_writer_add_run(w, 8 * r, 8, 8 * n, 8, d.data(), &err))
                    << err.msg;
                ASSERT_EQ(LOGFS_OK, logfs_writer_end_write(w, &err)) << err.msg;
                ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 1000 + 16 * (uint64_t)e, d.data(), 32,
                                                       &err)) << err.msg;
                if (e == 1) {
                    ASSERT_EQ(LOGFS_OK, logfs_writer_set_size(w, 900, &err)) << err.msg;
                }
                ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
            }
            for (int i = 0; i < unsynced; i++) {
                auto d = Pattern(40, 999);
                ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 3, d.data(), d.size(), &err));
            }
            ASSERT_EQ(LOGFS_OK, logfs_writer_flush(w, &err)) << err.msg;
            if (close)
                ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
            else
                logfs_writer_abandon(w);
            paths.push_back(dir.file(name + ".metalog"));
        }
        counts.push_back(n);
    }
    // Every metalog exported; `as_file` keeps those writers as files.
    std::vector<logfs_metalog_src> Sources(bool salvage, const std::vector<bool> &as_file = {})
    {
        std::vector<logfs_metalog_src> s;
        for (size_t i = 0; i < paths.size(); i++) {
            logfs_metalog_src src = {paths[i].c_str(), nullptr, 0, 0};
            if (i >= as_file.size() || !as_file[i]) {
                void *b = nullptr;
                size_t len = 0;
                char *warn = nullptr;
                EXPECT_EQ(LOGFS_OK, logfs_metalog_export(paths[i].c_str(), salvage, &b, &len,
                                                         &warn, &err)) << err.msg;
                if (warn)
                    warnings.push_back(warn);
                free(warn);
                bufs.push_back(b);
                src.data = b;
                src.len = len;
            }
            s.push_back(src);
        }
        return s;
    }
    std::string Image(const logfs_plan *p, uint32_t m)
    {
        std::string out = dir.file("out" + std::to_string(nout++));
        EXPECT_EQ(LOGFS_OK, ApplyPlan(p, out, m));
        auto b = ReadFile(out);
        return std::string(b.begin(), b.end());
    }
    // The plans from files and from sources give the same file, for 1-3 replayers.
    void ExpectSamePlans(logfs_plan *files, logfs_plan *sent)
    {
        ASSERT_NE(files, nullptr);
        ASSERT_NE(sent, nullptr);
        EXPECT_EQ(logfs_plan_nepochs(files), logfs_plan_nepochs(sent));
        for (uint32_t w = 0; w < logfs_plan_nwriters(files); w++) {
            EXPECT_EQ(logfs_plan_writer_epochs(files, w), logfs_plan_writer_epochs(sent, w)) << w;
            EXPECT_STREQ(logfs_plan_datalog(files, w), logfs_plan_datalog(sent, w)) << w;
        }
        for (uint32_t m = 1; m <= 3; m++)
            EXPECT_EQ(Image(files, m), Image(sent, m)) << m << " replayers";
    }
    // Plan every metalog from its file and from its exported bytes (with
    // options o); the two must agree.
    void PlanBothWays(const logfs_plan_opts *o = nullptr)
    {
        auto v = Paths();
        ASSERT_EQ(LOGFS_OK, logfs_plan_build(v.data(), v.size(), o, &files, &err)) << err.msg;
        auto s = Sources(o && o->salvage);
        ASSERT_EQ(LOGFS_OK, logfs_plan_build_src(s.data(), s.size(), o, 0, &sent, &err))
            << err.msg;
        ExpectSamePlans(files, sent);
    }
    void TearDown() override
    {
        for (void *b : bufs)
            free(b);
        logfs_plan_free(files);
        logfs_plan_free(sent);
    }
    std::vector<const char *> Paths()
    {
        std::vector<const char *> v;
        for (auto &p : paths)
            v.push_back(p.c_str());
        return v;
    }

    TempDir dir;
    logfs_error err{};
    std::vector<std::string> paths;
    std::vector<size_t> counts;
    std::vector<void *> bufs;
    std::vector<std::string> warnings;
    int nout = 0;
    logfs_plan *files = nullptr, *sent = nullptr;
};

TEST_F(Export, SentBytesPlanAsTheFilesDo)
{
    Session(3, 3, 0, true);
    PlanBothWays();
    ASSERT_NE(sent, nullptr);
    EXPECT_EQ(4u, logfs_plan_writer_epochs(sent, 0)) << "three syncs and the close";
}

TEST_F(Export, AnUnsyncedTailIsNotSentAndNotPlanned)
{
    Session(2, 2, 3, false);
    for (auto &p : paths) {
        void *b = nullptr;
        size_t len = 0;
        ASSERT_EQ(LOGFS_OK, logfs_metalog_export(p.c_str(), 0, &b, &len, nullptr, &err)) << err.msg;
        EXPECT_LT(len, FileSize(p)) << "the unsynced writes stay behind";
        free(b);
    }
    PlanBothWays();
}

TEST_F(Export, DamageBeforeTheSealIsRefusedOrSalvagedAsTheFileIs)
{
    Session(2, 3, 0, true);
    // flip a payload byte of writer 1's second WRITE record: its checksum fails
    auto r = ReadAll(paths[1]);
    ASSERT_EQ(LOGFS_END, r.status);
    int writes = 0;
    uint64_t at = 0;
    for (auto &rec : r.records)
        if (rec.type == LOGFS_REC_WRITE && ++writes == 3)
            at = rec.offset + LOGFS_REC_HEADER_LEN;
    ASSERT_NE(0u, at);
    auto bytes = ReadFile(paths[1]);
    bytes[at] ^= 0x40;
    WriteFile(paths[1], bytes);

    void *b = nullptr;
    size_t len = 0;
    char *warn = nullptr;
    logfs_error ferr{};
    auto v = Paths();
    logfs_plan *refused = nullptr;
    int file_rc = logfs_plan_build(v.data(), v.size(), nullptr, &refused, &ferr);
    EXPECT_EQ(LOGFS_ECORRUPT, file_rc);
    EXPECT_EQ(file_rc, logfs_metalog_export(paths[1].c_str(), 0, &b, &len, &warn, &err))
        << "refused without salvage, as the planner refuses the file";
    EXPECT_EQ(nullptr, b);
    EXPECT_STREQ(ferr.msg, err.msg);

    EXPECT_EQ(nullptr, refused);

    logfs_plan_opts o = {1, 0, nullptr};
    PlanBothWays(&o);
    ASSERT_EQ(1u, warnings.size()) << "salvage says what was lost";
    ASSERT_NE(files, nullptr);
    EXPECT_EQ(std::string(logfs_plan_warning(files, 1)), warnings[0]);
}

TEST_F(Export, SessionsMixFilesAndSentBytes)
{
    Session(2, 2, 0, true, 7);
    Session(3, 1, 0, true, 8);
    auto v = Paths();
    ASSERT_EQ(LOGFS_OK, logfs_plan_build_sessions(v.data(), counts.data(), counts.size(), nullptr,
                                                  &files, &err)) << err.msg;
    // this node's writers as files, the others' as bytes
    auto s = Sources(false, {true, false, true, false, false});
    ASSERT_EQ(LOGFS_OK, logfs_plan_build_sessions_src(s.data(), counts.data(), counts.size(),
                                                      nullptr, &sent, &err)) << err.msg;
    ExpectSamePlans(files, sent);
}

// A writer whose node's storage was lost: nobody can read its metalog.
// Without salvage the plan is refused; with it, the other writers are
// planned as before (writer 0 gone too: the file id comes from another
// header), the gone one has no epochs and a warning, and its blocks are
// left out of the file.
TEST_F(Export, GoneWritersArePlannedAroundOnlyWithSalvage)
{
    const uint32_t n = 3;
    Session(n, 2, 0, true);
    auto v = Paths();
    ASSERT_EQ(LOGFS_OK, logfs_plan_build(v.data(), v.size(), nullptr, &files, &err)) << err.msg;
    std::string full = Image(files, 2);
    for (uint32_t gone : {0u, 1u}) {
        SCOPED_TRACE("writer " + std::to_string(gone) + " gone");
        auto s = Sources(false);
        s[gone].data = nullptr;
        s[gone].len = 0;
        s[gone].gone = 1;
        logfs_plan *refused = nullptr;
        EXPECT_EQ(LOGFS_ENOENT, logfs_plan_build_src(s.data(), s.size(), nullptr, 0, &refused,
                                                     &err));
        EXPECT_EQ(nullptr, refused);
        EXPECT_NE(std::string::npos, std::string(err.msg).find("gone")) << err.msg;

        logfs_plan_opts o = {1, 0, nullptr};
        logfs_plan *p = nullptr;
        ASSERT_EQ(LOGFS_OK, logfs_plan_build_src(s.data(), s.size(), &o, 0, &p, &err)) << err.msg;
        for (uint32_t w = 0; w < n; w++) {
            EXPECT_EQ(w == gone ? 0u : logfs_plan_writer_epochs(files, w),
                      logfs_plan_writer_epochs(p, w)) << w;
            EXPECT_STREQ(logfs_plan_datalog(files, w), logfs_plan_datalog(p, w)) << w;
            EXPECT_EQ(w == gone, logfs_plan_warning(p, w) != nullptr) << w;
        }
        ASSERT_NE(nullptr, logfs_plan_warning(p, gone));
        EXPECT_NE(std::string::npos, std::string(logfs_plan_warning(p, gone)).find(v[gone]));
        std::string img = Image(p, 2);
        // the strided blocks: writer r's 8 blocks at 8r + 8n * i
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t i = 0; i < 8; i++) {
                size_t at = 8 * r + 8 * n * i;
                ASSERT_LE(at + 8, full.size());
                ASSERT_LE(at + 8, img.size());
                if (r == gone)
                    EXPECT_EQ(std::string(8, '\0'), img.substr(at, 8)) << r << " " << i;
                else
                    EXPECT_EQ(full.substr(at, 8), img.substr(at, 8)) << r << " " << i;
            }
        logfs_plan_free(p);
    }
}

TEST_F(Export, AMissingMetalogIsAnError)
{
    void *b = nullptr;
    size_t len = 0;
    EXPECT_EQ(LOGFS_ENOENT, logfs_metalog_export(dir.file("none.metalog").c_str(), 1, &b, &len,
                                                 nullptr, &err));
    EXPECT_EQ(nullptr, b);
}

}  // namespace
