#include "models/calibration/nccl_tests_output.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "models/calibration/probe_data.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::calibration {

namespace {
// The most ranks a log may have on a system without a physical max_racks: validation prices each of its
// rows with the analytic model flow by flow, 64 NVL72 racks (4 608 ranks) in ~2 s a row, while a claimed
// 100 000 ranks (1 389 racks) took over 4 minutes (measured 2026-12-02, docs/errors.md). The largest
// published runs in calibrate/data are 1 440 GPUs (20 GB200 racks) and 1 984 (248 HGX H200 nodes).
// In ranks, not racks: an HGX "rack" is one 8-GPU node, so 64 of them would refuse real clusters.
constexpr int kMaxLogRanks = 64 * 72;
}  // namespace

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// A line or value echoed in an error: at most 80 characters, so that a 50 000-character line stays a
// one-line message.
std::string shorten(std::string_view s) {
  constexpr std::size_t kMaxEcho = 80;
  if (s.size() <= kMaxEcho) return std::string(s);
  return std::string(s.substr(0, kMaxEcho - 3)) + "... (" + std::to_string(s.size()) + " characters)";
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "all_reduce_perf_mpi" / "/opt/x/build/all_reduce_perf" -> "all_reduce_perf"
std::string normalise_test_name(std::string name) {
  if (const auto slash = name.find_last_of('/'); slash != std::string::npos) name = name.substr(slash + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "_mpi") == 0) name.resize(name.size() - 4);
  return name;
}

// A cursor over one line of text, for the fixed line shapes nccl-tests prints. Hand-written instead of
// std::regex: libstdc++'s regex engine recurses once per character matched by `\S+` or `.*`, so a
// 50 000-character line overflowed the stack (a crash found by mutating logs).
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  static bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  void ws0() {
    while (!at_end() && space(s_[i_])) ++i_;
  }
  bool ws1() {
    const std::size_t start = i_;
    ws0();
    return i_ > start;
  }
  bool lit(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  // One or more characters satisfying `pred`; empty view (and no move) when there is none.
  template <typename Pred>
  std::string_view run(Pred pred) {
    const std::size_t start = i_;
    while (!at_end() && pred(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }
  std::string_view digits() { return run(digit); }
  std::string_view token() { return run([](char c) { return !space(c); }); }
  std::string_view rest() const { return at_end() ? std::string_view() : s_.substr(i_); }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

// "[1,0]<stdout>:" / "[12,3]<stderr>:" that MPI launchers put before every line: its length, or 0.
std::size_t mpi_prefix_length(std::string_view line) {
  Cursor c(line);
  if (!c.lit("[") || c.digits().empty() || !c.lit(",") || c.digits().empty() || !c.lit("]<std")) return 0;
  if (!c.lit("out") && !c.lit("err")) return 0;
  if (!c.lit(">:")) return 0;
  return line.size() - c.rest().size();
}

// A program name such as "all_reduce_perf" or "all_gather_perf_mpi" in an echoed command line: a run of
// [a-z_] at the start or after whitespace, '/', '>' or '$', ending in "_perf" or "_perf_mpi", followed by
// the end of the line or by whitespace and then an option ('-') or the end. "" when there is none.
std::string command_name(std::string_view t) {
  const auto word = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  for (std::size_t p = 0; p < t.size(); ++p) {
    if (p > 0 && !(Cursor::space(t[p - 1]) || t[p - 1] == '/' || t[p - 1] == '>' || t[p - 1] == '$')) continue;
    std::size_t e = p;
    while (e < t.size() && word(t[e])) ++e;
    const std::string_view name = t.substr(p, e - p);
    const bool perf = (name.size() > 5 && name.substr(name.size() - 5) == "_perf") ||
                      (name.size() > 9 && name.substr(name.size() - 9) == "_perf_mpi");
    if (!perf) continue;
    Cursor after(t.substr(e));
    const bool spaced = after.ws1();
    if (after.at_end() || (spaced && after.peek() == '-')) return std::string(name);
  }
  return "";
}

// The first [a-z_]+_perf in a file name ("logs/all_gather_perf.log" -> "all_gather_perf"), "" if none.
std::string test_name_in_path(std::string_view path) {
  const auto word = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  for (std::size_t p = 0; p < path.size();) {
    if (!word(path[p])) {
      ++p;
      continue;
    }
    std::size_t e = p;
    while (e < path.size() && word(path[e])) ++e;
    const std::string_view run = path.substr(p, e - p);
    const auto at = run.rfind("_perf");
    if (at != std::string_view::npos && at > 0) return std::string(run.substr(0, at + 5));
    p = e;
  }
  return "";
}

class Parser {
 public:
  Parser(std::string where) : where_(std::move(where)) {}

  std::vector<NcclTestsRun> parse(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    int line_no = 0;
    while (std::getline(in, raw)) {
      ++line_no;
      line(raw.substr(mpi_prefix_length(raw)), line_no);
    }
    flush();
    return std::move(runs_);
  }

 private:
  void flush() {
    if (cur_ && (!cur_->rows.empty() || !cur_->failure.empty())) runs_.push_back(std::move(*cur_));
    cur_.reset();
    layout_.clear();
    layout_known_ = false;
  }
  void new_run(int line_no) {
    flush();
    cur_ = NcclTestsRun{};
    cur_->first_line = line_no;
  }
  // A run is "started" when it already holds rows: anything that opens a run then begins a new one.
  bool has_rows() const { return cur_ && (!cur_->rows.empty() || !cur_->failure.empty()); }

  void name_test(const std::string& name, int line_no) {
    const std::string n = normalise_test_name(name);
    if (!cur_ || has_rows() || (!cur_->test.empty() && cur_->test != n)) new_run(line_no);
    cur_->test = n;
  }

  // A whole number from the log, range-checked (a mutated or corrupt log must not reach stoi's
  // out_of_range): InputError naming the file, line and field.
  std::uint64_t whole(std::string_view digits, std::uint64_t max, int line_no, const std::string& what) const {
    std::uint64_t v = 0;
    bool ok = !digits.empty();
    for (char c : digits) {
      if (!Cursor::digit(c) || v > (max - static_cast<std::uint64_t>(c - '0')) / 10) {
        ok = false;
        break;
      }
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok)
      throw InputError(where_, "line " + std::to_string(line_no), "'" + shorten(std::string(digits)) + "'",
                       what + ": a whole number in [0, " + std::to_string(max) + "]");
    return v;
  }
  int small(std::string_view digits, int max, int line_no, const std::string& what) const {
    return static_cast<int>(whole(digits, static_cast<std::uint64_t>(max), line_no, what));
  }

  // "=== begin all_reduce_perf test ===" or "# Collective test starting: all_gather_perf": the name.
  static std::optional<std::string> test_marker(std::string_view t) {
    Cursor c(t);
    if (c.lit("===")) {
      c.ws0();
      if (!c.lit("begin") || !c.ws1()) return std::nullopt;
      const std::string name(c.token());
      if (name.empty() || !c.ws1() || !c.lit("test")) return std::nullopt;
      c.ws0();
      if (!c.lit("===")) return std::nullopt;
      return name;
    }
    if (!c.lit("#")) return std::nullopt;
    c.ws0();
    if (!c.lit("Collective test starting:")) return std::nullopt;
    c.ws0();
    const std::string name(c.token());
    if (name.empty()) return std::nullopt;
    return name;
  }

  // Lines of the form "#<ws>KEYWORD...": a cursor just after the keyword, or nullopt.
  static std::optional<Cursor> hash_line(std::string_view t, std::string_view keyword) {
    Cursor c(t);
    if (!c.lit("#")) return std::nullopt;
    c.ws0();
    if (!c.lit(keyword)) return std::nullopt;
    return c;
  }

  // Bounds on what a log's header may ask for (a mutated "nGpus 100000" must not become an allocation):
  // nccl-tests runs one thread per GPU of a process, and no node has more than a few dozen GPUs.
  static constexpr int kMaxThreadsOrGpusPerProcess = 4096;
  static constexpr int kMaxRankIndex = 1 << 20;  // larger than any machine racksim models (64 racks x 72)
  static constexpr int kMaxIters = 1 << 30;

  void line(const std::string& raw, int line_no) {
    const std::string t = trim(raw);
    if (t.empty()) return;
    if (const auto name = test_marker(t)) {
      name_test(*name, line_no);
      return;
    }
    if (auto c = hash_line(t, "nccl-tests version"); c && c->ws1()) {
      const std::string version(c->token());
      if (!version.empty()) {
        if (!cur_ || has_rows()) new_run(line_no);
        cur_->tests_version = version;
        // the last "nccl-library=X" after the version, as the regex this replaces found it
        const std::string_view rest = c->rest();
        for (auto at = rest.rfind("nccl-library="); at != std::string_view::npos;
             at = at == 0 ? std::string_view::npos : rest.rfind("nccl-library=", at - 1)) {
          Cursor v(rest.substr(at + 13));
          const std::string library(v.token());
          if (library.empty()) continue;
          if (cur_->nccl_version.empty()) cur_->nccl_version = library;
          break;
        }
        return;
      }
    }
    if (auto c = hash_line(t, "nThread"); c && c->ws1()) {
      const std::string_view threads = c->digits();
      if (!threads.empty() && c->ws1() && c->lit("nGpus") && c->ws1()) {
        const std::string_view gpus = c->digits();
        if (!gpus.empty()) {
          if (!cur_ || has_rows() || cur_->threads > 0) {
            const std::string keep = (cur_ && !has_rows()) ? cur_->test : "";
            new_run(line_no);
            cur_->test = keep;
          }
          cur_->threads = small(threads, kMaxThreadsOrGpusPerProcess, line_no, "nThread");
          cur_->gpus_per_thread = small(gpus, kMaxThreadsOrGpusPerProcess, line_no, "nGpus");
          Cursor sizes = *c;
          std::string_view min_bytes, max_bytes;
          if (sizes.ws1() && sizes.lit("minBytes") && sizes.ws1() && !(min_bytes = sizes.digits()).empty() &&
              sizes.ws1() && sizes.lit("maxBytes") && sizes.ws1() && !(max_bytes = sizes.digits()).empty()) {
            cur_->min_bytes = whole(min_bytes, UINT64_MAX, line_no, "minBytes");
            cur_->max_bytes = whole(max_bytes, UINT64_MAX, line_no, "maxBytes");
          }
          iters(t, line_no);
          return;
        }
      }
    }
    if (auto c = hash_line(t, "Rank"); c && rank_line(*c, line_no)) return;
    if (Cursor c(t); c.lit("NCCL version") && c.ws1()) {
      const std::string version(c.token());
      if (!cur_) new_run(line_no);
      cur_->nccl_version = version;
      return;
    }
    if (auto c = hash_line(t, "Out of bounds values")) {
      c->ws0();
      if (c->lit(":")) {
        c->ws0();
        const std::string_view n = c->digits();
        if (!n.empty()) {
          if (cur_) cur_->out_of_bounds = static_cast<long>(whole(n, LONG_MAX, line_no, "out of bounds values"));
          return;
        }
      }
    }
    if (auto c = hash_line(t, "Avg bus bandwidth")) {
      c->ws0();
      if (c->lit(":")) {
        c->ws0();
        const std::string number(c->run([](char ch) {
          return Cursor::digit(ch) || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-';
        }));
        if (!number.empty()) {
          if (cur_) cur_->avg_busbw_GBps = std::strtod(number.c_str(), nullptr);
          return;
        }
      }
    }
    if (t[0] == '#') {
      column_header(t, line_no);
      return;
    }
    const auto tokens = split_ws(t);
    if (tokens.empty()) return;  // only \v or \f: whitespace to split_ws, not to trim (found by fuzz_nccl_tests)
    if (all_digits(tokens[0])) {
      row(t, tokens, line_no);
      return;
    }
    if (const std::string name = command_name(t); !name.empty() && (!cur_ || has_rows() || cur_->test.empty()))
      name_test(name, line_no);
  }

  // "... warmup iters: 5 iters: 20 ..." anywhere on the nThread line.
  void iters(std::string_view t, int line_no) {
    for (auto at = t.find("warmup iters:"); at != std::string_view::npos; at = t.find("warmup iters:", at + 1)) {
      Cursor c(t.substr(at + 13));
      c.ws0();
      const std::string_view warmup = c.digits();
      if (warmup.empty() || !c.ws1() || !c.lit("iters:")) continue;
      c.ws0();
      const std::string_view n = c.digits();
      if (n.empty()) continue;
      cur_->warmup_iters = small(warmup, kMaxIters, line_no, "warmup iters");
      cur_->iters = small(n, kMaxIters, line_no, "iters");
      return;
    }
  }

  // "#  Rank  3 Group  0 Pid 123 on host device  3 [0000:0c:00] NVIDIA H100 80GB HBM3" (Group optional);
  // `c` is just after "Rank". False when the line has another shape.
  bool rank_line(Cursor c, int line_no) {
    if (!c.ws1()) return false;
    const std::string_view rank = c.digits();
    if (rank.empty() || !c.ws1()) return false;
    if (c.lit("Group")) {
      if (!c.ws1() || c.digits().empty() || !c.ws1()) return false;
    }
    if (!c.lit("Pid") || !c.ws1() || c.digits().empty() || !c.ws1() || !c.lit("on") || !c.ws1()) return false;
    const std::string host(c.token());
    if (host.empty() || !c.ws1() || !c.lit("device") || !c.ws1()) return false;
    const std::string_view device = c.digits();
    if (device.empty() || !c.ws1() || !c.lit("[")) return false;
    const std::string bus(c.run([](char ch) { return ch != ']'; }));
    if (!c.lit("]")) return false;
    if (!cur_ || has_rows()) new_run(line_no);
    NcclTestsDevice d;
    d.rank = small(rank, kMaxRankIndex, line_no, "Rank");
    d.host = host;
    d.device = small(device, kMaxRankIndex, line_no, "device");
    d.bus_id = bus;
    d.name = trim(std::string(c.rest()));
    if (cur_->devices.size() >= static_cast<std::size_t>(kMaxRankIndex))
      throw InputError(where_, "line " + std::to_string(line_no), "more than " + std::to_string(kMaxRankIndex) + " Rank lines",
                       "a log of at most " + std::to_string(kMaxRankIndex) + " ranks");
    cur_->devices.push_back(std::move(d));
    return true;
  }

  void column_header(const std::string& t, int line_no) {
    auto tokens = split_ws(t.substr(1));
    const auto count_it = std::find(tokens.begin(), tokens.end(), "count");
    if (tokens.empty() || tokens[0] != "size" || count_it == tokens.end()) return;
    std::vector<std::string> lead;
    for (auto it = count_it + 1; it != tokens.end() && *it != "time"; ++it) lead.push_back(*it);
    if (!cur_ || has_rows()) {
      const std::string keep = (cur_ && !has_rows()) ? cur_->test : "";
      new_run(line_no);
      cur_->test = keep;
    }
    layout_ = lead;
    layout_known_ = true;
  }

  double number(const std::string& token, int line_no, const std::string& line, const std::string& what) const {
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (end == token.c_str() || *end != '\0' || !std::isfinite(v))
      throw InputError(where_, "line " + std::to_string(line_no), shorten(line),
                       what + " as a number (nccl-tests row: size count type [redop] [root] time algbw busbw "
                              "#wrong time algbw busbw #wrong)");
    return v;
  }

  NcclTestsResult result(const std::vector<std::string>& tk, std::size_t at, int line_no, const std::string& line) const {
    NcclTestsResult r;
    r.present = true;
    r.time_us = number(tk[at], line_no, line, "time (us)");
    r.algbw_GBps = number(tk[at + 1], line_no, line, "algbw (GB/s)");
    r.busbw_GBps = number(tk[at + 2], line_no, line, "busbw (GB/s)");
    r.wrong = tk[at + 3];
    return r;
  }

  void row(const std::string& t, const std::vector<std::string>& tk, int line_no) {
    if (!cur_) new_run(line_no);
    if (!cur_->failure.empty()) return;  // lines after a failure belong to no table
    std::vector<std::string> lead = layout_;
    if (!layout_known_) {
      // No column header seen: infer from the row (13 tokens: type redop root; 11: type only; 12: type
      // plus a numeric root or a word redop).
      if (tk.size() >= 13) lead = {"type", "redop", "root"};
      else if (tk.size() == 12) lead = all_digits(tk[3]) || tk[3] == "-1" ? std::vector<std::string>{"type", "root"}
                                                                         : std::vector<std::string>{"type", "redop"};
      else lead = {"type"};
    }
    const std::size_t first = 2 + lead.size();
    const bool failed_text = t.find("failure") != std::string::npos || t.find("Failure") != std::string::npos ||
                             t.find("error") != std::string::npos || t.find("FAILED") != std::string::npos;
    const auto is_number = [](const std::string& v) {
      char* end = nullptr;
      std::strtod(v.c_str(), &end);
      return end != v.c_str() && *end == '\0';
    };
    if (tk.size() < first + 4 || !is_number(tk[first])) {
      if (failed_text) {
        cur_->failure = "line " + std::to_string(line_no) + ": " + one_line(t);
        return;
      }
      throw InputError(where_, "line " + std::to_string(line_no), shorten(t),
                       "a row with " + std::to_string(first + 8) + " columns (size count" +
                           // the log's own column names, echoed shortened like the line itself
                           shorten([&] { std::string s; for (const auto& c : lead) s += " " + c; return s; }()) +
                           " then time algbw busbw #wrong, out-of-place and in-place)");
    }
    NcclTestsRow r;
    r.line = line_no;
    r.bytes = whole(tk[0], UINT64_MAX, line_no, "size (bytes)");
    if (!all_digits(tk[1]))
      throw InputError(where_, "line " + std::to_string(line_no), shorten(t), "an element count in the second column");
    r.count = whole(tk[1], UINT64_MAX, line_no, "count (elements)");
    for (std::size_t i = 0; i < lead.size(); ++i) {
      const std::string& v = tk[2 + i];
      if (lead[i] == "type") r.type = v;
      else if (lead[i] == "redop") r.redop = v;
      else if (lead[i] == "root") {
        const double root = number(v, line_no, t, "root");
        if (root != std::floor(root) || root < -1 || root > kMaxRankIndex)
          throw InputError(where_, "line " + std::to_string(line_no), "root '" + shorten(v) + "'",
                           "-1 or a rank in [0, " + std::to_string(kMaxRankIndex) + "]");
        r.root = static_cast<long>(root);
      }
    }
    r.out_of_place = result(tk, first, line_no, t);
    if (tk.size() >= first + 8) r.in_place = result(tk, first + 4, line_no, t);
    cur_->rows.push_back(std::move(r));
  }

  std::string where_;
  std::optional<NcclTestsRun> cur_;
  std::vector<NcclTestsRun> runs_;
  std::vector<std::string> layout_;
  bool layout_known_ = false;
};

}  // namespace

int NcclTestsRun::ranks() const {
  if (!devices.empty()) return static_cast<int>(devices.size());
  return threads * gpus_per_thread;
}

std::string NcclTestsRun::device_name() const { return devices.empty() ? "" : devices.front().name; }

int NcclTestsRun::hosts() const {
  std::set<std::string> h;
  for (const auto& d : devices) h.insert(d.host);
  return static_cast<int>(h.size());
}

std::optional<CollectiveOp> op_from_test_name(const std::string& test_name) {
  return collective_op_spelled(normalise_test_name(test_name));
}

std::vector<NcclTestsRun> parse_nccl_tests_output(const std::string& text, const std::string& where) {
  auto runs = Parser(where).parse(text);
  if (runs.empty())
    throw InputError(where, "", "no nccl-tests table row",
                     "the text printed by an nccl-tests program (all_reduce_perf, all_gather_perf, ...): rows of "
                     "size count type ... time algbw busbw");
  if (runs.size() == 1 && runs[0].test.empty()) runs[0].test = test_name_in_path(where);
  for (auto& r : runs) r.op = op_from_test_name(r.test);
  return runs;
}

std::vector<NcclTestsRun> parse_nccl_tests_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "file not readable", "an existing nccl-tests output file");
  std::ostringstream s;
  s << in.rdbuf();
  return parse_nccl_tests_output(s.str(), path);
}

MeasurementSet nccl_tests_measurements(const std::string& spec) {
  std::string path = spec, system, algorithm = "auto";
  if (const auto eq = spec.rfind('='); eq != std::string::npos) {
    path = spec.substr(0, eq);
    system = spec.substr(eq + 1);
    if (const auto slash = system.find('/'); slash != std::string::npos) {
      algorithm = system.substr(slash + 1);
      system = system.substr(0, slash);
    }
  }
  const auto runs = parse_nccl_tests_file(path);
  const std::string file = path.substr(path.find_last_of('/') + 1);
  MeasurementSet out;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& run = runs[k];
    const std::string what = file + " run " + std::to_string(k + 1) + " (" + (run.test.empty() ? "unnamed" : run.test) + ")";
    const std::string first_id = file + ":" + std::to_string(run.first_line);
    if (!run.failure.empty()) {
      out.skipped.push_back({first_id, what, "the test failed: " + run.failure});
      continue;
    }
    if (!run.op) {
      out.skipped.push_back({first_id, what, run.test.empty() ? "the log does not name the nccl-tests program"
                                                              : run.test + " is not a collective racksim models"});
      continue;
    }
    const int ranks = run.ranks();
    if (ranks < 2) {
      out.skipped.push_back({first_id, what, "the log has no 'Rank' lines: the number of ranks is unknown"});
      continue;
    }
    const std::string sys = system.empty() ? guess_probe_system(run.device_name(), ranks, path) : system;
    const TopologySpec spec_topo = SystemCatalog::shipped().load(sys);
    const int gpus_per_rack = static_cast<int>(spec_topo.tray.gpus.size()) * spec_topo.rack.trays;
    const int racks = std::max(1, (ranks + gpus_per_rack - 1) / gpus_per_rack);
    // A log may claim any rank count ("nGpus 100000" in a header): refuse before the predictor builds a
    // graph of that many GPUs, saying what the log asked for and what the system allows: the topology's
    // physical max_racks, or where it has none (issue 14) what validation prices in seconds (kMaxLogRanks,
    // in whole racks).
    const int limit = spec_topo.rack.capped() ? spec_topo.rack.max_racks : std::max(1, kMaxLogRanks / gpus_per_rack);
    if (racks > limit)
      throw InputError(path, "", what + ": " + std::to_string(ranks) + " ranks = " + std::to_string(racks) +
                                     " racks of " + sys + " (" + std::to_string(gpus_per_rack) + " GPUs each)",
                       "a log of at most " + std::to_string(static_cast<long>(limit) * gpus_per_rack) + " ranks (" +
                           std::to_string(limit) + " racks, " +
                           (spec_topo.rack.capped() ? "the topology's max_racks)"
                                                    : "what validation prices in seconds: every row is priced flow by flow)"));
    for (const auto& row : run.rows) {
      if (!row.out_of_place.present || row.out_of_place.time_us <= 0) continue;
      Measurement m;
      m.id = file + ":" + std::to_string(row.line);
      m.series = file + " " + run.test + " " + std::to_string(ranks) + " ranks";
      m.kind = MeasurementKind::collective;
      m.system = sys;
      m.racks = racks;
      m.measured_on = std::to_string(ranks) + " x " + run.device_name() + " on " + std::to_string(run.hosts()) + " host(s)";
      m.op = *run.op;
      m.algorithm = algorithm;
      for (int g = 0; g < ranks; ++g) m.gpus.push_back(g);
      m.bytes = static_cast<double>(row.bytes);
      m.time_s = units::us_to_s(row.out_of_place.time_us);
      m.reported_GBps = row.out_of_place.busbw_GBps;
      if (row.in_place.present && row.in_place.time_us > 0) m.in_place_time_s = units::us_to_s(row.in_place.time_us);
      m.source = path;
      m.confidence = "measured";
      m.nccl_version = run.nccl_version;
      out.measurements.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace racksim::calibration
