// Parsing of allocation requests (NAME:KIND:SIZE[:NODE_OR_POLICY]) and their one-line descriptions.
#include <algorithm>

#include "models/memory/placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim::memory {

const char* to_string(AllocKind kind) {
  switch (kind) {
    case AllocKind::cpu: return "cpu";
    case AllocKind::cuda: return "cuda";
    case AllocKind::managed: return "managed";
    case AllocKind::pinned: return "pinned";
    case AllocKind::egm: return "egm";
  }
  return "?";
}

const char* to_string(CpuPolicy policy) {
  switch (policy) {
    case CpuPolicy::local: return "local";
    case CpuPolicy::preferred: return "preferred";
    case CpuPolicy::bind: return "bind";
    case CpuPolicy::interleave: return "interleave";
  }
  return "?";
}

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::placed: return "placed";
    case Outcome::failed: return "failed";
    case Outcome::oom_killed: return "oom_killed";
  }
  return "?";
}

namespace {

constexpr const char* kSyntax = "NAME:KIND:SIZE[:NODE_OR_POLICY] with KIND cpu, cuda, managed, pinned or egm";

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

class Parser {
 public:
  Parser(const std::string& text, const TrayMemoryModel& tray, const std::string& where)
      : text_(text), tray_(tray), where_(where) {}

  [[noreturn]] void fail(const std::string& part, const std::string& allowed) const {
    throw InputError(where_, "", "'" + part + "' in '" + text_ + "'", allowed);
  }

  int node(const std::string& name) const {
    const int n = tray_.find_node(name);
    if (n < 0) fail(name, "a node of this tray: " + tray_.node_names());
    return n;
  }
  int cpu_node(const std::string& name, const std::string& kind_text) const {
    const int n = node(name);
    if (tray_.node(n).kind != NodeKind::cpu)
      fail(name, kind_text + " takes a CPU node (" + cpu_list() + ")");
    return n;
  }
  int numa_node(const std::string& name) const {
    const int n = node(name);
    if (tray_.node(n).numa_id < 0)
      fail(name, "a NUMA node; " + tray_.node(n).id + " is not one on " + tray_.system() +
                     " (its GPUs are not coherent NUMA nodes): " + cpu_list());
    return n;
  }
  std::string cpu_list() const {
    std::string out;
    for (int c : tray_.cpu_nodes()) out += (out.empty() ? "" : ", ") + tray_.node(c).id;
    return out;
  }
  std::string gpu_list() const {
    std::string out;
    for (int g : tray_.gpu_nodes()) out += (out.empty() ? "" : ", ") + tray_.node(g).id;
    return out.empty() ? "(this tray has no GPU)" : out;
  }

  AllocationRequest parse() const {
    const auto fields = split(text_, ':');
    if (fields.size() < 3 || fields.size() > 4) fail(text_, kSyntax);
    AllocationRequest r;
    r.text = text_;
    r.name = fields[0];
    if (r.name.empty() || r.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos)
      fail(r.name, "a NAME of letters, digits, '_', '.', '-'");
    const std::string& kind = fields[1];
    if (kind == "cpu") r.kind = AllocKind::cpu;
    else if (kind == "cuda") r.kind = AllocKind::cuda;
    else if (kind == "managed") r.kind = AllocKind::managed;
    else if (kind == "pinned") r.kind = AllocKind::pinned;
    else if (kind == "egm") r.kind = AllocKind::egm;
    else fail(kind, "KIND cpu (malloc/mmap), cuda (cudaMalloc), managed (cudaMallocManaged), pinned (cudaHostAlloc) or egm (cuMemCreate on a host NUMA node)");
    const std::string& size = fields[2];
    if (!size.empty() && size[0] == '-') fail(size, "a positive SIZE such as 1100GB, 64GiB or 512M (negative sizes are not allowed)");
    try {
      r.bytes = units::parse_bytes(size, where_);
    } catch (const InputError&) {
      fail(size, "a positive SIZE such as 1100GB, 64GiB or 512M");
    }
    if (r.bytes == 0) fail(size, "a positive SIZE (> 0 bytes)");
    const std::string arg = fields.size() == 4 ? fields[3] : "";
    const int first_cpu = tray_.cpu_nodes().at(0);
    switch (r.kind) {
      case AllocKind::cpu: parse_cpu_policy(arg, r, first_cpu); break;
      case AllocKind::cuda: {
        if (arg.empty()) fail(text_, "cuda needs a GPU as its 4th field: NAME:cuda:SIZE:gpuN (" + gpu_list() + ")");
        const int n = arg.find_first_of("=,@") == std::string::npos ? node(arg) : -1;
        if (n < 0 || tray_.node(n).kind != NodeKind::gpu) fail(arg, "cuda takes a GPU (" + gpu_list() + "), not a policy or CPU node");
        r.toucher = n;
        break;
      }
      case AllocKind::managed: {
        if (arg.find('=') != std::string::npos || arg.find(',') != std::string::npos)
          fail(arg, "managed takes the first-touch device gpuN or cpuN, not a NUMA policy");
        r.toucher = arg.empty() ? first_cpu : node(arg);
        break;
      }
      case AllocKind::pinned:
      case AllocKind::egm: {
        const std::string what = r.kind == AllocKind::pinned ? "pinned (cudaHostAlloc)" : "egm (a host NUMA node)";
        if (arg.find('=') != std::string::npos || arg.find(',') != std::string::npos) fail(arg, what + " takes a CPU node (" + cpu_list() + "), not a NUMA policy");
        r.toucher = arg.empty() ? first_cpu : cpu_node(arg, what);
        break;
      }
    }
    return r;
  }

 private:
  void parse_cpu_policy(std::string arg, AllocationRequest& r, int first_cpu) const {
    r.toucher = first_cpu;
    bool touch_given = false;
    const std::size_t at = arg.rfind('@');
    if (at != std::string::npos) {
      r.toucher = cpu_node(arg.substr(at + 1), "first touch (@)");
      touch_given = true;
      arg = arg.substr(0, at);
    }
    if (arg.empty() || arg == "local") {
      r.policy = CpuPolicy::local;
      return;
    }
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos) {  // a bare node: first touch from that CPU node
      if (touch_given) fail(arg, "either a first-touch CPU node or @cpuN, not both");
      r.toucher = cpu_node(arg, "cpu first touch (use preferred=NODE or bind=NODE to aim at a GPU node)");
      r.policy = CpuPolicy::local;
      return;
    }
    const std::string word = arg.substr(0, eq), list = arg.substr(eq + 1);
    if (word == "local") {
      if (touch_given) fail(arg, "either local=cpuN or @cpuN, not both");
      r.toucher = cpu_node(list, "local=");
      r.policy = CpuPolicy::local;
      return;
    }
    if (word == "preferred") r.policy = CpuPolicy::preferred;
    else if (word == "bind") r.policy = CpuPolicy::bind;
    else if (word == "interleave") r.policy = CpuPolicy::interleave;
    else fail(word, "a cpu policy: cpuN, local=cpuN, preferred=NODE, bind=NODE[,NODE...], interleave=NODE[,NODE...]|all, optionally @cpuN");
    if (list == "all" && r.policy == CpuPolicy::interleave) {
      for (int n = 0; n < tray_.node_count(); ++n)
        if (tray_.node(n).numa_id >= 0) r.policy_nodes.push_back(n);
      return;
    }
    for (const auto& name : split(list, ',')) {
      if (name.empty()) fail(list, "a comma-separated list of nodes");
      const int n = numa_node(name);
      if (std::find(r.policy_nodes.begin(), r.policy_nodes.end(), n) == r.policy_nodes.end()) r.policy_nodes.push_back(n);
    }
    if (r.policy == CpuPolicy::preferred && r.policy_nodes.size() != 1) fail(list, "preferred= takes exactly one node");
    std::sort(r.policy_nodes.begin(), r.policy_nodes.end());
  }

  const std::string& text_;
  const TrayMemoryModel& tray_;
  const std::string& where_;
};

}  // namespace

AllocationRequest parse_allocation(const std::string& text, const TrayMemoryModel& tray, const std::string& where) {
  return Parser(text, tray, where).parse();
}

std::string describe_request(const AllocationRequest& r, const TrayMemoryModel& tray) {
  const std::string toucher = tray.node(r.toucher).id;
  auto set = [&] {
    std::string out;
    for (int n : r.policy_nodes) out += (out.empty() ? "" : ",") + tray.node(n).id;
    return out;
  };
  switch (r.kind) {
    case AllocKind::cpu:
      switch (r.policy) {
        case CpuPolicy::local: return "malloc/mmap, first touch from " + toucher + ", local policy";
        case CpuPolicy::preferred: return "malloc/mmap, preferred=" + set() + " (touched from " + toucher + ")";
        case CpuPolicy::bind: return "malloc/mmap, bind=" + set() + " (touched from " + toucher + ")";
        case CpuPolicy::interleave: return "malloc/mmap, interleave=" + set() + " (touched from " + toucher + ")";
      }
      break;
    case AllocKind::cuda: return "cudaMalloc on " + toucher;
    case AllocKind::managed: return "cudaMallocManaged, first touch from " + toucher;
    case AllocKind::pinned: return "cudaHostAlloc (pinned), from " + toucher;
    case AllocKind::egm: return "EGM: cuMemCreate on host NUMA node " + toucher;
  }
  return "";
}

}  // namespace racksim::memory
