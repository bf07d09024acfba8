#pragma once
// Predicts a Measurement with racksim's models under a given calibration:
//  * collective: a CollectiveModel (the analytic model, or the discrete-event engine) on the system's
//    graph, ranks = the measurement's GPUs, nccl-tests size convention;
//  * transfer: the route between the two devices, each hop at latency + the link kind's extra latency,
//    bandwidth x the link kind's efficiency, the transfer at the slowest hop: t = sum(alpha) + S / B;
//  * memory: bytes / the GPU type's HBM bandwidth (the calibration has no memory term: a vendor-peak
//    prediction whatever the calibration, reported so that the gap is visible).
// Measured times include the probe's timing floor (an empty CUDA event pair); predictions of what the
// probe reports add it back (`reported_time_s`).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim {
class TopologyGraph;
class SystemCatalog;
}  // namespace racksim

namespace racksim::calibration {

// Seconds for one collective; may throw InputError (cannot express) or SimulationError.
using CollectiveModel =
    std::function<double(const TopologyGraph&, const CollectiveRequest&, const Calibration&)>;

// The request a collective record describes, as every pricing of it builds it: its op, algorithm, ranks,
// size, NCCL overrides, and its NCCL's tuner tables where it names a version racksim has tables for (else 2.28's).
CollectiveRequest collective_request(const Measurement& m);

// The nominal route of a transfer measurement.
struct TransferRoute {
  struct Hop {
    LinkKind kind;
    double latency_s;
    double bandwidth_Bps;
  };
  std::vector<Hop> hops;
  double latency_s = 0;        // sum over hops, nominal
  double bottleneck_Bps = 0;   // min over hops, nominal
  LinkKind bottleneck_kind = LinkKind::pcie;
};

class Predictor {
 public:
  // `topology_dir`: where the systems' files are (SystemCatalog); `model_name`: "analytic" | "engine"...
  Predictor(std::string topology_dir, CollectiveModel collective_model, std::string model_name);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Model time of the measured operation (without the probe's timing floor).
  double time_s(const Measurement& m, const Calibration& c) const;
  // What the source would have reported: time_s + the measurement's timer floor.
  double reported_time_s(const Measurement& m, const Calibration& c) const { return time_s(m, c) + m.timer_floor_s; }

  TransferRoute transfer_route(const Measurement& m) const;  // kind transfer only
  double hbm_bandwidth_Bps(const Measurement& m) const;      // kind memory only
  // Cached per (system, racks, partitions, NIC bandwidth); `partitions` as --partitions takes it, empty for
  // the default; `nic_GBps` every scale-out NIC's bandwidth per direction as --nic-GBps sets it, 0 for the
  // topology's.
  const TopologyGraph& graph(const std::string& system, int racks, const std::string& partitions = "",
                             double nic_GBps = 0) const;
  const TopologyGraph& graph(const Measurement& m) const { return graph(m.system, m.racks, m.partitions, m.nic_GBps); }
  const std::string& model_name() const { return model_name_; }

 private:
  std::unique_ptr<SystemCatalog> catalog_;
  CollectiveModel collective_model_;
  std::string model_name_;
  mutable std::map<std::tuple<std::string, int, std::string, double>, std::unique_ptr<TopologyGraph>> graphs_;
};

// nccl-tests' bus bandwidth of a collective measurement at time t (GB/s); 0 for other kinds.
double busbw_GBps(const Measurement& m, double time_s);

}  // namespace racksim::calibration
