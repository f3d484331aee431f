// Fixtures for the drain's tests (drain_test.cc, drains_test.cc): writers'
// logs, their plan, and pending sessions of a file made of them.
#ifndef BBFS_TESTS_UNIT_DRAIN_FIXTURE_H
#define BBFS_TESTS_UNIT_DRAIN_FIXTURE_H

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "drain.h"
#include "helpers.h"
#include "manifest.h"
#include "sessions.h"
#include "writers_fixture.h"

class Drain : public LogWriters {
  protected:
    // The built plan drained into dir/name, which starts as @p before.
    std::vector<uint8_t> Drained(const logfs_drain_opts &o, const std::vector<uint8_t> &before = {},
                                 const std::string &name = "drained")
    {
        WriteFile(dir.file(name), before);
        int fd = open(dir.file(name).c_str(), O_RDWR);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(LOGFS_OK, logfs_drain(plan, fd, &o, &st, &err)) << err.msg;
        close(fd);
        return ReadFile(dir.file(name));
    }
    // The plan applied piece by piece into a file that starts as @p before.
    std::vector<uint8_t> Applied(const std::vector<uint8_t> &before = {})
    {
        WriteFile(dir.file("applied"), before);
        EXPECT_EQ(LOGFS_OK, ApplyPlan(plan, dir.file("applied"), 1));
        return ReadFile(dir.file("applied"));
    }
    logfs_drain_stats st{};
};

// A file's pending sessions drained by one process (logfs_drain_file).
class DrainFile : public Drain {
  protected:
    std::string File() { return dir.file("data"); }
    // The writers' logs as a pending session of File() (their manifest,
    // released: no handle holds it).
    // (@p servers: each writer's node's server, "" for none; @p map: the
    // server of the file's map)
    void Pending(uint64_t file_id, uint32_t n, uint64_t epochs, bool replayed = false,
                 const std::vector<std::string> &servers = {}, const char *map = nullptr)
    {
        logfs_manifest m{};
        ASSERT_EQ(LOGFS_OK, logfs_manifest_init(&m, file_id, n));
        for (uint32_t r = 0; r < n; r++) {
            ASSERT_EQ(LOGFS_OK, logfs_manifest_set(&m, r, "node0", metas[r].c_str()));
            m.w[r].epochs = epochs;
            if (r < servers.size() && !servers[r].empty()) {
                ASSERT_EQ(LOGFS_OK, logfs_manifest_set_server(&m, r, servers[r].c_str()));
            }
        }
        if (map) {
            ASSERT_EQ(LOGFS_OK, logfs_manifest_set_map(&m, map));
        }
        m.replayed = replayed;
        char *text;
        size_t len;
        ASSERT_EQ(LOGFS_OK, logfs_manifest_format(&m, &text, &len));
        logfs_session s{-1, nullptr};
        ASSERT_EQ(LOGFS_OK, logfs_session_create(File().c_str(), file_id, text, len, 0, &s, &err))
            << err.msg;
        free(text);
        logfs_session_release(&s);
        logfs_manifest_free(&m);
    }
    size_t Manifests()
    {
        logfs_session_info *v;
        size_t n;
        EXPECT_EQ(LOGFS_OK, logfs_sessions_list(File().c_str(), &v, &n, &err));
        logfs_sessions_free(v, n);
        return n;
    }
    bool LogsLeft() { return access(metas[0].c_str(), F_OK) == 0; }
};

#endif
