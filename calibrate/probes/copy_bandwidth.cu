// copy_bandwidth.cu: copy-engine bandwidth and latency (cudaMemcpyAsync timed with CUDA events).
//
// Directions and host memory kinds, each swept over sizes:
//   h2d pinned (cudaHostAlloc), h2d pageable (malloc), d2h pinned, d2h pageable, d2d (same device).
// Per size: `warmup` untimed copies, then `iters` timed copies, each bracketed by its own event pair
// on one stream; the median is reported (min and max too), plus the median host wall time from just
// before the cudaMemcpyAsync call to the end of cudaStreamSynchronize.
//
// Usage: copy_bandwidth [--min-bytes 4K] [--max-bytes 1G] [--step 2|4] [--iters 20] [--warmup 3] [--device 0]
#define PROBE_NAME "copy_bandwidth"
#include "probe_common.h"

namespace {

const char* kUsage =
    "copy_bandwidth [--min-bytes 4K] [--max-bytes 1G] [--step 2|4] [--iters 20] [--warmup 3] [--device 0]";

struct Opts {
  unsigned long long min_bytes = 4ull << 10;
  unsigned long long max_bytes = 1ull << 30;
  long long step = 2;
  long long iters = 20;
  long long warmup = 3;
  long long device = 0;
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
    else if (a == "--device") need(probe::parse_int(v, 0, 1 << 20, &o.device));
    else probe::bad_args(PROBE_NAME, "unknown argument '" + a + "'", kUsage);
  }
  if (o.min_bytes > o.max_bytes) probe::bad_args(PROBE_NAME, "--min-bytes is larger than --max-bytes", kUsage);
  return o;
}

struct Mode {
  const char* direction;    // h2d | d2h | d2d
  const char* host_memory;  // pinned | pageable | device
};

}  // namespace

int main(int argc, char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  Opts o = parse(argc, argv);
  probe::Env env = probe::query_env();
  const int dev = probe::open_device(PROBE_NAME, env, o.device, kUsage);

  probe::Rec extra("x");
  extra.u64("min_bytes", o.min_bytes).u64("max_bytes", o.max_bytes).i64("step", o.step).i64("iters", o.iters)
      .i64("warmup", o.warmup).str("timing", "cudaEvent pair per copy, median");
  probe::print_header(PROBE_NAME, env, dev, &extra);

  const size_t maxb = o.max_bytes;
  void *d_a = nullptr, *d_b = nullptr, *h_pinned = nullptr;
  PROBE_CHECK(cudaMalloc(&d_a, maxb));
  PROBE_CHECK(cudaMalloc(&d_b, maxb));
  PROBE_CHECK(cudaHostAlloc(&h_pinned, maxb, cudaHostAllocDefault));
  void* h_pageable = std::malloc(maxb);
  if (!h_pageable) {
    probe::Rec("error").str("probe", PROBE_NAME).str("where", "malloc").str("error", "out of host memory")
        .u64("bytes", maxb).print();
    std::fprintf(stderr, "%s: malloc(%zu) failed\n", PROBE_NAME, maxb);
    return 1;
  }
  // Non-zero contents; touching every page keeps first-touch faults out of the timings.
  std::memset(h_pageable, 0x5a, maxb);
  std::memset(h_pinned, 0xa5, maxb);
  PROBE_CHECK(cudaMemset(d_a, 0x3c, maxb));
  PROBE_CHECK(cudaMemset(d_b, 0xc3, maxb));

  cudaStream_t s;
  PROBE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  PROBE_CHECK(cudaEventCreate(&e0));
  PROBE_CHECK(cudaEventCreate(&e1));

  // Resolution/overhead of an empty event pair: a floor for the small-copy latencies below.
  {
    std::vector<double> t;
    for (int i = 0; i < 50; ++i) {
      PROBE_CHECK(cudaEventRecord(e0, s));
      PROBE_CHECK(cudaEventRecord(e1, s));
      PROBE_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      PROBE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 5) t.push_back(ms * 1e3);
    }
    probe::Rec("timer").str("what", "empty cudaEvent pair").num("time_us", probe::median(t), 3)
        .i64("iters", static_cast<long long>(t.size())).print();
  }

  const Mode modes[] = {{"h2d", "pinned"}, {"h2d", "pageable"}, {"d2h", "pinned"}, {"d2h", "pageable"},
                        {"d2d", "device"}};
  auto sizes = probe::sweep(o.min_bytes, o.max_bytes, static_cast<unsigned>(o.step));

  for (const Mode& m : modes) {
    void *dst = nullptr, *src = nullptr;
    cudaMemcpyKind kind = cudaMemcpyDefault;
    std::string dir = m.direction, hm = m.host_memory;
    void* host = hm == "pinned" ? h_pinned : h_pageable;
    if (dir == "h2d") { dst = d_a; src = host; kind = cudaMemcpyHostToDevice; }
    else if (dir == "d2h") { dst = host; src = d_a; kind = cudaMemcpyDeviceToHost; }
    else { dst = d_b; src = d_a; kind = cudaMemcpyDeviceToDevice; }

    for (unsigned long long bytes : sizes) {
      for (long long w = 0; w < o.warmup; ++w) PROBE_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
      PROBE_CHECK(cudaStreamSynchronize(s));
      std::vector<double> t, wall;
      for (long long it = 0; it < o.iters; ++it) {
        auto w0 = std::chrono::steady_clock::now();
        PROBE_CHECK(cudaEventRecord(e0, s));
        PROBE_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
        PROBE_CHECK(cudaEventRecord(e1, s));
        PROBE_CHECK(cudaStreamSynchronize(s));
        auto w1 = std::chrono::steady_clock::now();
        float ms = 0;
        PROBE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1e3);
        wall.push_back(std::chrono::duration<double, std::micro>(w1 - w0).count());
      }
      double med = probe::median(t), wmed = probe::median(wall);
      probe::Rec r("copy");
      r.str("direction", dir).str("host_memory", hm).u64("bytes", bytes)
          .num("time_us", med, 3).num("time_min_us", probe::vmin(t), 3).num("time_max_us", probe::vmax(t), 3)
          .num("GBps", probe::gbps(bytes, med), 3)
          .num("wall_us", wmed, 3).num("wall_GBps", probe::gbps(bytes, wmed), 3)
          .i64("iters", o.iters);
      if (dir == "d2d") r.num("memory_traffic_GBps", probe::gbps(2.0 * bytes, med), 3);
      r.print();
    }
    std::fprintf(stderr, "%s: %s %s done\n", PROBE_NAME, m.direction, m.host_memory);
  }

  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(s);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFreeHost(h_pinned);
  std::free(h_pageable);
  probe::print_end(PROBE_NAME, t0);
  return 0;
}
