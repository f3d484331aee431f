// A fixture of log writers in one directory, with a byte model of the file
// their logs must replay to (the planner's and the steps' tests).
#ifndef LOGFS_TEST_WRITERS_FIXTURE_H
#define LOGFS_TEST_WRITERS_FIXTURE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "helpers.h"

class LogWriters : public ::testing::Test {
  protected:
    // Writers w0 .. w(n-1) of one file, ranks 0 .. n-1.
    void Writers(uint32_t n, bool carry = false, uint64_t file_id = 42)
    {
        for (uint32_t r = 0; r < n; r++) {
            auto o = Opts(dir, "w" + std::to_string(r), r, n, file_id);
            o.carry_calls = carry;
            logfs_writer *w;
            ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
            ws.push_back(w);
            metas.push_back(dir.file("w" + std::to_string(r) + ".metalog"));
        }
    }
    void TearDown() override
    {
        for (auto *w : ws)
            logfs_writer_abandon(w);
        logfs_plan_free(plan);
    }
    // The bytes writer r writes at off (tag tells writes of one place apart).
    static std::vector<uint8_t> Data(uint32_t r, uint64_t off, uint64_t len, int tag)
    {
        std::vector<uint8_t> d(len);
        for (uint64_t i = 0; i < len; i++)
            d[i] = (uint8_t) (r * 31 + (off + i) * 7 + tag * 13);
        return d;
    }
    // Writer r writes them, in one call; the model takes them unless told not to.
    void Write(uint32_t r, uint64_t off, uint64_t len, int tag, bool modeled = true)
    {
        auto d = Data(r, off, len, tag);
        ASSERT_EQ(LOGFS_OK, logfs_writer_write(ws[r], off, d.data(), len, &err)) << err.msg;
        if (modeled)
            Model(off, d);
    }
    void Model(uint64_t off, const std::vector<uint8_t> &d)
    {
        if (model.size() < off + d.size())
            model.resize(off + d.size(), 0);
        std::copy(d.begin(), d.end(), model.begin() + (long) off);
    }
    void CloseAll()
    {
        for (auto *w : ws)
            ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
        ws.clear();
    }
    void Build(logfs_plan_opts *o = nullptr)
    {
        std::vector<const char *> p;
        for (auto &m : metas)
            p.push_back(m.c_str());
        logfs_plan_free(plan);
        plan = nullptr;
        ASSERT_EQ(LOGFS_OK, logfs_plan_build(p.data(), p.size(), o, &plan, &err)) << err.msg;
    }
    // The built plan applied by m replayers into dir/name.
    std::vector<uint8_t> Replay(uint32_t m, const std::string &name = "out")
    {
        EXPECT_EQ(LOGFS_OK, ApplyPlan(plan, dir.file(name), m));
        return ReadFile(dir.file(name));
    }
    TempDir dir;
    logfs_error err{};
    std::vector<logfs_writer *> ws;
    std::vector<std::string> metas;
    std::vector<uint8_t> model;
    logfs_plan *plan = nullptr;
};

#endif
