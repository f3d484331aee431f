// The token a client keeps (bbs_token_find_kept): read from its file once,
// served again while the file is unchanged, read again when the file is
// replaced, rewritten or made readable by others (its mode checked again).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "token.h"

namespace {

const char kA[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
const char kB[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n";

struct KeptToken : ::testing::Test {
    TempDir dir;
    std::string path = dir.file("token");
    bbs_token_kept kept{};
    uint8_t token[BBS_TOKEN_LEN];
    char source[4096], err[512];

    void SetUp() override
    {
        unsetenv("BBFS_SERVER_TOKEN");
        setenv("BBFS_SERVER_TOKEN_FILE", path.c_str(), 1);
    }
    void TearDown() override { unsetenv("BBFS_SERVER_TOKEN_FILE"); }

    // Write text to the token file: in place (same inode), or as a new file
    // renamed over it.
    void Put(const char *text, bool in_place)
    {
        std::string to = in_place ? path : path + ".new";
        WriteFile(to, std::vector<uint8_t>(text, text + strlen(text)));
        ASSERT_EQ(0, chmod(to.c_str(), 0600));
        if (!in_place) {
            ASSERT_EQ(0, rename(to.c_str(), path.c_str()));
        }
    }
    int Find() { return bbs_token_find_kept(&kept, 0, token, source, sizeof source, err,
                                            sizeof err); }
    std::string Hex()
    {
        char hex[BBS_TOKEN_HEX + 1];
        bbs_token_hex(token, hex);
        return std::string(hex) + "\n";
    }
};

TEST_F(KeptToken, AnUnchangedFileIsReadOnce)
{
    Put(kA, false);
    unsigned long before = bbs_token_loads;
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(0, Find()) << err;
        EXPECT_EQ(kA, Hex());
    }
    EXPECT_EQ(1u, bbs_token_loads - before);
    EXPECT_EQ(path, source);
}

TEST_F(KeptToken, AReplacedFileIsReadAgain)
{
    Put(kA, false);
    ASSERT_EQ(0, Find()) << err;
    Put(kB, false);
    ASSERT_EQ(0, Find()) << err;
    EXPECT_EQ(kB, Hex());
}

TEST_F(KeptToken, AFileRewrittenInPlaceIsReadAgain)
{
    Put(kA, true);
    ASSERT_EQ(0, Find()) << err;
    // (a rewrite within the file system's timestamp tick keeps its times:
    // the change of size tells it here; the times, where they move)
    Put("  ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n", true);
    ASSERT_EQ(0, Find()) << err;
    EXPECT_EQ(kB, Hex());
}

TEST_F(KeptToken, AFileOthersCanReadIsRefusedEvenIfKeptBefore)
{
    Put(kA, false);
    ASSERT_EQ(0, Find()) << err;
    ASSERT_EQ(0, chmod(path.c_str(), 0644));
    EXPECT_EQ(-1, Find());
    EXPECT_NE(nullptr, strstr(err, "chmod 600")) << err;
}

TEST_F(KeptToken, ALinkPutInItsPlaceIsRefusedEvenIfKeptBefore)
{
    Put(kA, false);
    ASSERT_EQ(0, Find()) << err;
    ASSERT_EQ(0, link(path.c_str(), (path + ".same").c_str()));
    ASSERT_EQ(0, unlink(path.c_str()));
    ASSERT_EQ(0, symlink((path + ".same").c_str(), path.c_str()));
    EXPECT_EQ(-1, Find());
    EXPECT_NE(nullptr, strstr(err, "cannot open the token file")) << err;
}

TEST_F(KeptToken, AMissingFileFailsAndIsNotServedFromTheKeptOne)
{
    Put(kA, false);
    ASSERT_EQ(0, Find()) << err;
    ASSERT_EQ(0, unlink(path.c_str()));
    EXPECT_EQ(-1, Find());
    EXPECT_NE(nullptr, strstr(err, "cannot open the token file")) << err;
}

TEST_F(KeptToken, TheEnvironmentsTokenWinsOverAKeptFile)
{
    Put(kA, false);
    ASSERT_EQ(0, Find()) << err;
    setenv("BBFS_SERVER_TOKEN", kB, 1);
    int rc = Find();
    unsetenv("BBFS_SERVER_TOKEN");
    ASSERT_EQ(0, rc) << err;
    EXPECT_EQ(kB, Hex());
    EXPECT_STREQ("BBFS_SERVER_TOKEN", source);
    ASSERT_EQ(0, Find()) << err;        // (the file's again, read again)
    EXPECT_EQ(kA, Hex());
}

TEST_F(KeptToken, AMissingDefaultFileIsMadeWithItsDirectory)
{
    unsetenv("BBFS_SERVER_TOKEN_FILE");
    const char *home = getenv("HOME");
    std::string saved = home ? home : "";
    setenv("HOME", dir.path().c_str(), 1);
    int rc = bbs_token_find_kept(&kept, 1, token, source, sizeof source, err, sizeof err);
    uint8_t again[BBS_TOKEN_LEN];
    int rc2 = bbs_token_find_kept(&kept, 1, again, source, sizeof source, err, sizeof err);
    if (home)
        setenv("HOME", saved.c_str(), 1);
    ASSERT_EQ(0, rc) << err;
    ASSERT_EQ(0, rc2) << err;
    EXPECT_EQ(0, memcmp(token, again, BBS_TOKEN_LEN));
    EXPECT_EQ(0700u, FileMode(dir.file(".bbfs")) & 0777);
    EXPECT_EQ(0600u, FileMode(dir.file(".bbfs/token")) & 0777);
}

}  // namespace
