// Session manifests on disk: one per logging handle, live while its owner
// holds the lock, pending once released, claimed by whoever replays it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include "helpers.h"
#include "sessions.h"

class Sessions : public ::testing::Test {
  protected:
    std::string File() { return dir.file("out.dat"); }
    std::string Dir() { return dir.file(".out.dat.bbfs"); }
    void Create(uint64_t id, logfs_session *s, const std::string &text = "bbfs-manifest 2\n")
    {
        ASSERT_EQ(LOGFS_OK, logfs_session_create(File().c_str(), id, text.data(), text.size(), 0, s, &err))
            << err.msg;
    }
    std::vector<logfs_session_info> List()
    {
        logfs_session_info *v;
        size_t n;
        EXPECT_EQ(LOGFS_OK, logfs_sessions_list(File().c_str(), &v, &n, &err)) << err.msg;
        std::vector<logfs_session_info> out(v, v + n);
        for (auto &s : out)
            s.path = strdup(s.path);
        logfs_sessions_free(v, n);
        kept.insert(kept.end(), out.begin(), out.end());
        return out;
    }
    void TearDown() override
    {
        for (auto &s : kept)
            free(s.path);
    }
    TempDir dir;
    logfs_error err{};
    std::vector<logfs_session_info> kept;
};

TEST_F(Sessions, NoManifestIsAnEmptyList)
{
    EXPECT_TRUE(List().empty());
}

// An open looks for sessions without looking up the sessions directory when
// the file's directory has no subdirectory (its link count says so); one
// made by any other means is found as soon as it exists.
TEST_F(Sessions, ASessionsDirectoryIsFoundAsSoonAsItExists)
{
    EXPECT_TRUE(List().empty());
    EXPECT_EQ(LOGFS_SESSIONS_NO_DIR, logfs_sessions_lock(File().c_str()));
    ASSERT_EQ(0, mkdir(Dir().c_str(), 0700));
    std::string m = Dir() + "/00000000000000aa.manifest";
    ASSERT_EQ(0, close(open(m.c_str(), O_CREAT | O_WRONLY, 0600)));
    auto l = List();
    ASSERT_EQ(1u, l.size());
    EXPECT_EQ(m, l[0].path);
    int lk = logfs_sessions_lock(File().c_str());
    EXPECT_GE(lk, 0);
    logfs_sessions_unlock(lk);

    // (the same by a relative name, in the directory itself)
    char here[4096];
    ASSERT_NE(nullptr, getcwd(here, sizeof here));
    ASSERT_EQ(0, chdir(dir.path().c_str()));
    logfs_session_info *v;
    size_t n;
    EXPECT_EQ(LOGFS_OK, logfs_sessions_list("out.dat", &v, &n, &err)) << err.msg;
    EXPECT_EQ(1u, n);
    logfs_sessions_free(v, n);
    ASSERT_EQ(0, unlink(m.c_str()));
    ASSERT_EQ(0, rmdir(Dir().c_str()));
    EXPECT_EQ(LOGFS_OK, logfs_sessions_list("out.dat", &v, &n, &err)) << err.msg;
    EXPECT_EQ(0u, n);
    logfs_sessions_free(v, n);
    ASSERT_EQ(0, chdir(here));

    // An unrelated subdirectory: the sessions directory is looked up.
    ASSERT_EQ(0, mkdir(dir.file("sub").c_str(), 0700));
    EXPECT_TRUE(List().empty());
    logfs_session a;
    Create(7, &a);
    EXPECT_EQ(1u, List().size());
    logfs_session_remove(&a);
    EXPECT_TRUE(List().empty());
    rmdir(dir.file("sub").c_str());
}

// A read-only handle asks after every acquire whether the file has
// sessions: the first ask looks the directory up, later ones fstat it, kept
// open; a session made in between is never missed.
TEST_F(Sessions, TheKeptDirectorySaysNoneUntilASessionIsMade)
{
    int parent = -1;
    EXPECT_EQ(1, logfs_sessions_surely_none_kept(File().c_str(), &parent));
    EXPECT_EQ(-3, parent);  // (looked up, not kept yet)
    EXPECT_EQ(1, logfs_sessions_surely_none_kept(File().c_str(), &parent));
    ASSERT_GE(parent, 0);
    logfs_session a;
    Create(9, &a);
    EXPECT_EQ(0, logfs_sessions_surely_none_kept(File().c_str(), &parent));
    // (the listing after a "maybe" skips that test, and finds the session)
    logfs_session_info *v;
    size_t n;
    ASSERT_EQ(LOGFS_OK, logfs_sessions_list_except(File().c_str(), nullptr,
                                                   LOGFS_LIST_PARENT_TESTED, &v, &n, &err));
    EXPECT_EQ(1u, n);
    logfs_sessions_free(v, n);
    logfs_session_remove(&a);
    EXPECT_EQ(1, logfs_sessions_surely_none_kept(File().c_str(), &parent));
    ASSERT_EQ(LOGFS_OK, logfs_sessions_list_except(File().c_str(), nullptr,
                                                   LOGFS_LIST_PARENT_TESTED, &v, &n, &err));
    EXPECT_EQ(0u, n);
    logfs_sessions_free(v, n);
    // Any subdirectory: maybe (the listing decides).
    ASSERT_EQ(0, mkdir(dir.file("sub").c_str(), 0700));
    EXPECT_EQ(0, logfs_sessions_surely_none_kept(File().c_str(), &parent));
    rmdir(dir.file("sub").c_str());
    // The kept directory is the file's, even if its path now names another.
    std::string moved = dir.path() + ".moved";
    ASSERT_EQ(0, rename(dir.path().c_str(), moved.c_str()));
    ASSERT_EQ(0, mkdir(dir.path().c_str(), 0700));
    ASSERT_EQ(0, mkdir(dir.file("sub").c_str(), 0700));  // (the new one has a subdirectory)
    EXPECT_EQ(1, logfs_sessions_surely_none_kept(File().c_str(), &parent));
    logfs_sessions_kept_close(&parent);
    EXPECT_EQ(-1, parent);
    rmdir(dir.file("sub").c_str());
    rmdir(dir.path().c_str());
    ASSERT_EQ(0, rename(moved.c_str(), dir.path().c_str()));
}

TEST_F(Sessions, AHeldSessionIsLiveAndReleasedOneIsPending)
{
    logfs_session a, b;
    Create(1, &a);
    Create(2, &b);
    auto l = List();
    ASSERT_EQ(2u, l.size());
    EXPECT_TRUE(l[0].live);
    EXPECT_TRUE(l[1].live);
    logfs_session_release(&a);
    l = List();
    ASSERT_EQ(2u, l.size());
    int live = l[0].live + l[1].live;
    EXPECT_EQ(1, live);
    logfs_session_release(&b);
    l = List();
    EXPECT_FALSE(l[0].live || l[1].live);
}

TEST_F(Sessions, ManifestsArePrivateAndNamedByFileId)
{
    logfs_session a;
    Create(0xc0ffee, &a, "text\n");
    EXPECT_EQ(Dir() + "/0000000000c0ffee.manifest", a.path);
    EXPECT_EQ(0700u, FileMode(Dir()));
    EXPECT_EQ(0600u, FileMode(a.path));
    logfs_session_release(&a);
}

TEST_F(Sessions, ALiveSessionCannotBeClaimedAPendingOneOnlyOnce)
{
    logfs_session a, c1, c2;
    Create(1, &a);
    std::string path = a.path;
    EXPECT_EQ(LOGFS_EBUSY, logfs_session_claim(path.c_str(), &c1, &err));
    logfs_session_release(&a);
    ASSERT_EQ(LOGFS_OK, logfs_session_claim(path.c_str(), &c1, &err)) << err.msg;
    EXPECT_EQ(LOGFS_EBUSY, logfs_session_claim(path.c_str(), &c2, &err));
    EXPECT_TRUE(List()[0].live);
    logfs_session_remove(&c1);
    EXPECT_EQ(LOGFS_ENOENT, logfs_session_claim(path.c_str(), &c2, &err));
}

TEST_F(Sessions, TheDirectoryGoesWithItsLastManifest)
{
    logfs_session a, b;
    Create(1, &a);
    Create(2, &b);
    logfs_session_remove(&a);
    EXPECT_EQ(0, access(Dir().c_str(), F_OK));
    logfs_session_remove(&b);
    EXPECT_NE(0, access(Dir().c_str(), F_OK));
}

// A decider holding the lock may have seen the directory empty and be about
// to publish: the last session's removal must not take the directory from
// under it (its manifest would land in a new directory that another
// decider locks at the same time).
TEST_F(Sessions, TheLastRemovalWaitsForADeciderAndKeepsItsDirectory)
{
    logfs_session a{-1, nullptr}, b{-1, nullptr};
    Create(1, &a);
    int lk = logfs_sessions_lock(File().c_str());
    ASSERT_GE(lk, 0);
    struct stat locked, there;
    ASSERT_EQ(0, fstat(lk, &locked));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(lk); // (the lock is the parent's; an inherited copy would hold it)
        logfs_session_remove(&a);
        _exit(0);
    }
    usleep(200 * 1000); // time enough for a removal that does not wait
    Create(2, &b);
    ASSERT_EQ(0, stat(Dir().c_str(), &there));
    EXPECT_EQ(locked.st_ino, there.st_ino) << "the locked directory was replaced";
    logfs_sessions_unlock(lk);
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 1000 && done == 0; i++) { // 10 s at most, never a hang
        done = waitpid(child, &status, WNOHANG);
        if (done == 0)
            usleep(10 * 1000);
    }
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        FAIL() << "the removal still waits after the lock was let go";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    logfs_session_release(&a); // (removed by the child)
    auto l = List();
    ASSERT_EQ(1u, l.size());
    EXPECT_NE(nullptr, strstr(l[0].path, "0000000000000002"));
    logfs_session_remove(&b);
    EXPECT_NE(0, access(Dir().c_str(), F_OK));
}

// A listing races the last session's removal, which takes the directory:
// a directory removed between its open and its reading had no manifest
// when it went (rmdir takes only an empty one), so the listing is empty,
// not an error.  (HDF5's testphdf5 read "cannot list the manifests: No such
// file or directory" once in about 30 runs.)
TEST_F(Sessions, ADirectoryRemovedWhileListedIsAnEmptyList)
{
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // sessions come and go, each taking the directory with it
        for (int i = 0; i < 3000; i++) {
            logfs_session s;
            logfs_error e{};
            if (logfs_session_create(File().c_str(), 1, "x\n", 2, 0, &s, &e) != LOGFS_OK)
                _exit(1);
            logfs_session_remove(&s);
        }
        _exit(0);
    }
    int status = 0, lists = 0, failed = 0;
    std::string first;
    while (waitpid(child, &status, WNOHANG) == 0) {
        logfs_session_info *v;
        size_t n;
        logfs_error e{};
        lists++;
        if (logfs_sessions_list(File().c_str(), &v, &n, &e) != LOGFS_OK) {
            if (!failed++)
                first = e.msg;
            continue;
        }
        logfs_sessions_free(v, n);
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the sessions could not be made";
    EXPECT_EQ(0, failed) << failed << " of " << lists << " listings failed, the first: " << first;
}

TEST_F(Sessions, TwoSessionsWithOneIdAreRefused)
{
    logfs_session a, b;
    Create(7, &a);
    EXPECT_EQ(LOGFS_EEXIST, logfs_session_create(File().c_str(), 7, "x\n", 2, 0, &b, &err));
    logfs_session_release(&a);
}

TEST_F(Sessions, StoreRewritesAndLoadReadsTheText)
{
    logfs_session a;
    Create(3, &a, "a much longer first version\n");
    ASSERT_EQ(LOGFS_OK, logfs_session_store(&a, "short\n", 6, 1, &err)) << err.msg;
    char *text;
    size_t len;
    ASSERT_EQ(LOGFS_OK, logfs_session_load(a.path, &text, &len, &err)) << err.msg;
    EXPECT_EQ(std::string("short\n"), std::string(text, len));
    free(text);
    logfs_session_release(&a);
}

TEST_F(Sessions, PendingSessionsAreListedOldestFirst)
{
    logfs_session a, b;
    Create(9, &a);
    Create(1, &b);
    struct timespec t[2] = {{1000, 0}, {1000, 0}};
    ASSERT_EQ(0, utimensat(AT_FDCWD, a.path, t, 0)); // 9 is the older one
    std::string older = a.path;
    logfs_session_release(&a);
    logfs_session_release(&b);
    auto l = List();
    ASSERT_EQ(2u, l.size());
    EXPECT_EQ(older, l[0].path);
}

TEST_F(Sessions, AnOldReleasesSingleManifestIsListedAsPending)
{
    WriteFile(dir.file(".out.dat.bbfs-manifest"), {'b', '\n'});
    auto l = List();
    ASSERT_EQ(1u, l.size());
    EXPECT_FALSE(l[0].live);
    EXPECT_EQ(dir.file(".out.dat.bbfs-manifest"), l[0].path);
    logfs_session c;
    ASSERT_EQ(LOGFS_OK, logfs_session_claim(l[0].path, &c, &err));
    logfs_session_remove(&c);
    EXPECT_TRUE(List().empty());
}

TEST_F(Sessions, AnImplausiblyLargeManifestIsRefused)
{
    logfs_session a;
    Create(4, &a);
    ASSERT_EQ(0, truncate(a.path, (off_t)1 << 29));
    char *text;
    size_t len;
    EXPECT_EQ(LOGFS_EFORMAT, logfs_session_load(a.path, &text, &len, &err));
    logfs_session_release(&a);
}

TEST_F(Sessions, DecisionsAreMadeOneAtATime)
{
    EXPECT_EQ(LOGFS_SESSIONS_NO_DIR, logfs_sessions_lock(File().c_str())); // no session, nothing to decide
    logfs_session a{-1, nullptr};
    Create(1, &a);
    int lk = logfs_sessions_lock(File().c_str());
    ASSERT_GE(lk, 0);
    int other = open(Dir().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(other, 0);
    EXPECT_EQ(-1, flock(other, LOCK_EX | LOCK_NB)); // a second decider waits
    EXPECT_EQ(EWOULDBLOCK, errno);
    logfs_sessions_unlock(lk);
    EXPECT_EQ(0, flock(other, LOCK_EX | LOCK_NB));
    close(other);
    logfs_session_remove(&a);
}

// A session's own processes list the others without it: named by
// logfs_session_path, it is neither stat'ed nor tested for its lock.
TEST_F(Sessions, ListingExceptOneLeavesOnlyThatOneOut)
{
    logfs_session a, b;
    Create(1, &a);
    Create(2, &b);
    char own[4096];
    ASSERT_EQ(0, logfs_session_path(File().c_str(), 1, own, sizeof own));
    logfs_session_info *v;
    size_t n;
    ASSERT_EQ(LOGFS_OK, logfs_sessions_list_except(File().c_str(), own, 0, &v, &n, &err)) << err.msg;
    ASSERT_EQ(1u, n);
    char other[4096];
    ASSERT_EQ(0, logfs_session_path(File().c_str(), 2, other, sizeof other));
    EXPECT_STREQ(other, v[0].path);
    logfs_sessions_free(v, n);
    EXPECT_EQ(2u, List().size());
    logfs_session_remove(&a);
    logfs_session_remove(&b);
}

// A lazy session's manifest is made by whichever of its processes first
// makes log files; the others find it made and hold it too.  The session
// stays live while any of them holds it, and nobody can claim it meanwhile.
TEST_F(Sessions, TheProcessesOfOneSessionShareItsLiveLock)
{
    logfs_session a{-1, nullptr}, b{-1, nullptr}, c{-1, nullptr}, claim{-1, nullptr};
    Create(7, &a);
    const std::string text = "bbfs-manifest 2\n";
    EXPECT_EQ(LOGFS_EEXIST,
              logfs_session_create(File().c_str(), 7, text.data(), text.size(), 0, &c, &err));
    EXPECT_EQ(nullptr, c.path);
    ASSERT_EQ(LOGFS_OK, logfs_session_join(File().c_str(), 7, &b, &err)) << err.msg;
    EXPECT_STREQ(a.path, b.path);
    logfs_session_release(&a);          // the maker is done; the joiner holds it
    auto l = List();
    ASSERT_EQ(1u, l.size());
    EXPECT_TRUE(l[0].live);
    EXPECT_EQ(LOGFS_EBUSY, logfs_session_claim(l[0].path, &claim, &err));
    logfs_session_release(&b);
    EXPECT_FALSE(List()[0].live);
    ASSERT_EQ(LOGFS_OK, logfs_session_claim(l[0].path, &claim, &err)) << err.msg;
    // claimed: a late joiner finds it no longer live, and says so
    EXPECT_EQ(LOGFS_EBUSY, logfs_session_join(File().c_str(), 7, &c, &err));
    logfs_session_remove(&claim);
    EXPECT_EQ(LOGFS_ENOENT, logfs_session_join(File().c_str(), 7, &c, &err));
}

// More manifests than one read of the directory returns (the listing reads
// it in 8 KiB batches): every one is listed, once, and other names are not.
TEST_F(Sessions, EveryManifestOfALargeDirectoryIsListed)
{
    const int n = 400; // about 40 bytes of directory entry each: 2 batches
    for (int i = 1; i <= n; i++) {
        logfs_session s;
        Create((uint64_t)i, &s);
        logfs_session_release(&s);
    }
    int other = open((Dir() + "/notes.txt").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(other, 0);
    close(other);
    auto l = List();
    ASSERT_EQ((size_t)n, l.size());
    std::set<std::string> names;
    for (auto &s : l)
        names.insert(s.path);
    EXPECT_EQ((size_t)n, names.size());
    char want[4400];
    ASSERT_EQ(0, logfs_session_path(File().c_str(), n, want, sizeof want));
    EXPECT_EQ(1u, names.count(want));
    unlink((Dir() + "/notes.txt").c_str());
}

// A file's sessions are kept beside the name its last link leads to, so
// that every name of the file finds them: a plain name stays as it is, a
// link (also to a link, also in another directory) leads to the file, and
// a link to a file not made yet to where the file will be.
TEST_F(Sessions, ALinkLeadsToTheSessionsOfItsFile)
{
    char out[4096];
    ASSERT_EQ(0, logfs_canonical_name(File().c_str(), out, sizeof out));
    EXPECT_EQ(File(), out);

    ASSERT_EQ(0, close(open(File().c_str(), O_CREAT | O_WRONLY, 0600)));
    ASSERT_EQ(0, mkdir(dir.file("other").c_str(), 0700));
    std::string link = dir.file("other/alias"), chain = dir.file("chain");
    ASSERT_EQ(0, symlink("../out.dat", link.c_str()));
    ASSERT_EQ(0, symlink("other/alias", chain.c_str()));
    char real[4096];
    ASSERT_NE(nullptr, realpath(File().c_str(), real));
    for (const std::string &name : {link, chain}) {
        ASSERT_EQ(1, logfs_canonical_name(name.c_str(), out, sizeof out)) << name;
        EXPECT_STREQ(real, out) << name;
    }

    // (dangling: followed by hand, relative to each link's directory)
    std::string later = dir.file("other/later"), via = dir.file("via");
    ASSERT_EQ(0, symlink("../new.dat", later.c_str()));
    ASSERT_EQ(0, symlink("other/later", via.c_str()));
    ASSERT_EQ(1, logfs_canonical_name(via.c_str(), out, sizeof out));
    EXPECT_EQ(dir.file("other/../new.dat"), out);
    char s1[4096], s2[4096];
    ASSERT_EQ(0, logfs_sessions_dir(out, s1, sizeof s1));
    ASSERT_EQ(0, logfs_sessions_dir(dir.file("new.dat").c_str(), s2, sizeof s2));
    EXPECT_EQ(dir.file("other/../.new.dat.bbfs"), s1);
    EXPECT_EQ(dir.file(".new.dat.bbfs"), s2);

    // (a loop of links ends; a name too long for out fails)
    std::string a = dir.file("loop-a"), b = dir.file("loop-b");
    ASSERT_EQ(0, symlink("loop-b", a.c_str()));
    ASSERT_EQ(0, symlink("loop-a", b.c_str()));
    EXPECT_EQ(1, logfs_canonical_name(a.c_str(), out, sizeof out));
    EXPECT_EQ(-1, logfs_canonical_name(File().c_str(), out, 4));
}

// A handle lists its file's sessions after every acquire, through the
// sessions directory kept open since the first listing that found it.  What
// it lists is what a listing by name lists, also after the directory went
// with its last manifest and a new one was made at the name.
TEST_F(Sessions, AKeptDirectoryListsWhatTheNameHolds)
{
    int kept = -1;
    auto list = [&]() {
        logfs_session_info *v;
        size_t n;
        EXPECT_EQ(LOGFS_OK, logfs_sessions_list_kept(File().c_str(), nullptr, 0, &kept, &v, &n, &err))
            << err.msg;
        std::set<std::string> names;
        for (size_t i = 0; i < n; i++)
            names.insert(v[i].path);
        logfs_sessions_free(v, n);
        return names;
    };
    auto path = [&](uint64_t id) {
        char p[4096];
        EXPECT_EQ(0, logfs_session_path(File().c_str(), id, p, sizeof p));
        return std::string(p);
    };
    EXPECT_TRUE(list().empty());
    EXPECT_EQ(-1, kept) << "no directory, nothing kept";
    logfs_session a, b, c, d;
    Create(1, &a);
    EXPECT_EQ(std::set<std::string>({path(1)}), list());
    ASSERT_GE(kept, 0);
    int first = kept;
    Create(2, &b);
    EXPECT_EQ(std::set<std::string>({path(1), path(2)}), list());
    EXPECT_EQ(first, kept) << "listed through the kept directory";
    logfs_session_remove(&a);
    logfs_session_remove(&b);
    EXPECT_TRUE(list().empty());
    EXPECT_EQ(-1, kept) << "the removed directory is let go";
    Create(3, &c);
    EXPECT_EQ(std::set<std::string>({path(3)}), list());
    ASSERT_GE(kept, 0);
    // Removed and made anew between two listings: the kept one is dead, the
    // name leads to the new one.
    logfs_session_remove(&c);
    Create(4, &d);
    EXPECT_EQ(std::set<std::string>({path(4)}), list());
    logfs_session_remove(&d);
    logfs_sessions_kept_close(&kept);
    EXPECT_EQ(-1, kept);
}
