// Shared test helpers: temp directories, raw file surgery, log readers.
#ifndef LOGFS_TEST_HELPERS_H
#define LOGFS_TEST_HELPERS_H

#include <cstdint>
#include <string>
#include <vector>

#include "logfs.h"

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

std::vector<uint8_t> ReadFile(const std::string &path);
void WriteFile(const std::string &path, const std::vector<uint8_t> &bytes);
uint64_t FileSize(const std::string &path);
unsigned FileMode(const std::string &path);

// Writer options for dir/name with the given rank of n.
logfs_writer_opts Opts(const TempDir &d, const std::string &name, uint32_t rank = 0,
                       uint32_t n = 1, uint64_t file_id = 42);

// Every record of a metalog until the end or an error; *status gets the
// final code (LOGFS_END for a clean end).
struct ReadResult {
    logfs_header header{};
    std::vector<logfs_record> records; // payload pointers are NOT valid
    std::vector<std::vector<logfs_group>> groups; // per record (WRITE only)
    int status = LOGFS_OK;
    logfs_error err{};
    uint64_t torn = 0, bad_offset = 0, dropped = 0;
};
ReadResult ReadAll(const std::string &metalog);
// As ReadAll, through logfs_reader_open_kept_upto with the size a caller
// saw (0: looked at by the reader); *sealed: the sealed length it took.
ReadResult ReadKeptUpTo(const std::string &metalog, uint64_t size, uint64_t *sealed);
ReadResult ReadAllMem(const std::vector<uint8_t> &bytes);

// Append a record with a correct checksum (to craft well-framed bad records).
void AppendRecord(std::vector<uint8_t> &log, int type, const std::vector<uint8_t> &payload);
// Recompute the checksum of the record at offset `at` (after editing its payload).
void FixChecksum(std::vector<uint8_t> &log, uint64_t at);

std::vector<uint8_t> Pattern(size_t n, uint32_t seed);

// Replays a plan the way the driver will: per epoch truncate, pieces, extend.
// Applies epochs [first, last) with `m` replayers (or only replayer `only`,
// to leave an epoch half done as a crash would); returns 0 or a logfs code.
int ApplyPlan(const logfs_plan *p, const std::string &out, uint32_t m, uint64_t first = 0,
              uint64_t last = UINT64_MAX, int only = -1);

// Replays the logs of writer "f" in dir into dir/out (one replayer) and
// returns that file; a failure to plan or apply is a test failure.
std::vector<uint8_t> ReplayOne(const TempDir &dir);

#endif
