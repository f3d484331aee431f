#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "errors.h"

TEST(Errors, EveryCodeHasANameADescriptionAndAnErrno)
{
    for (int c = 0; c < LOGFS_NUM_STATUS; c++) {
        EXPECT_EQ(0, std::string(logfs_status_name(c)).rfind("LOGFS_", 0)) << c;
        EXPECT_GT(std::string(logfs_strerror(c)).size(), 5u) << c;
        if (c != LOGFS_OK && c != LOGFS_END) {
            EXPECT_NE(0, logfs_status_errno(c)) << logfs_status_name(c);
        }
    }
    EXPECT_STREQ("LOGFS_ENOSPC", logfs_status_name(LOGFS_ENOSPC));
}

TEST(Errors, SystemErrnosMapToTheirCodeAndBack)
{
    for (int e : {ENOSPC, EACCES, ENOENT, ENOTDIR, EEXIST, EROFS, ENOMEM}) {
        int c = logfs_status_from_errno(e);
        EXPECT_EQ(e, logfs_status_errno(c)) << logfs_status_name(c);
    }
    EXPECT_EQ(LOGFS_ENOSPC, logfs_status_from_errno(EDQUOT));
    EXPECT_EQ(LOGFS_EIO, logfs_status_from_errno(EBADF));
}

TEST(Errors, UnknownCodesAreNamedSafely)
{
    EXPECT_STREQ("LOGFS_?", logfs_status_name(-1));
    EXPECT_STREQ("LOGFS_?", logfs_status_name(LOGFS_NUM_STATUS));
    EXPECT_EQ(EIO, logfs_status_errno(9999));
}
