// bbserver's wire format: what encodes decodes to the same fields, and the
// decoder refuses every malformed message with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "drains.h"
#include "proto.h"

namespace {

const uint8_t kToken[BBS_TOKEN_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct Buf {
    bbs_buf b{};
    ~Buf() { bbs_buf_free(&b); }
    std::vector<uint8_t> bytes() const { return {b.p, b.p + b.len}; }
};

bbs_writer Writer(uint32_t rank = 3)
{
    return bbs_writer{77, rank, "node1:7700", "/local/out.dat.bbfs.3.datalog"};
}

std::vector<uint8_t> Attach(const std::vector<bbs_extent> &e)
{
    Buf b;
    bbs_writer w = Writer();
    EXPECT_EQ(0, bbs_enc_attach(&b.b, 9, kToken, "/pfs/out.dat", &w, e.data(),
                                (uint32_t) e.size(), 0, 0x1122334455667788ull));
    return b.bytes();
}

int DecodeRequest(const std::vector<uint8_t> &m, bbs_request *r, std::string *why = nullptr)
{
    char err[512];
    int st = bbs_dec_request(m.data(), m.size(), r, err, sizeof(err));
    if (why)
        *why = err;
    return st;
}

// Offset of the first record of an Attach() message.
size_t FirstRecord(const std::vector<uint8_t> &m, uint32_t n)
{
    return m.size() - n * 40 - 8;   // (the clock last)
}

TEST(Proto, AttachRoundTripsEveryField)
{
    std::vector<bbs_extent> e = {{0, 8, 1000, 32, 0}, {1 << 20, 4096, 1, 0, 8000}};
    bbs_request r;
    auto m = Attach(e);
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_EQ(BBS_ATTACH, r.op);
    EXPECT_EQ(9u, r.id);
    EXPECT_EQ(0, memcmp(r.token, kToken, BBS_TOKEN_LEN));
    EXPECT_STREQ("/pfs/out.dat", r.file);
    EXPECT_EQ(77u, r.writer.session);
    EXPECT_EQ(3u, r.writer.rank);
    EXPECT_STREQ("node1:7700", r.writer.node);
    EXPECT_STREQ("/local/out.dat.bbfs.3.datalog", r.writer.datalog);
    ASSERT_EQ(2u, r.nrecords);
    EXPECT_EQ(1001u, r.npieces);
    bbs_extent got;
    bbs_record(&r, 0, &got);
    EXPECT_EQ(0u, got.off);
    EXPECT_EQ(8u, got.len);
    EXPECT_EQ(1000u, got.count);
    EXPECT_EQ(32u, got.stride);
    bbs_record(&r, 1, &got);
    EXPECT_EQ(uint64_t(1) << 20, got.off);
    EXPECT_EQ(8000u, got.pos);
    EXPECT_EQ(0x1122334455667788ull, r.clock);
}

TEST(Proto, EveryReplyCarriesTheClockAndIncarnationSetLast)
{
    Buf b;
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_STAT, 4, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_stat(&b.b, 100, 1, 1));
    bbs_rep_set_server(&b.b, 0xa1b2c3d4e5f60718ull, 0x99);
    bbs_reply r;
    char err[256];
    ASSERT_EQ(BBS_OK, bbs_dec_reply(b.b.p, b.b.len, &r, err, sizeof(err))) << err;
    EXPECT_EQ(0xa1b2c3d4e5f60718ull, r.clock);
    EXPECT_EQ(0x99u, r.incarnation);
    EXPECT_EQ(100u, r.size);
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_QUERY, 5, BBS_ENOFILE, "nothing"));
    bbs_rep_set_server(&b.b, 42, 7);
    ASSERT_EQ(BBS_OK, bbs_dec_reply(b.b.p, b.b.len, &r, err, sizeof(err))) << err;
    EXPECT_EQ(42u, r.clock);
    EXPECT_EQ(7u, r.incarnation);
    EXPECT_STREQ("nothing", r.msg);
}

TEST(Proto, EveryTruncationOfAValidMessageIsRefused)
{
    auto m = Attach({{0, 8, 10, 16, 0}});
    for (size_t n = 0; n < m.size(); n++) {
        std::vector<uint8_t> cut(m.begin(), m.begin() + n);
        bbs_request r;
        std::string why;
        EXPECT_EQ(BBS_EMSG, DecodeRequest(cut, &r, &why)) << n;
        EXPECT_FALSE(why.empty()) << n;
    }
}

TEST(Proto, TrailingBytesAreRefused)
{
    Buf b;
    ASSERT_EQ(0, bbs_enc_stat(&b.b, 1, kToken, "/f"));
    auto m = b.bytes();
    m.push_back(0);
    bbs_request r;
    std::string why;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(m, &r, &why));
    EXPECT_NE(std::string::npos, why.find("after the end")) << why;
}

TEST(Proto, OtherVersionIsRefusedAsVersion)
{
    Buf b;
    ASSERT_EQ(0, bbs_enc_ping(&b.b, 1, kToken));
    auto m = b.bytes();
    m[4] = BBS_VERSION + 1;
    bbs_request r;
    EXPECT_EQ(BBS_EVERSION, DecodeRequest(m, &r));
    m[4] = BBS_VERSION - 1;     // 2: REPLAYED of the whole file only
    EXPECT_EQ(BBS_EVERSION, DecodeRequest(m, &r));
    m[4] = BBS_VERSION;
    m[0] ^= 0xff;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(m, &r));
}

TEST(Proto, AReplyOfAnotherVersionIsRefusedAsVersion)
{
    // (the client tells the user that server is another build's)
    Buf b;
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_PING, 1, BBS_EVERSION, "version"));
    auto m = b.bytes();
    m[4] = BBS_VERSION - 1;
    bbs_reply r;
    char err[256];
    EXPECT_EQ(BBS_EVERSION, bbs_dec_reply(m.data(), m.size(), &r, err, sizeof(err)));
    std::string want = "protocol version " + std::to_string(BBS_VERSION - 1) +
                       "; this side speaks " + std::to_string(BBS_VERSION);
    EXPECT_NE(nullptr, strstr(err, want.c_str())) << err;
}

TEST(Proto, AnOlderAttachIsUpgradedWithNoClockAndNothingElse)
{
    // (a state file saved by a version-1 to -3 server holds their attaches:
    // this version's layout without the clock at the end)
    Buf b;
    bbs_writer w = Writer();
    bbs_extent e = {0, 8, 4, 32, 0};
    ASSERT_EQ(0, bbs_enc_attach(&b.b, 1, kToken, "/f", &w, &e, 1, 0, 99));
    auto m = b.bytes();
    size_t old_len = m.size() - 8;
    bbs_request r;
    for (int version = BBS_ATTACH_SINCE; version < 4; version++) {
        std::vector<uint8_t> o(m.begin(), m.begin() + (long) old_len);
        o[4] = (uint8_t) version;
        EXPECT_EQ(BBS_EVERSION, DecodeRequest(o, &r));
        o.resize(old_len + 8);
        EXPECT_EQ(old_len, bbs_upgrade_attach(o.data(), old_len, old_len + 7)); // no room
        ASSERT_EQ(old_len + 8, bbs_upgrade_attach(o.data(), old_len, o.size()));
        ASSERT_EQ(BBS_OK, DecodeRequest(o, &r)) << version;
        EXPECT_EQ(0u, r.clock);
        EXPECT_EQ(1u, r.nrecords);
    }
    EXPECT_EQ(m.size(), bbs_upgrade_attach(m.data(), m.size(), m.size()));  // current: kept
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_EQ(99u, r.clock);
    m[4] = BBS_VERSION + 1; // a newer server's: not ours to read
    EXPECT_EQ(m.size(), bbs_upgrade_attach(m.data(), m.size(), m.size() + 8));
    EXPECT_EQ(BBS_EVERSION, DecodeRequest(m, &r));
    Buf p;
    ASSERT_EQ(0, bbs_enc_ping(&p.b, 1, kToken));
    auto q = p.bytes();
    q[4] = BBS_ATTACH_SINCE;
    q.resize(q.size() + 8);
    EXPECT_EQ(q.size() - 8, bbs_upgrade_attach(q.data(), q.size() - 8, q.size()));
    q.resize(q.size() - 8);
    EXPECT_EQ(BBS_EVERSION, DecodeRequest(q, &r));
}

TEST(Proto, UnknownOperationIsRefused)
{
    Buf b;
    ASSERT_EQ(0, bbs_enc_ping(&b.b, 1, kToken));
    auto m = b.bytes();
    m[6] = BBS_NUM_OPS;
    bbs_request r;
    std::string why;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(m, &r, &why));
    EXPECT_NE(std::string::npos, why.find("unknown operation")) << why;
}

TEST(Proto, StringsMustEndInTheirOnlyNul)
{
    Buf b;
    ASSERT_EQ(0, bbs_enc_stat(&b.b, 1, kToken, "/pfs/x"));
    auto m = b.bytes();
    size_t s = 48 + 4;          // header, token, length
    bbs_request r;
    auto inner = m;
    inner[s + 2] = 0;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(inner, &r));
    auto unterminated = m;
    unterminated.back() = 'x';
    EXPECT_EQ(BBS_EMSG, DecodeRequest(unterminated, &r));
}

TEST(Proto, RecordCountMustMatchTheBytes)
{
    auto m = Attach({{0, 8, 1, 0, 0}, {8, 8, 1, 0, 8}});
    size_t count_at = FirstRecord(m, 2) - 4;
    m[count_at] = 3;
    bbs_request r;
    std::string why;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(m, &r, &why));
    EXPECT_NE(std::string::npos, why.find("3 records and the clock need")) << why;
}

TEST(Proto, ExtentsThatOverlapThemselvesOrPassTheLargestOffsetAreRefused)
{
    bbs_request r;
    std::string why;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{0, 16, 4, 8, 0}}), &r, &why));
    EXPECT_NE(std::string::npos, why.find("stride")) << why;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{0, 0, 1, 0, 0}}), &r));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{0, 8, 0, 8, 0}}), &r));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{uint64_t(INT64_MAX) - 4, 8, 1, 0, 0}}), &r));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{0, 8, uint64_t(1) << 60, 16, 0}}), &r));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{0, 8, 2, 8, uint64_t(INT64_MAX) - 8}}), &r));
    // the largest extent that fits is taken
    EXPECT_EQ(BBS_OK, DecodeRequest(Attach({{uint64_t(INT64_MAX) - 8, 8, 1, 0, 0}}), &r));
}

TEST(Proto, RecordsExpandingPastThePieceLimitAreRefused)
{
    bbs_request r;
    std::string why;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(Attach({{0, 8, BBS_MAX_PIECES, 8, 0}, {0, 8, 1, 0, 0}}),
                                      &r, &why));
    EXPECT_NE(std::string::npos, why.find("split the attach")) << why;
    EXPECT_EQ(BBS_OK, DecodeRequest(Attach({{0, 8, BBS_MAX_PIECES, 8, 0}}), &r));
}

TEST(Proto, EmptyAndReversedRangesAreRefused)
{
    Buf b;
    bbs_request r;
    ASSERT_EQ(0, bbs_enc_query(&b.b, 1, kToken, "/f", 10, 10));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(b.bytes(), &r));
    ASSERT_EQ(0, bbs_enc_query(&b.b, 1, kToken, "/f", 10, 5));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(b.bytes(), &r));
    ASSERT_EQ(0, bbs_enc_query(&b.b, 1, kToken, "/f", 0, UINT64_MAX));
    EXPECT_EQ(BBS_OK, DecodeRequest(b.bytes(), &r));
    EXPECT_EQ(UINT64_MAX, r.end);
}

TEST(Proto, ReadsAreBoundedAndNonEmpty)
{
    Buf b;
    bbs_request r;
    ASSERT_EQ(0, bbs_enc_read(&b.b, 1, kToken, "/l/x.datalog", 0, BBS_MAX_READ + 1));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(b.bytes(), &r));
    ASSERT_EQ(0, bbs_enc_read(&b.b, 1, kToken, "/l/x.datalog", 0, 0));
    EXPECT_EQ(BBS_EMSG, DecodeRequest(b.bytes(), &r));
    ASSERT_EQ(0, bbs_enc_read(&b.b, 1, kToken, "/l/x.datalog", 100, 50));
    ASSERT_EQ(BBS_OK, DecodeRequest(b.bytes(), &r));
    EXPECT_EQ(100u, r.start);
    EXPECT_EQ(150u, r.end);
}

TEST(Proto, ReplayedRoundTripsItsSessionsAndChecksTheirCount)
{
    const uint64_t sessions[3] = {5, UINT64_MAX, 77};
    Buf b;
    ASSERT_EQ(0, bbs_enc_replayed(&b.b, 4, kToken, "/pfs/out.dat", sessions, 3));
    auto m = b.bytes();
    bbs_request r;
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_EQ(BBS_REPLAYED, r.op);
    EXPECT_STREQ("/pfs/out.dat", r.file);
    ASSERT_EQ(3u, r.nsessions);
    for (uint32_t i = 0; i < 3; i++)
        EXPECT_EQ(sessions[i], bbs_session(&r, i)) << i;
    // the count is the 4 bytes before the 3 sessions: one more than sent
    // runs past the end, one fewer leaves bytes over, past the limit refused
    std::string why;
    auto more = m;
    more[m.size() - 3 * 8 - 4] = 4;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(more, &r, &why));
    EXPECT_NE(std::string::npos, why.find("the sessions")) << why;
    auto fewer = m;
    fewer[m.size() - 3 * 8 - 4] = 2;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(fewer, &r, &why));
    EXPECT_NE(std::string::npos, why.find("after the end")) << why;
    auto huge = m;
    huge[m.size() - 3 * 8 - 4 + 3] = 0x10;
    EXPECT_EQ(BBS_EMSG, DecodeRequest(huge, &r, &why));
    EXPECT_NE(std::string::npos, why.find("at most 65536")) << why;
    // none named: the whole file
    ASSERT_EQ(0, bbs_enc_replayed(&b.b, 4, kToken, "/pfs/out.dat", nullptr, 0));
    ASSERT_EQ(BBS_OK, DecodeRequest(b.bytes(), &r));
    EXPECT_EQ(0u, r.nsessions);
}

TEST(Proto, ExportAndRemoveRoundTripAndCheckTheirFields)
{
    Buf b;
    bbs_request r;
    ASSERT_EQ(0, bbs_enc_export(&b.b, 1, kToken, "/l/x.metalog", 1));
    auto m = b.bytes();
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_STREQ("/l/x.metalog", r.path);
    EXPECT_EQ(1, r.salvage);
    std::vector<uint8_t> bad = m;
    bad.back() = 2;                     // the salvage flag is 0 or 1
    EXPECT_EQ(BBS_EMSG, DecodeRequest(bad, &r));
    ASSERT_EQ(0, bbs_enc_remove(&b.b, 2, kToken, "/l/y.metalog"));
    m = b.bytes();
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_EQ(BBS_REMOVE, r.op);
    EXPECT_STREQ("/l/y.metalog", r.path);
    EXPECT_STREQ("export", bbs_op_name(BBS_EXPORT));
}

TEST(Proto, ExportReplyCarriesTotalWarningAndFirstBytes)
{
    Buf b;
    bbs_reply r;
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_EXPORT, 3, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_export(&b.b, 10, "epoch 2 lost"));
    uint8_t *p = bbs_rep_read_room(&b.b, 4);
    ASSERT_NE(nullptr, p);
    memcpy(p, "abcd", 4);
    char err[256];
    auto m = b.bytes();
    ASSERT_EQ(BBS_OK, bbs_dec_reply(m.data(), m.size(), &r, err, sizeof(err))) << err;
    EXPECT_EQ(10u, r.total);
    EXPECT_STREQ("epoch 2 lost", r.warning);
    ASSERT_EQ(4u, r.len);
    EXPECT_EQ(0, memcmp(r.data, "abcd", 4));
    // more bytes than the sealed part is damage
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_EXPORT, 3, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_export(&b.b, 2, nullptr));
    ASSERT_NE(nullptr, bbs_rep_read_room(&b.b, 4));
    m = b.bytes();
    EXPECT_EQ(BBS_EMSG, bbs_dec_reply(m.data(), m.size(), &r, err, sizeof(err)));
}

static bbs_piece Piece(uint64_t off, uint64_t len, uint64_t count, uint64_t stride,
                       uint32_t writer, uint64_t pos)
{
    return bbs_piece{{off, len, count, stride, pos}, writer};
}

TEST(Proto, QueryReplyRoundTripsWritersAndPieces)
{
    Buf b;
    bbs_writer w[2] = {Writer(0), Writer(5)};
    bbs_piece p[3] = {Piece(0, 8, 1, 8, 1, 0), Piece(8, 8, 1, 8, 0, 64),
                      Piece(100, 8, 1000, 32, 1, 8)};
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_QUERY, 4, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_query_begin(&b.b, 2));
    ASSERT_EQ(0, bbs_rep_query_writer(&b.b, &w[0]));
    ASSERT_EQ(0, bbs_rep_query_writer(&b.b, &w[1]));
    ASSERT_EQ(0, bbs_rep_query_pieces(&b.b, p, 3, 200, 4096));
    bbs_reply r;
    char err[256];
    auto m = b.bytes();
    ASSERT_EQ(BBS_OK, bbs_dec_reply(m.data(), m.size(), &r, err, sizeof(err))) << err;
    EXPECT_EQ(BBS_QUERY, r.op);
    EXPECT_EQ(4u, r.id);
    ASSERT_EQ(2u, r.nwriters);
    ASSERT_EQ(3u, r.npieces);
    EXPECT_EQ(1002u, r.nblocks);
    EXPECT_EQ(200u, r.more);
    EXPECT_EQ(4096u, r.size);
    bbs_writer got[2];
    bbs_reply_writers(&r, got);
    EXPECT_EQ(5u, got[1].rank);
    EXPECT_STREQ("/local/out.dat.bbfs.3.datalog", got[1].datalog);
    bbs_piece gp;
    bbs_reply_piece(&r, 2, &gp);
    EXPECT_EQ(100u, gp.e.off);
    EXPECT_EQ(8u, gp.e.len);
    EXPECT_EQ(1000u, gp.e.count);
    EXPECT_EQ(32u, gp.e.stride);
    EXPECT_EQ(8u, gp.e.pos);
    EXPECT_EQ(1u, gp.writer);
    for (size_t n = 0; n < m.size(); n++)
        EXPECT_EQ(BBS_EMSG, bbs_dec_reply(m.data(), n, &r, err, sizeof(err))) << n;
}

/* A reply is checked as an attach is: a client must not trust a server
 * that claims overlapping, wrapping or unbounded records. */
static std::string QueryReplyError(const bbs_piece &p)
{
    Buf b;
    bbs_writer w = Writer();
    bbs_rep_begin(&b.b, BBS_QUERY, 4, BBS_OK, nullptr);
    bbs_rep_query_begin(&b.b, 1);
    bbs_rep_query_writer(&b.b, &w);
    bbs_rep_query_pieces(&b.b, &p, 1, UINT64_MAX, 0);
    bbs_reply r;
    char err[256] = "";
    if (bbs_dec_reply(b.b.p, b.b.len, &r, err, sizeof(err)) != BBS_EMSG)
        return "accepted";
    return err;
}

TEST(Proto, ReplyRecordsThatOverlapWrapOrExpandTooFarAreRefused)
{
    EXPECT_NE(std::string::npos, QueryReplyError(Piece(0, 8, 2, 4, 0, 0)).find("stride 4"));
    EXPECT_NE(std::string::npos, QueryReplyError(Piece(0, 0, 1, 8, 0, 0)).find("no bytes"));
    EXPECT_NE(std::string::npos,
              QueryReplyError(Piece(INT64_MAX - 4, 8, 1, 8, 0, 0)).find("past the largest"));
    EXPECT_NE(std::string::npos,
              QueryReplyError(Piece(0, 8, 3, UINT64_MAX / 2, 0, 0)).find("past the largest"));
    EXPECT_NE(std::string::npos,
              QueryReplyError(Piece(0, 1, BBS_MAX_QUERY_PIECES + 1ull, 1, 0, 0))
                  .find("expand to more than"));
    EXPECT_EQ("accepted", QueryReplyError(Piece(0, 1, BBS_MAX_QUERY_PIECES, 1, 0, 0)));
}

TEST(Proto, ReplyPieceNamingAMissingWriterIsRefused)
{
    Buf b;
    bbs_writer w = Writer();
    bbs_piece p = Piece(0, 8, 1, 8, 1, 0);
    bbs_rep_begin(&b.b, BBS_QUERY, 4, BBS_OK, nullptr);
    bbs_rep_query_begin(&b.b, 1);
    bbs_rep_query_writer(&b.b, &w);
    bbs_rep_query_pieces(&b.b, &p, 1, UINT64_MAX, 0);
    bbs_reply r;
    char err[256];
    EXPECT_EQ(BBS_EMSG, bbs_dec_reply(b.b.p, b.b.len, &r, err, sizeof(err)));
    EXPECT_NE(nullptr, strstr(err, "record 0 names writer 1 of 1")) << err;
}

TEST(Proto, ErrorRepliesCarryTheirMessageAndNoBody)
{
    Buf b;
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_READ, 8, BBS_EPERM, "not a log"));
    bbs_reply r;
    char err[256];
    ASSERT_EQ(BBS_OK, bbs_dec_reply(b.b.p, b.b.len, &r, err, sizeof(err))) << err;
    EXPECT_EQ(BBS_EPERM, r.status);
    EXPECT_STREQ("not a log", r.msg);
    EXPECT_EQ(0u, r.len);
}

TEST(Proto, RequestsAndRepliesAreNotMistakenForEachOther)
{
    Buf b;
    ASSERT_EQ(0, bbs_enc_ping(&b.b, 1, kToken));
    bbs_reply rep;
    char err[256];
    EXPECT_EQ(BBS_EMSG, bbs_dec_reply(b.b.p, b.b.len, &rep, err, sizeof(err)));
    ASSERT_EQ(0, bbs_rep_begin(&b.b, BBS_PING, 1, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_ping(&b.b, 1, 0, nullptr));
    bbs_request req;
    EXPECT_EQ(BBS_EMSG, bbs_dec_request(b.b.p, b.b.len, &req, err, sizeof(err)));
}

TEST(Proto, EveryStatusHasADescription)
{
    for (int s = 0; s < BBS_NUM_STATUS; s++)
        EXPECT_STRNE("unknown status", bbs_status_str(s)) << s;
    EXPECT_STREQ("unknown status", bbs_status_str(BBS_NUM_STATUS));
}

} // namespace

// DRAIN: the file in, where its drain stands out; DRAINS: one file's or
// every drain, records with their strings.
TEST(Proto, DrainNamesTheFileAndItsReplyWhereTheDrainStands)
{
    Buf b;
    bbs_request r;
    ASSERT_EQ(0, bbs_enc_drain(&b.b, 4, kToken, "/pfs/ckpt.dat"));
    auto m = b.bytes();
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_EQ(BBS_DRAIN, r.op);
    EXPECT_STREQ("/pfs/ckpt.dat", r.file);
    EXPECT_STREQ("drain", bbs_op_name(BBS_DRAIN));
    Buf rb;
    bbs_reply rep;
    bbs_drain_rec d{"/pfs/ckpt.dat", "", BBS_DRAIN_RUNNING, 1, 1 << 20, 3 << 20, 0, 0, 1500};
    ASSERT_EQ(0, bbs_rep_begin(&rb.b, BBS_DRAIN, 4, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_drains_begin(&rb.b, 1));
    ASSERT_EQ(0, bbs_rep_drain(&rb.b, &d));
    auto rm = rb.bytes();
    char err[256];
    ASSERT_EQ(BBS_OK, bbs_dec_reply(rm.data(), rm.size(), &rep, err, sizeof(err))) << err;
    ASSERT_EQ(1u, rep.ndrains);
    bbs_drain_rec got{};
    bbs_reply_drains(&rep, &got);
    EXPECT_STREQ("/pfs/ckpt.dat", got.path);
    EXPECT_STREQ("", got.error);
    EXPECT_EQ(BBS_DRAIN_RUNNING, got.state);
    EXPECT_EQ(1u << 20, got.done);
    EXPECT_EQ(3u << 20, got.total);
    EXPECT_EQ(1500u, got.age_ms);
    rm.pop_back(); // (a reply cut short)
    EXPECT_EQ(BBS_EMSG, bbs_dec_reply(rm.data(), rm.size(), &rep, err, sizeof(err)));

    // DRAINS: every drain (no file), two records
    ASSERT_EQ(0, bbs_enc_drains(&b.b, 5, kToken, nullptr));
    m = b.bytes();
    ASSERT_EQ(BBS_OK, DecodeRequest(m, &r));
    EXPECT_EQ(BBS_DRAINS, r.op);
    EXPECT_STREQ("", r.file);
    bbs_drain_rec f{"/pfs/b", "a log is short", BBS_DRAIN_FAILED, 2, 0, 0, 0, 0, 9};
    ASSERT_EQ(0, bbs_rep_begin(&rb.b, BBS_DRAINS, 5, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_drains_begin(&rb.b, 2));
    ASSERT_EQ(0, bbs_rep_drain(&rb.b, &d));
    ASSERT_EQ(0, bbs_rep_drain(&rb.b, &f));
    rm = rb.bytes();
    ASSERT_EQ(BBS_OK, bbs_dec_reply(rm.data(), rm.size(), &rep, err, sizeof(err))) << err;
    ASSERT_EQ(2u, rep.ndrains);
    bbs_drain_rec two[2];
    bbs_reply_drains(&rep, two);
    EXPECT_STREQ("/pfs/b", two[1].path);
    EXPECT_STREQ("a log is short", two[1].error);
    EXPECT_EQ(BBS_DRAIN_FAILED, two[1].state);
    EXPECT_EQ(2u, two[1].tries);
    // a state no server sends, and a DRAIN reply with two records
    f.state = BBS_DRAIN_NUM_STATES;
    ASSERT_EQ(0, bbs_rep_begin(&rb.b, BBS_DRAINS, 5, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_drains_begin(&rb.b, 1));
    ASSERT_EQ(0, bbs_rep_drain(&rb.b, &f));
    rm = rb.bytes();
    EXPECT_EQ(BBS_EMSG, bbs_dec_reply(rm.data(), rm.size(), &rep, err, sizeof(err)));
    EXPECT_NE(nullptr, strstr(err, "state")) << err;
    ASSERT_EQ(0, bbs_rep_begin(&rb.b, BBS_DRAIN, 5, BBS_OK, nullptr));
    ASSERT_EQ(0, bbs_rep_drains_begin(&rb.b, 2));
    ASSERT_EQ(0, bbs_rep_drain(&rb.b, &d));
    ASSERT_EQ(0, bbs_rep_drain(&rb.b, &d));
    rm = rb.bytes();
    EXPECT_EQ(BBS_EMSG, bbs_dec_reply(rm.data(), rm.size(), &rep, err, sizeof(err)));
}
