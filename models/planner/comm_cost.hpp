#pragma once
// How the planner prices one collective on a group of GPUs. The analytic implementation asks racksim's
// collective model (models/analytic) with the real GPU indices of the group, so placement matters:
// which ranks share a tray, an NVLink domain, a NIC rail. Answers are cached (a search asks the same
// few thousand collectives millions of times); groups are interned to small ids for that.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim {

class TopologyGraph;

class CommCost {
 public:
  virtual ~CommCost() = default;
  // An id for a group of GPUs (global GPU indices in rank order); equal groups get equal ids.
  int group(const std::vector<int>& gpus);
  const std::vector<int>& gpus(int group) const { return groups_.at(group); }
  // Seconds for `op` over group `g` with nccl-tests-convention `bytes` (CollectiveRequest::bytes);
  // dtype: the element type ("bfloat16", "float"). One GPU or no bytes: 0.
  double time_s(CollectiveOp op, int g, double bytes, const std::string& dtype = "bfloat16");
  double time_s(CollectiveOp op, const std::vector<int>& gpus, double bytes, const std::string& dtype = "bfloat16") {
    return time_s(op, group(gpus), bytes, dtype);
  }
  // The algorithm the model picks for this request ("" for one GPU).
  std::string algorithm(CollectiveOp op, int g, double bytes, const std::string& dtype = "bfloat16");
  virtual std::string name() const = 0;
  std::size_t evaluations() const { return evaluations_; }

 protected:
  struct Answer {
    double time_s = 0;
    std::string algorithm;
  };
  virtual Answer evaluate(const CollectiveRequest& request) = 0;

 private:
  struct VectorHash {
    std::size_t operator()(const std::vector<int>& v) const;
  };
  using Key = std::tuple<int, int, std::uint64_t, std::string>;
  const Answer& answer(CollectiveOp op, int g, double bytes, const std::string& dtype);
  std::unordered_map<std::vector<int>, int, VectorHash> group_ids_;
  std::vector<std::vector<int>> groups_;
  std::map<Key, Answer> cache_;
  std::size_t evaluations_ = 0;
};

// racksim's analytic alpha-beta model (analytic_collective), algorithm "auto": the fastest applicable.
class AnalyticCommCost : public CommCost {
 public:
  AnalyticCommCost(const TopologyGraph& graph, Calibration calibration);
  std::string name() const override { return "analytic"; }

 protected:
  Answer evaluate(const CollectiveRequest& request) override;

 private:
  const TopologyGraph& graph_;
  Calibration calibration_;
};

}  // namespace racksim
