#pragma once
// The planner's one seam to racksim's collective models: every collective the step model prices goes
// through CommCost, and everything the planner needs from models/analytic, models/collectives and the
// discrete-event engine is in comm_cost.cpp only (so a new collective model is one change here).
// The analytic implementation asks the collective model with the real GPU indices of the group, so
// placement matters: which ranks share a tray, an NVLink domain, a NIC rail. Answers are cached (a
// search asks the same few thousand collectives millions of times); groups are interned to small ids.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim {

class TopologyGraph;
class FlowCache;

// Megatron's MoE token dispatchers.
//  * alltoall: NCCL all-to-all over the EP group; every (token, expert) pair travels;
//  * deepep / hybridep (flex dispatcher): fused dispatch kernels that send a token once per target GPU
//    inside the NVLink domain and once per target domain across it (forwarded over NVLink on arrival),
//    overlapping the NVLink and the RDMA parts.
enum class MoeDispatcher { alltoall, deepep, hybridep };
const char* to_string(MoeDispatcher d);

class CommCost {
 public:
  virtual ~CommCost() = default;
  // An id for a group of GPUs (global GPU indices in rank order); equal groups get equal ids, and so do
  // groups the implementation knows to cost the same (canonical()).
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
  // The SMs the collective's kernel holds while it runs: NCCL runs one CTA per channel, one SM each
  // (0 for one GPU or an implementation that does not say).
  int sms(CollectiveOp op, int g, double bytes, const std::string& dtype = "bfloat16");
  // One MoE dispatch (or combine) over the EP group `g`: `bytes` is each GPU's send buffer with one copy
  // per (token, expert) pair; `tokens_bytes` the same tokens counted once; `top_k` experts per token.
  // The alltoall dispatcher sends `bytes`; DeepEP and HybridEP a token once per rank (and domain) reached.
  // inner/outer: the members in the first domain and one member per domain (-1 when the group stays in
  // one domain or the domains hold unequal shares: then one all-to-all over the group).
  double moe_dispatch_s(MoeDispatcher d, int g, int inner, int outer, double bytes, double tokens_bytes, int top_k);
  // The algorithm moe_dispatch_s prices (of the part inside the first domain when it splits the group),
  // without pricing the whole group's all-to-all only to name it.
  std::string moe_dispatch_algorithm(int g, int inner, int outer, double bytes);
  // The SMs one dispatch (or combine) holds: NCCL's channels for alltoall, the fused kernels' SM budget
  // for DeepEP and HybridEP (Megatron-Core's moe_deepep_num_sms = 20; NVIDIA's performance scripts set
  // moe_hybridep_num_sms = 32).
  int moe_dispatch_sms(MoeDispatcher d, int g, int inner, int outer, double bytes);
  virtual std::string name() const = 0;
  std::size_t evaluations() const { return evaluations_; }

 protected:
  struct Answer {
    double time_s = 0;
    std::string algorithm;
    int channels = 0;      // NCCL channels (one SM each while the kernel runs)
  };
  virtual Answer evaluate(const CollectiveRequest& request) = 0;
  // A representative of the groups that cost the same as `gpus` (default: itself).
  virtual std::vector<int> canonical(const std::vector<int>& gpus) const { return gpus; }

 private:
  struct VectorHash {
    std::size_t operator()(const std::vector<int>& v) const;
  };
  using Key = std::tuple<int, int, std::uint64_t, std::string>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  const Answer& answer(CollectiveOp op, int g, double bytes, const std::string& dtype);
  std::unordered_map<std::vector<int>, int, VectorHash> group_ids_;
  std::vector<std::vector<int>> groups_;
  std::unordered_map<Key, Answer, KeyHash> cache_;  // hashed: looked up millions of times by a search
  std::size_t evaluations_ = 0;
};

// racksim's analytic alpha-beta model (analytic_collective), algorithm "auto": the fastest applicable.
class AnalyticCommCost : public CommCost {
 public:
  AnalyticCommCost(const TopologyGraph& graph, Calibration calibration);
  std::string name() const override { return "analytic"; }
  // Every distinct request priced so far, with its answer (what the engine check re-prices).
  struct Record {
    CollectiveRequest request;
    double time_s = 0;
    std::string algorithm;
  };
  const std::vector<Record>& records() const { return records_; }
  // Replace the answers of these requests (op, GPUs, bytes, dtype) by engine times.
  void set_overrides(std::map<std::tuple<int, std::vector<int>, std::uint64_t, std::string>, double> overrides) {
    overrides_ = std::move(overrides);
  }
  // Prices groups exactly as given (the engine check needs the real GPUs of each request).
  void set_exact_groups() { exact_ = true; }

 protected:
  Answer evaluate(const CollectiveRequest& request) override;
  // Every NVLink domain of a shipped system is the same and the scale-out fabric is symmetric between
  // them, so a group costs what the same group costs moved to the first domains it could occupy: its
  // domains renumbered in order of appearance, each GPU keeping its position (tray, slot, NIC rail) in
  // its domain. Searches then price each shape of group once instead of once per position.
  std::vector<int> canonical(const std::vector<int>& gpus) const override;

 private:
  const TopologyGraph& graph_;
  bool exact_ = false;
  std::vector<int> domain_of_, local_of_;        // per GPU index
  std::vector<std::vector<int>> gpu_at_;         // [domain][local] -> GPU index
  Calibration calibration_;
  // Routes and per-link flow counts of the whole search (they depend on the graph only): issue 14.
  std::shared_ptr<FlowCache> flow_cache_;
  std::vector<Record> records_;
  std::map<std::tuple<int, std::vector<int>, std::uint64_t, std::string>, double> overrides_;
};

// The discrete-event engine (sim/engine): `request` run on every group of `groups` at once, algorithm
// as given; the slowest group's time.
double engine_concurrent_s(const TopologyGraph& graph, const Calibration& calibration, const CollectiveRequest& request,
                           const std::vector<std::vector<int>>& groups);

}  // namespace racksim
