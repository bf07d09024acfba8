#pragma once
// A piecewise-constant map from the chunk indices [0, size) to an int, stored as breakpoints, so that
// tasks moving whole slices (thousands of chunks) cost one piece and per-chunk tasks still work. Used
// by the schedule builder (who last wrote each chunk where) and the symbolic checker (what each holder
// holds). Lightweight header: std::map only.
#include <algorithm>
#include <iterator>
#include <map>

namespace racksim {

class IntervalMap {
 public:
  explicit IntervalMap(int size = 0, int value = -1) : size_(size) {
    if (size_ > 0) pieces_[0] = value;
  }
  int size() const { return size_; }

  // f(begin, end, value) for every constant piece overlapping [begin, end), clipped to it.
  template <class F>
  void for_each(int begin, int end, F&& f) const {
    begin = std::max(begin, 0);
    end = std::min(end, size_);
    if (begin >= end) return;
    auto it = std::prev(pieces_.upper_bound(begin));
    for (; it != pieces_.end() && it->first < end; ++it) {
      const auto next = std::next(it);
      const int piece_end = next == pieces_.end() ? size_ : next->first;
      f(std::max(it->first, begin), std::min(piece_end, end), it->second);
    }
  }

  // Replaces the value v of every piece inside [begin, end) by g(begin, end, v) (clipped bounds), then
  // merges neighbours that became equal.
  template <class G>
  void update(int begin, int end, G&& g) {
    begin = std::max(begin, 0);
    end = std::min(end, size_);
    if (begin >= end) return;
    split(begin);
    split(end);
    for (auto it = pieces_.find(begin); it != pieces_.end() && it->first < end; ++it) {
      const auto next = std::next(it);
      it->second = g(it->first, next == pieces_.end() ? size_ : next->first, it->second);
    }
    merge(begin, end);
  }

  void assign(int begin, int end, int value) {
    update(begin, end, [value](int, int, int) { return value; });
  }

  std::size_t piece_count() const { return pieces_.size(); }

 private:
  void split(int at) {
    if (at <= 0 || at >= size_) return;
    auto it = std::prev(pieces_.upper_bound(at));
    if (it->first != at) pieces_.emplace_hint(std::next(it), at, it->second);
  }
  void merge(int begin, int end) {
    auto it = pieces_.find(begin);
    if (it != pieces_.begin()) --it;
    while (it != pieces_.end()) {
      auto next = std::next(it);
      if (next == pieces_.end() || next->first > end) break;
      if (next->second == it->second) {
        pieces_.erase(next);
      } else {
        it = next;
      }
    }
  }

  int size_ = 0;
  std::map<int, int> pieces_;  // piece start -> value; a piece ends where the next one starts
};

}  // namespace racksim
