#include "models/calibration/record_systems.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "sim/topo/system_catalog.hpp"

namespace racksim::calibration {

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

RecordTarget refused(std::string reason) {
  RecordTarget t;
  t.reason = std::move(reason);
  return t;
}

// "2 domains x 8 nodes" in a record's notes: the nodes split evenly over that many NVLink domains.
int stated_domains(const std::string& notes) {
  static const std::regex pattern(R"((\d+) domains? x (\d+) nodes)");
  std::smatch m;
  if (!std::regex_search(notes, m, pattern)) return 0;
  return std::stoi(m[1].str());
}

// What one node of an HGX system's NICs carry per direction, in Gb/s, from its topology file.
double node_nic_Gbps(const std::string& system) {
  const TopologySpec spec = SystemCatalog::shipped().load(system);
  double GBps = 0;
  for (const auto& nic : spec.tray.nics) GBps += spec.nic_type(nic.type).bandwidth_GBps;
  return GBps * 8;
}

// A node's network bandwidth as the text states it, in Gb/s: "32 x 100 Gb/s", "16 x 200 Gb/s EFAv3", "3.2 Tb/s",
// "4x200 Gb/s RoCE per node"; 0 when it states none.
double stated_Gbps_per_node(const std::string& net) {
  static const std::regex tbps(R"((\d+(?:\.\d+)?)\s*Tb(?:/s|ps)\b)", std::regex::icase);
  static const std::regex count_x_speed(R"((\d+)\s*x\s*(\d+)\s*Gb(?:/s|ps)\b)", std::regex::icase);
  std::smatch m;
  if (std::regex_search(net, m, tbps)) return std::stod(m[1].str()) * 1000.0;
  if (std::regex_search(net, m, count_x_speed)) return std::stod(m[1].str()) * std::stod(m[2].str());
  return 0;
}

// AWS's GPU instance types, from its instance pages (aws.amazon.com/ec2/instance-types/p5/ and /p6/): the GPU and
// the EFA bandwidth per instance. Every one of them is EFA, so a record naming the instance has said its network.
struct AwsInstance {
  const char* name;  // as the text names it, before ".48xlarge"
  const char* gpu;
  double efa_Gbps;
};
constexpr AwsInstance kAwsInstances[] = {
    {"p5", "H100", 3200},       // 32 x 100 Gbps EFA
    {"p5e", "H200", 3200},      // 32 x 100 Gbps EFA
    {"p5en", "H200", 3200},     // 16 x 200 Gbps EFAv3
    {"p6-b200", "B200", 3200},  // 8 x 400 Gbps EFAv4
    {"p6-b300", "B300", 6400},
};

// The AWS instance type named in the text ("p5.48xlarge", "p5en", "p6-b200.48xlarge"), or null.
const AwsInstance* aws_instance_named(const std::string& text) {
  static const std::regex instance(R"((^|[^A-Za-z0-9])(p5en|p5e|p5|p6-b200|p6-b300)(\.48xlarge|[^A-Za-z0-9-]|$))",
                                   std::regex::icase);
  std::smatch m;
  if (!std::regex_search(text, m, instance)) return nullptr;
  std::string name = m[2].str();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const AwsInstance& i : kAwsInstances)
    if (name == i.name) return &i;
  return nullptr;
}

// NCCL_MNNVL_ENABLE=0 (or a source saying MNNVL was disabled): NCCL does not use NVLink between trays.
bool mnnvl_disabled(const std::string& net, const std::string& algo) {
  return has(net, "MNNVL disabled") || has(net, "MNNVL+NVLS disabled") || has(algo, "MNNVL_ENABLE=0");
}

// The first GPU model named, whole words (GB200 is not read as B200), upper case; empty when none.
std::string model_named(const std::string& text) {
  static const std::regex model_re(
      R"((^|[^A-Za-z0-9])(GB300|GB200|GH200|B300|B200|H200|H100|H800|H20|A100|A800|L40S|MI300X|MI325X|MI355X)([^A-Za-z0-9]|$))",
      std::regex::icase);
  std::smatch m;
  if (!std::regex_search(text, m, model_re)) return "";
  std::string model = m[2].str();
  for (char& c : model) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return model;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The first number of `pattern`'s first group in `text` (case-insensitive), 0 when absent.
int number_in(const std::string& text, const char* pattern) {
  const std::regex re(pattern, std::regex::icase);
  std::smatch m;
  if (!std::regex_search(text, m, re)) return 0;
  const std::string v = lower(m[1].str());
  if (v == "two") return 2;
  if (v == "three") return 3;
  if (v == "four") return 4;
  if (v.empty() || v.size() > 6) return 0;
  return std::stoi(v);
}

}  // namespace

RecordTarget record_target(const std::string& model, const std::string& net, const std::string& algo, const std::string& notes,
                           int gpus, int nodes, int per_node) {
  RecordTarget t;
  const std::string hgx = hgx_system_of_gpu_model(model);
  const bool hgx_model = !hgx.empty();
  std::string efa_system;  // the AWS instance's own system, when racksim has one
  const AwsInstance* instance = aws_instance_named(net);  // an AWS P5/P6 instance: EFA, said by its name
  if (has(net, "EFA") || instance) {
    // AWS EFA (SRD through the aws-ofi-nccl plugin) is not modelled, but where a node's EFA interfaces add
    // up to what its HGX system's ConnectX carry by its topology file (p5 and p5en: 32 x 100 or 16 x 200 Gb/s =
    // 3.2 Tb/s, eight 400 Gb/s NDR; B300: 6.4 Tb/s), those NICs stand in for them: EFA runs at ~0.92-0.97 of that
    // wire at 16 GiB (p5 x2 NVLS-tree 487 GB/s, p5en x16 ring 370), its latency is its own. Validation only.
    // As the text states it, else as AWS states it for the instance named.
    const double stated_Gbps = hgx_model ? stated_Gbps_per_node(net) : 0;
    const double node_Gbps = stated_Gbps > 0 ? stated_Gbps : hgx_model && instance ? instance->efa_Gbps : 0;
    const double system_Gbps = hgx_model ? node_nic_Gbps(hgx) : 0;
    if (node_Gbps != system_Gbps)
      return refused("AWS EFA (libfabric, many 100-200 Gb/s interfaces): racksim models InfiniBand/RoCE ConnectX NICs" +
                     std::string(hgx_model ? " (stands in for EFA only at the system's own 8 NICs' bandwidth per node, " +
                                                 std::to_string(static_cast<int>(system_Gbps)) + " Gb/s, stated)"
                                           : ""));
    // p5 (H100, 32 x 100 Gb/s) and p5en (H200, EFAv3 16 x 200 Gb/s) have systems of their own whose transport
    // is EFA's, with the plugin's own figures (topologies/aws-p5.json, aws-p5en.json); still validation only:
    // no fit uses an EFA record, so they test those figures.
    if (model == "H100") efa_system = "aws-p5";
    if (model == "H200" && (has(net, "EFAv3") || (instance && std::string(instance->name) == "p5en"))) efa_system = "aws-p5en";
    t.network_stand_in = efa_system.empty()
                             ? "AWS EFA, " + std::to_string(static_cast<int>(node_Gbps)) +
                                   " Gb/s per node: the system's eight ConnectX NICs at the same bandwidth stand in (EFA's SRD "
                                   "latency and efficiency are not modelled); validation only"
                             : "AWS EFA on " + efa_system + " (its transport's latency from aws-ofi-nccl's own figures, "
                                   "never fitted); validation only";
  }
  // An HGX cluster over InfiniBand or RoCE whose NIC count or speed the source leaves unstated is
  // predicted with its system's NICs (one 400 or 800 Gb/s ConnectX per GPU, as every HGX reference design
  // has) but never fitted (nics_assumed: validation only); any other unstated interconnect is refused.
  const bool names_ib_or_roce = has(net, "InfiniBand") || has(net, "RoCE") || has(net, " IB") || has(net, "(IB");
  // Likewise NVL72 trays whose source says each node is in its own NVLink domain, joined by RDMA (GCP's A4X
  // Max docs: "RDMA between NVLink domains", NIC speed not on the page): the system's ConnectX NICs.
  const bool rdma_between_domains = (model == "GB200" || model == "GB300") && has(net, "RDMA between NVLink domains");
  if (has(net, "not stated") && !(hgx_model && names_ib_or_roce) && !rdma_between_domains)
    return refused("the interconnect is not stated");
  t.nics_assumed = has(net, "not stated");
  // Before the IB/RoCE test below: "TCP-based GPUDirect, not IB/RoCE" names both.
  if (has(net, "TCPX")) {
    // GCP's GPUDirect-TCPXO (A3 Mega, a3-megagpu-8g): eight 200 Gb/s data NICs, one per H100, reaching 0.94
    // of them (188 GB/s all-gather busbw on two nodes): ConnectX NICs at the same 25 GB/s stand in,
    // validation only. TCPX on A3 High (four 200 Gb/s data NICs for eight GPUs) reaches half of its NICs'
    // 100 GB/s per node (50 GB/s all-gather on two nodes): a loss racksim has no term for, so refused.
    if (!(has(net, "TCPXO") && has(net, "8 data NICs") && model == "H100"))
      return refused("GPUDirect-TCPX/TCPXO (TCP through the host's stack): racksim models InfiniBand/RoCE ConnectX NICs "
                     "(stands in only for A3 Mega's TCPXO, eight 200 Gb/s data NICs)");
    t.network_stand_in = "GCP GPUDirect-TCPXO (A3 Mega, eight 200 Gb/s data NICs): the system's ConnectX NICs at 25 GB/s "
                         "stand in (TCP's latency through the host is not modelled); validation only";
    t.nic_GBps = 25;
  }
  if (hgx_model && t.network_stand_in.empty() && names_ib_or_roce) {
    // A node's InfiniBand/RoCE bandwidth stated and unlike the system's eight ConnectX ("4x200 Gb/s RoCE per
    // node" on an HGX H100, whose reference design has 8 x 400): the system's eight NICs at the stated total's
    // share stand in, as for TCPXO below (what binds across nodes is the node's total); validation only.
    const double stated_Gbps = stated_Gbps_per_node(net), system_Gbps = node_nic_Gbps(hgx);
    if (stated_Gbps > 0 && std::fabs(stated_Gbps - system_Gbps) > 0.5) {
      t.nic_GBps = stated_Gbps / 8 / 8;
      t.network_stand_in = "a node's network stated at " + std::to_string(static_cast<int>(stated_Gbps)) +
                           " Gb/s (the system's NICs: " + std::to_string(static_cast<int>(system_Gbps)) +
                           "): its eight ConnectX NICs at " + fmt::format("{:g}", t.nic_GBps) + " GB/s each stand in; validation only";
    }
  }
  if (hgx_model) {
    // "H100" in a text that also names the H800 (an H800 cluster described as H100-class) is the H800.
    t.system = !efa_system.empty() ? efa_system : model == "H100" && has(net, "H800") ? "hgx-h800" : hgx;
    const int n = std::max(1, nodes), p = per_node > 0 ? per_node : (gpus + n - 1) / n;
    if (p > 8 || n * p != gpus) return refused("GPUs per node (" + std::to_string(p) + ") x nodes does not give " + std::to_string(gpus));
    if (n > 1 && !(has(net, "IB") || has(net, "InfiniBand") || has(net, "RoCE") || !t.network_stand_in.empty()))
      return refused("several nodes on an interconnect racksim does not model");
    t.racks = n;
    for (int k = 0; k < n; ++k)
      for (int g = 0; g < p; ++g) t.gpus.push_back(k * 8 + g);
    return t;
  }
  if (model == "GB200" || model == "GB300") {
    t.system = model == "GB200" ? "gb200-nvl72" : "gb300-nvl72";
    if (has(net, "NET only")) return refused("trays over the network only (no NVLink)");
    // As racksim places ranks (N / R per rack from each rack's first tray): 128 GPUs = 2 racks of 64,
    // unless the source says how the nodes split over NVLink domains ("2 domains x 2 nodes": 16 GPUs as
    // 2 racks of 8).
    t.racks = std::max(1, (gpus + 71) / 72);
    if (const int domains = stated_domains(notes); domains > 0) t.racks = std::max(t.racks, domains);
    if (rdma_between_domains) t.racks = std::max(t.racks, nodes);  // every node in a domain of its own
    // NCCL_MNNVL_ENABLE=0: each tray is its own NVLink domain (NVLink P2P inside the tray, the NICs
    // between trays: NVIDIA MNNVL/IMEX guide; models/fabric/mnnvl_estimate.hpp).
    if (mnnvl_disabled(net, algo)) t.partitions = "18x1";
    if (gpus % t.racks != 0) return refused(std::to_string(gpus) + " GPUs do not split evenly over " + std::to_string(t.racks) + " racks");
    for (int r = 0; r < t.racks; ++r)
      for (int g = 0; g < gpus / t.racks; ++g) t.gpus.push_back(r * 72 + g);
    return t;
  }
  return refused("no racksim system for " + model);
}


std::string canonical_gpu_model(const std::string& text) {
  const std::string m = model_named(text);
  return m.empty() ? text : m;
}

std::string rack_model_of(const std::string& model, const std::string& machine_text) {
  if (model != "B200" && model != "B300") return model;
  const std::string named = model_named(machine_text);
  if (named == "GB200" || named == "GB300") return named == "G" + model ? named : model;  // a mismatch stays the GPU's
  static const std::regex rack(R"((^|[^A-Za-z0-9])NVL\s*(72|36)([^0-9]|$))", std::regex::icase);
  return std::regex_search(machine_text, rack) ? "G" + model : model;
}

RecordTarget record_target_from_text(const std::string& text, const std::string& algo, const std::string& notes, int gpus) {
  const AwsInstance* instance = aws_instance_named(text);
  const std::string model = rack_model_of(!model_named(text).empty() ? model_named(text) : instance ? instance->gpu : "", text);
  if (model.empty()) return refused("no GPU model racksim knows named in '" + text + "'");
  // The PCIe cards of a model are not its HGX board: an "H100 PCIe" (or a machine "without NVLink") has no
  // NVSwitch, and an "H100 NVL" / "H200 NVL" pairs or quads cards over NVLink bridges; racksim has a system for
  // neither (its PCIe system is one H200 alone), so such a text is refused rather than priced on NVSwitch.
  static const std::regex pcie_card(R"((^|[^A-Za-z0-9])(H100|H200|B200|A100|L40S)[ -]?(PCIe|NVL)([^A-Za-z0-9]|$))", std::regex::icase);
  if (std::regex_search(text, pcie_card) || has(lower(text), "no nvlink") || has(lower(text), "without nvlink"))
    return refused("PCIe cards (no NVSwitch board) or NVLink bridges: no racksim system for them (read from '" + text + "')");
  if (hgx_system_of_gpu_model(model).empty() && !(model == "GB200" || model == "GB300"))
    return refused("no racksim system for the " + model + " (read from '" + text + "')");
  const std::string words = text + " " + notes;
  const bool nvl72 = model == "GB200" || model == "GB300";
  int nodes = number_in(text, R"(x\s*(\d+)\s*(?:nodes?|hosts?|servers?|VMs?|instances?|machines?|trays?)\b)");
  if (nodes == 0) nodes = number_in(text, R"(\b(\d+|two|three|four)\s*(?:nodes?|hosts?|servers?|VMs?|instances?|machines?|trays?)\b)");
  int per_node = number_in(text, R"(\b(\d+)\s*GPUs?\s*(?:per|/|each)\s*(?:node|host|server|VM|tray))");
  if (per_node == 0) per_node = number_in(text, R"(\bnodes?\s*x\s*(\d+)\s*GPUs?)");
  const int racks = number_in(text, R"(\b(?:x\s*)?(\d+|two|three|four)\s*(?:NVL72\s*)?racks?\b)");
  std::string inferred = "read from '" + text + "': " + model;
  std::string net = words;
  if (nvl72) {
    // Nodes are trays here (NCCL's nodes on an NVL72 are its compute trays); the racks say how the ranks
    // split over NVLink domains, else N / 72 racks as racksim places ranks.
    const int domains = std::max(racks, 0);
    std::string n = notes;
    if (domains > 0) n += " " + std::to_string(domains) + " domains x 1 nodes";
    inferred += domains > 0 ? ", " + std::to_string(domains) + " rack(s)" : ", racks: " + std::to_string(std::max(1, (gpus + 71) / 72)) + " (ranks / 72)";
    if (has(lower(words), "mnnvl_enable=0") || has(lower(words), "mnnvl disabled")) net += " MNNVL disabled";
    RecordTarget t = record_target(model, net, algo, n, gpus, 0, 0);
    // GB200 NVL36x2: two racks of 36 joined into one 72-GPU NVLink domain, a system of its own.
    static const std::regex nvl36x2(R"(NVL\s*36\s*x\s*2)", std::regex::icase);
    if (t.reason.empty() && model == "GB200" && std::regex_search(text, nvl36x2)) {
      t.system = "gb200-nvl36x2";
      t.racks *= 2;  // its racks come in pairs, one 72-GPU domain each (GPUs numbered domain by domain, as above)
      inferred += "; NVL36x2: " + std::to_string(t.racks) + " racks";
    }
    t.inferred = inferred;
    return t;
  }
  if (nodes == 0) {
    nodes = gpus <= 8 ? 1 : (gpus + 7) / 8;
    if (gpus > 8) inferred += ", nodes not named: " + std::to_string(nodes) + " of 8 GPUs assumed";
  } else {
    inferred += ", " + std::to_string(nodes) + " node(s)";
  }
  if (per_node > 0) inferred += " x " + std::to_string(per_node) + " GPUs";
  if (nodes > 1) {
    const std::string l = lower(words);
    static const std::regex ib_word(R"(\bIB\b)");
    const bool ib = std::regex_search(words, ib_word);
    const bool aws = aws_instance_named(words) != nullptr;  // an AWS P5/P6 instance: EFA, said by its name
    const bool named = aws || has(l, "infiniband") || ib || has(l, "roce") || has(l, "efa") || has(l, "tcpx") ||
                       has(l, "connectx") || has(l, "cx-7") || has(l, "cx-8") || has(words, "NDR") || has(words, "XDR") ||
                       has(l, "spectrum");
    if (!named) {
      net += " InfiniBand (NIC count not stated)";
      inferred += ", interconnect not named: InfiniBand with the system's NICs assumed";
    } else if (!(aws || has(l, "infiniband") || ib || has(l, "roce") || has(l, "efa") || has(l, "tcpx"))) {
      net += " InfiniBand";  // ConnectX / NDR / XDR / Spectrum name an IB or RoCE fabric
    }
  }
  RecordTarget t = record_target(model, net, algo, notes, gpus, nodes, per_node);
  t.inferred = inferred;
  return t;
}

}  // namespace racksim::calibration
