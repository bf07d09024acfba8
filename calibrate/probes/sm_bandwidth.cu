// sm_bandwidth.cu: bandwidth of SMs streaming memory themselves (no copy engine).
//
// A grid-stride kernel with 16-byte (int4) accesses, 4 independent loads in flight per thread,
// a full-occupancy grid, XOR-reducing into one int4 per thread written to a sink (so no load is dead):
//   memory "hbm":              cudaMalloc'd device memory, op read and op write, sizes 64 MiB .. 4 GiB
//   memory "pinned_zero_copy": cudaHostAlloc(cudaHostAllocMapped) host memory read through its device
//                              pointer (op read and op write), sizes 16 MiB .. 1 GiB
//   memory "pageable":         plain malloc'd memory read directly by the kernel, only when the device
//                              reports cudaDevAttrPageableMemoryAccess=1 (else a skipped record says why).
//                              Before every timed read the host rewrites the buffer, so pages that HMM
//                              migrated to the GPU go back to the host: the time includes faults and
//                              migration, which is what a cold GPU access to malloc'd memory costs.
//                              At most 5 timed launches a size (1 warm-up); sizes stop growing once a
//                              launch takes over 1 s.
// Per size: `warmup` untimed launches (the first one's time is reported as first_time_us), then `iters`
// launches each timed with a CUDA event pair; the median is reported.
//
// Usage: sm_bandwidth [--min-bytes 64M] [--max-bytes 4G] [--host-min-bytes 16M] [--host-max-bytes 1G]
//                     [--pageable-max-bytes 256M] [--step 2|4] [--iters 10] [--warmup 2] [--device 0]
#define PROBE_NAME "sm_bandwidth"
#include "probe_common.h"

namespace {

const char* kUsage =
    "sm_bandwidth [--min-bytes 64M] [--max-bytes 4G] [--host-min-bytes 16M] [--host-max-bytes 1G] "
    "[--pageable-max-bytes 256M] [--step 2|4] [--iters 10] [--warmup 2] [--device 0]";

constexpr int kThreads = 256;

__global__ void read_kernel(const int4* __restrict__ p, size_t n, int4* __restrict__ sink) {
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  int4 acc = make_int4(0, 0, 0, 0);
  size_t i = tid;
  for (; i + 3 * stride < n; i += 4 * stride) {
    int4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc.x ^= a.x ^ b.x ^ c.x ^ d.x;
    acc.y ^= a.y ^ b.y ^ c.y ^ d.y;
    acc.z ^= a.z ^ b.z ^ c.z ^ d.z;
    acc.w ^= a.w ^ b.w ^ c.w ^ d.w;
  }
  for (; i < n; i += stride) {
    int4 a = p[i];
    acc.x ^= a.x; acc.y ^= a.y; acc.z ^= a.z; acc.w ^= a.w;
  }
  sink[tid] = acc;
}

__global__ void write_kernel(int4* __restrict__ p, size_t n, int seed) {
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const int4 v = make_int4(seed, seed ^ 0x55555555, seed + 1, ~seed);
  size_t i = tid;
  for (; i + 3 * stride < n; i += 4 * stride) {
    p[i] = v; p[i + stride] = v; p[i + 2 * stride] = v; p[i + 3 * stride] = v;
  }
  for (; i < n; i += stride) p[i] = v;
}

struct Opts {
  unsigned long long min_bytes = 64ull << 20, max_bytes = 4ull << 30;
  unsigned long long host_min_bytes = 16ull << 20, host_max_bytes = 1ull << 30;
  unsigned long long pageable_max_bytes = 256ull << 20;
  long long step = 2, iters = 10, warmup = 2, device = 0;
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
    auto bytes16 = [&](unsigned long long* dst) { return probe::parse_bytes(v, dst) && *dst >= 16; };
    if (a == "--help" || a == "-h") {
      std::printf("usage: %s\n", kUsage);
      std::exit(0);
    } else if (a == "--min-bytes") need(bytes16(&o.min_bytes));
    else if (a == "--max-bytes") need(bytes16(&o.max_bytes));
    else if (a == "--host-min-bytes") need(bytes16(&o.host_min_bytes));
    else if (a == "--host-max-bytes") need(bytes16(&o.host_max_bytes));
    else if (a == "--pageable-max-bytes") need(bytes16(&o.pageable_max_bytes));
    else if (a == "--step") need(probe::parse_int(v, 2, 4, &o.step) && o.step != 3);
    else if (a == "--iters") need(probe::parse_int(v, 1, 100000, &o.iters));
    else if (a == "--warmup") need(probe::parse_int(v, 1, 100000, &o.warmup));
    else if (a == "--device") need(probe::parse_int(v, 0, 1 << 20, &o.device));
    else probe::bad_args(PROBE_NAME, "unknown argument '" + a + "'", kUsage);
  }
  if (o.min_bytes > o.max_bytes) probe::bad_args(PROBE_NAME, "--min-bytes is larger than --max-bytes", kUsage);
  if (o.host_min_bytes > o.host_max_bytes)
    probe::bad_args(PROBE_NAME, "--host-min-bytes is larger than --host-max-bytes", kUsage);
  return o;
}

struct Ctx {
  int grid = 0;
  int4* sink = nullptr;
  cudaStream_t s{};
  cudaEvent_t e0{}, e1{};
};

double time_launch(Ctx& c, const char* op, void* p, size_t bytes, int seed) {
  size_t n = bytes / 16;
  PROBE_CHECK(cudaEventRecord(c.e0, c.s));
  if (op[0] == 'r') read_kernel<<<c.grid, kThreads, 0, c.s>>>(static_cast<const int4*>(p), n, c.sink);
  else write_kernel<<<c.grid, kThreads, 0, c.s>>>(static_cast<int4*>(p), n, seed);
  PROBE_CHECK(cudaGetLastError());
  PROBE_CHECK(cudaEventRecord(c.e1, c.s));
  PROBE_CHECK(cudaEventSynchronize(c.e1));
  float ms = 0;
  PROBE_CHECK(cudaEventElapsedTime(&ms, c.e0, c.e1));
  return ms * 1e3;
}

// Measures one (memory, op, size); `before_each` runs on the host before every launch (may be null).
template <typename F>
double measure(Ctx& c, const Opts& o, const char* memory, const char* op, void* p, size_t bytes, F before_each,
               bool touch_note) {
  double first = -1;
  for (long long w = 0; w < o.warmup; ++w) {
    before_each();
    double t = time_launch(c, op, p, bytes, static_cast<int>(w));
    if (w == 0) first = t;
  }
  std::vector<double> t;
  for (long long it = 0; it < o.iters; ++it) {
    before_each();
    t.push_back(time_launch(c, op, p, bytes, static_cast<int>(it + 7)));
  }
  double med = probe::median(t);
  probe::Rec r("sm_bandwidth");
  r.str("memory", memory).str("op", op).u64("bytes", bytes)
      .num("time_us", med, 3).num("time_min_us", probe::vmin(t), 3).num("time_max_us", probe::vmax(t), 3)
      .num("GBps", probe::gbps(static_cast<double>(bytes), med), 3)
      .num("first_time_us", first, 3)
      .i64("iters", o.iters).i64("grid_blocks", c.grid).i64("block_threads", kThreads);
  if (touch_note) r.boolean("host_touch_between_iters", true);
  r.print();
  return med;
}

}  // namespace

int main(int argc, char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  Opts o = parse(argc, argv);
  probe::Env env = probe::query_env();
  const int dev = probe::open_device(PROBE_NAME, env, o.device, kUsage);

  int sms = 0, per_sm = 0, pageable = 0, ats = 0;
  PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  PROBE_CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, dev));
  PROBE_CHECK(cudaDeviceGetAttribute(&ats, cudaDevAttrPageableMemoryAccessUsesHostPageTables, dev));
  PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, kThreads, 0));
  int per_sm_w = 0;
  PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_w, write_kernel, kThreads, 0));
  Ctx c;
  c.grid = sms * std::max(1, std::min(per_sm, per_sm_w));

  probe::Rec extra("x");
  extra.u64("min_bytes", o.min_bytes).u64("max_bytes", o.max_bytes).u64("host_min_bytes", o.host_min_bytes)
      .u64("host_max_bytes", o.host_max_bytes).u64("pageable_max_bytes", o.pageable_max_bytes)
      .i64("step", o.step).i64("iters", o.iters).i64("warmup", o.warmup)
      .i64("grid_blocks", c.grid).i64("block_threads", kThreads)
      .i64("pageable_memory_access", pageable).i64("pageable_memory_access_uses_host_page_tables", ats)
      .str("timing", "cudaEvent pair per kernel launch, median");
  probe::print_header(PROBE_NAME, env, dev, &extra);

  PROBE_CHECK(cudaMalloc(&c.sink, static_cast<size_t>(c.grid) * kThreads * sizeof(int4)));
  PROBE_CHECK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  PROBE_CHECK(cudaEventCreate(&c.e0));
  PROBE_CHECK(cudaEventCreate(&c.e1));
  auto nothing = [] {};

  // ---- HBM
  {
    void* d = nullptr;
    PROBE_CHECK(cudaMalloc(&d, o.max_bytes));
    PROBE_CHECK(cudaMemset(d, 0x5a, o.max_bytes));
    for (const char* op : {"read", "write"})
      for (auto b : probe::sweep(o.min_bytes, o.max_bytes, static_cast<unsigned>(o.step)))
        measure(c, o, "hbm", op, d, b, nothing, false);
    PROBE_CHECK(cudaFree(d));
    std::fprintf(stderr, "%s: hbm done\n", PROBE_NAME);
  }

  // ---- pinned host memory read/written by SMs through its mapped device pointer (zero-copy)
  {
    void* h = nullptr;
    void* hd = nullptr;
    PROBE_CHECK(cudaHostAlloc(&h, o.host_max_bytes, cudaHostAllocMapped));
    std::memset(h, 0xa5, o.host_max_bytes);
    PROBE_CHECK(cudaHostGetDevicePointer(&hd, h, 0));
    for (const char* op : {"read", "write"})
      for (auto b : probe::sweep(o.host_min_bytes, o.host_max_bytes, static_cast<unsigned>(o.step)))
        measure(c, o, "pinned_zero_copy", op, hd, b, nothing, false);
    PROBE_CHECK(cudaFreeHost(h));
    std::fprintf(stderr, "%s: pinned_zero_copy done\n", PROBE_NAME);
  }

  // ---- plain malloc'd memory, only where the device can access pageable memory
  if (!pageable) {
    probe::Rec("skipped").str("reason", "device reports no pageable memory access (cudaDevAttrPageableMemoryAccess=0)")
        .str("scope", "measurement").str("memory", "pageable").str("op", "read").print();
    std::fprintf(stderr, "%s: pageable skipped: cudaDevAttrPageableMemoryAccess=0\n", PROBE_NAME);
  } else {
    unsigned long long top = std::min(o.host_max_bytes, o.pageable_max_bytes);
    void* h = std::malloc(top);
    if (!h) {
      probe::Rec("skipped").str("reason", "malloc failed").str("scope", "measurement").str("memory", "pageable")
          .str("op", "read").u64("bytes", top).print();
    } else {
      std::memset(h, 0x3c, top);
      int round = 0;
      // Faults and migrations can be slow: fewer repetitions, and stop growing once a launch takes > 1 s.
      Opts po = o;
      po.iters = std::min<long long>(o.iters, 5);
      po.warmup = 1;
      for (auto b : probe::sweep(std::min(o.host_min_bytes, top), top, static_cast<unsigned>(o.step))) {
        auto touch = [&] { std::memset(h, 0x3c ^ (++round & 0xff), b); };
        double med = measure(c, po, "pageable", "read", h, b, touch, true);
        if (med > 1e6 && b < top) {
          probe::Rec("skipped").str("reason", "previous size took over 1 s a launch").str("scope", "measurement")
              .str("memory", "pageable").str("op", "read").u64("bytes_above", b).print();
          break;
        }
      }
      std::free(h);
    }
    std::fprintf(stderr, "%s: pageable done\n", PROBE_NAME);
  }

  cudaFree(c.sink);
  probe::print_end(PROBE_NAME, t0);
  return 0;
}
