#include "models/failures/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/core/errors.hpp"

namespace racksim {

namespace {

// Meta's Llama 3 405B run (arXiv:2407.21783, section 3.3.4 and Table 5): 16 384 H100 in 2 048 hosts of 8
// GPUs (one 400 Gb/s NIC per GPU), 54 days, 419 unexpected interruptions by root cause.
constexpr double kLlamaGpus = 16384, kLlamaHosts = 2048, kLlamaNics = 16384, kLlamaHours = 54 * 24;
const char* kLlama = "llama3-table5: The Llama 3 Herd of Models (arXiv:2407.21783), Table 5: 419 unexpected "
                     "interruptions in 54 days on 16 384 H100 (2 048 hosts of 8)";

// splitmix64: a seed per trial from the request's seed, so trials are independent and reproducible.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// xoshiro256** with our own uniform and exponential (std:: distributions differ between library versions,
// which would break byte-identical output).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) s = seed = splitmix64(seed);
  }
  double uniform() {  // [0, 1)
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  double exponential(double rate) { return -std::log1p(-uniform()) / rate; }
  int below(int n) { return std::min(n - 1, static_cast<int>(uniform() * n)); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  std::uint64_t s_[4];
};

enum Cause { kTray, kNic, kNetwork, kSoftware, kSwitch, kCauses };
const char* kCauseNames[kCauses] = {"tray (GPU or host)", "NIC", "scale-out network", "software", "NVLink switch tray"};

struct JobRates {
  double per_s[kCauses] = {};
  double total_s() const {
    double t = 0;
    for (double r : per_s) t += r;
    return t;
  }
};

int racks_of(const GoodputRequest& r) { return (r.units + r.units_per_rack - 1) / r.units_per_rack; }

JobRates job_rates(const GoodputRequest& r) {
  JobRates j;
  const double trays = static_cast<double>(r.units) * r.trays_per_unit, gpus = trays * r.gpus_per_tray;
  j.per_s[kTray] = (r.rates.gpu.per_hour * r.gpus_per_tray + r.rates.host.per_hour) * trays / 3600;
  j.per_s[kNic] = r.rates.nic.per_hour * r.nics_per_tray * trays / 3600;
  j.per_s[kNetwork] = r.rates.network.per_hour * gpus / 3600;
  j.per_s[kSoftware] = r.rates.software.per_hour * gpus / 3600;
  j.per_s[kSwitch] = r.rates.nvlink_switch.per_hour * r.switch_trays_per_rack * racks_of(r) / 3600;
  return j;
}

static_assert(kCauses == kGoodputCauses, "goodput.hpp's cause count");
using Trial = GoodputTrial;

// One whole run. Failures of the job's components arrive as one Poisson process in wall-clock time,
// whatever the job is doing (hardware fails while a job waits too), so that runs with more spares see the
// same failures at the same times (common random numbers) and can only do better. The job runs segments
// of `tau` work plus a `delta` checkpoint; a failure loses the segment in progress and costs a restart
// (which a further failure can interrupt); a failed tray needs a spare tray of its unit, else a hot-spare
// unit, else the job waits for a repair; repaired trays and units come back as spares.
Trial simulate(const GoodputRequest& r, const JobRates& rates, double tau, double delta, int segments, Rng& rng) {
  Trial out;
  const double R = r.recovery.restart.seconds, repair = r.recovery.hardware_repair.seconds;
  const double switch_repair = r.recovery.switch_repair.seconds;
  const double total = rates.total_s();
  const bool adaptive = r.mode == PartitionMode::adaptive_bandwidth;
  std::vector<int> spares(r.units, r.spare_trays_per_unit);
  int pool = r.hot_spare_units;
  std::multimap<double, int> returns;  // time -> unit (a repaired tray back to it) or -1 (a unit to the pool)
  auto settle = [&](double now) {
    while (!returns.empty() && returns.begin()->first <= now) {
      const int u = returns.begin()->second;
      if (u >= 0) ++spares[u]; else ++pool;
      returns.erase(returns.begin());
    }
  };
  // When the job can restart after tray `u` failed at `now`.
  auto need_tray = [&](double now, int u) {
    settle(now);
    if (spares[u] > 0) {
      --spares[u];
      returns.emplace(now + repair, u);
      return now;
    }
    if (pool > 0) {
      --pool;
      returns.emplace(now + repair, -1);  // the failed unit, repaired, joins the pool
      spares[u] = r.spare_trays_per_unit;
      return now;
    }
    returns.emplace(now + repair, u);
    double back = now + repair;  // the first tray of this unit or unit of the pool to come back
    for (const auto& [when, who] : returns)
      if (who == u || who == -1) {
        back = when;
        break;
      }
    settle(back);
    if (spares[u] > 0) --spares[u]; else if (pool > 0) --pool;
    return back;
  };
  auto need_switch = [&](double now) {
    settle(now);
    const int k = std::min(r.units_per_rack, r.units);
    if (pool >= k) {
      pool -= k;
      for (int i = 0; i < k; ++i) returns.emplace(now + switch_repair, -1);
      return now;
    }
    return now + switch_repair;
  };
  enum { kRun, kRestart, kWait } mode = kRun;
  double t = 0, run_start = 0, restart_from = 0, ready = 0, wait_from = 0, wait_until = 0;
  int done = 0;
  double next_failure = total > 0 ? rng.exponential(total) : std::numeric_limits<double>::infinity();
  auto commit = [&](double now) {  // segments finished since run_start; the rest of the time is lost
    const int whole = std::min(segments - done, static_cast<int>(std::floor((now - run_start) / (tau + delta))));
    done += whole;
    out.checkpoint_s += whole * delta;
    return whole;
  };
  auto restart_at = [&](double now) {
    mode = kRestart;
    restart_from = now;
    ready = now + R;
  };
  while (done < segments) {
    const double next = mode == kRun ? run_start + (segments - done) * (tau + delta) : mode == kRestart ? ready : wait_until;
    if (next <= next_failure) {
      t = next;
      if (mode == kRun) {
        out.checkpoint_s += (segments - done) * delta;
        done = segments;
      } else if (mode == kRestart) {
        out.restart_s += ready - restart_from;
        mode = kRun;
        run_start = ready;
      } else {
        out.wait_s += wait_until - wait_from;
        restart_at(wait_until);
      }
      continue;
    }
    const double f = next_failure;
    t = f;
    double pick = rng.uniform() * total;
    int cause = 0;
    while (cause < kCauses - 1 && pick >= rates.per_s[cause]) pick -= rates.per_s[cause++];
    const int unit = rng.below(r.units);
    next_failure = f + rng.exponential(total);
    out.events[cause] += 1;
    if (cause == kSwitch && adaptive) {  // the job keeps running on the remaining NVLinks, slower
      if (mode == kRun) {
        const int whole = commit(f);
        run_start += whole * (tau + delta) + r.adaptive_slowdown * switch_repair;  // the current segment stretches
        out.slow_s += r.adaptive_slowdown * switch_repair;
      }
      continue;
    }
    const bool hardware = cause == kTray || cause == kSwitch;
    if (mode == kWait) {  // not running: only hardware that is still needed matters
      if (hardware) wait_until = std::max(wait_until, cause == kTray ? need_tray(f, unit) : need_switch(f));
      continue;
    }
    if (mode == kRun) {
      const int whole = commit(f);
      out.rework_s += (f - run_start) - whole * (tau + delta);
    } else {
      out.restart_s += f - restart_from;
    }
    const double available = !hardware ? f : cause == kTray ? need_tray(f, unit) : need_switch(f);
    if (available > f) {
      mode = kWait;
      wait_from = f;
      wait_until = available;
    } else {
      restart_at(f);
    }
  }
  out.wall_s = t;
  return out;
}

double poisson_tail(double mean, int k) {  // P(N >= k), N ~ Poisson(mean)
  if (k <= 0) return 1;
  double term = std::exp(-mean), cdf = term;
  for (int i = 1; i < k; ++i) {
    term *= mean / i;
    cdf += term;
  }
  return std::max(0.0, 1 - cdf);
}

}  // namespace

FailureRates FailureRates::llama3() {
  FailureRates f;
  const std::string src = kLlama;
  f.gpu = {268 / (kLlamaGpus * kLlamaHours), src + ": faulty GPU 148, HBM3 72, SRAM 19, GPU system processor 17, "
                                                   "silent data corruption 6, thermal 6, per GPU-hour"};
  f.host = {46 / (kLlamaHosts * kLlamaHours), src + ": host maintenance 32, SSD 3, power supply 3, chassis 2, IO board 2, "
                                                    "CPU 2, system memory 2, per host-hour; assumption: a GB200 compute "
                                                    "tray fails like one such host"};
  f.nic = {7 / (kLlamaNics * kLlamaHours), src + ": NIC 7, per NIC-hour (one NIC per GPU)"};
  f.network = {35 / (kLlamaGpus * kLlamaHours), src + ": network switch/cable 35, per GPU-hour of the job"};
  f.software = {63 / (kLlamaGpus * kLlamaHours), src + ": software bug 54, NCCL watchdog timeouts 7, dependency 2, "
                                                       "per GPU-hour of the job"};
  f.nvlink_switch = {72 * f.network.per_hour / 9,
                     "assumption: a rack's 9 NVLink switch trays fail as often as Llama 3's scale-out switches and "
                     "cables did per 72 GPUs (no public GB200 data)"};
  return f;
}

double daly_interval_s(double write_s, double mtbf_s) {
  if (!(mtbf_s > 0) || !std::isfinite(mtbf_s)) return std::numeric_limits<double>::infinity();
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double x = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - write_s;
}

double restart_only_goodput(double rate_per_s, double interval_s, double write_s, double restart_s) {
  if (!(rate_per_s > 0)) return interval_s / (interval_s + write_s);
  const double expected = std::exp(rate_per_s * restart_s) * std::expm1(rate_per_s * (interval_s + write_s)) / rate_per_s;
  return interval_s / expected;
}

namespace {

// What the Monte Carlo's trials need, computed from the request (and echoed into `out`).
struct RunShape {
  JobRates rates;
  double interrupting = 0, tau = 0, delta = 0, work = 0;
  int segments = 1;
};

RunShape run_shape(const GoodputRequest& r, GoodputResult& out) {
  auto check = [](bool ok, const std::string& what, double value, const std::string& allowed) {
    if (!ok) throw InputError(what, "", number_text(value), allowed);
  };
  check(r.units >= 1 && r.units <= 100000, "units", r.units, "1 to 100000 allocation units");
  check(r.trays_per_unit >= 1 && r.trays_per_unit <= 1024, "trays per unit", r.trays_per_unit, "1 to 1024");
  check(r.gpus_per_tray >= 1 && r.gpus_per_tray <= 64, "GPUs per tray", r.gpus_per_tray, "1 to 64");
  check(r.spare_trays_per_unit >= 0 && r.spare_trays_per_unit <= 1024, "--spare-trays", r.spare_trays_per_unit, "0 to 1024");
  check(r.hot_spare_units >= 0 && r.hot_spare_units <= 100000, "--hot-spares", r.hot_spare_units, "0 to 100000");
  check(r.units_per_rack >= 1, "units per rack", r.units_per_rack, ">= 1");
  check(r.step_s > 0 && r.step_s <= 1e5, "--step-s", r.step_s, "(0, 1e5] seconds");
  check(r.checkpoint_bytes >= 0 && r.checkpoint_bytes <= 1e18, "--checkpoint-bytes", r.checkpoint_bytes, "[0, 1e18] bytes");
  check(r.storage_Bps > 0 && r.storage_Bps <= 1e15, "--storage-GBps", r.storage_Bps / 1e9, "(0, 1e6] GB/s");
  check(r.work_hours > 0 && r.work_hours <= 24 * 365 * 10, "--days", r.work_hours / 24, "(0, 3650] days");
  check(r.trials >= 2 && r.trials <= 100000, "--trials", r.trials, "2 to 100000");
  check(r.adaptive_slowdown >= 0 && r.adaptive_slowdown < 1, "--adaptive-slowdown", r.adaptive_slowdown, "[0, 1)");
  for (const Duration* d : {&r.recovery.restart, &r.recovery.hardware_repair, &r.recovery.switch_repair})
    check(d->seconds >= 0 && d->seconds <= 1e7, "recovery time", d->seconds, "[0, 1e7] seconds");

  out.request = r;
  out.gpus = r.units * r.trays_per_unit * r.gpus_per_tray;
  out.idle_gpus = (r.units * r.spare_trays_per_unit + r.hot_spare_units * (r.trays_per_unit + r.spare_trays_per_unit)) *
                  r.gpus_per_tray;
  const JobRates rates = job_rates(r);
  const bool adaptive = r.mode == PartitionMode::adaptive_bandwidth;
  const double interrupting = rates.total_s() - (adaptive ? rates.per_s[kSwitch] : 0);
  out.failures_per_hour = interrupting * 3600;
  for (int c = 0; c < kCauses; ++c) out.rates_per_hour.emplace_back(kCauseNames[c], rates.per_s[c] * 3600);
  out.mtbf_h = interrupting > 0 ? 1 / interrupting / 3600 : std::numeric_limits<double>::infinity();
  out.checkpoint_write_s = r.checkpoint_bytes / r.storage_Bps;
  const double delta = out.checkpoint_write_s;
  double tau;
  if (r.interval_s) {
    check(*r.interval_s > 0 && *r.interval_s <= 1e7, "--interval-s", *r.interval_s, "(0, 1e7] seconds");
    tau = *r.interval_s;
    out.interval_rule = "given";
  } else {
    tau = daly_interval_s(delta, out.mtbf_h * 3600);
    out.interval_rule = "Daly (2006) optimum for the job's MTBF and the write time";
  }
  tau = std::max(r.step_s, std::round(std::min(tau, r.work_hours * 3600) / r.step_s) * r.step_s);  // whole steps
  out.interval_s = tau;
  const int segments = std::max(1, static_cast<int>(std::ceil(r.work_hours * 3600 / tau)));
  return {rates, interrupting, tau, delta, segments * tau, segments};
}

std::vector<GoodputTrial> simulate_trials(const GoodputRequest& r, const RunShape& shape, int begin, int end) {
  std::vector<GoodputTrial> trials;
  trials.reserve(end - begin);
  for (int i = begin; i < end; ++i) {
    Rng rng(splitmix64(r.seed * 0x100000001B3ULL + static_cast<std::uint64_t>(i)));
    trials.push_back(simulate(r, shape.rates, shape.tau, shape.delta, shape.segments, rng));
  }
  return trials;
}

}  // namespace

std::vector<GoodputTrial> goodput_trials(const GoodputRequest& r, int begin, int end) {
  GoodputResult scratch;
  const RunShape shape = run_shape(r, scratch);
  if (begin < 0 || begin > end || end > r.trials)
    throw InputError("trials", "", std::to_string(begin) + ".." + std::to_string(end),
                     "a range of trial indices within 0.." + std::to_string(r.trials));
  return simulate_trials(r, shape, begin, end);
}

GoodputResult run_goodput(const GoodputRequest& r, const std::vector<GoodputTrial>* given_trials) {
  GoodputResult out;
  const RunShape shape = run_shape(r, out);
  const JobRates& rates = shape.rates;
  const bool adaptive = r.mode == PartitionMode::adaptive_bandwidth;
  const double interrupting = shape.interrupting, tau = shape.tau, delta = shape.delta, work = shape.work;

  // Analytic: Daly's restart-only expectation, exact when nothing waits for hardware. A failure that finds
  // no spare tray in its unit (N ~ Poisson trays of the unit in repair, PASTA) and no hot-spare unit waits
  // for the first repair to finish; that expected wait is added per failure, to first order (failures
  // during a wait are not counted).
  const double R = r.recovery.restart.seconds, repair = r.recovery.hardware_repair.seconds;
  const double per_unit_tray = rates.per_s[kTray] / r.units;
  const double p_no_tray = poisson_tail(per_unit_tray * repair, r.spare_trays_per_unit) *
                           poisson_tail(rates.per_s[kTray] * repair, r.hot_spare_units);
  const double tray_wait = p_no_tray * repair / (r.spare_trays_per_unit + r.hot_spare_units + 1);
  // A lost switch (full-bandwidth mode) stops the units of its rack until repair unless enough hot spares.
  const double switch_wait = r.hot_spare_units >= std::min(r.units_per_rack, r.units) ? 0.0 : r.recovery.switch_repair.seconds;
  double wait_avg = 0;
  if (interrupting > 0)
    wait_avg = (rates.per_s[kTray] * tray_wait + (adaptive ? 0.0 : rates.per_s[kSwitch] * switch_wait)) / interrupting;
  if (interrupting > 0) {
    const double per_segment = std::expm1(interrupting * (tau + delta));  // failures per committed segment
    out.analytic_goodput = tau / (per_segment * (std::exp(interrupting * R) / interrupting + wait_avg));
  } else {
    out.analytic_goodput = tau / (tau + delta);
  }
  if (adaptive) out.analytic_goodput /= 1 + rates.per_s[kSwitch] * r.adaptive_slowdown * r.recovery.switch_repair.seconds;
  out.analytic_note = wait_avg == 0 && !(adaptive && rates.per_s[kSwitch] > 0)
                          ? "exact: every interruption costs a restart (Daly 2006)"
                          : "first order: a restart plus the expected wait of a failure that finds no spare; "
                            "failures during a wait are left out, so with few spares it is optimistic";

  // Monte Carlo.
  std::vector<double> walls, goodputs;
  double events[kCauses] = {}, rework = 0, restart = 0, wait = 0, ckpt = 0, slow = 0;
  if (given_trials && given_trials->size() != static_cast<std::size_t>(r.trials))
    throw SimulationError("goodput: " + std::to_string(given_trials->size()) + " trials given for a request of " +
                          std::to_string(r.trials));
  const std::vector<GoodputTrial> computed = given_trials ? std::vector<GoodputTrial>{} : simulate_trials(r, shape, 0, r.trials);
  for (const Trial& t : given_trials ? *given_trials : computed) {
    walls.push_back(t.wall_s);
    goodputs.push_back(work / t.wall_s);
    for (int c = 0; c < kCauses; ++c) events[c] += t.events[c];
    rework += t.rework_s;
    restart += t.restart_s;
    wait += t.wait_s;
    ckpt += t.checkpoint_s;
    slow += t.slow_s;
  }
  const double n = r.trials;
  double mean = 0, var = 0;
  for (double w : walls) mean += w / n;
  for (double w : walls) var += (w - mean) * (w - mean) / (n - 1);
  out.mean_wall_h = mean / 3600;
  out.mc_goodput = work / mean;
  out.mc_standard_error = work / (mean * mean) * std::sqrt(var / n);
  std::sort(goodputs.begin(), goodputs.end());
  auto pct = [&](double p) { return goodputs[static_cast<std::size_t>(std::floor(p * (n - 1)))]; };
  out.p5 = pct(0.05);
  out.p50 = pct(0.5);
  out.p95 = pct(0.95);
  for (int c = 0; c < kCauses; ++c) out.mean_events.emplace_back(kCauseNames[c], events[c] / n);
  out.lost_hours = {{"rework", rework / n / 3600},     {"restarts", restart / n / 3600}, {"waiting for hardware", wait / n / 3600},
                    {"checkpoint writes", ckpt / n / 3600}, {"running slower", slow / n / 3600}};
  return out;
}

}  // namespace racksim
