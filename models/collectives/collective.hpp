#pragma once
// What a user asks for: one collective on a set of GPUs. Sizes follow nccl-tests (see bytes below).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace racksim {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv, reduce };
// Every op, in the order above.
std::vector<CollectiveOp> all_collective_ops();
const char* to_string(CollectiveOp op);
// Whether `root` means anything for the op: broadcast and reduce, and send_recv's first rank.
bool op_has_root(CollectiveOp op);
// Whether the algorithm (a registry name) runs NVLS, which NCCL_NVLS_ENABLE=0 (--nvls off) takes away.
bool algorithm_uses_nvls(const std::string& algorithm);
// "all_reduce", ...; InputError listing the valid names otherwise.
CollectiveOp collective_op_from_string(const std::string& text, const std::string& where = "--op");
const std::vector<std::string>& collective_op_names();
// The op a text names however nccl-tests, NCCL's API or a writer spells it: "all_reduce", "allreduce",
// "All-Reduce", "AllReduce", "ncclAllReduce", "all_reduce_perf"; "alltoall", "sendrecv", "bcast". Case, spaces,
// '-' and '_' do not matter. Nullopt for one racksim does not model (gather, scatter, hypercube);
// collective_spelling_refusal says why in words.
std::optional<CollectiveOp> collective_op_spelled(const std::string& text);
std::string collective_spelling_refusal(const std::string& text);

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor(n).
double busbw_factor(CollectiveOp op, int ranks);

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::string algorithm = "ring";   // registry name inside the op: "ring", "nvls", "tree", "hierarchical", ...
  std::vector<int> gpus;            // global GPU indices of the ranks, rank i -> gpus[i]
  // nccl-tests' "size": all_reduce, broadcast, reduce, send_recv and reduce_scatter's input: the per-rank buffer;
  // all_gather: the output buffer (each rank contributes bytes / n); all_to_all: the per-rank send
  // buffer (bytes / n to each peer). Must be > 0 and <= 1 TiB per rank.
  std::uint64_t bytes = 0;
  std::string dtype = "float";      // element type (for nccl-tests' count column and reduction cost)
  std::uint64_t chunk_bytes = 0;    // pipelining chunk; 0 = the algorithm's default
  int root = 0;                     // broadcast / reduce root; send_recv source rank (send_recv: root -> root+1 ...)
  // NCCL's protocol ("LL", "LL128", "Simple") and channel count; "auto" / 0 = what NCCL 2.28 would use
  // (models/nccl), like leaving NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS unset. A resolved request
  // (resolve_request) always holds concrete values.
  std::string protocol = "auto";
  int channels = 0;
  // NCCL_NVLS_ENABLE: false keeps "auto" off NVLS and NVLS-tree (NCCL without multicast).
  bool nvls_enabled = true;
  // NCCL_COLLNET_ENABLE (with the SHARP plugin): true lets "auto" pick CollNet Direct / Chain and NVLS over
  // CollNet across nodes (tuning.cc:502-507); off by default, as in NCCL.
  bool collnet_enabled = false;
  // NCCL_IB_QPS_PER_CONNECTION: the InfiniBand / RoCE queue pairs of each network connection; 0 = NCCL's
  // default, one. A verbs connection moves at most a calibrated rate per queue pair (exec_terms.cpp).
  int ib_qps_per_connection = 0;
  // The NCCL version whose tuner tables decide and price the run (nccl::tuner_release): "2.28" (the default,
  // the device machine's), or another from 2.18 on as NCCL prints it ("2.26.6+cuda12.8"): 2.18-2.27 take NCCL
  // 2.27's tables (2.18-2.24, older than them, with a warning: nccl::tuner_release_caveat), 2.29 2.29's, 2.30 and later 2.30's.
  std::string nccl_version = "2.28";
  // hierarchical: the algorithms used inside each NVLink domain and across domains.
  std::string inner_algorithm = "auto";
  std::string outer_algorithm = "ring";

  bool operator==(const CollectiveRequest&) const = default;
};

std::uint64_t dtype_size_bytes(const std::string& dtype, const std::string& where = "--dtype");
// Whether the element type is one of NCCL's fp8 types (ncclFloat8e4m3, ncclFloat8e5m2).
bool dtype_is_fp8(const std::string& dtype, const std::string& where = "--dtype");

}  // namespace racksim
