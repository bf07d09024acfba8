#include "models/collectives/nccl_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/collectives/algorithm_support.hpp"
#include "models/nccl/nccl_tuner.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

bool nccl_func(CollectiveOp op, nccl::Func& f) {
  switch (op) {
    case CollectiveOp::all_reduce: f = nccl::Func::all_reduce; return true;
    case CollectiveOp::all_gather: f = nccl::Func::all_gather; return true;
    case CollectiveOp::reduce_scatter: f = nccl::Func::reduce_scatter; return true;
    case CollectiveOp::broadcast: f = nccl::Func::broadcast; return true;
    case CollectiveOp::reduce: f = nccl::Func::reduce; return true;
    default: return false;  // all_to_all, send/recv: point-to-point in NCCL, no algorithm choice
  }
}

namespace {

std::string canonical_protocol(const std::string& p) {
  if (p == "auto") return p;
  return nccl::to_string(nccl::proto_from_string(p));
}

}  // namespace

bool is_nccl_algorithm(const std::string& name) {
  return name == "ring" || name == "tree" || name == "nvls" || name == "nvls_tree" || name == "pat" ||
         is_collnet_algorithm(name);
}

bool is_collnet_algorithm(const std::string& name) {
  return name == "collnet_direct" || name == "collnet_chain" || name == "nvls_collnet";
}

nccl::NcclSystem nccl_system_of(const TopologyGraph& graph, const CollectiveRequest& request) {
  return nccl::nccl_system(graph, request.gpus, nccl::tuner_release(request.nccl_version));
}

NcclChoice resolve_request(const CollectiveRequest& in, const TopologyGraph& graph) {
  NcclChoice c;
  c.request = in;
  CollectiveRequest& r = c.request;
  r.protocol = canonical_protocol(in.protocol);
  nccl::tuner_release(in.nccl_version);  // an unknown version fails here, before anything is built
  if (in.channels < 0 || in.channels > nccl::kMaxChannels)
    throw InputError("--channels", "", std::to_string(in.channels),
                     "0 (NCCL's choice) or 1 to " + std::to_string(nccl::kMaxChannels) + " (MAXCHANNELS, device.h:86)");
  nccl::Func func;
  const bool collective = nccl_func(in.op, func);
  if (!collective || (in.algorithm != "auto" && !is_nccl_algorithm(in.algorithm))) {
    // racksim's own algorithms (and point-to-point ops): NCCL's Simple protocol, its channel count.
    if (r.algorithm == "auto") r.algorithm = in.op == CollectiveOp::all_to_all ? "direct" : "ring";
    // Priced with Simple's terms: another protocol asked for was reported as run and priced as Simple.
    if (r.protocol != "auto" && r.protocol != "Simple")
      throw InputError("--protocol", "", "'" + in.protocol + "' for " + (collective ? "racksim's " + r.algorithm : to_string(in.op)),
                       "auto or Simple (racksim prices " + std::string(collective ? "its own algorithms" : "point-to-point") +
                           " with NCCL's Simple protocol)");
    if (r.protocol == "auto") r.protocol = "Simple";
    // Only all_to_all's price has a channel term (its p2p pipelines); elsewhere here a count asked for was echoed
    // in the result and changed nothing.
    if (in.channels > 0 && in.op != CollectiveOp::all_to_all)
      throw InputError("--channels", "", std::to_string(in.channels) + " for " + (collective ? "racksim's " + r.algorithm : to_string(in.op)),
                       "0 (NCCL's choice): racksim's price of it has no channel term");
    if (r.channels == 0) {
      const nccl::NcclSystem s = nccl_system_of(graph, in);
      r.channels = std::max(1, nccl::compute_graphs(s).comm_channels);
    }
    c.note = collective ? "racksim's " + r.algorithm + " (not one of NCCL's algorithms; NCCL's Simple protocol)"
                        : "point-to-point in NCCL: " + r.algorithm + " over " + std::to_string(r.channels) + " channel(s)";
    return c;
  }
  if (in.gpus.size() <= 1) {
    // One rank: NCCL copies (enqueue.cc:1793-1796); an explicit algorithm is kept so that its builder
    // still checks that it can run here (NVLS needs an NVLink domain even for one GPU).
    if (r.algorithm == "auto") r.algorithm = "ring";
    if (r.protocol == "auto") r.protocol = "Simple";
    if (r.channels == 0) r.channels = 1;
    // Nothing crosses a link: NCCL copies the buffer within the GPU when the call is out of place, which is
    // what racksim prices (exec_terms.cpp, one_rank_terms).
    c.note = "one rank: nothing to exchange";
    return c;
  }
  nccl::Overrides ov;
  // NCCL_ALGO=CollNet* runs only with NCCL_COLLNET_ENABLE=1: asking for it by name turns it on.
  ov.collnet = in.collnet_enabled || is_collnet_algorithm(in.algorithm);
  if (in.algorithm != "auto") ov.algos = {nccl::algo_from_string(in.algorithm)};
  else if (!in.nvls_enabled) ov.algos = {nccl::Algo::tree, nccl::Algo::ring, nccl::Algo::pat};  // NCCL_NVLS_ENABLE=0
  if (r.protocol != "auto") ov.protos = {nccl::proto_from_string(r.protocol)};
  if (in.channels > 0) ov.channels = {in.channels, in.channels};
  // The element type's limits (nccl_tuner.hpp, Overrides): NVLS reduces every type but the 1-byte ones (int8,
  // uint8, fp8); fp8 rings go last.
  ov.fp8 = dtype_is_fp8(in.dtype);
  ov.nvls_reduces_type = dtype_size_bytes(in.dtype) > 1;
  const nccl::NcclSystem s = nccl_system_of(graph, in);
  const nccl::Decision d = nccl::decide(s, func, in.bytes, ov);
  std::string name = nccl::algo_key(d.algo);
  c.by_nccl = true;
  c.nccl_time_us = d.nccl_time_us;
  c.nccl_chunk_bytes = d.chunk_bytes;
  c.nvls_heads = d.nvls_heads;
  r.protocol = nccl::to_string(d.proto);
  r.channels = d.channels;
  c.note = fmt::format("NCCL {} {}: {}/{} on {} channel(s), its estimate {:.4g} us",
                       nccl::release_name(s.release), in.algorithm == "auto" ? "picks" : "runs",
                       nccl::to_string(d.algo), r.protocol, d.channels, d.nccl_time_us);
  std::string others;
  for (const auto& cand : d.candidates)
    if (cand.time_us >= 0 && !(cand.algo == d.algo && cand.proto == d.proto))
      others += fmt::format("{}{}/{} {:.4g}", others.empty() ? "" : ", ", nccl::to_string(cand.algo), nccl::to_string(cand.proto),
                            cand.time_us);
  if (!others.empty()) c.note += " (" + others + " us)";
  c.note += "; " + s.describe();
  if (name == "pat") name = "ring";  // PAT: one GPU per node across nodes; no shipped system has that
  if (name == "nvls" && s.n_nodes > 1) name = "nvls_collnet";  // NVLS across nodes: over CollNet (collnetEnable)
  r.algorithm = name;
  // The pipeline's item is what NCCL moves per loop over all channels (enqueue.cc:2065-2078): trees a chunk
  // per channel, half the channels per tree; NVLS a chunk per channel and head. Rings are not pipelined
  // by racksim's model (their steps already overlap), so they keep 0.
  if (in.chunk_bytes == 0 && d.algo != nccl::Algo::ring && d.algo != nccl::Algo::pat) {
    std::uint64_t item = d.chunk_bytes * static_cast<std::uint64_t>(d.channels);
    // racksim runs one tree per NIC rail (nccl_trees), each with two halves: a half carries channels / (2 rails).
    if (d.algo == nccl::Algo::tree)
      item = d.chunk_bytes * static_cast<std::uint64_t>(std::max(1, d.channels / (2 * nccl_rails(r, graph))));
    if (d.algo == nccl::Algo::nvls || d.algo == nccl::Algo::nvls_tree) item *= static_cast<std::uint64_t>(std::max(1, d.nvls_heads));
    r.chunk_bytes = std::max<std::uint64_t>(1, item);
    c.note += "; pipeline item " + std::to_string(r.chunk_bytes) + " B (NCCL's chunk " + std::to_string(d.chunk_bytes) + " B)";
  }
  return c;
}

}  // namespace racksim
