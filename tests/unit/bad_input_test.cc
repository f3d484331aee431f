// Bad environments: each returns a precise code and a message naming the
// path, and nothing already written and synced is damaged.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "helpers.h"

static bool Mentions(const logfs_error &e, const std::string &s)
{
    return std::string(e.msg).find(s) != std::string::npos;
}

TEST(BadInput, MissingLogDirectoryIsENOENT)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    std::string missing = dir.file("no/such/dir");
    o.dir = missing.c_str();
    logfs_writer *w = nullptr;
    EXPECT_EQ(LOGFS_ENOENT, logfs_writer_open(&o, &w, &err));
    EXPECT_EQ(nullptr, w);
    EXPECT_EQ(LOGFS_ENOENT, err.code);
    EXPECT_EQ(ENOENT, err.sys_errno);
    EXPECT_TRUE(Mentions(err, missing)) << err.msg;
}

TEST(BadInput, LogDirectoryThatIsAFileIsENOTDIR)
{
    TempDir dir;
    logfs_error err{};
    WriteFile(dir.file("plain"), {1});
    auto o = Opts(dir, "f");
    std::string p = dir.file("plain");
    o.dir = p.c_str();
    logfs_writer *w;
    EXPECT_EQ(LOGFS_ENOTDIR, logfs_writer_open(&o, &w, &err));
}

TEST(BadInput, UnwritableLogDirectoryIsEACCES)
{
    TempDir dir;
    std::string ro = dir.file("ro");
    ASSERT_EQ(0, mkdir(ro.c_str(), 0700));
    ASSERT_EQ(0, chmod(ro.c_str(), 0555));
    ASSERT_EQ(0, chmod(dir.path().c_str(), 0755));
    // Root ignores permissions, so the attempt runs as an unprivileged user
    // in a child process when the tests run as root.
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(90);
        logfs_error err{};
        auto o = Opts(dir, "f");
        o.dir = ro.c_str();
        logfs_writer *w;
        int rc = logfs_writer_open(&o, &w, &err);
        _exit(rc == LOGFS_EACCES && Mentions(err, ro) ? 0 : 91);
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status)) << "90: could not drop privileges, 91: wrong code or message";
}

TEST(BadInput, ExistingLogsWithExclusiveAreEEXISTAndUntouched)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    auto d = Pattern(100, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, d.data(), d.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    auto before = ReadFile(dir.file("f.metalog"));
    o = Opts(dir, "f");
    o.exclusive = 1;
    EXPECT_EQ(LOGFS_EEXIST, logfs_writer_open(&o, &w, &err));
    EXPECT_EQ(before, ReadFile(dir.file("f.metalog")));
    EXPECT_EQ(d, ReadFile(dir.file("f.datalog")));
}

TEST(BadInput, BadOptionsAreEINVAL)
{
    TempDir dir;
    logfs_error err{};
    logfs_writer *w;
    auto o = Opts(dir, "f", 4, 4);
    EXPECT_EQ(LOGFS_EINVAL, logfs_writer_open(&o, &w, &err));
    o = Opts(dir, "a/b");
    EXPECT_EQ(LOGFS_EINVAL, logfs_writer_open(&o, &w, &err));
    EXPECT_EQ(LOGFS_EINVAL, logfs_writer_open(nullptr, &w, &err));
}

TEST(BadInput, DatalogFullIsENOSPCAndSyncedDataIsIntact)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.max_datalog_bytes = 100000;
    o.buffer_size = 16384;
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    auto a = Pattern(60000, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    auto b = Pattern(50000, 2);
    EXPECT_EQ(LOGFS_ENOSPC, logfs_writer_write(w, 1000, b.data(), b.size(), &err));
    EXPECT_EQ(ENOSPC, err.sys_errno);
    EXPECT_TRUE(Mentions(err, "f.datalog")) << err.msg;
    // The writer stays usable for what still fits, and syncs it.
    auto c = Pattern(30000, 3);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 60000, c.data(), c.size(), &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err)) << err.msg;
    EXPECT_EQ(LOGFS_ENOSPC, logfs_writer_write(w, 0, c.data(), c.size(), &err));
    logfs_writer_abandon(w); // crash
    auto want = a;
    want.insert(want.end(), c.begin(), c.end());
    EXPECT_EQ(want, ReplayOne(dir));
}

TEST(BadInput, MetalogFullIsENOSPCAndSyncedDataIsIntact)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    o.max_metalog_bytes = 4096;
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    auto a = Pattern(1000, 1);
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, a.data(), a.size(), &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_sync(w, &err));
    uint8_t byte = 7;
    int rc = LOGFS_OK;
    for (int i = 0; i < 2000 && rc == LOGFS_OK; i++) {
        rc = logfs_writer_write(w, 5000 + (uint64_t)i * 3, &byte, 1, &err);
        if (rc == LOGFS_OK)
            rc = logfs_writer_sync(w, &err);
    }
    EXPECT_EQ(LOGFS_ENOSPC, rc);
    EXPECT_TRUE(Mentions(err, "f.metalog")) << err.msg;
    EXPECT_LE(FileSize(dir.file("f.metalog")), 4096u);
    logfs_writer_abandon(w);
    auto r = ReadAll(dir.file("f.metalog"));
    EXPECT_EQ(LOGFS_END, r.status) << "the metalog must stay readable: " << r.err.msg;
    auto out = ReplayOne(dir);
    ASSERT_GE(out.size(), a.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), out.begin()));
}

TEST(BadInput, ReadOnlyMetalogDirectoryStillReads)
{
    TempDir dir;
    logfs_error err{};
    auto o = Opts(dir, "f");
    logfs_writer *w;
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err));
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err));
    ASSERT_EQ(0, chmod(dir.file("f.metalog").c_str(), 0400));
    EXPECT_EQ(LOGFS_END, ReadAll(dir.file("f.metalog")).status);
}
