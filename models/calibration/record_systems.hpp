#pragma once
// Where a public measurement's machine sits in racksim: GPU model, interconnect and node shape -> system,
// racks and ranks (and NVLink partitions). The rules both record files use: public_collectives.json gives
// the model, interconnect and nodes as fields; published_measurements.json gives the machine as free text
// ("HGX H100 x16 nodes (Azure, IB)"), which record_target_from_text reads by the same rules.
#include <string>
#include <vector>

namespace racksim::calibration {

struct RecordTarget {
  std::string system;       // racksim id; empty with `reason` when not expressible
  int racks = 1;
  std::vector<int> gpus;    // global GPU indices of the ranks
  std::string reason;       // non-empty: not expressible
  std::string partitions;   // --partitions form; "18x1": MNNVL off (every tray its own NVLink domain)
  bool nics_assumed = false;  // the source does not state the NICs; the system's own are assumed
  std::string inferred;     // from free text: what was read and what was assumed, in words (empty: fields)
  // Non-empty: the record is validation only, and why, in words: the source's network is not one racksim
  // models and the system's own NICs stand in for it at the same bandwidth per node (EFA on B200/B300, GCP's
  // TCPXO), or it is AWS EFA on its own system (aws-p5, aws-p5en), whose transport figures no fit may touch.
  std::string network_stand_in;
  double nic_GBps = 0;  // with a stand-in: its NICs' bandwidth per direction, GB/s (0: the system's)
};

// The GPU model a text names, in the form record_target takes ("NVIDIA H100 80GB HBM3" -> "H100", "gb200"
// -> "GB200"); the text itself when it names none racksim reads.
std::string canonical_gpu_model(const std::string& text);

// A GB200 (GB300) superchip's GPU is a B200 (B300): a record giving that GPU as its model on a machine whose
// description names the superchip or an NVL72 / NVL36x2 rack is the rack, not an HGX board ("B200" on "GB200
// NVL72, 2 racks" -> "GB200"). Any other model, or a text naming neither, is returned as it is.
std::string rack_model_of(const std::string& model, const std::string& machine_text);

// GPU model ("H100", "GB200", ...), interconnect text, NCCL settings text, notes, ranks, nodes (0: one) and
// GPUs per node (0: ranks / nodes). HGX systems are one 8-GPU node per "rack" (racksim's racks of hgx-*:
// one box each); NVL72 systems 72 GPUs per rack.
RecordTarget record_target(const std::string& model, const std::string& net, const std::string& algo, const std::string& notes,
                           int gpus, int nodes, int per_node);

// The same from a free-text machine description: the GPU model named in it (GB300, GB200, B300, B200,
// H200, H100, H800, H20; others are named in the reason), "x N nodes" / "N nodes" (or racks for NVL72 systems), "N
// GPUs per node"; without a node count an HGX run of more than 8 ranks is ranks / 8 full nodes; a run
// across nodes on no named interconnect is taken as InfiniBand with the system's NICs (nics_assumed).
// `inferred` says what was read and assumed.
RecordTarget record_target_from_text(const std::string& text, const std::string& algo, const std::string& notes, int gpus);

}  // namespace racksim::calibration
