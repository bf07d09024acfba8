#include "models/calibration/nccl_tests_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "models/calibration/probe_data.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::calibration {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
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

const std::regex& mpi_prefix() {
  static const std::regex re(R"(^\[\d+,\d+\]<std(?:out|err)>:)");
  return re;
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
      line(std::regex_replace(raw, mpi_prefix(), ""), line_no);
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

  void line(const std::string& raw, int line_no) {
    const std::string t = trim(raw);
    if (t.empty()) return;
    static const std::regex begin_re(R"(^===\s*begin\s+(\S+)\s+test\s*===)");
    static const std::regex starting_re(R"(^#\s*Collective test starting:\s*(\S+))");
    static const std::regex version_re(R"(^#\s*nccl-tests version\s+(\S+)(?:.*nccl-library=(\S+))?)");
    static const std::regex nthread_re(R"(^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)(?:\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+))?)");
    static const std::regex iters_re(R"(warmup iters:\s*(\d+)\s+iters:\s*(\d+))");
    static const std::regex rank_re(
        R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)");
    static const std::regex nccl_version_re(R"(^NCCL version\s+(\S+))");
    static const std::regex oob_re(R"(^#\s*Out of bounds values\s*:\s*(\d+))");
    static const std::regex avg_re(R"(^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+))");
    static const std::regex command_re(R"((?:^|[\s/>$])([a-z_]+_perf(?:_mpi)?)(?:\s+-|\s*$))");
    std::smatch m;
    if (std::regex_search(t, m, begin_re) || std::regex_search(t, m, starting_re)) {
      name_test(m[1], line_no);
      return;
    }
    if (std::regex_search(t, m, version_re)) {
      if (!cur_ || has_rows()) new_run(line_no);
      cur_->tests_version = m[1];
      if (m[2].matched && cur_->nccl_version.empty()) cur_->nccl_version = m[2];
      return;
    }
    if (std::regex_search(t, m, nthread_re)) {
      if (!cur_ || has_rows() || cur_->threads > 0) {
        const std::string keep = (cur_ && !has_rows()) ? cur_->test : "";
        new_run(line_no);
        cur_->test = keep;
      }
      cur_->threads = std::stoi(m[1]);
      cur_->gpus_per_thread = std::stoi(m[2]);
      if (m[3].matched) {
        cur_->min_bytes = std::stoull(m[3]);
        cur_->max_bytes = std::stoull(m[4]);
      }
      if (std::smatch mi; std::regex_search(t, mi, iters_re)) {
        cur_->warmup_iters = std::stoi(mi[1]);
        cur_->iters = std::stoi(mi[2]);
      }
      return;
    }
    if (std::regex_search(t, m, rank_re)) {
      if (!cur_ || has_rows()) new_run(line_no);
      NcclTestsDevice d;
      d.rank = std::stoi(m[1]);
      d.host = m[2];
      d.device = std::stoi(m[3]);
      d.bus_id = m[4];
      d.name = trim(m[5]);
      cur_->devices.push_back(std::move(d));
      return;
    }
    if (std::regex_search(t, m, nccl_version_re)) {
      if (!cur_) new_run(line_no);
      cur_->nccl_version = m[1];
      return;
    }
    if (std::regex_search(t, m, oob_re)) {
      if (cur_) cur_->out_of_bounds = std::stol(m[1]);
      return;
    }
    if (std::regex_search(t, m, avg_re)) {
      if (cur_) cur_->avg_busbw_GBps = std::strtod(m[1].str().c_str(), nullptr);
      return;
    }
    if (t[0] == '#') {
      column_header(t, line_no);
      return;
    }
    const auto tokens = split_ws(t);
    if (all_digits(tokens[0])) {
      row(t, tokens, line_no);
      return;
    }
    if (std::regex_search(t, m, command_re) && (!cur_ || has_rows() || cur_->test.empty()))
      name_test(m[1], line_no);
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
      throw InputError(where_, "line " + std::to_string(line_no), line,
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
        cur_->failure = "line " + std::to_string(line_no) + ": " + t;
        return;
      }
      throw InputError(where_, "line " + std::to_string(line_no), t,
                       "a row with " + std::to_string(first + 8) + " columns (size count" +
                           [&] { std::string s; for (const auto& c : lead) s += " " + c; return s; }() +
                           " then time algbw busbw #wrong, out-of-place and in-place)");
    }
    NcclTestsRow r;
    r.line = line_no;
    r.bytes = std::stoull(tk[0]);
    if (!all_digits(tk[1]))
      throw InputError(where_, "line " + std::to_string(line_no), t, "an element count in the second column");
    r.count = std::stoull(tk[1]);
    for (std::size_t i = 0; i < lead.size(); ++i) {
      const std::string& v = tk[2 + i];
      if (lead[i] == "type") r.type = v;
      else if (lead[i] == "redop") r.redop = v;
      else if (lead[i] == "root") r.root = static_cast<long>(number(v, line_no, t, "root"));
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
  const std::string n = normalise_test_name(test_name);
  if (n == "all_reduce_perf") return CollectiveOp::all_reduce;
  if (n == "all_gather_perf") return CollectiveOp::all_gather;
  if (n == "reduce_scatter_perf") return CollectiveOp::reduce_scatter;
  if (n == "alltoall_perf") return CollectiveOp::all_to_all;
  if (n == "broadcast_perf") return CollectiveOp::broadcast;
  if (n == "sendrecv_perf") return CollectiveOp::send_recv;
  return std::nullopt;
}

std::vector<NcclTestsRun> parse_nccl_tests_output(const std::string& text, const std::string& where) {
  auto runs = Parser(where).parse(text);
  if (runs.empty())
    throw InputError(where, "", "no nccl-tests table row",
                     "the text printed by an nccl-tests program (all_reduce_perf, all_gather_perf, ...): rows of "
                     "size count type ... time algbw busbw");
  if (runs.size() == 1 && runs[0].test.empty()) {
    static const std::regex file_re(R"(([a-z_]+_perf))");
    std::smatch m;
    if (std::regex_search(where, m, file_re)) runs[0].test = m[1];
  }
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
      m.source = path;
      m.confidence = "measured";
      m.nccl_version = run.nccl_version;
      out.measurements.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace racksim::calibration
