// p2p_bandwidth.cu: GPU-to-GPU copy bandwidth and latency between every ordered pair of devices.
//
// For each ordered pair (src, dst), src != dst: peer access is enabled both ways where
// cudaDeviceCanAccessPeer says so (else the copy is staged by the driver through host memory and the
// record says peer_access=false). Per size: cudaMemcpyPeerAsync on a stream of the source device,
//   mode "unidirectional": src -> dst alone; bytes = size of the one copy;
//   mode "bidirectional":  src -> dst and dst -> src at once on two streams; bytes = 2 x size (both
//                          directions together), time = from the start of both to the end of both.
// `warmup` untimed rounds, then `iters` timed rounds (CUDA events), median reported.
// At the end, one {"record":"p2p_matrix",...} per mode with GBps at the largest size.
// With fewer than 2 GPUs: header + {"record":"skipped","reason":"needs 2 or more GPUs, found 1",...}, exit 0.
//
// Usage: p2p_bandwidth [--min-bytes 4K] [--max-bytes 256M] [--step 2|4] [--iters 20] [--warmup 3]
//                      [--no-bidirectional]
#define PROBE_NAME "p2p_bandwidth"
#include "probe_common.h"

namespace {

const char* kUsage =
    "p2p_bandwidth [--min-bytes 4K] [--max-bytes 256M] [--step 2|4] [--iters 20] [--warmup 3] [--no-bidirectional]";

struct Opts {
  unsigned long long min_bytes = 4ull << 10, max_bytes = 256ull << 20;
  long long step = 4, iters = 20, warmup = 3;
  bool bidir = true;
};

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&](bool ok) {
      if (!ok) probe::bad_args(PROBE_NAME, "bad or missing value for " + a, kUsage);
      ++i;
    };
    if (a == "--help" || a == "-h") {
      std::printf("usage: %s\n", kUsage);
      std::exit(0);
    } else if (a == "--min-bytes") need(probe::parse_bytes(v, &o.min_bytes) && o.min_bytes > 0);
    else if (a == "--max-bytes") need(probe::parse_bytes(v, &o.max_bytes) && o.max_bytes > 0);
    else if (a == "--step") need(probe::parse_int(v, 2, 4, &o.step) && o.step != 3);
    else if (a == "--iters") need(probe::parse_int(v, 1, 100000, &o.iters));
    else if (a == "--warmup") need(probe::parse_int(v, 0, 100000, &o.warmup));
    else if (a == "--no-bidirectional") o.bidir = false;
    else probe::bad_args(PROBE_NAME, "unknown argument '" + a + "'", kUsage);
  }
  if (o.min_bytes > o.max_bytes) probe::bad_args(PROBE_NAME, "--min-bytes is larger than --max-bytes", kUsage);
  return o;
}

struct Dev {
  void* a = nullptr;  // source buffer
  void* b = nullptr;  // destination buffer
  cudaStream_t s{};
  cudaEvent_t e0{}, e1{};
};

}  // namespace

int main(int argc, char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  Opts o = parse(argc, argv);
  probe::Env env = probe::query_env();
  probe::skip_if_no_gpu(PROBE_NAME, env);

  probe::Rec extra("x");
  extra.u64("min_bytes", o.min_bytes).u64("max_bytes", o.max_bytes).i64("step", o.step).i64("iters", o.iters)
      .i64("warmup", o.warmup).str("timing", "cudaEvent pair per round on the source device, median");
  probe::print_header(PROBE_NAME, env, 0, &extra);

  const int n = env.device_count;
  if (n < 2) {
    std::string why = "needs 2 or more GPUs, found " + std::to_string(n);
    probe::Rec("skipped").str("reason", why).str("scope", "probe").str("probe", PROBE_NAME).print();
    std::fprintf(stderr, "%s: skipped: %s\n", PROBE_NAME, why.c_str());
    return 0;
  }

  std::vector<Dev> d(n);
  std::vector<std::vector<int>> can(n, std::vector<int>(n, 0));
  for (int i = 0; i < n; ++i) {
    PROBE_CHECK(cudaSetDevice(i));
    PROBE_CHECK(cudaMalloc(&d[i].a, o.max_bytes));
    PROBE_CHECK(cudaMalloc(&d[i].b, o.max_bytes));
    PROBE_CHECK(cudaMemset(d[i].a, 0x11 * (i + 1), o.max_bytes));
    PROBE_CHECK(cudaStreamCreateWithFlags(&d[i].s, cudaStreamNonBlocking));
    PROBE_CHECK(cudaEventCreate(&d[i].e0));
    PROBE_CHECK(cudaEventCreate(&d[i].e1));
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      PROBE_CHECK(cudaDeviceCanAccessPeer(&can[i][j], i, j));
      if (can[i][j]) {
        PROBE_CHECK(cudaSetDevice(i));
        cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
        else if (e != cudaSuccess) probe::fail_cuda(PROBE_NAME, "cudaDeviceEnablePeerAccess", e, __FILE__, __LINE__);
      }
      probe::Rec("peer_access").i64("src", i).i64("dst", j).boolean("can_access_peer", can[i][j] != 0).print();
    }

  auto sizes = probe::sweep(o.min_bytes, o.max_bytes, static_cast<unsigned>(o.step));
  std::vector<std::vector<double>> uni(n, std::vector<double>(n, NAN)), bi(n, std::vector<double>(n, NAN));

  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      for (int mode = 0; mode < (o.bidir ? 2 : 1); ++mode) {
        if (mode == 1 && j < i) continue;  // bidirectional is symmetric: measure each unordered pair once
        for (unsigned long long bytes : sizes) {
          auto round = [&]() {
            PROBE_CHECK(cudaSetDevice(i));
            PROBE_CHECK(cudaEventRecord(d[i].e0, d[i].s));
            if (mode == 1) {
              // make j's stream start after i's start event, so both copies start together
              PROBE_CHECK(cudaStreamWaitEvent(d[j].s, d[i].e0, 0));
            }
            PROBE_CHECK(cudaMemcpyPeerAsync(d[j].b, j, d[i].a, i, bytes, d[i].s));
            if (mode == 1) {
              PROBE_CHECK(cudaSetDevice(j));
              PROBE_CHECK(cudaMemcpyPeerAsync(d[i].b, i, d[j].a, j, bytes, d[j].s));
              PROBE_CHECK(cudaEventRecord(d[j].e1, d[j].s));
              PROBE_CHECK(cudaSetDevice(i));
              PROBE_CHECK(cudaStreamWaitEvent(d[i].s, d[j].e1, 0));
            }
            PROBE_CHECK(cudaEventRecord(d[i].e1, d[i].s));
            PROBE_CHECK(cudaEventSynchronize(d[i].e1));
            float ms = 0;
            PROBE_CHECK(cudaEventElapsedTime(&ms, d[i].e0, d[i].e1));
            return ms * 1e3;
          };
          for (long long w = 0; w < o.warmup; ++w) round();
          std::vector<double> t;
          for (long long it = 0; it < o.iters; ++it) t.push_back(round());
          double med = probe::median(t);
          double moved = mode == 1 ? 2.0 * bytes : 1.0 * bytes;
          double bw = probe::gbps(moved, med);
          probe::Rec("p2p").i64("src", i).i64("dst", j).str("mode", mode ? "bidirectional" : "unidirectional")
              .boolean("peer_access", can[i][j] != 0).u64("bytes", static_cast<unsigned long long>(moved))
              .u64("bytes_per_direction", bytes)
              .num("time_us", med, 3).num("time_min_us", probe::vmin(t), 3).num("time_max_us", probe::vmax(t), 3)
              .num("GBps", bw, 3).i64("iters", o.iters).print();
          if (bytes == sizes.back()) {
            (mode ? bi : uni)[i][j] = bw;
            if (mode) bi[j][i] = bw;
          }
        }
      }
    }

  for (int mode = 0; mode < (o.bidir ? 2 : 1); ++mode) {
    std::string m = "[";
    for (int i = 0; i < n; ++i) {
      m += i ? ",[" : "[";
      for (int j = 0; j < n; ++j) {
        double v = (mode ? bi : uni)[i][j];
        char b[32];
        if (std::isfinite(v)) std::snprintf(b, sizeof b, "%.3f", v);
        else std::snprintf(b, sizeof b, "null");
        m += (j ? "," : "") + std::string(b);
      }
      m += "]";
    }
    m += "]";
    probe::Rec("p2p_matrix").str("mode", mode ? "bidirectional" : "unidirectional")
        .u64("bytes_per_direction", sizes.back()).raw("GBps", m).print();
  }

  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaFree(d[i].a);
    cudaFree(d[i].b);
  }
  probe::print_end(PROBE_NAME, t0);
  return 0;
}
