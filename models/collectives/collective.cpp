#include "models/collectives/collective.hpp"

#include <array>
#include <cctype>
#include <utility>

#include "sim/core/errors.hpp"
#include "sim/core/suggest.hpp"

namespace racksim {

namespace {

constexpr std::array<std::pair<CollectiveOp, const char*>, 7> kOps{{
    {CollectiveOp::all_reduce, "all_reduce"},
    {CollectiveOp::all_gather, "all_gather"},
    {CollectiveOp::reduce_scatter, "reduce_scatter"},
    {CollectiveOp::all_to_all, "all_to_all"},
    {CollectiveOp::broadcast, "broadcast"},
    {CollectiveOp::send_recv, "send_recv"},
    {CollectiveOp::reduce, "reduce"},
}};

// Element sizes of NCCL's data types (nccl.h ncclDataType_t), with the names nccl-tests prints
// (int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2) and the
// common aliases.
struct DtypeEntry {
  const char* name;
  std::uint64_t bytes;
  bool fp8 = false;
};
constexpr std::array<DtypeEntry, 22> kDtypes{{
    {"int8", 1},     {"char", 1},      {"uint8", 1},   {"f8e4m3", 1, true},  {"f8e5m2", 1, true},  {"fp8_e4m3", 1, true},
    {"fp8_e5m2", 1, true}, {"half", 2},      {"float16", 2}, {"fp16", 2},    {"bfloat16", 2}, {"bf16", 2},
    {"int32", 4},    {"int", 4},       {"uint32", 4},  {"float", 4},   {"float32", 4}, {"fp32", 4},
    {"int64", 8},    {"uint64", 8},    {"double", 8},  {"float64", 8},
}};

}  // namespace

std::vector<CollectiveOp> all_collective_ops() {
  std::vector<CollectiveOp> ops;
  for (const auto& [op, name] : kOps) ops.push_back(op);
  return ops;
}

bool op_has_root(CollectiveOp op) {
  return op == CollectiveOp::broadcast || op == CollectiveOp::reduce || op == CollectiveOp::send_recv;
}

bool algorithm_uses_nvls(const std::string& algorithm) {
  return algorithm == "nvls" || algorithm == "nvls_tree" || algorithm == "nvls_collnet";
}

const char* to_string(CollectiveOp op) {
  for (const auto& [o, name] : kOps)
    if (o == op) return name;
  return "?";
}

const std::vector<std::string>& collective_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& entry : kOps) v.emplace_back(entry.second);
    return v;
  }();
  return names;
}

namespace {
// "All-Reduce_perf" -> "allreduce": lower case, letters and digits only, without NCCL's "nccl" prefix and
// nccl-tests' "perf" suffix.
std::string spelling_key(const std::string& text) {
  std::string w;
  for (char ch : text)
    if (std::isalnum(static_cast<unsigned char>(ch))) w += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (w.rfind("nccl", 0) == 0) w.erase(0, 4);
  if (w.size() > 4 && w.compare(w.size() - 4, 4, "perf") == 0) w.erase(w.size() - 4);
  return w;
}
}  // namespace

std::optional<CollectiveOp> collective_op_spelled(const std::string& text) {
  const std::string key = spelling_key(text);
  if (key == "bcast") return CollectiveOp::broadcast;
  for (const auto& [op, name] : kOps)
    if (key == spelling_key(name)) return op;
  return std::nullopt;
}

std::string collective_spelling_refusal(const std::string& text) {
  const std::string w = spelling_key(text);
  if (w == "gather" || w == "scatter" || w == "hypercube" || w == "alltoallv")
    return "collective '" + text + "' (nccl-tests' " + w + ") is not one racksim models: it simulates " +
           comma_list(collective_op_names());
  return "collective '" + text + "' is not one racksim models (" + comma_list(collective_op_names()) +
         "; written any way nccl-tests or NCCL's API spell them)";
}

CollectiveOp collective_op_from_string(const std::string& text, const std::string& where) {
  for (const auto& [op, name] : kOps)
    if (text == name) return op;
  throw InputError(where, "", "'" + text + "'", "one of " + comma_list(collective_op_names()));
}

// nccl-tests (src/*.cu, getBw): all_reduce busbw = algbw * 2(n-1)/n; all_gather, reduce_scatter and
// alltoall * (n-1)/n; broadcast, reduce and sendrecv * 1.
double busbw_factor(CollectiveOp op, int ranks) {
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all: return (n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv: return 1.0;
  }
  return 1.0;
}

namespace {
const DtypeEntry& dtype_entry(const std::string& dtype, const std::string& where) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d;
  std::vector<std::string> names;
  for (const auto& d : kDtypes) names.emplace_back(d.name);
  throw InputError(where, "", "'" + dtype + "'", "one of " + comma_list(names));
}
}  // namespace

std::uint64_t dtype_size_bytes(const std::string& dtype, const std::string& where) { return dtype_entry(dtype, where).bytes; }

bool dtype_is_fp8(const std::string& dtype, const std::string& where) { return dtype_entry(dtype, where).fp8; }

}  // namespace racksim
