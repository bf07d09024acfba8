#include "models/planner/training_rows.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <regex>
#include <set>

#include "models/planner/step_model.hpp"
#include "models/workload/model_catalog.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/suggest.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim {

namespace {

// The file's model names -> presets (models/workload/presets).
const std::map<std::string, std::string> kModels{
    {"DeepSeek-V3 671B", "deepseek-v3"},
    {"GPT-OSS 120B", "gpt-oss-120b"},
    {"Llama 3 8B", "llama-3-8b"},
    {"Llama 3 70B", "llama-3-70b"},
    {"Llama 3.1 8B", "llama-3.1-8b"},
    {"Llama 3.1 70B", "llama-3.1-70b"},
    {"Llama 3.1 405B", "llama-3.1-405b"},
    {"Mixtral 8x22B", "mixtral-8x22b"},
    {"Nemotron-4 340B", "nemotron-4-340b"},
    {"Nemotron-H 8B", "nemotron-h-8b"},
    {"Nemotron-H 47B", "nemotron-h-47b"},
    {"Nemotron-H 56B", "nemotron-h-56b"},
    {"Nemotron 3 Nano 30B-A3B (Nemotron-H family)", "nemotron-3-nano-30b-a3b"},
    {"Nemotron 3 Super (Nemotron-H family)", "nemotron-3-super-120b-a12b"},
    {"Nemotron 3.5 Lightning 30B-A3B (Nemotron-H family)", "nemotron-3.5-lightning-30b-a3b"},
    {"Qwen3 30B-A3B", "qwen3-30b-a3b"},
    {"Qwen3 235B-A22B", "qwen3-235b-a22b"},
};

// The file's systems -> topologies: 8-GPU DGX/HGX nodes joined by InfiniBand (the catalog's table of GPU models,
// hgx_system_of_gpu_model), and the NVL72 racks (the Megatron-Bridge pages name them GB200 and GB300, the NVL72
// racks of Grace-Blackwell trays); "" for a label that names none.
const std::vector<std::pair<std::string, std::string>> kRackSystems{{"GB200", "gb200-nvl72"}, {"GB300", "gb300-nvl72"}};
std::string system_of(const std::string& key) {
  if (std::string hgx = hgx_system_of_gpu_model(key); !hgx.empty()) return hgx;
  for (const auto& [label, system] : kRackSystems)
    if (label == key) return system;
  return "";
}
// Every label system_of knows: the racks first, so that a longer label's "GB200" is not read as "B200".
std::vector<std::string> known_systems() {
  std::vector<std::string> out;
  for (const auto& entry : kRackSystems) out.push_back(entry.first);
  for (const auto& m : hgx_gpu_models()) out.push_back(m);
  return out;
}

// A model label the table above does not list, as a preset id: "Llama 3.1 70B" -> "llama-3.1-70b" (lower
// case, spaces to hyphens, a parenthesised remark dropped), or the id itself; empty when no preset has it.
std::string preset_id_of(const std::string& label) {
  std::string id;
  for (char c : label.substr(0, label.find(" ("))) id += c == ' ' || c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::vector<std::string> ids = ModelCatalog::shipped().ids();
  return std::find(ids.begin(), ids.end(), id) != ids.end() ? id : "";
}

// A system label as pages print it ("DGX-B200", "HGX H100", "GB200 NVL72", "GB200NVL72", "h100-sxm") -> the file's form.
std::string system_key(const std::string& label) {
  std::string k;
  for (char c : label) k += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* prefix : {"NVIDIA ", "DGX-", "DGX ", "HGX-", "HGX "})
    if (k.rfind(prefix, 0) == 0) k.erase(0, std::string(prefix).size());
  for (const char* suffix : {" NVL72", "-NVL72", "_NVL72", "NVL72", " SXM", "-SXM", " SXM4", "-SXM4", " SXM5", "-SXM5"})
    if (k.size() > std::string(suffix).size() && k.compare(k.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
      k.erase(k.size() - std::string(suffix).size());
  return k;
}
// The first of the table's systems a longer label names as a word ("Lambda GB200 NVL72 cluster" -> "GB200"; GB200
// is not read as B200), or "" when it names none.
std::string system_named_in(const std::string& label) {
  static const std::regex named = [] {
    std::string any;
    for (const auto& k : known_systems()) any += (any.empty() ? "" : "|") + k;
    return std::regex("(^|[^A-Za-z0-9])(" + any + ")([^A-Za-z0-9]|$)", std::regex::icase);
  }();
  std::smatch m;
  if (!std::regex_search(label, m, named)) return "";
  std::string k = m[2].str();
  for (char& c : k) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return k;
}
// Normalised precisions -> recipes. Older NeMo rows print "FP8" without the scaling recipe: NeMo 2.0's
// performance scripts default to per-tensor delayed scaling (the file's notes cite
// scripts/performance/argument_parser.py), so they map to fp8-ds.
std::string recipe_of(const std::string& p) {
  if (p.rfind("FP8 (scaling recipe not printed)", 0) == 0 || p.rfind("FP8 (default recipe ds", 0) == 0) return "fp8-ds";
  std::string u;  // upper case, '_' and ' ' as '-': "fp8_cs", "FP8 CS" -> "FP8-CS"
  for (char c : p) u += c == '_' || c == ' ' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u == "BF16" || u == "BFLOAT16") return "bf16";
  if (u == "FP8-CS" || u.rfind("FP8-CURRENT", 0) == 0) return "fp8-cs";
  if (u == "FP8-DS" || u.rfind("FP8-DELAYED", 0) == 0) return "fp8-ds";
  if (u == "MXFP8") return "mxfp8";
  if (u == "NVFP4") return "nvfp4";
  if (u.rfind("FP8-BLOCKWISE", 0) == 0 || u.rfind("FP8-BLOCK", 0) == 0) return "fp8-block";
  return "";
}

std::optional<int> int_or_null(JsonObjectReader& r, const std::string& key) {
  const nlohmann::json& v = r.raw(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_integer() && !(v.is_number() && v.get<double>() == static_cast<double>(static_cast<long>(v.get<double>()))))
    r.fail(key, json_excerpt(v), "an integer or null");
  const long x = v.is_number_integer() ? v.get<long>() : static_cast<long>(v.get<double>());
  if (x < 0 || x > 1000000) r.fail(key, json_excerpt(v), "an integer in [0, 1000000] or null");
  return static_cast<int>(x);
}

std::optional<double> number_or_null(JsonObjectReader& r, const std::string& key) {
  const nlohmann::json& v = r.raw(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number() || !(v.get<double>() > 0)) r.fail(key, json_excerpt(v), "a number > 0 or null");
  return v.get<double>();
}

std::string string_or_null(JsonObjectReader& r, const std::string& key) {
  const nlohmann::json& v = r.raw(key);
  if (v.is_null()) return "";
  if (!v.is_string()) r.fail(key, json_excerpt(v), "a string or null");
  return v.get<std::string>();
}

// Recompute as the matching recipe states it in the record's notes.
std::optional<RecomputePlan> recompute_in(const std::string& notes) {
  std::smatch m;
  if (std::regex_search(notes, m, std::regex(R"(recompute_modules=\[([^\]]*)\])"))) {
    std::string list = m[1];
    list.erase(std::remove_if(list.begin(), list.end(), [](char ch) { return ch == '\'' || ch == ' '; }), list.end());
    return parse_recompute("selective:" + list, "notes");
  }
  if (std::regex_search(notes, m, std::regex(R"(recompute_modules=([a-z_]{2,}(?:/[a-z_]{2,})+))"))) {
    std::string list = m[1];
    std::replace(list.begin(), list.end(), '/', ',');
    return parse_recompute("selective:" + list, "notes");
  }
  if (std::regex_search(notes, m, std::regex(R"(recompute_num_layers=(\d+))"))) return parse_recompute("full:block:" + std::string(m[1]), "notes");
  if (std::regex_search(notes, m, std::regex(R"(recompute_layers=(\d+))"))) {
    if (std::string(m[1]) == "0") return RecomputePlan{};
    return parse_recompute("full:block:" + std::string(m[1]), "notes");
  }
  return std::nullopt;
}

}  // namespace

std::string proxy_problem(const ModelSpec& full, const PublishedRun& r) {
  if (r.proxy_layers <= 0) return "";
  if (full.layers != r.proxy_of_layers)
    return fmt::format("a proxy of a {}-layer model, but preset {} has {} layers", r.proxy_of_layers, full.id, full.layers);
  if (r.proxy_layers >= full.layers)
    return fmt::format("a {}-layer proxy of {}'s {} layers is no smaller model", r.proxy_layers, full.id, full.layers);
  if (full.is_hybrid())
    return fmt::format("a {}-layer proxy of {}'s hybrid stack (which of its blocks it keeps is not stated)", r.proxy_layers, full.id);
  return "";
}

ModelSpec model_of_run(const ModelSpec& full, const PublishedRun& r) {
  if (r.proxy_layers <= 0 || !proxy_problem(full, r).empty()) return full;
  ModelSpec proxy = full;
  proxy.layers = r.proxy_layers;
  proxy.name += fmt::format(" ({}-layer proxy)", r.proxy_layers);
  proxy.published_total_params = proxy.published_active_params = 0;  // the published counts are the full model's
  proxy.cache_layer_types();
  return proxy;
}

std::vector<PublishedRun> load_published_runs(const std::string& path) {
  const nlohmann::json doc = parse_json_file(path);
  if (!doc.is_array()) throw InputError(path, "", json_excerpt(doc), "a JSON array of published runs");
  std::vector<PublishedRun> runs;
  std::vector<std::optional<int>> seq_given;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    JsonObjectReader r = array_element(doc, i, path, "");
    PublishedRun x;
    x.index = static_cast<int>(i);
    x.model_label = r.string("model");
    r.raw("model_as_printed");
    x.system_label = r.string("system");
    r.raw("system_as_printed");
    const nlohmann::json& printed_precision = r.raw("precision");
    x.precision_label = string_or_null(r, "precision_normalized");
    // No normalised precision: the printed one, where it names a recipe by itself ("BF16", "MXFP8").
    if (x.precision_label.empty() && printed_precision.is_string() && !recipe_of(printed_precision.get<std::string>()).empty())
      x.precision_label = printed_precision.get<std::string>();
    const auto gpus = int_or_null(r, "num_gpus");
    const auto gbs = int_or_null(r, "gbs");
    const auto mbs = int_or_null(r, "mbs");
    const auto seq = int_or_null(r, "seq_len");
    const auto tp = int_or_null(r, "tp"), pp = int_or_null(r, "pp"), cp = int_or_null(r, "cp"), ep = int_or_null(r, "ep");
    const auto vp = int_or_null(r, "vp"), etp = int_or_null(r, "etp"), fsdp = int_or_null(r, "fsdp");
    int_or_null(r, "ga");
    const auto tps = number_or_null(r, "tokens_per_sec_per_gpu");
    number_or_null(r, "model_tflops_per_gpu");
    const auto step = number_or_null(r, "step_time_s");
    const auto total = number_or_null(r, "tokens_per_sec_total");
    x.container = string_or_null(r, "container");
    r.raw("framework");
    x.record_type = r.one_of("record_type", {"published_throughput", "published_step_time", "recipe_layout_only"});
    x.source = r.string("source");
    x.source_repo = r.string("source_repo");
    r.raw("source_file");
    r.raw("source_commit");
    const std::string notes = r.string("notes");
    r.finish();

    x.label = fmt::format("{} {} {} {} GPUs ({})", x.system_label, x.model_label, x.precision_label.empty() ? "(precision not stated)" : x.precision_label,
                          gpus.value_or(0), x.container.empty() ? "release not named" : x.container);
    auto exclude = [&](const std::string& why) {
      if (x.excluded.empty()) x.excluded = why;
    };
    auto bad_layout = [&](const std::string& why) {
      if (x.layout_problem.empty()) x.layout_problem = why;
      exclude(why);
    };
    auto mit = kModels.find(x.model_label);
    if (mit != kModels.end()) x.model = mit->second;
    else if (const std::string id = preset_id_of(x.model_label); !id.empty()) x.model = id;
    else exclude("model '" + x.model_label + "' has no preset (models/workload/presets; a row may name one by its id)");
    x.system = system_of(system_key(x.system_label));
    if (x.system.empty()) x.system = system_of(system_named_in(x.system_label));
    if (x.system.empty()) exclude("system '" + x.system_label + "' has no topology (known: " + comma_list(known_systems()) + ")");
    x.precision = recipe_of(x.precision_label);
    if (x.precision.empty()) exclude(x.precision_label.empty() ? "precision not stated" : "precision '" + x.precision_label + "' not a recipe racksim knows");
    if (!gpus || !gbs || !mbs || !tp || !pp || *gpus < 1 || *gbs < 1 || *mbs < 1 || *tp < 1 || *pp < 1)
      bad_layout("layout incomplete (GPUs, batch, micro-batch, TP or PP missing)");
    ParallelLayout& l = x.layout;
    l.tp = tp.value_or(1), l.pp = pp.value_or(1), l.cp = std::max(1, cp.value_or(1));
    x.gpus = gpus.value_or(0), x.global_batch = gbs.value_or(0), l.micro_batch = mbs.value_or(1);
    l.ep = std::max(1, ep.value_or(1));
    // ETP not printed: 1, what every record of the file that prints an ETP shows (Megatron-Bridge's MoE
    // recipes set it; Megatron-Core alone would default to TP).
    l.etp = etp ? std::max(1, *etp) : 1;
    if (!etp && l.ep > 1) x.assumptions += "ETP not printed: 1, as in every record that prints it; ";
    l.virtual_stages = std::max(1, vp.value_or(1));
    const int mp = l.tp * l.cp * l.pp;
    if (x.gpus > 0 && mp > 0 && x.gpus % mp == 0) {
      l.dp = x.gpus / mp;
      if ((l.tp * l.cp * l.dp) % (l.ep * l.etp) != 0)
        bad_layout(fmt::format("EP x ETP = {} does not divide TP x CP x DP = {} (Megatron refuses it too)", l.ep * l.etp, l.tp * l.cp * l.dp));
      if (x.global_batch % (l.dp * l.micro_batch) != 0)
        bad_layout(fmt::format("global batch {} not a multiple of DP x micro-batch = {} (Megatron refuses it too)", x.global_batch, l.dp * l.micro_batch));
      else l.micro_batches = x.global_batch / (l.dp * l.micro_batch);
    } else {
      bad_layout(fmt::format("TP x CP x PP = {} does not divide {} GPUs", mp, x.gpus));
    }
    l.schedule = l.pp == 1 ? PipelineSchedule::none : l.virtual_stages > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    if (l.pp == 1) l.virtual_stages = 1;
    if (fsdp && *fsdp > 0) {
      l.zero_stage = 3;
      l.shard_group = 0;
    } else {
      l.zero_stage = 1;  // Megatron's distributed optimizer, on in the performance recipes
    }
    if (const auto rc = recompute_in(notes)) {
      l.recompute = *rc;
      x.recompute_from_recipe = true;
    }
    std::smatch m;
    if (std::regex_search(notes, m, std::regex(R"(moe_dispatcher=(\w+))"))) {
      const std::string d = m[1];
      x.dispatcher = d == "deepep" ? MoeDispatcher::deepep : d == "hybridep" ? MoeDispatcher::hybridep : MoeDispatcher::alltoall;
    }
    x.ep_overlap = notes.find("EP a2a overlap on") != std::string::npos;
    // MTP: the Megatron-Bridge rows from 25.11 on label DeepSeek-V3 "(w/ MTP)" and their pipeline layouts
    // place an MTP chunk ('m'); earlier releases did not train it.
    x.mtp = notes.find("w/ MTP") != std::string::npos || std::regex_search(notes, std::regex(R"(pp_layout=[^;]*m)")) ||
            (x.container.rfind("NeMo 26", 0) == 0 && x.model_label.find("DeepSeek") != std::string::npos);
    // The pipeline split: the recipe's layout string where the record names one; DeepSeek-V3's
    // Megatron-Bridge recipes otherwise set theirs from PP x VP (set_deepseek_v3_pipeline_model_parallel_layout);
    // everything else Megatron's uniform split (with the embedding and loss counted as layers where the
    // layer count needs it, as the Llama 3.1 405B and Qwen3 235B recipes do).
    if (l.pp > 1) {
      if (std::regex_search(notes, m, std::regex(R"(pp_layout=([EtmL|()*0-9,]+))")) ) {
        l.pp_layout = m[1];
      } else if (x.model_label.find("DeepSeek-V3") != std::string::npos) {
        const std::string last = std::string(x.mtp ? "m" : "") + "L";
        const int pp_ = l.pp, vp_ = l.virtual_stages;
        if (pp_ * vp_ == 4 && vp_ == 1) l.pp_layout = "Et*16|t*16|t*16|t*13" + last;
        else if (pp_ * vp_ == 8 && vp_ <= 2) l.pp_layout = "Et*8|(t*8|)*6t*5" + last;
        else if (pp_ * vp_ == 16 && vp_ <= 4) l.pp_layout = "Et*4|(t*4|)*14t" + last;
        if (!l.pp_layout.empty()) x.assumptions += "pipeline layout " + l.pp_layout + " (Megatron-Bridge's DeepSeek-V3 default for this PP x VP); ";
      }
      if (l.pp_layout.empty()) l.pp_layout = "uniform";
    }
    // dgxc-benchmarking's small GPU counts train a proxy: the model with fewer layers, priced as such (checked
    // against the preset's layer count below).
    if (notes.find("PROXY MODEL") != std::string::npos) {
      std::smatch pm;
      if (std::regex_search(notes, pm, std::regex(R"(PROXY MODEL: this column uses (\d{1,4}) layers instead of the full (\d{1,4}))"))) {
        x.proxy_layers = std::stoi(pm[1]);
        x.proxy_of_layers = std::stoi(pm[2]);
        // Right after the model's name: tables cut long labels.
        const std::string mark = fmt::format(" [proxy: {} of {} layers]", x.proxy_layers, x.proxy_of_layers);
        const auto at = x.label.find(x.model_label);
        x.label.insert(at == std::string::npos ? x.label.size() : at + x.model_label.size(), mark);
      } else {
        exclude("a scaled-down proxy model whose layer count the record does not state");
      }
    }
    if (notes.find("does NOT match the perf recipe") != std::string::npos)
      exclude("the printed layout contradicts the performance recipe of its release (what ran is uncertain)");
    // What was measured.
    if (tps) {
      x.measured = true;
      x.tokens_per_s_per_gpu = *tps;
      x.derivation = "tokens/s/GPU as printed";
    } else if (total && x.gpus > 0) {
      x.measured = true;
      x.tokens_per_s_per_gpu = *total / x.gpus;
      x.derivation = "printed total tokens/s / GPUs";
    } else if (step) {
      x.measured = true;
      x.derivation = "global batch x sequence / printed step time / GPUs";
    }
    if (x.record_type == "recipe_layout_only") exclude("a recipe layout without a measurement");
    else if (!x.measured) exclude("no throughput or step time printed");
    x.vp_printed = vp.has_value();
    runs.push_back(x);
    seq_given.push_back(seq);
    if (!tps && !total && step) runs.back().tokens_per_s_per_gpu = -*step;  // resolved below once seq is known
  }
  // Sequence lengths the record leaves out: the one every other record of the model prints.
  const ModelCatalog catalog = ModelCatalog::shipped();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    PublishedRun& x = runs[i];
    // dgxc-benchmarking tables that print no VP for a pipelined layout: the VP the same benchmark's
    // other tables print for that model, TP and PP, if there is exactly one.
    if (!x.vp_printed && x.layout.pp > 1 && x.source_repo == "NVIDIA/dgxc-benchmarking") {
      std::set<int> vps;
      for (const auto& y : runs)
        if (y.vp_printed && y.source_repo == x.source_repo && y.model_label == x.model_label && y.layout.tp == x.layout.tp &&
            y.layout.pp == x.layout.pp)
          vps.insert(y.layout.virtual_stages);
      if (vps.size() == 1 && *vps.begin() > 1) {
        x.layout.virtual_stages = *vps.begin();
        x.layout.schedule = PipelineSchedule::interleaved;
        x.assumptions += fmt::format("VP not printed: {}, as the benchmark's other tables for this model print; ", *vps.begin());
      }
    }
    if (seq_given[i]) {
      x.seq_len = *seq_given[i];
    } else {
      std::set<int> others;
      for (std::size_t j = 0; j < runs.size(); ++j)
        if (seq_given[j] && runs[j].model_label == x.model_label) others.insert(*seq_given[j]);
      if (others.size() == 1) {
        x.seq_len = *others.begin();
        x.assumptions += fmt::format("sequence length not printed: {}, as every other record of this model; ", x.seq_len);
      } else if (x.excluded.empty()) {
        x.excluded = "sequence length not printed and not implied by the other records";
      }
    }
    // A proxy must be of the preset: the layers the record says the full model has, and a stack whose layers are
    // alike (a hybrid pattern's proxy could keep any of its blocks).
    ModelSpec spec;
    if (!x.model.empty()) {
      const ModelSpec full = catalog.load(x.model);
      if (const std::string why = proxy_problem(full, x); !why.empty() && x.excluded.empty()) x.excluded = why;
      spec = model_of_run(full, x);
    }
    // A recipe's layout string must match its PP x VP and the model (a few recipe-only records pair a
    // layout with another PP x VP): otherwise Megatron's uniform split, said so.
    if (x.layout.pp > 1 && !x.model.empty() && x.layout.pp_layout != "uniform") {
      try {
        parse_pp_layout(x.layout.pp_layout, spec, x.layout.pp * x.layout.virtual_stages);
      } catch (const std::invalid_argument& e) {
        x.assumptions += std::string(e.what()) + ": priced with Megatron's uniform split; ";
        x.layout.pp_layout = "uniform";
      }
    }
    // Megatron cuts a model into at most one chunk per layer, the embedding and the loss counted as layers
    // (pipeline_slots; the planner's search rejects more too, search.cpp's pp-layers): a record asking for more is
    // left out, not priced with empty stages.
    if (x.layout.pp > 1 && !x.model.empty() && x.layout.pp_layout == "uniform") {
      const int chunks = x.layout.pp * x.layout.virtual_stages;
      if (chunks > pipeline_slots(spec)) {
        const std::string why = fmt::format("PP x VP = {} pipeline chunks for {} layers (Megatron refuses it too)", chunks, spec.layers);
        if (x.layout_problem.empty()) x.layout_problem = why;
        if (x.excluded.empty()) x.excluded = why;
      }
    }
    if (x.tokens_per_s_per_gpu < 0) {
      const double step = -x.tokens_per_s_per_gpu;
      x.tokens_per_s_per_gpu = x.seq_len > 0 && x.gpus > 0 ? static_cast<double>(x.global_batch) * x.seq_len / (step * x.gpus) : 0;
    }
  }
  return runs;
}

}  // namespace racksim
