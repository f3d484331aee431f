// bbserver's saved state: what a SIGTERM wrote loads at the next start,
// also when an older server (another protocol version) wrote it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "crc32c.h"
#include "coding.h"
#include "helpers.h"
#include "ownmap.h"
#include "proto.h"
#include "state.h"

namespace {

bbs_ownmap *OneMap(void *arg, const char *)
{
    return static_cast<bbs_ownmap *>(arg);
}

std::string Print(bbs_ownmap *m, const char *f)
{
    char buf[1024];
    bbs_own_print(m, f, buf, sizeof(buf));
    return buf;
}

TEST(State, SavedMapsLoadAsTheyWere)
{
    TempDir d;
    bbs_ownmap *m = bbs_own_create();
    bbs_writer w{7, 3, "n0:1", "/l/f.bbfs.3.datalog"};
    bbs_extent e{0, 8, 4, 32, 100};
    ASSERT_EQ(BBS_OK, bbs_own_attach(m, "/f", &w, &e, 1));
    char err[512];
    ASSERT_EQ(0, bbs_state_save(d.file("state").c_str(), &m, 1, 0x5eed, err, sizeof(err)))
        << err;
    bbs_ownmap *n = bbs_own_create();
    uint64_t files = 0, incarnation = 0;
    ASSERT_EQ(0, bbs_state_load(d.file("state").c_str(), OneMap, n, &files, &incarnation, err,
                                sizeof(err)))
        << err;
    EXPECT_EQ(1u, files);
    EXPECT_EQ(0x5eedu, incarnation);    // the maps' life goes on
    EXPECT_EQ(Print(m, "/f"), Print(n, "/f"));
    bbs_own_destroy(m);
    bbs_own_destroy(n);
}

TEST(State, AnOlderServersStateLoads)
{
    // What a version-1 server wrote at SIGTERM: the magic line, then
    // attaches framed with their length and a masked crc32c, then 0.
    TempDir d;
    bbs_buf b = {};
    bbs_writer w{7, 3, "n0:1", "/l/f.bbfs.3.datalog"};
    bbs_extent e{0, 8, 1, 8, 100};
    uint8_t zero[BBS_TOKEN_LEN] = {};
    ASSERT_EQ(0, bbs_enc_attach(&b, 0, zero, "/f", &w, &e, 1, 64, 0));
    b.len -= 8;                 // (no clock before version 4)
    b.p[4] = BBS_ATTACH_SINCE;
    b.p[5] = 0;
    std::string text = "bbserver state 1\n";
    std::vector<uint8_t> file(text.begin(), text.end());
    uint8_t word[4];
    logfs_put32(word, (uint32_t) b.len);
    file.insert(file.end(), word, word + 4);
    file.insert(file.end(), b.p, b.p + b.len);
    logfs_put32(word, logfs_crc32c_mask(logfs_crc32c(b.p, b.len)));
    file.insert(file.end(), word, word + 4);
    logfs_put32(word, 0);
    file.insert(file.end(), word, word + 4);
    WriteFile(d.file("state"), file);
    bbs_buf_free(&b);

    bbs_ownmap *m = bbs_own_create();
    uint64_t files = 0, incarnation = 1;
    char err[512] = "";
    ASSERT_EQ(0, bbs_state_load(d.file("state").c_str(), OneMap, m, &files, &incarnation, err,
                                sizeof(err)))
        << err;
    EXPECT_EQ(1u, files);
    EXPECT_EQ(0u, incarnation);         // none saved: the server takes a new one
    EXPECT_EQ("[0-7:0@100]", Print(m, "/f"));
    EXPECT_EQ(64u, bbs_own_size(m, "/f"));
    bbs_own_destroy(m);
}

} // namespace
