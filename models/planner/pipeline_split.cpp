// Pipeline chunks: Megatron's layout strings (parse and print), its uniform split, and the split balanced
// by each layer type's compute time (step_model.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "models/planner/step_costs.hpp"
#include "sim/core/errors.hpp"

namespace racksim {

using namespace step_detail;

std::vector<StageSlice> chunks_of_stage(const std::vector<StageSlice>& chunks, int pp, int stage) {
  const StageChunks in_place(chunks, pp, stage);
  return {in_place.begin(), in_place.end()};
}

std::vector<StageSlice> uniform_pp_chunks(int layers, int chunks) {
  std::vector<StageSlice> out;
  if (chunks < 1 || layers < 1) return out;
  std::vector<int> counts;
  if (layers % chunks == 0) {
    counts.assign(static_cast<std::size_t>(chunks), layers / chunks);
  } else if (chunks >= 2 && (layers + 2) % chunks == 0) {  // the embedding and the loss each count as a layer
    counts.assign(static_cast<std::size_t>(chunks), (layers + 2) / chunks);
    --counts.front(), --counts.back();
  } else if ((layers + 1) % chunks == 0) {  // the loss counts as a layer
    counts.assign(static_cast<std::size_t>(chunks), (layers + 1) / chunks);
    --counts.back();
  } else {
    return out;
  }
  int first = 0;
  for (int i = 0; i < chunks; ++i) {
    const int c = counts[static_cast<std::size_t>(i)];
    out.push_back(StageSlice{first, c, i == 0, i + 1 == chunks, i + 1 == chunks});
    first += c;
  }
  return out;
}

int pipeline_slots(const ModelSpec& model) { return model.layers + 2; }

namespace {

// Expands Megatron's layout grammar: symbols E t m L |, "x*N" and "(...)*N" repeats, commas cosmetic.
std::string expand_layout(const std::string& s, std::size_t& i) {
  std::string out;
  while (i < s.size() && s[i] != ')') {
    const char c = s[i];
    std::string item;
    if (c == ',' || c == ' ') {
      ++i;
      continue;
    }
    if (c == '(') {
      ++i;
      item = expand_layout(s, i);
      if (i >= s.size() || s[i] != ')') throw std::invalid_argument(fmt::format("pipeline layout '{}': unbalanced '('", s));
      ++i;
    } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
      item = std::string(1, c);
      ++i;
    } else {
      throw std::invalid_argument(fmt::format("pipeline layout '{}': unexpected '{}' (symbols: E t m L |, x*N, (...)*N)", s, c));
    }
    if (i < s.size() && s[i] == '*') {
      ++i;
      const std::size_t start = i;
      int n = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && n < 100000) n = n * 10 + (s[i++] - '0');
      if (i == start) throw std::invalid_argument(fmt::format("pipeline layout '{}': '*' without a count", s));
      std::string r;
      for (int k = 0; k < n; ++k) r += item;
      item = r;
    }
    out += item;
  }
  return out;
}

}  // namespace

std::vector<StageSlice> parse_pp_layout(const std::string& text, const ModelSpec& model, int chunks) {
  std::size_t i = 0;
  const std::string flat = expand_layout(text, i);
  if (i != text.size()) throw std::invalid_argument(fmt::format("pipeline layout '{}': unbalanced ')'", text));
  std::vector<std::string> parts{""};
  for (char c : flat) {
    if (c == '|') parts.emplace_back();
    else parts.back() += c;
  }
  if (static_cast<int>(parts.size()) != chunks)
    throw std::invalid_argument(fmt::format("pipeline layout '{}' has {} chunks; PP x VP = {}", text, parts.size(), chunks));
  std::vector<StageSlice> out;
  int first = 0, mtp = 0;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    StageSlice st;
    st.first_layer = first;
    for (char x : parts[c]) {
      if (x == 't') ++st.layers;
      if (x == 'E') st.has_embedding = true;
      if (x == 'L') st.has_head = true;
      if (x == 'm') st.has_mtp = true, ++mtp;
    }
    if (st.has_embedding && c != 0) throw std::invalid_argument(fmt::format("pipeline layout '{}': the embedding (E) must open the first chunk", text));
    if (st.has_head && c + 1 != parts.size()) throw std::invalid_argument(fmt::format("pipeline layout '{}': the loss (L) must be in the last chunk", text));
    first += st.layers;
    out.push_back(st);
  }
  if (!out.front().has_embedding) throw std::invalid_argument(fmt::format("pipeline layout '{}': no embedding (E) in the first chunk", text));
  if (!out.back().has_head) throw std::invalid_argument(fmt::format("pipeline layout '{}': no loss (L) in the last chunk", text));
  if (first != model.layers)
    throw std::invalid_argument(fmt::format("pipeline layout '{}' places {} decoder layers; {} has {}", text, first, model.name, model.layers));
  if (mtp > 0 && mtp != model.mtp_layers)
    throw std::invalid_argument(fmt::format("pipeline layout '{}' places {} MTP layers; {} has {}", text, mtp, model.name, model.mtp_layers));
  if (mtp == 0 && model.mtp_layers > 0) out.back().has_mtp = true;  // Megatron puts them with the loss
  return out;
}

std::string megatron_pp_layout(const std::vector<StageSlice>& chunks, int mtp_layers) {
  if (chunks.size() <= 1) return "";
  std::vector<std::string> parts;
  for (const StageSlice& c : chunks) {
    std::string s = c.has_embedding ? "E" : "";
    if (c.layers == 1) s += "t";
    else if (c.layers == 2) s += "tt";
    else if (c.layers > 2) s += fmt::format("t*{}", c.layers);
    if (c.has_mtp) s += std::string(static_cast<std::size_t>(std::max(0, mtp_layers)), 'm');
    if (c.has_head) s += "L";
    parts.push_back(s);
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size();) {
    std::size_t j = i;
    while (j < parts.size() && parts[j] == parts[i]) ++j;
    const std::size_t r = j - i;
    const bool last = j == parts.size();
    if (r >= 2 && !last) {
      out += fmt::format("({}|)*{}", parts[i], r);
    } else if (r >= 3) {
      out += fmt::format("({}|)*{}{}", parts[i], r - 1, parts[i]);
    } else {
      for (std::size_t k = i; k < j; ++k) out += parts[k] + (k + 1 < parts.size() ? "|" : "");
    }
    i = j;
  }
  return out;
}

namespace step_detail {

std::vector<StageSlice> balanced_partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs);

std::vector<StageSlice> partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs) {
  const int k = l.pp * l.virtual_stages;
  // A layout string is checked against every layout, one of one chunk too: an 8-chunk string let PP 1 through
  // with the string unread (it won, the pin dropped).
  if (!l.pp_layout.empty() && l.pp_layout != "uniform") return parse_pp_layout(l.pp_layout, model, k);
  if (k > 1 && !l.pp_layout.empty()) {
    std::vector<StageSlice> u = uniform_pp_chunks(model.layers, k);
    if (!u.empty()) return u;
  }
  if (k > model.layers) {
    // More chunks than layers: only Megatron's split that counts the embedding and the loss as layers cuts them
    // (one layer a chunk, the embedding and the loss alone); the balanced split needs a layer in every chunk.
    std::vector<StageSlice> u = uniform_pp_chunks(model.layers, k);
    if (!u.empty()) return u;
    throw InputError("--pp", "", fmt::format("PP x VP = {} pipeline chunks", k),
                     fmt::format("at most {} for {} layers (the embedding and the loss counted as layers), or a "
                                 "--pp-layout string placing them",
                                 pipeline_slots(model), model.layers));
  }
  if (LayerCostCache* shared = LayerCostCache::active(costs.context()))
    return shared->balanced_chunks(costs.context(), k, l.pp, [&] { return balanced_partition(model, l, costs); });
  return balanced_partition(model, l, costs);
}

namespace {

// Moves single layers across chunk boundaries (every chunk keeps one) from a chunk of the busiest GPU to its
// neighbour, GPU s holding chunks s, s + pp, ...; `tail` rides with the last chunk. A move is taken when it
// lowers the largest per-GPU load, or keeps it and lowers the sum of squared loads (so that ties at the top
// resolve one by one). Deterministic: the best such move, the first of equals in chunk order.
void rebalance_stages(std::vector<std::pair<int, int>>& ranges, const std::vector<double>& w, double tail, int pp) {
  const std::size_t k = ranges.size(), stages = static_cast<std::size_t>(pp);
  std::vector<double> stage(stages, 0.0);
  for (std::size_t c = 0; c < k; ++c) {
    double x = c + 1 == k ? tail : 0;
    for (int i = ranges[c].first; i <= ranges[c].second; ++i) x += w[static_cast<std::size_t>(i)];
    stage[c % stages] += x;
  }
  auto score = [&](std::size_t from, std::size_t to, double x) {  // (largest load, sum of squares) after a move
    double top = 0, squares = 0;
    for (std::size_t s = 0; s < stages; ++s) {
      const double v = stage[s] - (s == from ? x : 0) + (s == to ? x : 0);
      top = std::max(top, v);
      squares += v * v;
    }
    return std::pair<double, double>{top, squares};
  };
  for (int round = 0; round < 100000; ++round) {
    const auto busiest = static_cast<std::size_t>(std::max_element(stage.begin(), stage.end()) - stage.begin());
    std::pair<double, double> best = score(busiest, busiest, 0);
    const double eps = 1e-12 * best.first;
    std::size_t best_c = k;
    int best_dir = 0;
    for (std::size_t c = busiest; c < k; c += stages) {
      if (ranges[c].second == ranges[c].first) continue;  // one layer: keep it
      for (int dir : {-1, +1}) {  // give the chunk's first layer to the chunk before, or its last to the one after
        if ((dir < 0 && c == 0) || (dir > 0 && c + 1 == k)) continue;
        const double x = w[static_cast<std::size_t>(dir < 0 ? ranges[c].first : ranges[c].second)];
        const std::pair<double, double> after = score(busiest, (dir < 0 ? c - 1 : c + 1) % stages, x);
        const bool lower_top = after.first < best.first - eps;
        const bool same_top_flatter = std::fabs(after.first - best.first) <= eps && after.second < best.second * (1 - 1e-12);
        if (lower_top || same_top_flatter) best = after, best_c = c, best_dir = dir;
      }
    }
    if (best_c == k) break;
    const std::size_t neighbour = best_dir < 0 ? best_c - 1 : best_c + 1;
    const double x = w[static_cast<std::size_t>(best_dir < 0 ? ranges[best_c].first : ranges[best_c].second)];
    if (best_dir < 0) ++ranges[best_c].first, ++ranges[neighbour].second;
    else --ranges[best_c].second, --ranges[neighbour].first;
    stage[busiest] -= x;
    stage[neighbour % stages] += x;
  }
}

}  // namespace

std::vector<StageSlice> balanced_partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs) {
  const int k = l.pp * l.virtual_stages;
  const int n = model.layers;
  std::vector<StageSlice> out;
  if (k <= 1) {
    out.push_back(StageSlice{0, n, true, true, true});
    return out;
  }
  std::vector<double> w(static_cast<std::size_t>(n));
  std::map<LayerType, double> by_type;
  for (int i = 0; i < n; ++i) {
    const LayerType t = recipe_layer_type(model, costs.context().bf16_layers, i);
    auto it = by_type.find(t);
    if (it == by_type.end()) it = by_type.emplace(t, layer_weight(costs, t)).first;
    w[static_cast<std::size_t>(i)] = it->second;
  }
  const CostContext& cx = costs.context();
  double tail = cx.sys.compute->time_s(costs.head().compute);
  if (cx.job.mtp && model.mtp_layers > 0)
    tail += model.mtp_layers * cx.sys.compute->time_s(costs.mtp().compute + costs.head().compute);
  // Smallest bottleneck T such that the layers fit in k contiguous chunks of at most T (the last one also
  // carrying the head and MTP), each with at least one layer: bisection with a greedy fill from the end.
  auto chunks_needed = [&](double cap) {
    int chunks = 1, in_chunk = 0;
    double load = tail;
    for (int i = n - 1; i >= 0; --i) {
      const double x = w[static_cast<std::size_t>(i)];
      if (load + x > cap && in_chunk > 0) {
        ++chunks;
        load = 0;
        in_chunk = 0;
      }
      load += x;
      ++in_chunk;
    }
    return chunks;
  };
  double lo = 0, hi = tail;
  for (double x : w) hi += x, lo = std::max(lo, x);
  lo = std::max(lo, tail + w.back());
  for (int it = 0; it < 50 && hi - lo > 1e-9 * hi; ++it) {
    const double mid = (lo + hi) / 2;
    (chunks_needed(mid) <= k ? hi : lo) = mid;
  }
  // Greedy from the end at capacity hi, then split the fullest chunks until there are k.
  std::vector<std::pair<int, int>> ranges;  // [first, last] layer indices, built from the end
  {
    int last = n - 1, in_chunk = 0;
    double load = tail;
    for (int i = n - 1; i >= 0; --i) {
      const double x = w[static_cast<std::size_t>(i)];
      if (load + x > hi * (1 + 1e-12) && in_chunk > 0) {
        ranges.push_back({i + 1, last});
        last = i;
        load = 0;
        in_chunk = 0;
      }
      load += x;
      ++in_chunk;
    }
    ranges.push_back({0, last});
    std::reverse(ranges.begin(), ranges.end());
  }
  while (static_cast<int>(ranges.size()) < k) {
    std::size_t widest = 0;
    for (std::size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].second - ranges[i].first > ranges[widest].second - ranges[widest].first) widest = i;
    const auto [a, b] = ranges[widest];
    if (b == a) break;  // cannot happen: n >= k is checked by the callers
    const int mid = a + (b - a + 1) / 2;
    ranges[widest] = {a, mid - 1};
    ranges.insert(ranges.begin() + static_cast<long>(widest) + 1, {mid, b});
  }
  // With interleaving (VP > 1) GPU s runs chunks s, s + PP, ...: the step waits for the GPU whose chunks sum
  // to the most (step_model.hpp), not for the largest chunk. Balancing chunks alone left those sums uneven
  // (Llama 3 70B on PP 4 x VP 10: 22, 18, 24 and 16 layers a GPU); move layers across chunk boundaries, from a
  // chunk of the busiest GPU to its neighbour (another GPU's), while that lowers the busiest GPU's sum.
  if (l.pp > 1 && l.virtual_stages > 1) rebalance_stages(ranges, w, tail, l.pp);
  for (std::size_t i = 0; i < ranges.size(); ++i)
    out.push_back(StageSlice{ranges[i].first, ranges[i].second - ranges[i].first + 1, i == 0, i + 1 == ranges.size(),
                             i + 1 == ranges.size()});
  return out;
}

}  // namespace step_detail

std::vector<StageSlice> pipeline_chunks(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys,
                                        const ParallelLayout& l) {
  Costs costs(context_for(model, job, sys, l, nullptr, nullptr));
  return partition(model, l, costs);
}

}  // namespace racksim
