#include "models/collectives/schedule_check.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "models/collectives/chunk_layout.hpp"
#include "models/collectives/interval_map.hpp"
#include "models/collectives/schedule_io.hpp"
#include "sim/core/errors.hpp"

namespace racksim {

namespace {

// Interned sets of ranks: id 0 is the empty set.
class SetPool {
 public:
  explicit SetPool(int n) : words_((n + 63) / 64) { intern(Bits(words_, 0)); }
  int singleton(int r) {
    Bits b(words_, 0);
    b[r / 64] |= 1ULL << (r % 64);
    return intern(b);
  }
  int all(int n) {
    Bits b(words_, 0);
    for (int r = 0; r < n; ++r) b[r / 64] |= 1ULL << (r % 64);
    return intern(b);
  }
  bool intersects(int a, int b) const {
    for (std::size_t w = 0; w < words_; ++w)
      if (sets_[a][w] & sets_[b][w]) return true;
    return false;
  }
  int unite(int a, int b) {
    const std::uint64_t key = (static_cast<std::uint64_t>(std::min(a, b)) << 32) | static_cast<std::uint32_t>(std::max(a, b));
    const auto it = unions_.find(key);
    if (it != unions_.end()) return it->second;
    Bits u = sets_[a];
    for (std::size_t w = 0; w < words_; ++w) u[w] |= sets_[b][w];
    const int id = intern(u);
    unions_[key] = id;
    return id;
  }
  std::string describe(int id, int n) const {
    std::vector<int> members;
    for (int r = 0; r < n; ++r)
      if (sets_[id][r / 64] >> (r % 64) & 1) members.push_back(r);
    if (static_cast<int>(members.size()) == n) return "all " + std::to_string(n) + " ranks";
    std::string s = "{";
    for (std::size_t i = 0; i < members.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(members[i]);
    if (members.size() > 8) s += ",... (" + std::to_string(members.size()) + ")";
    return s + "}";
  }

 private:
  using Bits = std::vector<std::uint64_t>;
  int intern(const Bits& b) {
    const auto [it, inserted] = ids_.emplace(b, static_cast<int>(sets_.size()));
    if (inserted) sets_.push_back(b);
    return it->second;
  }
  std::size_t words_;
  std::vector<Bits> sets_;
  std::map<Bits, int> ids_;
  std::unordered_map<std::uint64_t, int> unions_;
};

class Checker {
 public:
  Checker(const Schedule& s, std::size_t max) : s_(s), n_(static_cast<int>(s.request.gpus.size())), max_(max), pool_(std::max(n_, 1)) {}

  std::size_t count() const { return count_; }
  std::vector<std::string> run() {
    const char* layout = chunk_layout_problem(s_.request.op, n_, s_.chunks);
    if (*layout) {
      add(std::string("layout: ") + layout + " (chunks " + std::to_string(s_.chunks) + ", ranks " + std::to_string(n_) + ")");
      return finish();
    }
    init();
    for (std::size_t i = 0; i < s_.tasks.size(); ++i) step(static_cast<int>(i));
    check_final();
    return finish();
  }

 private:
  void add(const std::string& v) {
    ++count_;
    if (out_.size() < max_) out_.push_back(v);
  }
  std::vector<std::string> finish() {
    if (count_ > out_.size()) out_.push_back("... and " + std::to_string(count_ - out_.size()) + " more violation(s)");
    return std::move(out_);
  }
  std::string label(int id) const { return "task " + std::to_string(id); }

  int holder(const Endpoint& e) {
    if (e.kind == Endpoint::Kind::rank) return e.index;
    // Planes of both kinds by (kind, index): NVLink domain 0's switch is not rail 0's fabric.
    const auto [it, inserted] = planes_.emplace(std::make_pair(static_cast<int>(e.kind), e.index), static_cast<int>(content_.size()));
    if (inserted) {
      content_.emplace_back(s_.chunks, 0);
      writers_.emplace_back(s_.chunks, -1);
    }
    return it->second;
  }

  void init() {
    const auto op = s_.request.op;
    content_.assign(n_, IntervalMap(s_.chunks, 0));
    writers_.assign(n_, IntervalMap(s_.chunks, -1));
    for (int r = 0; r < n_; ++r) {
      const int own = pool_.singleton(r);
      switch (op) {
        case CollectiveOp::all_reduce:
        case CollectiveOp::reduce:
        case CollectiveOp::reduce_scatter: content_[r].assign(0, s_.chunks, own); break;
        case CollectiveOp::all_gather:
          for (int c = r; c < s_.chunks; c += n_) content_[r].assign(c, c + 1, own);
          break;
        case CollectiveOp::all_to_all: content_[r].assign(r * n_, (r + 1) * n_, own); break;
        case CollectiveOp::broadcast:
          if (r == s_.request.root) content_[r].assign(0, s_.chunks, own);
          break;
        case CollectiveOp::send_recv: {
          const int k = s_.chunks / n_;
          content_[r].assign(r * k, (r + 1) * k, own);
          break;
        }
      }
    }
  }

  bool endpoint_ok(const Endpoint& e) const {
    return e.index >= 0 && (e.is_plane() || e.index < n_);
  }

  // Whether dependency d of task t is needed (see the header).
  bool needed(const Task& t, const Task& d) const {
    if (d.src == t.src) return true;
    for (const auto& a : d.dsts)
      for (const auto& b : t.dsts)
        if (a == b) return true;
    const bool overlap = d.chunk < t.chunk + t.chunk_count && t.chunk < d.chunk + d.chunk_count;
    if (!overlap) return false;
    for (const auto& a : d.dsts)
      if (a == t.src) return true;
    return false;
  }

  void step(int i) {
    const Task& t = s_.tasks[i];
    const std::string who = label(i);
    bool ok = true;
    if (t.id != i) add(who + ": id " + std::to_string(t.id) + " (expected its position " + std::to_string(i) + ")");
    if (t.phase < 0 || t.phase >= static_cast<int>(s_.phases.size()))
      add(who + ": phase " + std::to_string(t.phase) + " does not exist");
    if (t.chunk < 0 || t.chunk_count < 1 || t.chunk + t.chunk_count > s_.chunks) {
      add(who + ": chunks [" + std::to_string(t.chunk) + ", " + std::to_string(t.chunk + t.chunk_count) +
          ") outside [0, " + std::to_string(s_.chunks) + ")");
      ok = false;
    }
    if (!endpoint_ok(t.src)) {
      add(who + ": source " + endpoint_to_string(t.src) + " out of range");
      ok = false;
    }
    if (t.dsts.empty()) {
      add(who + ": no destination");
      ok = false;
    }
    for (std::size_t a = 0; a < t.dsts.size(); ++a) {
      if (!endpoint_ok(t.dsts[a])) {
        add(who + ": destination " + endpoint_to_string(t.dsts[a]) + " out of range");
        ok = false;
      }
      if (t.dsts[a] == t.src) add(who + ": sends to itself (" + endpoint_to_string(t.src) + ")");
      for (std::size_t b = 0; b < a; ++b)
        if (t.dsts[a] == t.dsts[b]) add(who + ": destination " + endpoint_to_string(t.dsts[a]) + " listed twice");
    }
    std::vector<int> deps = t.deps;
    std::sort(deps.begin(), deps.end());
    for (std::size_t j = 0; j < deps.size(); ++j) {
      if (deps[j] < 0 || deps[j] >= i) {
        add(who + ": dependency on task " + std::to_string(deps[j]) + " does not point backwards");
        continue;
      }
      if (j > 0 && deps[j] == deps[j - 1]) add(who + ": dependency on task " + std::to_string(deps[j]) + " listed twice");
      if (!needed(t, s_.tasks[deps[j]]))
        add(who + ": dependency on task " + std::to_string(deps[j]) +
            " is not needed (it delivers nothing this task sends and shares neither its sender nor a receiver)");
    }
    if (!ok) return;
    const auto& q = s_.request;
    const std::uint64_t expected = chunk_range_bytes(q.op, q.bytes, n_, s_.chunks, t.chunk, t.chunk_count);
    if (t.bytes != expected)
      add(who + ": carries " + std::to_string(t.bytes) + " bytes but chunks [" + std::to_string(t.chunk) + ", " +
          std::to_string(t.chunk + t.chunk_count) + ") hold " + std::to_string(expected));

    const int src = holder(t.src);
    const int b = t.chunk, e = t.chunk + t.chunk_count;
    // Read-after-write: every writer of the data sent must be a dependency.
    writers_[src].for_each(b, e, [&](int pb, int, int group) {
      if (group < 0) return;
      for (int w : groups_[group])
        if (!std::binary_search(deps.begin(), deps.end(), w))
          add(who + ": sends chunk " + std::to_string(pb) + " from " + endpoint_to_string(t.src) +
              " without depending on task " + std::to_string(w) + ", which wrote it there");
    });
    struct Piece {
      int b, e, set;
    };
    std::vector<Piece> pieces;
    content_[src].for_each(b, e, [&](int pb, int pe, int set) {
      if (set == 0)
        add(who + ": " + endpoint_to_string(t.src) + " sends chunk " + std::to_string(pb) + " it does not hold");
      pieces.push_back({pb, pe, set});
    });
    memo_.clear();
    int own_group = -1;
    for (const auto& dst : t.dsts) {
      const int h = holder(dst);
      for (const auto& p : pieces) {
        content_[h].update(p.b, p.e, [&](int cb, int, int old) {
          if (t.reduce) {
            if (pool_.intersects(old, p.set))
              add(who + ": " + endpoint_to_string(dst) + " adds " + pool_.describe(p.set, n_) + " to chunk " +
                  std::to_string(cb) + " which already holds " + pool_.describe(old, n_) + " (counted twice)");
            return pool_.unite(old, p.set);
          }
          if (old == p.set)
            add(who + ": " + endpoint_to_string(dst) + " receives chunk " + std::to_string(cb) +
                " it already holds (" + pool_.describe(old, n_) + "): redundant transfer");
          return p.set;
        });
      }
      if (t.reduce) {
        writers_[h].update(b, e, [&](int, int, int group) { return group_plus(group, i); });
      } else {
        if (own_group < 0) {
          groups_.push_back({i});
          own_group = static_cast<int>(groups_.size()) - 1;
        }
        writers_[h].assign(b, e, own_group);
      }
    }
  }

  int group_plus(int group, int task) {
    for (const auto& [from, to] : memo_)
      if (from == group) return to;
    std::vector<int> g = group >= 0 ? groups_[group] : std::vector<int>{};
    g.push_back(task);
    groups_.push_back(std::move(g));
    memo_.emplace_back(group, static_cast<int>(groups_.size()) - 1);
    return memo_.back().second;
  }

  void expect(int rank, int b, int e, int want, const std::string& what) {
    content_[rank].for_each(b, e, [&](int pb, int pe, int set) {
      if (set != want)
        add("rank " + std::to_string(rank) + " ends with chunks [" + std::to_string(pb) + ", " + std::to_string(pe) +
            ") holding " + pool_.describe(set, n_) + " (expected " + what + ")");
    });
  }

  void check_final() {
    const auto op = s_.request.op;
    const int all = pool_.all(n_);
    for (int r = 0; r < n_; ++r) {
      switch (op) {
        case CollectiveOp::all_reduce: expect(r, 0, s_.chunks, all, "all ranks reduced"); break;
        case CollectiveOp::reduce_scatter:
          for (int c = r; c < s_.chunks; c += n_) expect(r, c, c + 1, all, "its own chunk reduced over all ranks");
          break;
        case CollectiveOp::all_gather:
          for (int c = 0; c < s_.chunks; ++c) expect(r, c, c + 1, pool_.singleton(c % n_), "its owner's piece");
          break;
        case CollectiveOp::all_to_all:
          for (int src = 0; src < n_; ++src)
            expect(r, src * n_ + r, src * n_ + r + 1, pool_.singleton(src), "rank " + std::to_string(src) + "'s piece");
          break;
        case CollectiveOp::broadcast:
          expect(r, 0, s_.chunks, pool_.singleton(s_.request.root), "the root's data");
          break;
        case CollectiveOp::reduce:
          if (r == s_.request.root) expect(r, 0, s_.chunks, all, "all ranks reduced");
          break;
        case CollectiveOp::send_recv: {
          const int k = s_.chunks / n_;
          const int from = (r - 1 + n_) % n_;
          if (from != r) expect(r, from * k, (from + 1) * k, pool_.singleton(from), "rank " + std::to_string(from) + "'s buffer");
          break;
        }
      }
    }
  }

  const Schedule& s_;
  int n_;
  std::size_t max_, count_ = 0;
  SetPool pool_;
  std::vector<std::string> out_;
  std::vector<IntervalMap> content_, writers_;
  std::vector<std::vector<int>> groups_;
  std::vector<std::pair<int, int>> memo_;
  std::map<std::pair<int, int>, int> planes_;
};

}  // namespace

std::vector<std::string> check_schedule(const Schedule& schedule, std::size_t max_violations) {
  // A quotient's tasks are one per orbit: the byte accounting below holds for the full schedule only.
  if (schedule.symmetry) throw SimulationError("internal: " + schedule.algorithm + " listed by its symmetry cannot be checked");
  return Checker(schedule, max_violations).run();
}

ScheduleCheck check_schedule_counted(const Schedule& schedule, std::size_t max_violations) {
  if (schedule.symmetry) throw SimulationError("internal: " + schedule.algorithm + " listed by its symmetry cannot be checked");
  Checker checker(schedule, max_violations);
  ScheduleCheck c;
  c.listed = checker.run();
  c.total = checker.count();
  if (c.listed.size() > max_violations) c.listed.resize(max_violations);  // drop the "... more" line
  return c;
}

ScheduleTraffic schedule_traffic(const Schedule& s) {
  ScheduleTraffic t;
  const std::size_t n = s.request.gpus.size();
  t.sent.assign(n, 0);
  t.received.assign(n, 0);
  for (const auto& task : s.tasks) {
    const std::uint64_t fan = task.bytes * task.dsts.size();
    if (task.src.kind == Endpoint::Kind::rank && task.src.index >= 0 && static_cast<std::size_t>(task.src.index) < n)
      t.sent[task.src.index] += fan;
    else if (task.src.kind == Endpoint::Kind::switch_plane)
      t.switch_sent += fan;
    else if (task.src.kind == Endpoint::Kind::fabric_plane)
      t.fabric_sent += fan;
    for (const auto& d : task.dsts) {
      if (d.kind == Endpoint::Kind::rank && d.index >= 0 && static_cast<std::size_t>(d.index) < n)
        t.received[d.index] += task.bytes;
      else if (d.kind == Endpoint::Kind::switch_plane)
        t.switch_received += task.bytes;
      else if (d.kind == Endpoint::Kind::fabric_plane)
        t.fabric_received += task.bytes;
    }
  }
  return t;
}

}  // namespace racksim
