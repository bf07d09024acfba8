// device_attributes.cu: what kind of GPU/host coupling is this? (course M5 drill, section 1 and 4)
//
// For every visible device: one {"record":"attributes",...} (coherence attributes, NUMA, fabric support,
// SM count, memory, L2, bus width, clocks, and a "classification" as the course drill does), then one
// {"record":"mem_create",...} per handle type tried with cuMemCreate (fabric, and posix_fd as a control).
//
// The driver API is reached through cudaGetDriverEntryPointByVersion instead of linking libcuda, so the
// binary still starts (and reports "no CUDA device") on a machine without the NVIDIA driver.
//
// Usage: device_attributes [--device N]   (default: all devices)
#define PROBE_NAME "device_attributes"
#include "probe_common.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <sys/stat.h>
#include <sys/utsname.h>

namespace {

const char* kUsage = "device_attributes [--device N]";

struct Driver {
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
  PFN_cuMemCreate_v10020 cuMemCreate = nullptr;
  PFN_cuMemRelease_v10020 cuMemRelease = nullptr;
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
};

template <typename F>
void load(const char* sym, F* fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaError_t e = cudaGetDriverEntryPointByVersion(sym, &p, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) p = nullptr;
  *fn = reinterpret_cast<F>(p);
}

Driver load_driver() {
  Driver d;
  load("cuDeviceGet", &d.cuDeviceGet);
  load("cuDeviceGetAttribute", &d.cuDeviceGetAttribute);
  load("cuMemGetAllocationGranularity", &d.cuMemGetAllocationGranularity);
  load("cuMemCreate", &d.cuMemCreate);
  load("cuMemRelease", &d.cuMemRelease);
  load("cuGetErrorString", &d.cuGetErrorString);
  load("cuGetErrorName", &d.cuGetErrorName);
  return d;
}

std::string cu_name(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(static_cast<int>(r));
}
std::string cu_string(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  return "unknown error";
}

// "numa" / "driver" from /proc/driver/nvidia/params (CoherentGPUMemoryMode, R580+); "" if absent.
std::string coherent_memory_mode() {
  std::ifstream f("/proc/driver/nvidia/params");
  std::string line;
  while (f && std::getline(f, line)) {
    if (line.find("Coherent") != std::string::npos) {
      size_t c = line.find(':');
      if (c == std::string::npos) return line;
      std::string v = line.substr(c + 1);
      v.erase(0, v.find_first_not_of(" \t\""));
      while (!v.empty() && (v.back() == ' ' || v.back() == '"')) v.pop_back();
      return v;
    }
  }
  return "";
}

bool path_exists(const char* p) {
  struct stat st{};
  return stat(p, &st) == 0;
}

struct RtAttr {
  const char* key;
  cudaDeviceAttr attr;
};

const RtAttr kRtAttrs[] = {
    {"pageable_memory_access", cudaDevAttrPageableMemoryAccess},
    {"pageable_memory_access_uses_host_page_tables", cudaDevAttrPageableMemoryAccessUsesHostPageTables},
    {"host_native_atomic_supported", cudaDevAttrHostNativeAtomicSupported},
    {"concurrent_managed_access", cudaDevAttrConcurrentManagedAccess},
    {"direct_managed_mem_access_from_host", cudaDevAttrDirectManagedMemAccessFromHost},
    {"can_use_host_pointer_for_registered_mem", cudaDevAttrCanUseHostPointerForRegisteredMem},
    {"unified_addressing", cudaDevAttrUnifiedAddressing},
    {"integrated", cudaDevAttrIntegrated},
    {"numa_config", cudaDevAttrNumaConfig},
    {"numa_id", cudaDevAttrNumaId},
    {"host_numa_id", cudaDevAttrHostNumaId},
    {"sm_count", cudaDevAttrMultiProcessorCount},
    {"l2_cache_bytes", cudaDevAttrL2CacheSize},
    {"memory_bus_width_bits", cudaDevAttrGlobalMemoryBusWidth},
    {"clock_rate_khz", cudaDevAttrClockRate},
    {"memory_clock_rate_khz", cudaDevAttrMemoryClockRate},
    {"async_engine_count", cudaDevAttrAsyncEngineCount},
    {"max_shared_memory_per_block_optin_bytes", cudaDevAttrMaxSharedMemoryPerBlockOptin},
    {"max_threads_per_sm", cudaDevAttrMaxThreadsPerMultiProcessor},
    {"gpu_direct_rdma_supported", cudaDevAttrGPUDirectRDMASupported},
    {"memory_pools_supported", cudaDevAttrMemoryPoolsSupported},
};

struct DrvAttr {
  const char* key;
  CUdevice_attribute attr;
};

const DrvAttr kDrvAttrs[] = {
    {"handle_type_fabric_supported", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED},
    {"handle_type_posix_fd_supported", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED},
    {"virtual_memory_management_supported", CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
    {"multicast_supported", CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED},  // read only; never used
    {"host_numa_virtual_memory_management_supported",
     CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
};

// Classification exactly as the course M5 drill does.
const char* classify(int integrated, int pageable, int ats) {
  if (integrated) return "integrated";
  if (!pageable) return "no pageable access";
  if (ats) return "hardware-coherent (ATS)";
  return "HMM (software coherent)";
}

void try_mem_create(const Driver& d, int dev, const char* name, CUmemAllocationHandleType ht) {
  probe::Rec r("mem_create");
  r.i64("device_index", dev).str("handle_type", name);
  if (!d.cuDeviceGet || !d.cuMemCreate || !d.cuMemRelease || !d.cuMemGetAllocationGranularity) {
    r.boolean("ok", false).null("granularity_bytes").null("bytes").str("result", "entry point missing")
        .str("result_string", "cuMemCreate not available from this driver").print();
    return;
  }
  CUdevice cudev = 0;
  d.cuDeviceGet(&cudev, dev);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = cudev;
  prop.requestedHandleTypes = ht;
  size_t gran = 0;
  CUresult g = d.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (g != CUDA_SUCCESS || gran == 0) {
    r.boolean("ok", false).null("granularity_bytes").null("bytes").str("result", cu_name(d, g))
        .str("result_string", "cuMemGetAllocationGranularity: " + cu_string(d, g)).print();
    std::fprintf(stderr, "%s: device %d: cuMemGetAllocationGranularity(%s) failed: %s\n", PROBE_NAME, dev, name,
                 cu_string(d, g).c_str());
    return;
  }
  CUmemGenericAllocationHandle h{};
  CUresult c = d.cuMemCreate(&h, gran, &prop, 0);
  r.boolean("ok", c == CUDA_SUCCESS)
      .u64("granularity_bytes", gran)
      .u64("bytes", gran)
      .str("result", cu_name(d, c))
      .str("result_string", cu_string(d, c));
  r.print();
  if (c == CUDA_SUCCESS) d.cuMemRelease(h);
  else
    std::fprintf(stderr, "%s: device %d: cuMemCreate(%s) failed: %s\n", PROBE_NAME, dev, name, cu_string(d, c).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  long long only_dev = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: %s\n", kUsage);
      return 0;
    } else if (a == "--device" && i + 1 < argc) {
      if (!probe::parse_int(argv[++i], 0, 1 << 20, &only_dev)) probe::bad_args(PROBE_NAME, "bad --device value", kUsage);
    } else {
      probe::bad_args(PROBE_NAME, "unknown or incomplete argument '" + a + "'", kUsage);
    }
  }

  probe::Env env = probe::query_env();
  probe::skip_if_no_gpu(PROBE_NAME, env);
  if (only_dev >= env.device_count)
    probe::bad_args(PROBE_NAME, "--device " + std::to_string(only_dev) + " but only " +
                                    std::to_string(env.device_count) + " device(s)", kUsage);

  // Host facts that go with the attributes.
  struct utsname u{};
  uname(&u);
  std::string cmm = coherent_memory_mode();
  probe::Rec extra("x");
  extra.str("host_arch", u.machine).str("kernel", u.release).i64("host_page_size_bytes", sysconf(_SC_PAGESIZE));
  if (cmm.empty()) extra.null("coherent_memory_mode"); else extra.str("coherent_memory_mode", cmm);
  extra.boolean("imex_channels_present", path_exists("/dev/nvidia-caps-imex-channels"));
  probe::print_header(PROBE_NAME, env, only_dev >= 0 ? static_cast<int>(only_dev) : 0, &extra);

  Driver drv = load_driver();

  for (int dev = 0; dev < env.device_count; ++dev) {
    if (only_dev >= 0 && dev != only_dev) continue;
    PROBE_CHECK(cudaSetDevice(dev));
    PROBE_CHECK(cudaFree(nullptr));  // create the primary context (initializes the driver too)

    cudaDeviceProp prop{};
    PROBE_CHECK(cudaGetDeviceProperties(&prop, dev));
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, dev);
    size_t free_b = 0, total_b = 0;
    PROBE_CHECK(cudaMemGetInfo(&free_b, &total_b));

    probe::Rec r("attributes");
    r.i64("device_index", dev)
        .str("name", prop.name)
        .str("pci_bus_id", bus)
        .str("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor))
        .u64("total_memory_bytes", prop.totalGlobalMem)
        .u64("free_memory_bytes", free_b);

    int integrated = 0, pageable = 0, ats = 0;
    for (const auto& a : kRtAttrs) {
      int v = 0;
      cudaError_t e = cudaDeviceGetAttribute(&v, a.attr, dev);
      if (e != cudaSuccess) {
        cudaGetLastError();
        r.null(a.key);
      } else {
        r.i64(a.key, v);
      }
      if (a.attr == cudaDevAttrIntegrated) integrated = v;
      if (a.attr == cudaDevAttrPageableMemoryAccess) pageable = v;
      if (a.attr == cudaDevAttrPageableMemoryAccessUsesHostPageTables) ats = v;
    }
    for (const auto& a : kDrvAttrs) {
      int v = 0;
      CUdevice cudev = 0;
      if (drv.cuDeviceGet && drv.cuDeviceGetAttribute && drv.cuDeviceGet(&cudev, dev) == CUDA_SUCCESS &&
          drv.cuDeviceGetAttribute(&v, a.attr, cudev) == CUDA_SUCCESS)
        r.i64(a.key, v);
      else
        r.null(a.key);
    }
    // Peak HBM bandwidth implied by the attributes (DDR: 2 transfers per clock). A lead, not a measurement.
    int mclk = 0, bus_w = 0;
    cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&bus_w, cudaDevAttrGlobalMemoryBusWidth, dev);
    if (mclk > 0 && bus_w > 0) r.num("theoretical_memory_GBps", 2.0 * mclk * 1e3 * (bus_w / 8.0) / 1e9, 1);
    else r.null("theoretical_memory_GBps");
    r.str("classification", classify(integrated, pageable, ats));
    r.print();
    std::fprintf(stderr, "%s: device %d (%s): %s\n", PROBE_NAME, dev, prop.name, classify(integrated, pageable, ats));

    try_mem_create(drv, dev, "fabric", CU_MEM_HANDLE_TYPE_FABRIC);
    try_mem_create(drv, dev, "posix_fd", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  }
  probe::print_end(PROBE_NAME, t0);
  return 0;
}
