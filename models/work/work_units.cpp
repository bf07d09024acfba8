#include "models/work/work_units.hpp"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/result_wire.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/topo/nvlink_partitions.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

using nlohmann::json;

constexpr const char* kWhere = "work unit";

std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string from_hex(const std::string& text) {
  auto value = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw SimulationError("a work unit's result is not hex text");
  };
  if (text.size() % 2) throw SimulationError("a work unit's result has an odd number of hex digits");
  std::string out(text.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(value(text[2 * i]) * 16 + value(text[2 * i + 1]));
  return out;
}

// ---- collectives ----

json request_json(const CollectiveRequest& r) {
  return {{"op", to_string(r.op)},         {"algorithm", r.algorithm}, {"gpus", r.gpus},
          {"bytes", r.bytes},              {"dtype", r.dtype},         {"chunk_bytes", r.chunk_bytes},
          {"root", r.root},                {"protocol", r.protocol},   {"channels", r.channels},
          {"nvls", r.nvls_enabled}, {"collnet", r.collnet_enabled}, {"ib_qps", r.ib_qps_per_connection},        {"inner", r.inner_algorithm}, {"outer", r.outer_algorithm},
          {"nccl", r.nccl_version}};
}

CollectiveRequest request_from_json(const json& j) {
  CollectiveRequest r;
  r.op = collective_op_from_string(j.at("op").get<std::string>(), kWhere);
  r.algorithm = j.at("algorithm").get<std::string>();
  r.gpus = j.at("gpus").get<std::vector<int>>();
  r.bytes = j.at("bytes").get<std::uint64_t>();
  r.dtype = j.at("dtype").get<std::string>();
  r.chunk_bytes = j.at("chunk_bytes").get<std::uint64_t>();
  r.root = j.at("root").get<int>();
  r.protocol = j.at("protocol").get<std::string>();
  r.channels = j.at("channels").get<int>();
  r.nvls_enabled = j.at("nvls").get<bool>();
  r.collnet_enabled = j.value("collnet", false);
  r.ib_qps_per_connection = j.value("ib_qps", 0);
  r.nccl_version = j.value("nccl", std::string("2.28"));
  r.inner_algorithm = j.at("inner").get<std::string>();
  r.outer_algorithm = j.at("outer").get<std::string>();
  return r;
}

std::string run_collective_unit(const json& u) {
  const TopologySpec spec = topology_from_json_text(u.at("topology").get<std::string>(), kWhere);
  TopologyGraph graph(spec, u.at("racks").get<int>());
  const std::string partitions = u.at("partitions").get<std::string>();
  if (!partitions.empty()) graph.apply_partitions(parse_partitions(partitions, graph, kWhere));
  const Calibration calibration = calibration_from_json_text(u.at("calibration").get<std::string>(), kWhere);
  FailureScenario failures;
  for (const auto& item : u.at("failures")) failures.items.push_back(parse_failure_item(item.get<std::string>()));
  failures.mode = partition_mode_from_string(u.at("partition_mode").get<std::string>(), kWhere);
  const CollectiveRequest request = request_from_json(u.at("request"));
  // As `racksim sweep` and System.sweep: the Simulation checks the failures, then the schedule is built
  // (resolving "auto" with this calibration) and run alone.
  const Simulation simulation(graph, calibration, failures);
  const Schedule schedule = schedule_for_engine(simulation, graph, request, calibration, RunOptions{});  // as the sweep
  const RunResult result = simulation.run(schedule);
  // The wire carries what the engine process computed; the echo of the request (protocol, channels,
  // warnings) is filled in by the Simulation, so it travels beside it.
  return json{{"run", to_hex(encode_run_results({result}))},
              {"protocol", result.protocol},
              {"channels", result.channels},
              {"warnings", result.warnings}}
      .dump();
}

// ---- goodput ----

json goodput_request_json(const GoodputRequest& r) {
  // Only what the trials depend on (numbers); labels and sources stay with the caller.
  const FailureRates& f = r.rates;
  return {{"units", r.units},
          {"trays_per_unit", r.trays_per_unit},
          {"gpus_per_tray", r.gpus_per_tray},
          {"nics_per_tray", r.nics_per_tray},
          {"spare_trays_per_unit", r.spare_trays_per_unit},
          {"hot_spare_units", r.hot_spare_units},
          {"units_per_rack", r.units_per_rack},
          {"switch_trays_per_rack", r.switch_trays_per_rack},
          {"mode", to_string(r.mode)},
          {"adaptive_slowdown", r.adaptive_slowdown},
          {"step_s", r.step_s},
          {"checkpoint_bytes", r.checkpoint_bytes},
          {"storage_Bps", r.storage_Bps},
          {"interval_s", r.interval_s ? json(*r.interval_s) : json()},
          {"restart_s", r.recovery.restart.seconds},
          {"hardware_repair_s", r.recovery.hardware_repair.seconds},
          {"switch_repair_s", r.recovery.switch_repair.seconds},
          {"rates_per_hour",
           {f.gpu.per_hour, f.host.per_hour, f.nic.per_hour, f.network.per_hour, f.software.per_hour, f.nvlink_switch.per_hour}},
          {"work_hours", r.work_hours},
          {"trials", r.trials},
          {"seed", r.seed}};
}

GoodputRequest goodput_request_from_json(const json& j) {
  GoodputRequest r;
  r.units = j.at("units").get<int>();
  r.trays_per_unit = j.at("trays_per_unit").get<int>();
  r.gpus_per_tray = j.at("gpus_per_tray").get<int>();
  r.nics_per_tray = j.at("nics_per_tray").get<int>();
  r.spare_trays_per_unit = j.at("spare_trays_per_unit").get<int>();
  r.hot_spare_units = j.at("hot_spare_units").get<int>();
  r.units_per_rack = j.at("units_per_rack").get<int>();
  r.switch_trays_per_rack = j.at("switch_trays_per_rack").get<int>();
  r.mode = partition_mode_from_string(j.at("mode").get<std::string>(), kWhere);
  r.adaptive_slowdown = j.at("adaptive_slowdown").get<double>();
  r.step_s = j.at("step_s").get<double>();
  r.checkpoint_bytes = j.at("checkpoint_bytes").get<double>();
  r.storage_Bps = j.at("storage_Bps").get<double>();
  if (!j.at("interval_s").is_null()) r.interval_s = j.at("interval_s").get<double>();
  r.recovery.restart.seconds = j.at("restart_s").get<double>();
  r.recovery.hardware_repair.seconds = j.at("hardware_repair_s").get<double>();
  r.recovery.switch_repair.seconds = j.at("switch_repair_s").get<double>();
  const auto rates = j.at("rates_per_hour").get<std::vector<double>>();
  if (rates.size() != 6) throw InputError(kWhere, "/request/rates_per_hour", std::to_string(rates.size()) + " rates", "6");
  Rate* slots[6] = {&r.rates.gpu, &r.rates.host, &r.rates.nic, &r.rates.network, &r.rates.software, &r.rates.nvlink_switch};
  for (int i = 0; i < 6; ++i) slots[i]->per_hour = rates[i];
  r.work_hours = j.at("work_hours").get<double>();
  r.trials = j.at("trials").get<int>();
  r.seed = j.at("seed").get<std::uint64_t>();
  return r;
}

constexpr std::size_t kTrialDoubles = 1 + kGoodputCauses + 5;

std::string run_goodput_unit(const json& u) {
  const GoodputRequest r = goodput_request_from_json(u.at("request"));
  const std::vector<GoodputTrial> trials = goodput_trials(r, u.at("begin").get<int>(), u.at("end").get<int>());
  std::string bytes(trials.size() * kTrialDoubles * sizeof(double), '\0');
  char* p = bytes.data();
  for (const GoodputTrial& t : trials) {
    double v[kTrialDoubles] = {t.wall_s};
    std::copy(std::begin(t.events), std::end(t.events), v + 1);
    double* rest = v + 1 + kGoodputCauses;
    rest[0] = t.rework_s, rest[1] = t.restart_s, rest[2] = t.wait_s, rest[3] = t.checkpoint_s, rest[4] = t.slow_s;
    std::memcpy(p, v, sizeof v);
    p += sizeof v;
  }
  return to_hex(bytes);
}

}  // namespace

std::vector<std::string> collective_units(const TopologyGraph& graph, const Calibration& calibration,
                                          const FailureScenario& failures, const std::vector<CollectiveRequest>& requests) {
  // What the engine server receives too (sim/engine/simulation.cpp): the platform as text.
  json base = {{"kind", "collective"},
               {"topology", topology_to_json_text(graph.spec())},
               {"racks", graph.racks()},
               {"partitions", graph.partitioned() ? graph.partitioning().spec : std::string()},
               {"calibration", calibration_to_json_text(calibration)},
               {"partition_mode", to_string(failures.mode)}};
  base["failures"] = json::array();
  for (const auto& item : failures.items) base["failures"].push_back(item.text);
  std::vector<std::string> units;
  for (const auto& r : requests) {
    json u = base;
    u["request"] = request_json(r);
    units.push_back(u.dump());
  }
  return units;
}

std::vector<RunResult> collective_unit_results(const std::vector<std::string>& results) {
  std::vector<RunResult> out;
  for (const auto& text : results) {
    json j;
    try {
      j = json::parse(text);
      std::vector<RunResult> one = decode_run_results(from_hex(j.at("run").get<std::string>()));
      if (one.size() != 1) throw SimulationError("a collective work unit's result holds " + std::to_string(one.size()) + " runs");
      one.front().protocol = j.at("protocol").get<std::string>();
      one.front().channels = j.at("channels").get<int>();
      one.front().warnings = j.at("warnings").get<std::vector<std::string>>();
      out.push_back(std::move(one.front()));
    } catch (const json::exception& e) {
      throw SimulationError(std::string("a collective work unit's result is not one: ") + e.what());
    }
  }
  return out;
}

std::vector<std::string> goodput_units(const std::vector<GoodputRequest>& requests, int trials_per_unit) {
  std::vector<std::string> units;
  for (const auto& r : requests) {
    const int per = trials_per_unit > 0 ? trials_per_unit : std::max(1, (r.trials + 31) / 32);
    const json request = goodput_request_json(r);
    for (int begin = 0; begin < r.trials; begin += per)
      units.push_back(json{{"kind", "goodput_trials"}, {"request", request}, {"begin", begin}, {"end", std::min(r.trials, begin + per)}}.dump());
  }
  return units;
}

std::vector<GoodputResult> goodput_unit_results(const std::vector<GoodputRequest>& requests,
                                                const std::vector<std::string>& results) {
  std::vector<GoodputTrial> trials;
  for (const auto& text : results) {
    const std::string bytes = from_hex(text);
    if (bytes.size() % (kTrialDoubles * sizeof(double))) throw SimulationError("a goodput work unit's result is cut short");
    for (std::size_t at = 0; at < bytes.size(); at += kTrialDoubles * sizeof(double)) {
      double v[kTrialDoubles];
      std::memcpy(v, bytes.data() + at, sizeof v);
      GoodputTrial t;
      t.wall_s = v[0];
      std::copy(v + 1, v + 1 + kGoodputCauses, t.events);
      const double* rest = v + 1 + kGoodputCauses;
      t.rework_s = rest[0], t.restart_s = rest[1], t.wait_s = rest[2], t.checkpoint_s = rest[3], t.slow_s = rest[4];
      trials.push_back(t);
    }
  }
  std::vector<GoodputResult> out;
  std::size_t at = 0;
  for (const auto& r : requests) {
    if (at + r.trials > trials.size()) throw SimulationError("goodput work units returned too few trials");
    const std::vector<GoodputTrial> mine(trials.begin() + at, trials.begin() + at + r.trials);
    at += r.trials;
    out.push_back(run_goodput(r, &mine));
  }
  if (at != trials.size()) throw SimulationError("goodput work units returned too many trials");
  return out;
}

std::string run_work_unit(const std::string& unit) {
  json u;
  try {
    u = json::parse(unit);
  } catch (const json::parse_error& e) {
    throw InputError(kWhere, "", "text that is not JSON", "a unit made by collective_units or goodput_units");
  }
  try {
    const std::string kind = u.is_object() && u.contains("kind") && u["kind"].is_string() ? u["kind"].get<std::string>() : "";
    if (kind == "collective") return run_collective_unit(u);
    if (kind == "goodput_trials") return run_goodput_unit(u);
    throw InputError(kWhere, "/kind", "'" + one_line(kind) + "'", "collective or goodput_trials");
  } catch (const json::exception& e) {
    throw InputError(kWhere, "", one_line(e.what()), "a unit made by collective_units or goodput_units");
  }
}

}  // namespace racksim
