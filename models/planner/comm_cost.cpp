#include "models/planner/comm_cost.hpp"

#include <algorithm>
#include <cmath>

#include "models/analytic/analytic_model.hpp"
#include "sim/core/units.hpp"

namespace racksim {

std::size_t CommCost::VectorHash::operator()(const std::vector<int>& v) const {
  std::size_t h = v.size();
  for (int x : v) h ^= static_cast<std::size_t>(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

int CommCost::group(const std::vector<int>& gpus) {
  auto it = group_ids_.find(gpus);
  if (it != group_ids_.end()) return it->second;
  const int id = static_cast<int>(groups_.size());
  groups_.push_back(gpus);
  group_ids_.emplace(gpus, id);
  return id;
}

const CommCost::Answer& CommCost::answer(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  // Whole bytes, at least one; the model's limit is 1 TiB per rank.
  const auto b = static_cast<std::uint64_t>(std::clamp(std::ceil(bytes), 1.0, static_cast<double>(units::kMaxBytesPerRank)));
  Key key{static_cast<int>(op), g, b, dtype};
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  CollectiveRequest r;
  r.op = op;
  r.algorithm = "auto";
  r.gpus = groups_.at(g);
  r.bytes = b;
  r.dtype = dtype;
  ++evaluations_;
  return cache_.emplace(std::move(key), evaluate(r)).first->second;
}

double CommCost::time_s(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  if (groups_.at(g).size() < 2 || bytes <= 0) return 0;
  // Beyond the model's 1 TiB per rank: that many equal collectives back to back.
  const double limit = static_cast<double>(units::kMaxBytesPerRank);
  const double pieces = std::ceil(bytes / limit);
  return pieces * answer(op, g, bytes / pieces, dtype).time_s;
}

std::string CommCost::algorithm(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  if (groups_.at(g).size() < 2 || bytes <= 0) return "";
  return answer(op, g, bytes, dtype).algorithm;
}

AnalyticCommCost::AnalyticCommCost(const TopologyGraph& graph, Calibration calibration)
    : graph_(graph), calibration_(std::move(calibration)) {}

CommCost::Answer AnalyticCommCost::evaluate(const CollectiveRequest& request) {
  const AnalyticEstimate e = analytic_collective(graph_, request, calibration_);
  return Answer{e.time_s, e.algorithm};
}

}  // namespace racksim
