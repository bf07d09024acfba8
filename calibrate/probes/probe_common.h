// probe_common.h: shared helpers for the racksim calibration probes.
//
// Every probe is a standalone program that writes JSON lines (one object per line) to stdout.
// Record formats are documented in calibrate/probes/README.md; keep them stable.
//
// Conventions:
//   * first line: {"record":"header",...}; last line of a completed run: {"record":"end",...}
//   * no GPU (cudaGetDeviceCount fails or reports 0): header +
//     {"record":"skipped","reason":"no CUDA device","scope":"probe",...}, one line on stderr, exit 0.
//     A skipped record with "scope":"measurement" marks one part of a run that was left out.
//   * bad arguments: one line on stderr, exit 2
//   * a CUDA error during measurement: {"record":"error",...}, one line on stderr, exit 1
//   * units are in key names: bytes, time_us, GBps (1e9 bytes/s), TFLOPS (1e12 flop/s)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace probe {

// ---------------------------------------------------------------- JSON line builder
inline std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

// Builds one compact JSON object ({"k":v,...}, no spaces) and prints it as one line.
class Rec {
 public:
  explicit Rec(const char* record) { str("record", record); }
  Rec& str(const char* k, const std::string& v) { key(k); s_ += '"' + json_escape(v) + '"'; return *this; }
  Rec& str_or_null(const char* k, const char* v) { return v ? str(k, v) : null(k); }
  Rec& i64(const char* k, long long v) { key(k); s_ += std::to_string(v); return *this; }
  Rec& u64(const char* k, unsigned long long v) { key(k); s_ += std::to_string(v); return *this; }
  Rec& boolean(const char* k, bool v) { key(k); s_ += v ? "true" : "false"; return *this; }
  Rec& null(const char* k) { key(k); s_ += "null"; return *this; }
  // Doubles: up to 6 significant digits after rounding to `decimals` places; NaN/inf become null.
  Rec& num(const char* k, double v, int decimals = 3) {
    key(k);
    if (!std::isfinite(v)) { s_ += "null"; return *this; }
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    s_ += b;
    return *this;
  }
  Rec& raw(const char* k, const std::string& json) { key(k); s_ += json; return *this; }
  std::string text() const { return s_ + "}"; }
  void print() const {
    std::fputs(text().c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

 private:
  void key(const char* k) {
    s_ += first_ ? "{" : ",";
    first_ = false;
    s_ += '"' + json_escape(k) + "\":";
  }
  std::string s_;
  bool first_ = true;
};

// ---------------------------------------------------------------- environment facts
inline std::string hostname() {
  char b[256] = {0};
  if (gethostname(b, sizeof b - 1) != 0) return "unknown";
  return b;
}

inline std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

inline std::string cuda_version_string(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// NVIDIA kernel driver release ("580.159.04") from /proc/driver/nvidia/version; "" if unreadable.
inline std::string nvidia_driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
  size_t pos = 0;
  while (pos < line.size()) {
    size_t b = line.find_first_not_of(' ', pos);
    if (b == std::string::npos) break;
    size_t e = line.find(' ', b);
    std::string tok = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    int dots = 0;
    bool ok = !tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0]));
    for (char c : tok) {
      if (c == '.') ++dots;
      else if (!std::isdigit(static_cast<unsigned char>(c))) ok = false;
    }
    if (ok && dots >= 1) return tok;
    if (e == std::string::npos) break;
    pos = e;
  }
  return "";
}

// ---------------------------------------------------------------- errors and exits
[[noreturn]] inline void fail_cuda(const char* probe_name, const char* what, cudaError_t e,
                                   const char* file, int line) {
  Rec("error")
      .str("probe", probe_name)
      .str("where", what)
      .str("error", cudaGetErrorName(e))
      .str("message", cudaGetErrorString(e))
      .str("source", std::string(file) + ":" + std::to_string(line))
      .print();
  std::fprintf(stderr, "%s: CUDA error in %s: %s (%s) at %s:%d\n", probe_name, what,
               cudaGetErrorString(e), cudaGetErrorName(e), file, line);
  std::exit(1);
}

#define PROBE_CHECK(call)                                                                  \
  do {                                                                                     \
    cudaError_t probe_err_ = (call);                                                       \
    if (probe_err_ != cudaSuccess)                                                         \
      ::probe::fail_cuda(PROBE_NAME, #call, probe_err_, __FILE__, __LINE__);               \
  } while (0)

// Checks the launch and then the execution of the last kernel.
#define PROBE_CHECK_LAUNCH()                                                               \
  do {                                                                                     \
    PROBE_CHECK(cudaGetLastError());                                                       \
  } while (0)

[[noreturn]] inline void bad_args(const char* probe_name, const std::string& msg, const char* usage) {
  std::fprintf(stderr, "%s: %s (usage: %s)\n", probe_name, msg.c_str(), usage);
  std::exit(2);
}

// ---------------------------------------------------------------- header and skip
struct Env {
  int device_count = 0;
  cudaError_t count_err = cudaSuccess;
  int driver_api = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_api = 0;  // cudaRuntimeGetVersion
};

inline Env query_env() {
  Env e;
  cudaDriverGetVersion(&e.driver_api);
  cudaRuntimeGetVersion(&e.runtime_api);
  e.count_err = cudaGetDeviceCount(&e.device_count);
  if (e.count_err != cudaSuccess) {
    e.device_count = 0;
    cudaGetLastError();  // clear the sticky-free error state
  }
  return e;
}

// Header record. With device >= 0 the device's name and properties are included; else they are null.
inline void print_header(const char* probe_name, const Env& env, int device, const Rec* extra_fields = nullptr) {
  Rec r("header");
  r.str("probe", probe_name);
  cudaDeviceProp prop{};
  bool have_dev = device >= 0 && cudaGetDeviceProperties(&prop, device) == cudaSuccess;
  if (have_dev) {
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, device);
    r.str("device", prop.name)
        .i64("device_index", device)
        .i64("device_count", env.device_count)
        .str("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor))
        .str("pci_bus_id", bus);
  } else {
    r.null("device").null("device_index").i64("device_count", env.device_count);
  }
  std::string rel = nvidia_driver_release();
  if (rel.empty()) r.null("driver"); else r.str("driver", rel);
  if (env.driver_api > 0) r.str("cuda_driver", cuda_version_string(env.driver_api)); else r.null("cuda_driver");
  r.str("cuda_runtime", cuda_version_string(env.runtime_api))
      .str("cuda_compiled", cuda_version_string(CUDART_VERSION))
      .str("hostname", hostname())
      .str("date", utc_now_iso());
  std::string s = r.text();
  if (extra_fields) {
    // splice the extra object's fields (without its "record" key) before the closing brace
    std::string x = extra_fields->text();
    size_t comma = x.find(',');
    if (comma != std::string::npos) {
      s.pop_back();
      s += x.substr(comma);
    }
  }
  std::fputs(s.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// If there is no usable GPU: print header + skipped record, one line on stderr, exit 0.
inline void skip_if_no_gpu(const char* probe_name, const Env& env) {
  if (env.count_err == cudaSuccess && env.device_count > 0) return;
  print_header(probe_name, env, -1);
  std::string detail = env.count_err != cudaSuccess
                           ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(env.count_err) + ": " +
                                 cudaGetErrorString(env.count_err)
                           : std::string("cudaGetDeviceCount reported 0 devices");
  Rec("skipped")
      .str("reason", "no CUDA device")
      .str("scope", "probe")
      .str("probe", probe_name)
      .str("detail", detail)
      .print();
  std::fprintf(stderr, "%s: skipped: no CUDA device (%s)\n", probe_name, detail.c_str());
  std::exit(0);
}

// The start every single-device probe shares: exit 0 with a skipped record when there is no GPU, exit 2
// when --device names one that does not exist, else select the device, create its context, return it.
inline int open_device(const char* probe_name, const Env& env, long long device, const char* usage) {
  skip_if_no_gpu(probe_name, env);
  if (device >= env.device_count)
    bad_args(probe_name, "--device " + std::to_string(device) + " but only " + std::to_string(env.device_count) +
                             " device(s)", usage);
  const int dev = static_cast<int>(device);
  PROBE_CHECK(cudaSetDevice(dev));
  PROBE_CHECK(cudaFree(nullptr));
  return dev;
}

inline void print_end(const char* probe_name, std::chrono::steady_clock::time_point t0) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Rec("end").str("probe", probe_name).str("status", "ok").num("elapsed_s", s, 3).print();
}

// ---------------------------------------------------------------- argument parsing
// Parses "4096", "4K", "4KiB", "64M", "1G" (binary multiples). Returns false on bad input.
inline bool parse_bytes(const char* s, unsigned long long* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || s[0] == '-') return false;
  std::string suf(end);
  for (auto& c : suf) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned long long mul = 1;
  if (suf.empty() || suf == "B") mul = 1;
  else if (suf == "K" || suf == "KI" || suf == "KIB" || suf == "KB") mul = 1ull << 10;
  else if (suf == "M" || suf == "MI" || suf == "MIB" || suf == "MB") mul = 1ull << 20;
  else if (suf == "G" || suf == "GI" || suf == "GIB" || suf == "GB") mul = 1ull << 30;
  else return false;
  if (v > (~0ull) / mul) return false;
  *out = v * mul;
  return true;
}

inline bool parse_int(const char* s, long long lo, long long hi, long long* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// Geometric sweep lo, lo*step, ... <= hi (always includes lo; includes hi if hi is reached exactly).
inline std::vector<unsigned long long> sweep(unsigned long long lo, unsigned long long hi, unsigned step) {
  std::vector<unsigned long long> v;
  for (unsigned long long x = lo; x <= hi && x > 0; x *= step) {
    v.push_back(x);
    if (x > hi / step) break;
  }
  return v;
}

// ---------------------------------------------------------------- statistics
inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
inline double vmin(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }
inline double vmax(const std::vector<double>& v) { return v.empty() ? NAN : *std::max_element(v.begin(), v.end()); }

inline double gbps(double bytes, double time_us) { return time_us > 0 ? bytes / (time_us * 1e3) : NAN; }

}  // namespace probe
