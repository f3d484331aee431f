// The manifest: the text that says which logs hold a file's newer bytes.
#include <gtest/gtest.h>

#include <string>

#include "manifest.h"

namespace {

std::string Format(const logfs_manifest &m)
{
    char *text = nullptr;
    size_t len = 0;
    EXPECT_EQ(LOGFS_OK, logfs_manifest_format(&m, &text, &len));
    std::string s(text, len);
    free(text);
    return s;
}

int Parse(const std::string &text, logfs_manifest *m, std::string *msg = nullptr)
{
    logfs_error err{};
    int rc = logfs_manifest_parse(text.data(), text.size(), m, &err);
    if (msg)
        *msg = err.msg;
    return rc;
}

logfs_manifest TwoWriters()
{
    logfs_manifest m;
    EXPECT_EQ(LOGFS_OK, logfs_manifest_init(&m, 0xc0ffee12345678ULL, 2));
    EXPECT_EQ(LOGFS_OK, logfs_manifest_set(&m, 0, "node1", "/bb/out.dat.1.0.metalog"));
    EXPECT_EQ(LOGFS_OK, logfs_manifest_set(&m, 1, "node2", "/bb/out dir/out.dat.1.1.metalog"));
    m.w[1].epochs = 7;
    return m;
}

}  // namespace

TEST(Manifest, FormatThenParseGivesTheSameWriters)
{
    logfs_manifest m = TwoWriters(), back;
    std::string text = Format(m);
    EXPECT_EQ("bbfs-manifest 7\nfile_id 00c0ffee12345678\nwriters 2\n"
              "writer 0 node1 0 /bb/out.dat.1.0.metalog\n"
              "writer 1 node2 7 /bb/out dir/out.dat.1.1.metalog\n", text);
    ASSERT_EQ(LOGFS_OK, Parse(text, &back));
    EXPECT_EQ(m.file_id, back.file_id);
    ASSERT_EQ(2u, back.nwriters);
    EXPECT_STREQ("node2", back.w[1].host);
    EXPECT_STREQ("/bb/out dir/out.dat.1.1.metalog", back.w[1].metalog);
    EXPECT_EQ(0u, back.w[0].epochs);
    EXPECT_EQ(7u, back.w[1].epochs);
    logfs_manifest_free(&m);
    logfs_manifest_free(&back);
}

TEST(Manifest, TheDurableMarkComesBeforeReplayedAndSurvivesAParse)
{
    logfs_manifest m = TwoWriters(), back;
    EXPECT_EQ(LOGFS_OK, Parse(Format(m), &back));
    EXPECT_EQ(0, back.durable);
    logfs_manifest_free(&back);
    m.durable = 1;
    m.replayed = 1;
    std::string text = Format(m);
    EXPECT_EQ("durable\nreplayed\n", text.substr(text.size() - 17));
    ASSERT_EQ(LOGFS_OK, Parse(text, &back));
    EXPECT_EQ(1, back.durable);
    EXPECT_EQ(1, back.replayed);
    logfs_manifest_free(&back);
    // A version 5 manifest has no such line: what follows is a torn tail.
    std::string v5 = "bbfs-manifest 5" + text.substr(text.find('\n'));
    ASSERT_EQ(LOGFS_OK, Parse(v5, &back));
    EXPECT_EQ(0, back.durable);
    logfs_manifest_free(&m);
    logfs_manifest_free(&back);
}

TEST(Manifest, TheLazyMarkComesAfterDurableAndBeforeReplayed)
{
    logfs_manifest m = TwoWriters(), back;
    EXPECT_EQ(LOGFS_OK, Parse(Format(m), &back));
    EXPECT_EQ(0, back.lazy);
    logfs_manifest_free(&back);
    m.durable = 1;
    m.lazy = 1;
    m.replayed = 1;
    std::string text = Format(m);
    EXPECT_EQ("durable\nlazy\nreplayed\n", text.substr(text.size() - 22));
    ASSERT_EQ(LOGFS_OK, Parse(text, &back));
    EXPECT_EQ(1, back.durable);
    EXPECT_EQ(1, back.lazy);
    EXPECT_EQ(1, back.replayed);
    logfs_manifest_free(&back);
    // A version 6 manifest has no such line: "lazy" and what follows are a
    // torn tail, and its missing metalogs stay lost ones.
    std::string v6 = "bbfs-manifest 6" + text.substr(text.find('\n'));
    ASSERT_EQ(LOGFS_OK, Parse(v6, &back));
    EXPECT_EQ(1, back.durable);
    EXPECT_EQ(0, back.lazy);
    EXPECT_EQ(0, back.replayed);
    logfs_manifest_free(&m);
    logfs_manifest_free(&back);
}

TEST(Manifest, TheReplayedMarkIsTheLastLineAndSurvivesAParse)
{
    logfs_manifest m = TwoWriters(), back;
    EXPECT_EQ(LOGFS_OK, Parse(Format(m), &back));
    EXPECT_EQ(0, back.replayed);
    logfs_manifest_free(&back);
    m.replayed = 1;
    std::string text = Format(m);
    EXPECT_EQ("replayed\n", text.substr(text.size() - 9));
    ASSERT_EQ(LOGFS_OK, Parse(text, &back));
    EXPECT_EQ(1, back.replayed);
    logfs_manifest_free(&m);
    logfs_manifest_free(&back);
}

TEST(Manifest, ServersAreListedByRankAndSurviveAParse)
{
    logfs_manifest m = TwoWriters(), back;
    ASSERT_EQ(LOGFS_OK, logfs_manifest_set_server(&m, 1, "node2:40123"));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set_server(&m, 2, "node3:1"));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set_server(&m, 0, "a b"));
    m.replayed = 1;
    std::string text = Format(m);
    EXPECT_NE(std::string::npos, text.find("\nserver 1 node2:40123\nreplayed\n")) << text;
    ASSERT_EQ(LOGFS_OK, Parse(text, &back));
    EXPECT_STREQ("", back.w[0].server);
    EXPECT_STREQ("node2:40123", back.w[1].server);
    EXPECT_EQ(1, back.replayed);
    logfs_manifest_free(&m);
    logfs_manifest_free(&back);
}

TEST(Manifest, TheMapServerComesAfterTheWritersServersAndSurvivesAParse)
{
    logfs_manifest m = TwoWriters(), back;
    ASSERT_EQ(LOGFS_OK, logfs_manifest_set_server(&m, 0, "node1:7000"));
    ASSERT_EQ(LOGFS_OK, logfs_manifest_set_map(&m, "node1:7000"));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set_map(&m, "a b"));
    m.replayed = 1;
    std::string text = Format(m);
    EXPECT_NE(std::string::npos, text.find("\nserver 0 node1:7000\nmap node1:7000\nreplayed\n"))
        << text;
    ASSERT_EQ(LOGFS_OK, Parse(text, &back));
    EXPECT_STREQ("node1:7000", back.map);
    EXPECT_STREQ("node1:7000", back.w[0].server);
    EXPECT_EQ(1, back.replayed);
    logfs_manifest_free(&back);
    // none: no line
    m.map[0] = 0;
    EXPECT_EQ(std::string::npos, Format(m).find("map")) << Format(m);
    // a version 4 manifest has no map, and a map line there is an older
    // text's tail
    ASSERT_EQ(LOGFS_OK, Parse("bbfs-manifest 4\nfile_id 1\nwriters 1\n"
                              "writer 0 h 2 /a.metalog\nmap x:1\nreplayed\n", &back));
    EXPECT_STREQ("", back.map);
    EXPECT_EQ(0, back.replayed);
    logfs_manifest_free(&m);
    logfs_manifest_free(&back);
}

TEST(Manifest, AServerLineOutOfOrderEndsTheManifest)
{
    // (the tail of an older text is never read as servers)
    logfs_manifest back;
    ASSERT_EQ(LOGFS_OK, Parse("bbfs-manifest 4\nfile_id 1\nwriters 2\n"
                              "writer 0 h 2 /a.0.metalog\nwriter 1 h 2 /a.1.metalog\n"
                              "server 1 x:1\nserver 0 y:2\nreplayed\n", &back));
    EXPECT_STREQ("", back.w[0].server);
    EXPECT_STREQ("x:1", back.w[1].server);
    EXPECT_EQ(0, back.replayed);
    logfs_manifest_free(&back);
}

TEST(Manifest, TheTailOfALongerOlderTextIsIgnored)
{
    // A writer killed between rewriting the text and trimming the file.
    logfs_manifest back;
    ASSERT_EQ(LOGFS_OK, Parse("bbfs-manifest 3\nfile_id 1\nwriters 1\n"
                              "writer 0 h 2 /a.metalog\nog\n", &back));
    EXPECT_EQ(0, back.replayed);
    EXPECT_EQ(2u, back.w[0].epochs);
    logfs_manifest_free(&back);
}

TEST(Manifest, VersionTwoManifestsAreNeverReplayed)
{
    logfs_manifest back;
    ASSERT_EQ(LOGFS_OK, Parse("bbfs-manifest 2\nfile_id 1\nwriters 1\n"
                              "writer 0 h 2 /a.metalog\nreplayed\n", &back));
    EXPECT_EQ(0, back.replayed);
    logfs_manifest_free(&back);
}

TEST(Manifest, VersionOneManifestsAreReadWithNoEpochs)
{
    logfs_manifest back;
    ASSERT_EQ(LOGFS_OK, Parse("bbfs-manifest 1\nfile_id 1\nwriters 1\n"
                              "writer 0 h /bb/a 7.metalog\n", &back));
    EXPECT_STREQ("/bb/a 7.metalog", back.w[0].metalog);
    EXPECT_EQ(0u, back.w[0].epochs);
    logfs_manifest_free(&back);
}

TEST(Manifest, AVersionTwoWriterLineWithoutEpochsIsCorrupt)
{
    logfs_manifest back;
    std::string msg;
    EXPECT_EQ(LOGFS_ECORRUPT, Parse("bbfs-manifest 2\nfile_id 1\nwriters 1\n"
                                    "writer 0 h /a.metalog\n", &back, &msg));
    EXPECT_NE(std::string::npos, msg.find("EPOCHS")) << msg;
}

TEST(Manifest, AMissingWriterCannotBeFormatted)
{
    logfs_manifest m;
    ASSERT_EQ(LOGFS_OK, logfs_manifest_init(&m, 1, 2));
    ASSERT_EQ(LOGFS_OK, logfs_manifest_set(&m, 0, "h", "/a.metalog"));
    char *text = nullptr;
    size_t len;
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_format(&m, &text, &len));
    logfs_manifest_free(&m);
}

TEST(Manifest, HostsWithBlanksAndRelativeOrMultilinePathsAreRefused)
{
    logfs_manifest m;
    ASSERT_EQ(LOGFS_OK, logfs_manifest_init(&m, 1, 1));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set(&m, 0, "a host", "/a.metalog"));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set(&m, 0, "h", "relative.metalog"));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set(&m, 0, "h", "/a\n.metalog"));
    EXPECT_EQ(LOGFS_EINVAL, logfs_manifest_set(&m, 1, "h", "/a.metalog"));
    logfs_manifest_free(&m);
}

TEST(Manifest, OtherFilesAreNotManifests)
{
    logfs_manifest m;
    EXPECT_EQ(LOGFS_EFORMAT, Parse("hello\n", &m));
    EXPECT_EQ(LOGFS_EFORMAT, Parse("", &m));
}

TEST(Manifest, ANewerVersionIsAClearError)
{
    logfs_manifest m;
    std::string msg;
    EXPECT_EQ(LOGFS_EVERSION, Parse("bbfs-manifest 8\n", &m, &msg));
    EXPECT_NE(std::string::npos, msg.find("version 8"));
}

TEST(Manifest, AWriterCountThatDoesNotMatchTheLinesIsCorrupt)
{
    logfs_manifest m = TwoWriters(), back;
    std::string text = Format(m);
    std::string more = text;
    more.replace(more.find("writers 2"), 9, "writers 3");
    std::string msg;
    EXPECT_EQ(LOGFS_ECORRUPT, Parse(more, &back, &msg));
    EXPECT_NE(std::string::npos, msg.find("line 6"));
    logfs_manifest_free(&m);
}

TEST(Manifest, ATornManifestIsCorrupt)
{
    logfs_manifest m = TwoWriters(), back;
    std::string text = Format(m);
    EXPECT_EQ(LOGFS_ECORRUPT, Parse(text.substr(0, text.size() - 5), &back));
    logfs_manifest_free(&m);
}

TEST(Manifest, WritersOutOfOrderAreCorrupt)
{
    logfs_manifest back;
    EXPECT_EQ(LOGFS_ECORRUPT, Parse("bbfs-manifest 1\nfile_id 1\nwriters 2\n"
                                    "writer 1 h /b.metalog\nwriter 0 h /a.metalog\n", &back));
}

TEST(Manifest, ItLivesBesideTheFileAsAHiddenName)
{
    char out[256];
    ASSERT_EQ(0, logfs_manifest_path("/pfs/run/out.dat", out, sizeof(out)));
    EXPECT_STREQ("/pfs/run/.out.dat.bbfs-manifest", out);
    ASSERT_EQ(0, logfs_manifest_path("out.dat", out, sizeof(out)));
    EXPECT_STREQ(".out.dat.bbfs-manifest", out);
    EXPECT_EQ(-1, logfs_manifest_path("/pfs/run/out.dat", out, 10));
}

// Found by fuzzing: a writer count the text cannot hold made the parser
// allocate for all of them first (2.7 GB for 9999999).
TEST(Manifest, AWriterCountTheTextCannotHoldIsCorrupt)
{
    logfs_manifest m;
    std::string msg;
    EXPECT_EQ(LOGFS_ECORRUPT, Parse("bbfs-manifest 2\nfile_id f\nwriters 9999999\n92\nwriter 0d 1/\n", &m, &msg));
    EXPECT_NE(std::string::npos, msg.find("9999999 writers")) << msg;
}
