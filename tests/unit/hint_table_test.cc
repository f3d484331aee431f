// The hint table (adio/ad_bbfs/ad_bbfs_hint_table.c) against itself and
// against docs/hints.md: every key documented, every documented key known,
// the documented defaults and values the table's, and the open-only list
// the table's.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "ad_bbfs_hint_table.h"
}

namespace {

struct DocRow {
    std::string values, dflt;
};

std::string ReadDoc()
{
    std::ifstream in(std::string(BBFS_SRCDIR) + "/docs/hints.md");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> Cells(const std::string &line)
{
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 1; i < line.size(); i++) {
        if (line[i] == '|') {
            cells.push_back(cell);
            cell.clear();
        } else {
            cell += line[i];
        }
    }
    return cells;
}

// The rows of the table whose first cell is `bbfs_...`: key -> values, default.
std::map<std::string, DocRow> DocTable(const std::string &doc)
{
    std::map<std::string, DocRow> rows;
    std::istringstream in(doc);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| `bbfs_", 0) != 0)
            continue;
        std::vector<std::string> c = Cells(line);
        if (c.size() < 4)
            continue;
        std::string key = c[0].substr(c[0].find('`') + 1);
        key = key.substr(0, key.find('`'));
        rows[key] = DocRow{c[1], c[2]};
    }
    return rows;
}

// The first `quoted` word of a cell.
std::string FirstCode(const std::string &cell)
{
    size_t a = cell.find('`');
    size_t b = cell.find('`', a + 1);
    return a == std::string::npos || b == std::string::npos ? "" : cell.substr(a + 1, b - a - 1);
}

std::vector<const ADIOI_BBFS_Hint *> Shown()
{
    std::vector<const ADIOI_BBFS_Hint *> v;
    for (const ADIOI_BBFS_Hint *d = ADIOI_BBFS_hint_table; d->key; d++)
        if (d->kind != ADIOI_BBFS_HINT_INFORMATIONAL)
            v.push_back(d);
    return v;
}

TEST(HintTable, EveryHintIsDocumentedAndEveryDocumentedHintIsKnown)
{
    std::map<std::string, DocRow> rows = DocTable(ReadDoc());
    ASSERT_FALSE(rows.empty()) << "no hint table found in " BBFS_SRCDIR "/docs/hints.md";
    for (const ADIOI_BBFS_Hint *d : Shown())
        EXPECT_TRUE(rows.count(d->key)) << d->key << " is missing from docs/hints.md";
    for (const auto &r : rows)
        EXPECT_NE(ADIOI_BBFS_Hint_find(r.first.c_str()), nullptr)
            << "docs/hints.md documents " << r.first << ", which the table does not know";
}

TEST(HintTable, DocumentedDefaultsAreTheDefaultsInForce)
{
    std::map<std::string, DocRow> rows = DocTable(ReadDoc());
    ADIOI_BBFS_Hints h;
    ADIOI_BBFS_Hints_default(&h);
    for (const ADIOI_BBFS_Hint *d : Shown()) {
        if (!d->dflt)
            continue;           // computed (bbfs_logdir): the doc says how
        std::string doc = FirstCode(rows[d->key].dflt);
        EXPECT_EQ(doc, d->dflt) << d->key << ": docs/hints.md gives the default " << doc;
        // and the default in force is that value, parsed
        ADIOI_BBFS_Hints given;
        ADIOI_BBFS_Hints_default(&given);
        char why[256], a[PATH_MAX], b[PATH_MAX];
        ASSERT_EQ(ADIOI_BBFS_Hint_apply(&given, d, doc.c_str(), why, sizeof why), nullptr)
            << d->key << "=" << doc;
        ASSERT_TRUE(ADIOI_BBFS_Hint_show(&h, d, a, sizeof a));
        ASSERT_TRUE(ADIOI_BBFS_Hint_show(&given, d, b, sizeof b));
        EXPECT_STREQ(a, b) << d->key;
    }
}

TEST(HintTable, DocumentedChoicesAreTheTablesChoices)
{
    std::map<std::string, DocRow> rows = DocTable(ReadDoc());
    for (const ADIOI_BBFS_Hint *d : Shown()) {
        if (d->kind != ADIOI_BBFS_HINT_CHOICE)
            continue;
        std::set<std::string> doc, table;
        const std::string &cell = rows[d->key].values;
        for (size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a + 1)) {
            size_t b = cell.find('`', a + 1);
            doc.insert(cell.substr(a + 1, b - a - 1));
            a = b;
        }
        for (int i = 0; d->names[i]; i++)
            table.insert(d->names[i]);
        EXPECT_EQ(doc, table) << d->key;
    }
}

TEST(HintTable, DocumentedOpenOnlyHintsAreTheTables)
{
    std::string doc = ReadDoc();
    size_t at = doc.find("can only be given at open");
    ASSERT_NE(at, std::string::npos) << "docs/hints.md no longer says which hints are open-only";
    size_t start = doc.rfind("\n\n", at) + 2;
    std::string para = doc.substr(start, at - start);
    std::set<std::string> listed, table;
    for (size_t a = para.find("`bbfs_"); a != std::string::npos; a = para.find("`bbfs_", a + 1))
        listed.insert(para.substr(a + 1, para.find('`', a + 1) - a - 1));
    for (const ADIOI_BBFS_Hint *d : Shown())
        if (d->open_only)
            table.insert(d->key);
    EXPECT_EQ(listed, table);
}

TEST(HintTable, EveryShownValueIsAcceptedBackWithTheSameMeaning)
{
    ADIOI_BBFS_Hints h, again;
    char why[256], shown[PATH_MAX];
    ADIOI_BBFS_Hints_default(&h);
    for (const ADIOI_BBFS_Hint *d : Shown()) {
        ASSERT_TRUE(ADIOI_BBFS_Hint_show(&h, d, shown, sizeof shown)) << d->key;
        std::memcpy(&again, &h, sizeof h);
        EXPECT_EQ(ADIOI_BBFS_Hint_apply(&again, d, shown, why, sizeof why), nullptr) << d->key;
        again.replay_given = h.replay_given;    // given now, not the default: same value
        EXPECT_EQ(std::memcmp(&h, &again, sizeof h), 0) << d->key;
    }
}

TEST(HintTable, BadValuesSayWhatIsAllowedAndChangeNothing)
{
    ADIOI_BBFS_Hints h, before;
    char why[256];
    ADIOI_BBFS_Hints_default(&h);
    std::memcpy(&before, &h, sizeof h);
    struct {
        const char *key, *value, *says;
    } bad[] = {
        {"bbfs_consistency", "strong", "mpiio|session|commit|posix|collective|causal"},
        {"bbfs_durable", "maybe", "true|false"},
        {"bbfs_buffer_size", "1", "between 4k and 1g"},
        {"bbfs_buffer_size", "12q", "bytes"},
        {"bbfs_log_quota", "2000000g", "between 0"},
        {"bbfs_replay_buffer", "18446744073709551615k", "bytes"},
        {"bbfs_logdir", "relative", "absolute"},
        {"bbfs_logdir", "/a/../b", "no . or .."},
        {"bbfs_server", "", "auto"},
    };
    for (const auto &b : bad) {
        const ADIOI_BBFS_Hint *d = ADIOI_BBFS_Hint_find(b.key);
        ASSERT_NE(d, nullptr) << b.key;
        const char *problem = ADIOI_BBFS_Hint_apply(&h, d, b.value, why, sizeof why);
        ASSERT_NE(problem, nullptr) << b.key << "=" << b.value << " was accepted";
        EXPECT_NE(std::strstr(problem, b.says), nullptr) << b.key << ": " << problem;
        EXPECT_EQ(std::memcmp(&h, &before, sizeof h), 0) << b.key << " changed on a bad value";
    }
}

TEST(HintTable, OnlyAGivenReplayHintOverridesTheAccessModeDefault)
{
    ADIOI_BBFS_Hints h;
    char why[256];
    ADIOI_BBFS_Hints_default(&h);
    EXPECT_EQ(h.replay_given, 0);
    ASSERT_EQ(ADIOI_BBFS_Hint_apply(&h, ADIOI_BBFS_Hint_find("bbfs_durable"), "true", why,
                                    sizeof why), nullptr);
    EXPECT_EQ(h.replay_given, 0);
    ASSERT_EQ(ADIOI_BBFS_Hint_apply(&h, ADIOI_BBFS_Hint_find("bbfs_replay"), "never", why,
                                    sizeof why), nullptr);
    EXPECT_EQ(h.replay_given, 1);
    EXPECT_EQ(h.replay, ADIOI_BBFS_REPLAY_NEVER);
}

TEST(HintTable, UnknownKeysAreNotFoundAndTheKnownListNamesEveryHint)
{
    EXPECT_EQ(ADIOI_BBFS_Hint_find("bbfs_consistancy"), nullptr);
    char keys[512];
    ADIOI_BBFS_Hint_keys(keys, sizeof keys);
    for (const ADIOI_BBFS_Hint *d : Shown())
        EXPECT_NE(std::strstr(keys, d->key), nullptr) << d->key;
    EXPECT_EQ(std::strstr(keys, "bbfs_lower_filesystem_type"), nullptr);
}

}  // namespace
