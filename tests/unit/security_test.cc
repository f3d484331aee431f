// What bbfs refuses to trust: manifests name files that a replay reads and
// then removes, and log directories are often shared (/tmp, a node's SSD).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "helpers.h"
#include "manifest.h"
#include "sessions.h"

namespace {

// Someone else: the nobody user.  Making a file theirs needs root.
const uid_t kOther = 65534;

void GiveAway(const std::string &path)
{
    ASSERT_EQ(0u, geteuid()) << "this test makes a file of another user, which needs root "
                                "(CI runs as root)";
    ASSERT_EQ(0, lchown(path.c_str(), kOther, kOther)) << path;
}

int ParseText(const std::string &text, std::string *msg = nullptr)
{
    logfs_manifest m;
    logfs_error err{};
    int rc = logfs_manifest_parse(text.data(), text.size(), &m, &err);
    if (rc == LOGFS_OK)
        logfs_manifest_free(&m);
    if (msg)
        *msg = err.msg;
    return rc;
}

}  // namespace

TEST(Security, AManifestNamesOnlyAbsoluteMetalogPathsWithoutDotParts)
{
    EXPECT_TRUE(logfs_manifest_metalog_ok("/ssd/out.dat.1.0.metalog"));
    for (const char *bad : {"ssd/a.metalog", "/ssd/../etc/a.metalog", "/ssd/./a.metalog",
                            "/etc/passwd", "/ssd/a.metalog.x", "/.metalog"}) {
        EXPECT_FALSE(logfs_manifest_metalog_ok(bad)) << bad;
        std::string msg;
        EXPECT_EQ(LOGFS_ECORRUPT, ParseText(std::string("bbfs-manifest 3\nfile_id 1\nwriters 1\n"
                                                        "writer 0 h 1 ") + bad + "\n", &msg))
            << bad;
        EXPECT_NE(std::string::npos, msg.find("without . or ..")) << msg;
    }
}

TEST(Security, RemovingALogNeverRemovesAFileThatIsNotAMetalog)
{
    TempDir d;
    WriteFile(d.file("precious"), {1, 2, 3});
    logfs_error err{};
    EXPECT_EQ(LOGFS_EINVAL, logfs_log_remove(d.file("precious").c_str(), &err));
    EXPECT_EQ(3u, FileSize(d.file("precious")));
}

TEST(Security, AWriterNeverWritesThroughASymlinkAtALogName)
{
    TempDir d;
    WriteFile(d.file("target"), {7, 7, 7});
    ASSERT_EQ(0, symlink(d.file("target").c_str(), d.file("x.datalog").c_str()));
    logfs_writer_opts o = Opts(d, "x");
    logfs_writer *w = nullptr;
    logfs_error err{};
    EXPECT_EQ(LOGFS_EACCES, logfs_writer_open(&o, &w, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("symbolic link")) << err.msg;
    EXPECT_EQ(3u, FileSize(d.file("target")));  // not truncated
}

TEST(Security, AReaderRefusesASymlinkedMetalog)
{
    TempDir d;
    logfs_writer_opts o = Opts(d, "x");
    logfs_writer *w = nullptr;
    logfs_error err{};
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_write(w, 0, "abcd", 4, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    ASSERT_EQ(0, rename(d.file("x.metalog").c_str(), d.file("elsewhere").c_str()));
    ASSERT_EQ(0, symlink(d.file("elsewhere").c_str(), d.file("x.metalog").c_str()));
    logfs_reader *r = nullptr;
    EXPECT_EQ(LOGFS_EACCES, logfs_reader_open(d.file("x.metalog").c_str(), &r, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("symbolic link")) << err.msg;
}

TEST(Security, ALogFileOfAnotherUserIsNotRead)
{
    TempDir d;
    logfs_writer_opts o = Opts(d, "x");
    logfs_writer *w = nullptr;
    logfs_error err{};
    ASSERT_EQ(LOGFS_OK, logfs_writer_open(&o, &w, &err)) << err.msg;
    ASSERT_EQ(LOGFS_OK, logfs_writer_close(w, &err)) << err.msg;
    GiveAway(d.file("x.metalog"));
    logfs_reader *r = nullptr;
    EXPECT_EQ(LOGFS_EACCES, logfs_reader_open(d.file("x.metalog").c_str(), &r, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("another user")) << err.msg;
}

TEST(Security, AManifestWrittenByAnotherUserIsNotTrusted)
{
    TempDir d;
    std::string file = d.file("out.dat");
    logfs_session s;
    logfs_error err{};
    std::string text = "bbfs-manifest 3\nfile_id 1\nwriters 1\nwriter 0 h 0 /ssd/x.metalog\n";
    ASSERT_EQ(LOGFS_OK, logfs_session_create(file.c_str(), 1, text.data(), text.size(), 0, &s,
                                             &err)) << err.msg;
    std::string manifest = s.path;
    logfs_session_release(&s);
    GiveAway(manifest);
    char *got = nullptr;
    size_t len = 0;
    EXPECT_EQ(LOGFS_EACCES, logfs_session_load(manifest.c_str(), &got, &len, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("another user")) << err.msg;
    EXPECT_EQ(LOGFS_EACCES, logfs_session_claim(manifest.c_str(), &s, &err));
    free(got);
}

TEST(Security, ASymlinkedOrForeignManifestDirectoryIsNotTrusted)
{
    TempDir d, elsewhere;
    std::string file = d.file("out.dat");
    ASSERT_EQ(0, symlink(elsewhere.path().c_str(), d.file(".out.dat.bbfs").c_str()));
    logfs_session_info *v = nullptr;
    size_t n = 0;
    logfs_error err{};
    // A directory without subdirectories holds no sessions directory: the
    // link is not followed (a manifest where it points is not listed).
    ASSERT_EQ(0, close(open((elsewhere.path() + "/0000000000000001.manifest").c_str(),
                            O_CREAT | O_WRONLY, 0600)));
    EXPECT_EQ(LOGFS_OK, logfs_sessions_list(file.c_str(), &v, &n, &err)) << err.msg;
    EXPECT_EQ(0u, n);
    logfs_sessions_free(v, n);
    logfs_session s;
    EXPECT_EQ(LOGFS_EACCES, logfs_session_create(file.c_str(), 1, "x\n", 2, 0, &s, &err));
    // With a subdirectory beside it, the link is looked at, and refused.
    ASSERT_EQ(0, mkdir(d.file("sub").c_str(), 0700));
    EXPECT_EQ(LOGFS_EACCES, logfs_sessions_list(file.c_str(), &v, &n, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("symbolic link")) << err.msg;

    ASSERT_EQ(0, unlink(d.file(".out.dat.bbfs").c_str()));
    ASSERT_EQ(0, mkdir(d.file(".out.dat.bbfs").c_str(), 0700));
    GiveAway(d.file(".out.dat.bbfs"));
    EXPECT_EQ(LOGFS_EACCES, logfs_sessions_list(file.c_str(), &v, &n, &err));
    EXPECT_NE(std::string::npos, std::string(err.msg).find("another user")) << err.msg;
}
