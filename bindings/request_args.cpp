#include "bindings/request_args.hpp"

#include <pybind11/stl.h>

#include "models/collectives/rank_placement.hpp"
#include "models/collectives/sweep_sizes.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/results/results_io.hpp"
#include "sim/topo/topology_graph.hpp"
#include "models/nccl/nccl_system.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {
std::string shown(const py::handle& value) { return py::repr(value).cast<std::string>(); }
}  // namespace

bool is_a_bool(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return true;
  const std::string type = py::str(py::type::of(value).attr("__name__")).cast<std::string>();
  return type == "bool_" || type == "bool";
}

std::uint64_t bytes_arg(const py::handle& value, const std::string& where) {
  if (py::isinstance<py::str>(value)) return units::parse_bytes(value.cast<std::string>(), where);
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    // Through Python's own comparison so that huge ints are reported, not wrapped.
    if (value.cast<py::int_>() < py::int_(0) || value.cast<py::int_>() > py::int_(UINT64_MAX))
      throw InputError(where, "", shown(value), "a positive byte count (int) or a string such as 64K, 1G, 1GiB");
    return value.cast<std::uint64_t>();
  }
  // numpy integers and floats that are whole numbers (1e9) are accepted; anything else is bad input.
  if (py::hasattr(value, "__index__")) return bytes_arg(value.attr("__index__")(), where);
  if (py::isinstance<py::float_>(value)) {
    const double v = value.cast<double>();
    if (v >= 0 && v == static_cast<double>(static_cast<std::uint64_t>(v))) return static_cast<std::uint64_t>(v);
  }
  throw InputError(where, "", shown(value), "a positive byte count (int) or a string such as 64K, 1G, 1GiB");
}

Calibration calibration_arg(const py::handle& value) {
  // None used to mean "the shipped default" while "none" meant vendor peaks: one letter apart, opposite
  // answers. The default is now spelt "default", and None is refused with both choices named.
  const std::string choices = "'default' (the shipped calibration, fitted to measurements), 'none' (vendor peaks, "
                              "no calibration), a calibration JSON path or a dict";
  if (value.is_none()) throw InputError("calibration", "", "None (ambiguous: the default, or no calibration?)", choices);
  if (py::isinstance<py::str>(value)) {
    const std::string text = value.cast<std::string>();
    if (text != "none" && text != "default" && (text == "None" || text == "NONE" || text == "Default" || text == "DEFAULT"))
      throw InputError("calibration", "", "'" + text + "' (names are lower case)", choices);
    return load_calibration(text);
  }
  if (py::isinstance<py::dict>(value)) {
    const std::string text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
    return calibration_from_json_text(text, "calibration (dict)");
  }
  // os.PathLike
  if (py::hasattr(value, "__fspath__")) return load_calibration(py::str(value.attr("__fspath__")()).cast<std::string>());
  throw InputError("calibration", "", shown(value), "None, 'none', 'default', a calibration JSON path or a dict");
}

FailureScenario failures_arg(const py::handle& value, const std::string& mode) {
  FailureScenario scenario;
  scenario.mode = partition_mode_from_string(mode, "partition_mode");
  if (value.is_none()) return scenario;
  if (py::isinstance<py::str>(value)) {
    scenario.items.push_back(parse_failure_item(value.cast<std::string>()));
    return scenario;
  }
  if (!py::isinstance<py::sequence>(value))
    throw InputError("fail", "", shown(value), "a failure item such as 'tray:3' or a list of them");
  for (const auto& item : value.cast<py::sequence>()) {
    if (!py::isinstance<py::str>(item))
      throw InputError("fail", "", shown(item), "a failure item string such as 'tray:3', 'switch-tray:0', 'nic:5'");
    scenario.items.push_back(parse_failure_item(item.cast<std::string>()));
  }
  return scenario;
}

std::uint64_t chunk_bytes_arg(const py::handle& value) {
  if (value.is_none()) return 0;
  const std::uint64_t c = bytes_arg(value, "chunk_bytes");
  if (c == 0) throw InputError("chunk_bytes", "", "0", "a positive byte count, or None for the algorithm's default");
  return c;
}

int optional_int_arg(const py::handle& value, const std::string& name, int lo, int hi, int if_none,
                     const std::string& none_means) {
  if (value.is_none()) return if_none;
  const std::string range = "an int in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  // An int, or what indexes as one (numpy's integers), but not a bool (an int to Python) nor a float.
  const bool integral = py::isinstance<py::int_>(value) || (py::hasattr(value, "__index__") && !py::isinstance<py::float_>(value));
  if (!integral || is_a_bool(value))
    throw InputError(name, "", shown(value), "None or " + range);
  // Compared as Python ints, so that one beyond a C long (2**63) is reported rather than failing to convert.
  const py::int_ as_int = py::isinstance<py::int_>(value) ? value.cast<py::int_>() : py::int_(value.attr("__index__")());
  if (as_int < py::int_(lo) || as_int > py::int_(hi)) throw InputError(name, "", shown(value), "None (" + none_means + ") or " + range);
  return static_cast<int>(as_int.cast<long>());
}

std::optional<double> optional_number_arg(const py::handle& value, const std::string& name, const std::string& allowed) {
  if (value.is_none()) return std::nullopt;
  // An int or a float, numpy's too (they index or convert as one), but not a bool and not a text.
  const bool numeric = py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) || py::hasattr(value, "__index__") ||
                       py::hasattr(value, "__float__");
  if (!numeric || is_a_bool(value))
    throw InputError(name, "", shown(value), allowed);
  try {
    return py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
  } catch (const py::error_already_set&) {  // an int beyond a double's range (10**400): Python's OverflowError
    throw InputError(name, "", shown(value), allowed);
  } catch (const py::cast_error&) {
    throw InputError(name, "", shown(value), allowed);
  }
}

std::optional<std::string> optional_string_arg(const py::handle& value, const std::string& name, const std::string& allowed) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(value)) throw InputError(name, "", shown(value), allowed);
  return value.cast<std::string>();
}

int channels_arg(const py::handle& value) { return optional_int_arg(value, "channels", 1, 64, 0, "NCCL's choice"); }

CollectiveRequest make_request(const TopologyGraph& graph, const RequestArgs& a) {
  CollectiveRequest request;
  request.op = collective_op_from_string(a.op, "op");
  request.algorithm = a.algo;
  request.gpus = place_ranks(graph, a.gpus, "gpus");
  request.bytes = a.bytes;
  request.chunk_bytes = a.chunk_bytes;
  // As the CLI: a part of the hierarchical algorithm named for another algorithm is refused, not ignored.
  for (const auto& [name, value] : {std::pair{"inner", &a.inner}, std::pair{"outer", &a.outer}})
    if (*value && !value->is_none() && a.algo != "hierarchical")
      throw InputError(name, "", "'" + py::str(*value).cast<std::string>() + "'",
                       "None unless algo='hierarchical' (the algorithm it chooses parts of; algo is '" + a.algo + "')");
  if (a.inner) {
    if (const auto inner = optional_string_arg(a.inner, "inner", "None or an algorithm inside each NVLink domain (ring, nvls, auto)"))
      request.inner_algorithm = *inner;
  }
  if (a.outer) {
    if (const auto outer = optional_string_arg(a.outer, "outer", "None or an algorithm across domains (ring, tree, sharp)"))
      request.outer_algorithm = *outer;
  }
  if (!a.nvls && algorithm_uses_nvls(a.algo))
    throw InputError("algo", "", "'" + a.algo + "' with nvls=False", "an algorithm without NVLS, or nvls=True (NCCL_NVLS_ENABLE=0 leaves NCCL no NVLS to run)");
  dtype_size_bytes(a.dtype, "dtype");
  request.dtype = a.dtype;
  if (a.root && !op_has_root(request.op))
    throw InputError("root", "", std::to_string(*a.root), "None unless op is broadcast, reduce or send_recv (" + a.op + " has no root)");
  request.root = a.root.value_or(0);
  if (request.bytes > 0) request.bytes = nccl_tests_bytes_of(request, request.bytes, a.bytes_name);
  request.protocol = a.protocol;
  request.channels = a.channels;
  request.nvls_enabled = a.nvls;
  request.collnet_enabled = a.collnet;
  nccl::tuner_release(a.nccl_version, "nccl_version");  // InputError (a ValueError) on a version without tables
  request.nccl_version = a.nccl_version;
  if (a.ib_qps_per_connection < 0 || a.ib_qps_per_connection > 128)
    throw InputError("ib_qps_per_connection", "", std::to_string(a.ib_qps_per_connection),
                     "0 (NCCL's default, one) or 1 to 128 (NCCL_IB_QPS_PER_CONNECTION)");
  request.ib_qps_per_connection = a.ib_qps_per_connection;
  return request;
}

py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

py::object result_dict(const RunResult& result) { return json_loads(run_result_to_json_text(result)); }

}  // namespace racksim::bindings
