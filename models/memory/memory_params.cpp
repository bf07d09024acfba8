#include "models/memory/memory_params.hpp"

#include "sim/core/errors.hpp"

namespace racksim::memory {

const char* to_string(MemoryMode mode) { return mode == MemoryMode::numa ? "numa" : "cdmm"; }

MemoryMode memory_mode_from_string(const std::string& text, const std::string& where) {
  if (text == "numa") return MemoryMode::numa;
  if (text == "cdmm" || text == "driver") return MemoryMode::cdmm;
  throw InputError(where, "", "'" + text + "'", "numa or cdmm (driver)");
}

const char* to_string(ThpSetting thp) {
  switch (thp) {
    case ThpSetting::never: return "never";
    case ThpSetting::madvise: return "madvise";
    case ThpSetting::always: return "always";
  }
  return "?";
}

ThpSetting thp_from_string(const std::string& text, const std::string& where) {
  if (text == "never") return ThpSetting::never;
  if (text == "madvise") return ThpSetting::madvise;
  if (text == "always") return ThpSetting::always;
  throw InputError(where, "", "'" + text + "'", "never, madvise or always");
}

TuningSettings TuningSettings::untuned() { return TuningSettings{}; }

TuningSettings TuningSettings::guide(std::uint64_t tray_gpu_memory_bytes) {
  TuningSettings t;
  t.page_size_bytes = 65536;
  t.thp_pmd = ThpSetting::never;
  t.mthp_2m = true;
  t.init_on_alloc = false;
  t.numa_balancing = false;
  t.compaction_proactiveness = 0;
  t.swap_bytes = tray_gpu_memory_bytes / 4;
  t.iommu_passthrough = true;
  t.cpufreq_performance = true;
  return t;
}

}  // namespace racksim::memory
