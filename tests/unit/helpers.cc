#include "helpers.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#include "coding.h"
#include "crc32c.h"
#include "format.h"

TempDir::TempDir()
{
    const char *base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/logfs-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
        throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
}

static int rm_one(const char *p, const struct stat *, int, struct FTW *)
{
    return remove(p);
}

TempDir::~TempDir()
{
    chmod(path_.c_str(), 0700);
    nftw(path_.c_str(), rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

std::vector<uint8_t> ReadFile(const std::string &path)
{
    std::vector<uint8_t> v;
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0)
        throw std::runtime_error("cannot open " + path);
    uint8_t buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        v.insert(v.end(), buf, buf + n);
    close(fd);
    return v;
}

void WriteFile(const std::string &path, const std::vector<uint8_t> &bytes)
{
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, bytes.data(), bytes.size()) != (ssize_t)bytes.size())
        throw std::runtime_error("cannot write " + path);
    close(fd);
}

uint64_t FileSize(const std::string &path)
{
    struct stat st;
    if (stat(path.c_str(), &st) < 0)
        throw std::runtime_error("cannot stat " + path);
    return (uint64_t)st.st_size;
}

unsigned FileMode(const std::string &path)
{
    struct stat st;
    if (stat(path.c_str(), &st) < 0)
        throw std::runtime_error("cannot stat " + path);
    return st.st_mode & 07777;
}

logfs_writer_opts Opts(const TempDir &d, const std::string &name, uint32_t rank, uint32_t n,
                       uint64_t file_id)
{
    // The strings must outlive the writer's open call only.
    static thread_local std::string dir, nm;
    dir = d.path();
    nm = name;
    logfs_writer_opts o;
    logfs_writer_opts_init(&o);
    o.dir = dir.c_str();
    o.name = nm.c_str();
    o.rank = rank;
    o.nwriters = n;
    o.file_id = file_id;
    return o;
}

static void Drain(logfs_reader *r, ReadResult &res)
{
    res.header = *logfs_reader_header(r);
    logfs_record rec;
    for (;;) {
        int rc = logfs_reader_next(r, &rec, &res.err);
        if (rc != LOGFS_OK) {
            res.status = rc;
            break;
        }
        std::vector<logfs_group> gs;
        if (rec.type == LOGFS_REC_WRITE) {
            logfs_group_iter it;
            logfs_group g;
            logfs_group_iter_init(&it, rec.u.write.groups, rec.u.write.groups_len);
            while (logfs_group_next(&it, &g) == 1)
                gs.push_back(g);
            rec.u.write.groups = nullptr;
        }
        res.records.push_back(rec);
        res.groups.push_back(gs);
    }
    res.torn = logfs_reader_torn_bytes(r);
    res.bad_offset = logfs_reader_bad_offset(r);
    res.dropped = logfs_reader_dropped_bytes(r);
    logfs_reader_close(r);
}

ReadResult ReadAll(const std::string &metalog)
{
    ReadResult res;
    logfs_reader *r;
    res.status = logfs_reader_open(metalog.c_str(), &r, &res.err);
    if (res.status == LOGFS_OK)
        Drain(r, res);
    return res;
}

ReadResult ReadKeptUpTo(const std::string &metalog, uint64_t size, uint64_t *sealed)
{
    ReadResult res;
    logfs_kept_log kept = LOGFS_KEPT_LOG_INIT;
    logfs_reader *r;
    res.status = logfs_reader_open_kept_upto(metalog.c_str(), &kept, size, &r, &res.err);
    if (res.status == LOGFS_OK) {
        *sealed = logfs_reader_sealed_length(r);
        Drain(r, res);
    }
    logfs_kept_log_close(&kept);
    return res;
}

ReadResult ReadAllMem(const std::vector<uint8_t> &bytes)
{
    ReadResult res;
    logfs_reader *r;
    res.status = logfs_reader_open_mem(bytes.data(), bytes.size(), &r, &res.err);
    if (res.status == LOGFS_OK)
        Drain(r, res);
    return res;
}

void AppendRecord(std::vector<uint8_t> &log, int type, const std::vector<uint8_t> &payload)
{
    size_t at = log.size();
    log.resize(at + LOGFS_REC_HEADER_LEN + payload.size());
    logfs_put32(&log[at + 4], (uint32_t)payload.size());
    log[at + 8] = (uint8_t)type;
    if (!payload.empty())
        memcpy(&log[at + LOGFS_REC_HEADER_LEN], payload.data(), payload.size());
    FixChecksum(log, at);
}

void FixChecksum(std::vector<uint8_t> &log, uint64_t at)
{
    uint32_t n = logfs_get32(&log[at + 4]);
    logfs_put32(&log[at], logfs_crc32c_mask(logfs_crc32c(&log[at + 8], 1 + (size_t)n)));
}

std::vector<uint8_t> Pattern(size_t n, uint32_t seed)
{
    std::vector<uint8_t> v(n);
    std::mt19937 g(seed);
    for (auto &b : v)
        b = (uint8_t)g();
    return v;
}

struct ApplyCtx {
    int fd;
    std::vector<logfs_datalog_reader *> *dls;
    int rc;
};

static int apply_piece(void *arg, const logfs_replay_piece *p)
{
    auto *c = static_cast<ApplyCtx *>(arg);
    std::vector<uint8_t> buf(p->length);
    int rc = logfs_datalog_reader_pread((*c->dls)[p->writer], p->dlog_off, buf.data(), buf.size(),
                                        nullptr);
    if (rc)
        return rc;
    if (pwrite(c->fd, buf.data(), buf.size(), (off_t)p->offset) != (ssize_t)buf.size())
        return LOGFS_EIO;
    return 0;
}

int ApplyPlan(const logfs_plan *p, const std::string &out, uint32_t m, uint64_t first,
              uint64_t last, int only)
{
    std::vector<logfs_datalog_reader *> dls(logfs_plan_nwriters(p), nullptr);
    int rc = LOGFS_OK;
    for (uint32_t w = 0; w < dls.size() && !rc; w++)
        rc = logfs_datalog_reader_open(logfs_plan_datalog(p, w), &dls[w], nullptr);
    int fd = open(out.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        rc = LOGFS_EIO;
    uint64_t n = logfs_plan_nepochs(p);
    for (uint64_t e = first; e < n && e < last && !rc; e++) {
        logfs_resize rs;
        logfs_plan_resize(p, e, &rs);
        if (rs.present && ftruncate(fd, (off_t)rs.truncate_to) < 0)
            rc = LOGFS_EIO;
        for (uint32_t r = 0; r < m && !rc; r++) {
            if (only >= 0 && r != (uint32_t)only)
                continue;
            uint64_t lo, hi;
            ApplyCtx c{fd, &dls, 0};
            rc = logfs_plan_domain(p, e, r, m, &lo, &hi, apply_piece, &c);
        }
        struct stat st;
        if (!rc && rs.present && fstat(fd, &st) == 0 && (uint64_t)st.st_size < rs.extend_to &&
            ftruncate(fd, (off_t)rs.extend_to) < 0)
            rc = LOGFS_EIO;
    }
    if (fd >= 0)
        close(fd);
    for (auto *d : dls)
        logfs_datalog_reader_close(d);
    return rc;
}

std::vector<uint8_t> ReplayOne(const TempDir &dir)
{
    std::string m = dir.file("f.metalog");
    const char *p = m.c_str();
    logfs_plan *plan = nullptr;
    logfs_error err{};
    EXPECT_EQ(LOGFS_OK, logfs_plan_build(&p, 1, nullptr, &plan, &err)) << err.msg;
    if (!plan)
        return {};
    EXPECT_EQ(LOGFS_OK, ApplyPlan(plan, dir.file("out"), 1));
    logfs_plan_free(plan);
    return ReadFile(dir.file("out"));
}
