#pragma once
// Python arguments -> library inputs, shared by the collective, sweep and analytic bindings. Each
// conversion names the Python argument in its InputError, as the CLI names its --option.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>

#include "models/collectives/collective.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/failure_scenario.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {
class TopologyGraph;
}

namespace racksim::bindings {

// An int (> 0) or a string as the CLI takes it ("1G", "512M", "64K", "1GiB", "100GB").
std::uint64_t bytes_arg(const pybind11::handle& value, const std::string& where);
// None -> the shipped default calibration; "none" | "default" | a path; or a dict in the calibration
// file format (calibrate/default.json), for a calibration made in a notebook.
Calibration calibration_arg(const pybind11::handle& value);
// None, one item ("tray:3") or a list of items, as the CLI's repeated --fail; `mode` as --partition-mode.
FailureScenario failures_arg(const pybind11::handle& value, const std::string& mode = "full-bandwidth");
// An optional chunk size (None -> 0 = the algorithm's default).
std::uint64_t chunk_bytes_arg(const pybind11::handle& value);

// What every collective-like call takes, as the CLI takes it (ranks placed in order over the trays,
// N / R per rack). inner / outer: hierarchical's algorithms (None keeps the library defaults).
struct RequestArgs {
  std::string op;
  int gpus = 0;
  std::uint64_t bytes = 0;          // nccl-tests' size: make_request runs whole elements (nccl_tests_bytes_of)
  std::string bytes_name = "bytes";  // what an error calls it
  std::string algo = "auto";
  std::uint64_t chunk_bytes = 0;
  pybind11::object inner, outer;  // None or a name
  std::string dtype = "float";
  std::optional<int> root;        // None: rank 0 where the op has a root; given for an op without one: refused
  std::string protocol = "auto";  // NCCL_PROTO
  int channels = 0;               // NCCL_MIN/MAX_NCHANNELS (0: NCCL's choice)
  bool nvls = true;               // NCCL_NVLS_ENABLE
  bool collnet = false;           // NCCL_COLLNET_ENABLE (IB SHARP)
  std::string nccl_version = "2.28";  // the NCCL whose tuner tables decide (CollectiveRequest::nccl_version)
  int ib_qps_per_connection = 0;      // NCCL_IB_QPS_PER_CONNECTION (0: NCCL's default, one)
};
// An int argument in [lo, hi] or None (`if_none`, which `none_means` names in the error): anything else, a bool
// included, raises InputError naming `name` and the value.
int optional_int_arg(const pybind11::handle& value, const std::string& name, int lo, int hi, int if_none,
                     const std::string& none_means);
// Python's bool, or numpy's (numpy.bool_, named numpy.bool from numpy 2), which indexes as an int but is no count.
bool is_a_bool(const pybind11::handle& value);
// None, or a number (an int or a float, not a bool) -> its value; anything else raises InputError naming `name`,
// the value and `allowed` (pybind11's own cast would raise an unnamed RuntimeError). The range is the caller's.
std::optional<double> optional_number_arg(const pybind11::handle& value, const std::string& name, const std::string& allowed);
// None, or a str -> its text; anything else raises InputError naming `name`, the value and `allowed`.
std::optional<std::string> optional_string_arg(const pybind11::handle& value, const std::string& name,
                                               const std::string& allowed);
// channels: None -> 0, else an int in [1, 64].
int channels_arg(const pybind11::handle& value);
CollectiveRequest make_request(const TopologyGraph& graph, const RequestArgs& args);

// JSON text -> Python object (json.loads), so results are exactly the CLI's JSON.
pybind11::object json_loads(const std::string& text);
// A dict from the CLI's JSON writer (sim/results/results_io.hpp).
pybind11::object result_dict(const RunResult& result);

}  // namespace racksim::bindings
