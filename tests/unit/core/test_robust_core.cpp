// Issue 16: errors that stay one line, JSON that cannot crash its printer, files written whole or not at
// all, "did you mean", and byte counts that cannot wrap.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "sim/core/atomic_file.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/file_memo.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/suggest.hpp"
#include "sim/core/units.hpp"

using namespace racksim;
namespace fs = std::filesystem;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// A fresh empty directory under the test's temporary directory.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("racksim-robust-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST(OneLine, EscapesControlCharactersAndInvalidUtf8) {
  EXPECT_EQ(one_line("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(one_line(std::string("x\x01y\x7f")), "x\\x01y\\x7f");
  EXPECT_EQ(one_line("caf\xc3\xa9"), "caf\xc3\xa9");                   // valid UTF-8 kept
  EXPECT_EQ(one_line("bad \xff\xfe end"), "bad \\xff\\xfe end");      // invalid bytes escaped
  EXPECT_EQ(one_line("\xc0\xaf"), "\\xc0\\xaf");                      // an overlong '/' is not UTF-8
  EXPECT_EQ(one_line("\xed\xa0\x80"), "\\xed\\xa0\\x80");             // nor a surrogate
}

TEST(OneLine, KeepsHeadAndTailOfLongText) {
  const std::string text = std::string(5000, 'x') + " (unknown system)";
  const std::string shown = one_line(text, 200);
  EXPECT_LT(shown.size(), 260u);
  EXPECT_NE(shown.find("(5017 bytes)"), std::string::npos) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 16), "(unknown system)");
  EXPECT_EQ(shown.substr(0, 10), "xxxxxxxxxx");
}

TEST(OneLine, InputErrorMessagesAreOneLine) {
  const InputError e("--op", "", "'all\nreduce'", "one of all_reduce, ...");
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("all\\nreduce"), std::string::npos);
  const InputError f(std::string(10000, 'y') + "\n");
  EXPECT_LT(std::string(f.what()).size(), kMaxMessageBytes + 100);
  EXPECT_EQ(std::string(f.what()).find('\n'), std::string::npos);
}

// Found by fuzz_jobs and fuzz_topology: the JSON pointer of a key holding a newline went into the message
// raw, and a long value plus a long list of allowed values made a 4.3 KB message.
TEST(OneLine, PointerAndAllowedListStayInsideTheBound) {
  const InputError e("jobs.json", "/oversubscriptio\n", "unknown key 'oversubscriptio\n'", "the keys a, b");
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  const InputError f(std::string(500, 'w'), "/gpu_types/0/source", std::string(500, 'v'), std::string(10000, 'a'));
  EXPECT_LE(std::string(f.what()).size(), kMaxMessageBytes + 100);
  EXPECT_NE(std::string(f.what()).find("bytes) ..."), std::string::npos);
}

TEST(JsonDepth, DocumentNested100000DeepIsRefusedNotCrashed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string m = message_of([&] { parse_json_text(deep, "deep.json"); });
  EXPECT_NE(m.find("deep.json"), std::string::npos) << m;
  EXPECT_NE(m.find("nested more than 64 levels"), std::string::npos) << m;
  // 64 levels still parse; brackets inside strings do not count.
  EXPECT_NO_THROW(parse_json_text(std::string(64, '[') + std::string(64, ']'), "ok.json"));
  EXPECT_NO_THROW(parse_json_text("{\"note\": \"" + std::string(1000, '[') + "\"}", "ok.json"));
  EXPECT_THROW(parse_json_text(std::string(65, '[') + std::string(65, ']'), "x.json"), InputError);
}

TEST(JsonDepth, ExcerptOfADeepOrHugeValueIsShort) {
  nlohmann::json v = nlohmann::json::array();  // 20 000 deep, built in code: past any parse limit
  nlohmann::json* innermost = &v;
  for (int i = 0; i < 20000; ++i) innermost = &innermost->emplace_back(nlohmann::json::array());
  const std::string e = json_excerpt(v);
  EXPECT_LE(e.size(), 60u);
  EXPECT_EQ(e.substr(0, 4), "[[[[");
  const std::string big = json_excerpt(nlohmann::json(std::string(1 << 20, 'z')));
  EXPECT_LE(big.size(), 60u);
  // nlohmann's destructor of the deep value is iterative (3.11): leaving scope must not crash either.
}

TEST(JsonDump, InvalidUtf8IsReplacedNotThrown) {
  const nlohmann::json j = {{"name", std::string("NVIDIA \xff H100")}};
  std::string text;
  ASSERT_NO_THROW(text = dump_json(j));
  EXPECT_NE(text.find("NVIDIA \xef\xbf\xbd H100"), std::string::npos) << text;  // U+FFFD
}

TEST(JsonReader, MissingKeyNamesTheMisspeltOneBesideIt) {
  const nlohmann::json doc = {{"bandwith_GBps", 50}, {"latency_us", 1}};
  JsonObjectReader r(doc, "t.json", "/link_types/0");
  const std::string m = message_of([&] { r.positive("bandwidth_GBps"); });
  EXPECT_NE(m.find("/link_types/0/bandwidth_GBps"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown key 'bandwith_GBps'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'bandwidth_GBps'"), std::string::npos) << m;
}

TEST(JsonReader, UnknownKeySuggestsTheNearestKnownOne) {
  const nlohmann::json doc = {{"bandwidth_GBps", 50}, {"latncy_us", 1}};
  JsonObjectReader r(doc, "t.json");
  r.positive("bandwidth_GBps");
  r.non_negative_or("latency_us", 0);
  const std::string m = message_of([&] { r.finish(); });
  EXPECT_NE(m.find("unknown key 'latncy_us' (did you mean 'latency_us'?)"), std::string::npos) << m;
}

TEST(JsonReader, StringsReadsAnArrayOfStringsAndNamesABadElement) {
  const nlohmann::json doc = {{"systems", {"hgx-h100", "hgx-b200"}}, {"models", {"llama", 3}}, {"name", "x"}};
  JsonObjectReader r(doc, "t.json", "/classes/0");
  EXPECT_EQ(r.strings("systems"), (std::vector<std::string>{"hgx-h100", "hgx-b200"}));
  const std::string element = message_of([&] { r.strings("models"); });
  EXPECT_NE(element.find("/classes/0/models/1"), std::string::npos) << element;
  EXPECT_NE(element.find("a string"), std::string::npos) << element;
  const std::string not_array = message_of([&] { r.strings("name"); });
  EXPECT_NE(not_array.find("a JSON array"), std::string::npos) << not_array;
}

TEST(Suggest, NearestNameOnlyWhenClose) {
  EXPECT_EQ(edit_distance("rign", "ring"), 1u);  // a swap of neighbours is one edit
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(nearest_name("all_reduce/rign", {"all_reduce/ring", "all_reduce/nvls", "*/ring"}), "all_reduce/ring");
  EXPECT_EQ(nearest_name("nvlnk", {"nvlink", "c2c", "pcie"}), "nvlink");
  EXPECT_EQ(nearest_name("banana", {"nvlink", "c2c", "pcie"}), "");
  EXPECT_EQ(did_you_mean("gb200-nvl27", {"gb200-nvl72", "gb300-nvl72"}), " (did you mean 'gb200-nvl72'?)");
}

TEST(Suggest, CommaListNamesEachOnceInOrder) {
  EXPECT_EQ(comma_list({"hbm", "c2c", "pcie"}), "hbm, c2c, pcie");
  EXPECT_EQ(comma_list({"hbm"}), "hbm");
  EXPECT_EQ(comma_list({}), "");
}

TEST(Units, ByteCountsAt2To64AreRefusedNotWrapped) {
  EXPECT_THROW(units::parse_bytes("16777216T", "--swap"), InputError);           // 2^64 exactly
  EXPECT_THROW(units::parse_bytes("18446744073709551616", "--swap"), InputError);
  EXPECT_EQ(units::parse_bytes("16777215T", "--swap"), 16777215ULL << 40);       // just below
}

TEST(AtomicFile, CommitWritesTheWholeFile) {
  const fs::path dir = scratch("commit");
  const std::string path = (dir / "out.json").string();
  {
    AtomicFile f(path, "--out");
    f.write("{\"a\": ");
    EXPECT_FALSE(fs::exists(path));  // nothing at the target until commit
    f.write("1}\n");
    f.commit();
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"a\": 1}\n");
  EXPECT_EQ(entries(dir), 1u);  // no temporary file left
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  fs::remove_all(dir);
}

TEST(AtomicFile, AFailedRunLeavesNothingAndKeepsTheOldFile) {
  const fs::path dir = scratch("fail");
  const std::string path = (dir / "trace.json").string();
  { std::ofstream(path) << "old"; }
  try {
    AtomicFile f(path, "--trace");
    f.write("half of a new file");
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old");
  EXPECT_EQ(entries(dir), 1u);
  // Directories it created for the file are removed again.
  const std::string nested = (dir / "a" / "b" / "report.md").string();
  { AtomicFile g(nested, "--report", true); g.write("x"); }
  EXPECT_FALSE(fs::exists(dir / "a"));
  fs::remove_all(dir);
}

TEST(AtomicFile, BadPathsAreInputErrorsNamingTheOption) {
  const fs::path dir = scratch("bad");
  const std::string regular = (dir / "file").string();
  { std::ofstream(regular) << "x"; }
  EXPECT_NE(message_of([&] { AtomicFile f(regular + "/x.json", "--out", true); }).find("--out"), std::string::npos);
  EXPECT_NE(message_of([&] { AtomicFile f(regular + "/x.json", "--out", true); }).find("Not a directory"), std::string::npos);
  EXPECT_NE(message_of([&] { AtomicFile f("", "--trace"); }).find("empty"), std::string::npos);
  EXPECT_NE(message_of([&] { AtomicFile f(dir.string(), "--out"); }).find("is a directory"), std::string::npos);
  EXPECT_NE(message_of([&] { AtomicFile f((dir / std::string(5000, 'n')).string(), "--out"); }).find("File name too long"),
            std::string::npos);
  EXPECT_NE(message_of([&] { AtomicFile f((dir / "missing" / "x").string(), "--out"); }).find("No such file"),
            std::string::npos);
  EXPECT_EQ(entries(dir), 1u);
  fs::remove_all(dir);
}

// FileMemo makes its value once while the file stays as it is, again after the file is rewritten (new size or
// modification time) or replaced by a rename (new inode), and every time for a file that is not there.
TEST(FileMemo, MakesAgainOnlyWhenTheFileChanges) {
  const fs::path dir = scratch("file-memo");
  const std::string path = (dir / "table.json").string();
  const auto write = [&](const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  };
  const auto read = [&] {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  FileMemo<std::string> memo;
  int made = 0;
  const auto make = [&] {
    ++made;
    return fs::exists(path) ? read() : std::string("(none)");
  };
  EXPECT_EQ(memo.get(path, make), "(none)");
  EXPECT_EQ(memo.get(path, make), "(none)");
  EXPECT_EQ(made, 2);  // no file: nothing kept
  write("first");
  EXPECT_EQ(memo.get(path, make), "first");
  EXPECT_EQ(memo.get(path, make), "first");
  EXPECT_EQ(made, 3);  // kept while the file is unchanged
  write("second, longer");
  EXPECT_EQ(memo.get(path, make), "second, longer");
  EXPECT_EQ(made, 4);
  // Same size, new text: the modification time tells (set apart by a second, whatever the clock's step).
  write("second, LONGER");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const fs::file_time_type later = fs::last_write_time(path) + std::chrono::seconds(1);
  fs::last_write_time(path, later);
  EXPECT_EQ(memo.get(path, make), "second, LONGER");
  EXPECT_EQ(made, 5);
  // Replaced by a rename (what an atomic writer does): a new inode.
  const std::string other = (dir / "next.json").string();
  {
    std::ofstream out(other);
    out << "third, LONGER!";
  }
  fs::last_write_time(other, later);
  fs::rename(other, path);
  EXPECT_EQ(memo.get(path, make), "third, LONGER!");
  EXPECT_EQ(made, 6);
  fs::remove_all(dir);
}
