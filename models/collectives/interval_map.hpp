#pragma once
// A piecewise-constant map from the chunk indices [0, size) to an int, stored as sorted breakpoints in a
// flat vector, so that tasks moving whole slices (thousands of chunks) cost one piece and per-chunk
// tasks stay cheap (a holder rarely has more than a few hundred pieces). Used by the schedule builder
// (who last wrote each chunk where) and the symbolic checker (what each holder holds).
#include <algorithm>
#include <utility>
#include <vector>

namespace racksim {

class IntervalMap {
 public:
  explicit IntervalMap(int size = 0, int value = -1) : size_(size) {
    if (size_ > 0) pieces_.emplace_back(0, value);
  }
  int size() const { return size_; }
  std::size_t piece_count() const { return pieces_.size(); }

  // f(begin, end, value) for every constant piece overlapping [begin, end), clipped to it.
  template <class F>
  void for_each(int begin, int end, F&& f) const {
    begin = std::max(begin, 0);
    end = std::min(end, size_);
    for (std::size_t i = find(begin); i < pieces_.size() && begin < end && pieces_[i].first < end; ++i) {
      const int piece_end = i + 1 < pieces_.size() ? pieces_[i + 1].first : size_;
      f(std::max(pieces_[i].first, begin), std::min(piece_end, end), pieces_[i].second);
    }
  }

  // Replaces the value v of every piece inside [begin, end) by g(begin, end, v) (clipped bounds), then
  // merges neighbours that became equal.
  template <class G>
  void update(int begin, int end, G&& g) {
    begin = std::max(begin, 0);
    end = std::min(end, size_);
    if (begin >= end) return;
    const std::size_t first = split(begin);
    const std::size_t last = split(end);  // index of the piece starting at `end` (or size)
    for (std::size_t i = first; i < last; ++i) {
      const int piece_end = i + 1 < pieces_.size() ? pieces_[i + 1].first : size_;
      pieces_[i].second = g(pieces_[i].first, piece_end, pieces_[i].second);
    }
    // Merge equal neighbours from the piece before `begin` to the piece starting at `end`.
    std::size_t lo = first > 0 ? first - 1 : 0;
    const std::size_t hi = std::min(last + 1, pieces_.size());
    std::size_t out = lo + 1;
    for (std::size_t i = lo + 1; i < hi; ++i)
      if (pieces_[i].second != pieces_[out - 1].second) pieces_[out++] = pieces_[i];
    if (out < hi) pieces_.erase(pieces_.begin() + static_cast<long>(out), pieces_.begin() + static_cast<long>(hi));
  }

  void assign(int begin, int end, int value) {
    update(begin, end, [value](int, int, int) { return value; });
  }

 private:
  // Index of the piece containing pos.
  std::size_t find(int pos) const {
    const auto it = std::upper_bound(pieces_.begin(), pieces_.end(), pos,
                                     [](int p, const std::pair<int, int>& piece) { return p < piece.first; });
    return static_cast<std::size_t>(it - pieces_.begin()) - 1;
  }
  // Makes a piece start at `at` and returns its index (pieces_.size() when at == size).
  std::size_t split(int at) {
    if (at >= size_) return pieces_.size();
    const std::size_t i = find(at);
    if (pieces_[i].first == at) return i;
    pieces_.insert(pieces_.begin() + static_cast<long>(i) + 1, {at, pieces_[i].second});
    return i + 1;
  }

  int size_ = 0;
  std::vector<std::pair<int, int>> pieces_;  // (start, value), sorted; a piece ends where the next starts
};

}  // namespace racksim
